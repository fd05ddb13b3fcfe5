// The survivor allreduce's fast path (FAST in survivor_allreduce.hpp):
// recursive doubling over the largest power of two p not above the size,
// the ranks p..n-1 folded into ranks 0..n-p-1 first and handed the result
// last. Steps: 0 the fold in, 1..m the doublings (at step s the partner is
// the rank that differs in bit s-1), m+1 the fold out; m = log2 p.
//
// Why a process that returned from it reports to the root alone: a
// process P that returned value V sends no partial, so while P lives in
// the root's view the root cannot be covered and waits for P's HOLD, which
// it adopts; and every process that holds V took it from the fast path or
// from the root's chain. Had P sent V down itself, a process C could hold
// V while a root that (rightly) declared P failed decides without it, from
// a partial of C that reached it around P.
#include <algorithm>
#include <bit>

#include "btl_ft/assert.hpp"
#include "btl_ft/survivor_allreduce.hpp"
#include "survivor_allreduce_call.hpp"

namespace btl_ft {
namespace {

struct doubling {
    rank_t power;          // the largest power of two not above the size
    std::uint32_t rounds;  // its log2
};

doubling doubling_of(rank_t size) {
    const rank_t power = std::bit_floor(size);
    return {power, static_cast<std::uint32_t>(std::countr_zero(power))};
}

std::uint64_t bit(std::uint32_t step) { return std::uint64_t{1} << step; }

// Who sends `self` its message of `step`: no_rank if nobody does.
rank_t exchange_sender(rank_t size, rank_t self, std::uint32_t step) {
    const auto [power, rounds] = doubling_of(size);
    if (self >= power) return step == rounds + 1 ? self - power : no_rank;
    if (step == 0) return self + power < size ? self + power : no_rank;
    if (step <= rounds) return self ^ (rank_t{1} << (step - 1));
    return no_rank;
}

}  // namespace

void survivor_allreduce::set_fast_max_bytes(std::size_t max_bytes) {
    BTL_FT_ASSERT(status() != allreduce_status::running, "the fast path's bound set during a call");
    config_.fast_max_bytes = max_bytes;
}

bool survivor_allreduce::fast_eligible(std::size_t value_bytes) const {
    return config_.fast_max_bytes > 0 && value_bytes <= config_.fast_max_bytes && config_.size >= 2 &&
           config_.size <= config_.fast_max_size && failed_.empty();
}

void survivor_allreduce::start_fast(call& op) {
    op.fast = true;
    op.own = op.value;  // for a fall back to the tree
    const std::size_t slices = (doubling_of(config_.size).rounds + 2) * op.value.size();
    if (op.exchange_values.size() < slices) op.exchange_values.resize(slices);
    op.exchange_held = 0;
}

std::span<std::byte> survivor_allreduce::exchange_value(call& op, std::uint32_t step) {
    return std::span(op.exchange_values).subspan(step * op.value.size(), op.value.size());
}

void survivor_allreduce::progress_fast(call& op) {
    const auto [power, rounds] = doubling_of(config_.size);
    const rank_t self = config_.self;
    if (self >= power) {  // folded into self - power, which hands it the result
        if (!op.step_sent) {
            send_exchange(op, 0, self - power);
            op.step = rounds + 1;
            op.step_sent = true;
        }
        if (op.exchange_held & bit(rounds + 1)) finish_fast(op, exchange_value(op, rounds + 1));
        return;
    }
    if (op.step == 0) {
        if (self + power < config_.size) {
            if (!(op.exchange_held & bit(0))) return;
            operation_.combine(op.value, exchange_value(op, 0));
        }
        op.step = 1;
    }
    while (op.step <= rounds) {
        if (!op.step_sent) {
            send_exchange(op, op.step, self ^ (rank_t{1} << (op.step - 1)));
            op.step_sent = true;
        }
        if (!(op.exchange_held & bit(op.step))) return;
        operation_.combine(op.value, exchange_value(op, op.step));
        ++op.step;
        op.step_sent = false;
    }
    if (self + power < config_.size) send_exchange(op, rounds + 1, self + power);
    finish_fast(op, op.value);
}

void survivor_allreduce::take_exchange(call& op, rank_t from, const allreduce_wire::message& message) {
    const std::uint32_t step = message.root;
    if (!op.fast) {
        ++stats_.late_exchanges;
        return;
    }
    if (step >= doubling_of(config_.size).rounds + 2 || from != exchange_sender(config_.size, config_.self, step) ||
        (op.exchange_held & bit(step))) {
        ++stats_.malformed;  // not a message this process expects of that sender
        return;
    }
    std::ranges::copy(message.value, exchange_value(op, step).begin());  // deliver checked its length
    op.exchange_held |= bit(step);
}

// Every rank is in: the fast path's steps cover the job once each.
void survivor_allreduce::finish_fast(call& op, std::span<const std::byte> value) {
    op.fast = false;
    op.exchange_held = 0;
    adopt(op, value, everyone_, allreduce_wire::fast_path_decider(config_.size), 0);
    op.fast_result = true;
    ++stats_.fast_done;
}

rank_t survivor_allreduce::fast_partner(const call& op) const {
    return exchange_sender(config_.size, config_.self, op.step);
}

void survivor_allreduce::send_exchange(call& op, std::uint32_t step, rank_t to) {
    transport_.send(to, allreduce_wire::encode_exchange(op.sequence, step, op.value, scratch_));
    ++stats_.exchanges_sent;
}

void survivor_allreduce::fall_back(call& op) {
    op.fast = false;
    op.fell_back = true;
    op.exchange_held = 0;
    op.value = op.own;
    op.combined.assign_one(config_.self);
    ++stats_.fast_fallbacks;
}

// Whether progress_down has nothing more to do for a result of the fast
// path: quiet until the call is disturbed, then a HOLD to each new root;
// a root starts the chain itself.
bool survivor_allreduce::report_fast_result(call& op) {
    if (!op.fast_result) return false;
    if (!op.disturbed) return true;
    const rank_t current_root = root();
    if (current_root == config_.self) {
        op.fast_result = false;
        return false;
    }
    if (op.hold_sent_to != current_root) {
        transport_.send(current_root, allreduce_wire::encode(allreduce_wire::msg_type::hold, op.sequence, 0,
                                                             op.decided_by, op.result_set, op.result_value, scratch_));
        ++stats_.holds_sent;
        op.hold_sent_to = current_root;
    }
    return true;
}

}  // namespace btl_ft
