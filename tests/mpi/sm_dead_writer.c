/*
 * A process that dies while it puts a message into a node-mate's shared-
 * memory FIFO must not leave that node-mate deaf (patch 0050).
 *
 *   sm_dead_writer [--messages M] [--deadline-s S]
 *
 * Rank 0 receives M messages from the last rank, which sends them at a
 * steady pace. Every rank in between floods rank 0 with one-byte messages
 * and SIGKILLs itself at a random moment of the first 20 ms: run with the
 * shared-memory fast boxes off (btl_sm_fbox_max 0), every message goes
 * through rank 0's FIFO, so now and then a flooder dies between its swap
 * of the FIFO's tail and its link. Rank 0 prints {"rank":0,"received":M}
 * once it has every message of the last rank, or an error at the deadline.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ulfm_common.h"

static void die_now(int sig)
{
    (void)sig;
    kill(getpid(), SIGKILL);
}

int main(int argc, char **argv)
{
    int rank, size, messages = 20000, deadline = 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--messages") && i + 1 < argc) messages = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--deadline-s") && i + 1 < argc) deadline = atoi(argv[++i]);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    set_deadline(rank, deadline, "rank 0 still waits for the last rank's messages at the deadline");
    MPI_Barrier(MPI_COMM_WORLD);

    char byte = (char)rank;
    if (rank == 0) {
        int received = 0;
        while (received < messages &&
               MPI_SUCCESS == MPI_Recv(&byte, 1, MPI_CHAR, size - 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE)) {
            received++;
        }
        printf("{\"rank\":0,\"received\":%d}\n", received);
        fflush(stdout);
    } else if (rank == size - 1) {
        for (int i = 0; i < messages; i++) {
            MPI_Send(&byte, 1, MPI_CHAR, 0, 9, MPI_COMM_WORLD);
            if (i % 100 == 0) usleep(100); /* so the flooders' deaths fall among these */
        }
    } else {
        srand((unsigned)(now_ns() ^ (getpid() << 16)));
        signal(SIGALRM, die_now);
        ualarm((useconds_t)(1000 + rand() % 20000), 0);
        for (;;) MPI_Send(&byte, 1, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
