/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * A process's lifeline: a robust lock in its marker file, held by the
 * thread that initialized MPI, which the kernel cuts the moment that
 * thread exits. A node-mate that follows it learns of a process killed by
 * a signal before the kernel has freed the process's memory, which its
 * pidfd and the runtime wait for (70 ms per GiB here), and makes the
 * dying process give way to the living (SCHED_IDLE) on a node with more
 * processes than cores. A process followed also keeps a last thread at
 * SCHED_IDLE, which leaves the teardown of its memory to idle CPU from the
 * start and tells its followers of an exit() too. Plain C and Linux: no
 * Open MPI header, so that a test can build it alone.
 */

#ifndef OMPI_COMM_FT_DETECTOR_LIFELINE_H
#define OMPI_COMM_FT_DETECTOR_LIFELINE_H

#include <stdbool.h>
#include <stdint.h>

/* The holder's side, on the thread that initializes MPI: makes the open
 * file `fd` a lifeline and takes it. False where it cannot (the file stays
 * a plain marker). */
bool ompi_comm_ft_lifeline_hold(int fd);
/* Once a node-mate follows the lifeline held: keeps a last thread asleep
 * at SCHED_IDLE until this process ends (never stopped), so that a dying
 * process's teardown waits for idle CPU, and a follower can tell that the
 * whole process is ending. Nothing without a lifeline held or without
 * futex_waitv. */
void ompi_comm_ft_lifeline_keep_last_thread(void);
/* On the same thread, before this process may end: lets go of it, so that
 * its follower stops following. From another thread it is left to the
 * kernel, which lets go when the holder exits. */
void ompi_comm_ft_lifeline_let_go(void);

/* The follower's side. Starts following the lifeline in the file at
 * `path` of process `pid` (started at `start_time`, field 22 of its
 * /proc/<pid>/stat), in place of the one followed so far, whose
 * descriptor this closes. Returns a descriptor (an eventfd) that becomes
 * readable once that process's lifeline is cut and the process is dying
 * (of a signal, or by exit() with a last thread), or -1 when it cannot
 * follow one (no futex_waitv before Linux 5.16, no such file): its pidfd
 * then tells alone. A process found dying
 * is also made to give way (see make_way below). The first call starts
 * the follower's thread. */
int ompi_comm_ft_lifeline_follow(const char *path, uint64_t pid, uint64_t start_time);
/* When the lifeline in the file at `path` of process `pid` (started at
 * `start_time`) was cut and that process is dying, moves the threads it
 * has left to SCHED_IDLE and returns true. The follower's
 * thread does this itself for the process it follows; this is for one
 * found dying without it. */
bool ompi_comm_ft_lifeline_make_way(const char *path, uint64_t pid, uint64_t start_time);
/* Stops following (closes the last descriptor follow returned). */
void ompi_comm_ft_lifeline_unfollow(void);
/* Stops the follower's thread. */
void ompi_comm_ft_lifeline_finalize(void);

#endif /* OMPI_COMM_FT_DETECTOR_LIFELINE_H */
