/*
 * The survivor allreduce in libmpi (seed 001, fed by the detector): the
 * entry point behind MPIX_Comm_allreduce_survivors. The protocol is the
 * core's (btl_ft/survivor_allreduce.hpp); comm_ft_survivors.c only moves
 * its messages over the PML and tells it which ranks ULFM knows failed.
 *
 * $HEADER$
 */
#ifndef OMPI_COMM_FT_SURVIVORS_H
#define OMPI_COMM_FT_SURVIVORS_H

#include "ompi_config.h"

#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/group/group.h"
#include "ompi/op/op.h"

#if OPAL_ENABLE_FT_MPI

/* Registers the mpi_ft_survivors_* variables (with the detector's), and
 * refuses an invalid value at MPI_Init with a message naming it
 * (comm_ft_survivors_params.c). */
int ompi_comm_survivors_register_params(void);
int ompi_comm_survivors_check_params(void);

/* Reduces `count` elements of every survivor's `sendbuf` (MPI_IN_PLACE: its
 * `recvbuf`) into `recvbuf` and returns the group of the processes whose
 * values are in it. Returns an MPI error class: MPI_ERR_COMM for an
 * intercommunicator, MPI_ERR_TYPE for a datatype that is not predefined,
 * MPI_ERR_OP for a non-commutative operation or one not defined on the
 * datatype, MPIX_ERR_PROC_FAILED when the others declared this process
 * failed (it is not among the contributors and gets no result). */
int ompi_comm_allreduce_survivors(const void *sendbuf, void *recvbuf, int count, ompi_datatype_t *datatype,
                                  ompi_op_t *op, ompi_communicator_t *comm, ompi_group_t **contributors);

#endif /* OPAL_ENABLE_FT_MPI */

#endif /* OMPI_COMM_FT_SURVIVORS_H */
