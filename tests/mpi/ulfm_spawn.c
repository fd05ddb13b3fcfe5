/*
 * Failures across jobs: the processes of MPI_COMM_WORLD spawn --children
 * more, and both sides merge the intercommunicator. Then one process of the
 * merged communicator, --victim (its rank there: parents first), crashes
 * (SIGKILL) or hangs (SIGSTOP) while every other one loops on a barrier of
 * the merged communicator. Each survivor must see the barrier fail, then
 * acknowledge, shrink the merged communicator and check the shrunk size.
 *
 * Each survivor prints one JSON line: its merged rank, whether it is a
 * parent or a child, the failed ranks it acknowledged (merged ranks), the
 * shrunk size, and how long after the injection its barrier failed.
 *
 * --kind merge: the victim crashes before the merge instead (a child right
 * after MPI_Init, a parent right after the spawn), and every survivor's
 * MPI_Intercomm_merge must end in an error rather than loop (upstream's
 * CID allocation retried forever on a failed step: patch 0054). Then all
 * agree over the intercommunicator on whether the merge worked everywhere.
 * Each survivor prints the merge's and the agreement's return codes and
 * the agreed value.
 *
 * Without a failure (--kind clean|disconnect): after the merged barrier
 * both sides disconnect. With `clean` the children then finalize and exit
 * while the parents go on with barriers of their own job for --linger-ms;
 * with `disconnect` both jobs go on, each on its own. Nobody may see a
 * failure: each process prints its barriers' return code.
 *
 * --multiple spawns the children with MPI_Comm_spawn_multiple, as two
 * commands (the first children / 2 processes, then the rest): one job.
 *
 * --connect accept|connect joins two jobs started apart (two prun jobs of
 * one PRRTE DVM) instead: the accepting job plays the parents, the
 * connecting one the children. The accepting root writes its port name to
 * --port-file, the connecting root waits for it there.
 *
 *   ulfm_spawn --children 2 --victim 5 --kind crash|hang|merge [--deadline-s 20] [--multiple 1]
 *   ulfm_spawn --children 2 --kind clean|disconnect [--linger-ms 500] [--multiple 1]
 *   ulfm_spawn --connect accept|connect --port-file F --victim 5 --kind crash|hang ...
 */
#include <mpi.h>
#include <mpi-ext.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ulfm_common.h"

#define INJECT_AFTER_NS 300000000LL

struct options {
    int children;
    int victim;
    const char *kind;
    int deadline_s;
    int linger_ms;
    int multiple;
    const char *connect;   /* NULL, "accept" or "connect" */
    const char *port_file;
};

static void parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){.children = 2, .victim = -1, .kind = "crash", .deadline_s = 20, .linger_ms = 500};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--children")) o->children = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--victim")) o->victim = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--kind")) o->kind = argv[i + 1];
        else if (!strcmp(argv[i], "--deadline-s")) o->deadline_s = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--linger-ms")) o->linger_ms = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--multiple")) o->multiple = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--connect")) o->connect = argv[i + 1];
        else if (!strcmp(argv[i], "--port-file")) o->port_file = argv[i + 1];
    }
    bool failing = !strcmp(o->kind, "crash") || !strcmp(o->kind, "hang") || !strcmp(o->kind, "merge");
    bool clean = !strcmp(o->kind, "clean") || !strcmp(o->kind, "disconnect");
    if (o->children < 1 || (failing && o->victim < 0) || (!failing && !clean) ||
        (o->multiple && o->children < 2) ||
        (o->connect && ((strcmp(o->connect, "accept") && strcmp(o->connect, "connect")) || !o->port_file))) {
        fprintf(stderr, "usage: ulfm_spawn --children N --victim R --kind crash|hang|merge [--deadline-s S] [--multiple 1]\n"
                        "       ulfm_spawn --children N --kind clean|disconnect [--linger-ms M] [--multiple 1]\n"
                        "       ulfm_spawn --connect accept|connect --port-file F ...\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* The children as one job of two commands: children / 2, then the rest. */
static void spawn_multiple(char **argv, const struct options *o, MPI_Comm *inter)
{
    char *commands[2] = {argv[0], argv[0]};
    char **arguments[2] = {argv + 1, argv + 1};
    int counts[2] = {o->children / 2, o->children - o->children / 2};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    MPI_Comm_spawn_multiple(2, commands, arguments, counts, infos, 0, MPI_COMM_WORLD, inter,
                            MPI_ERRCODES_IGNORE);
}

/* The two jobs of --connect: the accepting root publishes its port in a
 * file (written aside, then renamed, so the other side never reads half),
 * the connecting root polls for it until the deadline's alarm. */
static void join_jobs(const struct options *o, MPI_Comm *inter)
{
    char port[MPI_MAX_PORT_NAME] = "";
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!strcmp(o->connect, "accept")) {
        if (0 == rank) {
            char aside[4096];
            MPI_Open_port(MPI_INFO_NULL, port);
            snprintf(aside, sizeof aside, "%s.part", o->port_file);
            FILE *out = fopen(aside, "w");
            if (!out || fputs(port, out) < 0 || fclose(out) || rename(aside, o->port_file)) {
                perror(o->port_file);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter);
        return;
    }
    if (0 == rank) {
        FILE *in;
        while (!(in = fopen(o->port_file, "r"))) usleep(10000);
        if (!fgets(port, sizeof port, in)) {
            fprintf(stderr, "%s: empty port file\n", o->port_file);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        fclose(in);
    }
    MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter);
}

/* An allreduce every millisecond on `comm` for linger_ms, agreeing each time
 * on going on (so nobody waits in one that the others skipped): the first
 * error. */
static int linger(MPI_Comm comm, int linger_ms)
{
    long long end = now_ns() + linger_ms * 1000000LL;
    int rc = MPI_SUCCESS, go_on = 1;
    while (rc == MPI_SUCCESS && go_on) {
        go_on = now_ns() < end;
        rc = MPI_Allreduce(MPI_IN_PLACE, &go_on, 1, MPI_INT, MPI_LAND, comm);
        usleep(1000);
    }
    return rc;
}

/* No failure: both sides disconnect; nobody may see a failure after. */
static int part_cleanly(const struct options *o, MPI_Comm *inter, MPI_Comm *merged, int rank, bool is_child)
{
    MPI_Comm_free(merged);
    int rc = MPI_Comm_disconnect(inter);
    bool goes_on = !is_child || !strcmp(o->kind, "disconnect");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS && goes_on) rc = linger(MPI_COMM_WORLD, o->linger_ms);
    printf("{\"rank\":%d,\"side\":\"%s\",\"parted\":\"%s\",\"rc\":%d,\"went_on\":%s}\n", rank,
           is_child ? "child" : "parent", o->kind, rc, goes_on ? "true" : "false");
    fflush(stdout);
    alarm(0);
    MPI_Finalize();
    return 0;
}

/* --kind merge: the victim dies before the merge; every survivor's merge
 * must fail, and all then agree on that over the intercommunicator. */
static int merge_after_crash(const struct options *o, MPI_Comm *inter, bool is_child)
{
    int world_rank, parents, rc;
    MPI_Comm merged;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    if (is_child) MPI_Comm_remote_size(*inter, &parents);
    else MPI_Comm_size(MPI_COMM_WORLD, &parents);
    int rank = is_child ? parents + world_rank : world_rank;   /* in the merge that was to be */
    set_deadline(rank, o->deadline_s, "the merge did not end within the deadline");
    if (rank == o->victim) raise(SIGKILL);
    MPI_Comm_set_errhandler(*inter, MPI_ERRORS_RETURN);
    rc = MPI_Intercomm_merge(*inter, is_child, &merged);
    if (rc == MPI_SUCCESS) MPI_Comm_free(&merged);
    /* the idiom that makes an error uniform: agree on the outcome over the
     * intercommunicator. It also keeps each job in MPI until the other is
     * done with the merge (a message to a process that left is never
     * delivered, and ULFM cannot take back a send to a live peer). */
    int merged_everywhere = rc == MPI_SUCCESS;
    int agree_rc = MPIX_Comm_agree(*inter, &merged_everywhere);
    printf("{\"rank\":%d,\"side\":\"%s\",\"merge_rc\":%d,\"agree_rc\":%d,\"agreed\":%d}\n", rank,
           is_child ? "child" : "parent", rc, agree_rc, merged_everywhere);
    fflush(stdout);
    alarm(0);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    struct options o;
    MPI_Comm parent, inter, merged;
    MPI_Init(&argc, &argv);
    parse(argc, argv, &o);
    MPI_Comm_get_parent(&parent);
    bool is_child = parent != MPI_COMM_NULL || (o.connect && !strcmp(o.connect, "connect"));
    if (o.connect) {
        int world_rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
        set_deadline(world_rank, o.deadline_s, "the other job did not connect within the deadline");
        join_jobs(&o, &inter);
    } else if (is_child) {
        inter = parent;
    } else if (o.multiple) {
        spawn_multiple(argv, &o, &inter);
    } else {
        MPI_Comm_spawn(argv[0], argv + 1, o.children, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       MPI_ERRCODES_IGNORE);
    }
    if (!strcmp(o.kind, "merge")) return merge_after_crash(&o, &inter, is_child);
    MPI_Intercomm_merge(inter, is_child, &merged);   /* parents first */
    int rank, size;
    MPI_Comm_rank(merged, &rank);
    MPI_Comm_size(merged, &size);
    MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
    set_deadline(rank, o.deadline_s, "no failure seen within the deadline");
    MPI_Barrier(merged);
    if (o.victim < 0) return part_cleanly(&o, &inter, &merged, rank, is_child);

    long long start = now_ns();
    if (rank == o.victim) {
        while (now_ns() - start < INJECT_AFTER_NS) usleep(1000);
        fflush(stdout);
        raise(strcmp(o.kind, "hang") ? SIGKILL : SIGSTOP);
        pause();   /* a resumed victim must not rejoin */
    }
    int rc = MPI_SUCCESS;
    while (rc == MPI_SUCCESS) rc = MPI_Barrier(merged);
    double failed_ms = (now_ns() - start - INJECT_AFTER_NS) / 1e6;

    MPI_Comm shrunk;
    MPIX_Comm_failure_ack(merged);
    char acked[256];
    MPI_Group acked_group;
    MPIX_Comm_failure_get_acked(merged, &acked_group);
    format_ranks(acked_group, merged, acked, sizeof acked);
    MPI_Group_free(&acked_group);
    int shrink_rc = MPIX_Comm_shrink(merged, &shrunk);
    int shrunk_size = -1;
    if (shrink_rc == MPI_SUCCESS) MPI_Comm_size(shrunk, &shrunk_size);
    printf("{\"rank\":%d,\"side\":\"%s\",\"failed\":%s,\"barrier_rc\":%d,\"failed_ms\":%.1f,"
           "\"shrink_rc\":%d,\"shrunk_size\":%d,\"size\":%d}\n",
           rank, is_child ? "child" : "parent", acked, rc, failed_ms, shrink_rc, shrunk_size, size);
    fflush(stdout);
    alarm(0);
    if (shrink_rc == MPI_SUCCESS) MPI_Comm_free(&shrunk);
    MPI_Finalize();
    return 0;
}
