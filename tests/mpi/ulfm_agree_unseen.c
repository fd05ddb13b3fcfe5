/*
 * An agreement after the crash of a process nobody had talked to yet.
 *
 * Open MPI creates a remote peer's proc lazily (mpi_add_procs_cutoff 0):
 * until the first message to it, a communicator's group holds a
 * placeholder for it, which ULFM's ompi_comm_is_proc_active reads as
 * alive. The victim crashes right after MPI_Init; every survivor waits
 * until it knows of the failure, acknowledges it, and agrees on
 * MPI_COMM_WORLD. The agreement's tree (a binary tree over the ranks)
 * gives the victim a parent that never talked to it: unless learning of
 * the failure replaced the placeholder, that parent waits for its dead
 * child forever (patch 0035).
 *
 *   ulfm_agree_unseen --victim R [--deadline-s 20]
 *
 * Each survivor prints {"rank":R,"agree_rc":RC,"flag":F,"failed":[...]};
 * one that passes its deadline prints {"rank":R,"error":"deadline passed"}.
 */
#include <mpi.h>
#include <mpi-ext.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ulfm_common.h"

/* Until this process knows of a failure: its own progress (an MPI call
 * that talks to nobody) lets the runtime's report in. */
static void wait_for_a_failure(void)
{
    for (int failed = 0; !failed; usleep(1000)) {
        MPI_Group group;
        int ignored;
        MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_SELF, &ignored, MPI_STATUS_IGNORE);
        MPIX_Comm_get_failed(MPI_COMM_WORLD, &group);
        MPI_Group_size(group, &failed);
        MPI_Group_free(&group);
    }
}

int main(int argc, char **argv)
{
    int rank, victim = -1, deadline_s = 20, flag = 1, acked = 0;
    char failed[256];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--victim")) victim = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--deadline-s")) deadline_s = atoi(argv[i + 1]);
    }
    set_deadline(rank, deadline_s, "deadline passed");
    if (rank == victim) {
        raise(SIGKILL);
    }
    wait_for_a_failure();
    MPIX_Comm_ack_failed(MPI_COMM_WORLD, 1, &acked);
    int rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    format_failed_group(failed, sizeof failed);
    printf("{\"rank\":%d,\"agree_rc\":%d,\"flag\":%d,\"failed\":%s}\n", rank, rc, flag, failed);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
