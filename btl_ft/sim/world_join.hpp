// What world_join.cpp keeps for a run where a second job joins: the two
// memberships and the detectors of each. Included by world.cpp only so that
// the world can own it.
#pragma once

#include <array>
#include <deque>
#include <memory>
#include <vector>

#include "btl_ft/membership.hpp"
#include "world.hpp"

namespace btl_ft::sim {

struct world::join_state {
    join_state(rank_t first_size, rank_t joiners)
        : first(1, first_size), all(first.joined(std::array{job_extent{0, joiners}})) {}
    membership first;  // the first job alone, epoch 0
    membership all;    // the union, epoch 1
    std::shared_ptr<const ring> first_ring;
    std::deque<detector> own;                          // the first job's, on its own ring
    std::vector<std::unique_ptr<detector>> joined;     // the union's, once a process has one
    std::vector<std::uint8_t> epoch;                   // the detector each process runs
    std::vector<time_ns> moved_at;                     // when it moved to the union's (never: not yet)
    // What the JOINs a process left out of the connect received carried,
    // in the union's ranks, until it moves (sorted by rank)
    std::vector<std::vector<known_failure>> heard;
    std::vector<std::uint8_t> follows;                 // a JOIN arrived: its move is scheduled
    std::uint64_t dropped = 0;                         // inputs for an epoch left behind
};

}  // namespace btl_ft::sim
