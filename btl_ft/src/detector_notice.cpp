// Failure notices (seed 002, task T5, with the batching of seed 000): a
// notice carries every failure and departure its source knows (and which
// failures the runtime confirmed, for the quorum rule), which is both
// the news and the skip set that fixes the overlay; every hop routes by the
// skip set in the message, never by its own view, so the overlay is the same
// at every hop.
//
// Dedupe is by content: a notice naming no rank we did not know is dropped
// without forwarding. That is safe because whatever we knew came from a
// notice we forwarded (or started) ourselves, which covers the same ground;
// it needs no per-source table, and it keeps n simultaneous report_failure()
// calls for one rank (a runtime event seen everywhere) at O(n log n)
// messages instead of n broadcasts of O(n log n) each.
//
// Fallback: when the skip set does not fit in max_message_bytes (thousands
// of failures), the source sends the notice itself to every process it
// believes alive, in as many chunks as needed, mode `direct`, and receivers
// do not forward. A one-hop broadcast needs no skip set and loses nothing
// while the source lives; it costs O(n) messages, once, in a rare case.
//
// Rejected alternative: truncating the skip set, which would make hops route
// to dead ranks and silently eat the overlay's fault tolerance.
#include <algorithm>
#include <iterator>

#include "btl_ft/assert.hpp"
#include "btl_ft/overlay.hpp"
#include "detector_state.hpp"

namespace btl_ft {

void detector::state::send_all(std::vector<std::byte>& bytes, const std::vector<hop>& hops) {
    for (const hop& next : hops) {
        bytes[wire::notice_route_offset] = std::byte{next.route};
        net.send(next.target, bytes);
        ++stats.notice_messages_sent;
    }
}

// The suspects also get a copy: one that was falsely suspected learns at
// once that it has been excluded, and stops.
void detector::state::broadcast(time_ns /*now*/, std::span<const rank_t> suspects) {
    ++stats.notices_started;
    ++notice_sequence;
    if (config.hierarchy == hierarchy_kind::node) {
        noticed = dead;  // all of it is on its way
    }
    const dead_set skip = dead_set::merged(dead.ranks(), departed.ranks());
    std::vector<std::byte> bytes;
    encode_own_notice(bytes);
    if (bytes.size() > config.max_message_bytes) {
        broadcast_direct(skip, suspects);
        return;
    }
    std::vector<hop> hops;
    notice_hops({config.propagator, config.size, self(), skip}, route_origin, hops);
    for (const rank_t suspect : suspects) {
        hops.push_back({suspect, route_origin});
    }
    send_all(bytes, hops);
}

// Everything this process knows, as a notice from it.
void detector::state::encode_own_notice(std::vector<std::byte>& bytes) const {
    const std::vector<rank_t> only_unreachable = unreachable_not_crashed(dead.ranks());
    wire::encode_notice({wire::mode_of(config.propagator), route_origin, self(), notice_sequence, dead.ranks(),
                         departed.ranks(), crashed.ranks(), only_unreachable},
                        bytes);
}

void detector::state::notice_hops(const overlay_route& route, route_tag received, std::vector<hop>& hops) const {
    if (config.hierarchy == hierarchy_kind::node) {
        node_overlay_hops(route, *config.layout, self(), received, hops);
    } else {
        overlay_hops(route, self(), received, hops);
    }
}

void detector::state::broadcast_direct(const dead_set& skip, std::span<const rank_t> suspects) {
    // Worst case 5 bytes a rank, so every chunk fits whatever the gaps.
    const std::size_t per_chunk = (config.max_message_bytes - wire::notice_overhead_bytes) / wire::max_varint_bytes;
    std::vector<hop> everyone;
    const std::span<const rank_t> skipped = skip.ranks();
    auto next_skipped = skipped.begin();
    for (rank_t rank = 0; rank < config.size; ++rank) {
        if (next_skipped != skipped.end() && *next_skipped == rank) {
            ++next_skipped;
        } else if (rank != self()) {
            everyone.push_back({rank, route_origin});
        }
    }
    for (const rank_t suspect : suspects) {
        everyone.push_back({suspect, route_origin});
    }
    std::vector<std::byte> bytes;
    // A chunk of failures names its crashed and unreachable ones too, so the
    // chunk is cut at half the size: those two lists are disjoint subsets of it.
    const auto send_chunks = [&](std::span<const rank_t> list, bool failed_list) {
        const std::size_t size = failed_list ? per_chunk / 2 : per_chunk;
        for (std::size_t at = 0; at < list.size(); at += size) {
            const std::span<const rank_t> chunk = list.subspan(at, std::min(size, list.size() - at));
            std::vector<rank_t> crashed_in_chunk, unreachable_in_chunk;
            if (failed_list) {
                std::copy_if(chunk.begin(), chunk.end(), std::back_inserter(crashed_in_chunk),
                             [&](rank_t rank) { return crashed.contains(rank); });
                unreachable_in_chunk = unreachable_not_crashed(chunk);
            }
            wire::encode_notice({wire::notice_mode::direct, route_origin, self(), notice_sequence,
                                 failed_list ? chunk : std::span<const rank_t>{},
                                 failed_list ? std::span<const rank_t>{} : chunk, crashed_in_chunk,
                                 unreachable_in_chunk},
                                bytes);
            BTL_FT_ASSERT(bytes.size() <= config.max_message_bytes, "direct notice chunk too large");
            send_all(bytes, everyone);
        }
    };
    send_chunks(dead.ranks(), true);
    send_chunks(departed.ranks(), false);
}

void detector::state::on_notice(time_ns now, rank_t from, const wire::message& msg) {
    ++stats.notices_received;
    if (std::binary_search(msg.failed.begin(), msg.failed.end(), self())) {
        tell_condemned_mates(msg);
        declared_dead_self(from, "named failed in a failure notice");
        return;
    }
    tell_source_what_it_missed(from, msg);
    std::vector<rank_t> fresh;
    if (!knows_failures_in(msg)) {
        for (const rank_t rank : msg.failed) {
            const bool confirmed = std::binary_search(msg.crashed.begin(), msg.crashed.end(), rank);
            const bool unreached = std::binary_search(msg.unreachable.begin(), msg.unreachable.end(), rank);
            const failure_kind kind = confirmed  ? failure_kind::crashed
                                      : unreached ? failure_kind::unreachable
                                                  : failure_kind::suspected;
            if (mark_failed(now, rank, kind)) {
                fresh.push_back(rank);
            } else if (confirmed && dead.contains(rank)) {
                confirm_crash(rank);  // news of a kind, not of a failure: not forwarded
            }
        }
    }
    if (check_quorum(now)) {
        return;
    }
    const bool news_to_spread = spreads_news(msg);  // always: it records what the notice carried
    bool learned = !fresh.empty() || news_to_spread;
    for (const rank_t rank : msg.departed) {
        if (rank != self() && !dead.contains(rank)) {
            learned = departed.insert(rank) || learned;
        }
    }
    if (!learned) {
        ++stats.notices_duplicate;
        return;
    }
    const bool participant = !std::binary_search(msg.departed.begin(), msg.departed.end(), self());
    if (msg.mode != wire::notice_mode::direct && participant) {
        if (answers_a_notice_of_ours(from, msg)) {
            broadcast(now, {});  // ours went by a skip set that was missing these
        } else {
            forward(msg);
        }
    }
    fix_neighbours(now, !fresh.empty());
    if (!fresh.empty()) {
        report(fresh);
    }
}

// Most copies of a broadcast repeat what the receiver knows: every rank
// they name failed is in D and every crash they confirm is in `crashed`.
// The loop of on_notice() would then change nothing, so one merge walk of
// the sorted lists replaces a binary search or two per named rank (at 2^17
// processes, a quarter of a node loss's simulation time).
bool detector::state::knows_failures_in(const wire::message& msg) const {
    return contains_all(dead.ranks(), msg.failed) && contains_all(crashed.ranks(), msg.crashed);
}

void detector::state::forward(const wire::message& msg) {
    const dead_set skip = dead_set::merged(msg.failed, msg.departed);
    std::vector<hop> hops;
    notice_hops({wire::kind_of(msg.mode), config.size, msg.source, skip}, msg.route, hops);
    std::vector<std::byte> bytes;
    wire::encode_notice({msg.mode, route_origin, msg.source, msg.sequence, msg.failed, msg.departed, msg.crashed,
                         msg.unreachable},
                        bytes);
    send_all(bytes, hops);
}

// The ranks of `failed` that a transport error named and the runtime has
// not confirmed: the notice's unreachable list, disjoint from its crashed one.
std::vector<rank_t> detector::state::unreachable_not_crashed(std::span<const rank_t> failed) const {
    std::vector<rank_t> only;
    std::copy_if(failed.begin(), failed.end(), std::back_inserter(only),
                 [&](rank_t rank) { return unreachable.contains(rank) && !crashed.contains(rank); });
    return only;
}

}  // namespace btl_ft
