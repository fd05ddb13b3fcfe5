/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * A move to the next union, shared by both ways a join reaches a process
 * (comm_ft_detector_join.c: a connect it took part in, a JOIN it heard):
 * who is who in the next union, what failures it starts knowing, and the
 * move of the transport and the shim's state. comm_ft_detector_join_plan.c
 * makes and runs it; nothing but those two files includes this header.
 */

#ifndef OMPI_COMM_FT_DETECTOR_JOIN_PLAN_H
#define OMPI_COMM_FT_DETECTOR_JOIN_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "ompi/communicator/ft/comm_ft_detector.h"

BEGIN_C_DECLS

#define KNOWN_MAX (2 * OMPI_COMM_FT_UNION_FAILURES_MAX)
#define JOBS_MAX (2 * OMPI_COMM_FT_UNION_JOBS_MAX)

/* What the next detector needs, computed before the old one stops. */
typedef struct ompi_comm_ft_join_plan_t {
    uint32_t size;
    uint32_t self;
    opal_process_name_t *names;
    uint32_t *previous; /* each rank's in the old union, UINT32_MAX if new */
    uint32_t *nodes;    /* NULL: unknown */
    uint32_t node_count;
    uint8_t *known_failed;
    btl_ft_known_failure_t known[KNOWN_MAX]; /* sorted by rank (sort_known) */
    size_t known_count;
} ompi_comm_ft_join_plan_t;

/* Every union rank's failure as this process knows it now (free it). */
int *ompi_comm_ft_join_known_kinds(void);
/* Who is who in `next`, and where; NULL when this process is not in it,
 * or OPAL cannot name one of its jobs to PMIx. */
ompi_comm_ft_join_plan_t *ompi_comm_ft_join_plan_layout(const btl_ft_membership_t *next);
void ompi_comm_ft_join_plan_free(ompi_comm_ft_join_plan_t *plan);
/* The new union's jobs, as a JOIN names them (count returned). */
size_t ompi_comm_ft_join_jobs_of(const btl_ft_membership_t *next, btl_ft_job_extent_t *jobs);
/* Sorted by rank, each rank once, never self. */
void ompi_comm_ft_join_sort_known(ompi_comm_ft_join_plan_t *plan);
/* The transport and the shim's state follow `next` (adopted). */
int ompi_comm_ft_join_move_state(btl_ft_membership_t *next, ompi_comm_ft_join_plan_t *plan);
/* The next core's configuration. */
btl_ft_config_t ompi_comm_ft_join_next_config(ompi_comm_ft_join_plan_t *plan);
void ompi_comm_ft_join_say_moved(size_t job_count, uint32_t epoch, const ompi_comm_ft_join_plan_t *plan,
                                 const char *how);
/* On the application's thread: stops the old detector (after its JOIN,
 * if any), moves, starts the next one. */
int ompi_comm_ft_join_move_to(btl_ft_membership_t *next, ompi_comm_ft_join_plan_t *plan,
                              const ompi_comm_ft_join_news_t *announce);

END_C_DECLS

#endif /* OMPI_COMM_FT_DETECTOR_JOIN_PLAN_H */
