// Two levels (seed 000, docs/two-levels.md): what the detector does
// differently when detector_config::hierarchy is `node`. The ring and the
// overlay come grouped by node (ring::make_grouped, node_overlay_hops);
// here are the declarations of a lost node and of a row of stopped
// node-mates, and the rules that keep every notice delivered when a node
// hears it through few of its processes.
#include <algorithm>

#include "detector_state.hpp"

namespace btl_ft {

// Two levels. When the emitter and every witness asked on its node were
// silent, the node is lost (or cut off, or starved as a whole past the
// grace): its live processes are declared with the emitter, in one notice
// (seed 000, Algorithm 1). One copy goes to each node of the declared, at
// the first of them: should the node run after all, that process tells its
// node-mates (tell_condemned_mates). Otherwise the predecessors behind the
// emitter that share this process's node are asked of the host at once
// (it costs a read of /proc): those stopped or gone are declared with it,
// so a row of hung node-mates takes one timeout, not one each. The row of
// another node is the witness's to see: its answer names the node-mates
// behind the emitter that it saw stopped (on_witness).
void detector::state::suspect_with_two_levels(time_ns now, rank_t suspect, const failed_batch& found,
                                              bool node_silent) {
    std::vector<rank_t> declared(found.view().begin(), found.view().end());
    if (node_silent) {
        for (const rank_t mate : config.layout->mates_of(suspect)) {
            if (mate != self() && mark_failed(now, mate, failure_kind::suspected)) {
                declared.push_back(mate);
            }
        }
    } else {
        condemn_stopped_mates(now, suspect, declared);
    }
    std::vector<rank_t> copies;
    for (const rank_t rank : declared) {
        const rank_t node = config.layout->node_of(rank);
        if (!node_silent ||
            std::none_of(copies.begin(), copies.end(), [&](rank_t c) { return config.layout->node_of(c) == node; })) {
            copies.push_back(rank);
        }
    }
    std::sort(declared.begin(), declared.end());
    declare_suspected(now, declared, copies, node_silent);
}

void detector::state::condemn_stopped_mates(time_ns now, rank_t suspect, std::vector<rank_t>& declared) {
    if (!config.node_of_rank) {
        return;  // witnesses off: the host is not asked
    }
    for (rank_t rank = ring_order->predecessor(suspect); rank != self(); rank = ring_order->predecessor(rank)) {
        if (gone(rank)) {
            continue;
        }
        const process_state seen = same_node(self(), rank) ? net.local_state(rank)
                                   : witnessed_row.contains(rank) ? process_state::stopped
                                                                   : process_state::unknown;
        if (seen != process_state::stopped && seen != process_state::gone) {
            return;
        }
        if (mark_failed(now, rank, failure_kind::suspected)) {
            declared.push_back(rank);
        }
    }
}

// Two levels: an observer that mends onto a process of another node after
// a failure asks that node at once whether its new emitter still runs, as
// it asks its own host about a node-mate (condemn_stopped_mates). A row of
// hung processes that spans two nodes then takes one timeout, not one for
// each node: the new emitter's own observer was in the row, so nobody timed
// its silence.
void detector::state::ask_witness_after_mend() {
    if (config.hierarchy != hierarchy_kind::node || !config.node_of_rank || alone() || same_node(self(), emitter)) {
        return;
    }
    const rank_t witness = witness_for(emitter);
    if (witness == no_rank) {
        return;
    }
    mend_witness_round = next_round();
    mend_witness_asked = true;
    std::array<std::byte, wire::max_witness_bytes> bytes;
    net.send(witness, wire::encode_witness(mend_witness_round, emitter, bytes));
}

// The answer about the new emitter: stopped, it is declared now with the
// row behind it; otherwise its first word is awaited as after any mending
// (gone may be an end in MPI_Finalize whose LEAVE is on its way; a crash is
// reported by the node watch and the runtime). True when the message was
// that answer.
bool detector::state::on_mend_witness_reply(time_ns now, rank_t from, const wire::message& msg) {
    if (!mend_witness_asked || msg.sequence != mend_witness_round || msg.subject != emitter || from == self() ||
        !same_node(from, emitter)) {
        return false;
    }
    mend_witness_asked = false;
    if (msg.state == process_state::stopped && !confirm.active()) {
        ++stats.witnessed_down;
        witnessed_row.clear();
        keep_witnessed_row(from, msg.behind);
        suspect_emitter(now);
    }
    return true;
}

// Two levels: a node declared lost whole gets one copy of the notice, at
// the process its observer suspected. When the node runs after all (it was
// starved, or cut off and mended), that process passes the copy to its
// node-mates named with it, so the node stops together; they pass it on to
// nobody.
void detector::state::tell_condemned_mates(const wire::message& msg) {
    if (config.hierarchy != hierarchy_kind::node || msg.route == route_local || stopped) {
        return;
    }
    std::vector<std::byte> bytes;
    wire::encode_notice({msg.mode, route_local, msg.source, msg.sequence, msg.failed, msg.departed, msg.crashed,
                         msg.unreachable},
                        bytes);
    for (const rank_t mate : config.layout->mates_of(self())) {
        if (mate != self() && std::binary_search(msg.failed.begin(), msg.failed.end(), mate)) {
            net.send(mate, bytes);
        }
    }
}

// Two levels: a node hears a notice through its first live processes only,
// so one of them dying unseen as a notice lands there keeps that notice
// from the rest of its node, and nothing would repeat it. The node-mate
// that finds the dead one then broadcasts a notice that lacks what it
// missed. Whoever gets that notice straight from its source and knows more
// sends the source its own notice, which the source takes in and forwards
// to its node like any news. Sources that miss nothing get no answer.
void detector::state::tell_source_what_it_missed(rank_t from, const wire::message& msg) {
    if (config.hierarchy != hierarchy_kind::node || from != msg.source || msg.route == route_origin ||
        msg.mode == wire::notice_mode::direct || contains_all(msg.failed, dead.ranks())) {
        return;
    }
    std::vector<std::byte> bytes;
    encode_own_notice(bytes);
    if (bytes.size() <= config.max_message_bytes) {
        net.send(from, bytes);
        ++stats.notice_messages_sent;
    }
}

// The answer of tell_source_what_it_missed(): its sender's own notice, sent
// to this process alone. The notice of ours that it answers was routed by
// a skip set without the failures it brings, so its landings may have been
// dead processes: what it told must go out again, over the right ones.
bool detector::state::answers_a_notice_of_ours(rank_t from, const wire::message& msg) const {
    return config.hierarchy == hierarchy_kind::node && msg.route == route_origin && from == msg.source;
}

// A crash of a process of another node can only have come from the
// runtime, which tells the processes of the other nodes: with two levels a
// notice from each would cost each a local star, ppn^2 messages a node for
// news they all have. Only the crashed process's observer broadcasts it, and
// the notice is forwarded by everyone that had it from the runtime alone
// (state::noticed), so that it reaches the crashed process's node-mates,
// whom the runtime does not tell. With one level every process broadcasts:
// dedupe by content makes it cheap.
bool detector::state::runtime_told_everyone(rank_t rank, failure_kind kind) const {
    return config.hierarchy == hierarchy_kind::node && kind == failure_kind::crashed &&
           config.layout->node_of(rank) != config.layout->node_of(self());
}

// Two levels: a notice that names a failure this process knew without a
// notice (from the runtime) is forwarded all the same, once: some of the
// processes behind it (the failed one's node-mates) may have nobody else
// to hear it from.
bool detector::state::spreads_news(const wire::message& msg) {
    if (config.hierarchy != hierarchy_kind::node || contains_all(noticed.ranks(), msg.failed)) {
        return false;
    }
    noticed = dead_set::merged(noticed.ranks(), msg.failed);
    return true;
}

}  // namespace btl_ft
