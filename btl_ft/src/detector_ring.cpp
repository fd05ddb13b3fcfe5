// The observation ring (seed 002, Algorithm 1, tasks T1-T4 and FindEmitter):
// heartbeats to the observer, suspicion of a silent emitter, mending around
// dead or departed predecessors, and clean departure.
//
// A heartbeat is a 64-bit word (emitter rank, sequence) written into the
// observer's flag; the observer only ever compares words, so it needs no
// clock from the emitter, recognises a word left behind by a replaced
// emitter, and counts missed periods from sequence gaps. Nothing on this
// path allocates: the word is built in a register and put as is.
//
// Rejected alternative: a heartbeat timestamp, which would need synchronised
// clocks and cannot tell which emitter wrote it.
#include <algorithm>

#include "btl_ft/assert.hpp"
#include "detector_state.hpp"

namespace btl_ft {

void detector::state::emit_heartbeat() {
    if (observer == no_rank || observer == self()) {
        return;  // alone, or the observer died and its successor has not claimed us yet
    }
    if (++emitted_sequence == 0) {
        emitted_sequence = 1;  // word 0 means "empty flag"
    }
    const std::uint64_t word = heartbeat_word(self(), emitted_sequence);
    if (!net.put_heartbeat(observer, word)) {
        net.send(observer, wire::encode_heartbeat(word));
    }
    ++stats.heartbeats_sent;
}

// Task T2: only a word that differs from the last one read counts, because
// the flag keeps its last value when the emitter falls silent.
void detector::state::accept_word(time_ns now, std::uint64_t word) {
    if (!started || word == 0 || word == last_word) {
        return;
    }
    last_word = word;
    const rank_t writer = heartbeat_emitter(word);
    if (writer != emitter || alone()) {
        ++stats.stale_heartbeats;
        if (writer < config.size && dead.contains(writer)) {
            tell_dead(writer);
        }
        return;
    }
    const std::uint32_t sequence = heartbeat_sequence(word);
    const std::uint32_t step = sequence - last_sequence;  // modulo 2^32: survives wrap-around
    const bool advances = !have_sequence || (step != 0 && step < 0x80000000u);
    if (have_sequence && advances && step > 1) {
        stats.heartbeats_missed += step - 1;
    }
    const bool known_emitter = have_sequence;
    if (advances) {
        last_sequence = sequence;
        have_sequence = true;
    }
    if (!known_emitter) {
        last_heard_at = now;  // its first word after mending: no silence to report
    }
    heard_emitter(now);
    probes.forget();  // the emitter lives: whatever is behind it is its own observer's business
}

// The emitter is alive (a new word, or the answer to a confirmation PROBE).
// A long silence before it is reported: it is how close a false failure came.
void detector::state::heard_emitter(time_ns now) {
    const time_ns silent = now - last_heard_at;
    if (4 * silent > 3 * config.timeout_ns) {
        ++stats.close_calls;
        out.on_close_call(emitter, silent);
    }
    silence_starts(now);
    mend_witness_asked = false;
    confirm.end();
    expect_emitter_by(now + config.timeout_ns);
}

// The emitter must be heard by `due`. Its confirmation starts
// confirm_lead() earlier, so that an emitter which answers nothing is
// declared at `due`, not a window later.
void detector::state::expect_emitter_by(time_ns due) {
    emitter_due = due;
    emitter_deadline = due - config.confirm_lead();
}

// The emitter is about to time out: ask it directly before declaring it
// failed. Its heartbeats may be stuck behind a slow path while a PROBE
// gets through, or this process may itself have just come back from a
// stall. A witness on its node is asked as well: a starved emitter cannot
// answer either, but its host can tell that it still runs.
void detector::state::start_confirm(time_ns now) {
    if (!confirm.active()) {
        witnessed_row.clear();
    }
    confirm.ask(next_round());
    std::array<std::byte, wire::max_probe_bytes> bytes;
    net.send(emitter, wire::encode_probe(confirm.round(), bytes));
    ++stats.confirmations;
    emitter_deadline = now + config.confirm_window();
    ask_witness(now);
}

// Task T3, after confirmation failed. Probed predecessors whose own window
// ran out unanswered are condemned in the same step, and all go out in one
// notice.
void detector::state::suspect_emitter(time_ns now) {
    BTL_FT_ASSERT(!alone(), "suspecting self");
    ++stats.suspicions;
    // Silence of a whole other node is what a cut looks like from either side.
    const bool node_silent = confirm.awaiting_remote_witness();
    confirm.end();
    const rank_t suspect = emitter;
    failed_batch found;
    const bool added = mark_failed(now, emitter, failure_kind::suspected);
    BTL_FT_ASSERT(added, "the emitter was already known dead");
    found.add(emitter);
    condemn_silent_probes(now, found);
    if (config.hierarchy == hierarchy_kind::node) {
        suspect_with_two_levels(now, suspect, found, node_silent);
        return;
    }
    declare_suspected(now, found.view(), found.view(), node_silent);
}

// What this process declared failed itself goes out: a notice (with a copy
// for `copies`, so that one that was falsely suspected learns it), the
// fence, the sink, and a census when a whole node was silent.
void detector::state::declare_suspected(time_ns now, std::span<const rank_t> declared,
                                        std::span<const rank_t> copies, bool node_silent) {
    if (check_quorum(now)) {
        return;
    }
    fix_neighbours(now, true);
    broadcast(now, copies);
    out.on_suspected(declared);
    report(declared);
    if (node_silent) {
        start_census(now);
    }
}

rank_t detector::state::find_emitter() const {
    rank_t candidate = ring_order->predecessor(self());
    while (candidate != self() && gone(candidate)) {
        candidate = ring_order->predecessor(candidate);
    }
    return candidate;
}

// FindEmitter, then NEWOBSERVER; the new emitter gets two timeouts for its
// first word (one message delay for NEWOBSERVER, one for the heartbeat).
// After a failure the predecessors behind it are probed as well, since
// failures often come in rows (one node's processes); a departure is not
// news of that kind and sends no probes.
void detector::state::mend(time_ns now, bool after_failure) {
    emitter = find_emitter();
    have_sequence = false;
    mend_witness_asked = false;
    confirm.end();
    silence_starts(now);
    if (alone()) {
        observer = self();
        emitter_deadline = never;
        next_heartbeat_at = never;
        probes.forget();
        return;
    }
    send_new_observer();
    if (started) {
        expect_emitter_by(now + 2 * config.timeout_ns);
    } else {
        emitter_deadline = never;
    }
    refresh_probes(now, after_failure && started);
    if (after_failure && started) {
        ask_witness_after_mend();
    }
}

void detector::state::send_new_observer() {
    std::vector<std::byte> bytes;
    wire::encode_new_observer(config.flag_handle, bytes);
    net.send(emitter, bytes);
    ++stats.new_observer_sent;
}

// Called whenever D or the departed set grew: mend at once if the emitter is
// gone (no need to wait for its timeout), stop heartbeating a gone observer
// until its successor sends NEWOBSERVER.
void detector::state::fix_neighbours(time_ns now, bool after_failure) {
    if (!alone() && gone(emitter)) {
        mend(now, after_failure);
    }
    if (observer != no_rank && observer != self() && gone(observer)) {
        observer = no_rank;
    }
}

// Task T4: the new observer gets a heartbeat at once, so its 2*timeout
// allowance covers one message delay, not a whole period as well.
void detector::state::on_new_observer(time_ns now, rank_t from, const wire::message& msg) {
    observer = from;
    net.on_observer_handle(from, msg.handle_bytes());
    if (started) {
        emit_heartbeat();
        next_heartbeat_at = now + config.period_ns;
    }
}

void detector::state::on_leave(time_ns now, rank_t from, const wire::message& msg) {
    departed.insert(from);
    for (const rank_t rank : msg.departed) {
        if (rank != self() && !dead.contains(rank)) {
            departed.insert(rank);
        }
    }
    fix_neighbours(now, false);
}

// LEAVE carries the departed ranks between our emitter and us: exactly those
// our observer will walk past when it mends, so that a row of processes
// finalizing one after the other is never mistaken for failures. The
// emitter too, and the departed beyond it, when it leaves with us (leave's
// leaving_too). Capped to the message size, keeping the nearest ones.
void detector::state::leave_bytes(std::vector<std::byte>& bytes) const {
    const std::size_t cap = (config.max_message_bytes - wire::header_bytes - wire::max_varint_bytes) / wire::max_varint_bytes;
    std::vector<rank_t> passed;
    for (rank_t r = ring_order->predecessor(self()); r != self() && passed.size() < cap;
         r = ring_order->predecessor(r)) {
        if (departed.contains(r)) {
            passed.push_back(r);
        } else if (r == emitter || !dead.contains(r)) {
            break;
        }
    }
    std::sort(passed.begin(), passed.end());
    wire::encode_leave(passed, bytes);
}

void detector::state::send_leave() {
    std::vector<std::byte> bytes;
    leave_bytes(bytes);
    if (observer != no_rank && observer != self()) {
        net.send(observer, bytes);
    }
    if (!alone() && emitter != observer) {
        net.send(emitter, bytes);
    }
}

// Neighbours that leave at the same moment lose each other's LEAVE (each is
// already stopped when the other's arrives), so the next live observer mends
// onto a departed process. A process that has left but still runs (inside
// MPI_Finalize) answers that NEWOBSERVER, or a PROBE, with LEAVE, so the
// walk continues at once instead of ending in a false failure 2*timeout
// later.
void detector::state::answer_after_leave(rank_t from, std::span<const std::byte> bytes) {
    wire::message msg;
    if (!left || from >= config.size || from == self() ||
        wire::decode(bytes, {config.size, config.max_message_bytes}, msg) != wire::status::ok ||
        (msg.type != wire::msg_type::new_observer && msg.type != wire::msg_type::probe)) {
        return;
    }
    std::vector<std::byte> reply;
    leave_bytes(reply);
    net.send(from, reply);
}

void detector::state::tell_dead(rank_t rank) {
    if (told_dead.insert(rank)) {
        const auto bytes = wire::encode_declared_dead();
        net.send(rank, bytes);
    }
}

void detector::state::declared_dead_self(rank_t told_by, const char* reason) {
    if (stopped) {
        return;
    }
    stopped = true;
    emitter_deadline = never;
    next_heartbeat_at = never;
    out.on_declared_dead_self(told_by, reason);
}

// A departed rank left cleanly: a late claim that it failed is not reported.
bool detector::state::mark_failed(time_ns now, rank_t rank, failure_kind kind) {
    BTL_FT_ASSERT(rank != self(), "marking self failed");
    if (departed.contains(rank) || dead.contains(rank)) {
        return false;
    }
    count_failure(now, rank, kind);
    if (kind == failure_kind::crashed) {
        crashed.insert(rank);
    } else if (kind == failure_kind::unreachable) {
        unreachable.insert(rank);
    }
    return dead.insert(rank);
}

void detector::state::report(std::span<const rank_t> ranks) {
    if (episode.waiting()) {
        episode.hold(ranks);
        return;
    }
    out.on_failed(ranks);
}

time_ns detector::state::next_deadline() const {
    if (!started || stopped) {
        return never;
    }
    return std::min({next_heartbeat_at, emitter_deadline, episode.wait_deadline(), census_deadline()});
}

}  // namespace btl_ft
