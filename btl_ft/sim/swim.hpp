// The randomized probing of SWIM-like detectors, seed 002 Sections 3.4 and
// 4.3: in each round every process probes one other process chosen
// uniformly. Measured per run: rounds until every process has been probed at
// least once (Figure 6) and, per round, the largest number of probes landing
// on one process (Figure 7, L(N)).
//
// Both quantities depend only on who picks whom, not on message timing, so
// this mode draws the choices directly instead of going through the event
// queue; a round costs O(N) and 100,000 processes take milliseconds.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "btl_ft/types.hpp"

namespace btl_ft::sim {

struct swim_run {
    std::uint32_t rounds_to_cover = 0;
    std::uint32_t max_probes = 0;        // over every round of the run
    double mean_round_max_probes = 0;    // the per-round maximum, averaged over rounds
    std::uint32_t first_round_max_probes = 0;
};

swim_run simulate_swim(rank_t nodes, std::uint64_t run_seed);

// Runs `runs` SWIM simulations from `seed` and writes one JSON line.
void run_swim(rank_t nodes, std::uint64_t seed, std::uint32_t runs, std::ostream& out);

}  // namespace btl_ft::sim
