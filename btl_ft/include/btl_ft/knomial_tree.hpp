// The k-nomial tree over ranks 0..n-1 rooted at 0 (seed 001, §5.2.1): a
// rank's parent is the rank with its lowest non-zero base-k digit cleared,
// so every subtree is one contiguous range of ranks, [rank, rank + span).
// Computed from (n, k) alone, identically everywhere, with no table.
//
// Rejected alternative: a k-ary tree, which the seed found slower for the
// same k, and whose subtrees are not ranges.
#pragma once

#include <cstdint>
#include <vector>

#include "btl_ft/types.hpp"

namespace btl_ft {

class knomial_tree {
public:
    knomial_tree(rank_t size, std::uint32_t radix);

    rank_t size() const { return size_; }
    std::uint32_t radix() const { return radix_; }
    rank_t parent(rank_t rank) const;  // no_rank for the root
    // Children, largest subtree first (the order a broadcast sends in).
    void children(rank_t rank, std::vector<rank_t>& out) const;
    rank_t subtree_end(rank_t rank) const;  // the subtree is [rank, subtree_end)
    bool is_ancestor(rank_t ancestor, rank_t rank) const {
        return ancestor < rank && rank < subtree_end(ancestor);
    }

private:
    // The power of the radix at the rank's lowest non-zero digit (for 0,
    // the first power not below the size): the span of its subtree.
    std::uint64_t span_of(rank_t rank) const;

    rank_t size_;
    std::uint32_t radix_;
};

}  // namespace btl_ft
