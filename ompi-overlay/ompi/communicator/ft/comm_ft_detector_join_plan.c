/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * A move to the next union (comm_ft_detector_join_plan.h): planned before
 * the old detector stops, then run, by a connect on the application's
 * thread or by a JOIN followed on the detector thread. A wiring file, as
 * comm_ft_detector_join.c is: it moves the transport, the witness, the
 * union, the conclusions and the queues together.
 */

#include "ompi_config.h"

#include <stdlib.h>

#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/communicator/ft/comm_ft_detector_join_plan.h"
#include "ompi/communicator/ft/comm_ft_detector_module.h"
#include "ompi/proc/proc.h"

#define module ompi_comm_ft_module

/* failure flags of unions left behind at a JOIN, freed at MPI_Finalize */
static uint8_t **retired = NULL;
static size_t retired_count = 0;

/* Every union rank's failure as this process knows it now (free it). */
int *ompi_comm_ft_join_known_kinds(void)
{
    int *kinds = calloc(module.size > 0 ? module.size : 1, sizeof(*kinds));

    if (NULL != kinds && module.active) {
        (void) ompi_comm_ft_driver_failure_kinds(kinds, module.size);
    }
    for (uint32_t rank = 0; NULL != kinds && NULL != module.known_failed && rank < module.size; ++rank) {
        if (0 == kinds[rank] && __atomic_load_n(&module.known_failed[rank], __ATOMIC_ACQUIRE)) {
            kinds[rank] = BTL_FT_UNREACHABLE;
        }
    }
    return kinds;
}

void ompi_comm_ft_join_plan_free(ompi_comm_ft_join_plan_t *plan)
{
    free(plan->names);
    free(plan->previous);
    free(plan->nodes);
    free(plan->known_failed);
    free(plan);
}

/* The new union's jobs, as a JOIN names them (count returned). */
size_t ompi_comm_ft_join_jobs_of(const btl_ft_membership_t *next, btl_ft_job_extent_t *jobs)
{
    size_t count = btl_ft_membership_job_count(next);

    for (size_t i = 0; i < count && i < JOBS_MAX; ++i) {
        jobs[i] = btl_ft_membership_job_at(next, i);
    }
    return count < JOBS_MAX ? count : JOBS_MAX;
}

/* Who is who in `next`, and where; NULL when this process is not in it,
 * or OPAL cannot name one of its jobs to PMIx: a job this process never
 * connected to, whose modex (host names, addresses) and fence need it. */
ompi_comm_ft_join_plan_t *ompi_comm_ft_join_plan_layout(const btl_ft_membership_t *next)
{
    btl_ft_job_extent_t jobs[JOBS_MAX];
    ompi_comm_ft_join_plan_t *plan;
    uint32_t old;

    if (!ompi_comm_ft_union_learn_jobs(jobs, ompi_comm_ft_join_jobs_of(next, jobs))) {
        ompi_comm_ft_log(1, "btl_ft: the runtime cannot name every job of the union of the connected jobs");
        return NULL;
    }
    if (NULL == (plan = calloc(1, sizeof(*plan)))) {
        return NULL;
    }
    plan->size = btl_ft_membership_size(next);
    plan->names = malloc(plan->size * sizeof(*plan->names));
    plan->previous = malloc(plan->size * sizeof(*plan->previous));
    plan->known_failed = calloc(plan->size, sizeof(*plan->known_failed));
    if (NULL == plan->names || NULL == plan->previous || NULL == plan->known_failed
        || 0 != btl_ft_membership_rank_of(next, OMPI_PROC_MY_NAME->jobid, OMPI_PROC_MY_NAME->vpid,
                                          &plan->self)) {
        ompi_comm_ft_join_plan_free(plan);
        return NULL;
    }
    for (uint32_t rank = 0; rank < plan->size; ++rank) {
        opal_process_name_t *name = &plan->names[rank];
        (void) btl_ft_membership_member_at(next, rank, &name->jobid, &name->vpid);
        plan->previous[rank] = ompi_comm_ft_union_rank_of(name, &old) ? old : UINT32_MAX;
    }
    plan->nodes = ompi_comm_ft_wiring_node_of_ranks(plan->names, plan->size, &plan->node_count);
    return plan;
}

static int by_rank(const void *a, const void *b)
{
    uint32_t x = ((const btl_ft_known_failure_t *) a)->rank, y = ((const btl_ft_known_failure_t *) b)->rank;
    return x < y ? -1 : x > y;
}

/* Sorted by rank, each rank once (the first kind listed), never self:
 * what the core and a JOIN take. */
void ompi_comm_ft_join_sort_known(ompi_comm_ft_join_plan_t *plan)
{
    size_t kept = 0;

    qsort(plan->known, plan->known_count, sizeof(plan->known[0]), by_rank);
    for (size_t i = 0; i < plan->known_count; ++i) {
        if (plan->known[i].rank != plan->self
            && (0 == kept || plan->known[kept - 1].rank != plan->known[i].rank)) {
            plan->known[kept++] = plan->known[i];
        }
    }
    plan->known_count = kept;
}

/* What the queues hold, in the next union's ranks (the old union's
 * processes it leaves out, none so far, are dropped). */
static void renumber_queues(const ompi_comm_ft_join_plan_t *plan)
{
    uint32_t *new_of_old = malloc((module.size > 0 ? module.size : 1) * sizeof(*new_of_old));

    if (NULL == new_of_old) {
        return; /* out of memory: the queued ranks keep their old numbers */
    }
    for (uint32_t rank = 0; rank < module.size; ++rank) {
        new_of_old[rank] = UINT32_MAX;
    }
    for (uint32_t rank = 0; rank < plan->size; ++rank) {
        if (plan->previous[rank] < module.size) {
            new_of_old[plan->previous[rank]] = rank;
        }
    }
    (void) ompi_comm_ft_queues_renumber(new_of_old, module.size, plan->size);
    free(new_of_old);
}

/* The transport and the shim's state follow `next`, the numbering held
 * still meanwhile: a union that numbers the processes anew (two unions
 * merged) is taken by every thread at once. The old failure flags are
 * retired, not freed: another thread may be reading them. */
int ompi_comm_ft_join_move_state(btl_ft_membership_t *next, ompi_comm_ft_join_plan_t *plan)
{
    int ret = ompi_comm_ft_ucx_join(plan->self, plan->size, btl_ft_membership_epoch(next),
                                    btl_ft_membership_identity(next), plan->names, plan->previous, plan->nodes,
                                    plan->known, plan->known_count);
    uint8_t *old, **more;

    ompi_comm_ft_union_hold_moves();
    old = module.known_failed;
    for (uint32_t rank = 0; rank < plan->size; ++rank) {
        plan->known_failed[rank] = plan->previous[rank] < module.size && old[plan->previous[rank]];
    }
    renumber_queues(plan);
    /* the larger flags before the larger union: a rank found in the new
     * union always has its flag */
    __atomic_store_n(&module.known_failed, plan->known_failed, __ATOMIC_RELEASE);
    plan->known_failed = NULL;
    if (NULL != (more = realloc(retired, (retired_count + 1) * sizeof(*retired)))) {
        retired = more;
        retired[retired_count++] = old;
    } else {
        free(old); /* out of memory: a reader may yet trip on it */
    }
    module.size = plan->size;
    module.self = plan->self;
    ompi_comm_ft_witness_learn_others(plan->names, plan->nodes, plan->size, plan->self);
    ompi_comm_ft_union_adopt(next);
    ompi_comm_ft_conclusions_track(module.size, module.self, module.known_failed);
    ompi_comm_ft_union_release_moves();
    return ret;
}

/* The next core's configuration. */
btl_ft_config_t ompi_comm_ft_join_next_config(ompi_comm_ft_join_plan_t *plan)
{
    btl_ft_config_t config = ompi_comm_ft_wiring_config();

    config.size = plan->size;
    config.self = plan->self;
    config.node_of_rank = plan->nodes;
    config.known_failures = plan->known;
    config.known_failure_count = plan->known_count;
    return config;
}

void ompi_comm_ft_join_say_moved(size_t job_count, uint32_t epoch, const ompi_comm_ft_join_plan_t *plan,
                                 const char *how)
{
    ompi_comm_ft_log(2, "btl_ft: now watching the union of %zu jobs, %u processes (epoch %u), "
                     "%zu of them known failed%s", job_count, plan->size, epoch, plan->known_count, how);
}

/* Stops the old detector (after its JOIN, if any), moves the transport
 * and starts the new one, on the application's thread. A failure on the
 * way leaves this process without a detector: said at verbose 0, since
 * the others will take its silence for a failure. */
int ompi_comm_ft_join_move_to(btl_ft_membership_t *next, ompi_comm_ft_join_plan_t *plan,
                              const ompi_comm_ft_join_news_t *announce)
{
    btl_ft_config_t config;
    bool was_active = module.active;
    size_t job_count = btl_ft_membership_job_count(next);
    uint32_t epoch = btl_ft_membership_epoch(next);
    int ret;

    if (was_active) {
        ompi_comm_ft_driver_finalize(true, NULL, 0, announce);
    }
    module.active = module.standby = false;
    ret = ompi_comm_ft_join_move_state(next, plan);
    config = ompi_comm_ft_join_next_config(plan);
    if (OMPI_SUCCESS == ret && OMPI_SUCCESS == (ret = ompi_comm_ft_wiring_create_core(&config))) {
        ompi_comm_ft_ucx_connect(false);
        if (was_active && ompi_comm_ft_wiring_watches_node()) {
            ompi_comm_ft_witness_rewatch();
        }
        ret = ompi_comm_ft_driver_start();
    }
    if (OMPI_SUCCESS != ret) {
        ompi_comm_ft_log(0, "btl_ft: the detector could not move to the union of the connected jobs "
                         "(%d): this process goes on without it and will be declared failed by the "
                         "others", ret);
        return ret;
    }
    if (!was_active) {
        ompi_comm_ft_wiring_register_pvar();
    }
    module.active = true;
    ompi_comm_ft_join_say_moved(job_count, epoch, plan,
                                NULL == announce ? "" : ", after a JOIN to the processes left out of the connect");
    return OMPI_SUCCESS;
}

void ompi_comm_ft_join_fini(void)
{
    for (size_t i = 0; i < retired_count; ++i) {
        free(retired[i]);
    }
    free(retired);
    retired = NULL;
    retired_count = 0;
}
