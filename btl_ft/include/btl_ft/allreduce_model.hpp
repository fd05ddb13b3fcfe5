// The survivor allreduce's failure-free latency in seed 001's LogP setting
// (§5.2): a message takes its sender's port for o, travels L, then takes
// its receiver's port for o, and a port serves one message at a time.
// Computed from the k-nomial tree alone, in O(n log n) per radix: the same
// times `ftsim allreduce` gets by running every state machine (a sim test
// holds the two equal), cheap enough for a communicator to choose its
// radix at its first call as the seed chooses it, by the lowest latency.
//
// The call's messages, when nothing fails: each process sends its partial
// to its parent once it has combined its children's; the root, covered,
// sends its decision to its successor (rank 1) alone; rank 1 sends it to
// the root's other children, and each process to its own.
#pragma once

#include <cstdint>

#include "btl_ft/types.hpp"

namespace btl_ft {

struct logp_cost {
    time_ns latency = 10;  // L
    time_ns overhead = 1;  // o, at each end
};

// Until the last process returns, for `size` processes from a common start.
time_ns allreduce_latency(rank_t size, std::uint32_t radix, const logp_cost& cost);

// The fast path's (recursive doubling, survivor_allreduce_fast.cpp): its
// rounds of L + 2o, and two more to fold in and out the ranks beyond the
// largest power of two. An upper bound: the simulation can be up to a
// round faster, where folding in overlaps the first round
// (AllreduceModel.FastPathWithinARoundOfTheSimulation).
time_ns allreduce_fast_latency(rank_t size, const logp_cost& cost);

// The fast path's rounds: log2 of the largest power of two not above the
// size, and two more to fold in and out the ranks beyond it.
std::uint32_t allreduce_fast_rounds(rank_t size);

// Whether the fast path beats the tree at `radix` for `size` processes.
bool allreduce_fast_path_pays(rank_t size, std::uint32_t radix, const logp_cost& cost);

// The same where processes yield the CPU while they wait (an
// oversubscribed node), which the LogP model does not weigh: there each
// wait lasts until a partner is scheduled, and every process of the fast
// path waits once per round, against once or twice for most processes of
// the tree. It pays only in fewer rounds than the flat tree's three steps
// (up, to the successor, down): at 2 and 4 processes. Measured on 2 cores
// (docs/survivor-allreduce.md): faster than the flat tree at 4, slower at
// 8 and 16.
bool allreduce_fast_path_pays_yielding(rank_t size);

// The radix of lowest latency, the smallest of equals, searched as ftsim
// does: from 2 up to the size (at most 64), stopping 8 radices past the
// best so far. 2 for a single process.
std::uint32_t allreduce_best_radix(rank_t size, const logp_cost& cost);

}  // namespace btl_ft
