/*
 * MPIX_Comm_allreduce_survivors: an allreduce that completes despite
 * failures (btl_ft, seed 001). Arguments are checked here as the other
 * ULFM calls check theirs; the work is ompi_comm_allreduce_survivors
 * (ompi/communicator/ft/comm_ft_survivors.c).
 *
 * $HEADER$
 */
#include "ompi_config.h"

#include "ompi/communicator/communicator.h"
#include "ompi/communicator/ft/comm_ft_survivors.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/errhandler/errhandler.h"
#include "ompi/group/group.h"
#include "ompi/mpi/c/bindings.h"
#include "ompi/op/op.h"
#include "ompi/runtime/params.h"

#include "ompi/mpiext/ftmpi/c/mpiext_ftmpi_c.h"

#if OMPI_BUILD_MPI_PROFILING
#if OPAL_HAVE_WEAK_SYMBOLS
#pragma weak MPIX_Comm_allreduce_survivors = PMPIX_Comm_allreduce_survivors
#endif
#define MPIX_Comm_allreduce_survivors PMPIX_Comm_allreduce_survivors
#endif

static const char FUNC_NAME[] = "MPIX_Comm_allreduce_survivors";

int MPIX_Comm_allreduce_survivors(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm, MPI_Group *contributors)
{
    int rc = MPI_SUCCESS;

    if (MPI_PARAM_CHECK) {
        OMPI_ERR_INIT_FINALIZE(FUNC_NAME);
        if (ompi_comm_invalid(comm)) {
            return OMPI_ERRHANDLER_INVOKE(MPI_COMM_WORLD, MPI_ERR_COMM, FUNC_NAME);
        }
        if (NULL == contributors || NULL == recvbuf || MPI_IN_PLACE == recvbuf) {
            rc = MPI_ERR_ARG;
        } else if (count < 0) {
            rc = MPI_ERR_COUNT;
        } else if (NULL == datatype || MPI_DATATYPE_NULL == datatype) {
            rc = MPI_ERR_TYPE;
        } else if (NULL == op || MPI_OP_NULL == op) {
            rc = MPI_ERR_OP;
        }
        OMPI_ERRHANDLER_CHECK(rc, comm, rc, FUNC_NAME);
    }

    rc = ompi_comm_allreduce_survivors(sendbuf, recvbuf, count, datatype, op, comm, contributors);
    OMPI_ERRHANDLER_RETURN(rc, comm, rc, FUNC_NAME);
}
