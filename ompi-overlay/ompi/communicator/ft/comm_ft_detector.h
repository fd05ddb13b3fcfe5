/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Internal interface between the pieces of the btl_ft failure detector shim.
 * The protocol itself lives in the C++ core behind btl_ft/btl_ft.h; these files
 * only bind it to Open MPI:
 *
 *   comm_ft_detector.c            lifecycle, configuration, ULFM entry, fencing:
 *                                 with the next two, the files that wire the
 *                                 others together (their shared state:
 *                                 comm_ft_detector_module.h)
 *   comm_ft_detector_join.c       what a spawn or connect/accept does to the
 *                                 detector, and a JOIN from one this process
 *                                 took no part in
 *   comm_ft_detector_join_plan.c  the move to the next union both of these
 *                                 make (comm_ft_detector_join_plan.h)
 *   comm_ft_detector_params.c     MCA variables and their validation
 *   comm_ft_detector_ucx.c        the detector's own transport: a private UCP
 *                                 context (the default), its lifecycle
 *   comm_ft_detector_ucx_addresses.c  what each process publishes for it,
 *                                 and reading it
 *   comm_ft_detector_ucx_path.c   its heartbeats and messages
 *   comm_ft_detector_flag.c       its heartbeat flag, a word node-mates map
 *   comm_ft_detector_btl.c        the fallback transport: the application's
 *                                 BTLs, heartbeat flag, btl_put, AM tag
 *   comm_ft_detector_driver.c     the only caller of the core, under its lock
 *   comm_ft_detector_driver_loop.c  when the core steps: the detector thread
 *                                 or a progress callback (the two files'
 *                                 state: comm_ft_detector_driver_internal.h)
 *   comm_ft_detector_queues.c     the driver's queues, fed by other threads
 *   comm_ft_detector_witness.c    this node's processes as /proc sees them
 *   comm_ft_detector_lifeline.c   the witness's lifelines: a process killed by
 *                                 a signal, known before it has ended
 *   comm_ft_detector_proc_stat.c  the fields of /proc stat files that both
 *                                 of these judge by
 *   comm_ft_detector_log.c        verbose output that is safe on the detector
 *                                 thread
 *   comm_ft_detector_union.c      the jobs the detector watches, and what two
 *                                 of them exchange when they connect
 *   comm_ft_detector_conclusions.c  where the core's conclusions go: log
 *                                 lines, ULFM, the runtime's fence
 *
 * The rule: comm_ft_detector.c, comm_ft_detector_join.c and
 * comm_ft_detector_join_plan.c call the others; they call none of each other, except the driver its queues (and its
 * two files each other), the UCX transport its flag (and
 * its three files each other, through comm_ft_detector_ucx_internal.h), the
 * witness its lifelines, the witness and the lifelines the /proc reader,
 * the conclusions the union (for names), and anyone the log. What one needs of
 * another comes in as a function pointer at init: the driver gets what it
 * calls in an ops table, a transport its deliver and report functions, the
 * witness its report and watch functions. mpi.shim_calls reads the object
 * files' undefined symbols and fails on a call the rule forbids.
 *
 * None of this is installed: libmpi's dynamic symbol table lists these
 * functions, as it lists many of Open MPI's internals, but no installed
 * header declares them. The core's own symbols stay out of it
 * (mpi.exported_symbols).
 */

#ifndef OMPI_COMM_FT_DETECTOR_H
#define OMPI_COMM_FT_DETECTOR_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "btl_ft/btl_ft.h"
#include "opal/util/proc.h"

BEGIN_C_DECLS

#define OMPI_FT_DETECTOR_HELP_FILE "help-mpi-ft-detector.txt"
/* The detector thread's name: top -H shows it, and a witness finds it by
 * it in /proc/<pid>/task to tell a starved process from a wedged one. */
#define OMPI_COMM_FT_DETECTOR_THREAD_NAME "btl_ft"

/* What the MCA variables set, parsed: the detector's own settings straight
 * into the core's configuration (period, timeout, ring order, propagator,
 * seed, probe width, quorum, witness, node grace), the shim's beside it. */
typedef struct ompi_comm_ft_detector_params_t {
    btl_ft_config_t detector;
    bool enable;
    bool use_thread;
    bool rdma_heartbeat;
    bool fence;
    bool watch_node;
    bool watch_lifeline;
    bool counters;
    int transport; /* OMPI_COMM_FT_TRANSPORT_* */
} ompi_comm_ft_detector_params_t;

enum { OMPI_COMM_FT_TRANSPORT_UCX = 0, OMPI_COMM_FT_TRANSPORT_BTL = 1 };

/* comm_ft_detector_params.c */
int ompi_comm_ft_detector_params_register(void);
/* Parses the variables; shows a help message naming the variable and
 * returns OMPI_ERR_BAD_PARAM when a value is not even of the right kind (a
 * number, a known word). */
int ompi_comm_ft_detector_params_get(ompi_comm_ft_detector_params_t *params);
/* The core's verdict on a configuration built from the variables, shown
 * under the name of the variable behind the member it rejects. */
int ompi_comm_ft_detector_params_check(const btl_ft_config_t *config);
/* Before the modex, silently: whether the detector will run over its own
 * UCX transport (an invalid value is reported later, by params_get). */
bool ompi_comm_ft_detector_params_want_ucx(void);

/* comm_ft_detector_log.c: opal_output_verbose on ompi_ftmpi_output_handle,
 * in the same format, but safe on the detector thread while OPAL's locks
 * are off (opal_output formats into a shared buffer): one write(2) a line. */
void ompi_comm_ft_log_init(void);
void ompi_comm_ft_log(int level, const char *format, ...) __opal_attribute_format__(__printf__, 2, 3);

/* Where an arriving detector message goes, and a failure learnt outside
 * the core (enum btl_ft_failure_kind). Safe from any thread and from
 * within transport callbacks: they only queue. */
typedef void (*ompi_comm_ft_deliver_fn_t)(uint32_t from, const void *bytes, size_t length);
typedef void (*ompi_comm_ft_report_fn_t)(uint32_t rank, int kind);

/* comm_ft_detector_ucx.c and comm_ft_detector_ucx_path.c: the detector's
 * own transport. */
/* Before the modex: makes the context, its workers and the heartbeat flag,
 * and publishes their addresses. Nonzero (with a reason) when UCX cannot
 * start; the detector then takes the BTL path. */
int ompi_comm_ft_ucx_publish(uint32_t self, uint32_t size, bool one_node, const char **reason);
/* After the modex: reads the peers' addresses. Fails when a peer published
 * none (its UCX could not start), so that every process of the job falls
 * back to the BTL path alike. node_of_rank may be NULL (one node). */
int ompi_comm_ft_ucx_init(bool rdma_heartbeat, const uint32_t *node_of_rank,
                          ompi_comm_ft_deliver_fn_t deliver, size_t *max_message_bytes,
                          const char **reason);
/* Makes the message endpoints to every process, and the heartbeat endpoints
 * to every process of another node (unions of up to 4096), and starts
 * their wireup. After MPI_Init's barrier, on the application's thread, it
 * waits for the wireup; at a join it does not (the detector's progress
 * finishes it): a new process answers only once its own detector runs,
 * and a detector held waiting is declared hung by its observers. */
void ompi_comm_ft_ucx_connect(bool wait_for_wireup);
/* A join (core lock not needed: no detector runs): the union's `size`
 * processes by name, its epoch and identity (btl_ft_membership_identity),
 * previous[rank] a process's rank in the last union (UINT32_MAX: new to
 * it), node ids as init's, the processes known failed (never sent to).
 * Then connect() wires up the new ones. Progresses nothing. */
int ompi_comm_ft_ucx_join(uint32_t self, uint32_t size, uint32_t epoch, uint64_t identity,
                          const opal_process_name_t *names, const uint32_t *previous,
                          const uint32_t *node_of_rank, const btl_ft_known_failure_t *failed,
                          size_t failed_count);
void ompi_comm_ft_ucx_finalize(void);
/* false for a context of one node's shared memory only */
bool ompi_comm_ft_ucx_reaches_other_nodes(void);
/* The event fd that wakes the detector thread when a message arrives. */
int ompi_comm_ft_ucx_wait_fd(void);
/* Core lock held (the workers are used by whoever holds it). */
void ompi_comm_ft_ucx_progress(void);
bool ompi_comm_ft_ucx_arm(void);
uint64_t ompi_comm_ft_ucx_read_flag(void);
int ompi_comm_ft_ucx_put_heartbeat(void *context, uint32_t observer, uint64_t word);
void ompi_comm_ft_ucx_send(void *context, uint32_t peer, const void *bytes, size_t length);
void ompi_comm_ft_ucx_observer_handle(void *context, uint32_t observer, const void *handle,
                                      size_t length);

/* <job session directory>/btl_ft.<rank>.<suffix> (malloc'd), or NULL: the
 * files node-mates share (the witness's marker, the UCX transport's flag).
 * Inline, so that no file of the shim calls another for it. */
static inline char *ompi_comm_ft_session_file(uint32_t rank, const char *suffix)
{
    char *path = NULL;

    if (NULL == opal_process_info.job_session_dir
        || 0 > asprintf(&path, "%s/btl_ft.%u.%s", opal_process_info.job_session_dir, rank, suffix)) {
        return NULL;
    }
    return path;
}

/* comm_ft_detector_flag.c: the UCX transport's heartbeat flag, in a file of
 * the job's session directory. create() maps this process's and gives its
 * path (malloc'd; NULL and no path when it cannot be made), map() a
 * node-mate's by the path it published (NULL when there is none yet, with
 * *gone set when the file no longer exists: its owner left); remove()
 * unmaps this process's, deletes the file and frees the path. */
volatile uint64_t *ompi_comm_ft_flag_create(uint32_t self, char **path);
volatile uint64_t *ompi_comm_ft_flag_map(const char *path, bool *gone);
void ompi_comm_ft_flag_unmap(volatile uint64_t *flag);
void ompi_comm_ft_flag_remove(char *path, volatile uint64_t *flag);

/* comm_ft_detector_btl.c: the application's BTLs (mpi_ft_detector_transport
 * btl, or where UCX cannot start). */
/* The AM tag is registered whenever ULFM is on, even if this process runs no
 * detector: a peer that does may still send to it (dropped until init). */
int ompi_comm_ft_btl_register_tag(void);
/* Registers the heartbeat flag and packs this process's flag handle. */
int ompi_comm_ft_btl_init(uint32_t self, uint32_t size, bool rdma_heartbeat,
                          ompi_comm_ft_deliver_fn_t deliver, void *handle,
                          size_t handle_capacity, size_t *handle_length,
                          size_t *max_message_bytes);
void ompi_comm_ft_btl_finalize(void);
/* Makes every peer's endpoint now (up to a job size), so that the detector
 * thread never makes one at first contact. */
void ompi_comm_ft_btl_make_endpoints(void);
uint64_t ompi_comm_ft_btl_read_flag(void);
/* Signatures of the core's callbacks, used directly as such. */
int ompi_comm_ft_btl_put_heartbeat(void *context, uint32_t observer, uint64_t word);
void ompi_comm_ft_btl_send(void *context, uint32_t peer, const void *bytes, size_t length);
void ompi_comm_ft_btl_observer_handle(void *context, uint32_t observer,
                                      const void *handle, size_t length);

/* comm_ft_detector_driver.c (and its loop) */
/* Everything the driver calls besides the core, passed in at init so that
 * it depends on no other file of the shim. */
typedef struct ompi_comm_ft_driver_ops_t {
    /* the core's transport callbacks, handed to it as they are */
    int (*put_heartbeat)(void *context, uint32_t observer, uint64_t word);
    void (*send)(void *context, uint32_t peer, const void *bytes, size_t length);
    void (*observer_handle)(void *context, uint32_t observer, const void *handle, size_t length);
    int (*local_state)(void *context, uint32_t rank); /* enum btl_ft_process_state */
    /* what the local heartbeat flag holds now */
    uint64_t (*read_flag)(void);
    /* the core's conclusions, with the core lock held */
    void (*failed)(uint32_t rank, int kind); /* enum btl_ft_failure_kind */
    void (*suspected)(uint32_t rank); /* this process observed it fail: fence it */
    void (*declared_dead_self)(uint32_t told_by, const char *reason);
    void (*close_call)(uint32_t emitter, int64_t silent_ns);
    void (*report_counters)(const btl_ft_stats_t *stats, uint64_t thread_progress_calls);
    /* a failure for ULFM, from opal_progress with no lock of ours held,
     * between pin() and unpin(): the union's numbering holds still */
    void (*tell_ulfm)(uint32_t rank);
    void (*pin)(void);
    void (*unpin)(void);
    /* a watched process of this node ended (its pidfd), no lock held */
    void (*ended)(uint32_t rank);
    /* The core's `joined` callback, handed to it as it is (core lock
     * held): it keeps the JOIN, and follow_join() then follows it, on the
     * detector thread after the step, no lock held. NULL: JOINs ignored. */
    void (*joined)(void *context, uint32_t from, uint32_t epoch, const btl_ft_job_extent_t *jobs,
                   size_t job_count, const btl_ft_known_failure_t *known, size_t known_count);
    void (*follow_join)(void);
    /* The transport's own progress, core lock held; NULL on the BTL path,
     * whose messages move with opal_progress. */
    void (*progress)(void);
    /* Before the thread sleeps, core lock held: false when events are
     * pending, and progress must run again first. */
    bool (*arm)(void);
    int wait_fd; /* readable when armed and a message arrived; -1: none */
    /* The BTL path: the detector thread itself runs opal_progress while the
     * application computes, or its messages would not move. */
    bool thread_progresses_opal;
} ompi_comm_ft_driver_ops_t;

int ompi_comm_ft_driver_init(const btl_ft_config_t *config, const ompi_comm_ft_driver_ops_t *ops,
                             bool use_thread, char *error, size_t error_length);
int ompi_comm_ft_driver_start(void);
/* A JOIN (btl_ft_announce_join): the union moved to, for the processes
 * of the old one in `to`. */
typedef struct ompi_comm_ft_join_news_t {
    uint32_t epoch;
    const btl_ft_job_extent_t *jobs;
    size_t job_count;
    const btl_ft_known_failure_t *known; /* sorted by rank */
    size_t known_count;
    const uint32_t *to;
    size_t to_count;
} ompi_comm_ft_join_news_t;
/* hand_over: at a join, what arrived reaches the old core (a JOIN is
 * heard), and what the detector had not yet told ULFM is told now, on the
 * calling thread (the next detector never reports what it starts
 * knowing); false at MPI_Finalize. leaving_too: the processes that
 * leave with this one (btl_ft_leave). announce (NULL: none): a JOIN sent
 * before leaving, once the thread stopped (the transport is then this
 * thread's). */
void ompi_comm_ft_driver_finalize(bool hand_over, const uint32_t *leaving_too, size_t leaving_count,
                                  const ompi_comm_ft_join_news_t *announce);
/* On the detector thread, from follow_join: the old core leaves, the
 * transport moves (move_transport(arg), with the core lock held: it
 * renumbers what the queues hold, ompi_comm_ft_queues_renumber), and a
 * new core over `config` starts in its place. Messages queued for the old
 * core are dropped, but JOINs. On failure the thread goes on without a
 * core, said by the caller. */
int ompi_comm_ft_driver_replace(const btl_ft_config_t *config, int (*move_transport)(void *arg), void *arg,
                                char *error, size_t error_length);
/* Any thread: the detector thread calls follow_join() again after its
 * next step (a JOIN kept while it could not be followed). */
void ompi_comm_ft_driver_recall_join(void);
/* On the detector thread, after a replace: the new core sends `news` (a
 * JOIN naming its own union) to the processes of it in news->to. */
int ompi_comm_ft_driver_announce(const ompi_comm_ft_join_news_t *news);
/* Safe from any thread and from within BTL callbacks: they only queue. */
void ompi_comm_ft_driver_report(uint32_t rank, int kind); /* enum btl_ft_failure_kind */
void ompi_comm_ft_driver_deliver(uint32_t from, const void *bytes, size_t length);
/* The same, from inside ops.progress(), which a step follows at once: no
 * wakeup is posted. */
void ompi_comm_ft_driver_deliver_in_step(uint32_t from, const void *bytes, size_t length);
/* Adds a pidfd to the detector thread's wait: ops.ended(rank) when it ends. */
bool ompi_comm_ft_driver_watch(int pidfd, uint32_t rank);
void ompi_comm_ft_driver_shrunk(const uint32_t *members, size_t count);
/* every rank's enum btl_ft_failure_kind, 0 when not known failed */
int ompi_comm_ft_driver_failure_kinds(int *kinds, uint32_t count);

/* comm_ft_detector_queues.c: the driver's only; one lock, never held while
 * the core or a BTL runs. */
enum { OMPI_COMM_FT_INBOX_MESSAGE = 0, OMPI_COMM_FT_INBOX_SHRUNK = 1 };
/* The sender of a JOIN from another union (btl_ft_is_join): it has no rank
 * in this one. */
#define OMPI_COMM_FT_FROM_ANOTHER_UNION UINT32_MAX
typedef struct ompi_comm_ft_inbox_item_t {
    struct ompi_comm_ft_inbox_item_t *next;
    int kind; /* OMPI_COMM_FT_INBOX_* */
    uint32_t from;
    size_t length;
    unsigned char bytes[];
} ompi_comm_ft_inbox_item_t;

int ompi_comm_ft_queues_init(uint32_t world_size);
/* A larger union whose first ranks are the same processes: what is queued stays. */
int ompi_comm_ft_queues_grow(uint32_t world_size);
/* Another union: what the reports and ULFM's queue hold moves to each
 * rank's new number, new_of_old[rank] (UINT32_MAX: dropped). */
int ompi_comm_ft_queues_renumber(const uint32_t *new_of_old, uint32_t old_size, uint32_t new_size);
/* Drops the messages queued (for a core that is gone), but JOINs: they
 * name their union in full, and the next core weighs them. */
void ompi_comm_ft_queues_drop_inbox(void);
void ompi_comm_ft_queues_close(void);
void ompi_comm_ft_queues_fini(void);
void ompi_comm_ft_queues_report(uint32_t rank, int kind);
/* wake: post the wakeup (false only where a step follows at once) */
void ompi_comm_ft_queues_inbox_push(int kind, uint32_t from, const void *bytes, size_t length,
                                    bool wake);
void ompi_comm_ft_queues_to_ulfm(uint32_t rank);
bool ompi_comm_ft_queues_pop_report(uint32_t *rank, int *kind);
ompi_comm_ft_inbox_item_t *ompi_comm_ft_queues_take_inbox(void);
bool ompi_comm_ft_queues_pop_to_ulfm(uint32_t *rank);
bool ompi_comm_ft_queues_pending(void);
int64_t ompi_comm_ft_queues_pending_since(void);
bool ompi_comm_ft_queues_watch(int pidfd, uint32_t rank);
/* An fd that only ends the wait (a transport's event fd). */
bool ompi_comm_ft_queues_watch_wakeup(int fd);
void ompi_comm_ft_queues_wait(int64_t deadline_ns, const volatile bool *stop,
                              void (*ended)(uint32_t rank));
void ompi_comm_ft_queues_stop_waiting(volatile bool *stop);

/* comm_ft_detector_union.c: the union of the jobs this process is
 * connected to, numbered by the core (btl_ft_membership_*). */
#define OMPI_COMM_FT_UNION_JOBS_MAX 64
#define OMPI_COMM_FT_UNION_FAILURES_MAX 1024
typedef struct ompi_comm_ft_named_failure_t {
    uint32_t jobid;
    uint32_t vpid;
    int32_t kind; /* enum btl_ft_failure_kind */
} ompi_comm_ft_named_failure_t;
/* What a root tells the other side's at a connect: its union, the
 * failures it knows there, whether it can join (joinable 0: it runs no
 * detector, or takes the BTL path) and whether every live process of its
 * union is in the connect (covers). Fixed-size: it is broadcast as bytes. */
typedef struct ompi_comm_ft_union_view_t {
    uint32_t version;
    uint32_t joinable;
    uint32_t covers;
    uint32_t network; /* its detector's UCX reaches other nodes (not shared memory only) */
    uint32_t epoch;
    uint32_t job_count;
    uint32_t failure_count;
    btl_ft_job_extent_t jobs[OMPI_COMM_FT_UNION_JOBS_MAX];
    ompi_comm_ft_named_failure_t failures[OMPI_COMM_FT_UNION_FAILURES_MAX];
} ompi_comm_ft_union_view_t;

struct ompi_group_t;
struct ompi_communicator_t;
/* epoch 0: this process's job alone */
int ompi_comm_ft_union_init(uint32_t job, uint32_t size);
void ompi_comm_ft_union_fini(void);
uint32_t ompi_comm_ft_union_size(void);
uint32_t ompi_comm_ft_union_epoch(void);
bool ompi_comm_ft_union_rank_of(const opal_process_name_t *name, uint32_t *rank);
/* OPAL_JOBID_INVALID's name beyond the union */
opal_process_name_t ompi_comm_ft_union_name_of(uint32_t rank);
/* kinds: every union rank's enum btl_ft_failure_kind, 0 when alive */
void ompi_comm_ft_union_describe(ompi_comm_ft_union_view_t *view, bool joinable,
                                 struct ompi_group_t *group, const int *kinds);
/* Collective over comm: views[0] this side's root's view, views[1] the
 * other side's. */
int ompi_comm_ft_union_exchange(struct ompi_communicator_t *comm, int root, const char *port,
                                bool send_first, const ompi_comm_ft_union_view_t *mine,
                                ompi_comm_ft_union_view_t views[2]);
/* The union both views make, or NULL when it is the one already watched. */
btl_ft_membership_t *ompi_comm_ft_union_of(const ompi_comm_ft_union_view_t views[2]);
size_t ompi_comm_ft_union_carried(const btl_ft_membership_t *next,
                                  const ompi_comm_ft_union_view_t views[2],
                                  btl_ft_known_failure_t *out, size_t capacity, uint32_t self);
/* Whether views[side]'s union moves to the new one: it can join, and
 * either every live process of it took part in the connect, or those left
 * out can follow a JOIN, because the new union numbers every process of
 * the old one as it did (its jobs come first). The same answer at every
 * process of both sides. */
bool ompi_comm_ft_union_side_moves(const ompi_comm_ft_union_view_t views[2], int side);
/* The union ranks of the live processes (kinds 0) of the union watched that
 * are not in `group`, nor this process (free it; NULL and 0 when none). */
uint32_t *ompi_comm_ft_union_left_out(struct ompi_group_t *group, const int *kinds, size_t *count);
/* Whether OPAL can name every job of `jobs` to PMIx, after asking the
 * runtime for the namespaces it does not know. A JOIN names jobs this
 * process never connected to, and OPAL would otherwise look their
 * processes up in this job, silently (the modex of rank 0 of this job for
 * that of rank 0 of the other). */
bool ompi_comm_ft_union_learn_jobs(const btl_ft_job_extent_t *jobs, size_t count);
/* The union watched now (read it while the numbering is pinned, or on
 * the thread that moves it). */
const btl_ft_membership_t *ompi_comm_ft_union_watched(void);
/* Any thread that holds a union rank across two calls (computes it, then
 * queues it) pins the numbering meanwhile, and never waits on the core
 * lock while pinned; whoever renumbers holds it still (hold_moves, core
 * lock held). Pins may nest (ULFM, told of a failure, reports it back):
 * glibc's read locks prefer readers. */
void ompi_comm_ft_union_pin(void);
void ompi_comm_ft_union_unpin(void);
void ompi_comm_ft_union_hold_moves(void);
void ompi_comm_ft_union_release_moves(void);
/* Takes `next` (from union_of, or a JOIN) as the union watched from now
 * on. The old one is kept until union_fini: another thread may still be
 * reading it. */
void ompi_comm_ft_union_adopt(btl_ft_membership_t *next);

/* comm_ft_detector_conclusions.c: the driver's ops for the core's
 * conclusions. init() once, track() whenever the union changes, both
 * while no detector thread runs. */
void ompi_comm_ft_conclusions_init(bool fence, bool counters, int64_t timeout_ns);
/* known_failed: by union rank, ULFM already knew it failed (not fenced again) */
void ompi_comm_ft_conclusions_track(uint32_t size, uint32_t self, const uint8_t *known_failed);
void ompi_comm_ft_conclusions_failed(uint32_t rank, int kind);
void ompi_comm_ft_conclusions_suspected(uint32_t rank);
void ompi_comm_ft_conclusions_declared_dead_self(uint32_t told_by, const char *reason);
void ompi_comm_ft_conclusions_close_call(uint32_t emitter, int64_t silent_ns);
void ompi_comm_ft_conclusions_report_counters(const btl_ft_stats_t *stats, uint64_t thread_progress_calls);
void ompi_comm_ft_conclusions_tell_ulfm(uint32_t rank);

/* comm_ft_detector_witness.c: this node's processes as /proc sees them.
 * publish() before MPI_Init's barrier, learn() after it, learn_others()
 * at each join (the node-mates of other jobs among `names`, by union
 * rank); local_state() answers the core's question of a node-mate (enum
 * btl_ft_process_state). */
/* watched: keep a marker for the node watch; with_lifeline: make it a
 * lifeline too; threaded: the detector runs on its thread (named
 * OMPI_COMM_FT_DETECTOR_THREAD_NAME), which witnesses look at. */
int ompi_comm_ft_witness_publish(bool watched, bool with_lifeline, bool threaded);
void ompi_comm_ft_witness_learn(const uint32_t *node_of_rank, uint32_t size, uint32_t self);
void ompi_comm_ft_witness_learn_others(const opal_process_name_t *names, const uint32_t *node_of_rank,
                                       uint32_t size, uint32_t self);
int ompi_comm_ft_witness_local_state(const opal_process_name_t *name);
/* watch(fd, rank) adds a pidfd, or a lifeline's descriptor, to the
 * detector thread's wait; an end seen there comes back as ended(rank), and
 * a crash goes to report. */
void ompi_comm_ft_witness_watch_ends(bool (*watch)(int pidfd, uint32_t rank),
                                     ompi_comm_ft_report_fn_t report);
void ompi_comm_ft_witness_ended(uint32_t rank);
/* A join replaced the detector thread's wait: the end watched goes into the new one. */
void ompi_comm_ft_witness_rewatch(void);
void ompi_comm_ft_witness_leaving(void);
void ompi_comm_ft_witness_finalize(void);

END_C_DECLS

#endif /* OMPI_COMM_FT_DETECTOR_H */
