// The checkers. The oracle knows the truth (who is dead), hears what every
// detector concludes (its sink calls) and judges, while faults happen:
// - accuracy: no live process is ever declared dead (safety);
// - completeness: once failures stop, every survivor knows every failure,
//   and its sink was told exactly its dead set (liveness);
// - ring: once stable, every survivor observes its closest live predecessor
//   and is observed by its closest live successor;
// - bound: each unstable period lasts at most T(f) (Theorem 1, with the
//   confirmation window), when f and the run meet the theorem's
//   preconditions; a burst (a node loss, a cut) at most T_burst
//   (config.hpp), from the longest row of victims on the ring;
// - stop: a failed process that runs again (a hang that resumes, the side
//   of a cut that lost the quorum) learns it was declared failed and stops.
// Only the living judge: what a failed process concludes is ignored.
// It also measures the periods: time for all to know the first failure,
// for all to know all failures, and to reach a stable configuration.
//
// Knowledge is tracked as a per-rank count of survivors that know it, so
// "everyone knows everything" is one comparison per event, O(1) memory per
// process. Rejected: scanning every detector's dead set after each event,
// O(n f) per event.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "btl_ft/ring.hpp"
#include "btl_ft/types.hpp"
#include "config.hpp"

namespace btl_ft::sim {

// What the oracle may ask about a process's detector.
class process_view {
public:
    virtual ~process_view() = default;
    virtual rank_t emitter_of(rank_t process) const = 0;
    virtual rank_t observer_of(rank_t process) const = 0;
    virtual std::span<const rank_t> dead_set_of(rank_t process) const = 0;
};

struct violation_counts {
    std::uint64_t accuracy = 0;
    std::uint64_t completeness = 0;
    std::uint64_t ring = 0;
    std::uint64_t bound = 0;
    std::uint64_t stop = 0;
    std::uint64_t total() const { return accuracy + completeness + ring + bound + stop; }
};

// A maximal stretch of non-stable configurations.
struct unstable_period {
    time_ns start = 0;
    time_ns known_at = -1;   // all survivors know all failures
    time_ns stable_at = -1;  // and the ring is reconnected
    std::uint32_t failures = 0;
    rank_t alive_at_start = 0;
    time_ns last_failure_at = 0;
    bool burst() const { return last_failure_at == start; }
};

class oracle {
public:
    oracle(const sim_config& config, const ring& ring, const process_view& view);

    bool alive(rank_t process) const { return alive_[process] != 0; }
    rank_t alive_count() const { return alive_count_; }
    bool in_unstable_period() const { return in_period_; }

    // `victim` fails in the truth: it crashed, hung, or lies on the losing
    // side of a cut (it may still run; see expect_stop).
    void on_crash(rank_t victim, time_ns now);
    // The failed `process` runs again and must stop, before `deadline`
    // (never: before the end of the run).
    void expect_stop(rank_t process, time_ns deadline);
    rank_t pending_stops() const { return pending_stops_; }
    time_ns all_stopped_at() const { return all_stopped_at_; }
    void on_learned(rank_t who, std::span<const rank_t> ranks, time_ns now);
    void on_declared_dead_self(rank_t who, rank_t told_by, const char* reason, time_ns now);
    // Cheap; call after every event. True when the configuration is stable.
    bool check_stable(time_ns now);
    // End-of-run sweeps over every survivor, and the bound per period.
    void finish();

    const std::vector<unstable_period>& periods() const { return periods_; }
    time_ns first_known_at() const { return first_known_at_; }
    const violation_counts& violations() const { return violations_; }
    const std::vector<std::string>& details() const { return details_; }
    bool bound_applicable(const unstable_period& period) const;
    double max_bound_ratio() const { return max_bound_ratio_; }

private:
    rank_t closest_alive_predecessor(rank_t process) const;
    rank_t closest_alive_successor(rank_t process) const;
    bool connected(rank_t process) const;
    void report(std::uint64_t& counter, std::string detail);
    void sweep_knowledge();
    void sweep_ring();
    void check_bounds();
    void check_stops();
    rank_t longest_dead_row() const;
    double bound_for(const unstable_period& period) const;

    const sim_config& config_;
    const ring& ring_;
    const process_view& view_;
    std::vector<std::uint8_t> alive_;
    std::vector<std::uint32_t> known_by_;   // survivors that were told rank r failed
    std::vector<std::uint32_t> told_count_; // ranks each process was told about
    std::vector<rank_t> dead_;
    rank_t alive_count_;
    std::uint64_t known_pairs_ = 0;  // sum over dead r of known_by_[r]
    rank_t first_victim_ = no_rank;
    time_ns first_known_at_ = -1;
    bool in_period_ = false;
    std::vector<unstable_period> periods_;
    std::vector<rank_t> watch_;  // neighbours of the dead: the only ones the ring can miss
    std::vector<time_ns> stop_by_;  // per process: -1 nothing expected, else the deadline to stop
    std::vector<std::uint8_t> stopped_;
    rank_t pending_stops_ = 0;
    time_ns all_stopped_at_ = -1;
    violation_counts violations_;
    std::vector<std::string> details_;
    double max_bound_ratio_ = 0;
};

}  // namespace btl_ft::sim
