// An allreduce that completes despite failures (seed 001), fed by the
// detector: every process that returns holds the same value, reduced over a
// contributor set that holds every process not known failed when the root
// decided (every process, on the fast path), each exactly once.
//
// The tree is seed 001's k-nomial tree with its repairs: a process whose
// parent failed sends to its nearest live ancestor (the grandparent, or
// above), and a process adopts the children of a failed child. What the
// seed finds with keep-alives and ACK timeouts comes here from on_failed(),
// which the caller feeds with the detector's conclusions: no timer, no ACK,
// two messages per process when nothing fails (log2 n on the fast path).
//
//   UP    Each process combines its value with the partials of its live
//         subtree. A partial carries its contributor set; one that meets
//         the set already combined is dropped (it came from a failed process
//         whose subtree re-sent around it), so nothing counts twice.
//         Once its subtree is covered (every rank combined or failed) a
//         process freezes its partial and sends it up, again to each new
//         nearest live ancestor if its parent fails.
//   ROOT  The lowest live rank. When covered, it decides, and sends the
//         value and the contributor set to its successor (the next root)
//         alone, as PREPARE.
//   DOWN  The successor sends it as RESULT to the root's live children and
//         its own; each process to its live children, and to the children
//         of a child that fails. A process returns once it holds RESULT.
//   ROOT FAILS  The next lowest live rank becomes root. A process holding
//         the old root's RESULT reports it (HOLD) instead of its partial,
//         and the new root adopts it, so a decision seen by a survivor is
//         never replaced. Nothing from a process known failed is taken, so
//         a late RESULT of a failed root never reaches a process that has
//         moved on to the next one. As only the successor spreads a root's
//         decision, a root the others already declared failed, but not yet
//         stopped, cannot spread a decision the next root does not hold.
//
//   FAST  Values up to fast_max_bytes, in jobs up to fast_max_size, first
//         take recursive doubling while no failure is known: log2 n
//         exchanges, each process sending its combined value to the
//         partner whose rank differs in one bit, the ranks beyond the
//         largest power of two folded in first and out last
//         (survivor_allreduce_fast.cpp). A process that has combined every
//         rank returns. One that learns of a failure, or gets a message of
//         the tree, before that falls back to the tree with its own value
//         alone. One that returned reports its result to the root (HOLD)
//         once the call meets a failure, and to nobody else: a root cannot
//         be covered while such a process lives, since it sends no
//         partial, so the root adopts it, and it spreads under PREPARE
//         like any decision. Sending it down itself could hand a result to
//         a process whose root never adopts it, when the sender is
//         suspected.
//
// Guarantees, with a detector whose failures are permanent (a process
// declared failed stops, as btl_ft fences it): every process alive at the
// end returns the same (value, contributors); each contributor counts once;
// every process alive at the end is a contributor. A process that returned
// and then failed can have held a value nobody else kept only if every
// process holding it failed too (the root, its successor and the first
// processes they sent to). A process that finds itself outside the
// contributors it receives (the others declared it failed) ends `excluded`
// instead. Left open: a root declared failed while it still runs, together
// with the failure of its successor in the same call.
//
// Sequence numbers separate consecutive calls on one communicator; a
// process runs at most one call ahead of any live peer, so the next call's
// early messages are kept and the previous call keeps serving (forwarding
// RESULT, reporting HOLD) until the next one completes.
//
// Rejected alternative: seed 001's own detection (keep-alives and ACKs
// along tree edges, with timeouts computed from the tree): one timeout per
// serial fault, 2 s each in its Table 1, where btl_ft knows of a crash in
// milliseconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "btl_ft/allreduce_wire.hpp"
#include "btl_ft/dead_set.hpp"
#include "btl_ft/knomial_tree.hpp"
#include "btl_ft/rank_ranges.hpp"
#include "btl_ft/types.hpp"

namespace btl_ft {

// Transport contract: a message is delivered at most once, in any order,
// possibly never if either end fails. The bytes are valid during the call.
class collective_transport {
public:
    virtual ~collective_transport() = default;
    virtual void send(rank_t peer, std::span<const std::byte> bytes) = 0;
};

// `into = into (+) value`, for an associative and commutative operation.
// Every process's result is computed by the root alone, so rounding is the
// same everywhere even for floating point.
class reduce_operation {
public:
    virtual ~reduce_operation() = default;
    virtual void combine(std::span<std::byte> into, std::span<const std::byte> value) const = 0;
};

struct allreduce_config {
    rank_t size = 0;
    rank_t self = 0;
    std::uint32_t radix = 2;
    // The longest value a call may have; each call's length is its
    // begin()'s, the same at every process (a message of another length is
    // dropped as malformed).
    std::size_t max_value_bytes = std::size_t{1} << 30;
    // The fast path (FAST above) for values up to this length (0: never) in
    // jobs up to fast_max_size: after a failure each process that took it
    // sends one HOLD to the root, so the root's inbox grows with the job.
    std::size_t fast_max_bytes = 0;
    rank_t fast_max_size = 64;
};

enum class allreduce_status : std::uint8_t {
    idle,      // no call yet
    running,   // the current call has no result here yet
    done,      // result() holds it
    excluded,  // the others declared this process failed: no result for it
};

struct allreduce_stats {
    std::uint64_t partials_sent = 0;
    std::uint64_t results_sent = 0;
    std::uint64_t holds_sent = 0;
    std::uint64_t received = 0;
    std::uint64_t malformed = 0;         // dropped: did not decode
    std::uint64_t from_failed = 0;       // dropped: the sender is known failed
    std::uint64_t out_of_sequence = 0;   // dropped: neither this call, the last, nor the next
    std::uint64_t overlapping = 0;       // partials dropped: they meet what is combined
    std::uint64_t conflicts = 0;         // a second, different decision (never, unless a failure reverted)
    std::uint64_t root_takeovers = 0;    // this process became root of a call after the first root failed
    std::uint64_t exchanges_sent = 0;    // the fast path's messages
    std::uint64_t fast_done = 0;         // calls this process completed by the fast path
    std::uint64_t fast_fallbacks = 0;    // calls this process moved from the fast path to the tree
    std::uint64_t late_exchanges = 0;    // dropped: the call had left the fast path here
    std::uint64_t greetings_sent = 0;    // greet()'s messages
    std::uint64_t greetings = 0;         // received, and dropped
};

class survivor_allreduce {
public:
    survivor_allreduce(const allreduce_config& config, collective_transport& transport,
                       const reduce_operation& operation);
    ~survivor_allreduce();
    survivor_allreduce(const survivor_allreduce&) = delete;
    survivor_allreduce& operator=(const survivor_allreduce&) = delete;

    // Ranks known failed (any order, repeats allowed), at any time.
    void on_failed(std::span<const rank_t> ranks);
    // Sends a GREETING to each peer whose link this process would use
    // first after one or two failures near it: its parent and grandparent
    // (its partials go there when its parent fails, and results come back),
    // and, for a child or grandchild of the root, the root's successor
    // (which sends results down to them). Its receiver drops it. A
    // transport that connects on the first message (TCP) then opens those
    // links now, rather than after a failure, on the repair's critical
    // path. At most 3 messages; the root and its successor each receive
    // one from every child and grandchild of the root.
    void greet();
    // Starts the next call with this process's value (at most max_value_bytes).
    // The previous call must have ended here (done or excluded).
    void begin(std::span<const std::byte> value);
    void on_message(rank_t from, std::span<const std::byte> bytes);
    // The fast path's bound (allreduce_config::fast_max_bytes), between
    // calls. The processes must take the fast path all or none: each sets
    // the same bound before the same call.
    void set_fast_max_bytes(std::size_t max_bytes);

    allreduce_status status() const;
    // The one peer whose message the current call waits for, when it waits
    // for one alone (while nothing is known failed: a step of the fast
    // path, or a result of the tree), else `from` no_rank: lets the caller
    // post a receive for that peer alone, as a collective does, and leave
    // the others' messages queued meanwhile. What that peer sends first may
    // also be a message of the tree (it left the fast path) or of the
    // previous call, so max_bytes bounds any message of this call's value
    // or the previous one's: the peer sends nothing of the next call
    // before what this one awaits.
    struct awaited_message {
        rank_t from = no_rank;
        std::size_t max_bytes = 0;
    };
    awaited_message awaited() const;
    std::span<const std::byte> result() const;      // status done
    const rank_ranges& contributors() const;        // status done
    rank_t decided_by() const;                      // the root that computed it
    const allreduce_stats& stats() const { return stats_; }
    const dead_set& failed() const { return failed_; }
    rank_t size() const { return config_.size; }
    // One line of what the current and previous calls wait for: for a
    // call that takes long, at the caller's verbose level.
    std::string describe() const;

    struct call;  // one call's state (survivor_allreduce.cpp)

private:
    void deliver(rank_t from, std::span<const std::byte> bytes);
    void deliver_early();
    void progress(call& op);
    void progress_up(call& op);
    void progress_down(call& op);
    void decide(call& op);
    void adopt(call& op, std::span<const std::byte> value, const rank_ranges& set, rank_t decided_by, rank_t root);
    void combine(call& op, const rank_ranges& set, std::span<const std::byte> value);
    void handle(call& op, rank_t from, const allreduce_wire::message& message);
    rank_t root() const;                        // the lowest rank not known failed
    rank_t nearest_live_parent(rank_t rank) const;  // or the root
    void live_children(rank_t rank, std::vector<rank_t>& out) const;
    void expand(rank_t rank, std::vector<rank_t>& out, rank_t root) const;
    bool covered(const call& op) const;
    bool prepare(call& op);
    void send_result(call& op, rank_t to, allreduce_wire::msg_type type);
    // the fast path (survivor_allreduce_fast.cpp)
    bool fast_eligible(std::size_t value_bytes) const;
    void start_fast(call& op);
    void progress_fast(call& op);
    void take_exchange(call& op, rank_t from, const allreduce_wire::message& message);
    static std::span<std::byte> exchange_value(call& op, std::uint32_t step);
    rank_t fast_partner(const call& op) const;  // who sends op's current step
    void send_exchange(call& op, std::uint32_t step, rank_t to);
    void finish_fast(call& op, std::span<const std::byte> value);
    void fall_back(call& op);
    bool report_fast_result(call& op);
    rank_t successor() const;  // the lowest rank above this one not known failed
    std::string describe(const call& op) const;

    allreduce_config config_;
    collective_transport& transport_;
    const reduce_operation& operation_;
    knomial_tree tree_;
    dead_set failed_;
    rank_ranges everyone_;  // every rank of the job: a result of the fast path's contributors
    bool self_failed_ = false;
    std::unique_ptr<call> current_;
    std::unique_ptr<call> previous_;
    // Messages for the next call: early_[0, early_count_), the slots
    // beyond kept with their storage.
    struct early_message {
        rank_t from = no_rank;
        std::vector<std::byte> bytes;
    };
    std::vector<early_message> early_;
    std::size_t early_count_ = 0;
    allreduce_wire::message incoming_;  // the message being handled, decoded
    // What the walks of the tree fill, kept so that they allocate only
    // while they grow; one buffer per walk that may run inside another.
    struct walk_buffers {
        std::vector<rank_t> down, delegated;  // progress_down's receivers
        std::vector<rank_t> tree_children;    // live_children's
        std::vector<rank_t> pending, children;  // expand's
    };
    mutable walk_buffers walk_;
    std::vector<std::byte> scratch_;
    allreduce_stats stats_;
};

}  // namespace btl_ft
