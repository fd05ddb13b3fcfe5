// What world_join.cpp keeps for a run where jobs join the first: the
// unions processes run, and each process's detector and JOINs. Included
// by world.cpp only so that the world can own it.
#pragma once

#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "btl_ft/membership.hpp"
#include "world.hpp"

namespace btl_ft::sim {

struct world::join_state {
    // A union some process runs: its numbering, and where its ranks run.
    struct union_view {
        membership of;
        std::shared_ptr<const std::vector<std::uint32_t>> nodes;
        std::shared_ptr<const node_layout> layout;
        std::shared_ptr<const btl_ft::ring> watch;  // its ring
    };
    // A failure a detector knew or a JOIN carried, by process, so that it
    // survives a renumbering.
    using named_failure = std::pair<member, failure_kind>;

    explicit join_state(const membership& own) : first(own) {}
    membership first;                                  // the first job alone, epoch 0
    std::vector<std::unique_ptr<const union_view>> unions;  // index: the events' epoch tag
    std::uint8_t everyone = 0;                         // the union of every job: where all must end
    std::vector<std::uint8_t> union_of;                // per process: the union it runs
    std::vector<std::unique_ptr<detector>> current;    // per process; null: a joiner not started
    std::deque<std::unique_ptr<detector>> left;        // detectors left behind (their counters count)
    std::vector<time_ns> moved_at;                     // when it last moved (never: not yet)
    std::vector<std::uint8_t> connecting;              // a spawner whose connect has not ended
    std::vector<std::uint8_t> follows;                 // a JOIN arrived: its move is scheduled
    std::vector<std::vector<std::uint8_t>> heard;      // unions JOINs named, not yet weighed
    std::vector<std::vector<named_failure>> heard_known;
    std::uint64_t dropped = 0;                         // inputs for a union left behind
};

}  // namespace btl_ft::sim
