// A sorted set of ranks, sparse: its size follows the number of failures,
// never the job size, so 2^20 simulated detectors each hold one cheaply.
// Also answers the questions overlays ask of the alive list (the complement)
// in O(log |set|): a rank's index among the alive, and the reverse.
//
// Rejected alternative: a bitmap of the job, 128 KiB per process at 2^20
// ranks, i.e. 128 GiB for one simulation.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "btl_ft/types.hpp"

namespace btl_ft {

// Every rank of the sorted list `part` is in the sorted list `all`.
inline bool contains_all(std::span<const rank_t> all, std::span<const rank_t> part) {
    return std::includes(all.begin(), all.end(), part.begin(), part.end());
}

class dead_set {
public:
    dead_set() = default;
    explicit dead_set(std::vector<rank_t> sorted_unique);

    // Inline: a notice's receiver asks it for every rank the notice names.
    bool contains(rank_t rank) const { return std::binary_search(ranks_.begin(), ranks_.end(), rank); }
    bool insert(rank_t rank);  // true when newly added
    bool erase(rank_t rank);   // true when it was there
    void clear() { ranks_.clear(); }
    std::size_t size() const { return ranks_.size(); }
    bool empty() const { return ranks_.empty(); }
    std::span<const rank_t> ranks() const { return ranks_; }

    // With `universe` ranks in all: the index of alive rank `rank` among the
    // alive ranks in increasing order, and the alive rank at index `index`.
    rank_t alive_index(rank_t rank) const;
    rank_t alive_at(rank_t index) const;
    rank_t alive_count(rank_t universe) const { return universe - static_cast<rank_t>(ranks_.size()); }

    // Members smaller than `rank`.
    rank_t count_below(rank_t rank) const;
    // The union of two sets (the skip set of a notice: failed + departed).
    static dead_set merged(std::span<const rank_t> a, std::span<const rank_t> b);

    friend bool operator==(const dead_set&, const dead_set&) = default;

private:
    std::vector<rank_t> ranks_;
};

}  // namespace btl_ft
