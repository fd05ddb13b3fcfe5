/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The driver: the only code that calls into the btl_ft core, always under one
 * lock. It owns time (CLOCK_MONOTONIC), the detector thread, and two queues
 * that any other thread may feed without ever touching the core: messages
 * from the AM callback, and failures learnt by ULFM (PMIx events, BTL errors).
 *
 * Each step: hand queued failures and messages to the core, read the local
 * heartbeat flag, tick, then sleep until the next deadline. While the
 * application computes outside MPI, the thread also calls opal_progress
 * before each step, so active messages (and tcp's emulated put) still move;
 * its sleep is then bounded by half a heartbeat period. That is as often as
 * the protocol needs it: a peer's PROBE is answered within half a period,
 * inside the core's confirmation window (at least one period), and a notice
 * is forwarded within half a period, while the thread wakes at most twice per
 * period (plus once per message queued for it). On a fully subscribed node
 * every wakeup takes the core from the application, so the thread never
 * polls faster than that. While the application is inside MPI its own
 * progress moves messages, and the thread stays out of opal_progress: two
 * threads progressing the same BTLs contend for their locks and, when
 * oversubscribed, yield in opal_progress, which delayed heartbeats by tens
 * of milliseconds. Without the thread, the same step runs from an
 * opal_progress callback whenever the application is inside MPI.
 *
 * Rejected: blocking in the BTLs' own event sources (tcp's sockets in the
 * sync event base, UCX's event fd). The sync event base may be looped by one
 * thread at a time and the application's opal_progress loops it; a thread
 * blocked in it would take the application's tcp progress away from it.
 *
 * The core's conclusions reach ULFM from a progress callback, never from the
 * detector thread: ULFM's failure handling (the agreement's bookkeeping
 * above all) expects to run where the BTL error callbacks run, inside
 * opal_progress, and raced the application's own agreement otherwise.
 *
 * Rejected: calling the core straight from the AM callback or the ULFM hook.
 * Those run with BTL or PML locks held, while the core's callbacks send through
 * the BTL; queueing keeps the core lock outermost and free of lock-order cycles.
 */

#include "ompi_config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/mca/threads/threads.h"
#include "opal/runtime/opal_progress.h"
#include "opal/sys/atomic.h"
#include "opal/util/output.h"

#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/constants.h"
#include "ompi/runtime/params.h"

#define NS_PER_S 1000000000LL
/* how late the detector thread may be before an application thread in
 * opal_progress steps the core in its place */
#define LATE_STEP_NS 1000000LL

/* ranks, each at most once until popped, with the strongest kind pushed
 * (enum btl_ft_failure_kind: a crash confirms an earlier report); guarded by
 * queue_lock */
typedef struct rank_queue_t {
    uint32_t *ranks;
    uint8_t *pending; /* 0: not queued, else the kind */
    size_t count;
} rank_queue_t;

typedef struct ompi_comm_ft_inbox_item_t {
    struct ompi_comm_ft_inbox_item_t *next;
    int kind;
    uint32_t from;
    size_t length;
    unsigned char bytes[];
} ompi_comm_ft_inbox_item_t;

static btl_ft_detector_t *core = NULL;
static pthread_mutex_t core_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t next_deadline_ns = INT64_MAX;
static uint64_t last_flag_word = 0;
/* ranks the core named in `suspected` during the current call (this
 * process observed them fail), for the verbose line of `failed` */
static bool *suspected_here = NULL;

/* queues, fed from any thread */
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond;
static bool accepting = false;
static opal_atomic_int32_t queued = 0;
static opal_atomic_int64_t queued_at_ns = 0; /* when queued last became set */
static ompi_comm_ft_inbox_item_t *inbox_head = NULL;
static ompi_comm_ft_inbox_item_t **inbox_tail = &inbox_head;
static rank_queue_t reports = {NULL, NULL, 0};     /* failures ULFM learnt, for the core */
static rank_queue_t to_ulfm = {NULL, NULL, 0};     /* failures the core found, for ULFM */
static opal_atomic_int32_t to_ulfm_queued = 0;
static uint32_t world_size = 0;

static bool use_thread = false;
static bool running = false;
/* when the application last ran opal_progress; half a period without it
 * means the application computes, and the thread then progresses itself
 * every half period */
static opal_atomic_int64_t app_progress_ns = 0;
static int64_t half_period_ns = 1;
static __thread bool on_driver_thread = false;
static volatile bool stopping = false;
static opal_thread_t driver_thread;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/*
 * The core's sink; runs inside a core call, core lock held.
 */

static bool rank_queue_push(rank_queue_t *queue, uint32_t rank, int kind)
{
    if (rank >= world_size) {
        return false;
    }
    if (queue->pending[rank]) {
        if (kind > queue->pending[rank]) {
            queue->pending[rank] = (uint8_t) kind;
        }
        return false;
    }
    queue->pending[rank] = (uint8_t) kind;
    queue->ranks[queue->count++] = rank;
    return true;
}

static bool rank_queue_pop(rank_queue_t *queue, uint32_t *rank, int *kind)
{
    if (0 == queue->count) {
        return false;
    }
    *rank = queue->ranks[--queue->count];
    *kind = queue->pending[*rank];
    queue->pending[*rank] = 0;
    return true;
}

static void on_failed(void *context, const uint32_t *ranks, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        bool observed = ranks[i] < world_size && suspected_here[ranks[i]];
        if (observed) {
            suspected_here[ranks[i]] = false;
        }
        ompi_comm_ft_detector_failed(ranks[i], observed);
        pthread_mutex_lock(&queue_lock);
        if (accepting && rank_queue_push(&to_ulfm, ranks[i], 1)) {
            to_ulfm_queued = 1;
        }
        pthread_mutex_unlock(&queue_lock);
    }
}

/* Fenced at once, even while the core holds the failures back from ULFM
 * (quorum wait): the runtime's word that the fenced process ended is what
 * releases them. */
static void on_suspected(void *context, const uint32_t *ranks, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        if (ranks[i] < world_size) {
            suspected_here[ranks[i]] = true;
            ompi_comm_ft_detector_fence(ranks[i]);
        }
    }
}

static void on_declared_dead_self(void *context, uint32_t told_by, const char *reason)
{
    ompi_comm_ft_detector_declared_dead_self(told_by, reason);
}

static void on_close_call(void *context, uint32_t emitter, int64_t silent_ns)
{
    ompi_comm_ft_detector_close_call(emitter, silent_ns);
}

/*
 * One step of the core, core lock held.
 */

static void drain_reports(int64_t now)
{
    uint32_t rank;
    int kind;

    for (;;) {
        pthread_mutex_lock(&queue_lock);
        if (!rank_queue_pop(&reports, &rank, &kind)) {
            pthread_mutex_unlock(&queue_lock);
            return;
        }
        pthread_mutex_unlock(&queue_lock);
        btl_ft_report_failure(core, now, rank, kind);
    }
}

static void drain_inbox(int64_t now)
{
    ompi_comm_ft_inbox_item_t *item, *next;

    pthread_mutex_lock(&queue_lock);
    item = inbox_head;
    inbox_head = NULL;
    inbox_tail = &inbox_head;
    queued = 0;
    pthread_mutex_unlock(&queue_lock);

    for (; NULL != item; item = next) {
        next = item->next;
        if (OMPI_FT_INBOX_MESSAGE == item->kind) {
            (void) btl_ft_on_message(core, now, item->from, item->bytes, item->length);
        } else if (OMPI_FT_INBOX_SHRUNK == item->kind) {
            btl_ft_on_shrunk(core, now, (const uint32_t *) item->bytes,
                             item->length / sizeof(uint32_t));
        }
        free(item);
    }
}

/* The core met an exception (it ran out of memory): it stays inert, and
 * this process goes on without a detector rather than stopping; its silence
 * then makes its observer declare it failed, which ULFM can recover from. */
static void report_core_failure(void)
{
    static bool reported = false;

    if (!reported) {
        reported = true;
        opal_output(0, "btl_ft: the failure detector stopped: %s; this process goes on without it "
                       "and will be declared failed by the others", btl_ft_failure(core));
    }
    next_deadline_ns = INT64_MAX;
}

/* The clock is read here, under the core lock: the core's calls see it
 * never go back, whichever thread steps. */
static void step_locked(void)
{
    int64_t now = now_ns();
    uint64_t word;

    drain_reports(now);
    drain_inbox(now);
    word = ompi_comm_ft_transport_read_flag();
    if (word != last_flag_word) {
        last_flag_word = word;
        btl_ft_on_heartbeat_word(core, now, word);
    }
    next_deadline_ns = btl_ft_tick(core, now);
    if (BTL_FT_BROKEN == next_deadline_ns) {
        report_core_failure();
    }
}

/*
 * Thread and progress-callback drivers.
 */

/* One step from a progress callback, unless another thread is stepping:
 * progress never waits for the core lock. 1 if it stepped. */
static int try_step(void)
{
    if (0 != pthread_mutex_trylock(&core_lock)) {
        return 0;
    }
    step_locked();
    pthread_mutex_unlock(&core_lock);
    return 1;
}

static void wait_until(int64_t deadline_ns)
{
    struct timespec ts = {.tv_sec = deadline_ns / NS_PER_S, .tv_nsec = deadline_ns % NS_PER_S};

    pthread_mutex_lock(&queue_lock);
    while (!stopping && 0 == queued) {
        if (ETIMEDOUT == pthread_cond_timedwait(&queue_cond, &queue_lock, &ts)) {
            break;
        }
    }
    pthread_mutex_unlock(&queue_lock);
}

/* A low-priority progress callback in the application's threads: stamps
 * the application's progress, and steps the core itself when the detector
 * thread is late by more than LATE_STEP_NS (the machine is loaded and the
 * thread waits for a CPU while the application runs in MPI): whichever
 * thread of the process runs first keeps its heartbeat on time. */
static int app_progress_cb(void)
{
    int64_t now;

    if (on_driver_thread) {
        return 0;
    }
    now = now_ns();
    app_progress_ns = now;
    if (now - LATE_STEP_NS < next_deadline_ns
        && (0 == queued || now - LATE_STEP_NS < queued_at_ns)) {
        return 0;
    }
    return try_step();
}

static void *driver_thread_main(opal_object_t *object)
{
    int64_t deadline, now;
    bool app_quiet;

    on_driver_thread = true;
    /* visible in top -H and /proc/<pid>/task/<tid>/comm, where its cost is measured */
    pthread_setname_np(pthread_self(), "btl_ft");
    while (!stopping) {
        /* progress before the step: after a long stall (the process was
         * stopped or starved), what peers sent meanwhile must reach the core
         * before its timers fire, or it would suspect its emitter before
         * learning that it was itself declared dead */
        app_quiet = now_ns() - app_progress_ns > half_period_ns;
        if (app_quiet) {
            opal_progress();
        }

        pthread_mutex_lock(&core_lock);
        step_locked();
        deadline = next_deadline_ns;
        pthread_mutex_unlock(&core_lock);

        now = now_ns();
        if (app_quiet && deadline > now + half_period_ns) {
            deadline = now + half_period_ns;
        }
        wait_until(deadline);
    }
    return OPAL_THREAD_CANCELLED;
}

/* Runs in whichever thread progresses; one rank per pop, so a nested
 * opal_progress inside ULFM's handling finds a consistent queue. */
static int deliver_to_ulfm_cb(void)
{
    uint32_t rank;
    int kind, delivered = 0;

    if (0 == to_ulfm_queued) {
        return 0;
    }
    for (;;) {
        pthread_mutex_lock(&queue_lock);
        if (!rank_queue_pop(&to_ulfm, &rank, &kind)) {
            to_ulfm_queued = 0;
            pthread_mutex_unlock(&queue_lock);
            return delivered;
        }
        pthread_mutex_unlock(&queue_lock);
        ompi_comm_ft_detector_tell_ulfm(rank);
        ++delivered;
    }
}

static int driver_progress_cb(void)
{
    int64_t now = now_ns();

    if (now < next_deadline_ns && 0 == queued
        && ompi_comm_ft_transport_read_flag() == last_flag_word) {
        return 0;
    }
    return try_step();
}

/*
 * Queues.
 */

static void wake_locked(void)
{
    if (0 == queued) {
        queued_at_ns = now_ns();
    }
    queued = 1;
    pthread_cond_signal(&queue_cond);
}

void ompi_comm_ft_driver_report(uint32_t rank, int kind)
{
    pthread_mutex_lock(&queue_lock);
    if (accepting && rank_queue_push(&reports, rank, kind)) {
        wake_locked();
    }
    pthread_mutex_unlock(&queue_lock);
}

void ompi_comm_ft_driver_deliver(int kind, uint32_t from, const void *bytes, size_t length)
{
    ompi_comm_ft_inbox_item_t *item;

    if (!accepting) {
        return; /* unlocked peek; rechecked below */
    }
    item = malloc(sizeof(*item) + length);
    if (OPAL_UNLIKELY(NULL == item)) {
        return; /* the transport may lose messages; the core tolerates it */
    }
    item->next = NULL;
    item->kind = kind;
    item->from = from;
    item->length = length;
    memcpy(item->bytes, bytes, length);

    pthread_mutex_lock(&queue_lock);
    if (!accepting) {
        pthread_mutex_unlock(&queue_lock);
        free(item);
        return;
    }
    *inbox_tail = item;
    inbox_tail = &item->next;
    wake_locked();
    pthread_mutex_unlock(&queue_lock);
}

static bool rank_queue_alloc(rank_queue_t *queue)
{
    queue->ranks = calloc(world_size, sizeof(*queue->ranks));
    queue->pending = calloc(world_size, sizeof(*queue->pending));
    queue->count = 0;
    return NULL != queue->ranks && NULL != queue->pending;
}

static void rank_queue_free(rank_queue_t *queue)
{
    free(queue->ranks);
    free(queue->pending);
    *queue = (rank_queue_t){NULL, NULL, 0};
}

static void free_rank_queues(void)
{
    rank_queue_free(&reports);
    rank_queue_free(&to_ulfm);
    free(suspected_here);
    suspected_here = NULL;
    world_size = 0;
}

static void discard_queues(void)
{
    ompi_comm_ft_inbox_item_t *item, *next;

    pthread_mutex_lock(&queue_lock);
    accepting = false;
    for (item = inbox_head; NULL != item; item = next) {
        next = item->next;
        free(item);
    }
    inbox_head = NULL;
    inbox_tail = &inbox_head;
    reports.count = 0;
    to_ulfm.count = 0;
    to_ulfm_queued = 0;
    queued = 0;
    pthread_mutex_unlock(&queue_lock);
}

/*
 * Lifecycle.
 */

int ompi_comm_ft_driver_init(const btl_ft_config_t *config, bool thread, char *error,
                             size_t error_length)
{
    btl_ft_callbacks_t callbacks = {
        .context = NULL,
        .put_heartbeat = ompi_comm_ft_transport_put_heartbeat,
        .send = ompi_comm_ft_transport_send,
        .observer_handle = ompi_comm_ft_transport_observer_handle,
        .failed = on_failed,
        .declared_dead_self = on_declared_dead_self,
        .suspected = on_suspected,
        .close_call = on_close_call,
        .local_state = ompi_comm_ft_witness_local_state,
    };
    pthread_condattr_t attr;

    world_size = config->size;
    suspected_here = calloc(world_size, sizeof(*suspected_here));
    if (!rank_queue_alloc(&reports) || !rank_queue_alloc(&to_ulfm) || NULL == suspected_here) {
        free_rank_queues();
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (0 != btl_ft_create(config, &callbacks, &core, error, error_length)) {
        free_rank_queues();
        return OMPI_ERR_BAD_PARAM;
    }
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&queue_cond, &attr);
    pthread_condattr_destroy(&attr);

    use_thread = thread;
    half_period_ns = config->period_ns / 2 > 0 ? config->period_ns / 2 : 1;
    last_flag_word = ompi_comm_ft_transport_read_flag();
    pthread_mutex_lock(&queue_lock);
    accepting = true; /* messages may arrive before start; the core keeps them */
    pthread_mutex_unlock(&queue_lock);
    return OMPI_SUCCESS;
}

int ompi_comm_ft_driver_start(void)
{
    int ret;

    if (NULL == core) {
        return OMPI_SUCCESS;
    }
    pthread_mutex_lock(&core_lock);
    (void) btl_ft_start(core, now_ns()); /* a failure here shows at the first tick */
    step_locked();
    pthread_mutex_unlock(&core_lock);

    stopping = false;
    if (OPAL_SUCCESS != (ret = opal_progress_register(deliver_to_ulfm_cb))) {
        return ret;
    }
    if (use_thread) {
        OBJ_CONSTRUCT(&driver_thread, opal_thread_t);
        driver_thread.t_run = driver_thread_main;
        driver_thread.t_arg = NULL;
        app_progress_ns = now_ns();
        opal_progress_register_lp(app_progress_cb);
        ret = opal_thread_start(&driver_thread);
    } else {
        ret = opal_progress_register(driver_progress_cb);
    }
    running = (OPAL_SUCCESS == ret);
    if (!running) {
        opal_progress_unregister(deliver_to_ulfm_cb);
    }
    return ret;
}

void ompi_comm_ft_driver_finalize(void)
{
    btl_ft_stats_t stats;
    void *thread_return;

    if (NULL == core) {
        return;
    }
    if (running) {
        if (use_thread) {
            pthread_mutex_lock(&queue_lock);
            stopping = true;
            pthread_cond_signal(&queue_cond);
            pthread_mutex_unlock(&queue_lock);
            opal_thread_join(&driver_thread, &thread_return);
            OBJ_DESTRUCT(&driver_thread);
            opal_progress_unregister(app_progress_cb);
        } else {
            opal_progress_unregister(driver_progress_cb);
        }
        opal_progress_unregister(deliver_to_ulfm_cb);
        running = false;
    }
    discard_queues();

    pthread_mutex_lock(&core_lock);
    (void) btl_ft_leave(core, now_ns()); /* leaving: nothing left to do on failure */
    btl_ft_get_stats(core, &stats);
    ompi_comm_ft_detector_report_counters(&stats);
    opal_output_verbose(10, ompi_ftmpi_output_handle,
                        "btl_ft: heartbeats sent %" PRIu64 " missed %" PRIu64 " suspicions %" PRIu64
                        " notices started %" PRIu64 " received %" PRIu64 " malformed %" PRIu64
                        " witnesses asked %" PRIu64 " answered %" PRIu64,
                        stats.heartbeats_sent, stats.heartbeats_missed, stats.suspicions,
                        stats.notices_started, stats.notices_received, stats.malformed_dropped,
                        stats.witness_queries, stats.witness_answers);
    btl_ft_destroy(core);
    core = NULL;
    pthread_mutex_unlock(&core_lock);

    pthread_cond_destroy(&queue_cond);
    free_rank_queues();
}
