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
#include <bit>

#include "btl_ft/assert.hpp"
#include "detector_state.hpp"

namespace btl_ft {

// Beyond floor(log2 n) overlapping failures the notice overlay gives no
// guarantee anyway, so a wider window would buy nothing.
std::size_t detector::state::probe_width() const {
    const auto log2_size = static_cast<std::uint32_t>(std::bit_width(config.size) - 1);
    return std::max<std::uint32_t>(1, std::min(config.probe_width, log2_size));
}

// Rebuilds the window behind the (new) emitter in ring order. A predecessor
// already probed keeps its slot, round and deadline, so mending again does
// not restart its window nor send it a second PROBE.
void detector::state::refresh_probes(time_ns now, bool send_new) {
    const std::array<probe_slot, max_probe_width - 1> before = probes;
    const std::size_t before_count = probe_count;
    const std::size_t width = probe_width();
    probe_count = 0;
    rank_t candidate = emitter;
    while (probe_count + 1 < width) {
        candidate = ring_order->predecessor(candidate);
        while (candidate != self() && gone(candidate)) {
            candidate = ring_order->predecessor(candidate);
        }
        if (candidate == self()) {
            break;
        }
        const auto kept = std::find_if(before.begin(), before.begin() + static_cast<std::ptrdiff_t>(before_count),
                                       [&](const probe_slot& slot) { return slot.rank == candidate; });
        if (kept != before.begin() + static_cast<std::ptrdiff_t>(before_count)) {
            probes[probe_count++] = *kept;
            continue;
        }
        if (!send_new) {
            break;  // the window stays a contiguous run behind the emitter
        }
        const probe_slot fresh{now + 2 * config.timeout_ns, candidate, ++probe_round};
        std::array<std::byte, wire::max_probe_bytes> bytes;
        net.send(candidate, wire::encode_probe(fresh.round, bytes));
        ++stats.probes_sent;
        probes[probe_count++] = fresh;
    }
}

// Called when the emitter's grace ran out (it is already in `found`). Walks
// the window in ring order: silent past its window means failed too; an
// answer, or a window still open, ends the walk there, and the mending that
// follows lands on that predecessor (everything before it is now gone).
void detector::state::condemn_silent_probes(time_ns now, failed_batch& found) {
    for (std::size_t i = 0; i < probe_count; ++i) {
        const probe_slot& slot = probes[i];
        if (gone(slot.rank)) {
            continue;  // a notice or a LEAVE named it meanwhile
        }
        if (slot.answered() || now < slot.deadline) {
            break;
        }
        const bool added = mark_failed(now, slot.rank, failure_kind::suspected);
        BTL_FT_ASSERT(added, "a probed rank was already gone");
        found.add(slot.rank);
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
    if (from == emitter && answers_confirmation(msg.sequence)) {
        ++stats.confirmed_alive;
        heard_emitter(now);
        return;
    }
    if (on_census_reply(now, from, msg.sequence)) {
        return;
    }
    for (std::size_t i = 0; i < probe_count; ++i) {
        if (probes[i].rank == from && probes[i].round == msg.sequence) {
            probes[i].deadline = never;
            return;
        }
    }
}

}  // namespace btl_ft
