/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The fields of a process's (or a thread's) /proc stat file that the
 * witness and the lifelines judge by. Plain C and Linux: no Open MPI
 * header, so that the lifelines' test can build it alone.
 */

#ifndef OMPI_COMM_FT_DETECTOR_PROC_STAT_H
#define OMPI_COMM_FT_DETECTOR_PROC_STAT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ompi_comm_ft_proc_stat_t {
    char state;          /* field 3: R, S, D, T, t, Z, X... */
    uint64_t flags;      /* field 9: the kernel's PF_* flags of the (leading) thread */
    uint64_t threads;    /* field 20: threads of the process, an exited leader counted */
    uint64_t pending;    /* field 31: signals pending for that thread alone, bit n-1 for n */
    uint64_t start_time; /* field 22, clock ticks after boot: a reused pid has another */
    uint64_t exit_code;  /* field 52 (Linux 3.5 on, else 0): its low 7 bits, a fatal signal */
} ompi_comm_ft_proc_stat_t;

/* In flags: the thread has begun to exit (include/linux/sched.h). */
#define OMPI_COMM_FT_PROC_EXITING 0x4u

typedef enum ompi_comm_ft_proc_stat_result_t {
    OMPI_COMM_FT_PROC_STAT_READ,
    OMPI_COMM_FT_PROC_STAT_GONE,       /* no such file: the process or thread is gone */
    OMPI_COMM_FT_PROC_STAT_UNREADABLE, /* there, but could not be read or parsed */
} ompi_comm_ft_proc_stat_result_t;

/* Reads `path`, /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat. */
ompi_comm_ft_proc_stat_result_t ompi_comm_ft_proc_stat_read(const char *path,
                                                            ompi_comm_ft_proc_stat_t *stat);

/* Whether a process read from /proc/<pid>/stat has ended: dead, or a
 * zombie with no other thread. A leading thread that left by
 * pthread_exit() is a zombie while the process's other threads run. */
bool ompi_comm_ft_proc_stat_ended(const ompi_comm_ft_proc_stat_t *stat);

/* Whether a SIGKILL was sent to process `pid` as a whole (kill(), the OOM
 * killer, a process group's kill) and waits in its shared pending set
 * (ShdPnd in /proc/<pid>/status): it will end, whether or not its threads
 * have had a CPU to take it. A SIGKILL queued to one thread alone is not
 * counted: an exec sends one to each other thread, and the process lives
 * on. False when the file cannot be read. */
bool ompi_comm_ft_proc_stat_killed(uint64_t pid);

/* The CPU time a thread has had, in ns: the first field of
 * /proc/<pid>/task/<tid>/schedstat (the kernel's sum_exec_runtime, exact
 * where stat's utime and stime count ticks). */
ompi_comm_ft_proc_stat_result_t ompi_comm_ft_proc_stat_run_time(const char *schedstat_path, uint64_t *run_ns);

/* The first thread of process `pid` named `name` (its comm, as
 * pthread_setname_np() set it), in *tid; false if it has none. */
bool ompi_comm_ft_proc_stat_find_thread(uint64_t pid, const char *name, int32_t *tid);

/* A thread of a process as the previous look found it; zeroed before the
 * first look. */
typedef struct ompi_comm_ft_thread_look_t {
    int32_t tid; /* 0: not found yet */
    bool looked;
    uint64_t run_ns;
} ompi_comm_ft_thread_look_t;

typedef enum ompi_comm_ft_thread_seen_t {
    OMPI_COMM_FT_THREAD_MISSING,    /* the process has no thread of that name (now) */
    OMPI_COMM_FT_THREAD_STARVED,    /* runnable, and no CPU time since the previous look,
                                     * or none ever */
    OMPI_COMM_FT_THREAD_RAN,        /* asleep, or it gained CPU time since the previous look,
                                     * or nothing to compare with yet */
    OMPI_COMM_FT_THREAD_UNREADABLE, /* there, but its files could not be read */
} ompi_comm_ft_thread_seen_t;

/* Looks at process pid's thread `name` (found at the first look, and again
 * after it was gone) and says what it did since the previous look. */
ompi_comm_ft_thread_seen_t ompi_comm_ft_proc_stat_look_at_thread(uint64_t pid, const char *name,
                                                                 ompi_comm_ft_thread_look_t *look);

#endif /* OMPI_COMM_FT_DETECTOR_PROC_STAT_H */
