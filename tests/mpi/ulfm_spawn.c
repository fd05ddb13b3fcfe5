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
 *   ulfm_spawn --children 2 --victim 5 --kind crash|hang [--deadline-s 20]
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
};

static void parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){.children = 2, .victim = -1, .kind = "crash", .deadline_s = 20};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--children")) o->children = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--victim")) o->victim = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--kind")) o->kind = argv[i + 1];
        else if (!strcmp(argv[i], "--deadline-s")) o->deadline_s = atoi(argv[i + 1]);
    }
    if (o->children < 1 || o->victim < 0 || (strcmp(o->kind, "crash") && strcmp(o->kind, "hang"))) {
        fprintf(stderr, "usage: ulfm_spawn --children N --victim R --kind crash|hang [--deadline-s S]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

int main(int argc, char **argv)
{
    struct options o;
    MPI_Comm parent, inter, merged;
    MPI_Init(&argc, &argv);
    parse(argc, argv, &o);
    MPI_Comm_get_parent(&parent);
    bool is_child = parent != MPI_COMM_NULL;
    if (is_child) {
        inter = parent;
    } else {
        MPI_Comm_spawn(argv[0], argv + 1, o.children, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       MPI_ERRCODES_IGNORE);
    }
    MPI_Intercomm_merge(inter, is_child, &merged);   /* parents first */
    int rank, size;
    MPI_Comm_rank(merged, &rank);
    MPI_Comm_size(merged, &size);
    MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
    set_deadline(rank, o.deadline_s, "no failure seen within the deadline");
    MPI_Barrier(merged);

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
