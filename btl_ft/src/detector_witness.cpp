// Witnesses: an observer whose emitter timed out asks the emitter's host
// whether the emitter still runs, before declaring it failed.
//
// A process on a contended node can be denied the CPU for longer than the
// timeout (measured: 90 ms behind another process group's threads, on 2
// cores), and then it can neither heartbeat nor answer a PROBE. Its host
// still knows it exists and is not stopped. So the observer asks a process
// of the emitter's node (itself, when they share one), which reads the
// emitter's state from its host (transport::local_state):
//   running: it is only slow; it gets another timeout, until it has been
//            silent for witness_patience (1 s, at least 4 timeouts), so
//            a process that stays silent while running is still declared;
//            silent while the observer was awake: its own wake-ups later
//            than a timeout do not count (in about 1,400 runs of two
//            respawn jobs at once on 2 cores, an observer woken a second
//            late declared a starved emitter without asking);
//   starved: running, and its detector was runnable but got no CPU since
//            the witness last looked (or has not started yet): as running,
//            and the silence since that look does not count either. In
//            about 3,000 runs of the same stress, 3 emitters were
//            declared after the patience while their detector thread,
//            runnable, never ran for over a second. The scheduler
//            starves a thread of normal policy for a bounded time
//            (real-time tasks get at most 95% of a CPU by default), so
//            only a wedged detector (asleep, or running and sending
//            nothing) stays silent past the patience;
//   stopped or gone: a hang or a crash, declared when the silence reaches
//            the timeout, without waiting out the PROBE's window;
//   unknown: the PROBE alone decides, as without witnesses.
// A witness on another node gets the node grace to answer (at least half a
// timeout: two hosts' schedules lie on its path). Silence from the witness
// as well as the emitter is all a lost node, a cut one, one whose
// processes are all stopped and one starved of CPU as a whole have in
// common, so the grace decides: their processes are declared at the
// timeout plus the grace instead of plus the PROBE's window. An emitter
// left alone on its node (its node-mates failed or left) has nobody there
// to ask, and its silence is its node's as well: it gets the same grace.
// Without it, a stop of its node-mate followed by a 100 ms stall of its
// own (a virtual CPU taken by the host) had it declared. Measured on
// 2 emulated nodes sharing 2 cores, each a scheduling group: whole nodes
// starved for 90 to 230 ms, and declared failed at δ + δ/2 = 75 ms.
//
// Rejected: asking the runtime's daemon (one PMIx query per suspicion,
// through a server that may itself be starved on the same node), and
// longer timeouts for everyone (every real failure would pay for the rare
// starved process).
#include <algorithm>
#include <array>

#include "btl_ft/assert.hpp"
#include "detector_state.hpp"

namespace btl_ft {

bool detector::state::same_node(rank_t a, rank_t b) const {
    const auto& nodes = *config.node_of_rank;
    return nodes[a] == nodes[b];
}

// Ourselves when we share the subject's node; else the first live rank after
// it on its node (ranks of a node are usually contiguous, so the scan is
// short); no_rank without node information or without such a rank.
rank_t detector::state::witness_for(rank_t subject) const {
    if (!config.node_of_rank) {
        return no_rank;
    }
    if (same_node(self(), subject)) {
        return self();
    }
    for (rank_t step = 1; step < config.size; ++step) {
        const rank_t candidate = (subject + step) % config.size;
        if (same_node(candidate, subject) && candidate != self() && !gone(candidate)) {
            BTL_FT_ASSERT(candidate != subject, "a process witnessing for itself");
            return candidate;
        }
    }
    return no_rank;
}

// Two levels: the first live process of the subject's node after `after`
// in rank order, cyclically, other than the subject and self; no_rank if
// none.
rank_t detector::state::next_node_mate(rank_t subject, rank_t after) const {
    const std::span<const rank_t> mates = config.layout->mates_of(subject);
    const auto start = std::upper_bound(mates.begin(), mates.end(), after) - mates.begin();
    for (std::size_t step = 0; step < mates.size(); ++step) {
        const rank_t candidate = mates[(static_cast<std::size_t>(start) + step) % mates.size()];
        if (candidate != subject && candidate != after && candidate != self() && !gone(candidate)) {
            return candidate;
        }
    }
    return no_rank;
}

void detector::state::ask_witness(time_ns now) {
    BTL_FT_ASSERT(confirm.active(), "a witness asked outside a confirmation");
    // The silence the patience counts is what this process was awake to
    // hear (not its own wake-ups later than a timeout: the whole machine
    // starved, the emitter with it), while the emitter could run.
    if (now - last_heard_at - uncounted_ns >= config.witness_patience()) {
        return;
    }
    const rank_t witness = witness_for(emitter);
    if (witness == no_rank) {
        // With nodes known, the emitter is the last live process of its
        // node: its silence is its whole node's, which gets the grace. But
        // no census (detector_census.cpp): with a process per node, every
        // hang would start one, the bursts of PROBEs it is kept from on
        // flat jobs.
        if (config.node_of_rank) {
            wait_for_silent_node(now);
        }
        return;
    }
    ++stats.witness_queries;
    if (witness == self()) {
        apply_witness(now, net.local_state(emitter));
        return;
    }
    std::array<std::byte, wire::max_witness_bytes> bytes;
    const auto query = wire::encode_witness(confirm.round(), emitter, bytes);
    net.send(witness, query);
    // Two levels declare the whole node when nobody there answers, so a
    // second witness is asked: a hung witness beside a hung emitter must
    // not take the node down with them.
    const rank_t second = config.hierarchy == hierarchy_kind::node ? next_node_mate(emitter, witness) : no_rank;
    if (second != no_rank) {
        net.send(second, query);
    }
    confirm.await_remote_witness();
    wait_for_silent_node(now);
}

// Only a node that answers nothing at all (lost, cut off, or starved as a
// whole) waits for all of the grace, from the timeout (or from now, woken
// after it); any answer ends it.
void detector::state::wait_for_silent_node(time_ns now) {
    emitter_deadline = std::max(emitter_deadline, std::max(emitter_due, now) + config.remote_witness_wait());
}

// The emitter was heard, or became the emitter: the silence the patience
// counts starts again.
void detector::state::silence_starts(time_ns now) {
    last_heard_at = now;
    uncounted_ns = 0;
    witnessed_at = now;
    uncounted_at_witness = 0;
}

void detector::state::apply_witness(time_ns now, process_state seen) {
    BTL_FT_ASSERT(confirm.active(), "a witness's answer applied outside a confirmation");
    confirm.witness_answered();
    switch (seen) {
    case process_state::starved:
        // denied the CPU since the previous look: that span is not counted,
        // but for what this process's own absence already left out
        ++stats.witnessed_starved;
        uncounted_ns += std::max<time_ns>(0, now - witnessed_at - (uncounted_ns - uncounted_at_witness));
        [[fallthrough]];
    case process_state::running:
        witnessed_at = now;
        uncounted_at_witness = uncounted_ns;
        ++stats.witnessed_running;
        confirm.end();
        expect_emitter_by(now + config.timeout_ns);  // last_heard_at stays: the silence goes on
        break;
    case process_state::stopped:
    case process_state::gone:
        // Declared when the silence reaches the timeout, never before: a
        // stop may end (a debugger, a suspended job), and the node watch
        // already reports an end at once.
        ++stats.witnessed_down;
        if (now < emitter_due) {
            emitter_deadline = emitter_due;
            break;
        }
        suspect_emitter(now);
        break;
    case process_state::unknown:
        // The witness runs, so its node is not silent: the PROBE decides,
        // in its own window.
        emitter_deadline = std::min(emitter_deadline, now + config.confirm_window());
        break;
    }
}

// Answered for subjects of our own node only; a subject elsewhere is
// `unknown`, whatever the asker believed. With two levels, a subject seen
// stopped or gone comes with the row of node-mates right behind it that
// are stopped too, which the asker, on another node, cannot see.
void detector::state::on_witness(rank_t from, const wire::message& msg) {
    process_state seen = process_state::unknown;
    if (config.node_of_rank && msg.subject != self() && same_node(self(), msg.subject)) {
        seen = net.local_state(msg.subject);
    }
    std::vector<rank_t> behind;
    if (config.hierarchy == hierarchy_kind::node && (seen == process_state::stopped || seen == process_state::gone)) {
        stopped_row_behind(msg.subject, behind);
    }
    ++stats.witness_answers;
    std::vector<std::byte> bytes;
    wire::encode_witness_reply(msg.sequence, msg.subject, seen, behind, bytes);
    net.send(from, bytes);
}

// The subject's predecessors on the ring, nearest first, while they are
// node-mates of ours that the host sees stopped (those known gone are
// passed over), as many as a message holds; sorted. Not those it sees
// gone: one that ended in MPI_Finalize is gone too, and a crash is the
// node watch's to report, at once.
void detector::state::stopped_row_behind(rank_t subject, std::vector<rank_t>& behind) const {
    const std::size_t room = (config.max_message_bytes - wire::max_witness_bytes - 1 - wire::max_varint_bytes) /
                             wire::max_varint_bytes;
    for (rank_t rank = ring_order->predecessor(subject);
         rank != subject && rank != self() && same_node(self(), rank) && behind.size() < room;
         rank = ring_order->predecessor(rank)) {
        if (gone(rank)) {
            continue;
        }
        if (net.local_state(rank) != process_state::stopped) {
            break;
        }
        behind.push_back(rank);
    }
    std::sort(behind.begin(), behind.end());
}

// Only an answer to the current confirmation counts: about the current
// emitter, for one of its rounds, from a rank of the emitter's node. The
// row behind the emitter is kept for its declaration
// (condemn_stopped_mates), with only the ranks of the witness's node.
void detector::state::on_witness_reply(time_ns now, rank_t from, const wire::message& msg) {
    if (on_mend_witness_reply(now, from, msg)) {
        return;
    }
    if (msg.subject == emitter && confirm.answered_by(msg.sequence) && from != self() &&
        config.node_of_rank && same_node(from, emitter)) {
        keep_witnessed_row(from, msg.behind);
        apply_witness(now, msg.state);
    }
}

// The row a witness named, but for ranks of another node than its own
// (which it cannot see) and this process.
void detector::state::keep_witnessed_row(rank_t witness, std::span<const rank_t> behind) {
    for (const rank_t rank : behind) {
        if (rank != self() && same_node(rank, witness)) {
            witnessed_row.insert(rank);
        }
    }
}

}  // namespace btl_ft
