// Parallel probing of the predecessors behind a new emitter.
//
// Algorithm 1 of seed 002 mends one predecessor at a time: each suspect gets
// 2*timeout for its first word, so a row of k hung neighbours (a stopped
// node) takes timeout + 2(k-1)*timeout to find (Lemma 1's (d+1)*2*delta).
// Here the observer that mends after a failure also sends PROBE to the next
// m-1 predecessors it believes alive; a live one answers PROBE_REPLY at once.
// When the new emitter's grace runs out, every probed predecessor whose own
// 2*timeout window also ran out unanswered is condemned in the same step,
// so the whole row is found at timeout + 2*timeout. The window is the same
// allowance the new emitter gets (one message delay each way), so a slow
// but live predecessor is no more at risk than under mending one by one.
// A probe decides nothing while the new emitter lives: the first word from
// it forgets every probe, since what lies behind it is its observer's
// business.
//
// Rejected alternatives: a shorter grace for each mending step, which
// condemns the living once message delays approach the timeout; and
// NEWOBSERVER to several predecessors at once, which would make each of
// them heartbeat to us and leave no single emitter.
#include <algorithm>

#include "btl_ft/assert.hpp"
#include "detector_state.hpp"

namespace btl_ft {

// Rebuilds the window behind the (new) emitter in ring order and PROBEs
// the predecessors it opens a slot for.
void detector::state::refresh_probes(time_ns now, bool send_new) {
    std::array<rank_t, probe_window::capacity> behind{};
    std::size_t count = 0;
    const std::size_t width = config.probe_width_used();
    rank_t candidate = emitter;
    while (count + 1 < width) {
        candidate = ring_order->predecessor(candidate);
        while (candidate != self() && gone(candidate)) {
            candidate = ring_order->predecessor(candidate);
        }
        if (candidate == self()) {
            break;
        }
        behind[count++] = candidate;
    }
    probe_window::slots_t opened;
    for (const probe_slot& fresh :
         probes.rebuild({behind.data(), count}, send_new, now + 2 * config.timeout_ns, probe_round, opened)) {
        std::array<std::byte, wire::max_probe_bytes> bytes;
        net.send(fresh.rank, wire::encode_probe(fresh.round, bytes));
        ++stats.probes_sent;
    }
}

// Called when the emitter's grace ran out (it is already in `found`).
void detector::state::condemn_silent_probes(time_ns now, failed_batch& found) {
    const std::size_t before = found.count;
    probes.add_silent(now, [&](rank_t rank) { return gone(rank); }, found);
    for (std::size_t i = before; i < found.count; ++i) {
        const bool added = mark_failed(now, found.ranks[i], failure_kind::suspected);
        BTL_FT_ASSERT(added, "a probed rank was already gone");
    }
}

// Answered whatever our own state: the word proves we run, nothing more.
void detector::state::on_probe(rank_t from, const wire::message& msg) {
    std::array<std::byte, wire::max_probe_reply_bytes> bytes;
    net.send(from, wire::encode_probe_reply(msg.sequence, heartbeat_word(self(), emitted_sequence), bytes));
}

// A reply to a confirmation PROBE proves the emitter alive. Any other reply
// only marks its slot; it is never a heartbeat (the replier is not our
// emitter) and never a stale word. A late reply whose slot was dropped
// (the ring mended, or a later mending probed that rank afresh under a new
// round) is ignored.
void detector::state::on_probe_reply(time_ns now, rank_t from, const wire::message& msg) {
    if (from == emitter && confirm.answered_by(msg.sequence)) {
        ++stats.confirmed_alive;
        heard_emitter(now);
        return;
    }
    if (on_census_reply(now, from, msg.sequence)) {
        return;
    }
    probes.answer(from, msg.sequence);
}

}  // namespace btl_ft
