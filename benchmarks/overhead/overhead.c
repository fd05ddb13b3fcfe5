/*
 * What the detector costs an application that never fails: small-message
 * ping-pong latency and large-message bandwidth between ranks 0 and 1, and
 * allreduce latency over all ranks. Rank 0 prints one JSON line per test.
 *
 *   overhead p2p ITERS        (2 ranks: pingpong 8 B, then bandwidth 4 MiB)
 *   overhead allreduce ITERS  (any number of ranks, 8 B MPI_SUM)
 *
 * Each test repeats its loop in batches and reports the median batch, so a
 * descheduling of the shared machine during one batch does not move the
 * figure; the spread across runs is left to the script that repeats us.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "median.h"

#define BATCHES 9
#define BIG_BYTES (4 << 20)

#define SMALL_MAX_BYTES 1024

/* one-way latency of `bytes` in microseconds: half the round trip */
static double pingpong_batch(int rank, int iters, int bytes)
{
    char message[SMALL_MAX_BYTES] = {0};
    double start = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(message, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(message, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(message, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(message, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - start) / iters / 2 * 1e6;
}

/* MB/s of a stream of large messages, closed by a one-byte acknowledgement
 * so the time covers delivery and not only the sender's buffer reuse */
static double bandwidth_batch(int rank, int iters, char *buffer)
{
    char ack = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 0) MPI_Send(buffer, BIG_BYTES, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        else if (rank == 1) MPI_Recv(buffer, BIG_BYTES, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (rank == 0) MPI_Recv(&ack, 1, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else if (rank == 1) MPI_Send(&ack, 1, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
    return (double)BIG_BYTES * iters / (MPI_Wtime() - start) / 1e6;
}

static double allreduce_batch(int iters, int count)
{
    long long in[SMALL_MAX_BYTES / sizeof(long long)] = {1}, out[SMALL_MAX_BYTES / sizeof(long long)];
    double start = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Allreduce(in, out, count, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return (MPI_Wtime() - start) / iters * 1e6;
}

static void report(int rank, const char *test, const char *unit, double *batches, int size)
{
    if (rank == 0)
        printf("{\"test\":\"%s\",\"value\":%.4f,\"unit\":\"%s\",\"ranks\":%d,\"batches\":%d}\n", test,
               median_of(batches, BATCHES), unit, size, BATCHES);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int rank, size;
    double batches[BATCHES];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || (strcmp(argv[1], "p2p") && strcmp(argv[1], "allreduce"))) {
        if (rank == 0) fprintf(stderr, "usage: overhead p2p|allreduce ITERS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int iters = atoi(argv[2]);
    if (!strcmp(argv[1], "p2p")) {
        char *buffer = calloc(1, BIG_BYTES);
        static const int sizes[] = {0, 8, SMALL_MAX_BYTES};
        static const char *const names[] = {"pingpong_0B", "pingpong_8B", "pingpong_1KiB"};
        pingpong_batch(rank, iters / 10, 8); /* warm-up: connections, eager buffers */
        for (int s = 0; s < 3; s++) {
            for (int b = 0; b < BATCHES; b++) batches[b] = pingpong_batch(rank, iters, sizes[s]);
            report(rank, names[s], "us", batches, size);
        }
        int big_iters = iters / 500 > 4 ? iters / 500 : 4;
        bandwidth_batch(rank, 2, buffer);
        for (int b = 0; b < BATCHES; b++) batches[b] = bandwidth_batch(rank, big_iters, buffer);
        report(rank, "bandwidth_4MiB", "MB/s", batches, size);
        free(buffer);
    } else {
        static const int counts[] = {1, SMALL_MAX_BYTES / sizeof(long long)};
        static const char *const names[] = {"allreduce_8B", "allreduce_1KiB"};
        allreduce_batch(iters / 10, 1);
        for (int c = 0; c < 2; c++) {
            for (int b = 0; b < BATCHES; b++) batches[b] = allreduce_batch(iters, counts[c]);
            report(rank, names[c], "us", batches, size);
        }
    }
    MPI_Finalize();
    return 0;
}
