/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * When the driver steps the core: on the detector thread, or, without it,
 * from an opal_progress callback whenever the application is inside MPI.
 *
 * The thread steps, then sleeps until the next deadline or a message. The
 * detector's own transport wakes it through its event fd and needs
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
 * of milliseconds.
 *
 * Rejected, for the BTL path: blocking in the BTLs' own event sources (tcp's sockets in the
 * sync event base, UCX's event fd). The sync event base may be looped by one
 * thread at a time and the application's opal_progress loops it; a thread
 * blocked in it would take the application's tcp progress away from it.
 */

#include "ompi_config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "opal/mca/threads/threads.h"
#include "opal/runtime/opal_progress.h"

#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/communicator/ft/comm_ft_detector_clock.h"
#include "ompi/communicator/ft/comm_ft_detector_driver_internal.h"
#include "ompi/constants.h"

/* how late the detector thread may be before an application thread in
 * opal_progress steps the core in its place */
#define LATE_STEP_NS 1000000LL
/* the application's progress reads the clock on every this many of its
 * low-priority callbacks (a power of 2): every 512th opal_progress call,
 * about 50 us apart in a waiting loop that does not yield; where each
 * call yields the CPU (4 ranks on 2 cores) often more than 250 us */
#define CLOCK_EVERY_LP_CALLS 64

/* the driver's state, shared with comm_ft_detector_driver.c */
static ompi_comm_ft_driver_t *const driver = &ompi_comm_ft_driver_state;

/* the loop's own, touched by no step */
static struct {
    bool use_thread;
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
} loop = {
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

/* One step from a progress callback, unless another thread is stepping:
 * progress never waits for the core lock. 1 if it stepped. */
static int try_step(void)
{
    if (0 != pthread_mutex_trylock(&driver->core_lock)) {
        return 0;
    }
    ompi_comm_ft_driver_step_locked();
    pthread_mutex_unlock(&driver->core_lock);
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

    if (loop.thread_progressing || 0 != (++loop.lp_calls & (CLOCK_EVERY_LP_CALLS - 1))) {
        return 0;
    }
    coarse = 0 < coarse_resolution_ns ? ompi_comm_ft_clock_ns(CLOCK_MONOTONIC_COARSE) : 0;
    if (!passed_since_coarse(coarse, later_by(driver->next_deadline_ns, LATE_STEP_NS))
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
    unsigned calls = __atomic_load_n(&loop.lp_calls, __ATOMIC_RELAXED);

    if (calls != loop.lp_calls_seen) {
        loop.lp_calls_seen = calls;
        loop.app_seen_ns = now;
    }
    return now - loop.app_seen_ns > loop.half_period_ns;
}

static void *driver_thread_main(opal_object_t *object)
{
    int64_t deadline, now;
    bool app_quiet, armed;

    while (!loop.stopping) {
        /* progress before the step: after a long stall (the process was
         * stopped or starved), what peers sent meanwhile must reach the core
         * before its timers fire, or it would suspect its emitter before
         * learning that it was itself declared dead */
        app_quiet = driver->ops.thread_progresses_opal && application_quiet(ompi_comm_ft_now_ns());
        if (app_quiet) {
            loop.thread_progressing = true;
            ++loop.thread_progress_calls;
            opal_progress();
            loop.thread_progressing = false;
        }

        pthread_mutex_lock(&driver->core_lock);
        ompi_comm_ft_driver_step_locked();
        /* a message that came after the step's progress: step again */
        armed = NULL == driver->ops.arm || driver->ops.arm();
        deadline = driver->next_deadline_ns;
        pthread_mutex_unlock(&driver->core_lock);
        if (__atomic_exchange_n(&driver->join_heard, false, __ATOMIC_ACQ_REL)) {
            /* the core's callback cannot leave the core */
            driver->ops.follow_join();
            continue;
        }
        if (!armed) {
            continue;
        }

        now = ompi_comm_ft_now_ns();
        if (app_quiet && deadline > now + loop.half_period_ns) {
            deadline = now + loop.half_period_ns;
        }
        ompi_comm_ft_queues_wait(deadline, &loop.stopping, driver->ops.ended);
    }
    return OPAL_THREAD_CANCELLED;
}

static int driver_progress_cb(void)
{
    if (!ompi_comm_ft_queues_pending() && driver->ops.read_flag() == driver->last_flag_word
        && !deadline_may_have_passed(driver->next_deadline_ns)) {
        return 0;
    }
    return try_step();
}

void ompi_comm_ft_driver_loop_init(int64_t period_ns, bool use_thread)
{
    loop.use_thread = use_thread;
    find_coarse_resolution();
    loop.half_period_ns = period_ns / 2 > 0 ? period_ns / 2 : 1;
}

int ompi_comm_ft_driver_loop_start(void)
{
    int ret;

    loop.stopping = false;
    if (!loop.use_thread) {
        return opal_progress_register(driver_progress_cb);
    }
    OBJ_CONSTRUCT(&loop.thread, opal_thread_t);
    loop.thread.t_run = driver_thread_main;
    loop.thread.t_arg = NULL;
    loop.app_seen_ns = ompi_comm_ft_now_ns();
    /* only the BTL path needs the application's progress */
    if (driver->ops.thread_progresses_opal
        && OPAL_SUCCESS != (ret = opal_progress_register_lp(app_progress_cb))) {
        return ret;
    }
    if (OPAL_SUCCESS != (ret = opal_thread_start(&loop.thread))) {
        if (driver->ops.thread_progresses_opal) {
            opal_progress_unregister(app_progress_cb);
        }
        return ret;
    }
    /* Named here, not by the thread: a witness must find it before it
     * first runs. In a run of two respawn jobs at once on 2 cores, a
     * new detector thread was runnable and never ran for over a
     * second; unnamed, its witness took it for no detector thread,
     * and the patience ended a healthy process. The name also shows
     * it in top -H and /proc/<pid>/task/<tid>/comm. */
    pthread_setname_np(loop.thread.t_handle, OMPI_COMM_FT_DETECTOR_THREAD_NAME);
    return OPAL_SUCCESS;
}

void ompi_comm_ft_driver_loop_stop(void)
{
    void *thread_return;

    if (!loop.use_thread) {
        opal_progress_unregister(driver_progress_cb);
        return;
    }
    ompi_comm_ft_queues_stop_waiting(&loop.stopping);
    opal_thread_join(&loop.thread, &thread_return);
    OBJ_DESTRUCT(&loop.thread);
    if (driver->ops.thread_progresses_opal) {
        opal_progress_unregister(app_progress_cb);
    }
}

uint64_t ompi_comm_ft_driver_loop_progress_calls(void)
{
    return loop.thread_progress_calls;
}
