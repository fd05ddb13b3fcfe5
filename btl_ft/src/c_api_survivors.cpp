// The C ABI of btl_ft_survivors.h: bridges the C callbacks to the survivor
// allreduce's transport and operation, and checks what the core would
// assert on. No protocol logic here, and no exception leaves this file: the
// caller is C.
#include "btl_ft/btl_ft_survivors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "btl_ft/btl_ft.h"  // BTL_FT_STRINGIFY
#include "btl_ft/allreduce_model.hpp"
#include "btl_ft/survivor_allreduce.hpp"

struct btl_ft_survivors final : btl_ft::collective_transport, btl_ft::reduce_operation {
    explicit btl_ft_survivors(const btl_ft_survivors_callbacks_t& c) : callbacks(c) {}

    void send(btl_ft::rank_t peer, std::span<const std::byte> bytes) override {
        callbacks.send(callbacks.context, peer, bytes.data(), bytes.size());
    }
    void combine(std::span<std::byte> into, std::span<const std::byte> value) const override {
        callbacks.combine(callbacks.context, into.data(), value.data(), value.size());
    }

    btl_ft_survivors_callbacks_t callbacks;
    std::unique_ptr<btl_ft::survivor_allreduce> machine;
};

namespace {

std::span<const std::byte> bytes_of(const void* data, size_t length) {
    return {static_cast<const std::byte*>(data), length};
}

}  // namespace

namespace {

bool radix_in_range(uint32_t radix) {
    return radix >= BTL_FT_SURVIVORS_RADIX_MIN && radix <= BTL_FT_SURVIVORS_RADIX_MAX;
}

// The model takes whole ticks: an overhead of 100 keeps two digits of the ratio.
constexpr double ticks_per_overhead = 100.0;

btl_ft::logp_cost cost_of(double latency_ratio) {
    return {static_cast<btl_ft::time_ns>(std::llround(latency_ratio * ticks_per_overhead)),
            static_cast<btl_ft::time_ns>(ticks_per_overhead)};
}

}  // namespace

const char* btl_ft_survivors_radix_problem(uint32_t radix) {
    if (radix == BTL_FT_SURVIVORS_RADIX_AUTO || radix_in_range(radix)) return nullptr;
    return "must be 0 (chosen for each communicator) or between " BTL_FT_STRINGIFY(
        BTL_FT_SURVIVORS_RADIX_MIN) " and " BTL_FT_STRINGIFY(BTL_FT_SURVIVORS_RADIX_MAX);
}

const char* btl_ft_survivors_latency_ratio_problem(double latency_ratio) {
    // written so that NaN fails too
    if (latency_ratio >= 0.01 && latency_ratio <= 10000.0) return nullptr;
    return "must be a number from 0.01 to 10000";
}

uint32_t btl_ft_survivors_best_radix(uint32_t size, double latency_ratio) {
    if (size == 0 || btl_ft_survivors_latency_ratio_problem(latency_ratio) != nullptr) {
        return BTL_FT_SURVIVORS_RADIX_MIN;
    }
    return btl_ft::allreduce_best_radix(size, cost_of(latency_ratio));
}

int btl_ft_survivors_fast_path_pays(uint32_t size, uint32_t radix, double latency_ratio) {
    if (size == 0 || size > BTL_FT_SURVIVORS_FAST_MAX_SIZE || !radix_in_range(radix) ||
        btl_ft_survivors_latency_ratio_problem(latency_ratio) != nullptr) {
        return 0;
    }
    return btl_ft::allreduce_fast_path_pays(size, radix, cost_of(latency_ratio)) ? 1 : 0;
}

int btl_ft_survivors_fast_path_pays_yielding(uint32_t size) {
    return size <= BTL_FT_SURVIVORS_FAST_MAX_SIZE && btl_ft::allreduce_fast_path_pays_yielding(size) ? 1 : 0;
}

btl_ft_survivors_t* btl_ft_survivors_create(uint32_t size, uint32_t self, uint32_t radix, size_t fast_max_bytes,
                                            const btl_ft_survivors_callbacks_t* callbacks) {
    if (callbacks == nullptr || callbacks->send == nullptr || callbacks->combine == nullptr || size == 0 ||
        self >= size || !radix_in_range(radix)) {
        return nullptr;
    }
    try {
        auto survivors = std::make_unique<btl_ft_survivors>(*callbacks);
        survivors->machine = std::make_unique<btl_ft::survivor_allreduce>(
            btl_ft::allreduce_config{.size = size,
                                     .self = self,
                                     .radix = radix,
                                     .fast_max_bytes = fast_max_bytes,
                                     .fast_max_size = BTL_FT_SURVIVORS_FAST_MAX_SIZE},
            *survivors, *survivors);
        return survivors.release();
    } catch (...) {
        return nullptr;
    }
}

void btl_ft_survivors_destroy(btl_ft_survivors_t* survivors) { delete survivors; }

int btl_ft_survivors_set_fast_max_bytes(btl_ft_survivors_t* survivors, size_t fast_max_bytes) {
    if (survivors->machine->status() == btl_ft::allreduce_status::running) return -1;
    survivors->machine->set_fast_max_bytes(fast_max_bytes);
    return 0;
}

void btl_ft_survivors_greet(btl_ft_survivors_t* survivors) {
    try {
        survivors->machine->greet();
    } catch (...) {
    }
}

void btl_ft_survivors_failed(btl_ft_survivors_t* survivors, const uint32_t* ranks, size_t count) {
    try {
        std::vector<btl_ft::rank_t> in_range;
        for (size_t i = 0; i < count; ++i) {
            if (ranks[i] < survivors->machine->size()) in_range.push_back(ranks[i]);
        }
        survivors->machine->on_failed(in_range);
    } catch (...) {
    }
}

int btl_ft_survivors_begin(btl_ft_survivors_t* survivors, const void* value, size_t length) {
    if (survivors->machine->status() == btl_ft::allreduce_status::running) return -1;
    try {
        survivors->machine->begin(bytes_of(value, length));
        return 0;
    } catch (...) {
        return -1;
    }
}

void btl_ft_survivors_message(btl_ft_survivors_t* survivors, uint32_t from, const void* bytes, size_t length) {
    try {
        survivors->machine->on_message(from, bytes_of(bytes, length));
    } catch (...) {
    }
}

int btl_ft_survivors_status(const btl_ft_survivors_t* survivors) {
    return static_cast<int>(survivors->machine->status());
}

uint32_t btl_ft_survivors_awaited(const btl_ft_survivors_t* survivors, size_t* max_bytes) {
    const auto awaited = survivors->machine->awaited();
    *max_bytes = awaited.max_bytes;
    return awaited.from == btl_ft::no_rank ? BTL_FT_SURVIVORS_ANY_PEER : awaited.from;
}

const void* btl_ft_survivors_result(const btl_ft_survivors_t* survivors) {
    if (survivors->machine->status() != btl_ft::allreduce_status::done) return nullptr;
    return survivors->machine->result().data();
}

size_t btl_ft_survivors_contributors(const btl_ft_survivors_t* survivors, uint32_t* pairs, size_t max_ranges) {
    if (survivors->machine->status() != btl_ft::allreduce_status::done) return 0;
    const auto ranges = survivors->machine->contributors().ranges();
    for (size_t i = 0; i < ranges.size() && i < max_ranges; ++i) {
        pairs[2 * i] = ranges[i].begin;
        pairs[2 * i + 1] = ranges[i].end;
    }
    return ranges.size();
}

btl_ft_survivors_counts_t btl_ft_survivors_counters(const btl_ft_survivors_t* survivors) {
    const btl_ft::allreduce_stats& s = survivors->machine->stats();
    return {s.partials_sent,   s.results_sent,   s.holds_sent, s.received,       s.malformed,
            s.from_failed,     s.out_of_sequence, s.overlapping, s.conflicts,     s.root_takeovers,
            s.exchanges_sent,  s.fast_done,       s.fast_fallbacks, s.late_exchanges, s.greetings_sent,
            s.greetings};
}

void btl_ft_survivors_describe(const btl_ft_survivors_t* survivors, char* text, size_t capacity) {
    if (capacity == 0) return;
    text[0] = '\0';
    try {
        const std::string line = survivors->machine->describe();
        const size_t length = std::min(line.size(), capacity - 1);
        std::memcpy(text, line.data(), length);
        text[length] = '\0';
    } catch (...) {
    }
}
