// Range-set operations by merging the two sorted range lists, so each costs
// the number of ranges, never the number of ranks.
#include "btl_ft/rank_ranges.hpp"

#include <algorithm>

#include "btl_ft/assert.hpp"
#include "btl_ft/dead_set.hpp"

namespace btl_ft {
namespace {

bool well_formed(const std::vector<rank_range>& ranges) {
    for (std::size_t i = 0; i < ranges.size(); ++i) {
        if (ranges[i].begin >= ranges[i].end) return false;
        if (i > 0 && ranges[i].begin <= ranges[i - 1].end) return false;  // overlapping or adjacent
    }
    return true;
}

}  // namespace

rank_ranges::rank_ranges(std::vector<rank_range> ranges) : ranges_(std::move(ranges)) {
    BTL_FT_ASSERT(well_formed(ranges_), "rank ranges not sorted, empty, overlapping or adjacent");
}

rank_t rank_ranges::count() const {
    rank_t total = 0;
    for (const rank_range& range : ranges_) total += range.end - range.begin;
    return total;
}

bool rank_ranges::contains(rank_t rank) const {
    const auto after = std::upper_bound(ranges_.begin(), ranges_.end(), rank,
                                        [](rank_t value, const rank_range& range) { return value < range.begin; });
    return after != ranges_.begin() && rank < std::prev(after)->end;
}

bool rank_ranges::includes(const rank_ranges& other) const {
    // Ranges are non-adjacent, so each of other's lies inside one of ours.
    auto mine = ranges_.begin();
    for (const rank_range& range : other.ranges_) {
        while (mine != ranges_.end() && mine->end <= range.begin) ++mine;
        if (mine == ranges_.end() || mine->begin > range.begin || mine->end < range.end) return false;
    }
    return true;
}

bool rank_ranges::intersects(const rank_ranges& other) const {
    auto a = ranges_.begin();
    auto b = other.ranges_.begin();
    while (a != ranges_.end() && b != other.ranges_.end()) {
        if (a->begin < b->end && b->begin < a->end) return true;
        a->end <= b->end ? ++a : ++b;
    }
    return false;
}

void rank_ranges::push_back(rank_range range) {
    BTL_FT_ASSERT(range.begin < range.end && (ranges_.empty() || range.begin > ranges_.back().end),
                  "rank range appended out of order, empty or adjacent");
    ranges_.push_back(range);
}

// Merges from the back into this set's own storage, then joins what
// touches: no allocation unless the set outgrows its capacity.
void rank_ranges::unite(const rank_ranges& other) {
    if (&other == this || other.ranges_.empty()) return;
    if (ranges_.size() == 1 && other.ranges_.size() == 1) {  // as on the fast path: two blocks that touch
        rank_range& mine = ranges_.front();
        const rank_range& theirs = other.ranges_.front();
        if (theirs.begin <= mine.end && mine.begin <= theirs.end) {
            mine = {std::min(mine.begin, theirs.begin), std::max(mine.end, theirs.end)};
            return;
        }
    }
    std::size_t mine = ranges_.size();
    std::size_t theirs = other.ranges_.size();
    ranges_.resize(mine + theirs);
    for (std::size_t to = mine + theirs; theirs > 0;) {  // the rest of mine is in place
        --to;
        if (mine > 0 && ranges_[mine - 1].begin > other.ranges_[theirs - 1].begin) {
            ranges_[to] = ranges_[--mine];
        } else {
            ranges_[to] = other.ranges_[--theirs];
        }
    }
    std::size_t kept = 1;
    for (std::size_t i = 1; i < ranges_.size(); ++i) {
        if (ranges_[i].begin <= ranges_[kept - 1].end) {
            ranges_[kept - 1].end = std::max(ranges_[kept - 1].end, ranges_[i].end);
        } else {
            ranges_[kept++] = ranges_[i];
        }
    }
    ranges_.resize(kept);
}

bool rank_ranges::covers(rank_t begin, rank_t end, const dead_set& failed) const {
    // Each gap of this set inside [begin, end) must be wholly failed.
    const auto all_failed = [&failed](rank_t from, rank_t to) {
        return from >= to || failed.count_below(to) - failed.count_below(from) == to - from;
    };
    rank_t next = begin;
    for (const rank_range& range : ranges_) {
        if (range.end <= next) continue;
        if (range.begin >= end) break;
        if (!all_failed(next, range.begin)) return false;
        next = std::max(next, range.end);
        if (next >= end) return true;
    }
    return all_failed(next, end);
}

}  // namespace btl_ft
