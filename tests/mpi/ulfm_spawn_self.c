/*
 * A spawn from MPI_COMM_SELF in a job of several processes: rank 0 alone
 * spawns one child and merges with it; the other parents took no part in
 * the spawn, and their detectors follow the union by a JOIN
 * (comm_ft_detector_join.c) while they compute outside MPI for
 * --compute-ms, so that only their detector threads can answer for them.
 * With --spawners 2, ranks 0 and 1 each spawn a child of their own, each
 * left out of the other's spawn: rank 1 first, a child that waits
 * CHILD_DELAY_NS before MPI_Init, then rank 0, CHILD_DELAY_NS / 5 later, a
 * child that starts at once. So the runtime numbers rank 1's child's job
 * below rank 0's, while rank 0's connect ends first: the union's second
 * job has the higher number. With --at-once 1 as well, both spawn right
 * after a barrier, children that start at once: the two connects may end
 * within the time a JOIN takes, each making a union of its own at the
 * same epoch, which the processes that hear of both merge.
 * Then:
 *
 *   --kind child-hang   the child of the last spawner stops (SIGSTOP); its
 *                       parent loops on an allreduce of their merged
 *                       communicator until it fails
 *   --kind parent-hang  parent --victim (one left out of the spawn) stops;
 *                       the other parents left out loop on an allreduce of
 *                       their own communicator until it fails
 *   --kind clean        nobody fails: everyone goes on for --linger-ms
 *
 * Every process that is not the victim loops until its allreduce fails or
 * --linger-ms pass (--compute-ms more in a spawn, whose processes start
 * that much before those left out), then prints one JSON line: its world rank, its side,
 * how its loop ended and how long after the injection it failed.
 * Which processes learnt of the failure shows in the detector's verbose
 * lines (mpi_ft_verbose 1), which tests/mpi/spawn_self.py reads.
 *
 *   ulfm_spawn_self --kind child-hang|parent-hang|clean [--victim 2] [--spawners 1|2]
 *                   [--at-once 0|1] [--compute-ms 1500] [--linger-ms 2000] [--deadline-s 20]
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
#define CHILD_DELAY_NS 1500000000LL

struct options {
    const char *kind;
    int victim;
    int spawners;
    int at_once;
    int spawned_by; /* a child's parent, from the arguments it was given */
    int compute_ms;
    int linger_ms;
    int deadline_s;
};

static void parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){.kind = "clean", .victim = 2, .spawners = 1, .spawned_by = -1, .compute_ms = 1500,
                          .linger_ms = 2000, .deadline_s = 20};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--kind")) o->kind = argv[i + 1];
        else if (!strcmp(argv[i], "--victim")) o->victim = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--spawners")) o->spawners = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--at-once")) o->at_once = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--spawned-by")) o->spawned_by = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--compute-ms")) o->compute_ms = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--linger-ms")) o->linger_ms = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--deadline-s")) o->deadline_s = atoi(argv[i + 1]);
    }
    if ((strcmp(o->kind, "child-hang") && strcmp(o->kind, "parent-hang") && strcmp(o->kind, "clean"))
        || o->spawners < 1 || o->spawners > 2) {
        fprintf(stderr, "usage: ulfm_spawn_self --kind child-hang|parent-hang|clean [--victim R] [--spawners 1|2] ...\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* Busy for `ms` without an MPI call: only the detector thread runs MPI's side. */
static void compute(int ms)
{
    long long end = now_ns() + ms * 1000000LL;
    volatile unsigned long sink = 0;
    while (now_ns() < end) {
        for (int i = 0; i < 10000; ++i) sink += (unsigned long)i;
    }
}

/* An allreduce on comm every millisecond, agreeing each time on going on
 * (so nobody waits in one that the others skipped), until one fails or
 * linger_ms pass after `start`. */
static int loop_on(MPI_Comm comm, long long start, int linger_ms, double *failed_ms)
{
    int rc = MPI_SUCCESS, go_on = 1;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    while (rc == MPI_SUCCESS && go_on) {
        go_on = now_ns() - start < INJECT_AFTER_NS + linger_ms * 1000000LL;
        rc = MPI_Allreduce(MPI_IN_PLACE, &go_on, 1, MPI_INT, MPI_LAND, comm);
        usleep(1000);
    }
    *failed_ms = (now_ns() - start - INJECT_AFTER_NS) / 1e6;
    return rc;
}

static void stop_if_victim(bool is_victim, long long start)
{
    if (!is_victim) return;
    while (now_ns() - start < INJECT_AFTER_NS) usleep(1000);
    raise(SIGSTOP);
    pause();   /* a resumed victim must not rejoin */
}

/* The child's arguments: the parent's, then who spawned it (free it). */
static char **child_arguments(int argc, char **argv, int spawner)
{
    char **args = calloc(argc + 2, sizeof(*args));
    static char rank_text[16];
    for (int i = 1; i < argc; ++i) args[i - 1] = argv[i];
    snprintf(rank_text, sizeof rank_text, "%d", spawner);
    args[argc - 1] = "--spawned-by";
    args[argc] = rank_text;
    return args;
}

/* Before MPI_Init: the child of the last of two spawners starts late,
 * unless they spawn at once. */
static void start_late_if_asked(int argc, char **argv)
{
    bool late = false, at_once = false;
    for (int i = 1; i + 1 < argc; ++i) {
        late = late || (!strcmp(argv[i], "--spawned-by") && atoi(argv[i + 1]) == 1);
        at_once = at_once || (!strcmp(argv[i], "--at-once") && atoi(argv[i + 1]) == 1);
    }
    if (late && !at_once) {
        usleep(CHILD_DELAY_NS / 1000);
    }
}

int main(int argc, char **argv)
{
    struct options o;
    MPI_Comm parent, inter = MPI_COMM_NULL, merged = MPI_COMM_NULL, left_out = MPI_COMM_NULL;
    int world_rank, rc = MPI_SUCCESS;
    double failed_ms = -1;
    start_late_if_asked(argc, argv);
    MPI_Init(&argc, &argv);
    parse(argc, argv, &o);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_get_parent(&parent);
    bool is_child = parent != MPI_COMM_NULL;
    set_deadline(world_rank, o.deadline_s, "the run did not end within the deadline");
    bool spawner = !is_child && world_rank < o.spawners;
    if (!is_child) {
        /* the parents left out of the spawns get a communicator of their own */
        MPI_Comm_split(MPI_COMM_WORLD, spawner, world_rank, &left_out);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (is_child) {
        inter = parent;
    } else if (spawner) {
        char **args = child_arguments(argc, argv, world_rank);
        if (o.spawners > 1 && world_rank == 0 && !o.at_once) usleep(CHILD_DELAY_NS / 5000);   /* after rank 1's */
        MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, MPI_ERRCODES_IGNORE);
        free(args);
    }
    if (inter != MPI_COMM_NULL) MPI_Intercomm_merge(inter, is_child, &merged);   /* the parent, then its child */
    if (!spawner && !is_child) compute(o.compute_ms);

    long long start = now_ns();
    stop_if_victim(!strcmp(o.kind, "child-hang") && is_child && o.spawned_by == o.spawners - 1, start);
    stop_if_victim(!strcmp(o.kind, "parent-hang") && !is_child && world_rank == o.victim, start);
    /* those in a spawn start up to compute_ms before those left out, whose
     * victim stops INJECT_AFTER_NS after their own start: stay as long again */
    if (merged != MPI_COMM_NULL) rc = loop_on(merged, start, o.compute_ms + o.linger_ms, &failed_ms);
    else rc = loop_on(left_out, start, o.linger_ms, &failed_ms);
    char said[32];
    outcome(rc, said, sizeof said);
    printf("{\"rank\":%d,\"side\":\"%s\",\"spawned_by\":%d,\"loop\":\"%s\",\"failed_ms\":%.1f}\n",
           world_rank, is_child ? "child" : "parent", o.spawned_by, said, rc == MPI_SUCCESS ? -1.0 : failed_ms);
    fflush(stdout);
    alarm(0);
    if (merged != MPI_COMM_NULL) MPI_Comm_free(&merged);
    MPI_Finalize();
    return 0;
}
