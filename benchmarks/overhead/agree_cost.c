/*
 * What one MPIX_Comm_agree costs on MPI_COMM_WORLD, before any failure and
 * after one: the detector may slow the agreement itself (its thread, its
 * locks, the work a known failure adds to each agreement), which every ULFM
 * application pays in its recovery loop. Rank 0 prints one JSON line per test.
 *
 *   agree_cost ITERS   (3 ranks or more; the last rank kills itself between)
 *
 * As in overhead.c, each test runs its loop in batches and reports the
 * median batch.
 */
#include <mpi.h>
#include <mpi-ext.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "median.h"

#define BATCHES 9

/* microseconds per agreement; a failed agreement ends the run: none is
 * expected once the failure is acknowledged */
static double agree_batch(int iters)
{
    double start = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        int flag = 1;
        if (MPIX_Comm_agree(MPI_COMM_WORLD, &flag) != MPI_SUCCESS) {
            fprintf(stderr, "agree_cost: an agreement failed after recovery\n");
            exit(3);
        }
    }
    return (MPI_Wtime() - start) / iters * 1e6;
}

static void measure(int rank, int size, int iters, const char *test)
{
    double batches[BATCHES];
    agree_batch(iters / 10 + 1); /* warm-up */
    for (int b = 0; b < BATCHES; b++) batches[b] = agree_batch(iters);
    if (rank == 0)
        printf("{\"test\":\"%s\",\"value\":%.4f,\"unit\":\"us\",\"ranks\":%d,\"batches\":%d}\n", test,
               median_of(batches, BATCHES), size, BATCHES);
    fflush(stdout);
}

/* until this process knows of the failure and one agreement succeeds */
static void recover(int size)
{
    int acked = 0, rc;
    do {
        int flag = 1;
        MPIX_Comm_ack_failed(MPI_COMM_WORLD, size, &acked);
        rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    } while (acked < 1 || rc != MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc != 2 || size < 3) {
        if (rank == 0) fprintf(stderr, "usage: agree_cost ITERS (3 ranks or more)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int iters = atoi(argv[1]);
    measure(rank, size, iters, "agree_before_failure");
    if (rank == size - 1) raise(SIGKILL);
    recover(size);
    measure(rank, size, iters, "agree_after_failure");
    MPI_Finalize();
    return 0;
}
