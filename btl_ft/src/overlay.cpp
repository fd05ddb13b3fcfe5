// The three flooded overlays of overlay.hpp. All arithmetic is on labels
// (positions in the alive list counted from the source); conversion to ranks
// happens only for the hops emitted, through the dead set.
#include "btl_ft/overlay.hpp"

#include <algorithm>
#include <array>
#include <bit>

#include "btl_ft/assert.hpp"

namespace btl_ft {
namespace {

constexpr unsigned links_per_channel = 32;

class labels {
public:
    explicit labels(const overlay_route& route)
        : skip_(route.skip), count_(route.skip.alive_count(route.size)), source_index_(route.skip.alive_index(route.source)) {
        BTL_FT_ASSERT(route.source < route.size && !route.skip.contains(route.source), "overlay source is not a participant");
    }
    rank_t count() const { return count_; }
    rank_t label_of(rank_t rank) const {
        const rank_t index = skip_.alive_index(rank);
        return index >= source_index_ ? index - source_index_ : index + (count_ - source_index_);
    }
    rank_t rank_of(rank_t label) const {
        const std::uint64_t index = (std::uint64_t{label} + source_index_) % count_;
        return skip_.alive_at(static_cast<rank_t>(index));
    }

private:
    const dead_set& skip_;
    rank_t count_;
    rank_t source_index_;
};

// Collects hops in label space, dropping the source, self, the sender and
// repeats (at most 64 links, so a linear scan is cheaper than any set).
class hop_list {
public:
    hop_list(const labels& labelling, rank_t self_label, rank_t sender_label, std::vector<hop>& out)
        : labelling_(labelling), out_(out) {
        out_.clear();
        seen_[used_++] = 0;
        seen_[used_++] = self_label;
        seen_[used_++] = sender_label;
    }
    void add(std::uint64_t label, route_tag tag) {
        const auto wanted = static_cast<rank_t>(label);
        if (std::find(seen_.begin(), seen_.begin() + used_, wanted) != seen_.begin() + used_) {
            return;
        }
        BTL_FT_ASSERT(used_ < seen_.size(), "more overlay links than a 32-bit job can have");
        seen_[used_++] = wanted;
        out_.push_back({labelling_.rank_of(wanted), tag});
    }

private:
    const labels& labelling_;
    std::vector<hop>& out_;
    std::array<rank_t, 3 + 2 * links_per_channel> seen_{};
    std::size_t used_ = 0;
};

route_tag tag_of(unsigned channel, unsigned link) {
    return static_cast<route_tag>(1 + channel * links_per_channel + link);
}

// --- hba: two hypercubes over the labels -------------------------------------

struct cubes {
    rank_t n;
    unsigned k;  // dimension: 2^k <= n < 2^(k+1)
    std::uint64_t vertex_of(unsigned cube, rank_t label) const {
        return cube == 0 ? label : (std::uint64_t{n} - label) % n;
    }
    bool member(unsigned cube, rank_t label) const { return vertex_of(cube, label) < (std::uint64_t{1} << k); }
    std::uint64_t label_of(unsigned cube, std::uint64_t vertex) const {
        return cube == 0 ? vertex : (std::uint64_t{n} - vertex) % n;
    }
};

cubes cubes_for(rank_t n) { return {n, static_cast<unsigned>(std::bit_width(n) - 1)}; }

std::uint64_t hba_sender(const cubes& c, rank_t self_label, route_tag received) {
    const unsigned cube = (received - 1u) / links_per_channel;
    const unsigned dimension = (received - 1u) % links_per_channel;
    if (received == route_origin || cube > 1 || dimension >= c.k || !c.member(cube, self_label)) {
        return self_label;  // "no sender": self is filtered anyway
    }
    return c.label_of(cube, c.vertex_of(cube, self_label) ^ (std::uint64_t{1} << dimension));
}

void hba_hops(const cubes& c, rank_t self_label, hop_list& hops) {
    // Binomial-tree children (dimensions below the lowest set bit) of both
    // cubes first, then the redundant links.
    for (int tree = 1; tree >= 0; --tree) {
        for (unsigned cube = 0; cube < 2; ++cube) {
            if (!c.member(cube, self_label)) {
                continue;
            }
            const std::uint64_t vertex = c.vertex_of(cube, self_label);
            const unsigned lowest = vertex == 0 ? c.k : std::min(c.k, static_cast<unsigned>(std::countr_zero(vertex)));
            for (unsigned d = c.k; d-- > 0;) {
                if ((d < lowest) == (tree == 1)) {
                    hops.add(c.label_of(cube, vertex ^ (std::uint64_t{1} << d)), tag_of(cube, d));
                }
            }
        }
    }
}

// --- bmg and chord: circulant links +-2^j ------------------------------------

unsigned circulant_levels(rank_t n) { return n <= 1 ? 0 : static_cast<unsigned>(std::bit_width(n - 1)); }

std::uint64_t circulant_sender(propagator_kind kind, rank_t n, rank_t self_label, route_tag received) {
    const unsigned direction = (received - 1u) / links_per_channel;
    const unsigned level = (received - 1u) % links_per_channel;
    const bool valid = received != route_origin && level < circulant_levels(n) &&
                       (direction == 0 || (direction == 1 && kind == propagator_kind::bmg));
    if (!valid) {
        return self_label;
    }
    const std::uint64_t step = (std::uint64_t{1} << level) % n;
    return direction == 0 ? (self_label + n - step) % n : (self_label + step) % n;
}

void circulant_hops(propagator_kind kind, rank_t n, rank_t self_label, hop_list& hops) {
    const unsigned levels = circulant_levels(n);
    // The forward binomial tree (parent = label minus its lowest set bit) first.
    const unsigned lowest = self_label == 0 ? levels : std::min(levels, static_cast<unsigned>(std::countr_zero(self_label)));
    for (unsigned j = lowest; j-- > 0;) {
        if (std::uint64_t{self_label} + (std::uint64_t{1} << j) < n) {
            hops.add(self_label + (std::uint64_t{1} << j), tag_of(0, j));
        }
    }
    for (unsigned j = levels; j-- > 0;) {
        hops.add((self_label + (std::uint64_t{1} << j)) % n, tag_of(0, j));
    }
    if (kind == propagator_kind::bmg) {
        for (unsigned j = levels; j-- > 0;) {
            hops.add((self_label + n - (std::uint64_t{1} << j)) % n, tag_of(1, j));
        }
    }
}

std::uint64_t sender_label(const overlay_route& route, rank_t n, rank_t self_label, route_tag received) {
    if (route.kind == propagator_kind::hba) {
        return hba_sender(cubes_for(n), self_label, received);
    }
    return circulant_sender(route.kind, n, self_label, received);
}

}  // namespace

void overlay_hops(const overlay_route& route, rank_t self, route_tag received, std::vector<hop>& out) {
    BTL_FT_ASSERT(self < route.size && !route.skip.contains(self), "overlay hop asked of a non-participant");
    const labels labelling(route);
    const rank_t n = labelling.count();
    const rank_t self_label = labelling.label_of(self);
    const auto sender = static_cast<rank_t>(sender_label(route, n, self_label, received));
    hop_list hops(labelling, self_label, sender, out);
    if (route.kind == propagator_kind::hba) {
        hba_hops(cubes_for(n), self_label, hops);
    } else {
        circulant_hops(route.kind, n, self_label, hops);
    }
}

rank_t overlay_sender(const overlay_route& route, rank_t self, route_tag received) {
    const labels labelling(route);
    const rank_t self_label = labelling.label_of(self);
    const auto sender = static_cast<rank_t>(sender_label(route, labelling.count(), self_label, received));
    return sender == self_label ? no_rank : labelling.rank_of(sender);
}

void node_overlay_hops(const overlay_route& route, const node_layout& layout, rank_t self, route_tag received,
                       std::vector<hop>& out) {
    BTL_FT_ASSERT(route.size == layout.size(), "a node layout of another job");
    BTL_FT_ASSERT(self < route.size && !route.skip.contains(self), "overlay hop asked of a non-participant");
    out.clear();
    if (received == route_local) {
        return;
    }
    const dead_set lost = layout.lost_nodes(route.skip);
    const rank_t self_node = layout.node_of(self);
    std::vector<hop> links;
    overlay_hops({route.kind, layout.node_count(), layout.node_of(route.source), lost}, self_node, received, links);
    for (const hop& link : links) {
        const rank_t landings = std::min(node_landings, layout.live_count(link.target, route.skip));
        out.push_back({layout.live_process(link.target, (link.route - 1u) % landings, route.skip), link.route});
    }
    for (const rank_t mate : layout.ranks_of(self_node)) {
        if (mate != self && !route.skip.contains(mate)) {
            out.push_back({mate, route_local});
        }
    }
}

}  // namespace btl_ft
