/*
 * A rank fails just as the others call MPI_Finalize: some learn of it
 * before finalizing, some only inside finalize's own shrink. Every
 * survivor must still leave MPI_Finalize (a rank that learnt late once
 * entered the runtime's fence alone and waited forever).
 *
 *   ulfm_finalize_race --victim 4 [--spread-ms 80] [--deadline-s 30]
 *
 * The victim SIGKILLs itself 200 ms after a barrier; survivor r calls
 * MPI_Finalize at a time spread evenly over [-spread/4, 3 spread/4] around
 * that moment, and prints {"rank":r,"finalized":true} once it returned.
 */
#include <mpi.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ulfm_common.h"

static void sleep_until(long long when_ns)
{
    long long left;
    while ((left = when_ns - now_ns()) > 0) {
        struct timespec ts = {.tv_sec = left / 1000000000LL, .tv_nsec = left % 1000000000LL};
        nanosleep(&ts, NULL);
    }
}

int main(int argc, char **argv)
{
    int victim = 1, world_rank, size, deadline_s = 30;
    long long spread_ms = 80, kill_at_ns;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--victim")) victim = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--spread-ms")) spread_ms = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--deadline-s")) deadline_s = atoi(argv[i + 1]);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    kill_at_ns = now_ns() + 200000000LL;
    MPI_Bcast(&kill_at_ns, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (world_rank == victim) {
        sleep_until(kill_at_ns);
        raise(SIGKILL);
    }
    sleep_until(kill_at_ns - spread_ms * 250000LL + spread_ms * 1000000LL * world_rank / size);
    set_deadline(world_rank, deadline_s, "still in MPI_Finalize");
    MPI_Finalize();
    printf("{\"rank\":%d,\"finalized\":true}\n", world_rank);
    return 0;
}
