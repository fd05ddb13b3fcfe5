/*
 * What one MPI call costs, in instructions: a measure that does not depend on
 * wall-clock noise, next to overhead.c's latency, which swings by tens of
 * percent on a shared VM. Meant to run under callgrind on rank 0
 * (call_cost.py does it, for run_overhead.py); rank 0 runs two loops:
 *
 *   roundtrip: MPI_Irecv + MPI_Isend to itself + MPI_Waitall: the PML's
 *              send, match and completion, with every lock they take
 *   poll:      MPI_Test of a receive that never matches: one opal_progress
 *              call, with every progress callback registered
 *
 *   call_cost ITERS
 *
 * Each loop is framed by CALLGRIND_ZERO_STATS and CALLGRIND_DUMP_STATS_AT, so
 * the dump named after the loop holds that loop alone. Rank 1 only waits for
 * the end, so the detector watches a live peer meanwhile. Without valgrind
 * the client requests do nothing.
 */
#include <mpi.h>
#include <valgrind/callgrind.h>

#include <stdio.h>
#include <stdlib.h>

#define DONE_TAG 7
#define NEVER_TAG 8

static void roundtrips(int iters)
{
    char out[8] = {0}, in[8];
    MPI_Request requests[2];

    CALLGRIND_ZERO_STATS;
    for (int i = 0; i < iters; i++) {
        MPI_Irecv(in, sizeof in, MPI_CHAR, 0, 0, MPI_COMM_WORLD, &requests[0]);
        MPI_Isend(out, sizeof out, MPI_CHAR, 0, 0, MPI_COMM_WORLD, &requests[1]);
        MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    }
    CALLGRIND_DUMP_STATS_AT("roundtrip");
}

static void polls(int iters)
{
    char in;
    int done = 0;
    MPI_Request never;

    MPI_Irecv(&in, 1, MPI_CHAR, 1, NEVER_TAG, MPI_COMM_WORLD, &never);
    CALLGRIND_ZERO_STATS;
    for (int i = 0; i < iters; i++) {
        MPI_Test(&never, &done, MPI_STATUS_IGNORE);
    }
    CALLGRIND_DUMP_STATS_AT("poll");
    MPI_Cancel(&never);
    MPI_Wait(&never, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 0;
    char done = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || iters < 1) {
        if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 call_cost ITERS (ITERS > 0)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) {
        roundtrips(iters);
        polls(iters);
        MPI_Send(&done, 1, MPI_CHAR, 1, DONE_TAG, MPI_COMM_WORLD);
        printf("{\"iterations\":%d}\n", iters);
    } else if (rank == 1) {
        MPI_Recv(&done, 1, MPI_CHAR, 0, DONE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
