// Ring orders. `node` is the interesting one: ring neighbours should sit on
// different nodes, so that when a node is lost each of its ranks is watched
// by an observer elsewhere and all are detected in parallel, in about one
// timeout instead of one timeout per rank.
//
// The idea: lay the ranks out greedily, always taking the node with the most
// ranks left that differs from the previous slot (equal sizes give plain
// round-robin A B C A B C, which also keeps ranks of two failing nodes apart).
// Ties go to the node the greedy started with, so it is not left over to
// close the cycle next to itself; with that rule the greedy was optimal on
// 20,000 random layouts. It carries no proof, though, so its result is
// checked against the optimum max(0, 2m - n) same-node pairs (m = largest
// node) and, should it ever miss, the "parity fill" is used instead: nodes
// sorted by size, largest first, dealt into the even slots, then the odd
// ones. That fill provably reaches the
// optimum (a run of one node lands on slots at distance >= n/2 apart, so it
// never meets itself unless m > n/2, when every pair has the largest node
// on at least one side).
//
// Rejected alternative: parity fill only. It is always optimal but puts only
// two nodes next to each other (A C A C ... B D B D), so the loss of two
// nodes makes long dead runs on the ring, each mended one timeout at a time.
#include "btl_ft/ring.hpp"

#include <algorithm>
#include <numeric>
#include <queue>
#include <tuple>

#include "btl_ft/assert.hpp"
#include "btl_ft/node_layout.hpp"
#include "btl_ft/prng.hpp"

namespace btl_ft {
namespace {

struct node_group {
    std::uint32_t node;
    std::uint64_t tie;  // seeded, so equal-sized nodes are ordered identically everywhere
    std::vector<rank_t> ranks;
};

std::vector<node_group> group_by_node(std::span<const std::uint32_t> node_of_rank, std::uint64_t seed) {
    std::vector<rank_t> order(node_of_rank.size());
    std::iota(order.begin(), order.end(), rank_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](rank_t a, rank_t b) { return node_of_rank[a] < node_of_rank[b]; });
    std::vector<node_group> groups;
    for (const rank_t rank : order) {
        if (groups.empty() || groups.back().node != node_of_rank[rank]) {
            groups.push_back({node_of_rank[rank], splitmix64(seed ^ node_of_rank[rank]).next(), {}});
        }
        groups.back().ranks.push_back(rank);
    }
    return groups;
}

std::size_t same_node_pairs(const std::vector<rank_t>& order, std::span<const std::uint32_t> node_of_rank) {
    std::size_t pairs = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
        pairs += node_of_rank[order[i]] == node_of_rank[order[(i + 1) % order.size()]];
    }
    return pairs;
}

// The group the greedy starts with: the largest, ties by the seeded key.
std::size_t first_group(const std::vector<node_group>& groups) {
    std::size_t first = 0;
    for (std::size_t g = 1; g < groups.size(); ++g) {
        const std::size_t size = groups[g].ranks.size(), best = groups[first].ranks.size();
        if (size > best || (size == best && groups[g].tie < groups[first].tie)) {
            first = g;
        }
    }
    return first;
}

std::vector<rank_t> greedy_fill(const std::vector<node_group>& groups, std::size_t total) {
    // (ranks left, tie, group): the most ranks left first; on equal counts
    // the group we started with, so that it is not left over to close the
    // cycle next to its own first rank; then the seeded key.
    using entry = std::tuple<std::size_t, std::uint64_t, std::size_t>;
    const std::size_t opener = first_group(groups);
    auto later = [opener](const entry& a, const entry& b) {
        if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) < std::get<0>(b);
        if ((std::get<2>(a) == opener) != (std::get<2>(b) == opener)) return std::get<2>(b) == opener;
        return std::get<1>(a) > std::get<1>(b);
    };
    std::priority_queue<entry, std::vector<entry>, decltype(later)> heap(later);
    for (std::size_t g = 0; g < groups.size(); ++g) {
        heap.emplace(groups[g].ranks.size(), groups[g].tie, g);
    }
    std::vector<rank_t> out;
    out.reserve(total);
    std::size_t previous = groups.size();
    while (!heap.empty()) {
        entry pick = heap.top();
        heap.pop();
        if (std::get<2>(pick) == previous && !heap.empty()) {
            entry second = heap.top();
            heap.pop();
            heap.push(pick);
            pick = second;
        }
        const std::vector<rank_t>& ranks = groups[std::get<2>(pick)].ranks;
        out.push_back(ranks[ranks.size() - std::get<0>(pick)]);
        previous = std::get<2>(pick);
        if (--std::get<0>(pick) > 0) {
            heap.push(pick);
        }
    }
    return out;
}

std::vector<rank_t> parity_fill(std::vector<node_group> groups, std::size_t total) {
    std::stable_sort(groups.begin(), groups.end(), [](const node_group& a, const node_group& b) {
        return a.ranks.size() != b.ranks.size() ? a.ranks.size() > b.ranks.size() : a.tie < b.tie;
    });
    std::vector<rank_t> out(total);
    std::size_t slot = 0;
    for (const node_group& group : groups) {
        for (const rank_t rank : group.ranks) {
            out[slot] = rank;
            slot += 2;
            if (slot >= total) {
                slot = 1;
            }
        }
    }
    return out;
}

std::vector<rank_t> node_order(std::span<const std::uint32_t> node_of_rank, std::uint64_t seed) {
    const std::vector<node_group> groups = group_by_node(node_of_rank, seed);
    std::size_t largest = 0;
    for (const node_group& group : groups) {
        largest = std::max(largest, group.ranks.size());
    }
    const std::size_t total = node_of_rank.size();
    const std::size_t optimum = 2 * largest > total ? 2 * largest - total : 0;
    std::vector<rank_t> order = greedy_fill(groups, total);
    if (same_node_pairs(order, node_of_rank) > optimum) {
        order = parity_fill(groups, total);
    }
    BTL_FT_ASSERT(same_node_pairs(order, node_of_rank) == optimum, "node ring order is not optimal");
    return order;
}

std::vector<rank_t> shuffled_order(std::size_t size, std::uint64_t seed) {
    std::vector<rank_t> order(size);
    std::iota(order.begin(), order.end(), rank_t{0});
    splitmix64 random(seed);
    for (std::size_t i = size; i > 1; --i) {
        std::swap(order[i - 1], order[random.below(i)]);
    }
    return order;
}

}  // namespace

std::vector<rank_t> detail::parity_fill_order(std::span<const std::uint32_t> node_of_rank, std::uint64_t seed) {
    return parity_fill(group_by_node(node_of_rank, seed), node_of_rank.size());
}

std::shared_ptr<const ring> ring::make(ring_order order, std::span<const std::uint32_t> node_of_rank,
                                       std::uint64_t seed) {
    BTL_FT_ASSERT(!node_of_rank.empty() && node_of_rank.size() < no_rank, "ring size out of range");
    std::vector<rank_t> rank_at;
    switch (order) {
    case ring_order::rank:
        rank_at.resize(node_of_rank.size());
        std::iota(rank_at.begin(), rank_at.end(), rank_t{0});
        break;
    case ring_order::node: rank_at = node_order(node_of_rank, seed); break;
    case ring_order::shuffle: rank_at = shuffled_order(node_of_rank.size(), seed); break;
    }
    return from_order(std::move(rank_at));
}

std::shared_ptr<const ring> ring::make_grouped(ring_order order, const node_layout& layout, std::uint64_t seed) {
    BTL_FT_ASSERT(layout.size() > 0 && layout.size() < no_rank, "ring size out of range");
    std::vector<rank_t> nodes(layout.node_count());
    std::iota(nodes.begin(), nodes.end(), rank_t{0});
    if (order == ring_order::shuffle) {
        nodes = shuffled_order(nodes.size(), seed);
    }
    std::vector<rank_t> rank_at;
    rank_at.reserve(layout.size());
    for (const rank_t node : nodes) {
        const std::span<const rank_t> ranks = layout.ranks_of(node);
        rank_at.insert(rank_at.end(), ranks.begin(), ranks.end());
    }
    return from_order(std::move(rank_at));
}

std::shared_ptr<const ring> ring::make_flat(ring_order order, rank_t size, std::uint64_t seed) {
    const std::vector<std::uint32_t> one_node(size, 0);
    return make(order, one_node, seed);
}

std::shared_ptr<const ring> ring::from_order(std::vector<rank_t> rank_at) {
    auto made = std::make_shared<ring>();
    made->position_of_.assign(rank_at.size(), no_rank);
    for (std::size_t position = 0; position < rank_at.size(); ++position) {
        const rank_t rank = rank_at[position];
        BTL_FT_ASSERT(rank < rank_at.size() && made->position_of_[rank] == no_rank, "ring order is not a permutation");
        made->position_of_[rank] = static_cast<rank_t>(position);
    }
    made->rank_at_ = std::move(rank_at);
    return made;
}

rank_t ring::successor(rank_t rank) const {
    const rank_t next = position_of_[rank] + 1;
    return rank_at_[next == size() ? 0 : next];
}

rank_t ring::predecessor(rank_t rank) const {
    const rank_t position = position_of_[rank];
    return rank_at_[position == 0 ? size() - 1 : position - 1];
}

}  // namespace btl_ft
