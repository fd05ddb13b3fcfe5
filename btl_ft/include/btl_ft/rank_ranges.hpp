// A set of ranks as sorted, disjoint, non-adjacent half-open ranges: the
// contributors of a partial reduction. A k-nomial subtree is one range of
// ranks, and a failure inside it splits it once, so a partial's set costs
// a few ranges however large the job.
//
// Rejected alternative: a bitmap of the communicator, 8 KiB in every
// message at 2^16 processes for a set that is almost always one range.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "btl_ft/types.hpp"

namespace btl_ft {

class dead_set;

struct rank_range {
    rank_t begin = 0;
    rank_t end = 0;  // one past the last rank; begin < end
    friend bool operator==(const rank_range&, const rank_range&) = default;
};

class rank_ranges {
public:
    rank_ranges() = default;
    // From ranges already sorted, disjoint and non-adjacent (asserted).
    explicit rank_ranges(std::vector<rank_range> ranges);
    static rank_ranges of(rank_t rank) { return rank_ranges({{rank, rank + 1}}); }

    // In place, keeping the storage: a call's sets are reused call after
    // call, and allocate only while they grow.
    void clear() { ranges_.clear(); }
    void assign_one(rank_t rank) { ranges_.assign(1, {rank, rank + 1}); }
    // Appends a range above every one of the set and not adjacent to the
    // last (asserted): how a decoder fills a set it checked.
    void push_back(rank_range range);

    bool empty() const { return ranges_.empty(); }
    rank_t count() const;  // ranks in the set
    bool contains(rank_t rank) const;
    bool includes(const rank_ranges& other) const;    // other is a subset
    bool intersects(const rank_ranges& other) const;  // a rank in both
    void unite(const rank_ranges& other);
    std::span<const rank_range> ranges() const { return ranges_; }

    // Every rank of [begin, end) is in this set or in `failed`.
    bool covers(rank_t begin, rank_t end, const dead_set& failed) const;

    friend bool operator==(const rank_ranges&, const rank_ranges&) = default;

private:
    std::vector<rank_range> ranges_;
};

}  // namespace btl_ft
