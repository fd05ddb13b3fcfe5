// Bookkeeping and judgement for oracle.hpp.
#include "oracle.hpp"

#include <algorithm>
#include <cstdio>

#include "btl_ft/assert.hpp"

namespace btl_ft::sim {

namespace {
constexpr std::size_t max_details = 8;  // enough to debug, bounded for 2^20 runs
}

oracle::oracle(const sim_config& config, const ring& ring, const process_view& view)
    : config_(config),
      ring_(ring),
      view_(view),
      alive_(config.nodes, 1),
      known_by_(config.nodes, 0),
      told_count_(config.nodes, 0),
      alive_count_(config.nodes),
      stop_by_(config.nodes, -1),
      stopped_(config.nodes, 0) {}

void oracle::report(std::uint64_t& counter, std::string detail) {
    ++counter;
    if (details_.size() < max_details) {
        details_.push_back(std::move(detail));
    }
}

void oracle::on_crash(rank_t victim, time_ns now) {
    BTL_FT_ASSERT(alive(victim), "a process crashed twice");
    if (!in_period_) {
        in_period_ = true;
        periods_.push_back({.start = now, .alive_at_start = alive_count_});
    }
    unstable_period& period = periods_.back();
    ++period.failures;
    period.known_at = -1;
    period.last_failure_at = now;
    if (first_victim_ == no_rank) {
        first_victim_ = victim;
    }
    alive_[victim] = 0;
    --alive_count_;
    dead_.push_back(victim);
    known_pairs_ += known_by_[victim];  // non-zero only after a false suspicion
    // The victim's own knowledge no longer counts: only survivors must know.
    // A rank in the dead set that the sink never reported is caught by the
    // end-of-run sweep; here it must not underflow the count.
    for (rank_t known : view_.dead_set_of(victim)) {
        if (known_by_[known] == 0) {
            continue;
        }
        --known_by_[known];
        if (!alive(known)) {
            --known_pairs_;
        }
    }
    watch_.push_back(closest_alive_predecessor(victim));
    watch_.push_back(closest_alive_successor(victim));
}

void oracle::expect_stop(rank_t process, time_ns deadline) {
    BTL_FT_ASSERT(!alive(process), "only a failed process is expected to stop");
    if (stopped_[process] != 0 || stop_by_[process] >= 0) {
        return;
    }
    stop_by_[process] = deadline;
    ++pending_stops_;
}

void oracle::on_learned(rank_t who, std::span<const rank_t> ranks, time_ns now) {
    if (!alive(who)) {
        return;  // a hung process resumed, or the losing side of a cut: not a survivor
    }
    for (rank_t rank : ranks) {
        ++known_by_[rank];
        ++told_count_[who];
        if (!alive(rank)) {
            ++known_pairs_;
            continue;
        }
        char text[160];
        std::snprintf(text, sizeof text, "accuracy: process %u was told live process %u failed at t=%lld ns",
                      who, rank, static_cast<long long>(now));
        report(violations_.accuracy, text);
    }
}

void oracle::on_declared_dead_self(rank_t who, rank_t told_by, const char* reason, time_ns now) {
    if (!alive(who)) {
        stopped_[who] = 1;
        if (stop_by_[who] < 0) {
            return;
        }
        if (now > stop_by_[who]) {
            char text[200];
            std::snprintf(text, sizeof text, "stop: failed process %u stopped at t=%lld ns, after its deadline %lld ns",
                          who, static_cast<long long>(now), static_cast<long long>(stop_by_[who]));
            report(violations_.stop, text);
        }
        stop_by_[who] = -1;
        if (--pending_stops_ == 0) {
            all_stopped_at_ = now;
        }
        return;
    }
    char text[200];
    std::snprintf(text, sizeof text, "accuracy: live process %u declared dead by %u at t=%lld ns (%s)", who,
                  told_by, static_cast<long long>(now), reason != nullptr ? reason : "");
    report(violations_.accuracy, text);
}

bool oracle::check_stable(time_ns now) {
    if (!in_period_) {
        return true;
    }
    if (first_known_at_ < 0 && known_by_[first_victim_] == alive_count_) {
        first_known_at_ = now;
    }
    const std::uint64_t wanted = static_cast<std::uint64_t>(dead_.size()) * alive_count_;
    if (known_pairs_ < wanted) {
        return false;
    }
    unstable_period& period = periods_.back();
    if (period.known_at < 0) {
        period.known_at = now;
    }
    for (rank_t process : watch_) {
        if (alive(process) && !connected(process)) {
            return false;
        }
    }
    period.stable_at = now;
    in_period_ = false;
    watch_.clear();
    return true;
}

rank_t oracle::closest_alive_predecessor(rank_t process) const {
    rank_t at = ring_.predecessor(process);
    while (!alive(at) && at != process) {
        at = ring_.predecessor(at);
    }
    return at;
}

rank_t oracle::closest_alive_successor(rank_t process) const {
    rank_t at = ring_.successor(process);
    while (!alive(at) && at != process) {
        at = ring_.successor(at);
    }
    return at;
}

bool oracle::connected(rank_t process) const {
    return view_.emitter_of(process) == closest_alive_predecessor(process) &&
           view_.observer_of(process) == closest_alive_successor(process);
}

void oracle::finish() {
    if (in_period_) {
        char text[160];
        std::snprintf(text, sizeof text,
                      "completeness: not stable within the horizon: %llu of %llu (survivor, failure) pairs known",
                      static_cast<unsigned long long>(known_pairs_),
                      static_cast<unsigned long long>(dead_.size()) * alive_count_);
        report(violations_.completeness, text);
    }
    sweep_knowledge();
    if (!in_period_) {
        sweep_ring();
    }
    check_bounds();
    check_stops();
}

// A failed process that runs again and never stopped would go on as a
// second set of survivors.
void oracle::check_stops() {
    for (rank_t process = 0; process < config_.nodes && pending_stops_ > 0; ++process) {
        if (stop_by_[process] < 0) {
            continue;
        }
        char text[160];
        std::snprintf(text, sizeof text, "stop: failed process %u still runs at the end of the run", process);
        report(violations_.stop, text);
    }
}

// Independent of the incremental counts: compare every survivor's dead set
// with the truth, and with what its sink was told.
void oracle::sweep_knowledge() {
    std::vector<rank_t> truth = dead_;
    std::sort(truth.begin(), truth.end());
    for (rank_t process = 0; process < config_.nodes; ++process) {
        if (!alive(process)) {
            continue;
        }
        const std::span<const rank_t> known = view_.dead_set_of(process);
        const bool same = std::equal(known.begin(), known.end(), truth.begin(), truth.end());
        if (same && told_count_[process] == known.size()) {
            continue;
        }
        const bool false_positive = std::any_of(known.begin(), known.end(), [&](rank_t r) { return alive(r); });
        char text[200];
        std::snprintf(text, sizeof text, "%s: survivor %u knows %zu failures (its sink was told %u), %zu struck",
                      false_positive ? "accuracy" : "completeness", process, known.size(), told_count_[process],
                      truth.size());
        report(false_positive ? violations_.accuracy : violations_.completeness, text);
    }
}

void oracle::sweep_ring() {
    for (rank_t process = 0; process < config_.nodes; ++process) {
        if (!alive(process) || connected(process)) {
            continue;
        }
        char text[200];
        std::snprintf(text, sizeof text, "ring: survivor %u has emitter %u (want %u), observer %u (want %u)",
                      process, view_.emitter_of(process), closest_alive_predecessor(process),
                      view_.observer_of(process), closest_alive_successor(process));
        report(violations_.ring, text);
    }
}

bool oracle::bound_applicable(const unstable_period& period) const {
    // Both bounds need every delay at most tau, and (for B(n)) eta >= 3 tau
    // so notices fit between heartbeats. Theorem 1 holds for f <=
    // floor(log2 n) - 1; the burst bound for victims struck at one instant,
    // in a run with no other failure, whose rows are mended in parallel
    // (so not one-port, where their broadcasts would queue at the ports).
    if (config_.faults.any() || config_.period_ns < 3 * config_.tau_ns) {
        return false;
    }
    if (config_.strikes_nodes()) {
        return period.burst() && periods_.size() == 1 && !config_.one_port;
    }
    return period.failures <= max_tolerated_failures(period.alive_at_start);
}

// The longest run of failed processes next to each other on the ring.
rank_t oracle::longest_dead_row() const {
    rank_t longest = 0;
    for (const rank_t victim : dead_) {
        if (!alive(ring_.predecessor(victim)) && dead_.size() < config_.nodes) {
            continue;  // not the first of its row
        }
        rank_t row = 0;
        for (rank_t at = victim; !alive(at) && row < config_.nodes; at = ring_.successor(at)) {
            ++row;
        }
        longest = std::max(longest, row);
    }
    return longest;
}

double oracle::bound_for(const unstable_period& period) const {
    const time_ns window = config_.declaration_wait_ns();
    if (config_.strikes_nodes() && config_.hierarchy == hierarchy_kind::node) {
        // Two levels: each mending step declares a whole node, so a row is
        // counted in nodes and probing does not shorten it.
        const rank_t nodes_in_row = (longest_dead_row() + config_.per_node - 1) / config_.per_node;
        return burst_bound_ns(nodes_in_row, period.alive_at_start, 1, config_.timeout_ns, window, config_.tau_ns);
    }
    if (config_.strikes_nodes()) {
        return burst_bound_ns(longest_dead_row(), period.alive_at_start, config_.effective_probe_width(),
                              config_.timeout_ns, window, config_.tau_ns);
    }
    return stabilization_bound_ns(period.failures, period.alive_at_start, config_.timeout_ns, window,
                                  config_.tau_ns);
}

void oracle::check_bounds() {
    for (const unstable_period& period : periods_) {
        if (period.stable_at < 0 || !bound_applicable(period)) {
            continue;
        }
        const double bound = bound_for(period);
        const auto lasted = static_cast<double>(period.stable_at - period.start);
        max_bound_ratio_ = std::max(max_bound_ratio_, lasted / bound);
        if (lasted <= bound) {
            continue;
        }
        char text[200];
        std::snprintf(text, sizeof text, "bound: f=%u n=%u stabilized in %.0f ns > T(f)=%.0f ns", period.failures,
                      period.alive_at_start, lasted, bound);
        report(violations_.bound, text);
    }
}

}  // namespace btl_ft::sim
