/* The install test's program, compiled with the installed mpicc: the last
 * rank dies, the others see MPI_Barrier fail, agree, shrink, and check the
 * shrunken communicator's size with an allreduce. Prints one line per
 * survivor; exits non-zero on anything unexpected. */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, flag = 1, err, survivors = 0, one = 1;
    MPI_Comm shrunk;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1) raise(SIGKILL);

    err = MPI_Barrier(MPI_COMM_WORLD);
    while (err == MPI_SUCCESS) err = MPI_Barrier(MPI_COMM_WORLD);
    if (err != MPIX_ERR_PROC_FAILED && err != MPIX_ERR_REVOKED) {
        fprintf(stderr, "rank %d: barrier returned %d\n", rank, err);
        return 2;
    }
    MPIX_Comm_failure_ack(MPI_COMM_WORLD);
    MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk);
    MPI_Allreduce(&one, &survivors, 1, MPI_INT, MPI_SUM, shrunk);
    printf("rank %d: %d survivors agreed\n", rank, survivors);
    MPI_Comm_free(&shrunk);
    MPI_Finalize();
    return survivors == size - 1 ? 0 : 3;
}
