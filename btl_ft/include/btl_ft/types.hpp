// Vocabulary shared by every part of the detector core: ranks, time, the
// selectable ring orders and propagators. Time is always injected by the
// caller as monotonic nanoseconds; the core never reads a clock.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace btl_ft {

using rank_t = std::uint32_t;
using time_ns = std::int64_t;

inline constexpr time_ns never = std::numeric_limits<time_ns>::max();
inline constexpr rank_t no_rank = std::numeric_limits<rank_t>::max();

// How ranks are placed on the observation ring.
enum class ring_order : std::uint8_t {
    rank,     // 0, 1, ..., n-1: upstream's order
    node,     // interleave nodes so ring neighbours never share a node
    shuffle,  // seeded random permutation
};

// Which overlay carries failure notices.
enum class propagator_kind : std::uint8_t {
    hba,    // two hypercube broadcasts over the alive list (seed 002)
    bmg,    // binomial graph, both directions (seed 000)
    chord,  // forward-only binomial graph (seed 003)
};

// Who observes whom, and who carries notices (seed 000).
enum class hierarchy_kind : std::uint8_t {
    flat,  // one ring and one overlay over every process (seed 002)
    node,  // node-mates observe each other, the ring crosses nodes once per
           // node, and notices cross nodes once per node, then go out in a
           // local star (node_layout.hpp, overlay.hpp)
};

// How a failure became known. Only a confirmed failure is proof that the
// process is gone rather than on the other side of a silent network cut, so
// only `crashed` is left out of the quorum rule's count (detector_quorum.cpp).
enum class failure_kind : std::uint8_t {
    suspected,    // silence past the timeout, confirmed by nobody: a hang, or a cut
    unreachable,  // a transport error: a dead peer, or a link that went down
    crashed,      // the runtime saw the process end (its daemon reaped it)
};

// What a process's host says about a process of the same node (its /proc
// entry, in MPI): the answer a witness gives for an emitter that went
// silent. `running` covers runnable, sleeping and waiting on a lock: the
// process exists and is not stopped, it may only be starved of CPU.
// `starved` is running with proof of that: its detector was runnable, and
// got no CPU time, since the host last looked.
enum class process_state : std::uint8_t {
    unknown = 0,  // not on this node, or the host cannot tell
    running = 1,
    stopped = 2,  // SIGSTOP, or traced: it cannot answer until resumed
    gone = 3,     // no such process any more (exited, or a zombie)
    starved = 4,
};

std::optional<ring_order> parse_ring_order(std::string_view word);
std::optional<propagator_kind> parse_propagator(std::string_view word);
std::optional<hierarchy_kind> parse_hierarchy(std::string_view word);
std::string_view name_of(ring_order order);
std::string_view name_of(propagator_kind kind);
std::string_view name_of(hierarchy_kind kind);

}  // namespace btl_ft
