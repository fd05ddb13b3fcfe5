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
 * lock. It owns the core's time (comm_ft_detector_clock.h). Other threads
 * never touch the core: they queue
 * (comm_ft_detector_queues.c) messages from the AM callback and failures
 * learnt by ULFM (PMIx events, BTL errors). When a step runs, on the
 * detector thread or from the application's progress, is
 * comm_ft_detector_driver_loop.c's to decide.
 *
 * Each step: progress the transport, if it has its own (UCX), hand queued
 * messages, then queued failures, to the core, read the local heartbeat
 * flag, tick.
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
 * core's conclusions go) comes in through an ops table at init: the driver's
 * two files call no other file of the shim but its queues and the log.
 *
 * Rejected: calling the core straight from a transport callback or the ULFM hook.
 * Those run with BTL or PML locks held, while the core's callbacks send through
 * the BTL; queueing keeps the core lock outermost and free of lock-order cycles.
 */

#include "ompi_config.h"

#include <pthread.h>
#include <stdlib.h>

#include "opal/runtime/opal_progress.h"
#include "opal/util/event.h"
#include "opal/sys/atomic.h"

#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/communicator/ft/comm_ft_detector_clock.h"
#include "ompi/communicator/ft/comm_ft_detector_driver_internal.h"
#include "ompi/constants.h"

ompi_comm_ft_driver_t ompi_comm_ft_driver_state = {
    .core_lock = PTHREAD_MUTEX_INITIALIZER,
    .next_deadline_ns = INT64_MAX,
};
static ompi_comm_ft_driver_t *const driver = &ompi_comm_ft_driver_state;

/*
 * The core's sink; runs inside a core call, core lock held.
 */

/* Makes the application's next opal_progress run the event (patch 0033's
 * way for the runtime's failure events), once until it has run. */
static void wake_ulfm(void)
{
    int32_t idle = 0;

    if (opal_atomic_compare_exchange_strong_32(&driver->to_ulfm_armed, &idle, 1)) {
        opal_progress_event_users_increment();
        opal_event_active(&driver->to_ulfm_event, OPAL_EV_READ, 1);
    }
}

static void on_failed(void *context, const uint32_t *ranks, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        driver->ops.failed(ranks[i], btl_ft_failure_kind(driver->core, ranks[i]));
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
        if (ranks[i] < driver->world_size) {
            driver->ops.suspected(ranks[i]);
        }
    }
}

static void on_declared_dead_self(void *context, uint32_t told_by, const char *reason)
{
    driver->ops.declared_dead_self(told_by, reason);
}

static void on_close_call(void *context, uint32_t emitter, int64_t silent_ns)
{
    driver->ops.close_call(emitter, silent_ns);
}

static void on_joined(void *context, uint32_t from, uint32_t epoch, const btl_ft_job_extent_t *jobs,
                      size_t job_count, const btl_ft_known_failure_t *known, size_t known_count)
{
    driver->ops.joined(context, from, epoch, jobs, job_count, known, known_count);
    __atomic_store_n(&driver->join_heard, true, __ATOMIC_RELEASE);
}

void ompi_comm_ft_driver_recall_join(void)
{
    __atomic_store_n(&driver->join_heard, true, __ATOMIC_RELEASE);
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
            btl_ft_report_failures(driver->core, now, ranks, kinds, count);
        }
    } while (REPORT_BATCH == count);
}

static void drain_inbox(int64_t now)
{
    ompi_comm_ft_inbox_item_t *item, *next;

    for (item = ompi_comm_ft_queues_take_inbox(); NULL != item; item = next) {
        next = item->next;
        if (OMPI_COMM_FT_INBOX_MESSAGE == item->kind) {
            (void) btl_ft_on_message(driver->core, now, item->from, item->bytes, item->length);
        } else {
            btl_ft_on_shrunk(driver->core, now, (const uint32_t *) item->bytes,
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
                         btl_ft_failure(driver->core));
    }
    driver->next_deadline_ns = INT64_MAX;
}

/* The clock is read here, under the core lock: the core's calls see it
 * never go back, whichever thread steps. */
void ompi_comm_ft_driver_step_locked(void)
{
    int64_t now;
    uint64_t word;

    if (NULL != driver->ops.progress) {
        driver->ops.progress(); /* its messages join the inbox */
    }
    if (NULL == driver->core) { /* a join could not start the next one */
        ompi_comm_ft_queues_drop_inbox();
        driver->next_deadline_ns = INT64_MAX;
        return;
    }
    now = ompi_comm_ft_now_ns();
    /* Messages first: a peer's LEAVE arrives before the transport error
     * that its exit causes here (a send to it finds the connection closed),
     * and a departed peer must not be reported as failed. */
    drain_inbox(now);
    drain_reports(now);
    word = driver->ops.read_flag();
    if (word != driver->last_flag_word) {
        driver->last_flag_word = word;
        btl_ft_on_heartbeat_word(driver->core, now, word);
    }
    driver->next_deadline_ns = btl_ft_tick(driver->core, now);
    if (BTL_FT_BROKEN == driver->next_deadline_ns) {
        report_core_failure();
    }
}

/* The event: runs in the application's opal_progress (opal_progress_events);
 * one rank per pop, so a nested opal_progress inside ULFM's handling finds
 * a consistent queue. Disarmed before the queue is emptied: a failure
 * queued meanwhile arms it again, or is popped below. */
static void to_ulfm_event_cb(int fd, short flags, void *context)
{
    uint32_t rank;

    driver->to_ulfm_armed = 0;
    opal_atomic_mb();
    opal_progress_event_users_decrement();
    driver->ops.pin(); /* a rank popped is named in the same numbering */
    while (ompi_comm_ft_queues_pop_to_ulfm(&rank)) {
        driver->ops.tell_ulfm(rank);
    }
    driver->ops.unpin();
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
    ompi_comm_ft_queues_inbox_push(OMPI_COMM_FT_INBOX_SHRUNK, driver->world_size, members,
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

    driver->ops = *ops;
    driver->callbacks = callbacks;
    driver->join_heard = false;
    driver->world_size = config->size;
    if (0 != btl_ft_create(config, &callbacks, &driver->core, error, error_length)) {
        return OMPI_ERR_BAD_PARAM;
    }
    if (OMPI_SUCCESS != (ret = ompi_comm_ft_queues_init(config->size))
        || (0 <= ops->wait_fd && !ompi_comm_ft_queues_watch_wakeup(ops->wait_fd))) {
        ompi_comm_ft_queues_fini();
        btl_ft_destroy(driver->core);
        driver->core = NULL;
        return OMPI_SUCCESS == ret ? OMPI_ERR_OUT_OF_RESOURCE : ret;
    }
    ompi_comm_ft_driver_loop_init(config->period_ns, use_thread);
    driver->last_flag_word = driver->ops.read_flag();
    opal_event_set(opal_sync_event_base, &driver->to_ulfm_event, -1, OPAL_EV_READ, to_ulfm_event_cb,
                   NULL);
    driver->initialized = true;
    return OMPI_SUCCESS;
}

int ompi_comm_ft_driver_start(void)
{
    int ret;

    if (NULL == driver->core) {
        return OMPI_SUCCESS;
    }
    pthread_mutex_lock(&driver->core_lock);
    /* a failure here shows at the first tick */
    (void) btl_ft_start(driver->core, ompi_comm_ft_now_ns());
    ompi_comm_ft_driver_step_locked();
    pthread_mutex_unlock(&driver->core_lock);

    ret = ompi_comm_ft_driver_loop_start();
    driver->running = (OPAL_SUCCESS == ret);
    return ret;
}

/* For MPI_T: how each rank's failure became known (enum btl_ft_failure_kind),
 * 0 for a rank not known failed. From the application's thread, never from
 * within the core. */
int ompi_comm_ft_driver_failure_kinds(int *kinds, uint32_t count)
{
    int ret = OMPI_SUCCESS;

    pthread_mutex_lock(&driver->core_lock);
    if (NULL == driver->core) {
        ret = OMPI_ERR_NOT_AVAILABLE; /* after MPI_Finalize */
    } else {
        for (uint32_t rank = 0; rank < count; ++rank) {
            kinds[rank] = rank < driver->world_size ? btl_ft_failure_kind(driver->core, rank) : 0;
        }
    }
    pthread_mutex_unlock(&driver->core_lock);
    return ret;
}

/* The core leaves (btl_ft_leave), says its counters and is gone; core
 * lock held. */
static void retire_core_locked(const uint32_t *leaving_too, size_t leaving_count)
{
    btl_ft_stats_t stats;

    /* nothing left to do on failure */
    (void) btl_ft_leave(driver->core, ompi_comm_ft_now_ns(), leaving_too, leaving_count);
    btl_ft_get_stats(driver->core, &stats);
    driver->ops.report_counters(&stats, ompi_comm_ft_driver_loop_progress_calls());
    btl_ft_destroy(driver->core);
    driver->core = NULL;
}

int ompi_comm_ft_driver_replace(const btl_ft_config_t *config, int (*move_transport)(void *arg), void *arg,
                                char *error, size_t error_length)
{
    int ret;

    pthread_mutex_lock(&driver->core_lock);
    if (NULL != driver->core) {
        retire_core_locked(NULL, 0);
    }
    ret = move_transport(arg);
    /* the old union's ranks, but JOINs: what came before the transport
     * moved (a message of the new union waits in it for the next step) */
    ompi_comm_ft_queues_drop_inbox();
    if (OMPI_SUCCESS == ret) {
        ret = ompi_comm_ft_queues_grow(config->size);
    }
    if (OMPI_SUCCESS == ret && 0 != btl_ft_create(config, &driver->callbacks, &driver->core, error, error_length)) {
        driver->core = NULL;
        ret = OMPI_ERR_BAD_PARAM;
    }
    if (OMPI_SUCCESS == ret) {
        driver->world_size = config->size;
        /* a failure here shows at the first tick */
        (void) btl_ft_start(driver->core, ompi_comm_ft_now_ns());
        ompi_comm_ft_driver_step_locked();
    } else {
        driver->next_deadline_ns = INT64_MAX;
    }
    pthread_mutex_unlock(&driver->core_lock);
    return ret;
}

static bool announce_locked(const ompi_comm_ft_join_news_t *news)
{
    return 0 <= btl_ft_announce_join(driver->core, ompi_comm_ft_now_ns(), news->epoch, news->jobs,
                                     news->job_count, news->known, news->known_count, news->to,
                                     news->to_count);
}

int ompi_comm_ft_driver_announce(const ompi_comm_ft_join_news_t *news)
{
    bool sent;

    pthread_mutex_lock(&driver->core_lock);
    sent = NULL != driver->core && announce_locked(news);
    pthread_mutex_unlock(&driver->core_lock);
    return sent ? OMPI_SUCCESS : OMPI_ERROR;
}

void ompi_comm_ft_driver_finalize(bool hand_over, const uint32_t *leaving_too, size_t leaving_count,
                                  const ompi_comm_ft_join_news_t *announce)
{
    uint32_t rank;

    if (!driver->initialized) {
        return;
    }
    driver->initialized = false;
    if (driver->running) {
        ompi_comm_ft_driver_loop_stop();
        driver->running = false;
    }

    pthread_mutex_lock(&driver->core_lock);
    if (NULL != driver->core) {
        /* What arrived reaches the core before it leaves: a neighbour's
         * LEAVE, which this one's LEAVE then passes on (else the next
         * observer mends onto the neighbour, gone, and takes it for
         * failed), and at a join a JOIN of another connect made at once.
         * At a join, the failures ULFM reported too, and their conclusions
         * ULFM: the queues are handed over below. */
        if (NULL != driver->ops.progress) {
            driver->ops.progress();
        }
        drain_inbox(ompi_comm_ft_now_ns());
        if (hand_over) {
            drain_reports(ompi_comm_ft_now_ns());
        }
    }
    if (!hand_over) {
        ompi_comm_ft_queues_close();
    }
    if (NULL == driver->core) { /* a join could not start the next one */
        pthread_mutex_unlock(&driver->core_lock);
        goto no_core;
    }
    if (NULL != announce && !announce_locked(announce)) {
        ompi_comm_ft_log(0, "btl_ft: could not tell the processes left out of the connect where the "
                         "union went: the others will take them for failed");
    }
    retire_core_locked(leaving_too, leaving_count);
    pthread_mutex_unlock(&driver->core_lock);

no_core:
    opal_event_del(&driver->to_ulfm_event);
    if (driver->to_ulfm_armed) { /* activated, never run */
        driver->to_ulfm_armed = 0;
        opal_progress_event_users_decrement();
    }
    /* the next detector never reports what it starts knowing: ULFM learns
     * it now, on this (the application's) thread */
    while (hand_over && ompi_comm_ft_queues_pop_to_ulfm(&rank)) {
        driver->ops.tell_ulfm(rank);
    }
    ompi_comm_ft_queues_fini();
}
