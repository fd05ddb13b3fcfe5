/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The shim's state, shared by its wiring files only:
 * comm_ft_detector.c (lifecycle, configuration, ULFM entry) and
 * comm_ft_detector_join.c with comm_ft_detector_join_plan.c (what a spawn
 * or connect/accept, or a JOIN from one that this process took no part
 * in, does to the detector). The other files of the shim never include it
 * (comm_ft_detector.h's rule).
 */

#ifndef OMPI_COMM_FT_DETECTOR_MODULE_H
#define OMPI_COMM_FT_DETECTOR_MODULE_H

#include "ompi/communicator/ft/comm_ft_detector.h"

BEGIN_C_DECLS

/* The shim's state: what init learnt, for the calls that come after it. */
typedef struct ompi_comm_ft_detector_module_t {
    ompi_comm_ft_detector_params_t params;
    bool active;
    /* the detector's own transport carries it (else the BTLs) */
    bool over_ucx;
    /* publish() made the UCX context, or why it could not */
    bool ucx_published;
    const char *ucx_failure;
    /* a job of one process runs no detector until it joins another */
    bool standby;
    /* MPI_COMM_WORLD's size, and this process's rank there */
    uint32_t world_size;
    uint32_t world_rank;
    /* the union's (equal to the world's until a join) */
    uint32_t size;
    uint32_t self;
    /* what the detector was started with, for the next one at a join */
    ompi_comm_ft_driver_ops_t ops;
    size_t max_message_bytes;
    /* kept from init to start, where the witnesses learn their node's pids */
    uint32_t *nodes;
    /* by union rank: ULFM already knew it failed (set on the application's
     * threads, read by the detector thread, which touches no ompi_proc_t) */
    uint8_t *known_failed;
} ompi_comm_ft_detector_module_t;


extern ompi_comm_ft_detector_module_t ompi_comm_ft_module;

/* comm_ft_detector.c, for the join */
/* Node of every rank of `names` (free it; NULL: unknown), and how many nodes. */
uint32_t *ompi_comm_ft_wiring_node_of_ranks(const opal_process_name_t *names, uint32_t size,
                                           uint32_t *node_count);
/* What the variables set, for this process's union size and rank. */
btl_ft_config_t ompi_comm_ft_wiring_config(void);
bool ompi_comm_ft_wiring_watches_node(void);
/* The core, through the driver (the driver not started). */
int ompi_comm_ft_wiring_create_core(btl_ft_config_t *config);
void ompi_comm_ft_wiring_register_pvar(void);

/* comm_ft_detector_join.c, for the driver's ops */
/* The core's `joined` callback (detector thread, core lock held): keeps the
 * JOIN until the step ends. */
void ompi_comm_ft_join_heard(void *context, uint32_t from, uint32_t epoch, const btl_ft_job_extent_t *jobs,
                             size_t job_count, const btl_ft_known_failure_t *known, size_t known_count);
/* After the step (detector thread, no lock held): follows a JOIN kept. */
void ompi_comm_ft_join_follow(void);
/* comm_ft_detector_join_plan.c: at MPI_Finalize, frees what joins retired
 * while other threads could still read it. */
void ompi_comm_ft_join_fini(void);

END_C_DECLS

#endif /* OMPI_COMM_FT_DETECTOR_MODULE_H */
