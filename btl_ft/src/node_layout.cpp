// node_layout.hpp: building the layout, and the live processes of a node.
#include "btl_ft/node_layout.hpp"

#include <algorithm>

#include "btl_ft/assert.hpp"

namespace btl_ft {

std::shared_ptr<const node_layout> node_layout::make(std::span<const std::uint32_t> node_of_rank) {
    auto layout = std::make_shared<node_layout>();
    std::vector<std::uint32_t> ids(node_of_rank.begin(), node_of_rank.end());
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    const auto size = static_cast<rank_t>(node_of_rank.size());
    layout->node_index_.resize(size);
    layout->first_.assign(ids.size() + 1, 0);
    for (rank_t rank = 0; rank < size; ++rank) {
        const auto node = static_cast<rank_t>(std::lower_bound(ids.begin(), ids.end(), node_of_rank[rank]) - ids.begin());
        layout->node_index_[rank] = node;
        ++layout->first_[node + 1];
    }
    for (std::size_t node = 0; node < ids.size(); ++node) {
        layout->first_[node + 1] += layout->first_[node];
    }
    layout->ranks_.resize(size);
    std::vector<rank_t> next(layout->first_.begin(), layout->first_.end() - 1);
    for (rank_t rank = 0; rank < size; ++rank) {
        layout->ranks_[next[layout->node_index_[rank]]++] = rank;  // ascending: ranks are visited in order
    }
    for (rank_t node = 0; node < layout->node_count(); ++node) {
        const std::span<const rank_t> ranks = layout->ranks_of(node);
        layout->contiguous_ = layout->contiguous_ && ranks.back() - ranks.front() + 1 == ranks.size();
    }
    return layout;
}

dead_set node_layout::lost_nodes(const dead_set& skip) const {
    std::vector<rank_t> nodes;
    for (const rank_t rank : skip.ranks()) {
        if (rank < size()) {
            nodes.push_back(node_of(rank));
        }
    }
    std::sort(nodes.begin(), nodes.end());  // already sorted when the layout is contiguous
    std::vector<rank_t> lost;
    for (std::size_t at = 0; at < nodes.size();) {
        std::size_t end = at;
        while (end < nodes.size() && nodes[end] == nodes[at]) {
            ++end;
        }
        if (end - at == ranks_of(nodes[at]).size()) {
            lost.push_back(nodes[at]);
        }
        at = end;
    }
    return dead_set(std::move(lost));
}

rank_t node_layout::live_count(rank_t node, const dead_set& skip) const {
    const std::span<const rank_t> ranks = ranks_of(node);
    if (contiguous_) {
        const rank_t skipped = skip.count_below(ranks.back() + 1) - skip.count_below(ranks.front());
        return static_cast<rank_t>(ranks.size()) - skipped;
    }
    return static_cast<rank_t>(std::count_if(ranks.begin(), ranks.end(), [&](rank_t r) { return !skip.contains(r); }));
}

rank_t node_layout::live_process(rank_t node, rank_t index, const dead_set& skip) const {
    BTL_FT_ASSERT(index < live_count(node, skip), "asking for a live process a node does not have");
    const std::span<const rank_t> ranks = ranks_of(node);
    if (contiguous_) {
        const rank_t alive_below = ranks.front() - skip.count_below(ranks.front());
        return skip.alive_at(alive_below + index);
    }
    for (const rank_t rank : ranks) {
        if (!skip.contains(rank) && index-- == 0) {
            return rank;
        }
    }
    return no_rank;
}

}  // namespace btl_ft
