/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * What the survivor allreduce's shim reads of its MCA parameters
 * (comm_ft_survivors_params.c); ompi_comm_survivors_register_params and
 * _check_params, which MPI_Init calls, are in comm_ft_survivors.h.
 */
#ifndef OMPI_COMM_FT_SURVIVORS_PARAMS_H
#define OMPI_COMM_FT_SURVIVORS_PARAMS_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if OPAL_ENABLE_FT_MPI

/* The radix of a communicator of `size` processes: mpi_ft_survivors_radix,
 * or the one of lowest latency in the LogP model when it is 0. */
uint32_t ompi_comm_survivors_radix_for(uint32_t size);
/* How long a value may be to take the fast path on a communicator of
 * `size` processes with this radix, as this process allows. */
size_t ompi_comm_survivors_fast_path_bytes(uint32_t size, uint32_t radix);
/* mpi_ft_survivors_preconnect: whether a first call greets. */
bool ompi_comm_survivors_preconnect(void);

#endif /* OPAL_ENABLE_FT_MPI */

#endif /* OMPI_COMM_FT_SURVIVORS_PARAMS_H */
