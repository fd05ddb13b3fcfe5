// The sorted-vector dead set. alive_at() inverts alive_index() without
// touching the alive list: the i-th dead rank d_i has d_i - i alive ranks
// below it, a non-decreasing sequence, so a binary search over it finds how
// many dead ranks precede the wanted alive one.
#include "btl_ft/dead_set.hpp"

#include <algorithm>
#include <functional>
#include <iterator>

#include "btl_ft/assert.hpp"

namespace btl_ft {

dead_set::dead_set(std::vector<rank_t> sorted_unique) : ranks_(std::move(sorted_unique)) {
    BTL_FT_ASSERT(std::adjacent_find(ranks_.begin(), ranks_.end(), std::greater_equal<>()) == ranks_.end(),
                  "dead_set built from ranks that are not strictly increasing");
}

bool dead_set::insert(rank_t rank) {
    const auto at = std::lower_bound(ranks_.begin(), ranks_.end(), rank);
    if (at != ranks_.end() && *at == rank) {
        return false;
    }
    // Grow by a quarter rather than doubling: 2^20 simulated processes each
    // hold a copy of D, and doubling would waste up to half of that memory.
    if (ranks_.size() == ranks_.capacity()) {
        const auto offset = at - ranks_.begin();
        ranks_.reserve(ranks_.size() + ranks_.size() / 4 + 4);
        ranks_.insert(ranks_.begin() + offset, rank);
    } else {
        ranks_.insert(at, rank);
    }
    return true;
}

bool dead_set::erase(rank_t rank) {
    const auto at = std::lower_bound(ranks_.begin(), ranks_.end(), rank);
    if (at == ranks_.end() || *at != rank) {
        return false;
    }
    ranks_.erase(at);
    return true;
}

rank_t dead_set::count_below(rank_t rank) const {
    return static_cast<rank_t>(std::lower_bound(ranks_.begin(), ranks_.end(), rank) - ranks_.begin());
}

rank_t dead_set::alive_index(rank_t rank) const {
    BTL_FT_ASSERT(!contains(rank), "alive_index of a rank in the set");
    return rank - count_below(rank);
}

rank_t dead_set::alive_at(rank_t index) const {
    // Count the dead ranks d_i with (d_i - i) <= index: exactly those below
    // the answer.
    std::size_t low = 0;
    std::size_t high = ranks_.size();
    while (low < high) {
        const std::size_t middle = low + (high - low) / 2;
        if (ranks_[middle] - static_cast<rank_t>(middle) <= index) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    return index + static_cast<rank_t>(low);
}

dead_set dead_set::merged(std::span<const rank_t> a, std::span<const rank_t> b) {
    std::vector<rank_t> out;
    out.reserve(a.size() + b.size());
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return dead_set(std::move(out));
}

}  // namespace btl_ft
