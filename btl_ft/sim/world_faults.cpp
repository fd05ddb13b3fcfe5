// What each fault of config.hpp does to the processes it strikes, and what
// the runtime later says about them. The detectors see none of this
// directly: only silence, a backlog delivered late, a cut that eats
// messages, or a report_failure() from the runtime.
//
// A hang is SIGSTOP: the process neither ticks nor sends, its heartbeat
// flag keeps being written (RDMA needs no help from it) and its messages
// wait in the transport. When it resumes it reads them all at once, then
// runs its overdue timers: it must learn it was declared failed and stop.
// Rejected: modelling a hang as delayed sends (the old --stall), under
// which the process still hears and answers, as a stopped one cannot.
#include <algorithm>

#include "btl_ft/assert.hpp"
#include "world.hpp"

namespace btl_ft::sim {

void world::strike(rank_t victim) {
    BTL_FT_ASSERT(mode_[victim] == mode::running, "a process struck twice");
    ++victims_;
    oracle_.on_crash(victim, now_);
    deadline_[victim] = never;
    if (config_.fault == fault_kind::hang) {
        mode_[victim] = mode::hung;
        if (config_.resume_after_ns >= 0) {
            queue_.push({.at = now_ + config_.resume_after_ns, .payload = 0, .node = victim, .kind = event_kind::resume});
            ++resumes_pending_;
        }
        return;
    }
    mode_[victim] = mode::crashed;
    if (config_.runtime_confirms_ns >= 0) {
        queue_.push({.at = now_ + config_.runtime_confirms_ns, .payload = 0, .node = victim,
                     .kind = event_kind::confirm});
    }
    if (config_.node_watch_ns >= 0) {
        queue_.push({.at = now_ + config_.node_watch_ns, .payload = 0, .node = victim,
                     .kind = event_kind::node_watch});
    }
}

// Nothing crosses a cut, and nobody is told. The side with more than half
// of the processes goes on; at exactly half, the side holding rank 0 (the
// lowest alive: nothing failed before the cut). The other side has failed
// in the truth, though it runs on: the quorum rule must stop it.
void world::cut(const std::vector<rank_t>& victims) {
    side_.assign(config_.nodes, 0);
    for (const rank_t process : victims) {
        side_[process] = 1;
    }
    cut_side_ = static_cast<std::uint32_t>(victims.size());
    const std::uint64_t twice_cut = 2 * std::uint64_t{cut_side_};
    const bool cut_loses = twice_cut < config_.nodes || (twice_cut == config_.nodes && side_[0] == 0);
    const std::uint8_t losing = cut_loses ? 1 : 0;
    const std::uint64_t losing_count = cut_loses ? cut_side_ : config_.nodes - cut_side_;
    // A clear minority with witnesses stops by its census, in a bounded
    // time (config.hpp); anything else by the count, checked at the end.
    const bool census_bounded = config_.quorum && config_.witness && config_.per_node > 1 &&
                                8 * losing_count < config_.nodes;
    const time_ns census_stop_by = now_ + census_stop_bound_ns(config_, detector_config{}.quorum_wait_ns);
    for (rank_t process = 0; process < config_.nodes; ++process) {
        if (side_[process] != losing) {
            continue;
        }
        ++victims_;
        ++losing_side_;
        ++expected_stops_;
        oracle_.on_crash(process, now_);
        const rank_t emitter = active(process).emitter();
        const bool watches_across = emitter != process && side_[emitter] != losing;
        oracle_.expect_stop(process, census_bounded && watches_across ? census_stop_by : never);
    }
}

bool world::reaches(rank_t to) const {
    return side_.empty() || current_ == no_rank || side_[current_] == side_[to];
}

// A hung process's flag keeps only the last word written; its messages
// all wait.
void world::hold(const event& item) {
    std::vector<event>& waiting = backlog_[item.node];
    if (item.kind == event_kind::heartbeat) {
        const auto last = std::find_if(waiting.begin(), waiting.end(),
                                       [](const event& e) { return e.kind == event_kind::heartbeat; });
        if (last != waiting.end()) {
            waiting.erase(last);
        }
    }
    waiting.push_back(item);
}

// SIGCONT: the backlog first (as the shim drains its inbox), then the
// timers that came due meanwhile (after_input runs them once overdue).
void world::on_resume(const event& item) {
    const rank_t process = item.node;
    --resumes_pending_;
    mode_[process] = mode::running;
    ++expected_stops_;
    // It hears DECLARED_DEAD one message delay after its first heartbeat,
    // or at once from a queued notice naming it; a timeout is generous.
    oracle_.expect_stop(process, now_ + config_.timeout_ns);
    if (started_[process] == 0) {
        on_start(process);
    }
    std::vector<event> waiting;
    if (const auto found = backlog_.find(process); found != backlog_.end()) {
        waiting = std::move(found->second);
        backlog_.erase(found);
    }
    for (const event& held : waiting) {
        if (held.kind == event_kind::message) {
            on_message(held);
        } else {
            on_heartbeat(held);
        }
    }
    current_ = process;
    deadline_[process] = never;
    reschedule(process, active(process).tick(now_));
    maybe_end();
}

// PMIx's event reaches every process of the other nodes; a process of the
// victim's own node reads its end from its host instead (node_watch).
void world::on_runtime_confirm(const event& item) {
    const std::uint32_t node = config_.node_of(item.node);
    for (rank_t process = 0; process < config_.nodes; ++process) {
        if (runs(process) && config_.node_of(process) != node) {
            tell_crashed(process, item.node);
        }
    }
}

// The victim's watcher sees it end (its pidfd): the node-mate before it,
// by rank around the node, past those that ended (each watcher takes over
// the watch of the one it saw end). A hung watcher sees nothing.
void world::on_node_watch(const event& item) {
    const rank_t victim = item.node;
    const rank_t first = config_.node_of(victim) * config_.per_node;
    const rank_t mates = std::min<rank_t>(config_.per_node, config_.nodes - first);
    for (rank_t step = 1; step < mates; ++step) {
        const rank_t process = first + (victim - first + mates - step) % mates;
        if (mode_[process] == mode::crashed) {
            continue;
        }
        if (runs(process)) {
            tell_crashed(process, victim);
        }
        return;
    }
}

void world::tell_crashed(rank_t process, rank_t victim) {
    const auto rank = rank_for(process, victim);
    if (!rank) {
        return;  // a process of a job this one's union does not hold
    }
    current_ = process;
    active(process).report_failure(now_, *rank, failure_kind::crashed);
    after_input(process);
}

}  // namespace btl_ft::sim
