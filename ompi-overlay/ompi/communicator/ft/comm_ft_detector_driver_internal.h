/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * What the driver's two files share: comm_ft_detector_driver.c owns the
 * core (its lock, its step, its lifecycle, where its conclusions go), and
 * comm_ft_detector_driver_loop.c decides when a step runs: on the detector
 * thread, or from the application's progress. Nothing else includes this
 * header.
 */

#ifndef OMPI_COMM_FT_DETECTOR_DRIVER_INTERNAL_H
#define OMPI_COMM_FT_DETECTOR_DRIVER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "opal/sys/atomic.h"
#include "opal/util/event.h"

#include "ompi/communicator/ft/comm_ft_detector.h"

typedef struct ompi_comm_ft_driver_t {
    ompi_comm_ft_driver_ops_t ops;
    uint32_t world_size;
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

    /* runs in the application's opal_progress when failures wait for ULFM;
     * to_ulfm_armed: activated and not yet run */
    opal_event_t to_ulfm_event;
    opal_atomic_int32_t to_ulfm_armed;
} ompi_comm_ft_driver_t;

extern ompi_comm_ft_driver_t ompi_comm_ft_driver_state;

/* comm_ft_detector_driver.c */
/* One step of the core; core lock held. */
void ompi_comm_ft_driver_step_locked(void);

/* comm_ft_detector_driver_loop.c */
/* At driver_init: what the loop needs of the configuration, and whether
 * the detector thread steps (else a progress callback). */
void ompi_comm_ft_driver_loop_init(int64_t period_ns, bool use_thread);
/* Steps from now on. */
int ompi_comm_ft_driver_loop_start(void);
void ompi_comm_ft_driver_loop_stop(void);
/* The detector thread's own opal_progress calls so far, for the counters. */
uint64_t ompi_comm_ft_driver_loop_progress_calls(void);

#endif /* OMPI_COMM_FT_DETECTOR_DRIVER_INTERNAL_H */
