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
 * lock. It owns the core's time (comm_ft_detector_clock.h) and the detector
 * thread. Other threads never touch the core: they queue
 * (comm_ft_detector_queues.c) messages from the AM callback and failures
 * learnt by ULFM (PMIx events, BTL errors).
 *
 * Each step: progress the transport, if it has its own (UCX), hand queued
 * messages, then queued failures, to the core, read the local heartbeat
 * flag, tick, then sleep until the next deadline or a message. The
 * detector's own transport wakes the thread through its event fd and needs
 * nothing else. On the BTL path, while the application computes outside MPI,
 * the thread also calls opal_progress before each step, so active messages
 * (and tcp's emulated put) still move;
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
 * Rejected, for the BTL path: blocking in the BTLs' own event sources (tcp's sockets in the
 * sync event base, UCX's event fd). The sync event base may be looped by one
 * thread at a time and the application's opal_progress loops it; a thread
 * blocked in it would take the application's tcp progress away from it.
 *
 * The core's conclusions reach ULFM from an event on OPAL's sync event base,
 * as the runtime's failure events do, never from the detector thread:
 * ULFM's failure handling (the agreement's bookkeeping above all) expects
 * to run where the BTL error callbacks run, inside opal_progress, and raced
 * the application's own agreement otherwise. The event is activated only
 * when there is a failure to hand over, so a healthy job's progress calls
 * pay nothing for it: over the detector's own transport the detector
 * registers no progress callback at all. Rejected: a low-priority progress
 * callback that looks at the queue (every 8th opal_progress call, 1.3 to
 * 4 instructions of every idle MPI_Test, 2 %).
 *
 * A JOIN (a connect this process took no part in: comm_ft_detector_join.c)
 * is followed by the detector thread itself, after the step that received
 * it: ompi_comm_ft_driver_replace puts a new core in the old one's place
 * without stopping the thread, whatever the application's threads do.
 *
 * Everything else the driver calls (the transport, the witness, where the
 * core's conclusions go) comes in through an ops table at init: this file
 * calls no other file of the shim.
 *
 * Rejected: calling the core straight from a transport callback or the ULFM hook.
 * Those run with BTL or PML locks held, while the core's callbacks send through
 * the BTL; queueing keeps the core lock outermost and free of lock-order cycles.
 */

#include "ompi_config.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "opal/mca/threads/threads.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/event.h"
#include "opal/sys/atomic.h"
#include "opal/util/output.h"

#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/communicator/ft/comm_ft_detector_clock.h"
#include "ompi/constants.h"

/* how late the detector thread may be before an application thread in
 * opal_progress steps the core in its place */
#define LATE_STEP_NS 1000000LL
/* the application's progress reads the clock on every this many of its
 * low-priority callbacks (a power of 2): every 512th opal_progress call,
 * about 50 us apart in a waiting loop that does not yield; where each
 * call yields the CPU (4 ranks on 2 cores) often more than 250 us */
#define CLOCK_EVERY_LP_CALLS 64

typedef struct ompi_comm_ft_driver_t {
    ompi_comm_ft_driver_ops_t ops;
    uint32_t world_size;
    bool use_thread;
    bool initialized; /* from driver_init to driver_finalize */
    bool running;

    /* the core and what only its lock guards */
    pthread_mutex_t core_lock;
    btl_ft_detector_t *core;
    btl_ft_callbacks_t callbacks; /* the core's, for the next one (driver_replace) */
    /* a JOIN arrived during the step: the thread follows it after */
    bool join_heard;
    int64_t next_deadline_ns; /* read unlocked by the progress callbacks: a hint */
    uint64_t last_flag_word;

    /* the thread */
    opal_thread_t thread;
    volatile bool stopping;
    /* set while the detector thread itself runs opal_progress, whose
     * callbacks must not take it for the application's */
    volatile bool thread_progressing;
    uint64_t thread_progress_calls; /* its opal_progress calls, for the counters */
    int64_t half_period_ns;
    /* app_progress_cb's calls (the BTL path): it reads the clock on every
     * CLOCK_EVERY_LP_CALLS-th, and the thread compares the count with the
     * one it saw last (racy across threads, as opal_progress's own count:
     * a miscount only moves the next reading) */
    unsigned lp_calls;
    /* the thread's last look at lp_calls, and when the count last moved:
     * half a period without a move means the application computes, and
     * the thread then progresses itself every half period. A count, not a
     * time stamp: an application waiting in MPI on an oversubscribed node
     * yields in every opal_progress call, 512 calls took more than half
     * of a 0.5 ms period, and the thread then progressed (and yielded)
     * beside it: 4226 times in 2 s at 4 ranks on 2 cores */
    unsigned lp_calls_seen;
    int64_t app_seen_ns;
    /* runs in the application's opal_progress when failures wait for ULFM;
     * to_ulfm_armed: activated and not yet run */
    opal_event_t to_ulfm_event;
    opal_atomic_int32_t to_ulfm_armed;
} ompi_comm_ft_driver_t;

static ompi_comm_ft_driver_t driver = {
    .core_lock = PTHREAD_MUTEX_INITIALIZER,
    .next_deadline_ns = INT64_MAX,
    .half_period_ns = 1,
};
/* CLOCK_MONOTONIC_COARSE's resolution (a jiffy); 0 until known, or if it has none */
static int64_t coarse_resolution_ns = 0;

/* Whether the clock may have reached the deadline. The progress callback asks
 * on every opal_progress call, millions of times a second while the
 * application waits in MPI: a CLOCK_MONOTONIC read costs 26 ns on this VM
 * (kvm-clock), a CLOCK_MONOTONIC_COARSE one 4 ns. The coarse clock lags the
 * precise one by less than its resolution, so the precise clock is read only
 * within one resolution of the deadline: the answer is the same. */
static bool passed_since_coarse(int64_t coarse_now, int64_t deadline)
{
    if (0 < coarse_resolution_ns && coarse_now + coarse_resolution_ns < deadline) {
        return false;
    }
    return ompi_comm_ft_now_ns() >= deadline;
}

static bool deadline_may_have_passed(int64_t deadline)
{
    int64_t coarse_now = 0 < coarse_resolution_ns ? ompi_comm_ft_clock_ns(CLOCK_MONOTONIC_COARSE) : 0;

    return passed_since_coarse(coarse_now, deadline);
}

/* deadline + delay, without overflowing `never` (INT64_MAX) */
static int64_t later_by(int64_t deadline, int64_t delay)
{
    return deadline > INT64_MAX - delay ? INT64_MAX : deadline + delay;
}

static void find_coarse_resolution(void)
{
    struct timespec ts;

    coarse_resolution_ns = 0;
    if (0 == clock_getres(CLOCK_MONOTONIC_COARSE, &ts)) {
        coarse_resolution_ns = ompi_comm_ft_timespec_ns(&ts);
    }
}

/*
 * The core's sink; runs inside a core call, core lock held.
 */

/* Makes the application's next opal_progress run the event (patch 0033's
 * way for the runtime's failure events), once until it has run. */
static void wake_ulfm(void)
{
    int32_t idle = 0;

    if (opal_atomic_compare_exchange_strong_32(&driver.to_ulfm_armed, &idle, 1)) {
        opal_progress_event_users_increment();
        opal_event_active(&driver.to_ulfm_event, OPAL_EV_READ, 1);
    }
}

static void on_failed(void *context, const uint32_t *ranks, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        driver.ops.failed(ranks[i], btl_ft_failure_kind(driver.core, ranks[i]));
        ompi_comm_ft_queues_to_ulfm(ranks[i]);
    }
    wake_ulfm();
}

/* Fenced at once, even while the core holds the failures back from ULFM
 * (quorum wait): the runtime's word that the fenced process ended is what
 * releases them. */
static void on_suspected(void *context, const uint32_t *ranks, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        if (ranks[i] < driver.world_size) {
            driver.ops.suspected(ranks[i]);
        }
    }
}

static void on_declared_dead_self(void *context, uint32_t told_by, const char *reason)
{
    driver.ops.declared_dead_self(told_by, reason);
}

static void on_close_call(void *context, uint32_t emitter, int64_t silent_ns)
{
    driver.ops.close_call(emitter, silent_ns);
}

static void on_joined(void *context, uint32_t from, uint32_t epoch, const btl_ft_job_extent_t *jobs,
                      size_t job_count, const btl_ft_known_failure_t *known, size_t known_count)
{
    driver.ops.joined(context, from, epoch, jobs, job_count, known, known_count);
    __atomic_store_n(&driver.join_heard, true, __ATOMIC_RELEASE);
}

void ompi_comm_ft_driver_recall_join(void)
{
    __atomic_store_n(&driver.join_heard, true, __ATOMIC_RELEASE);
}

/*
 * One step of the core, core lock held.
 */

/* Reports queued together go to the core together, so that one notice
 * names them all: node-mates killed at once are found in one look. */
#define REPORT_BATCH 64

static void drain_reports(int64_t now)
{
    uint32_t ranks[REPORT_BATCH];
    int kinds[REPORT_BATCH];
    size_t count;

    do {
        count = 0;
        while (count < REPORT_BATCH && ompi_comm_ft_queues_pop_report(&ranks[count], &kinds[count])) {
            ++count;
        }
        if (0 < count) {
            btl_ft_report_failures(driver.core, now, ranks, kinds, count);
        }
    } while (REPORT_BATCH == count);
}

static void drain_inbox(int64_t now)
{
    ompi_comm_ft_inbox_item_t *item, *next;

    for (item = ompi_comm_ft_queues_take_inbox(); NULL != item; item = next) {
        next = item->next;
        if (OMPI_COMM_FT_INBOX_MESSAGE == item->kind) {
            (void) btl_ft_on_message(driver.core, now, item->from, item->bytes, item->length);
        } else {
            btl_ft_on_shrunk(driver.core, now, (const uint32_t *) item->bytes,
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
        ompi_comm_ft_log(0, "btl_ft: the failure detector stopped: %s; this process goes on "
                         "without it and will be declared failed by the others",
                         btl_ft_failure(driver.core));
    }
    driver.next_deadline_ns = INT64_MAX;
}

/* The clock is read here, under the core lock: the core's calls see it
 * never go back, whichever thread steps. */
static void step_locked(void)
{
    int64_t now;
    uint64_t word;

    if (NULL != driver.ops.progress) {
        driver.ops.progress(); /* its messages join the inbox */
    }
    if (NULL == driver.core) { /* a join could not start the next one */
        ompi_comm_ft_queues_drop_inbox();
        driver.next_deadline_ns = INT64_MAX;
        return;
    }
    now = ompi_comm_ft_now_ns();
    /* Messages first: a peer's LEAVE arrives before the transport error
     * that its exit causes here (a send to it finds the connection closed),
     * and a departed peer must not be reported as failed. */
    drain_inbox(now);
    drain_reports(now);
    word = driver.ops.read_flag();
    if (word != driver.last_flag_word) {
        driver.last_flag_word = word;
        btl_ft_on_heartbeat_word(driver.core, now, word);
    }
    driver.next_deadline_ns = btl_ft_tick(driver.core, now);
    if (BTL_FT_BROKEN == driver.next_deadline_ns) {
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
    if (0 != pthread_mutex_trylock(&driver.core_lock)) {
        return 0;
    }
    step_locked();
    pthread_mutex_unlock(&driver.core_lock);
    return 1;
}

/* The BTL path with the thread: the one low-priority progress callback
 * (every 8th opal_progress call). It stamps the application's
 * progress, and steps the core itself when the detector thread is late by
 * more than LATE_STEP_NS (the machine is loaded and the thread waits for a
 * CPU while the application runs in MPI): whichever thread of the process
 * runs first keeps its heartbeat on time. It runs millions of times a
 * second while the application waits in MPI, so it reads a clock only on
 * every CLOCK_EVERY_LP_CALLS-th call (a clock read on every call was a few
 * percent of an idle MPI_Test under callgrind), the coarse one (4 ns here)
 * and the precise one (26 ns) only near a deadline, and needs no
 * thread-local flag (a __tls_get_addr call in a shared library). */
static int app_progress_cb(void)
{
    int64_t coarse;

    if (driver.thread_progressing || 0 != (++driver.lp_calls & (CLOCK_EVERY_LP_CALLS - 1))) {
        return 0;
    }
    coarse = 0 < coarse_resolution_ns ? ompi_comm_ft_clock_ns(CLOCK_MONOTONIC_COARSE) : 0;
    if (!passed_since_coarse(coarse, later_by(driver.next_deadline_ns, LATE_STEP_NS))
        && (!ompi_comm_ft_queues_pending()
            || !passed_since_coarse(coarse, later_by(ompi_comm_ft_queues_pending_since(), LATE_STEP_NS)))) {
        return 0;
    }
    return try_step();
}

/* Whether the application ran no opal_progress for half a period, as the
 * detector thread sees it (it alone calls this). */
static bool application_quiet(int64_t now)
{
    unsigned calls = __atomic_load_n(&driver.lp_calls, __ATOMIC_RELAXED);

    if (calls != driver.lp_calls_seen) {
        driver.lp_calls_seen = calls;
        driver.app_seen_ns = now;
    }
    return now - driver.app_seen_ns > driver.half_period_ns;
}

static void *driver_thread_main(opal_object_t *object)
{
    int64_t deadline, now;
    bool app_quiet, armed;

    while (!driver.stopping) {
        /* progress before the step: after a long stall (the process was
         * stopped or starved), what peers sent meanwhile must reach the core
         * before its timers fire, or it would suspect its emitter before
         * learning that it was itself declared dead */
        app_quiet = driver.ops.thread_progresses_opal && application_quiet(ompi_comm_ft_now_ns());
        if (app_quiet) {
            driver.thread_progressing = true;
            ++driver.thread_progress_calls;
            opal_progress();
            driver.thread_progressing = false;
        }

        pthread_mutex_lock(&driver.core_lock);
        step_locked();
        /* a message that came after the step's progress: step again */
        armed = NULL == driver.ops.arm || driver.ops.arm();
        deadline = driver.next_deadline_ns;
        pthread_mutex_unlock(&driver.core_lock);
        if (__atomic_exchange_n(&driver.join_heard, false, __ATOMIC_ACQ_REL)) {
            /* the core's callback cannot leave the core */
            driver.ops.follow_join();
            continue;
        }
        if (!armed) {
            continue;
        }

        now = ompi_comm_ft_now_ns();
        if (app_quiet && deadline > now + driver.half_period_ns) {
            deadline = now + driver.half_period_ns;
        }
        ompi_comm_ft_queues_wait(deadline, &driver.stopping, driver.ops.ended);
    }
    return OPAL_THREAD_CANCELLED;
}

/* The event: runs in the application's opal_progress (opal_progress_events);
 * one rank per pop, so a nested opal_progress inside ULFM's handling finds
 * a consistent queue. Disarmed before the queue is emptied: a failure
 * queued meanwhile arms it again, or is popped below. */
static void to_ulfm_event_cb(int fd, short flags, void *context)
{
    uint32_t rank;

    driver.to_ulfm_armed = 0;
    opal_atomic_mb();
    opal_progress_event_users_decrement();
    driver.ops.pin(); /* a rank popped is named in the same numbering */
    while (ompi_comm_ft_queues_pop_to_ulfm(&rank)) {
        driver.ops.tell_ulfm(rank);
    }
    driver.ops.unpin();
}

static int driver_progress_cb(void)
{
    if (!ompi_comm_ft_queues_pending() && driver.ops.read_flag() == driver.last_flag_word
        && !deadline_may_have_passed(driver.next_deadline_ns)) {
        return 0;
    }
    return try_step();
}

/*
 * Entry points for other threads: they only queue.
 */

void ompi_comm_ft_driver_report(uint32_t rank, int kind)
{
    ompi_comm_ft_queues_report(rank, kind);
}

void ompi_comm_ft_driver_deliver(uint32_t from, const void *bytes, size_t length)
{
    ompi_comm_ft_queues_inbox_push(OMPI_COMM_FT_INBOX_MESSAGE, from, bytes, length, true);
}

void ompi_comm_ft_driver_deliver_in_step(uint32_t from, const void *bytes, size_t length)
{
    ompi_comm_ft_queues_inbox_push(OMPI_COMM_FT_INBOX_MESSAGE, from, bytes, length, false);
}

bool ompi_comm_ft_driver_watch(int pidfd, uint32_t rank)
{
    return ompi_comm_ft_queues_watch(pidfd, rank);
}

/* Queued like a message, so the core sees it in order with what arrived before. */
void ompi_comm_ft_driver_shrunk(const uint32_t *members, size_t count)
{
    ompi_comm_ft_queues_inbox_push(OMPI_COMM_FT_INBOX_SHRUNK, driver.world_size, members,
                                   count * sizeof(*members), true);
}

/*
 * Lifecycle.
 */

int ompi_comm_ft_driver_init(const btl_ft_config_t *config, const ompi_comm_ft_driver_ops_t *ops,
                             bool use_thread, char *error, size_t error_length)
{
    btl_ft_callbacks_t callbacks = {
        .context = NULL,
        .put_heartbeat = ops->put_heartbeat,
        .send = ops->send,
        .observer_handle = ops->observer_handle,
        .failed = on_failed,
        .declared_dead_self = on_declared_dead_self,
        .suspected = on_suspected,
        .close_call = on_close_call,
        .local_state = ops->local_state,
        .joined = NULL != ops->joined && NULL != ops->follow_join ? on_joined : NULL,
    };
    int ret;

    driver.ops = *ops;
    driver.callbacks = callbacks;
    driver.join_heard = false;
    driver.world_size = config->size;
    if (0 != btl_ft_create(config, &callbacks, &driver.core, error, error_length)) {
        return OMPI_ERR_BAD_PARAM;
    }
    if (OMPI_SUCCESS != (ret = ompi_comm_ft_queues_init(config->size))
        || (0 <= ops->wait_fd && !ompi_comm_ft_queues_watch_wakeup(ops->wait_fd))) {
        ompi_comm_ft_queues_fini();
        btl_ft_destroy(driver.core);
        driver.core = NULL;
        return OMPI_SUCCESS == ret ? OMPI_ERR_OUT_OF_RESOURCE : ret;
    }
    driver.use_thread = use_thread;
    find_coarse_resolution();
    driver.half_period_ns = config->period_ns / 2 > 0 ? config->period_ns / 2 : 1;
    driver.last_flag_word = driver.ops.read_flag();
    opal_event_set(opal_sync_event_base, &driver.to_ulfm_event, -1, OPAL_EV_READ, to_ulfm_event_cb,
                   NULL);
    driver.initialized = true;
    return OMPI_SUCCESS;
}

int ompi_comm_ft_driver_start(void)
{
    int ret;

    if (NULL == driver.core) {
        return OMPI_SUCCESS;
    }
    pthread_mutex_lock(&driver.core_lock);
    /* a failure here shows at the first tick */
    (void) btl_ft_start(driver.core, ompi_comm_ft_now_ns());
    step_locked();
    pthread_mutex_unlock(&driver.core_lock);

    driver.stopping = false;
    if (driver.use_thread) {
        OBJ_CONSTRUCT(&driver.thread, opal_thread_t);
        driver.thread.t_run = driver_thread_main;
        driver.thread.t_arg = NULL;
        driver.app_seen_ns = ompi_comm_ft_now_ns();
        /* only the BTL path needs the application's progress */
        if (driver.ops.thread_progresses_opal
            && OPAL_SUCCESS != (ret = opal_progress_register_lp(app_progress_cb))) {
            return ret;
        }
        if (OPAL_SUCCESS != (ret = opal_thread_start(&driver.thread))
            && driver.ops.thread_progresses_opal) {
            opal_progress_unregister(app_progress_cb);
        }
        /* Named here, not by the thread: a witness must find it before it
         * first runs. In a run of two respawn jobs at once on 2 cores, a
         * new detector thread was runnable and never ran for over a
         * second; unnamed, its witness took it for no detector thread,
         * and the patience ended a healthy process. The name also shows
         * it in top -H and /proc/<pid>/task/<tid>/comm. */
        if (OPAL_SUCCESS == ret) {
            pthread_setname_np(driver.thread.t_handle, OMPI_COMM_FT_DETECTOR_THREAD_NAME);
        }
    } else {
        ret = opal_progress_register(driver_progress_cb);
    }
    driver.running = (OPAL_SUCCESS == ret);
    return ret;
}

static void stop_driving(void)
{
    void *thread_return;

    if (driver.use_thread) {
        ompi_comm_ft_queues_stop_waiting(&driver.stopping);
        opal_thread_join(&driver.thread, &thread_return);
        OBJ_DESTRUCT(&driver.thread);
        if (driver.ops.thread_progresses_opal) {
            opal_progress_unregister(app_progress_cb);
        }
    } else {
        opal_progress_unregister(driver_progress_cb);
    }
    driver.running = false;
}

/* For MPI_T: how each rank's failure became known (enum btl_ft_failure_kind),
 * 0 for a rank not known failed. From the application's thread, never from
 * within the core. */
int ompi_comm_ft_driver_failure_kinds(int *kinds, uint32_t count)
{
    int ret = OMPI_SUCCESS;

    pthread_mutex_lock(&driver.core_lock);
    if (NULL == driver.core) {
        ret = OMPI_ERR_NOT_AVAILABLE; /* after MPI_Finalize */
    } else {
        for (uint32_t rank = 0; rank < count; ++rank) {
            kinds[rank] = rank < driver.world_size ? btl_ft_failure_kind(driver.core, rank) : 0;
        }
    }
    pthread_mutex_unlock(&driver.core_lock);
    return ret;
}

/* The core leaves (btl_ft_leave), says its counters and is gone; core
 * lock held. */
static void retire_core_locked(const uint32_t *leaving_too, size_t leaving_count)
{
    btl_ft_stats_t stats;

    /* nothing left to do on failure */
    (void) btl_ft_leave(driver.core, ompi_comm_ft_now_ns(), leaving_too, leaving_count);
    btl_ft_get_stats(driver.core, &stats);
    driver.ops.report_counters(&stats, driver.thread_progress_calls);
    btl_ft_destroy(driver.core);
    driver.core = NULL;
}

int ompi_comm_ft_driver_replace(const btl_ft_config_t *config, int (*move_transport)(void *arg), void *arg,
                                char *error, size_t error_length)
{
    int ret;

    pthread_mutex_lock(&driver.core_lock);
    if (NULL != driver.core) {
        retire_core_locked(NULL, 0);
    }
    ret = move_transport(arg);
    /* the old union's ranks, but JOINs: what came before the transport
     * moved (a message of the new union waits in it for the next step) */
    ompi_comm_ft_queues_drop_inbox();
    if (OMPI_SUCCESS == ret) {
        ret = ompi_comm_ft_queues_grow(config->size);
    }
    if (OMPI_SUCCESS == ret && 0 != btl_ft_create(config, &driver.callbacks, &driver.core, error, error_length)) {
        driver.core = NULL;
        ret = OMPI_ERR_BAD_PARAM;
    }
    if (OMPI_SUCCESS == ret) {
        driver.world_size = config->size;
        /* a failure here shows at the first tick */
        (void) btl_ft_start(driver.core, ompi_comm_ft_now_ns());
        step_locked();
    } else {
        driver.next_deadline_ns = INT64_MAX;
    }
    pthread_mutex_unlock(&driver.core_lock);
    return ret;
}

static bool announce_locked(const ompi_comm_ft_join_news_t *news)
{
    return 0 <= btl_ft_announce_join(driver.core, ompi_comm_ft_now_ns(), news->epoch, news->jobs,
                                     news->job_count, news->known, news->known_count, news->to,
                                     news->to_count);
}

int ompi_comm_ft_driver_announce(const ompi_comm_ft_join_news_t *news)
{
    bool sent;

    pthread_mutex_lock(&driver.core_lock);
    sent = NULL != driver.core && announce_locked(news);
    pthread_mutex_unlock(&driver.core_lock);
    return sent ? OMPI_SUCCESS : OMPI_ERROR;
}

void ompi_comm_ft_driver_finalize(bool hand_over, const uint32_t *leaving_too, size_t leaving_count,
                                  const ompi_comm_ft_join_news_t *announce)
{
    uint32_t rank;

    if (!driver.initialized) {
        return;
    }
    driver.initialized = false;
    if (driver.running) {
        stop_driving();
    }

    pthread_mutex_lock(&driver.core_lock);
    if (NULL != driver.core) {
        /* What arrived reaches the core before it leaves: a neighbour's
         * LEAVE, which this one's LEAVE then passes on (else the next
         * observer mends onto the neighbour, gone, and takes it for
         * failed), and at a join a JOIN of another connect made at once.
         * At a join, the failures ULFM reported too, and their conclusions
         * ULFM: the queues are handed over below. */
        if (NULL != driver.ops.progress) {
            driver.ops.progress();
        }
        drain_inbox(ompi_comm_ft_now_ns());
        if (hand_over) {
            drain_reports(ompi_comm_ft_now_ns());
        }
    }
    if (!hand_over) {
        ompi_comm_ft_queues_close();
    }
    if (NULL == driver.core) { /* a join could not start the next one */
        pthread_mutex_unlock(&driver.core_lock);
        goto no_core;
    }
    if (NULL != announce && !announce_locked(announce)) {
        ompi_comm_ft_log(0, "btl_ft: could not tell the processes left out of the connect where the "
                         "union went: the others will take them for failed");
    }
    retire_core_locked(leaving_too, leaving_count);
    pthread_mutex_unlock(&driver.core_lock);

no_core:
    opal_event_del(&driver.to_ulfm_event);
    if (driver.to_ulfm_armed) { /* activated, never run */
        driver.to_ulfm_armed = 0;
        opal_progress_event_users_decrement();
    }
    /* the next detector never reports what it starts knowing: ULFM learns
     * it now, on this (the application's) thread */
    while (hand_over && ompi_comm_ft_queues_pop_to_ulfm(&rank)) {
        driver.ops.tell_ulfm(rank);
    }
    ompi_comm_ft_queues_fini();
}
