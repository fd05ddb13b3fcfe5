// The failure detector of one process: observation ring, ring mending and
// failure-notice broadcast (seed 002, Algorithm 1, with the batching and ring
// orders of seeds 000 and 003), as a single-threaded state machine.
//
// The caller owns time and I/O. It calls start() once, then tick() at or
// after every deadline tick() returned, on_message() for every detector
// message that arrives, and on_heartbeat_word() with what it read from the
// local heartbeat flag (or what an active-message heartbeat carried). The
// detector answers through the transport and the sink below. It reads no
// clock, starts no thread, and allocates nothing on the heartbeat path.
//
// Rejected alternative: upstream's detector calls the clock and BML from an
// event callback, so it cannot be tested or simulated outside mpirun.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "btl_ft/btl_ft.h"
#include "btl_ft/membership.hpp"
#include "btl_ft/types.hpp"

namespace btl_ft {

class ring;
class dead_set;
class node_layout;

// Transport contract.
// - put_heartbeat(): a one-sided write of `word` into the observer's
//   heartbeat flag. Later writes overwrite earlier ones; a lost or late
//   write is allowed (it looks like a missed period). False when there is no
//   one-sided path to that observer: the detector then sends the word as a
//   HEARTBEAT message, which the receiver hands to on_message() like any
//   other (its sender is checked against the word's emitter).
// - send(): an active message, delivered at most once, in any order, possibly
//   never if the peer is dead or unreachable. The bytes are only valid during
//   the call. "Unreachable" is not reported through send(): the caller hands
//   such knowledge to detector::report_failure().
// - on_observer_handle(): a NEWOBSERVER arrived carrying the flag handle (for
//   example an RDMA remote key) of this process's new observer.
// - local_state(): what this host knows of `rank`, a process of the same
//   node (never of another node: `unknown`). Asked when an emitter of this
//   node times out, and when a peer asks this process to witness for one.
// Calls happen synchronously from within the detector's entry points.
class transport {
public:
    virtual ~transport() = default;
    virtual bool put_heartbeat(rank_t observer, std::uint64_t word) = 0;
    virtual void send(rank_t peer, std::span<const std::byte> bytes) = 0;
    virtual void on_observer_handle(rank_t /*observer*/, std::span<const std::byte> /*handle*/) {}
    virtual process_state local_state(rank_t /*rank*/) { return process_state::unknown; }
};

// The union a process moved to at a connect (membership.hpp), as a JOIN
// tells it to the processes of its old union that took no part: the new
// union's epoch and jobs, and the failures known there, in its ranks.
struct join_notice {
    std::uint32_t epoch = 0;
    std::span<const job_extent> jobs;
    std::span<const known_failure> known;  // sorted by rank, unique
};

// Where conclusions go. on_failed() is called once per newly known failed
// rank set (never twice for one rank); on_declared_dead_self() when this
// process learns that others consider it dead, or (told_by == self, with
// detector_config::quorum) finds itself cut off with the smaller part of the
// job: either way it must stop talking.
class sink {
public:
    virtual ~sink() = default;
    virtual void on_failed(std::span<const rank_t> ranks) = 0;
    virtual void on_declared_dead_self(rank_t told_by, const char* reason) = 0;
    // Called just before on_failed() for the ranks this process declared
    // failed itself (its emitter timed out, or a probed predecessor stayed
    // silent): nobody else observed them, so this is where a caller fences.
    virtual void on_suspected(std::span<const rank_t> /*ranks*/) {}
    // The emitter was heard again after `silent_ns` without a word, more
    // than three quarters of the timeout: a false failure came close.
    virtual void on_close_call(rank_t /*emitter*/, time_ns /*silent_ns*/) {}
    // A JOIN arrived from `from`: its union moved on while this process took
    // no part in the connect. The caller checks that the union is newer and
    // holds this process, then leave()s this detector (after the call, never
    // inside it) and starts one over the new union knowing `join.known`
    // and its own failures. Accepted from any process of this membership,
    // even one known failed or departed: the union it names exists.
    virtual void on_join(rank_t /*from*/, const join_notice& /*join*/) {}
};

struct detector_config {
    rank_t size = 0;
    rank_t self = 0;
    time_ns period_ns = 0;         // eta: heartbeat period
    time_ns timeout_ns = 0;        // delta: suspicion timeout, > period_ns
    // How far apart the job's processes call start() (the MPI shim: the
    // skew of leaving MPI_Init; ftsim: one period of random phases).
    time_ns start_skew_ns = 0;
    propagator_kind propagator = propagator_kind::hba;
    std::size_t max_message_bytes = BTL_FT_MESSAGE_MAX_BYTES;  // encoded notices stay below this
    std::span<const std::byte> flag_handle;  // this process's flag handle, sent in NEWOBSERVER (<= 64 bytes; copied)
    // How many predecessors an observer that mends after a failure watches
    // at once: its new emitter plus probe_width - 1 PROBEs to the ones
    // behind it, so a row of hung neighbours is found in one 2*timeout
    // instead of one each. The width used is min(probe_width,
    // floor(log2 size)), the failures the notice overlay tolerates anyway;
    // 1 turns probing off. At most max_probe_width.
    std::uint32_t probe_width = BTL_FT_PROBE_WIDTH_MAX;
    // A process that loses contact with at least half of the processes
    // alive when the failures began (exactly half: without the lowest of
    // them) stops, declared dead by itself, instead of reporting them
    // failed: a node cut off from the rest must not go on as a second set
    // of survivors. Off by default in the core (the simulator studies
    // failures, not partitions); the MPI shim turns it on.
    bool quorum = false;
    // How long a process that the count finds cut off waits, holding its
    // new failures back from the sink, for the runtime to confirm them
    // (a fenced hang is killed and reported within milliseconds; across a
    // real cut nothing is confirmed) before it stops.
    time_ns quorum_wait_ns = 500'000'000;
    // How long an observer whose emitter timed out waits for the answer to
    // a PROBE sent to that emitter before declaring it failed. 0: a fifth
    // of the timeout, at most 20 ms (detector_ring.cpp, confirm_window).
    time_ns confirm_ns = 0;
    // The longest a live process may take to answer a message, because of
    // how its host drives the detector (0: at once). The MPI driver
    // progresses a process whose application computes outside MPI every
    // half period, so it sets one period here. The confirmation window is
    // never shorter, or a computing emitter would be declared failed for
    // answering on its host's schedule.
    time_ns answer_within_ns = 0;
    // The node of every rank (size entries), shared by every detector of a
    // simulation; null: unknown, no witness is asked. An observer whose
    // emitter timed out asks a witness on the emitter's node (itself when
    // they share one) whether the emitter still runs: a running emitter
    // is only starved and gets another timeout, as long as it has been
    // silent for less than witness_patience(); a stopped or vanished one
    // is declared at once.
    std::shared_ptr<const std::vector<std::uint32_t>> node_of_rank;
    // How long a silent emitter that witnesses keep seeing running is kept
    // (never less than 4 timeouts): then it is declared failed all the same
    // (a wedged detector thread, a link that carries nothing from it), so a
    // witness delays detection, never prevents it. On 2 cores shared by 2
    // emulated nodes the kernel starved whole processes for up to 230 ms.
    // Silence while a witness saw it starved (its detector runnable and not
    // run) is not counted: the scheduler, not the emitter, is slow.
    time_ns witness_patience_ns = BTL_FT_DEFAULT_WITNESS_PATIENCE_NS;
    // How long, after the timeout, a witness on another node gets to
    // answer (never less than half the timeout: its answer crosses two
    // hosts' schedules). No answer means that every process of the
    // emitter's node we asked is silent: the node is lost, cut off, or
    // starved of CPU as a whole, and only the grace tells the last from
    // the others. Its price: a lost node is declared this much after the
    // timeout, not half a timeout.
    time_ns node_grace_ns = BTL_FT_DEFAULT_NODE_GRACE_NS;
    // One level or two (seed 000). With `node`, `layout` is the job's and
    // the ring is ring::make_grouped's: node-mates observe each other and
    // the ring crosses to another node once per node. An emitter on another
    // node that falls silent with every witness asked there (two, when the
    // node has them) is a lost node: all its processes are declared in one
    // notice. Notices travel by node_overlay_hops, once per node and then
    // in a local star. Every process of a job must use the same hierarchy.
    hierarchy_kind hierarchy = hierarchy_kind::flat;
    std::shared_ptr<const node_layout> layout;
    // Failures known before this detector existed: the previous detector's,
    // at a join (membership.hpp), sorted by rank. They start in the failed
    // set, are never reported to the sink again and do not count toward
    // the quorum rule. Read by the constructor only (not kept).
    std::span<const known_failure> known_failures;

    // --- derived values: each has this one formula, which the detector,
    // ftsim's bounds and the tests all use ---

    // The first deadline after start(): the 2 timeouts a new link gets
    // after mending (one message delay for NEWOBSERVER, one for the
    // heartbeat), plus the start skew.
    time_ns first_deadline_after() const { return 2 * timeout_ns + start_skew_ns; }
    // How long an observer whose emitter timed out waits for the answer to
    // its PROBE: confirm_ns or its default, never less than answer_within_ns.
    time_ns confirm_window() const;
    // How long before the timeout the observer starts confirming, so that
    // an emitter that answers nothing is declared at the timeout, not a
    // window after it: the window, leaving at least one period of silence.
    time_ns confirm_lead() const;
    // How long after the timeout an emitter that answers nothing is
    // declared: what is left of the window after its lead (0 unless the
    // window is longer than the timeout less one period).
    time_ns probe_wait_after_timeout() const { return confirm_window() - confirm_lead(); }
    // How long after the timeout a witness on another node gets.
    time_ns remote_witness_wait() const { return node_grace_ns > timeout_ns / 2 ? node_grace_ns : timeout_ns / 2; }
    // How long an observer that asked a witness on another node waits for
    // the census's answers: the witness's wait, never shorter than the
    // PROBE's window.
    time_ns census_window() const {
        return remote_witness_wait() > confirm_window() ? remote_witness_wait() : confirm_window();
    }
    time_ns witness_patience() const {
        return witness_patience_ns > 4 * timeout_ns ? witness_patience_ns : 4 * timeout_ns;
    }
    // Predecessors an observer watches at once: beyond floor(log2 size)
    // overlapping failures the notice overlay gives no guarantee anyway.
    std::uint32_t probe_width_used() const;
};

// The one way a detector_config is built, by the shim (through the C ABI),
// ftsim and the unit tests' fakes: the job, the two timings, and libmpi's
// defaults (btl_ft.h) for everything else, which the caller then changes.
detector_config make_config(rank_t size, rank_t self, time_ns period_ns, time_ns timeout_ns);

// The confirmation window when detector_config::confirm_ns is 0: long
// enough for a PROBE and its answer between two running detector threads,
// short so that a real hang is declared a few milliseconds after the timeout.
constexpr time_ns default_confirm_ns(time_ns timeout_ns) {
    return timeout_ns / 5 < 20'000'000 ? timeout_ns / 5 : 20'000'000;
}

// Each detector holds max_probe_width - 1 probe slots of 16 bytes: kept
// small because the simulator holds a million detectors.
inline constexpr std::uint32_t max_probe_width = BTL_FT_PROBE_WIDTH_MAX;

// Counters a benchmark or the shim can read; all monotonic.
struct detector_stats {
    std::uint64_t heartbeats_sent = 0;
    std::uint64_t heartbeats_missed = 0;    // periods skipped, from sequence gaps
    std::uint64_t suspicions = 0;           // emitter timed out (task T3)
    std::uint64_t new_observer_sent = 0;
    std::uint64_t notices_started = 0;      // broadcasts this process initiated
    std::uint64_t notice_messages_sent = 0; // every notice message, initiated or forwarded
    std::uint64_t notices_received = 0;
    std::uint64_t notices_duplicate = 0;
    std::uint64_t malformed_dropped = 0;    // rejected by the decoder
    std::uint64_t stale_heartbeats = 0;     // heartbeat word from a rank that is not our emitter
    std::uint64_t probes_sent = 0;          // PROBEs to predecessors beyond a new emitter
    std::uint64_t confirmations = 0;        // PROBEs to an emitter that timed out
    std::uint64_t confirmed_alive = 0;      // ... that it answered in time: a false failure avoided
    std::uint64_t close_calls = 0;          // emitter heard after > 3/4 of the timeout of silence
    std::uint64_t late_wakeups = 0;         // tick() ran more than a quarter timeout past its deadline
    std::uint64_t quorum_holds = 0;         // times the count found this process cut off and it waited
    std::uint64_t witness_queries = 0;      // emitters that timed out and had a witness asked
    std::uint64_t witnessed_running = 0;    // ... that the witness saw running: another timeout given
    std::uint64_t witnessed_starved = 0;    // ... of those, seen denied the CPU: that silence not counted
    std::uint64_t witnessed_down = 0;       // ... that it saw stopped or gone: declared at the timeout
    std::uint64_t witness_answers = 0;      // WITNESS queries this process answered for peers
    std::uint64_t censuses = 0;             // censuses started (an emitter declared whose node was silent)
    std::uint64_t census_probes = 0;        // PROBEs they sent
    std::uint64_t joins_sent = 0;           // JOIN messages sent (announce_join)
    std::uint64_t joins_received = 0;       // ... received and handed to the sink
};

// The 64-bit heartbeat word: emitter rank in the high 32 bits, sequence
// number in the low 32 bits. A word from a replaced emitter is recognised.
constexpr std::uint64_t heartbeat_word(rank_t emitter, std::uint32_t sequence) {
    return (std::uint64_t{emitter} << 32) | sequence;
}
constexpr rank_t heartbeat_emitter(std::uint64_t word) { return static_cast<rank_t>(word >> 32); }
constexpr std::uint32_t heartbeat_sequence(std::uint64_t word) { return static_cast<std::uint32_t>(word); }

// The first field of a configuration that the detector cannot use: which
// (a member of btl_ft_config_t, most of them also of detector_config), its
// value, and what it accepts in words a user of any host can read ("must
// be positive").
struct config_problem {
    btl_ft_config_field field;
    long long value;
    std::string rule;
};
std::optional<config_problem> find_config_problem(const detector_config& config);
// The field's name in btl_ft_config_t ("timeout_ns"); "?" if unknown.
const char* name_of(btl_ft_config_field field);
// "field (value) rule", the problem on one line.
std::string describe(const config_problem& problem);
// Empty when `config` is usable; otherwise that problem on one line. The
// detector asserts on it.
std::string config_error(const detector_config& config);

// Intervals above this are rejected, so deadline arithmetic cannot overflow.
inline constexpr time_ns max_interval_ns = time_ns{1} << 52;

// Callbacks of transport and sink run inside the entry points below and must
// not call back into the same detector (asserted). tick() may be called at
// any time: it runs only what is due and returns the next deadline.
class detector {
public:
    // `ring` is shared, immutable and identical at every process.
    detector(const detector_config& config, std::shared_ptr<const ring> ring,
             transport& transport, sink& sink);
    ~detector();
    detector(const detector&) = delete;
    detector& operator=(const detector&) = delete;

    void start(time_ns now);
    // Runs due timers; returns the next deadline (never if none).
    time_ns tick(time_ns now);
    // Returns false when the message was malformed or foreign (dropped and counted).
    bool on_message(time_ns now, rank_t from, std::span<const std::byte> bytes);
    void on_heartbeat_word(time_ns now, std::uint64_t word);
    // A failure learnt elsewhere: `crashed` from the runtime (the process
    // ended), `unreachable` from a transport error. A crash report for a
    // rank already failed confirms it (see detector_quorum.cpp).
    void report_failure(time_ns now, rank_t rank, failure_kind kind = failure_kind::unreachable);
    struct failure_report {
        rank_t rank;
        failure_kind kind;
    };
    // Failures learnt together (node-mates found ended in one look): as
    // many report_failure() calls, but one notice names them all, where
    // one call each would send a wave of notices per failure.
    void report_failures(time_ns now, std::span<const failure_report> reports);
    // A shrink that every process this one believes alive took part in
    // completed with `members` (world ranks): each of them answered, so
    // the failures known so far are settled and stop counting toward the
    // quorum rule. A smaller shrink proves nothing and changes nothing.
    void on_shrunk(time_ns now, std::span<const rank_t> members);
    // Clean departure (MPI_Finalize): tells the observer so it is not suspected.
    // `leaving_too`: processes that leave at the same moment (the rest of this
    // process's job, which reaches MPI_Finalize together, in a union with
    // jobs that go on). The LEAVE names those of them it passes, so that an
    // observer that stays mends past all of them at once: each is stopped
    // when the others' LEAVE arrives, and could not answer for itself.
    void leave(time_ns now, std::span<const rank_t> leaving_too = {});
    // At a connect this process took part in, before it leaves this
    // detector: a JOIN to each of `to` (the processes of this membership
    // that took no part; self and known failures are skipped) naming the
    // union it moves to. Failures that do not fit in one message are left
    // out, from the highest rank (the next detector finds them again).
    // Returns how many failures went; -1, and nothing sent, when the jobs
    // alone do not fit.
    long announce_join(time_ns now, const join_notice& next, std::span<const rank_t> to);

    time_ns next_deadline() const;  // what tick() would return now, without running anything

    // Hints from a caller that knows this detector is called soon (the
    // simulator looks ahead in its event queue, where the next process is
    // rarely in the cache): pull its state, then the sets a message is
    // checked against, towards the cache. They change nothing; the second
    // reads the state, so it should come a few calls after the first.
    void prefetch_state() const;
    void prefetch_sets() const;

    rank_t self() const;
    rank_t emitter() const;
    rank_t observer() const;
    bool stopped() const;  // left, or declared dead
    const dead_set& dead() const;
    failure_kind kind_of(rank_t rank) const;  // of a rank in dead()
    const detector_stats& stats() const;

    struct state;  // opaque; public only so the core's own helpers can name it

private:
    std::unique_ptr<state> state_;
};

}  // namespace btl_ft
