/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * A join: after MPI_Comm_spawn, spawn_multiple, connect/accept or join,
 * both sides watch the union of their unions (comm_ft_detector_union.c),
 * each process over a new detector that starts knowing the failures both
 * roots knew. The second of the shim's two wiring files (beside
 * comm_ft_detector.c, sharing its state through comm_ft_detector_module.h).
 *
 * Those that took part in the connect move on the application's thread,
 * at its end. Before it leaves its old detector, each of them sends a JOIN
 * to the processes of its old union that took no part (a spawn from
 * MPI_COMM_SELF in a job of several processes): the new union's jobs and
 * epoch, and the failures known there. A process left out follows the
 * first JOIN that reaches it on its detector thread, between two steps: the
 * driver puts a new core in the old one's place, without stopping the
 * thread, since the application's threads may be anywhere (computing, in
 * MPI, in MPI_Finalize). The union is one where every process of the old
 * one keeps its rank (comm_ft_detector_union.c checks it on both sides),
 * so what other threads hold in old ranks (queued failures, a rank just
 * looked up) stays right; what they may still read of the old union and
 * of the old failure flags is kept until MPI_Finalize.
 *
 * Rejected: moving a process left out on its application's thread, at its
 * next MPI call. An application that computes for longer than the timeout
 * would be declared failed by the new union meanwhile.
 */

#include "ompi_config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ompi/communicator/communicator.h"
#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/communicator/ft/comm_ft_detector_module.h"
#include "ompi/group/group.h"
#include "ompi/runtime/params.h"

#define module ompi_comm_ft_module
#define KNOWN_MAX (2 * OMPI_COMM_FT_UNION_FAILURES_MAX)
#define JOBS_MAX (2 * OMPI_COMM_FT_UNION_JOBS_MAX)

/* failure flags of unions left behind at a JOIN, freed at MPI_Finalize */
static uint8_t **retired = NULL;
static size_t retired_count = 0;
/* Held by the application's thread for a whole connect, and tried by the
 * detector thread before it follows a JOIN: each moves the module's state.
 * A JOIN that comes during a connect of this process's own is followed, or
 * found to be another connect's, after it (a JOIN goes only to processes
 * left out of a connect: this one is in another, made at the same time). */
static pthread_mutex_t moving = PTHREAD_MUTEX_INITIALIZER;

/* A process left out of a connect: the JOIN, kept by the core's callback
 * and followed after the step, both on the detector thread. */
static struct {
    bool kept;
    uint32_t from;
    uint32_t epoch;
    btl_ft_job_extent_t jobs[JOBS_MAX];
    size_t job_count;
    btl_ft_known_failure_t known[KNOWN_MAX];
    size_t known_count;
} heard;

/* Every union rank's failure as this process knows it now (free it). */
static int *known_kinds(void)
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

/* What the next detector needs, computed before the old one stops. */
typedef struct join_plan_t {
    uint32_t size;
    uint32_t self;
    opal_process_name_t *names;
    uint32_t *previous; /* each rank's in the old union, UINT32_MAX if new */
    uint32_t *nodes;    /* NULL: unknown */
    uint32_t node_count;
    uint8_t *known_failed;
    btl_ft_known_failure_t known[KNOWN_MAX]; /* sorted by rank (sort_known) */
    size_t known_count;
} join_plan_t;

static void free_plan(join_plan_t *plan)
{
    free(plan->names);
    free(plan->previous);
    free(plan->nodes);
    free(plan->known_failed);
    free(plan);
}

/* Who is who in `next`, and where; NULL when this process is not in it. */
static join_plan_t *plan_layout(const btl_ft_membership_t *next)
{
    join_plan_t *plan = calloc(1, sizeof(*plan));
    uint32_t old;

    if (NULL == plan) {
        return NULL;
    }
    plan->size = btl_ft_membership_size(next);
    plan->names = malloc(plan->size * sizeof(*plan->names));
    plan->previous = malloc(plan->size * sizeof(*plan->previous));
    plan->known_failed = calloc(plan->size, sizeof(*plan->known_failed));
    if (NULL == plan->names || NULL == plan->previous || NULL == plan->known_failed
        || 0 != btl_ft_membership_rank_of(next, OMPI_PROC_MY_NAME->jobid, OMPI_PROC_MY_NAME->vpid,
                                          &plan->self)) {
        free_plan(plan);
        return NULL;
    }
    for (uint32_t rank = 0; rank < plan->size; ++rank) {
        opal_process_name_t *name = &plan->names[rank];
        (void) btl_ft_membership_member_at(next, rank, &name->jobid, &name->vpid);
        plan->previous[rank] = ompi_comm_ft_union_rank_of(name, &old) ? old : UINT32_MAX;
        plan->known_failed[rank] = UINT32_MAX != plan->previous[rank]
                                   && module.known_failed[plan->previous[rank]];
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
static void sort_known(join_plan_t *plan)
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

/* The new union's jobs, as a JOIN names them (count returned). */
static size_t jobs_of(const btl_ft_membership_t *next, btl_ft_job_extent_t *jobs)
{
    size_t count = btl_ft_membership_job_count(next);

    for (size_t i = 0; i < count && i < JOBS_MAX; ++i) {
        jobs[i] = btl_ft_membership_job_at(next, i);
    }
    return count < JOBS_MAX ? count : JOBS_MAX;
}

/* The transport and the shim's state follow `next`. The old failure flags
 * are retired, not freed: another thread may be reading them. */
static int move_state(btl_ft_membership_t *next, join_plan_t *plan)
{
    int ret = ompi_comm_ft_ucx_join(plan->self, plan->size, btl_ft_membership_epoch(next), plan->names,
                                    plan->previous, plan->nodes, plan->known, plan->known_count);
    uint8_t *old = module.known_failed, **more;

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
    return ret;
}

/* The next core's configuration. */
static btl_ft_config_t next_config(join_plan_t *plan)
{
    btl_ft_config_t config = ompi_comm_ft_wiring_config();

    config.size = plan->size;
    config.self = plan->self;
    config.node_of_rank = plan->nodes;
    config.known_failures = plan->known;
    config.known_failure_count = plan->known_count;
    return config;
}

static void say_moved(size_t job_count, uint32_t epoch, const join_plan_t *plan, const char *how)
{
    ompi_comm_ft_log(2, "btl_ft: now watching the union of %zu jobs, %u processes (epoch %u), "
                     "%zu of them known failed%s", job_count, plan->size, epoch, plan->known_count, how);
}

/* Stops the old detector (after its JOIN, if any), moves the transport
 * and starts the new one, on the application's thread. A failure on the
 * way leaves this process without a detector: said at verbose 0, since
 * the others will take its silence for a failure. */
static int move_to(btl_ft_membership_t *next, join_plan_t *plan, const ompi_comm_ft_join_news_t *announce)
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
    ret = move_state(next, plan);
    config = next_config(plan);
    if (OMPI_SUCCESS == ret && OMPI_SUCCESS == (ret = ompi_comm_ft_wiring_create_core(&config))) {
        ompi_comm_ft_ucx_connect();
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
    say_moved(job_count, epoch, plan, NULL == announce ? "" : ", after a JOIN to the processes left out of the connect");
    return OMPI_SUCCESS;
}

/* The JOIN this process's side sends, when live processes of its union
 * took no part in the connect; NULL when none did. */
static ompi_comm_ft_join_news_t *news_for(const btl_ft_membership_t *next, const join_plan_t *plan,
                                           struct ompi_communicator_t *comm, const int *kinds,
                                           btl_ft_job_extent_t *jobs, ompi_comm_ft_join_news_t *news)
{
    size_t count = 0;
    uint32_t *left_out = ompi_comm_ft_union_left_out(comm->c_local_group, kinds, &count);

    if (NULL == left_out) {
        return NULL;
    }
    *news = (ompi_comm_ft_join_news_t){
        .epoch = btl_ft_membership_epoch(next),
        .jobs = jobs,
        .job_count = jobs_of(next, jobs),
        .known = plan->known,
        .known_count = plan->known_count,
        .to = left_out,
        .to_count = count,
    };
    ompi_comm_ft_log(2, "btl_ft: %zu processes of this union took no part in the connect: a JOIN "
                     "tells them", count);
    return news;
}

/* At the end of ompi_dpm_connect_accept, collective over comm on both
 * sides. Never fails the connect: whatever goes wrong leaves each side
 * with the detector it had. */
int ompi_comm_failure_detector_connected(struct ompi_communicator_t *comm, int root,
                                         const char *port, bool send_first)
{
    ompi_comm_ft_union_view_t *views = NULL, *mine = NULL;
    btl_ft_membership_t *next = NULL;
    join_plan_t *plan = NULL;
    ompi_comm_ft_join_news_t news, *announce = NULL;
    btl_ft_job_extent_t jobs[JOBS_MAX];
    int *kinds = NULL;
    bool joinable = (module.active || module.standby) && module.over_ucx;
    int ret;

    if (!ompi_ftmpi_enabled) {
        return OMPI_SUCCESS;
    }
    pthread_mutex_lock(&moving);
    views = malloc(2 * sizeof(*views));
    mine = malloc(sizeof(*mine));
    if (NULL == views || NULL == mine || NULL == (kinds = known_kinds())) {
        goto done; /* the other root's lookup times out: it keeps its detector too */
    }
    ompi_comm_ft_union_describe(mine, joinable, comm->c_local_group, kinds);
    mine->network = joinable && ompi_comm_ft_ucx_reaches_other_nodes();
    if (OMPI_SUCCESS != (ret = ompi_comm_ft_union_exchange(comm, root, port, send_first, mine, views))) {
        ompi_comm_ft_log(1, "btl_ft: the connected jobs could not tell each other their unions "
                         "(%d): each keeps its own detector", ret);
        goto done;
    }
    if (!ompi_comm_ft_union_side_moves(views, 0) || !ompi_comm_ft_union_side_moves(views, 1)) {
        ompi_comm_ft_log(1, "btl_ft: the %s side of the connect cannot join (no detector over its "
                         "own UCX transport, or live processes that took no part in the connect on "
                         "both sides): each job keeps its own detector",
                         ompi_comm_ft_union_side_moves(views, 0) ? "other" : "this");
        goto done;
    }
    if (NULL == (next = ompi_comm_ft_union_of(views)) || NULL == (plan = plan_layout(next))) {
        goto done; /* one union already */
    }
    /* the same verdict everywhere: the same views and host names */
    if (plan->node_count > 1 && !(views[0].network && views[1].network)) {
        ompi_comm_ft_log(1, "btl_ft: the connected jobs span %u nodes, and one of them runs its "
                         "detector over shared memory only: each job keeps its own detector",
                         plan->node_count);
        goto done;
    }
    plan->known_count = ompi_comm_ft_union_carried(next, views, plan->known, KNOWN_MAX, plan->self);
    sort_known(plan);
    if (!views[0].covers) {
        announce = news_for(next, plan, comm, kinds, jobs, &news);
    }
    (void) move_to(next, plan, announce);
    next = NULL; /* adopted, even when the detector could not follow */
done:
    btl_ft_membership_destroy(next);
    if (NULL != plan) {
        free_plan(plan);
    }
    if (NULL != announce) {
        free((void *) announce->to);
    }
    free(kinds);
    free(mine);
    free(views);
    pthread_mutex_unlock(&moving);
    if (__atomic_load_n(&heard.kept, __ATOMIC_ACQUIRE)) {
        ompi_comm_ft_driver_recall_join();
    }
    return OMPI_SUCCESS;
}

void ompi_comm_ft_join_heard(void *context, uint32_t from, uint32_t epoch, const btl_ft_job_extent_t *jobs,
                             size_t job_count, const btl_ft_known_failure_t *known, size_t known_count)
{
    if ((heard.kept && epoch <= heard.epoch) || job_count > JOBS_MAX) {
        return; /* the others of one connect name the same union; a later connect's wins */
    }
    heard.from = from;
    heard.epoch = epoch;
    heard.job_count = job_count;
    memcpy(heard.jobs, jobs, job_count * sizeof(*jobs));
    heard.known_count = known_count < KNOWN_MAX ? known_count : KNOWN_MAX;
    memcpy(heard.known, known, heard.known_count * sizeof(*known));
    __atomic_store_n(&heard.kept, true, __ATOMIC_RELEASE);
}

typedef struct follow_t {
    btl_ft_membership_t *next;
    join_plan_t *plan;
} follow_t;

/* Inside ompi_comm_ft_driver_replace, between the two cores. */
static int move_transport(void *arg)
{
    follow_t *follow = arg;
    int ret = move_state(follow->next, follow->plan);

    follow->next = NULL; /* adopted */
    if (OMPI_SUCCESS == ret) {
        ompi_comm_ft_ucx_connect();
    }
    return ret;
}

/* What the JOIN carried, and what this process knew itself (its ranks
 * are the same in the new union). */
static void gather_known(join_plan_t *plan)
{
    int *kinds = known_kinds();
    uint32_t old_size = module.size;

    memcpy(plan->known, heard.known, heard.known_count * sizeof(heard.known[0]));
    plan->known_count = heard.known_count;
    for (uint32_t rank = 0; NULL != kinds && rank < old_size && plan->known_count < KNOWN_MAX; ++rank) {
        if (0 != kinds[rank]) {
            plan->known[plan->known_count++] = (btl_ft_known_failure_t){.rank = rank, .kind = kinds[rank]};
        }
    }
    free(kinds);
    sort_known(plan);
}

/* Whether every job a JOIN names is watched here already: the JOIN of
 * another participant of a connect this process followed. */
static bool watches_every_job(void)
{
    for (size_t i = 0; i < heard.job_count; ++i) {
        opal_process_name_t first = {.jobid = heard.jobs[i].job, .vpid = 0};
        uint32_t rank;
        if (!ompi_comm_ft_union_rank_of(&first, &rank)) {
            return false;
        }
    }
    return true;
}

/* A JOIN not followed. One that names jobs this process does not watch
 * comes from a second connect made at the same time from this union: the
 * two new unions number their processes differently, and the detector
 * cannot follow both, so the user hears of it whatever the verbosity. */
static void say_not_followed(const opal_process_name_t *from)
{
    uint32_t epoch = ompi_comm_ft_union_epoch();

    if (!module.active || !module.over_ucx) {
        ompi_comm_ft_log(1, "btl_ft: a JOIN from %s ignored: this process runs no detector over its "
                         "own UCX transport", OMPI_NAME_PRINT(from));
    } else if (heard.epoch <= epoch && watches_every_job()) {
        ompi_comm_ft_log(5, "btl_ft: a JOIN from %s names the union already watched (epoch %u)",
                         OMPI_NAME_PRINT(from), heard.epoch);
    } else {
        ompi_comm_ft_log(0, "btl_ft: warning: a JOIN from %s names a union of %zu jobs at epoch %u, "
                         "while this process watches another at epoch %u: two connects made at "
                         "once from processes of one job (or of one union of connected jobs) are "
                         "not supported by the failure detector, and processes of the other "
                         "connect may be declared failed", OMPI_NAME_PRINT(from), heard.job_count,
                         heard.epoch, epoch);
    }
}

static void follow_kept(void)
{
    opal_process_name_t from = ompi_comm_ft_union_name_of(heard.from);
    follow_t follow = {NULL, NULL};
    btl_ft_config_t config;
    char error[256] = "";
    int ret;

    __atomic_store_n(&heard.kept, false, __ATOMIC_RELEASE);
    /* a connect makes a union only over the detector's own transport, which
     * every process of a job takes or none does */
    if (!module.active || !module.over_ucx || heard.epoch <= ompi_comm_ft_union_epoch()
        || NULL == (follow.next = btl_ft_membership_create(heard.jobs, heard.job_count))
        || !ompi_comm_ft_union_keeps_ranks(follow.next)) {
        say_not_followed(&from);
        btl_ft_membership_destroy(follow.next);
        return;
    }
    if (!ompi_comm_ft_union_learn_jobs(heard.jobs, heard.job_count)
        || NULL == (follow.plan = plan_layout(follow.next))) {
        ompi_comm_ft_log(0, "btl_ft: the runtime cannot name the jobs of the union a JOIN from %s "
                         "tells of: this process stays out of it and will be declared failed by "
                         "the others", OMPI_NAME_PRINT(&from));
        btl_ft_membership_destroy(follow.next);
        return;
    }
    gather_known(follow.plan);
    config = next_config(follow.plan);
    config.max_message_bytes = module.max_message_bytes;
    ret = ompi_comm_ft_driver_replace(&config, move_transport, &follow, error, sizeof(error));
    if (OMPI_SUCCESS != ret) {
        ompi_comm_ft_log(0, "btl_ft: the detector could not follow the union of the connected jobs "
                         "(%d%s%s): this process goes on without it and will be declared failed by "
                         "the others", ret, '\0' == error[0] ? "" : ", ", error);
    } else {
        say_moved(heard.job_count, heard.epoch, follow.plan, ", told by a JOIN");
    }
    btl_ft_membership_destroy(follow.next);
    free_plan(follow.plan);
}

void ompi_comm_ft_join_follow(void)
{
    if (!__atomic_load_n(&heard.kept, __ATOMIC_ACQUIRE) || 0 != pthread_mutex_trylock(&moving)) {
        return; /* nothing kept, or a connect is moving the state: it recalls the JOIN at its end */
    }
    follow_kept();
    pthread_mutex_unlock(&moving);
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
