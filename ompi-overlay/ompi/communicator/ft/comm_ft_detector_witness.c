/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * This node's processes, as the kernel sees them: which pid each rank of
 * this node has, what /proc says of it when an observer asks (the host's
 * side of a witness; the protocol is the core's, detector_witness.cpp),
 * and, with mpi_ft_detector_watch_node, the end of the next one.
 *
 * At MPI_Init every process publishes, with node-local scope, its pid, its
 * start time (field 22 of /proc/self/stat: a reused pid has another) and
 * its pid namespace (a pid means nothing in another one). After MPI_Init's
 * barrier each process reads those of the other ranks of its node, once.
 * A question then costs one read of /proc/<pid>/stat, on the detector
 * thread; nothing runs while the job is healthy.
 *
 * A running process is also told apart: starved, or not. Its detector
 * thread (found by its name in /proc/<pid>/task at the first question)
 * is starved when it is runnable (R) and its CPU time (schedstat) has not
 * grown since the previous question, or is still 0: the kernel had not
 * run it since, or ever. The core then leaves that silence out of the
 * witness patience, which only a wedged detector should reach (asleep,
 * or running and sending nothing). The leading thread's state, which
 * /proc/<pid>/stat gives, cannot tell: in 3 of about 3,000 runs of two
 * respawn jobs at once on 2 cores, an emitter's detector thread was
 * runnable and never ran for over a second while its application thread
 * ran, and it was declared. A process that publishes a detector thread
 * and has none counts as starved too: its detector has not started yet
 * (the last steps of MPI_Init, after its barrier, or a join), or its
 * threads are ending with it (killed: the node watch tells that end),
 * so it cannot be wedged. In the same stress, two processes of one job
 * were declared that way, their observer having started over a second
 * before them: one had made its detector thread, which had not run yet
 * (the driver now names it as it makes it, so that it is found), the
 * other had not made it yet.
 *
 * An end is a crash unless the process had entered MPI_Finalize. Each
 * process creates a marker file in the job's session directory at MPI_Init
 * (published with the pid: only a process with one is watched) and removes
 * it first thing in MPI_Finalize, before it can exit; the watcher looks
 * for it once the pidfd says the process ended. Removing a file cannot fail
 * for want of space, and a marker that cannot be read proves nothing, so a
 * doubt never makes a crash out of a clean exit.
 *
 * With mpi_ft_detector_watch_lifeline the marker file is also a lifeline
 * (comm_ft_detector_lifeline.c) and the watcher follows it beside the
 * pidfd: a process killed by a signal, or ending by exit(), is then known
 * when the thread that initialized MPI dies, before the kernel has freed
 * the process's memory; every other end waits for the pidfd as before.
 *
 * A node-mate of another job of the union (spawned, connected) is read at
 * each join, for questions only: its job's own processes watch its end.
 *
 * Each process watches one node-mate, the next by rank around the node,
 * through one pidfd. When that one ends, its watcher takes over the next,
 * and so on past any that ended too (a pidfd opened after the end still
 * tells it, and the marker says how it ended), so every end is seen as
 * long as one process of the node runs. A node-mate killed as a whole (a
 * SIGKILL waits in its shared pending set until its threads get a CPU)
 * counts as ended: processes killed together, as a job's or a node's
 * are, are then told in one breath rather than one after the other as
 * each gets a CPU to die on. Rejected: a pidfd for every
 * node-mate, as before: every process of the node learnt at once, but a
 * process held one descriptor per node-mate (63 at 64 per node), and the
 * first to learn starts the notice that tells the others within a few
 * hops anyway.
 */

#include "ompi_config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "opal/mca/pmix/pmix-internal.h"
#include "opal/util/output.h"

#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/communicator/ft/comm_ft_detector_lifeline.h"
#include "ompi/communicator/ft/comm_ft_detector_proc_stat.h"
#include "ompi/constants.h"
#include "ompi/runtime/ompi_rte.h"
#include "ompi/runtime/params.h"

#define WITNESS_KEY "btl_ft.witness"

typedef struct {
    uint64_t pid;
    uint64_t start_time; /* clock ticks since boot */
    uint64_t pid_namespace;
    uint64_t marked;   /* 1: it keeps a marker file until MPI_Finalize */
    uint64_t lifeline; /* 1: the marker also holds its lifeline */
    uint64_t threaded; /* 1: its detector runs on a thread of its own */
} process_id_t;

/* A node-mate: what it published, and its detector thread as the previous
 * question found it */
typedef struct {
    process_id_t id;
    ompi_comm_ft_thread_look_t thread;
} known_process_t;

static known_process_t *peers = NULL; /* by rank; pid 0: not of this node, or unknown */
static uint32_t peer_count = 0;
/* node-mates of the union's other jobs */
typedef struct {
    opal_process_name_t name;
    known_process_t process;
} other_job_peer_t;
static other_job_peer_t *others = NULL;
static size_t other_count = 0;
static uint32_t own_rank = 0;
static int watched_fd = -1;
static int lifeline_fd = -1; /* of watched_rank, when it has one (the lifeline module's) */
static uint32_t watched_rank = 0;
static bool (*watch_in_wait)(int pidfd, uint32_t rank) = NULL;
static char *own_marker = NULL;
static ompi_comm_ft_report_fn_t report_end = NULL;

static char *marker_path(uint32_t rank)
{
    return ompi_comm_ft_session_file(rank, "running");
}

/* *lifeline: whether the marker also holds this process's lifeline. */
static bool create_marker(bool with_lifeline, bool *lifeline)
{
    int fd;

    own_marker = marker_path(OMPI_PROC_MY_NAME->vpid);
    if (NULL == own_marker
        || 0 > (fd = open(own_marker, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600))) {
        free(own_marker);
        own_marker = NULL;
        return false;
    }
    *lifeline = with_lifeline && ompi_comm_ft_lifeline_hold(fd);
    close(fd);
    return true;
}

static uint64_t own_pid_namespace(void)
{
    struct stat info;

    return 0 == stat("/proc/self/ns/pid", &info) ? (uint64_t) info.st_ino : 0;
}

int ompi_comm_ft_witness_publish(bool watched, bool with_lifeline, bool threaded)
{
    process_id_t self = {.pid = (uint64_t) getpid(), .pid_namespace = own_pid_namespace(),
                         .threaded = threaded};
    ompi_comm_ft_proc_stat_t fields;
    bool lifeline = false;
    int rc;

    if (OMPI_COMM_FT_PROC_STAT_READ != ompi_comm_ft_proc_stat_read("/proc/self/stat", &fields)) {
        return OMPI_SUCCESS; /* no /proc: nobody can witness for us */
    }
    self.start_time = fields.start_time;
    self.marked = watched && create_marker(with_lifeline, &lifeline);
    self.lifeline = lifeline;
    OPAL_MODEX_SEND_STRING(rc, PMIX_LOCAL, WITNESS_KEY, &self, sizeof(self));
    if (PMIX_SUCCESS == rc) {
        rc = PMIx_Commit();
    }
    if (PMIX_SUCCESS != rc) {
        opal_output_verbose(1, ompi_ftmpi_output_handle,
                            "%s btl_ft: cannot publish this process for witnesses: %s",
                            OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), PMIx_Error_string(rc));
    }
    return OMPI_SUCCESS;
}

/* What `name` published at MPI_Init (one question to this node's PMIx
 * server), if it lives in this pid namespace. */
static bool read_published(const opal_process_name_t *name, uint64_t namespace_here, process_id_t *id)
{
    process_id_t *found = NULL;
    size_t found_size = 0;
    bool valid;
    int rc;

    OPAL_MODEX_RECV_STRING(rc, WITNESS_KEY, name, (void **) &found, &found_size);
    valid = PMIX_SUCCESS == rc && sizeof(*found) == found_size && found->pid_namespace == namespace_here;
    if (valid) {
        *id = *found;
    }
    free(found);
    return valid;
}

void ompi_comm_ft_witness_learn(const uint32_t *node_of_rank, uint32_t size, uint32_t self)
{
    opal_process_name_t name = *OMPI_PROC_MY_NAME;
    uint64_t namespace_here = own_pid_namespace();
    bool followed = false;

    if (NULL == node_of_rank || 0 == namespace_here
        || NULL == (peers = calloc(size, sizeof(*peers)))) {
        return;
    }
    peer_count = size;
    own_rank = self;
    for (uint32_t rank = 0; rank < size; ++rank) {
        if (rank == self || node_of_rank[rank] != node_of_rank[self]) {
            continue;
        }
        name.vpid = rank;
        followed |= read_published(&name, namespace_here, &peers[rank].id) && peers[rank].id.lifeline;
    }
    /* node-mates with lifelines share the watch's ring with us: one follows ours */
    if (followed) {
        ompi_comm_ft_lifeline_keep_last_thread();
    }
}

/* One published process, found by its name; NULL when none was read. */
static other_job_peer_t *other_job_peer(const opal_process_name_t *name)
{
    for (size_t i = 0; i < other_count; ++i) {
        if (others[i].name.jobid == name->jobid && others[i].name.vpid == name->vpid) {
            return &others[i];
        }
    }
    return NULL;
}

void ompi_comm_ft_witness_learn_others(const opal_process_name_t *names, const uint32_t *node_of_rank,
                                       uint32_t size, uint32_t self)
{
    uint64_t namespace_here = own_pid_namespace();
    other_job_peer_t *more;
    process_id_t id;

    for (uint32_t rank = 0; NULL != node_of_rank && 0 != namespace_here && rank < size; ++rank) {
        if (names[rank].jobid == OMPI_PROC_MY_NAME->jobid || node_of_rank[rank] != node_of_rank[self]
            || NULL != other_job_peer(&names[rank])) {
            continue;
        }
        /* committed at its MPI_Init, which the connect followed */
        if (read_published(&names[rank], namespace_here, &id)
            && NULL != (more = realloc(others, (other_count + 1) * sizeof(*others)))) {
            others = more;
            others[other_count++] = (other_job_peer_t){.name = names[rank], .process = {.id = id}};
            ompi_comm_ft_log(10, "btl_ft: witness: node-mate %s of another job is pid %" PRIu64,
                             OMPI_NAME_PRINT(&names[rank]), id.pid);
        }
    }
}

/* Unknown unless /proc says it plainly: a witness that guesses "gone"
 * would declare a live process failed. */
static int state_of_process(const process_id_t *id, char *state)
{
    ompi_comm_ft_proc_stat_t fields;
    char path[64];

    if (NULL == id || 0 == id->pid) {
        return BTL_FT_STATE_UNKNOWN;
    }
    snprintf(path, sizeof(path), "/proc/%" PRIu64 "/stat", id->pid);
    switch (ompi_comm_ft_proc_stat_read(path, &fields)) {
    case OMPI_COMM_FT_PROC_STAT_GONE:
        return BTL_FT_STATE_GONE;
    case OMPI_COMM_FT_PROC_STAT_UNREADABLE:
        return BTL_FT_STATE_UNKNOWN;
    default:
        break;
    }
    *state = fields.state;
    /* killed as a whole: it ends whether or not its threads get a CPU to
     * take the signal, and /proc/<pid>/stat cannot show it yet */
    if (fields.start_time != id->start_time || ompi_comm_ft_proc_stat_ended(&fields)
        || ompi_comm_ft_proc_stat_killed(id->pid)) {
        return BTL_FT_STATE_GONE;
    }
    if ('T' == *state || 't' == *state) {
        return BTL_FT_STATE_STOPPED;
    }
    return BTL_FT_STATE_RUNNING;
}

static int state_of(uint32_t rank, char *state)
{
    return state_of_process(rank < peer_count ? &peers[rank].id : NULL, state);
}

/* Whether the detector of a running process is kept from running: its
 * thread runnable and given no CPU since the previous question (or ever),
 * or, for a process whose detector has a thread, no such thread (not
 * started yet, or ending with its process). A thread that cannot be read
 * gets plain running. */
static bool detector_starved(const process_id_t *id, ompi_comm_ft_thread_look_t *thread)
{
    switch (ompi_comm_ft_proc_stat_look_at_thread(id->pid, OMPI_COMM_FT_DETECTOR_THREAD_NAME, thread)) {
    case OMPI_COMM_FT_THREAD_STARVED:
        return true;
    case OMPI_COMM_FT_THREAD_MISSING:
        return 0 != id->threaded;
    default:
        return false;
    }
}

/* What is known of `name`, of this job or another: NULL when nothing. */
static known_process_t *known(const opal_process_name_t *name)
{
    other_job_peer_t *other;

    if (name->jobid == OMPI_PROC_MY_NAME->jobid) {
        return name->vpid < peer_count ? &peers[name->vpid] : NULL;
    }
    other = other_job_peer(name);
    return NULL != other ? &other->process : NULL;
}


int ompi_comm_ft_witness_local_state(const opal_process_name_t *name)
{
    known_process_t *process = known(name);
    char state = '?';
    int verdict = state_of_process(NULL != process ? &process->id : NULL, &state);

    if (BTL_FT_STATE_RUNNING == verdict && detector_starved(&process->id, &process->thread)) {
        verdict = BTL_FT_STATE_STARVED;
    }
    ompi_comm_ft_log(10, "btl_ft: witness: %s is in state %c%s", OMPI_NAME_PRINT(name), state,
                     BTL_FT_STATE_STARVED == verdict ? ", its detector thread starved" : "");
    return verdict;
}

/* The node-mate after rank, by rank around the node, that keeps a marker;
 * own_rank once round. */
static uint32_t next_watchable(uint32_t rank)
{
    do {
        rank = (rank + 1) % peer_count;
    } while (rank != own_rank && (0 == peers[rank].id.pid || !peers[rank].id.marked));
    return rank;
}

/* How an end was seen. */
typedef enum {
    END_SEEN,     /* its pidfd: the process has ended */
    LIFELINE_CUT, /* it is dying, and already makes way (the lifeline's follower) */
    FOUND_GONE,   /* /proc said so when the watch passed it; it may still be dying */
} end_seen_t;

/* An end is a crash if the marker is still there. A crashed process still
 * dying makes way for the living once the others are told. */
static void judge_end(uint32_t rank, end_seen_t how)
{
    char *marker = marker_path(rank);
    bool crashed = NULL != marker && 0 == access(marker, F_OK);

    ompi_comm_ft_log(crashed ? 1 : 10, "btl_ft: rank %u of this node ended %s%s", rank,
                     crashed ? "outside MPI_Finalize: crashed" : "after MPI_Finalize began",
                     LIFELINE_CUT == how ? " (its lifeline was cut: it is dying)" : "");
    if (crashed && NULL != report_end) {
        report_end(rank, BTL_FT_CRASHED);
    }
    if (crashed && FOUND_GONE == how && peers[rank].id.lifeline
        && ompi_comm_ft_lifeline_make_way(marker, peers[rank].id.pid, peers[rank].id.start_time)) {
        ompi_comm_ft_log(10, "btl_ft: rank %u of this node is dying: it makes way", rank);
    }
    free(marker);
}

static void forget_lifeline(void)
{
    ompi_comm_ft_lifeline_unfollow(); /* closing it takes it out of the wait */
    lifeline_fd = -1;
}

/* Follows rank's lifeline, if it holds one, in the detector thread's wait
 * beside its pidfd: its end is told through either. */
static void follow_lifeline(uint32_t rank)
{
    const process_id_t *id = &peers[rank].id;
    char *marker = id->lifeline ? marker_path(rank) : NULL;

    lifeline_fd = NULL == marker ? -1 : ompi_comm_ft_lifeline_follow(marker, id->pid, id->start_time);
    free(marker);
    if (0 > lifeline_fd || !watch_in_wait(lifeline_fd, rank)) {
        forget_lifeline(); /* and the one followed before */
    }
}

/* Watches the first node-mate after `after` that still runs, judging on
 * the way those that ended. One that runs but cannot be watched (no
 * descriptor left) is passed over: heartbeats and the runtime cover it. */
static void watch_after(uint32_t after)
{
    char state;
    bool gone;
    int fd;

    for (uint32_t rank = next_watchable(after); rank != own_rank; rank = next_watchable(rank)) {
        fd = (int) syscall(SYS_pidfd_open, (pid_t) peers[rank].id.pid, 0);
        /* the pidfd holds whatever process has the pid now: it must still
         * be the one published (same start time) once the fd is open */
        gone = BTL_FT_STATE_GONE == state_of(rank, &state);
        if (!gone && 0 <= fd && watch_in_wait(fd, rank)) {
            watched_fd = fd;
            watched_rank = rank;
            follow_lifeline(rank);
            ompi_comm_ft_log(10, "btl_ft: watching the end of rank %u of this node%s", rank,
                             0 <= lifeline_fd ? ", and its lifeline" : "");
            return;
        }
        if (0 <= fd) {
            close(fd);
        }
        if (gone) {
            judge_end(rank, FOUND_GONE);
        }
    }
}

void ompi_comm_ft_witness_watch_ends(bool (*watch)(int pidfd, uint32_t rank),
                                     ompi_comm_ft_report_fn_t report)
{
    if (NULL == peers) {
        return;
    }
    watch_in_wait = watch;
    report_end = report;
    watch_after(own_rank);
}

/* The detector thread's wait saw rank's process end, or its lifeline cut. */
void ompi_comm_ft_witness_ended(uint32_t rank)
{
    struct pollfd pidfd = {.fd = watched_fd, .events = POLLIN};
    bool by_lifeline;

    if (0 > watched_fd || rank != watched_rank) {
        return;
    }
    by_lifeline = 0 <= lifeline_fd && 0 == poll(&pidfd, 1, 0);
    forget_lifeline();
    close(watched_fd); /* which takes it out of the wait */
    watched_fd = -1;
    judge_end(rank, by_lifeline ? LIFELINE_CUT : END_SEEN);
    watch_after(rank);
}

/* The detector thread's wait was made anew (a join): the watch goes into
 * it; a pidfd it cannot take is passed over, as in watch_after. */
void ompi_comm_ft_witness_rewatch(void)
{
    uint32_t rank = watched_rank;

    if (0 > watched_fd || NULL == watch_in_wait) {
        return;
    }
    if (!watch_in_wait(watched_fd, rank)) {
        forget_lifeline();
        close(watched_fd);
        watched_fd = -1;
        watch_after(rank);
    } else if (0 <= lifeline_fd && !watch_in_wait(lifeline_fd, rank)) {
        forget_lifeline();
    }
}

/* First thing in MPI_Finalize: from here on this process's end is no crash. */
void ompi_comm_ft_witness_leaving(void)
{
    if (NULL != own_marker) {
        (void) unlink(own_marker);
        free(own_marker);
        own_marker = NULL;
        ompi_comm_ft_lifeline_let_go();
    }
}

void ompi_comm_ft_witness_finalize(void)
{
    if (0 <= watched_fd) {
        close(watched_fd);
        watched_fd = -1;
    }
    ompi_comm_ft_lifeline_finalize();
    lifeline_fd = -1;
    free(peers);
    peers = NULL;
    peer_count = 0;
    free(others);
    others = NULL;
    other_count = 0;
    report_end = NULL;
    watch_in_wait = NULL;
    ompi_comm_ft_witness_leaving();
}
