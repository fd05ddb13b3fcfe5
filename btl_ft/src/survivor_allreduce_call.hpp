// One call's state of the survivor allreduce (survivor_allreduce.hpp),
// shared by its tree (survivor_allreduce.cpp) and its fast path
// (survivor_allreduce_fast.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "btl_ft/allreduce_wire.hpp"
#include "btl_ft/survivor_allreduce.hpp"

namespace btl_ft {

struct survivor_allreduce::call {
    std::uint32_t sequence = 0;
    // UP: what is combined so far, and the partial frozen from it.
    std::vector<std::byte> value;
    rank_ranges combined;
    bool frozen = false;
    std::vector<std::byte> partial_value;
    rank_ranges partial_set;
    rank_t partial_sent_to = no_rank;
    // A HOLD that came before this process knew it was root.
    std::optional<allreduce_wire::message> pending_hold;
    // DOWN: the decision, and whom it went to under `result_root`.
    bool decided = false;
    std::vector<std::byte> result_value;
    rank_ranges result_set;
    bool self_in_result = false;  // result_set holds this process: status() asks every turn
    rank_t decided_by = no_rank;
    rank_t result_root = no_rank;
    std::vector<rank_t> result_sent_to;  // sorted
    rank_t hold_sent_to = no_rank;
    // A root sends its decision to its successor (the next root) only, as
    // PREPARE; the successor sends it down on the root's behalf.
    rank_t prepared = no_rank;
    rank_t delegated_by = no_rank;  // the root this process sends down for
    // FAST: recursive doubling while nothing fails. `step` is the next
    // step this process takes; the values of exchanges wait by step until
    // it does, each in its slice of exchange_values. `combined` stays this
    // process's own set meanwhile: what it has combined follows from the
    // step.
    bool fast = false;
    std::uint32_t step = 0;
    bool step_sent = false;  // this process's message of `step` has gone
    bool fell_back = false;  // the call left the fast path for the tree
    std::vector<std::byte> exchange_values;
    std::uint64_t exchange_held = 0;  // bit `step`: its value has come (steps < 34)
    std::vector<std::byte> own;  // its own value, for a fall back to the tree
    // The call met a failure (one known after it began) or a message of
    // the tree.
    bool disturbed = false;
    // Decided by the fast path, and not heard from the root's chain since:
    // once the call is disturbed, such a result goes to the root (HOLD) and
    // to nobody else (survivor_allreduce_fast.cpp says why).
    bool fast_result = false;

    // Every field back to its default, for the call `next_sequence`; the
    // buffers keep their capacity, so that calls in a row allocate nothing
    // once the first have run. A field left out of the list is renewed all
    // the same, only without its capacity.
    void renew(std::uint32_t next_sequence) {
        call fresh;
        fresh.sequence = next_sequence;
        reuse(fresh.value, value);
        reuse(fresh.combined, combined);
        reuse(fresh.partial_value, partial_value);
        reuse(fresh.partial_set, partial_set);
        reuse(fresh.result_value, result_value);
        reuse(fresh.result_set, result_set);
        reuse(fresh.result_sent_to, result_sent_to);
        reuse(fresh.exchange_values, exchange_values);
        reuse(fresh.own, own);
        *this = std::move(fresh);
    }

private:
    template <typename Buffer>
    static void reuse(Buffer& into, Buffer& from) {
        into = std::move(from);
        into.clear();
    }
};

}  // namespace btl_ft
