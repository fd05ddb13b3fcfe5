/*
 * A process whose leading thread leaves by pthread_exit() while another
 * thread runs MPI: main() starts the MPI thread and returns through
 * pthread_exit() at once, so /proc shows the process's leader as a zombie
 * ('Z') for the whole job. Its node-mates must not take it for ended (the
 * witness and the node watch did, and declared it crashed).
 *
 *   leader_exit [--seconds 1]
 *
 * The MPI thread initializes MPI, waits in a barrier, runs allreduces for
 * --seconds (of rank 0's clock), and prints one JSON line per rank with
 * the sum of the last one, before MPI_Finalize.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds = 1.0;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *run_mpi(void *unused)
{
    int provided, rank, size, in[2], sum[2] = {0, 0};
    double end;

    (void) unused;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    end = now_s() + seconds;
    do { /* rank 0's clock ends the loop, for every rank after the same allreduce */
        in[0] = 1;
        in[1] = 0 == rank && now_s() >= end;
        MPI_Allreduce(in, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    } while (0 == sum[1]);
    printf("{\"rank\":%d,\"sum\":%d,\"size\":%d}\n", rank, sum[0], size);
    fflush(stdout);
    MPI_Finalize();
    exit(0);
}

int main(int argc, char **argv)
{
    pthread_t thread;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seconds")) {
            seconds = atof(argv[i + 1]);
        }
    }
    if (0 != pthread_create(&thread, NULL, run_mpi, NULL)) {
        perror("pthread_create");
        return 1;
    }
    pthread_exit(NULL);
}
