// The observation ring: a permutation of ranks computed identically at every
// process from (size, node of each rank, seed). Each process observes its
// predecessor ("emitter") and is observed by its successor ("observer").
// Immutable once built, so one instance is shared by every detector of a
// simulation (2^20 processes share one 8 MiB ring instead of 2^20 copies).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "btl_ft/types.hpp"

namespace btl_ft {

class node_layout;

class ring {
public:
    // node_of_rank.size() is the job size; seed matters for `shuffle` only
    // (and breaks ties in `node`).
    static std::shared_ptr<const ring> make(ring_order order,
                                            std::span<const std::uint32_t> node_of_rank,
                                            std::uint64_t seed);
    // The ring of the two-level hierarchy (seed 000): the processes of each
    // node side by side in rank order, so each node has one edge in from the
    // node before it and one out to the node after it, and a process's
    // emitter is a node-mate except at the node's first live process. The
    // nodes follow `order` applied to node numbers (`node` keeps them in
    // order, as nodes never share a node).
    static std::shared_ptr<const ring> make_grouped(ring_order order, const node_layout& layout,
                                                    std::uint64_t seed);
    // All ranks on one node: for simulations and single-node tests.
    static std::shared_ptr<const ring> make_flat(ring_order order, rank_t size, std::uint64_t seed);
    // An explicit order (a permutation of 0..n-1), for tests and tools.
    static std::shared_ptr<const ring> from_order(std::vector<rank_t> rank_at);

    rank_t size() const { return static_cast<rank_t>(rank_at_.size()); }
    rank_t rank_at(rank_t position) const { return rank_at_[position]; }
    rank_t position_of(rank_t rank) const { return position_of_[rank]; }
    rank_t successor(rank_t rank) const;    // the observer direction
    rank_t predecessor(rank_t rank) const;  // the emitter direction

private:
    std::vector<rank_t> rank_at_;
    std::vector<rank_t> position_of_;
};

namespace detail {
// The proven fallback of the `node` order, exposed so tests can check it
// directly (the greedy order rarely, if ever, needs it).
std::vector<rank_t> parity_fill_order(std::span<const std::uint32_t> node_of_rank, std::uint64_t seed);
}  // namespace detail

}  // namespace btl_ft
