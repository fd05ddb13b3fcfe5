// Overlays that carry a failure notice, as pure functions: every hop computes
// its own forwarding list from what the notice carries (source, the skip set
// = the source's dead and departed ranks, the route tag it came with), so the
// overlay is the same at every hop whatever each hop itself believes.
//
// Participants are the ranks of [0, size) not in the skip set, labelled from
// the source (label 0) in rank order; labels come from dead_set arithmetic in
// O(log |skip|), never from an O(size) array, so a hop costs O(log^2 size)
// even at 2^20 ranks. Every overlay is flooded: a participant forwards once,
// on its first receipt, to all its overlay neighbours except the source and
// the neighbour it got the notice from. A neighbour is listed once even when
// two links lead to it.
//
// - hba (seed 002): k = floor(log2 n); cube A = labels v, cube B = labels
//   (n - v) mod n, v in [0, 2^k); together they cover every label. A node
//   forwards along every dimension of each cube it belongs to. Flooding is
//   chosen over k disjoint binomial trees (Ramanathan-Shin) because its proof
//   is one line -- Q_k has vertex connectivity k, so removing up to k-1
//   participants leaves every cube connected and the flood crosses it -- and
//   its cost is the same order (about k messages per node and cube). Tree
//   edges of the binomial spanning tree are listed first, so the first copy
//   arrives along a shortest path.
// - bmg (seed 000): links to label +-2^j, forward binomial tree first.
// - chord (seed 003): links to label +2^j only: about half the messages of
//   bmg, still strongly connected (the +1 links alone form a cycle).
//
// Route tag: 0 at the source; otherwise 1 + 32*channel + j, the link the
// notice travelled (hba: channel = cube, j = dimension; bmg: channel 0 = +2^j,
// 1 = -2^j; chord: +2^j). It lets the receiver name its sender without
// trusting the transport. route_local marks the local star of the two-level
// overlay (node_overlay_hops).
#pragma once

#include <cstdint>
#include <vector>

#include "btl_ft/dead_set.hpp"
#include "btl_ft/node_layout.hpp"
#include "btl_ft/types.hpp"

namespace btl_ft {

using route_tag = std::uint8_t;
inline constexpr route_tag route_origin = 0;
inline constexpr route_tag route_local = 65;  // after the largest link tag, 1 + 32 * 1 + 31
inline constexpr route_tag route_tag_max = route_local;

struct hop {
    rank_t target;
    route_tag route;
    friend bool operator==(const hop&, const hop&) = default;
};

// The notice being routed. `source` must not be in `skip`.
struct overlay_route {
    propagator_kind kind;
    rank_t size;
    rank_t source;
    const dead_set& skip;
};

// Replaces `out` with the hops `self` (a participant) forwards to after
// receiving the notice with tag `received` (route_origin at the source).
void overlay_hops(const overlay_route& route, rank_t self, route_tag received, std::vector<hop>& out);

// The participant that sends to `self` with tag `received`; no_rank for the
// origin tag or a tag that cannot reach `self`.
rank_t overlay_sender(const overlay_route& route, rank_t self, route_tag received);

// Two levels (seed 000, Algorithm 1). The overlay of `route.kind` runs
// between nodes: the nodes where `route.skip` leaves a live process,
// labelled from the source's node. A link into a node lands on one of the
// node's first node_landings live processes, chosen by the link's tag, so
// that one unknown failure there costs the links landing on it, not the
// node. A process of a node that receives a notice over a link before any
// copy from a node-mate is the node's representative for that notice: it
// forwards on its node's links and to every live node-mate (the local star,
// tag route_local). The source does both as its node's representative. A
// receiver of the local star forwards nothing. So a notice crosses each
// link between nodes at most node_landings times and reaches every
// process, and the messages follow nodes, not processes.
//
// Why two landings and not one per link: each landing that receives before
// the other's local star arrives sends a star of its own, so every extra
// landing costs up to a node's worth of messages per notice. One landing
// loses the whole node to one process dying unseen in the wrong moment.
//
// Replaces `out` as overlay_hops does; `self` is a participant.
inline constexpr rank_t node_landings = 2;
void node_overlay_hops(const overlay_route& route, const node_layout& layout, rank_t self, route_tag received,
                       std::vector<hop>& out);

}  // namespace btl_ft
