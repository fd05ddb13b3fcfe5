// The census's own bookkeeping: its targets, their answers, its verdict.
#include "census.hpp"

#include <algorithm>
#include <functional>

#include "btl_ft/assert.hpp"
#include "btl_ft/prng.hpp"

namespace btl_ft {

namespace {
// Distinguishes the census's draws from every other use of splitmix64.
constexpr std::uint64_t census_salt = 0x63656e737573ULL;  // "census"
}  // namespace

census::census(std::vector<rank_t> targets, std::uint32_t round, time_ns deadline)
    : targets_(std::move(targets)), answered_(targets_.size(), 0), round_(round), deadline_(deadline) {
    BTL_FT_ASSERT(!targets_.empty() && targets_.size() <= census_sample, "a census asks nobody, or too many");
    BTL_FT_ASSERT(std::adjacent_find(targets_.begin(), targets_.end(), std::greater_equal<>()) == targets_.end(),
                  "census targets are not sorted and distinct");
    BTL_FT_ASSERT(deadline_ != never, "a census without a window");
    check();
}

std::vector<rank_t> census::choose(rank_t size, rank_t self, const dead_set& dead, const dead_set& departed,
                                   std::uint32_t round) {
    const auto gone = [&](rank_t rank) { return dead.contains(rank) || departed.contains(rank); };
    const rank_t others = size - 1 - static_cast<rank_t>(dead.size() + departed.size());
    std::vector<rank_t> targets;
    if (others <= census_sample) {
        for (rank_t rank = 0; rank < size; ++rank) {
            if (rank != self && !gone(rank)) {
                targets.push_back(rank);
            }
        }
        return targets;
    }
    splitmix64 draws(census_salt ^ (std::uint64_t{self} << 32) ^ round);
    while (targets.size() < census_sample) {
        const auto rank = static_cast<rank_t>(draws.below(size));
        const auto at = std::lower_bound(targets.begin(), targets.end(), rank);
        if (rank != self && !gone(rank) && (at == targets.end() || *at != rank)) {
            targets.insert(at, rank);
        }
    }
    return targets;
}

bool census::record(rank_t from, std::uint32_t round) {
    invariants_checked<census> checked(*this);
    if (round != round_) {
        return false;
    }
    const auto at = std::lower_bound(targets_.begin(), targets_.end(), from);
    if (at == targets_.end() || *at != from) {
        return false;
    }
    answered_[static_cast<std::size_t>(at - targets_.begin())] = 1;
    return true;
}

void census::close() {
    invariants_checked<census> checked(*this);
    BTL_FT_ASSERT(!closed(), "a census closed twice");
    deadline_ = never;
}

bool census::says_cut_off(const dead_set& departed, const dead_set& crashed) const {
    if (!closed()) {
        return false;
    }
    std::size_t asked = 1;  // ourselves, who answer
    std::size_t answered = 1;
    for (std::size_t i = 0; i < targets_.size(); ++i) {
        const rank_t rank = targets_[i];
        if (departed.contains(rank) || crashed.contains(rank)) {
            continue;
        }
        ++asked;
        answered += answered_[i];
    }
    return 4 * answered < asked;
}

// Sortedness is checked once, when the census is made: targets never change.
void census::check() const {
    BTL_FT_ASSERT(!targets_.empty() && answered_.size() == targets_.size(), "census answers do not match its targets");
}

}  // namespace btl_ft
