/*
 * C ABI of the btl_ft detector core, for Open MPI's C shim
 * (ompi/communicator/ft/comm_ft_detector.c). Plain C types only; the shim
 * owns time, threads and the BTL, the core owns the protocol. Every entry
 * point of one detector must be called under one lock (the core is
 * single-threaded); callbacks run synchronously inside those calls.
 */
#ifndef BTL_FT_H
#define BTL_FT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct btl_ft_detector btl_ft_detector_t;
/* defined below, with the configuration and the union */
struct btl_ft_known_failure;
struct btl_ft_job_extent;

/* Limits the shim and the core share: each number has this one home. */
#define BTL_FT_HANDLE_MAX_BYTES 64     /* a flag handle (a BTL's registration of the flag word) */
#define BTL_FT_MESSAGE_MAX_BYTES 4096  /* a detector message; the core's default bound */
#define BTL_FT_PROBE_WIDTH_MAX 8       /* predecessors probed at once when mending */
/* a limit as text, for help and error messages */
#define BTL_FT_STRINGIFY(x) BTL_FT_STRINGIFY_(x)
#define BTL_FT_STRINGIFY_(x) #x

enum btl_ft_ring_order { BTL_FT_RING_RANK = 0, BTL_FT_RING_NODE = 1, BTL_FT_RING_SHUFFLE = 2 };
enum btl_ft_propagator { BTL_FT_PROPAGATOR_HBA = 0, BTL_FT_PROPAGATOR_BMG = 1, BTL_FT_PROPAGATOR_CHORD = 2 };
enum btl_ft_hierarchy { BTL_FT_HIERARCHY_FLAT = 0, BTL_FT_HIERARCHY_NODE = 1 };

/* What a job runs unless told otherwise: the MCA variables' defaults in
 * libmpi and ftsim's, from this one home. */
#define BTL_FT_DEFAULT_PERIOD_NS 100000000LL    /* eta 0.1 s */
#define BTL_FT_DEFAULT_TIMEOUT_NS 1000000000LL  /* delta 1 s */
#define BTL_FT_DEFAULT_RING_ORDER BTL_FT_RING_NODE
#define BTL_FT_DEFAULT_PROPAGATOR BTL_FT_PROPAGATOR_HBA
#define BTL_FT_DEFAULT_HIERARCHY BTL_FT_HIERARCHY_NODE /* libmpi's; ftsim runs flat, the seeds' model */
#define BTL_FT_DEFAULT_PROBE_WIDTH BTL_FT_PROBE_WIDTH_MAX
#define BTL_FT_DEFAULT_QUORUM 1
#define BTL_FT_DEFAULT_WITNESS 1
/* a node whose processes all fall silent may be starved of CPU as a whole
 * (measured: 90 to 230 ms, emulated nodes sharing 2 cores), not lost */
#define BTL_FT_DEFAULT_NODE_GRACE_NS 250000000LL
/* a silent emitter that witnesses see running (not starved) is kept this
 * long at most: then only a wedged detector is left to explain it */
#define BTL_FT_DEFAULT_WITNESS_PATIENCE_NS 1000000000LL

typedef struct btl_ft_callbacks {
    void *context;
    /* one-sided write of `word` into the observer's heartbeat flag (or an AM fallback) */
    /* 0: the word is deposited into the observer's flag (or on its way);
     * nonzero: no one-sided path to this observer, and the core sends the
     * heartbeat as a message instead (a HEARTBEAT through `send`) */
    int (*put_heartbeat)(void *context, uint32_t observer, uint64_t word);
    /* active message to `peer`; bytes valid only during the call */
    void (*send)(void *context, uint32_t peer, const void *bytes, size_t length);
    /* a NEWOBSERVER carried the new observer's flag handle (may be NULL) */
    void (*observer_handle)(void *context, uint32_t observer, const void *handle, size_t length);
    /* ranks newly known to have failed; each rank is reported once */
    void (*failed)(void *context, const uint32_t *ranks, size_t count);
    /* this process was declared dead by others, or (told_by == self, with
     * quorum on) is cut off with the smaller part of the job: it must stop */
    void (*declared_dead_self)(void *context, uint32_t told_by, const char *reason);
    /* optional (may be NULL): called before `failed` for the ranks this
     * process observed failing: those it declared failed itself, and its
     * emitter when a report names it. Where to fence */
    void (*suspected)(void *context, const uint32_t *ranks, size_t count);
    /* optional: the emitter was heard again after silent_ns of silence, more
     * than 3/4 of the timeout (a false failure came close) */
    void (*close_call)(void *context, uint32_t emitter, int64_t silent_ns);
    /* optional: the state of `rank`, a process of this node, as this host
     * sees it (enum btl_ft_process_state); asked when witnessing for a
     * silent emitter. NULL: always BTL_FT_STATE_UNKNOWN */
    int (*local_state)(void *context, uint32_t rank);
    /* optional: a JOIN from `from` says the union moved to `jobs` at
     * `epoch`, knowing `known` (ranks of that union), while this process
     * took no part in the connect (see sink::on_join). The caller leaves
     * this detector after the call, never inside it. NULL: ignored */
    void (*joined)(void *context, uint32_t from, uint32_t epoch, const struct btl_ft_job_extent *jobs,
                   size_t job_count, const struct btl_ft_known_failure *known, size_t known_count);
} btl_ft_callbacks_t;

/* What local_state answers; running includes sleeping and waiting. */
enum btl_ft_process_state {
    BTL_FT_STATE_UNKNOWN = 0,
    BTL_FT_STATE_RUNNING = 1,
    BTL_FT_STATE_STOPPED = 2,
    BTL_FT_STATE_GONE = 3,
    /* running, but its detector was runnable and got no CPU since this
     * host last looked: its silence is the scheduler's, not its own */
    BTL_FT_STATE_STARVED = 4
};

/* How a failure became known. btl_ft_report_failure() takes the first two;
 * btl_ft_failure_kind() also answers BTL_FT_HUNG. Only BTL_FT_CRASHED (the
 * runtime saw the process end) is left out of the quorum rule's count of
 * unconfirmed silence. */
enum btl_ft_failure_kind {
    BTL_FT_UNREACHABLE = 1, /* a transport error */
    BTL_FT_CRASHED = 2,     /* the runtime saw the process end */
    BTL_FT_HUNG = 3         /* silent past the timeout, declared by its observer */
};

typedef struct btl_ft_config {
    uint32_t size;
    uint32_t self;
    int64_t period_ns;
    int64_t timeout_ns;
    int64_t start_skew_ns;          /* how far apart the job's processes call
                                       btl_ft_start(): the first heartbeat is due
                                       2 * timeout_ns + start_skew_ns after it */
    int ring_order;                 /* enum btl_ft_ring_order */
    int propagator;                 /* enum btl_ft_propagator */
    uint64_t seed;
    const uint32_t *node_of_rank;   /* `size` entries; NULL = all on one node, for the
                                       ring, and no witnesses (the core copies it) */
    size_t max_message_bytes;       /* 0 = BTL_FT_MESSAGE_MAX_BYTES */
    const void *flag_handle;        /* this process's flag handle, <= BTL_FT_HANDLE_MAX_BYTES */
    size_t flag_handle_length;
    uint32_t probe_width;           /* predecessors probed at once when mending: 1 = off,
                                       up to BTL_FT_PROBE_WIDTH_MAX; 0 = the core's default */
    int quorum;                     /* nonzero: a process cut off from at least half of
                                       the processes stops instead of carrying on */
    int64_t quorum_wait_ns;         /* how long such a process waits for the runtime to
                                       confirm those failures first; 0 = the core's default */
    int64_t confirm_ns;             /* how long an observer waits for a timed-out emitter
                                       to answer a PROBE; 0 = the core's default */
    int64_t answer_within_ns;       /* the longest a live process of this host takes to
                                       answer a message (0: at once); the confirmation
                                       window is never shorter */
    int witness;                    /* nonzero, with node_of_rank: ask a process of a silent
                                       emitter's node whether it still runs (local_state) */
    int64_t node_grace_ns;          /* how long, after the timeout, a witness on another
                                       node gets to answer (never less than half the
                                       timeout, so 0 = half the timeout);
                                       BTL_FT_DEFAULT_NODE_GRACE_NS is libmpi's */
    int64_t witness_patience_ns;    /* how long a silent emitter that witnesses see running
                                       is kept, its silence while they saw it starved not
                                       counted (never less than 4 timeouts, so 0 = 4
                                       timeouts); BTL_FT_DEFAULT_WITNESS_PATIENCE_NS is
                                       libmpi's */
    int hierarchy;                  /* enum btl_ft_hierarchy: with NODE, node-mates observe
                                       each other and heartbeats and notices cross nodes
                                       once per node (node_of_rank NULL: one node) */
    const struct btl_ft_known_failure *known_failures; /* failures known before this
                                       detector starts (the last membership's, at a join):
                                       never reported again, and never counted by the
                                       quorum rule; the core copies them */
    size_t known_failure_count;
} btl_ft_config_t;

/* A failure known before a detector starts; kind: enum btl_ft_failure_kind. */
typedef struct btl_ft_known_failure {
    uint32_t rank;
    int kind;
} btl_ft_known_failure_t;

/* The members btl_ft_config_problem() can name: what a caller maps to its
 * own names (the shim: to an MCA variable), never a string to compare. */
enum btl_ft_config_field {
    BTL_FT_FIELD_NONE = 0, /* the configuration is usable */
    BTL_FT_FIELD_CONFIG,   /* the pointer itself is NULL */
    BTL_FT_FIELD_SIZE,
    BTL_FT_FIELD_SELF,
    BTL_FT_FIELD_PERIOD_NS,
    BTL_FT_FIELD_TIMEOUT_NS,
    BTL_FT_FIELD_START_SKEW_NS,
    BTL_FT_FIELD_RING_ORDER,
    BTL_FT_FIELD_PROPAGATOR,
    BTL_FT_FIELD_NODE_OF_RANK,
    BTL_FT_FIELD_MAX_MESSAGE_BYTES,
    BTL_FT_FIELD_FLAG_HANDLE_LENGTH,
    BTL_FT_FIELD_PROBE_WIDTH,
    BTL_FT_FIELD_QUORUM_WAIT_NS,
    BTL_FT_FIELD_CONFIRM_NS,
    BTL_FT_FIELD_ANSWER_WITHIN_NS,
    BTL_FT_FIELD_WITNESS_PATIENCE_NS,
    BTL_FT_FIELD_NODE_GRACE_NS,
    BTL_FT_FIELD_HIERARCHY,
    BTL_FT_FIELD_KNOWN_FAILURES,
    BTL_FT_FIELD_COUNT
};

typedef struct btl_ft_stats {
    uint64_t heartbeats_sent;
    uint64_t heartbeats_missed;
    uint64_t suspicions;
    uint64_t new_observer_sent;
    uint64_t notices_started;
    uint64_t notice_messages_sent;
    uint64_t notices_received;
    uint64_t notices_duplicate;
    uint64_t malformed_dropped;
    uint64_t stale_heartbeats;
    uint64_t confirmations;         /* PROBEs to an emitter that timed out */
    uint64_t confirmed_alive;       /* ... answered in time: false failures avoided */
    uint64_t close_calls;           /* emitter heard after more than 3/4 of the timeout */
    uint64_t late_wakeups;          /* this process ran a quarter timeout past a deadline */
    uint64_t quorum_holds;          /* times it found itself cut off and waited */
    uint64_t witness_queries;       /* timed-out emitters whose node was asked */
    uint64_t witnessed_running;     /* ... seen running there: another timeout given */
    uint64_t witnessed_down;        /* ... seen stopped or gone: declared at the timeout */
    uint64_t witness_answers;       /* questions answered for other observers */
    uint64_t joins_sent;            /* JOIN messages sent (btl_ft_announce_join) */
    uint64_t joins_received;        /* ... received and handed to `joined` */
    uint64_t witnessed_starved;     /* of witnessed_running: seen denied the CPU, silence not counted */
} btl_ft_stats_t;

/* An exception inside the core never unwinds into the caller's C frames:
 * the call that met it returns BTL_FT_BROKEN, the detector is inert from
 * then on (every later call returns BTL_FT_BROKEN at once), and
 * btl_ft_failure() says what happened. */
#define BTL_FT_BROKEN (-2)

/* Returns 0 on success; otherwise writes a message naming the bad field (or
 * the exception met while building the detector) into error (of
 * error_length bytes) and returns -1. */
int btl_ft_create(const btl_ft_config_t *config, const btl_ft_callbacks_t *callbacks,
                  btl_ft_detector_t **out, char *error, size_t error_length);
void btl_ft_destroy(btl_ft_detector_t *detector);
/* The member of `config` that btl_ft_create() would reject first (enum
 * btl_ft_config_field), with what it accepts written into `rule` (of
 * rule_length bytes, in words without units of this API: "must be
 * positive"); BTL_FT_FIELD_NONE when the configuration is usable. For a
 * caller that reports the problem under its own names, as the shim does
 * with the MCA variable behind a member. */
int btl_ft_config_problem(const btl_ft_config_t *config, char *rule, size_t rule_length);
/* The member's name in this API ("timeout_ns"); NULL if unknown. */
const char *btl_ft_config_field_name(int field);

/* The calls below return 0, or BTL_FT_BROKEN. */
int btl_ft_start(btl_ft_detector_t *detector, int64_t now_ns);
/* returns the next deadline in ns, INT64_MAX when none, or BTL_FT_BROKEN */
int64_t btl_ft_tick(btl_ft_detector_t *detector, int64_t now_ns);
/* returns 0 when accepted, -1 when malformed or foreign (dropped and
 * counted), or BTL_FT_BROKEN */
int btl_ft_on_message(btl_ft_detector_t *detector, int64_t now_ns, uint32_t from,
                      const void *bytes, size_t length);
int btl_ft_on_heartbeat_word(btl_ft_detector_t *detector, int64_t now_ns, uint64_t word);
/* kind: enum btl_ft_failure_kind */
int btl_ft_report_failure(btl_ft_detector_t *detector, int64_t now_ns, uint32_t rank, int kind);
/* failures learnt together: one notice names them all (see
 * detector::report_failures) */
int btl_ft_report_failures(btl_ft_detector_t *detector, int64_t now_ns, const uint32_t *ranks,
                           const int *kinds, size_t count);
/* a shrink completed with these world ranks as members (see detector::on_shrunk) */
int btl_ft_on_shrunk(btl_ft_detector_t *detector, int64_t now_ns, const uint32_t *members, size_t count);
/* leaving_too (may be NULL): processes leaving at the same moment (see
 * detector::leave) */
int btl_ft_leave(btl_ft_detector_t *detector, int64_t now_ns, const uint32_t *leaving_too, size_t count);
/* Before leaving, at a connect this process took part in: a JOIN to each
 * of `to` (processes of this membership left out of the connect) naming
 * the union it moves to (see detector::announce_join): `jobs` in the
 * union's order (btl_ft_membership_job_at), none empty, `epoch` the last
 * one's since; `known`
 * sorted by rank, unique, in that union.
 * Returns how many of `known` went; -1, nothing sent, when the arguments
 * are not such a union or the jobs alone do not fit in a message; or
 * BTL_FT_BROKEN. */
long btl_ft_announce_join(btl_ft_detector_t *detector, int64_t now_ns, uint32_t epoch,
                          const struct btl_ft_job_extent *jobs, size_t job_count,
                          const struct btl_ft_known_failure *known, size_t known_count, const uint32_t *to,
                          size_t to_count);
/* Whether `bytes` claim to be a JOIN (the header alone is read): the one
 * message a transport hands to a detector of another union than its
 * sender's, with a `from` of the receiver's choosing (see
 * btl_ft::wire::is_join) */
int btl_ft_is_join(const void *bytes, size_t length);
/* NULL while the detector works; after BTL_FT_BROKEN, what the core met */
const char *btl_ft_failure(const btl_ft_detector_t *detector);

uint32_t btl_ft_emitter(const btl_ft_detector_t *detector);
uint32_t btl_ft_observer(const btl_ft_detector_t *detector);
int btl_ft_is_dead(const btl_ft_detector_t *detector, uint32_t rank);
/* How `rank` failed as this process knows it (enum btl_ft_failure_kind), 0
 * if it did not; may be called from within the callbacks. */
int btl_ft_failure_kind(const btl_ft_detector_t *detector, uint32_t rank);
void btl_ft_get_stats(const btl_ft_detector_t *detector, btl_ft_stats_t *out);

/* Word parsing for MCA values: 0 and the enum value on success, -1 on an
 * unknown word. The *_words strings list what is accepted, for messages. */
int btl_ft_parse_ring_order(const char *word, int *out);
int btl_ft_parse_propagator(const char *word, int *out);
int btl_ft_parse_hierarchy(const char *word, int *out);
extern const char btl_ft_ring_order_words[];   /* "rank|node|shuffle" */
extern const char btl_ft_propagator_words[];   /* "hba|bmg|chord" */
extern const char btl_ft_hierarchy_words[];    /* "flat|node" */
/* The word of an enum value (the inverse of the parsers); NULL if unknown. */
const char *btl_ft_ring_order_name(int ring_order);
const char *btl_ft_propagator_name(int propagator);
const char *btl_ft_hierarchy_name(int hierarchy);

/* The union of the jobs an application is connected to, numbered by (the
 * epoch its job joined at, job, rank in the job): see btl_ft/membership.hpp.
 * A job is named by an identifier every process gives it alike (the
 * runtime's job number). */
typedef struct btl_ft_job_extent {
    uint32_t job;
    uint32_t size;
    uint32_t since; /* the epoch at which it joined the union */
} btl_ft_job_extent_t;
typedef struct btl_ft_membership btl_ft_membership_t;

/* The union of `count` jobs in any order: by (since, job), each job's ranks
 * together and in order, one listed twice counting once with its earliest
 * since, at the latest since as epoch; NULL when there is no job, a job has
 * no process, the union has more processes than a rank can name, or memory
 * runs out. */
btl_ft_membership_t *btl_ft_membership_create(const btl_ft_job_extent_t *jobs, size_t count);
/* The union of two unions, the same whichever comes first; NULL when it
 * has more processes than a rank can name or memory runs out. */
btl_ft_membership_t *btl_ft_membership_merged(const btl_ft_membership_t *a, const btl_ft_membership_t *b);
/* What a process watching `watched` does with a JOIN naming `heard` (see
 * btl_ft::join_verdict) */
enum btl_ft_join_verdict { BTL_FT_JOIN_STALE = 0, BTL_FT_JOIN_FOLLOW = 1, BTL_FT_JOIN_MERGE = 2 };
int btl_ft_membership_verdict(const btl_ft_membership_t *watched, const btl_ft_membership_t *heard);
/* A digest of the jobs: tells two unions of one epoch apart */
uint64_t btl_ft_membership_identity(const btl_ft_membership_t *membership);
void btl_ft_membership_destroy(btl_ft_membership_t *membership);
uint32_t btl_ft_membership_epoch(const btl_ft_membership_t *membership);
uint32_t btl_ft_membership_size(const btl_ft_membership_t *membership);
size_t btl_ft_membership_job_count(const btl_ft_membership_t *membership);
/* the index-th job, in the union's order (index < job_count) */
btl_ft_job_extent_t btl_ft_membership_job_at(const btl_ft_membership_t *membership, size_t index);
/* 0 and the union rank of `job_rank` of `job`; -1 when not a member */
int btl_ft_membership_rank_of(const btl_ft_membership_t *membership, uint32_t job, uint32_t job_rank,
                              uint32_t *rank);
/* 0 and the job and rank in it of a union rank; -1 when rank >= size */
int btl_ft_membership_member_at(const btl_ft_membership_t *membership, uint32_t rank, uint32_t *job,
                                uint32_t *job_rank);

#ifdef __cplusplus
}
#endif

#endif /* BTL_FT_H */
