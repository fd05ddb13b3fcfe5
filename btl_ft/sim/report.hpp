// Aggregation of R runs of one configuration into one JSON line, and the
// driver that runs them. Run r uses seed s_r with s_0 = --seed and
// s_{r+1} = next_run_seed(s_r), so any run, violating or not, replays alone
// with `--seed s_r --runs 1`; violations are printed with that seed.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "config.hpp"
#include "world.hpp"

namespace btl_ft::sim {

// Mean, min and max of a sample, over the runs where it was observed.
struct sample {
    std::uint64_t count = 0;
    double sum = 0;
    double min = 0;
    double max = 0;
    void add(double value);
    double mean() const { return count > 0 ? sum / static_cast<double>(count) : 0.0; }
};

class summary {
public:
    summary(const sim_config& config, std::uint64_t seed, std::uint32_t runs);
    void add(const run_result& result);
    std::string json() const;
    std::uint64_t violating_runs() const { return violating_runs_; }

private:
    const sim_config& config_;
    std::uint64_t seed_;
    std::uint32_t runs_;
    sample first_known_s_, all_known_s_, stable_s_, all_stopped_s_;
    sample victims_, expected_stops_, notice_per_fault_pp_, survivor_notice_per_fault_pp_;
    sample failures_, failures_during_;
    sample heartbeats_pp_, notices_pp_, new_observer_pp_, messages_pp_, notice_per_notice_pp_;
    sample across_heartbeats_per_period_, across_messages_pp_;
    sample notices_started_, suspicions_, censuses_, census_probes_pp_;
    sample bound_ratio_;
    std::uint64_t bound_checked_runs_ = 0;
    std::uint64_t not_stabilized_runs_ = 0;
    violation_counts violations_;
    std::uint64_t violating_runs_ = 0;
    std::vector<std::uint64_t> violating_seeds_;
    std::uint64_t events_ = 0;
    std::uint64_t peak_queue_ = 0;
    std::uint64_t other_epoch_dropped_ = 0;  // with a join, summed over runs
    std::uint64_t joins_sent_ = 0;           // ... JOIN messages
    std::uint64_t joins_received_ = 0;
};

// Runs `runs` simulations of `config` from `seed`, writes one JSON line to
// `out` and one line per violation to `err`. Returns the violating runs.
std::uint64_t run_configuration(const sim_config& config, std::uint64_t seed, std::uint32_t runs,
                                std::ostream& out, std::ostream& err);

}  // namespace btl_ft::sim
