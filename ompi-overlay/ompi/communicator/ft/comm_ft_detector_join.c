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
 * roots knew. With comm_ft_detector_join_plan.c (the move itself, which
 * both ways of joining here run), the shim's wiring files beside
 * comm_ft_detector.c, sharing its state through comm_ft_detector_module.h.
 *
 * Those that took part in the connect move on the application's thread,
 * at its end. Before it leaves its old detector, each of them sends a JOIN
 * to the processes of its old union that took no part (a spawn from
 * MPI_COMM_SELF in a job of several processes): the new union's jobs and
 * epoch, and the failures known there. A process left out weighs the
 * JOINs that reach it on its detector thread, between two steps
 * (btl_ft_membership_verdict): it follows a union of more jobs than it
 * watches; the driver puts a new core in the old one's place, without
 * stopping the thread, since the application's threads may be anywhere
 * (computing, in MPI, in MPI_Finalize).
 *
 * Two connects from different processes of one union that end at once
 * each make a union of their own, at the same epoch. A JOIN crosses
 * unions (the transport hands it over whatever union its sender runs), so
 * every process of the old union hears of both and merges them
 * (btl_ft_membership_merged: the same union everywhere, whatever the order
 * heard), then tells the processes of the jobs that not every union it
 * weighed named (the new children), which follow. A merge may number
 * processes anew: other threads hold union ranks only while the numbering
 * is pinned (ompi_comm_ft_union_pin), the move holds it still, and what
 * the queues hold is renumbered with it; what they may still read of the
 * old union and of the old failure flags is kept until MPI_Finalize.
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
#include "ompi/communicator/ft/comm_ft_detector_join_plan.h"
#include "ompi/communicator/ft/comm_ft_detector_module.h"
#include "ompi/group/group.h"
#include "ompi/runtime/params.h"

#define module ompi_comm_ft_module

/* Held by the application's thread for a whole connect, and tried by the
 * detector thread before it follows a JOIN: each moves the module's state.
 * A JOIN that comes during a connect of this process's own is followed, or
 * found to be another connect's, after it (a JOIN goes only to processes
 * left out of a connect: this one is in another, made at the same time). */
static pthread_mutex_t moving = PTHREAD_MUTEX_INITIALIZER;

/* The JOINs heard since the last follow, kept by the core's callback and
 * weighed after the step, both on the detector thread: the union they
 * name together (merged when two named different ones), the jobs every
 * one of them named, and the failures they carried, by name (their ranks
 * are those of each JOIN's union). */
static struct {
    bool kept;
    btl_ft_membership_t *named;
    bool merged;
    uint32_t common[JOBS_MAX];
    size_t common_count;
    opal_process_name_t from; /* the last sender, for the log */
    ompi_comm_ft_named_failure_t known[KNOWN_MAX];
    size_t known_count;
} heard;

/* The JOIN this process's side sends, when live processes of its union
 * took no part in the connect; NULL when none did. */
static ompi_comm_ft_join_news_t *news_for(const btl_ft_membership_t *next, const ompi_comm_ft_join_plan_t *plan,
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
        .job_count = ompi_comm_ft_join_jobs_of(next, jobs),
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
    ompi_comm_ft_join_plan_t *plan = NULL;
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
    if (NULL == views || NULL == mine || NULL == (kinds = ompi_comm_ft_join_known_kinds())) {
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
    if (NULL == (next = ompi_comm_ft_union_of(views)) || NULL == (plan = ompi_comm_ft_join_plan_layout(next))) {
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
    ompi_comm_ft_join_sort_known(plan);
    if (!views[0].covers) {
        announce = news_for(next, plan, comm, kinds, jobs, &news);
    }
    (void) ompi_comm_ft_join_move_to(next, plan, announce);
    next = NULL; /* adopted, even when the detector could not follow */
done:
    btl_ft_membership_destroy(next);
    if (NULL != plan) {
        ompi_comm_ft_join_plan_free(plan);
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

/* Whether `job` is among the first `count` of `jobs`. */
static bool has_job(const uint32_t *jobs, size_t count, uint32_t job)
{
    for (size_t i = 0; i < count; ++i) {
        if (jobs[i] == job) {
            return true;
        }
    }
    return false;
}

/* Keeps only the jobs of `common` that `named` has too. */
static void keep_common(const btl_ft_membership_t *named)
{
    size_t kept = 0;
    uint32_t rank;

    for (size_t i = 0; i < heard.common_count; ++i) {
        if (0 == btl_ft_membership_rank_of(named, heard.common[i], 0, &rank)) {
            heard.common[kept++] = heard.common[i];
        }
    }
    heard.common_count = kept;
}

/* Folds one more JOIN's union into what was heard (btl_ft_membership_verdict
 * against it): the same union as if each had been followed in turn. */
static void fold_heard(btl_ft_membership_t *named)
{
    btl_ft_membership_t *both;

    if (!heard.kept) {
        heard.named = named;
        heard.merged = false;
        heard.common_count = 0;
        for (size_t i = 0; i < btl_ft_membership_job_count(named) && i < JOBS_MAX; ++i) {
            heard.common[heard.common_count++] = btl_ft_membership_job_at(named, i).job;
        }
        return;
    }
    keep_common(named);
    switch (btl_ft_membership_verdict(heard.named, named)) {
    case BTL_FT_JOIN_FOLLOW:
        btl_ft_membership_destroy(heard.named);
        heard.named = named;
        return;
    case BTL_FT_JOIN_MERGE:
        if (NULL != (both = btl_ft_membership_merged(heard.named, named))) {
            btl_ft_membership_destroy(heard.named);
            heard.named = both;
            heard.merged = true;
        }
        break;
    default:
        break;
    }
    btl_ft_membership_destroy(named);
}

void ompi_comm_ft_join_heard(void *context, uint32_t from, uint32_t epoch, const btl_ft_job_extent_t *jobs,
                             size_t job_count, const btl_ft_known_failure_t *known, size_t known_count)
{
    btl_ft_membership_t *named = btl_ft_membership_create(jobs, job_count);

    if (NULL == named) {
        return;
    }
    for (size_t i = 0; i < known_count && heard.known_count < KNOWN_MAX; ++i) {
        ompi_comm_ft_named_failure_t *failure = &heard.known[heard.known_count];
        if (0 == btl_ft_membership_member_at(named, known[i].rank, &failure->jobid, &failure->vpid)) {
            failure->kind = known[i].kind;
            ++heard.known_count;
        }
    }
    heard.from = OMPI_COMM_FT_FROM_ANOTHER_UNION == from ? (opal_process_name_t){.jobid = OPAL_JOBID_INVALID}
                                                         : ompi_comm_ft_union_name_of(from);
    fold_heard(named);
    __atomic_store_n(&heard.kept, true, __ATOMIC_RELEASE);
}

typedef struct follow_t {
    btl_ft_membership_t *next;
    ompi_comm_ft_join_plan_t *plan;
} follow_t;

/* Inside ompi_comm_ft_driver_replace, between the two cores. */
static int move_transport(void *arg)
{
    follow_t *follow = arg;
    int ret = ompi_comm_ft_join_move_state(follow->next, follow->plan);

    follow->next = NULL; /* adopted */
    if (OMPI_SUCCESS == ret) {
        ompi_comm_ft_ucx_connect(false);
    }
    return ret;
}

/* What the JOINs carried, and what this process knew itself, in the next
 * union's ranks. */
static void gather_known(ompi_comm_ft_join_plan_t *plan, const btl_ft_membership_t *next,
                         const ompi_comm_ft_named_failure_t *known, size_t known_count)
{
    int *kinds = ompi_comm_ft_join_known_kinds();
    uint32_t rank;

    plan->known_count = 0;
    for (size_t i = 0; i < known_count && plan->known_count < KNOWN_MAX; ++i) {
        if (0 == btl_ft_membership_rank_of(next, known[i].jobid, known[i].vpid, &rank)) {
            plan->known[plan->known_count++] = (btl_ft_known_failure_t){.rank = rank, .kind = known[i].kind};
        }
    }
    for (rank = 0; NULL != kinds && rank < plan->size && plan->known_count < KNOWN_MAX; ++rank) {
        if (plan->previous[rank] < module.size && 0 != kinds[plan->previous[rank]]) {
            plan->known[plan->known_count++] = (btl_ft_known_failure_t){.rank = rank, .kind = kinds[plan->previous[rank]]};
        }
    }
    free(kinds);
    ompi_comm_ft_join_sort_known(plan);
}

/* After a merge, those who may not know the union it made: the processes
 * of the jobs that the union left and the JOINs heard did not all name
 * (count returned; the others of a job they all named merge it
 * themselves). */
static uint32_t *told_of_merge(const btl_ft_membership_t *next, const btl_ft_membership_t *left, const uint32_t *common,
                               size_t common_count, uint32_t self, size_t *count)
{
    uint32_t size = btl_ft_membership_size(next), *to = malloc(size * sizeof(*to)), job, job_rank, rank;

    *count = 0;
    for (uint32_t r = 0; NULL != to && r < size; ++r) {
        (void) btl_ft_membership_member_at(next, r, &job, &job_rank);
        if (r != self && (!has_job(common, common_count, job) || 0 != btl_ft_membership_rank_of(left, job, 0, &rank))) {
            to[(*count)++] = r;
        }
    }
    return to;
}

static void say_ignored(void)
{
    ompi_comm_ft_log(1, "btl_ft: a JOIN from %s ignored: this process runs no detector over its own UCX "
                     "transport", OPAL_JOBID_INVALID == heard.from.jobid ? "another union" : OMPI_NAME_PRINT(&heard.from));
}

/* Tells the processes that may not know of it the union a merge made. */
static void announce_merge(const btl_ft_membership_t *next, const ompi_comm_ft_join_plan_t *plan, const uint32_t *common,
                           size_t common_count, const btl_ft_membership_t *left)
{
    btl_ft_job_extent_t jobs[JOBS_MAX];
    size_t count = 0;
    uint32_t *to = told_of_merge(next, left, common, common_count, plan->self, &count);
    ompi_comm_ft_join_news_t news = {
        .epoch = btl_ft_membership_epoch(next),
        .jobs = jobs,
        .job_count = ompi_comm_ft_join_jobs_of(next, jobs),
        .known = plan->known,
        .known_count = plan->known_count,
        .to = to,
        .to_count = count,
    };

    if (NULL != to && (0 == count || OMPI_SUCCESS == ompi_comm_ft_driver_announce(&news))) {
        ompi_comm_ft_log(2, "btl_ft: two connects made unions at once: merged them, and told %zu processes "
                         "that may not know", count);
    } else {
        ompi_comm_ft_log(0, "btl_ft: could not tell the processes of a merged union where it went: the "
                         "others will take them for failed");
    }
    free(to);
}

static void follow_kept(void)
{
    btl_ft_membership_t *named = heard.named;
    const btl_ft_membership_t *now = ompi_comm_ft_union_watched();
    ompi_comm_ft_named_failure_t known[KNOWN_MAX];
    uint32_t common[JOBS_MAX];
    size_t known_count = heard.known_count, common_count = heard.common_count;
    follow_t follow = {NULL, NULL};
    btl_ft_config_t config;
    char error[256] = "";
    bool merged = heard.merged;
    int verdict, ret;

    memcpy(known, heard.known, known_count * sizeof(known[0]));
    memcpy(common, heard.common, common_count * sizeof(common[0]));
    heard.named = NULL;
    heard.known_count = 0;
    __atomic_store_n(&heard.kept, false, __ATOMIC_RELEASE);
    /* a connect makes a union only over the detector's own transport, which
     * every process of a job takes or none does */
    if (!module.active || !module.over_ucx || NULL == now) {
        say_ignored();
        btl_ft_membership_destroy(named);
        return;
    }
    verdict = btl_ft_membership_verdict(now, named);
    if (BTL_FT_JOIN_STALE == verdict) {
        ompi_comm_ft_log(5, "btl_ft: a JOIN names jobs all watched already (epoch %u)", ompi_comm_ft_union_epoch());
        btl_ft_membership_destroy(named);
        return;
    }
    if (BTL_FT_JOIN_FOLLOW == verdict) {
        follow.next = named;
    } else {
        follow.next = btl_ft_membership_merged(now, named);
        btl_ft_membership_destroy(named);
        merged = true;
    }
    if (NULL == follow.next || NULL == (follow.plan = ompi_comm_ft_join_plan_layout(follow.next))) {
        ompi_comm_ft_log(0, "btl_ft: the runtime cannot name the jobs of the union a JOIN tells of: this "
                         "process stays out of it and will be declared failed by the others");
        btl_ft_membership_destroy(follow.next);
        return;
    }
    gather_known(follow.plan, follow.next, known, known_count);
    config = ompi_comm_ft_join_next_config(follow.plan);
    config.max_message_bytes = module.max_message_bytes;
    /* held for the announce below: move_transport() hands it to the union */
    named = follow.next;
    ret = ompi_comm_ft_driver_replace(&config, move_transport, &follow, error, sizeof(error));
    if (OMPI_SUCCESS != ret) {
        ompi_comm_ft_log(0, "btl_ft: the detector could not follow the union of the connected jobs "
                         "(%d%s%s): this process goes on without it and will be declared failed by "
                         "the others", ret, '\0' == error[0] ? "" : ", ", error);
    } else {
        ompi_comm_ft_join_say_moved(btl_ft_membership_job_count(named), btl_ft_membership_epoch(named), follow.plan,
                  merged ? ", merged from unions made at once" : ", told by a JOIN");
        if (merged) {
            announce_merge(named, follow.plan, common, common_count, now); /* retired, not freed */
        }
    }
    btl_ft_membership_destroy(follow.next);
    ompi_comm_ft_join_plan_free(follow.plan);
}

void ompi_comm_ft_join_follow(void)
{
    if (!__atomic_load_n(&heard.kept, __ATOMIC_ACQUIRE) || 0 != pthread_mutex_trylock(&moving)) {
        return; /* nothing kept, or a connect is moving the state: it recalls the JOIN at its end */
    }
    follow_kept();
    pthread_mutex_unlock(&moving);
}
