// k-nomial tree arithmetic on base-k digits; 64-bit powers so that the
// first power above a size near 2^32 does not overflow.
#include "btl_ft/knomial_tree.hpp"

#include <algorithm>

#include "btl_ft/assert.hpp"

namespace btl_ft {

knomial_tree::knomial_tree(rank_t size, std::uint32_t radix) : size_(size), radix_(radix) {
    BTL_FT_ASSERT(size > 0, "a tree of no process");
    BTL_FT_ASSERT(radix >= 2, "a k-nomial tree needs a radix of at least 2");
}

std::uint64_t knomial_tree::span_of(rank_t rank) const {
    BTL_FT_ASSERT(rank < size_, "tree rank out of range");
    std::uint64_t power = 1;
    if (rank == 0) {
        while (power < size_) power *= radix_;
        return power;
    }
    while (rank % (power * radix_) == 0) power *= radix_;
    return power;
}

rank_t knomial_tree::parent(rank_t rank) const {
    if (rank == 0) return no_rank;
    const std::uint64_t power = span_of(rank);
    const std::uint64_t digit = (rank / power) % radix_;
    return static_cast<rank_t>(rank - digit * power);
}

rank_t knomial_tree::subtree_end(rank_t rank) const {
    return static_cast<rank_t>(std::min<std::uint64_t>(rank + span_of(rank), size_));
}

void knomial_tree::children(rank_t rank, std::vector<rank_t>& out) const {
    out.clear();
    const std::uint64_t span = span_of(rank);
    std::uint64_t power = 1;
    while (power * radix_ <= span) power *= radix_;
    // Largest subtrees first: the children at the highest digit position.
    for (power /= radix_; power >= 1; power /= radix_) {
        for (std::uint64_t digit = 1; digit < radix_; ++digit) {
            const std::uint64_t child = rank + digit * power;
            if (child >= size_ || digit * power >= span) break;
            out.push_back(static_cast<rank_t>(child));
        }
        if (power == 1) break;
    }
}

}  // namespace btl_ft
