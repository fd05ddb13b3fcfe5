// One call's state of the survivor allreduce (survivor_allreduce.hpp),
// shared by its tree (survivor_allreduce.cpp) and its fast path
// (survivor_allreduce_fast.cpp). Two parts, so that renewing a call for
// the next one costs a few stores, not a new object: its buffers, which
// keep their capacity (calls in a row allocate nothing once the first
// have run), and everything else, which goes back to its defaults.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "btl_ft/allreduce_wire.hpp"
#include "btl_ft/survivor_allreduce.hpp"

namespace btl_ft {

struct survivor_allreduce_call_buffers {
    // UP: what is combined so far, and the partial frozen from it.
    std::vector<std::byte> value;
    rank_ranges combined;
    std::vector<std::byte> partial_value;
    rank_ranges partial_set;
    // DOWN: the decision, and whom it went to.
    std::vector<std::byte> result_value;
    rank_ranges result_set;
    std::vector<rank_t> result_sent_to;  // sorted
    // FAST: the values of exchanges that came before their step, a slice
    // per step; only grown, as exchange_held says which hold a value.
    std::vector<std::byte> exchange_values;
    std::vector<std::byte> own;  // its own value, for a fall back to the tree

    // Every buffer above but exchange_values, emptied.
    void clear() {
        value.clear();
        combined.clear();
        partial_value.clear();
        partial_set.clear();
        result_value.clear();
        result_set.clear();
        result_sent_to.clear();
        own.clear();
    }
};

struct survivor_allreduce_call_state {
    std::uint32_t sequence = 0;
    bool frozen = false;  // UP: the partial is frozen
    rank_t partial_sent_to = no_rank;
    // A HOLD that came before this process knew it was root.
    std::optional<allreduce_wire::message> pending_hold;
    bool decided = false;
    bool self_in_result = false;  // result_set holds this process: status() asks every turn
    rank_t decided_by = no_rank;
    rank_t result_root = no_rank;  // DOWN: the root the result goes down under
    rank_t hold_sent_to = no_rank;
    // A root sends its decision to its successor (the next root) only, as
    // PREPARE; the successor sends it down on the root's behalf.
    rank_t prepared = no_rank;
    rank_t delegated_by = no_rank;  // the root this process sends down for
    // FAST: recursive doubling while nothing fails. `step` is the next
    // step this process takes; the values of exchanges wait by step until
    // it does. `combined` stays this process's own set meanwhile: what it
    // has combined follows from the step.
    bool fast = false;
    std::uint32_t step = 0;
    bool step_sent = false;  // this process's message of `step` has gone
    bool fell_back = false;  // the call left the fast path for the tree
    std::uint64_t exchange_held = 0;  // bit `step`: its value has come (steps < 34)
    // The call met a failure (one known after it began) or a message of
    // the tree.
    bool disturbed = false;
    // Decided by the fast path, and not heard from the root's chain since:
    // once the call is disturbed, such a result goes to the root (HOLD) and
    // to nobody else (survivor_allreduce_fast.cpp says why).
    bool fast_result = false;
};

struct survivor_allreduce::call : survivor_allreduce_call_buffers, survivor_allreduce_call_state {
    // For the call `next_sequence`.
    void renew(std::uint32_t next_sequence) {
        survivor_allreduce_call_buffers::clear();
        static_cast<survivor_allreduce_call_state&>(*this) = survivor_allreduce_call_state{};
        sequence = next_sequence;
    }
};

}  // namespace btl_ft
