/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The union of the jobs this process is connected to: who the detector
 * watches, numbered by the core (btl_ft_membership_*), and what two unions
 * tell each other when they connect.
 *
 * At MPI_Init the union is this process's job, epoch 0. Each
 * MPI_Comm_spawn, spawn_multiple, connect/accept or join ends with both
 * sides' roots exchanging a view of their union (its jobs, its epoch,
 * the failures it knows, and whether it can join) through the runtime's
 * publish/lookup, as the connect itself exchanged its members; each root
 * then broadcasts both views over its side's communicator. So every
 * process of both sides holds the same two views and computes the same
 * new union, at the later epoch plus one, with no further talk.
 *
 * The union lists the jobs in the order they joined (btl_ft_membership_*:
 * each job stamped with the epoch it joined at), the jobs of one view
 * first: a view whose union had live processes that took no part in the
 * connect (a spawn from MPI_COMM_SELF in a job of several processes). So
 * its processes keep their ranks, and those left out follow a JOIN that
 * each participant sends them before it moves (comm_ft_detector_join.c).
 * When both views have processes left out, and on the detector's BTL path,
 * both sides keep the unions they had, and say so at verbose 1.
 *
 * Rejected: piggybacking the views on the connect's own exchange of
 * members. Its string format is parsed by upstream code at both ends;
 * a second, private exchange leaves it as it is.
 */

#include "ompi_config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/pmix/base/base.h"
#include "opal/mca/pmix/pmix-internal.h"
#include "opal/util/printf.h"

#include "ompi/communicator/communicator.h"
#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/group/group.h"

#define VIEW_VERSION 3
/* how long a root waits for the other root's view; the other side's
 * root publishes it right after the connect, unless it died */
#define EXCHANGE_TIMEOUT_S 30

/* written by one thread at a time (the application's at a connect, the
 * detector's at a JOIN), read by any */
static btl_ft_membership_t *current = NULL;
/* held for reading by a thread between computing a union rank and
 * queueing it, for writing by the one that renumbers */
static pthread_rwlock_t numbering = PTHREAD_RWLOCK_INITIALIZER;
/* unions left behind, freed at fini: a reader may still hold one */
static btl_ft_membership_t **retired = NULL;
static size_t retired_count = 0;

static const btl_ft_membership_t *watched(void)
{
    return __atomic_load_n(&current, __ATOMIC_ACQUIRE);
}

int ompi_comm_ft_union_init(uint32_t job, uint32_t size)
{
    btl_ft_job_extent_t own = {.job = job, .size = size};

    btl_ft_membership_destroy(current);
    current = btl_ft_membership_create(&own, 1);
    return NULL == current ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
}

void ompi_comm_ft_union_fini(void)
{
    btl_ft_membership_destroy(current);
    current = NULL;
    for (size_t i = 0; i < retired_count; ++i) {
        btl_ft_membership_destroy(retired[i]);
    }
    free(retired);
    retired = NULL;
    retired_count = 0;
}

uint32_t ompi_comm_ft_union_size(void)
{
    const btl_ft_membership_t *now = watched();
    return NULL == now ? 0 : btl_ft_membership_size(now);
}

uint32_t ompi_comm_ft_union_epoch(void)
{
    const btl_ft_membership_t *now = watched();
    return NULL == now ? 0 : btl_ft_membership_epoch(now);
}

bool ompi_comm_ft_union_rank_of(const opal_process_name_t *name, uint32_t *rank)
{
    const btl_ft_membership_t *now = watched();
    return NULL != now && 0 == btl_ft_membership_rank_of(now, name->jobid, name->vpid, rank);
}

opal_process_name_t ompi_comm_ft_union_name_of(uint32_t rank)
{
    opal_process_name_t name = {.jobid = OPAL_JOBID_INVALID, .vpid = OPAL_VPID_INVALID};
    const btl_ft_membership_t *now = watched();

    if (NULL != now) {
        (void) btl_ft_membership_member_at(now, rank, &name.jobid, &name.vpid);
    }
    return name;
}

/* Registers with OPAL every namespace the runtime knows, so that it can
 * name their jobs to PMIx. */
static bool learn_namespaces(void)
{
    pmix_query_t query;
    pmix_info_t *results = NULL;
    size_t count = 0;
    pmix_status_t rc;

    PMIX_QUERY_CONSTRUCT(&query);
    if (PMIX_SUCCESS != PMIx_Argv_append_nosize(&query.keys, PMIX_QUERY_NAMESPACES)) {
        return false;
    }
    rc = PMIx_Query_info(&query, 1, &results, &count);
    for (size_t i = 0; PMIX_SUCCESS == rc && i < count; ++i) {
        char *list, *next, *token;
        if (!PMIX_CHECK_KEY(&results[i], PMIX_QUERY_NAMESPACES) || PMIX_STRING != results[i].value.type
            || NULL == (list = strdup(results[i].value.data.string))) {
            continue;
        }
        for (token = strtok_r(list, ",", &next); NULL != token; token = strtok_r(NULL, ",", &next)) {
            pmix_nspace_t nspace;
            opal_jobid_t jobid;
            PMIX_LOAD_NSPACE(nspace, token);
            (void) opal_pmix_convert_nspace(&jobid, nspace);
        }
        free(list);
    }
    if (NULL != results) {
        PMIX_INFO_FREE(results, count);
    }
    PMIX_QUERY_DESTRUCT(&query);
    return PMIX_SUCCESS == rc;
}

bool ompi_comm_ft_union_learn_jobs(const btl_ft_job_extent_t *jobs, size_t count)
{
    pmix_nspace_t nspace;
    bool asked = false;

    for (size_t i = 0; i < count; ++i) {
        while (OPAL_SUCCESS != opal_pmix_convert_jobid(nspace, jobs[i].job)) {
            if (asked || !learn_namespaces()) {
                return false;
            }
            asked = true;
        }
    }
    return true;
}

/* Which union ranks have a process in `group` (free it). */
static uint8_t *ranks_in(ompi_group_t *group, uint32_t size)
{
    uint8_t *in = calloc(size > 0 ? size : 1, 1);
    uint32_t rank;

    for (int i = 0; NULL != in && i < ompi_group_size(group); ++i) {
        opal_process_name_t name = ompi_group_get_proc_name(group, i);
        if (ompi_comm_ft_union_rank_of(&name, &rank) && rank < size) {
            in[rank] = 1;
        }
    }
    return in;
}

uint32_t *ompi_comm_ft_union_left_out(ompi_group_t *group, const int *kinds, size_t *count)
{
    uint32_t size = ompi_comm_ft_union_size(), self = UINT32_MAX;
    uint8_t *in = ranks_in(group, size);
    uint32_t *out = NULL == in ? NULL : malloc(size * sizeof(*out));

    *count = 0;
    (void) ompi_comm_ft_union_rank_of(OMPI_PROC_MY_NAME, &self);
    for (uint32_t rank = 0; NULL != out && rank < size; ++rank) {
        if (!in[rank] && 0 == kinds[rank] && rank != self) {
            out[(*count)++] = rank;
        }
    }
    free(in);
    if (0 == *count) {
        free(out);
        out = NULL;
    }
    return out;
}

/* Whether every process of the union not known failed is in `group`. */
static bool group_covers(ompi_group_t *group, const int *kinds)
{
    size_t count = 0;

    free(ompi_comm_ft_union_left_out(group, kinds, &count));
    return 0 == count;
}

void ompi_comm_ft_union_describe(ompi_comm_ft_union_view_t *view, bool joinable, ompi_group_t *group,
                                 const int *kinds)
{
    uint32_t size = ompi_comm_ft_union_size();

    memset(view, 0, sizeof(*view));
    view->version = VIEW_VERSION;
    if (NULL == current) {
        return; /* not joinable: no detector here */
    }
    view->epoch = btl_ft_membership_epoch(current);
    view->job_count = (uint32_t) btl_ft_membership_job_count(current);
    if (view->job_count > OMPI_COMM_FT_UNION_JOBS_MAX) {
        view->job_count = 0;
        return;
    }
    for (uint32_t i = 0; i < view->job_count; ++i) {
        view->jobs[i] = btl_ft_membership_job_at(current, i);
    }
    /* failures beyond the view's room are not carried: the new detector
     * finds them again, as silent members */
    for (uint32_t rank = 0; rank < size && view->failure_count < OMPI_COMM_FT_UNION_FAILURES_MAX; ++rank) {
        if (0 != kinds[rank]) {
            ompi_comm_ft_named_failure_t *failure = &view->failures[view->failure_count++];
            opal_process_name_t name = ompi_comm_ft_union_name_of(rank);
            failure->jobid = name.jobid;
            failure->vpid = name.vpid;
            failure->kind = kinds[rank];
        }
    }
    view->joinable = joinable;
    view->covers = group_covers(group, kinds);
}

/* The root's half: publish ours, look up theirs. */
static int exchange_roots(const char *port, bool send_first, const ompi_comm_ft_union_view_t *mine,
                          ompi_comm_ft_union_view_t *theirs)
{
    char *key = NULL, *other_key = NULL;
    pmix_byte_object_t bytes = {.bytes = (char *) mine, .size = sizeof(*mine)};
    pmix_info_t info;
    pmix_pdata_t found;
    int rc;

    if (NULL == port
        || 0 > opal_asprintf(&key, "%s:btl_ft:%s", port, send_first ? "connect" : "accept")
        || 0 > opal_asprintf(&other_key, "%s:btl_ft:%s", port, send_first ? "accept" : "connect")) {
        free(key);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    PMIX_INFO_LOAD(&info, key, &bytes, PMIX_BYTE_OBJECT);
    PMIX_PDATA_CONSTRUCT(&found);
    PMIX_LOAD_KEY(found.key, other_key);
    rc = opal_pmix_base_exchange(&info, &found, EXCHANGE_TIMEOUT_S);
    PMIX_INFO_DESTRUCT(&info);
    if (OPAL_SUCCESS == rc && (PMIX_BYTE_OBJECT != found.value.type
                               || sizeof(*theirs) != found.value.data.bo.size)) {
        rc = OMPI_ERR_BAD_PARAM;
    }
    if (OPAL_SUCCESS == rc) {
        memcpy(theirs, found.value.data.bo.bytes, sizeof(*theirs));
    }
    PMIX_PDATA_DESTRUCT(&found);
    free(key);
    free(other_key);
    return rc;
}

/* A view as it came from another process: counts within its arrays. */
static bool view_valid(const ompi_comm_ft_union_view_t *view)
{
    return VIEW_VERSION == view->version && view->job_count <= OMPI_COMM_FT_UNION_JOBS_MAX
           && view->failure_count <= OMPI_COMM_FT_UNION_FAILURES_MAX;
}

int ompi_comm_ft_union_exchange(ompi_communicator_t *comm, int root, const char *port, bool send_first,
                                const ompi_comm_ft_union_view_t *mine, ompi_comm_ft_union_view_t views[2])
{
    int status = OMPI_SUCCESS, rc;

    if (ompi_comm_rank(comm) == root) {
        views[0] = *mine;
        status = exchange_roots(port, send_first, mine, &views[1]);
    }
    /* every process learns the root's verdict, even a failed exchange */
    rc = comm->c_coll->coll_bcast(&status, 1, MPI_INT, root, comm, comm->c_coll->coll_bcast_module);
    if (OMPI_SUCCESS != rc || OMPI_SUCCESS != status) {
        return OMPI_SUCCESS != rc ? rc : status;
    }
    rc = comm->c_coll->coll_bcast(views, (int) (2 * sizeof(*views)), MPI_BYTE, root, comm,
                                  comm->c_coll->coll_bcast_module);
    if (OMPI_SUCCESS == rc && !(view_valid(&views[0]) && view_valid(&views[1]))) {
        rc = OMPI_ERR_BAD_PARAM;
    }
    return rc;
}

/* Negative when view a's jobs come first in the union of both, positive
 * when b's do: a view whose union has processes left out of the connect
 * first (those keep their ranks and can follow a JOIN), then the later
 * epoch, then by job numbers. Computed from the views alone, so both sides,
 * which hold them in opposite order, list the union's jobs alike. */
static int compare_views(const ompi_comm_ft_union_view_t *a, const ompi_comm_ft_union_view_t *b)
{
    if (a->covers != b->covers) {
        return a->covers ? 1 : -1;
    }
    if (a->epoch != b->epoch) {
        return a->epoch > b->epoch ? -1 : 1;
    }
    for (uint32_t i = 0; i < a->job_count && i < b->job_count; ++i) {
        if (a->jobs[i].job != b->jobs[i].job) {
            return a->jobs[i].job < b->jobs[i].job ? -1 : 1;
        }
    }
    return (int) a->job_count - (int) b->job_count;
}

/* Which of the two views comes first in the union (0 or 1). */
static int first_view(const ompi_comm_ft_union_view_t views[2])
{
    return compare_views(&views[0], &views[1]) <= 0 ? 0 : 1;
}

/* The union of both views, the first view's jobs as they were, then the
 * other's, which join at the later epoch plus one (the same at every
 * process of both sides); NULL when nothing would change. */
btl_ft_membership_t *ompi_comm_ft_union_of(const ompi_comm_ft_union_view_t views[2])
{
    btl_ft_job_extent_t jobs[2 * OMPI_COMM_FT_UNION_JOBS_MAX];
    int first_index = first_view(views);
    const ompi_comm_ft_union_view_t *first = &views[first_index], *second = &views[1 - first_index];
    uint32_t count = first->job_count + second->job_count;
    uint32_t epoch = views[0].epoch > views[1].epoch ? views[0].epoch : views[1].epoch;
    btl_ft_membership_t *next;

    memcpy(jobs, first->jobs, first->job_count * sizeof(jobs[0]));
    for (uint32_t i = 0; i < second->job_count; ++i) {
        jobs[first->job_count + i] = second->jobs[i];
        jobs[first->job_count + i].since = epoch + 1;
    }
    next = btl_ft_membership_create(jobs, count);
    if (NULL != next && NULL != current
        && btl_ft_membership_size(next) == btl_ft_membership_size(current)) {
        btl_ft_membership_destroy(next); /* both sides were one union already */
        return NULL;
    }
    return next;
}

bool ompi_comm_ft_union_side_moves(const ompi_comm_ft_union_view_t views[2], int side)
{
    return views[side].joinable && (views[side].covers || first_view(views) == side);
}

const btl_ft_membership_t *ompi_comm_ft_union_watched(void)
{
    return watched();
}

void ompi_comm_ft_union_pin(void)
{
    pthread_rwlock_rdlock(&numbering);
}

void ompi_comm_ft_union_unpin(void)
{
    pthread_rwlock_unlock(&numbering);
}

void ompi_comm_ft_union_hold_moves(void)
{
    pthread_rwlock_wrlock(&numbering);
}

void ompi_comm_ft_union_release_moves(void)
{
    pthread_rwlock_unlock(&numbering);
}

/* The known failures of both views, in ranks of `next` (count returned). */
size_t ompi_comm_ft_union_carried(const btl_ft_membership_t *next, const ompi_comm_ft_union_view_t views[2],
                                  btl_ft_known_failure_t *out, size_t capacity, uint32_t self)
{
    size_t count = 0;
    uint32_t rank;

    for (int v = 0; v < 2; ++v) {
        for (uint32_t i = 0; i < views[v].failure_count; ++i) {
            const ompi_comm_ft_named_failure_t *failure = &views[v].failures[i];
            bool seen = false;
            if (0 != btl_ft_membership_rank_of(next, failure->jobid, failure->vpid, &rank) || rank == self) {
                continue;
            }
            for (size_t j = 0; j < count && !seen; ++j) {
                seen = out[j].rank == rank;
            }
            if (!seen && count < capacity) {
                out[count++] = (btl_ft_known_failure_t){.rank = rank, .kind = failure->kind};
            }
        }
    }
    return count;
}

void ompi_comm_ft_union_adopt(btl_ft_membership_t *next)
{
    btl_ft_membership_t *old = current, **more;

    __atomic_store_n(&current, next, __ATOMIC_RELEASE);
    if (NULL == old) {
        return;
    }
    if (NULL == (more = realloc(retired, (retired_count + 1) * sizeof(*retired)))) {
        btl_ft_membership_destroy(old); /* out of memory: a reader may yet trip on it */
        return;
    }
    retired = more;
    retired[retired_count++] = old;
}
