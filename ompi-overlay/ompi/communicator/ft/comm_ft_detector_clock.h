/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The detector's one clock: CLOCK_MONOTONIC, in nanoseconds. The core's
 * time, the driver's deadlines, the queues' time stamps and the transport's
 * waits are compared with each other, so they are all read here.
 */

#ifndef OMPI_COMM_FT_DETECTOR_CLOCK_H
#define OMPI_COMM_FT_DETECTOR_CLOCK_H

#include <stdint.h>
#include <time.h>

#define OMPI_COMM_FT_NS_PER_S 1000000000LL

static inline int64_t ompi_comm_ft_timespec_ns(const struct timespec *ts)
{
    return (int64_t) ts->tv_sec * OMPI_COMM_FT_NS_PER_S + ts->tv_nsec;
}

/* Any clock, for the driver's coarse reads; the others want now_ns. */
static inline int64_t ompi_comm_ft_clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ompi_comm_ft_timespec_ns(&ts);
}

static inline int64_t ompi_comm_ft_now_ns(void)
{
    return ompi_comm_ft_clock_ns(CLOCK_MONOTONIC);
}

#endif /* OMPI_COMM_FT_DETECTOR_CLOCK_H */
