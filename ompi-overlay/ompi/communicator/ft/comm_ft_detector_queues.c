/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The driver's queues: what other threads hand to the core, and what the
 * core hands to ULFM, behind one lock that is never held while the core or
 * the BTLs run.
 *
 *   inbox    detector messages and shrink results, in arrival order
 *   reports  failures ULFM learnt (PMIx events, BTL errors), for the core
 *   to_ulfm  failures the core found, for ULFM's progress callback
 *
 * A rank queue holds each rank at most once until popped, with the
 * strongest kind pushed (enum btl_ft_failure_kind: a crash confirms an
 * earlier report), so a storm of reports about one rank costs one entry.
 * The detector thread sleeps in epoll until its deadline, an eventfd
 * written when the inbox or reports go from empty to holding something, or
 * the end of a watched process (a pidfd of this node's, see the witness):
 * one system call per timeout, as a semaphore's, and the node's processes
 * are watched without polling. Not a condition variable: glibc's returns
 * from a timed wait with its mutex marked contended, so every timeout, the
 * thread's usual wakeup, cost one more system call to unlock it.
 */

#include "ompi_config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "opal/prefetch.h"
#include "opal/sys/atomic.h"

#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/communicator/ft/comm_ft_detector_clock.h"
#include "ompi/constants.h"

/* epoll data: a pidfd's is its rank */
#define WAKE_TOKEN UINT64_MAX            /* the eventfd */
#define TRANSPORT_TOKEN (UINT64_MAX - 1) /* a transport's event fd */

typedef struct rank_queue_t {
    uint32_t *ranks;
    uint8_t *pending; /* 0: not queued, else the kind */
    size_t count;
} rank_queue_t;

typedef struct ompi_comm_ft_queues_t {
    pthread_mutex_t lock;
    int wake_fd;  /* eventfd: written once per emptiness ended, and to stop */
    int epoll_fd; /* wake_fd and the watched pidfds */
    bool accepting;
    uint32_t world_size;
    opal_atomic_int32_t queued;       /* the inbox or reports hold something */
    opal_atomic_int64_t queued_at_ns; /* when queued last became set */
    ompi_comm_ft_inbox_item_t *inbox_head;
    ompi_comm_ft_inbox_item_t **inbox_tail;
    rank_queue_t reports;
    rank_queue_t to_ulfm;
} ompi_comm_ft_queues_t;

static ompi_comm_ft_queues_t queues = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake_fd = -1,
    .epoll_fd = -1,
    .inbox_tail = &queues.inbox_head,
};

/* false if the rank was already queued (its kind may have grown) */
static bool rank_queue_push(rank_queue_t *queue, uint32_t rank, int kind)
{
    if (rank >= queues.world_size) {
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

static bool rank_queue_alloc(rank_queue_t *queue)
{
    queue->ranks = calloc(queues.world_size, sizeof(*queue->ranks));
    queue->pending = calloc(queues.world_size, sizeof(*queue->pending));
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
    rank_queue_free(&queues.reports);
    rank_queue_free(&queues.to_ulfm);
    queues.world_size = 0;
}

static void post_wake(void)
{
    uint64_t one = 1;

    /* fails only when the counter is full, and then a wakeup is pending anyway */
    (void) !write(queues.wake_fd, &one, sizeof(one));
}

/* lock held */
static void wake_locked(void)
{
    if (0 == queues.queued) {
        queues.queued_at_ns = ompi_comm_ft_now_ns();
        queues.queued = 1;
        post_wake();
    }
}

static void close_wait_fds(void)
{
    if (0 <= queues.epoll_fd) {
        close(queues.epoll_fd);
    }
    if (0 <= queues.wake_fd) {
        close(queues.wake_fd);
    }
    queues.epoll_fd = queues.wake_fd = -1;
}

static bool open_wait_fds(void)
{
    struct epoll_event event = {.events = EPOLLIN, .data.u64 = WAKE_TOKEN};

    queues.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    queues.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (0 > queues.wake_fd || 0 > queues.epoll_fd
        || 0 != epoll_ctl(queues.epoll_fd, EPOLL_CTL_ADD, queues.wake_fd, &event)) {
        close_wait_fds();
        return false;
    }
    return true;
}

int ompi_comm_ft_queues_init(uint32_t world_size)
{
    queues.world_size = world_size;
    if (!rank_queue_alloc(&queues.reports) || !rank_queue_alloc(&queues.to_ulfm)
        || !open_wait_fds()) {
        free_rank_queues();
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    pthread_mutex_lock(&queues.lock);
    queues.accepting = true; /* messages may arrive before start; the core keeps them */
    pthread_mutex_unlock(&queues.lock);
    return OMPI_SUCCESS;
}

/* Grows both rank queues; ranks already queued keep their place. */
static bool rank_queue_grow(rank_queue_t *queue, uint32_t old_size, uint32_t world_size)
{
    uint32_t *ranks = realloc(queue->ranks, world_size * sizeof(*ranks));
    uint8_t *pending;

    if (NULL == ranks) {
        return false;
    }
    queue->ranks = ranks;
    if (NULL == (pending = realloc(queue->pending, world_size * sizeof(*pending)))) {
        return false;
    }
    memset(pending + old_size, 0, world_size - old_size);
    queue->pending = pending;
    return true;
}

int ompi_comm_ft_queues_grow(uint32_t world_size)
{
    bool grown = true;

    pthread_mutex_lock(&queues.lock);
    if (world_size > queues.world_size) {
        grown = rank_queue_grow(&queues.reports, queues.world_size, world_size)
                && rank_queue_grow(&queues.to_ulfm, queues.world_size, world_size);
        if (grown) {
            queues.world_size = world_size;
        }
    }
    pthread_mutex_unlock(&queues.lock);
    return grown ? OMPI_SUCCESS : OMPI_ERR_OUT_OF_RESOURCE;
}

/* lock held; keep_joins: JOINs stay, from another union now */
static void drop_inbox_locked(bool keep_joins)
{
    ompi_comm_ft_inbox_item_t *item, *next;

    queues.inbox_tail = &queues.inbox_head;
    for (item = queues.inbox_head; NULL != item; item = next) {
        next = item->next;
        if (keep_joins && OMPI_COMM_FT_INBOX_MESSAGE == item->kind && btl_ft_is_join(item->bytes, item->length)) {
            item->from = OMPI_COMM_FT_FROM_ANOTHER_UNION;
            item->next = NULL;
            *queues.inbox_tail = item;
            queues.inbox_tail = &item->next;
        } else {
            free(item);
        }
    }
    if (queues.inbox_tail == &queues.inbox_head) {
        queues.inbox_head = NULL;
    }
}

void ompi_comm_ft_queues_drop_inbox(void)
{
    pthread_mutex_lock(&queues.lock);
    drop_inbox_locked(true);
    pthread_mutex_unlock(&queues.lock);
}

/* lock held; `into` is empty and large enough */
static void rank_queue_move(rank_queue_t *queue, rank_queue_t *into, const uint32_t *new_of_old, uint32_t old_size)
{
    for (size_t i = 0; i < queue->count; ++i) {
        uint32_t rank = queue->ranks[i];
        if (rank < old_size && UINT32_MAX != new_of_old[rank]) {
            into->pending[new_of_old[rank]] = queue->pending[rank];
            into->ranks[into->count++] = new_of_old[rank];
        }
    }
}

int ompi_comm_ft_queues_renumber(const uint32_t *new_of_old, uint32_t old_size, uint32_t new_size)
{
    rank_queue_t reports, to_ulfm;
    uint32_t capacity;

    pthread_mutex_lock(&queues.lock);
    capacity = new_size > queues.world_size ? new_size : queues.world_size;
    reports = (rank_queue_t){calloc(capacity, sizeof(uint32_t)), calloc(capacity, 1), 0};
    to_ulfm = (rank_queue_t){calloc(capacity, sizeof(uint32_t)), calloc(capacity, 1), 0};
    if (NULL == reports.ranks || NULL == reports.pending || NULL == to_ulfm.ranks || NULL == to_ulfm.pending) {
        pthread_mutex_unlock(&queues.lock);
        rank_queue_free(&reports);
        rank_queue_free(&to_ulfm);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    rank_queue_move(&queues.reports, &reports, new_of_old, old_size);
    rank_queue_move(&queues.to_ulfm, &to_ulfm, new_of_old, old_size);
    rank_queue_free(&queues.reports);
    rank_queue_free(&queues.to_ulfm);
    queues.reports = reports;
    queues.to_ulfm = to_ulfm;
    queues.world_size = capacity;
    pthread_mutex_unlock(&queues.lock);
    return OMPI_SUCCESS;
}

/* Stops accepting and drops whatever is still queued. */
void ompi_comm_ft_queues_close(void)
{
    pthread_mutex_lock(&queues.lock);
    queues.accepting = false;
    drop_inbox_locked(false);
    queues.reports.count = 0;
    queues.to_ulfm.count = 0;
    queues.queued = 0;
    pthread_mutex_unlock(&queues.lock);
}

/* Nothing to undo if init failed. */
void ompi_comm_ft_queues_fini(void)
{
    if (0 == queues.world_size) {
        return;
    }
    ompi_comm_ft_queues_close();
    close_wait_fds();
    free_rank_queues();
}

void ompi_comm_ft_queues_report(uint32_t rank, int kind)
{
    pthread_mutex_lock(&queues.lock);
    if (queues.accepting && rank_queue_push(&queues.reports, rank, kind)) {
        wake_locked();
    }
    pthread_mutex_unlock(&queues.lock);
}

void ompi_comm_ft_queues_inbox_push(int kind, uint32_t from, const void *bytes, size_t length,
                                    bool wake)
{
    ompi_comm_ft_inbox_item_t *item;

    if (!queues.accepting) {
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

    pthread_mutex_lock(&queues.lock);
    if (!queues.accepting) {
        pthread_mutex_unlock(&queues.lock);
        free(item);
        return;
    }
    *queues.inbox_tail = item;
    queues.inbox_tail = &item->next;
    if (wake) {
        wake_locked();
    } else if (0 == queues.queued) {
        queues.queued_at_ns = ompi_comm_ft_now_ns();
        queues.queued = 1;
    }
    pthread_mutex_unlock(&queues.lock);
}

void ompi_comm_ft_queues_to_ulfm(uint32_t rank)
{
    pthread_mutex_lock(&queues.lock);
    if (queues.accepting) {
        (void) rank_queue_push(&queues.to_ulfm, rank, 1);
    }
    pthread_mutex_unlock(&queues.lock);
}

bool ompi_comm_ft_queues_pop_report(uint32_t *rank, int *kind)
{
    bool popped;

    pthread_mutex_lock(&queues.lock);
    popped = rank_queue_pop(&queues.reports, rank, kind);
    pthread_mutex_unlock(&queues.lock);
    return popped;
}

/* The whole inbox, oldest first; the caller frees each item. Clears the
 * wake-up flag: the reports are drained after it, in the same step. */
ompi_comm_ft_inbox_item_t *ompi_comm_ft_queues_take_inbox(void)
{
    ompi_comm_ft_inbox_item_t *items;

    pthread_mutex_lock(&queues.lock);
    items = queues.inbox_head;
    queues.inbox_head = NULL;
    queues.inbox_tail = &queues.inbox_head;
    queues.queued = 0;
    pthread_mutex_unlock(&queues.lock);
    return items;
}

bool ompi_comm_ft_queues_pop_to_ulfm(uint32_t *rank)
{
    int kind;
    bool popped;

    pthread_mutex_lock(&queues.lock);
    popped = rank_queue_pop(&queues.to_ulfm, rank, &kind);
    if (!popped) {
        }
    pthread_mutex_unlock(&queues.lock);
    return popped;
}

/* Unlocked reads for the progress callbacks' fast path: hints only. */
bool ompi_comm_ft_queues_pending(void)
{
    return 0 != queues.queued;
}

int64_t ompi_comm_ft_queues_pending_since(void)
{
    return queues.queued_at_ns;
}

/* A pidfd whose readiness (its process ended) wakes the waiter, which
 * hands the rank to the wait's callback. Closing the fd unwatches it. */
bool ompi_comm_ft_queues_watch(int pidfd, uint32_t rank)
{
    struct epoll_event event = {.events = EPOLLIN, .data.u64 = rank};

    return 0 == epoll_ctl(queues.epoll_fd, EPOLL_CTL_ADD, pidfd, &event);
}

bool ompi_comm_ft_queues_watch_wakeup(int fd)
{
    struct epoll_event event = {.events = EPOLLIN, .data.u64 = TRANSPORT_TOKEN};

    return 0 == epoll_ctl(queues.epoll_fd, EPOLL_CTL_ADD, fd, &event);
}

/* epoll_pwait2 (Linux 5.11) sleeps to the nanosecond; before it, and where
 * a seccomp policy refuses it, epoll_wait takes milliseconds, rounded up so
 * that a deadline is never woken before. Without this, its ENOSYS ended
 * every wait at once: the detector thread spun on a core. */
static int wait_for_events(struct epoll_event *events, int max_events, const struct timespec *timeout)
{
    static bool without_pwait2 = false;
    int64_t ms;
    int ready;

    if (!without_pwait2) {
        ready = epoll_pwait2(queues.epoll_fd, events, max_events, timeout, NULL);
        if (0 <= ready || ENOSYS != errno) {
            return ready;
        }
        without_pwait2 = true;
    }
    ms = NULL == timeout ? -1 : (int64_t) timeout->tv_sec * 1000 + (timeout->tv_nsec + 999999) / 1000000;
    return epoll_wait(queues.epoll_fd, events, max_events, INT32_MAX < ms ? INT32_MAX : (int) ms);
}

/* Sleeps until something is queued, *stop is set, a watched process ends
 * (ended(rank) is called, here, without any lock), or deadline_ns passes.
 * A wakeup written for what the last step already took only ends the next
 * wait at once, which then costs a step for nothing; one written after the
 * check below ends the wait, so nothing is missed. */
void ompi_comm_ft_queues_wait(int64_t deadline_ns, const volatile bool *stop,
                              void (*ended)(uint32_t rank))
{
    struct epoll_event events[8];
    struct timespec timeout, *timeout_or_never = NULL;
    int64_t left;
    uint64_t posts;
    int ready;

    if (*stop || 0 != queues.queued) {
        return;
    }
    if (INT64_MAX / 2 > deadline_ns) {
        left = deadline_ns - ompi_comm_ft_now_ns();
        left = 0 < left ? left : 0;
        timeout.tv_sec = left / OMPI_COMM_FT_NS_PER_S;
        timeout.tv_nsec = left % OMPI_COMM_FT_NS_PER_S;
        timeout_or_never = &timeout;
    }
    ready = wait_for_events(events, 8, timeout_or_never);
    for (int i = 0; i < ready; ++i) {
        if (WAKE_TOKEN == events[i].data.u64) {
            (void) !read(queues.wake_fd, &posts, sizeof(posts));
        } else if (TRANSPORT_TOKEN != events[i].data.u64) {
            ended((uint32_t) events[i].data.u64);
        }
    }
}

/* Sets *stop before the wakeup, so that the woken waiter sees it. */
void ompi_comm_ft_queues_stop_waiting(volatile bool *stop)
{
    *stop = true;
    post_wake();
}
