// Which processes share a node, as the two-level hierarchy (seed 000) asks
// it: the nodes in a fixed order, the processes of each, and which of them
// a notice's skip set leaves alive. Computed once from the node of every
// rank and shared, immutable, by every detector of a job or a simulation.
//
// Nodes are numbered 0..node_count()-1 in the order of their ids, so the
// numbering is the same at every process whatever the ids are (libmpi
// passes a hash of the host name). When every node's ranks are contiguous,
// as mpirun maps by slot, questions about the live processes of a node cost
// O(log |skip|); otherwise a scan of the node.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "btl_ft/dead_set.hpp"
#include "btl_ft/types.hpp"

namespace btl_ft {

class node_layout {
public:
    static std::shared_ptr<const node_layout> make(std::span<const std::uint32_t> node_of_rank);

    rank_t size() const { return static_cast<rank_t>(node_index_.size()); }
    rank_t node_count() const { return static_cast<rank_t>(first_.size() - 1); }
    rank_t node_of(rank_t rank) const { return node_index_[rank]; }
    std::span<const rank_t> ranks_of(rank_t node) const {
        return {ranks_.data() + first_[node], ranks_.data() + first_[node + 1]};
    }
    // Every process of `rank`'s node, itself included.
    std::span<const rank_t> mates_of(rank_t rank) const { return ranks_of(node_of(rank)); }
    bool contiguous() const { return contiguous_; }

    // The nodes every process of which is in `skip` (a set of ranks), as a
    // set of node numbers.
    dead_set lost_nodes(const dead_set& skip) const;
    // The processes of `node` not in `skip`, and the index-th of them in
    // rank order (index < live_count).
    rank_t live_count(rank_t node, const dead_set& skip) const;
    rank_t live_process(rank_t node, rank_t index, const dead_set& skip) const;

private:
    std::vector<rank_t> node_index_;  // per rank
    std::vector<rank_t> ranks_;       // grouped by node, ascending within each
    std::vector<rank_t> first_;       // node k's ranks are ranks_[first_[k] .. first_[k+1])
    bool contiguous_ = true;
};

}  // namespace btl_ft
