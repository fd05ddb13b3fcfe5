/*
 * A process that dies between its swap of an empty FIFO's tail and its
 * store of the head must not leave the FIFO's reader deaf (patch 0050):
 * the case sm_dead_writer.c's floods rarely reach, as their FIFO is
 * seldom empty. sm_dead_writer_gap.py stops rank 1 there with a debugger
 * and kills it.
 *
 *   sm_dead_writer_gap --pid-file F [--messages M] [--deadline-s S]
 *
 * Rank 1 writes its pid to F, then sends rank 0 a byte every millisecond
 * (tag 7, never received), so that rank 0's FIFO is empty at each of its
 * sends. Rank 2 sends rank 0 M bytes (tag 9), one every 200 us. Rank 0
 * prints {"rank":0,"received":M} once it has all of rank 2's, or an error
 * at the deadline. Run with the shared-memory fast boxes off
 * (btl_sm_fbox_max 0), so that every message takes rank 0's FIFO.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int rank, messages = 10000, deadline = 30;
    const char *pid_file = NULL;
    char byte = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--messages") && i + 1 < argc) messages = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--deadline-s") && i + 1 < argc) deadline = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pid-file") && i + 1 < argc) pid_file = argv[++i];
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    set_deadline(rank, deadline, "rank 0 still waits for rank 2's messages at the deadline");
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        int received = 0;
        while (received < messages &&
               MPI_SUCCESS == MPI_Recv(&byte, 1, MPI_CHAR, 2, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE)) {
            received++;
        }
        printf("{\"rank\":0,\"received\":%d}\n", received);
        fflush(stdout);
    } else if (rank == 1) {
        FILE *f = pid_file ? fopen(pid_file, "w") : NULL;
        if (f) {
            fprintf(f, "%d\n", (int)getpid());
            fclose(f);
        }
        for (;;) {
            MPI_Send(&byte, 1, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
            usleep(1000);
        }
    } else if (rank == 2) {
        for (int i = 0; i < messages; i++) {
            MPI_Send(&byte, 1, MPI_CHAR, 0, 9, MPI_COMM_WORLD);
            usleep(200);
        }
    }
    MPI_Finalize();
    return 0;
}
