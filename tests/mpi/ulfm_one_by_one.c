/*
 * The "recover and go on" loop of a ULFM application, until one process is
 * left: in each round one victim fails (SIGKILL = crash, SIGSTOP = hang),
 * the others see their barrier fail, revoke, shrink and go on with one
 * process fewer. Nothing may stop a survivor on the way (the quorum rule
 * once counted these failures as a network cut and stopped the last one).
 *
 *   ulfm_one_by_one --victims 3,2,1 --kind crash|hang [--deadline-s 30]
 *
 * The last survivor prints {"rank":R,"survivor":true,"size":1,"rounds":K};
 * any survivor whose shrink gives the wrong size prints an "error" record.
 */
#include <mpi.h>
#include <mpi-ext.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ulfm_common.h"

#define MAX_VICTIMS 64

static int parse_victims(const char *text, int *victims)
{
    char *copy = strdup(text), *save = NULL;
    int count = 0;
    for (char *t = strtok_r(copy, ",", &save); t && count < MAX_VICTIMS; t = strtok_r(NULL, ",", &save)) {
        victims[count++] = atoi(t);
    }
    free(copy);
    return count;
}

int main(int argc, char **argv)
{
    int victims[MAX_VICTIMS], victim_count = 0, deadline_s = 30, world_rank, world_size, size;
    const char *kind = "crash";
    MPI_Comm comm, shrunk;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--victims")) victim_count = parse_victims(argv[i + 1], victims);
        else if (!strcmp(argv[i], "--kind")) kind = argv[i + 1];
        else if (!strcmp(argv[i], "--deadline-s")) deadline_s = atoi(argv[i + 1]);
    }
    set_deadline(world_rank, deadline_s, "deadline passed");

    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Barrier(comm);
    for (int round = 0; round < victim_count; ++round) {
        if (world_rank == victims[round]) {
            raise(strcmp(kind, "hang") ? SIGKILL : SIGSTOP);
            pause(); /* a stopped process resumed: it waits to be fenced */
        }
        /* the victim never arrives: every survivor's barrier fails */
        while (MPI_SUCCESS == MPI_Barrier(comm)) {
        }
        MPIX_Comm_revoke(comm);
        MPIX_Comm_shrink(comm, &shrunk);
        MPI_Comm_free(&comm);
        comm = shrunk;
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        MPI_Comm_size(comm, &size);
        if (size != world_size - round - 1) {
            printf("{\"rank\":%d,\"error\":\"round %d shrank to %d processes, expected %d\"}\n",
                   world_rank, round, size, world_size - round - 1);
        }
    }
    MPI_Comm_size(comm, &size);
    if (1 == size) {
        printf("{\"rank\":%d,\"survivor\":true,\"size\":%d,\"rounds\":%d}\n", world_rank, size,
               victim_count);
    }
    fflush(stdout);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
