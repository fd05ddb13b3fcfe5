/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Lifelines (comm_ft_detector_lifeline.h). A process killed by a signal
 * ends in steps: each of its threads takes the signal when it next gets a
 * CPU, and the last one frees the process's memory; only then do a pidfd
 * and the runtime (SIGCHLD) see the end. Measured here: 6 to 9 ms for a
 * process of 64 MiB, 280 ms for one of 4 GiB, and an MPI rank's sleeping
 * threads waited up to 3 ms for a CPU on an oversubscribed node. The
 * kernel cuts a robust lock when its holder thread exits, before that
 * thread's share of the teardown, and wakes whoever waits for it.
 *
 * The holder: a robust, process-shared pthread mutex in the first bytes of
 * the marker file, locked by the thread that initialized MPI (usually
 * main, which is running when the signal comes), and its thread id after
 * it. The follower: one thread per process, which sleeps in futex_waitv on
 * two words: the lock of the process it follows, with the waiters bit set
 * so that the kernel's cut wakes it, and its own count of changes, which
 * the detector thread bumps to make it follow another one or stop. It
 * never takes the lock: it only reads the word.
 *
 * A cut lock says only that the holder thread exited. The process is
 * dying when that thread died of a signal (the low bits of field 52 of
 * /proc/<pid>/task/<tid>/stat): a fatal signal ends every thread of a
 * process. It is dying too when the whole process ends by exit(): the
 * kernel then queues SIGKILL to each of its threads, and the holder's last
 * thread (below) shows it. A thread that returned, an exec, or an exit
 * without a last thread is left to the pidfd, which then sees the end as
 * before.
 *
 * A dying process makes way for the living: its threads that have not
 * exited yet, and with them the teardown of its memory, move to
 * SCHED_IDLE. On a node with a core per process the dying one's core is
 * idle anyway and nothing changes; on a node with more processes than
 * cores its teardown no longer takes the CPU that the survivors need to
 * learn of its death (measured: 2 to 4 ms of CPU per MPI rank killed, on
 * 2 cores shared by 16 ranks; a lower nice value would need privileges).
 *
 * The follower moves them when it has run, which can be too late: the
 * thread the cut woke it from was often the one left to do the teardown,
 * and the follower waited behind it on that CPU for the whole of it
 * (traced on 2 cores shared by 8 ranks: 2 to 3 ms in about 1 run of 3).
 * So a holder that is followed also keeps a last thread, asleep at
 * SCHED_IDLE from the start until the process ends. The kernel's SIGKILL
 * wakes every thread of a dying process, the others' wakeups preempt the
 * last one, so it exits last and does the teardown while a CPU is free.
 * It is never stopped (at SCHED_IDLE its turn could be long in coming, and
 * a process cannot raise itself back): it ends with the process, whose
 * normal exit after MPI_Finalize then also frees memory at idle priority.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np, SCHED_IDLE */
#endif

#include "comm_ft_detector_lifeline.h"
#include "comm_ft_detector_proc_stat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__GLIBC__) && defined(SYS_futex_waitv)
#define LIFELINE_POSSIBLE 1
#else
#define LIFELINE_POSSIBLE 0
#endif

#if LIFELINE_POSSIBLE

#define THREAD_STACK_BYTES (64 * 1024)
#define SIGNAL_BITS 0x7f                 /* of an exit code: the signal that ended it */
#define SIGKILL_PENDING (1u << (SIGKILL - 1)) /* in a thread's pending signals */

/* Thread ids in the holder's pid namespace, which the witness checks is ours. */
typedef struct lifeline_page_t {
    pthread_mutex_t lock;
    int32_t holder_tid;
    int32_t last_tid; /* the holder's last thread; 0: none (yet) */
} lifeline_page_t;

static lifeline_page_t *held = NULL;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t started;
    int32_t tid; /* 0: not started */
} last = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

typedef enum { NOT_STARTED, RUNNING, UNAVAILABLE } follower_state_t;

static struct {
    pthread_mutex_t lock;
    pthread_t thread;
    bool joinable; /* the thread was created and not joined yet */
    follower_state_t state;
    bool stopping;
    uint32_t changes; /* futex word: bumped at each change below */
    char *path;       /* what to follow; NULL: nothing */
    uint64_t pid;
    uint64_t start_time;
    int event_fd; /* written when it is cut by a death */
} follower = {.lock = PTHREAD_MUTEX_INITIALIZER, .event_fd = -1};

/* glibc's robust mutexes keep the kernel's futex word first (the owner's
 * thread id, FUTEX_WAITERS, FUTEX_OWNER_DIED): the robust list's contract */
static int *word_of(lifeline_page_t *page)
{
    return &page->lock.__data.__lock;
}

bool ompi_comm_ft_lifeline_hold(int fd)
{
    pthread_mutexattr_t attr;
    lifeline_page_t *page;
    bool locked;

    if (0 != ftruncate(fd, sizeof(*page))
        || MAP_FAILED == (page = mmap(NULL, sizeof(*page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0))) {
        return false;
    }
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    locked = 0 == pthread_mutex_init(&page->lock, &attr) && 0 == pthread_mutex_lock(&page->lock);
    pthread_mutexattr_destroy(&attr);
    if (!locked) {
        munmap(page, sizeof(*page));
        return false;
    }
    page->holder_tid = (int32_t) syscall(SYS_gettid);
    held = page;
    return true;
}

void ompi_comm_ft_lifeline_let_go(void)
{
    /* glibc's list of the robust locks this thread holds runs through the
     * page: it stays mapped unless the unlock took it off that list */
    if (NULL != held && 0 == pthread_mutex_unlock(&held->lock)) {
        munmap(held, sizeof(*held));
    }
    held = NULL;
}

/* Whether futex_waitv exists here (Linux 5.16) and is not refused: a
 * value that differs must end it at once with EAGAIN. */
static bool futex_waitv_works(void)
{
    uint32_t word = 0;
    struct futex_waitv waiter = {.val = 1, .uaddr = (uintptr_t) &word, .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG};

    return 0 > syscall(SYS_futex_waitv, &waiter, 1, 0, NULL, 0) && EAGAIN == errno;
}

static void *sleep_until_the_end(void *unused)
{
    (void) unused;
    pthread_setname_np(pthread_self(), "btl_ft teardown");
    pthread_mutex_lock(&last.lock);
    last.tid = (int32_t) syscall(SYS_gettid);
    pthread_cond_signal(&last.started);
    pthread_mutex_unlock(&last.lock);
    for (;;) {
        pause(); /* every signal blocked: only the end of the process ends it */
    }
    return NULL;
}

/* Starts the last thread, at SCHED_IDLE: set from here, so that MPI_Init
 * never waits for an idle thread's turn. */
static bool start_last_thread(void)
{
    struct sched_param unused = {0};
    sigset_t all, before;
    pthread_attr_t attr;
    pthread_t thread;
    bool created;

    if (0 != pthread_attr_init(&attr)) {
        return false;
    }
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    created = 0 == pthread_attr_setstacksize(&attr, THREAD_STACK_BYTES)
              && 0 == pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED)
              && 0 == pthread_create(&thread, &attr, sleep_until_the_end, NULL);
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    pthread_attr_destroy(&attr);
    pthread_mutex_lock(&last.lock);
    while (created && 0 == last.tid) {
        pthread_cond_wait(&last.started, &last.lock);
    }
    pthread_mutex_unlock(&last.lock);
    return created && 0 == sched_setscheduler(last.tid, SCHED_IDLE, &unused);
}

void ompi_comm_ft_lifeline_keep_last_thread(void)
{
    static bool idle = false; /* the last thread started, at SCHED_IDLE */

    /* followers without futex_waitv fall back on the pidfd, which would
     * then wait for an idle teardown */
    if (NULL == held || !futex_waitv_works()) {
        return;
    }
    if (0 == last.tid) {
        idle = start_last_thread();
    }
    if (idle) {
        __atomic_store_n(&held->last_tid, last.tid, __ATOMIC_RELEASE);
    }
}

typedef struct followed_t {
    lifeline_page_t *page; /* NULL: following none */
    uint64_t pid;
    uint64_t start_time;
    int32_t holder_tid;
} followed_t;

static ompi_comm_ft_proc_stat_result_t read_thread(const followed_t *followed, int32_t tid,
                                                   ompi_comm_ft_proc_stat_t *fields)
{
    char path[64];

    snprintf(path, sizeof(path), "/proc/%" PRIu64 "/task/%" PRId32 "/stat", followed->pid, tid);
    return ompi_comm_ft_proc_stat_read(path, fields);
}

/* Whether thread tid of the process followed is ending: gone, dead,
 * exiting, or with the SIGKILL queued that ends it. */
static bool thread_ending(const followed_t *followed, int32_t tid)
{
    ompi_comm_ft_proc_stat_t fields;

    switch (read_thread(followed, tid, &fields)) {
    case OMPI_COMM_FT_PROC_STAT_GONE:
        return true;
    case OMPI_COMM_FT_PROC_STAT_READ:
        return 'Z' == fields.state || 'X' == fields.state || 0 != (fields.flags & OMPI_COMM_FT_PROC_EXITING)
               || 0 != (fields.pending & SIGKILL_PENDING);
    default:
        return false;
    }
}

/* Whether the process followed, still the one published, is dying: it
 * was killed as a whole, its holder thread died of a signal, or its
 * leading thread and its last thread, which ends only with the process,
 * are both ending. An exec ends the last thread but not the leading one,
 * which runs the new program. */
static bool dying(const followed_t *followed)
{
    ompi_comm_ft_proc_stat_t fields;
    char path[64];
    int32_t last_tid = __atomic_load_n(&followed->page->last_tid, __ATOMIC_ACQUIRE);

    snprintf(path, sizeof(path), "/proc/%" PRIu64 "/stat", followed->pid);
    if (OMPI_COMM_FT_PROC_STAT_READ != ompi_comm_ft_proc_stat_read(path, &fields)
        || fields.start_time != followed->start_time) {
        return false;
    }
    if (ompi_comm_ft_proc_stat_killed(followed->pid)) {
        return true;
    }
    if (OMPI_COMM_FT_PROC_STAT_READ == read_thread(followed, followed->holder_tid, &fields)
        && 0 != (fields.exit_code & SIGNAL_BITS)) {
        return true;
    }
    return 0 < last_tid && thread_ending(followed, last_tid) && thread_ending(followed, (int32_t) followed->pid);
}

/* Moves the remaining threads of a process that is dying to SCHED_IDLE
 * (any user may lower the priority of their own threads). */
static void make_way_for_the_living(uint64_t pid)
{
    struct sched_param unused = {0};
    struct dirent *entry;
    char path[64];
    DIR *tasks;

    snprintf(path, sizeof(path), "/proc/%" PRIu64 "/task", pid);
    if (NULL == (tasks = opendir(path))) {
        return;
    }
    while (NULL != (entry = readdir(tasks))) {
        pid_t tid = (pid_t) strtol(entry->d_name, NULL, 10);
        if (0 < tid) {
            (void) sched_setscheduler(tid, SCHED_IDLE, &unused);
        }
    }
    closedir(tasks);
}

static void drop(followed_t *followed)
{
    if (NULL != followed->page) {
        munmap(followed->page, sizeof(*followed->page));
    }
    *followed = (followed_t){0};
}

/* Maps the lifeline in the file at path, of process pid. */
static void take_up(followed_t *followed, const char *path, uint64_t pid, uint64_t start_time)
{
    int fd = NULL == path ? -1 : open(path, O_RDWR | O_CLOEXEC);
    lifeline_page_t *page = MAP_FAILED;
    struct stat file;

    /* a file shorter than a lifeline is a marker alone (reading past its
     * end would raise SIGBUS) */
    if (0 <= fd && 0 == fstat(fd, &file) && (off_t) sizeof(*page) <= file.st_size) {
        page = mmap(NULL, sizeof(*page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    if (0 <= fd) {
        close(fd);
    }
    if (MAP_FAILED == page) {
        return;
    }
    *followed = (followed_t){.page = page, .pid = pid, .start_time = start_time, .holder_tid = page->holder_tid};
}

/* True while the holder holds it: *value is then its word, with the
 * waiters bit set so that the cut wakes us. */
static bool still_held(lifeline_page_t *page, uint32_t *value)
{
    int seen = __atomic_load_n(word_of(page), __ATOMIC_ACQUIRE);

    for (;;) {
        if (0 != (seen & FUTEX_OWNER_DIED) || 0 == (seen & FUTEX_TID_MASK)) {
            return false;
        }
        if (0 != ((unsigned) seen & FUTEX_WAITERS)
            || __atomic_compare_exchange_n(word_of(page), &seen, (int) ((unsigned) seen | FUTEX_WAITERS),
                                           false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            *value = (uint32_t) seen | FUTEX_WAITERS;
            return true;
        }
    }
}

/* Sleeps until changes moves from `seen` or, with a page, its word from
 * `value`. False when futex_waitv fails for another reason than those. */
static bool wait_for_change(lifeline_page_t *page, uint32_t value, uint32_t seen)
{
    struct futex_waitv waiters[2] = {
        {.val = seen, .uaddr = (uintptr_t) &follower.changes, .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG},
        {.val = value, .uaddr = (uintptr_t) (NULL == page ? NULL : word_of(page)), .flags = FUTEX_32},
    };

    return 0 <= syscall(SYS_futex_waitv, waiters, NULL == page ? 1 : 2, 0, NULL, 0) || EAGAIN == errno
           || EINTR == errno;
}

static void *follow_lifelines(void *unused)
{
    followed_t followed = {0};
    uint32_t seen = 0, value = 0;
    bool waited = true;

    (void) unused;
    pthread_setname_np(pthread_self(), "btl_ft lifeline");
    while (waited) {
        pthread_mutex_lock(&follower.lock);
        if (follower.stopping) {
            pthread_mutex_unlock(&follower.lock);
            break;
        }
        if (seen != follower.changes) {
            seen = follower.changes;
            drop(&followed);
            take_up(&followed, follower.path, follower.pid, follower.start_time);
        }
        if (NULL != followed.page && !still_held(followed.page, &value)) {
            if (dying(&followed)) {
                make_way_for_the_living(followed.pid); /* first: a few system calls */
                if (0 <= follower.event_fd) {
                    (void) eventfd_write(follower.event_fd, 1);
                }
            }
            /* the kernel wakes one waiter: pass it on to any other follower */
            (void) syscall(SYS_futex, word_of(followed.page), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
            drop(&followed);
        }
        pthread_mutex_unlock(&follower.lock);
        waited = wait_for_change(followed.page, value, seen);
    }
    drop(&followed);
    if (!waited) {
        pthread_mutex_lock(&follower.lock);
        follower.state = UNAVAILABLE;
        pthread_mutex_unlock(&follower.lock);
    }
    return NULL;
}

/* With the lock held. A thread that takes no signal of the application's. */
static bool start_follower(void)
{
    sigset_t all, before;
    pthread_attr_t attr;
    bool started;

    if (NOT_STARTED != follower.state) {
        return RUNNING == follower.state;
    }
    follower.state = UNAVAILABLE;
    if (!futex_waitv_works() || 0 != pthread_attr_init(&attr)) {
        return false;
    }
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    started = 0 == pthread_attr_setstacksize(&attr, THREAD_STACK_BYTES)
              && 0 == pthread_create(&follower.thread, &attr, follow_lifelines, NULL);
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    pthread_attr_destroy(&attr);
    if (started) {
        follower.state = RUNNING;
        follower.joinable = true;
    }
    return started;
}

static void wake_follower(void)
{
    (void) syscall(SYS_futex, &follower.changes, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* With the lock held: what to follow from now on (path owned). */
static void replace(char *path, uint64_t pid, uint64_t start_time, int event_fd)
{
    if (0 <= follower.event_fd) {
        close(follower.event_fd);
    }
    free(follower.path);
    follower.path = path;
    follower.pid = pid;
    follower.start_time = start_time;
    follower.event_fd = event_fd;
    ++follower.changes;
}

int ompi_comm_ft_lifeline_follow(const char *path, uint64_t pid, uint64_t start_time)
{
    char *copy = strdup(path);
    int fd = -1;

    pthread_mutex_lock(&follower.lock);
    if (NULL != copy && start_follower() && 0 <= (fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))) {
        replace(copy, pid, start_time, fd);
    } else {
        free(copy);
        replace(NULL, 0, 0, -1);
    }
    pthread_mutex_unlock(&follower.lock);
    wake_follower();
    return fd;
}

bool ompi_comm_ft_lifeline_make_way(const char *path, uint64_t pid, uint64_t start_time)
{
    followed_t followed = {0};
    bool found_dying;

    take_up(&followed, path, pid, start_time);
    /* cut: only the holder's exit (or exec) sets FUTEX_OWNER_DIED; a
     * process killed as a whole dies whether or not it was cut yet */
    found_dying = NULL != followed.page
                  && (0 != (__atomic_load_n(word_of(followed.page), __ATOMIC_ACQUIRE) & FUTEX_OWNER_DIED)
                      || ompi_comm_ft_proc_stat_killed(pid))
                  && dying(&followed);
    drop(&followed);
    if (found_dying) {
        make_way_for_the_living(pid);
    }
    return found_dying;
}

void ompi_comm_ft_lifeline_unfollow(void)
{
    pthread_mutex_lock(&follower.lock);
    replace(NULL, 0, 0, -1);
    pthread_mutex_unlock(&follower.lock);
    wake_follower();
}

void ompi_comm_ft_lifeline_finalize(void)
{
    bool joinable;

    pthread_mutex_lock(&follower.lock);
    joinable = follower.joinable; /* also when it ended itself (UNAVAILABLE) */
    follower.joinable = false;
    follower.stopping = true;
    replace(NULL, 0, 0, -1);
    pthread_mutex_unlock(&follower.lock);
    wake_follower();
    if (joinable) {
        pthread_join(follower.thread, NULL);
    }
    follower.state = NOT_STARTED;
    follower.stopping = false;
}

#else /* !LIFELINE_POSSIBLE: the pidfd tells alone */

bool ompi_comm_ft_lifeline_hold(int fd)
{
    (void) fd;
    return false;
}

void ompi_comm_ft_lifeline_keep_last_thread(void)
{
}

void ompi_comm_ft_lifeline_let_go(void)
{
}

int ompi_comm_ft_lifeline_follow(const char *path, uint64_t pid, uint64_t start_time)
{
    (void) path;
    (void) pid;
    (void) start_time;
    return -1;
}

bool ompi_comm_ft_lifeline_make_way(const char *path, uint64_t pid, uint64_t start_time)
{
    (void) path;
    (void) pid;
    (void) start_time;
    return false;
}

void ompi_comm_ft_lifeline_unfollow(void)
{
}

void ompi_comm_ft_lifeline_finalize(void)
{
}

#endif
