/*
 * A peer vanishes in the middle of a large transfer: rank 1 starts sending
 * --mib MiB to rank 0 and kills itself at once, so rank 0's transport meets
 * a dead process while it moves the data (a single-copy read of a process
 * that no longer exists, a reset connection). The transport must report the
 * failure, not abort: rank 0's receive fails with MPIX_ERR_PROC_FAILED, and
 * rank 0 goes on and finalizes. (The victim is rank 1: with 2 processes, the
 * quorum rule stops a survivor that loses the lowest rank.)
 *
 *   ulfm_rdma_peer_exit [--mib 256] [--deadline-s 20]
 *
 * Rank 0 prints one JSON line: {"rank":0,"recv":"proc_failed"|"completed"|
 * "error <class>","ms":...}; "completed" means the transfer beat the kill
 * and the path was not exercised.
 */
#include <mpi.h>
#include <mpi-ext.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ulfm_common.h"

static void on_deadline(int sig)
{
    (void)sig;
    static const char line[] = "{\"rank\":0,\"error\":\"receive still pending at the deadline\"}\n";
    ssize_t ignored = write(STDOUT_FILENO, line, sizeof line - 1);
    (void)ignored;
    _exit(3);
}

int main(int argc, char **argv)
{
    long mib = 256;
    int deadline_s = 20, rank, size, rc, eclass;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mib")) mib = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--deadline-s")) deadline_s = atoi(argv[i + 1]);
    }
    size_t bytes = (size_t)mib << 20;
    char *buffer = malloc(bytes);
    if (!buffer) return 2;
    memset(buffer, 1, bytes); /* touch every page, so the copy is long */

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "ulfm_rdma_peer_exit: run with -np 2\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Datatype mib_type;
    MPI_Type_contiguous(1 << 20, MPI_BYTE, &mib_type);
    MPI_Type_commit(&mib_type);
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 1) {
        MPI_Request request;
        MPI_Isend(buffer, (int)mib, mib_type, 0, 7, MPI_COMM_WORLD, &request);
        raise(SIGKILL);
    }

    signal(SIGALRM, on_deadline);
    alarm((unsigned)deadline_s);
    long long start = now_ns();
    rc = MPI_Recv(buffer, (int)mib, mib_type, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double ms = (now_ns() - start) / 1e6;
    alarm(0);
    MPI_Error_class(rc, &eclass);
    if (rc == MPI_SUCCESS) printf("{\"rank\":0,\"recv\":\"completed\",\"ms\":%.3f}\n", ms);
    else if (eclass == MPIX_ERR_PROC_FAILED) printf("{\"rank\":0,\"recv\":\"proc_failed\",\"ms\":%.3f}\n", ms);
    else printf("{\"rank\":0,\"recv\":\"error %d\",\"ms\":%.3f}\n", eclass, ms);
    fflush(stdout);
    MPI_Type_free(&mib_type);
    MPI_Finalize();
    free(buffer);
    return 0;
}
