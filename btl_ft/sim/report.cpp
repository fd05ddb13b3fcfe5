// Aggregation and JSON layout for report.hpp.
#include "report.hpp"

#include <algorithm>
#include <ostream>

#include "btl_ft/types.hpp"
#include "json.hpp"
#include "rng.hpp"

namespace btl_ft::sim {

namespace {
constexpr std::size_t max_seeds_listed = 16;
constexpr double s_per_ns = 1e-9;

std::string_view placement_name(placement where) {
    switch (where) {
        case placement::random: return "random";
        case placement::consecutive: return "consecutive";
        case placement::consecutive_ranks: return "consecutive-ranks";
    }
    return "?";
}

std::string_view fault_name(fault_kind fault) {
    switch (fault) {
        case fault_kind::crash: return "crash";
        case fault_kind::hang: return "hang";
        case fault_kind::node_loss: return "node-loss";
        case fault_kind::partition: return "partition";
    }
    return "?";
}

json_object stats_json(const sample& value) {
    json_object out;
    out.add("runs", value.count);
    if (value.count == 0) {
        return out.add_null("mean").add_null("min").add_null("max");
    }
    return out.add("mean", value.mean()).add("min", value.min).add("max", value.max);
}
}  // namespace

void sample::add(double value) {
    min = count == 0 ? value : std::min(min, value);
    max = count == 0 ? value : std::max(max, value);
    sum += value;
    ++count;
}

summary::summary(const sim_config& config, std::uint64_t seed, std::uint32_t runs)
    : config_(config), seed_(seed), runs_(runs) {}

void summary::add(const run_result& result) {
    const auto n = static_cast<double>(config_.nodes);
    if (result.first_known_ns >= 0) first_known_s_.add(static_cast<double>(result.first_known_ns) * s_per_ns);
    if (result.all_known_ns >= 0) all_known_s_.add(static_cast<double>(result.all_known_ns) * s_per_ns);
    if (result.stable_ns >= 0) stable_s_.add(static_cast<double>(result.stable_ns) * s_per_ns);
    if (result.all_stopped_ns >= 0) all_stopped_s_.add(static_cast<double>(result.all_stopped_ns) * s_per_ns);
    victims_.add(result.victims);
    expected_stops_.add(result.expected_stops);
    if (result.failures > 0) {
        notice_per_fault_pp_.add(static_cast<double>(result.totals.notice_messages_sent) /
                                 (n * static_cast<double>(result.failures)));
        // A cut side that has not stopped yet broadcasts into the cut:
        // what the survivors send is the cost the job pays.
        survivor_notice_per_fault_pp_.add(static_cast<double>(result.survivor_notice_messages) /
                                          (n * static_cast<double>(result.failures)));
    }
    if (result.failures > 0 && result.stable_ns < 0) ++not_stabilized_runs_;
    failures_.add(result.failures);
    failures_during_.add(result.failures_during_stabilization);
    heartbeats_pp_.add(static_cast<double>(result.totals.heartbeats_sent) / n);
    notices_pp_.add(static_cast<double>(result.totals.notice_messages_sent) / n);
    new_observer_pp_.add(static_cast<double>(result.totals.new_observer_sent) / n);
    messages_pp_.add(static_cast<double>(result.network.heartbeats + result.network.messages) / n);
    if (result.end_ns > 0) {
        across_heartbeats_per_period_.add(static_cast<double>(result.network.heartbeats_across_nodes) *
                                          static_cast<double>(config_.period_ns) / static_cast<double>(result.end_ns));
    }
    across_messages_pp_.add(static_cast<double>(result.network.messages_across_nodes) / n);
    notices_started_.add(static_cast<double>(result.totals.notices_started));
    suspicions_.add(static_cast<double>(result.totals.suspicions));
    censuses_.add(static_cast<double>(result.totals.censuses));
    census_probes_pp_.add(static_cast<double>(result.totals.census_probes) / n);
    if (result.totals.notices_started > 0) {
        notice_per_notice_pp_.add(static_cast<double>(result.totals.notice_messages_sent) /
                                  (n * static_cast<double>(result.totals.notices_started)));
    }
    if (result.bound_checked) {
        ++bound_checked_runs_;
        bound_ratio_.add(result.bound_ratio);
    }
    violations_.accuracy += result.violations.accuracy;
    violations_.completeness += result.violations.completeness;
    violations_.ring += result.violations.ring;
    violations_.bound += result.violations.bound;
    violations_.stop += result.violations.stop;
    if (result.violations.total() > 0) {
        ++violating_runs_;
        if (violating_seeds_.size() < max_seeds_listed) {
            violating_seeds_.push_back(result.seed);
        }
    }
    events_ += result.events;
    peak_queue_ = std::max(peak_queue_, result.peak_queue);
    other_epoch_dropped_ += result.other_epoch_dropped;
    joins_sent_ += result.totals.joins_sent;
    joins_received_ += result.totals.joins_received;
}

std::string summary::json() const {
    const double eta_s = static_cast<double>(config_.period_ns) * s_per_ns;
    const double delta_s = static_cast<double>(config_.timeout_ns) * s_per_ns;
    json_object out;
    out.add("mode", "detector").add("seed", seed_).add("nodes", config_.nodes).add("ppn", config_.per_node);
    out.add("node_count", config_.node_count()).add("fault", fault_name(config_.fault));
    out.add("probe_width", config_.probe_width).add("quorum", config_.quorum).add("witness", config_.witness);
    if (config_.resume_after_ns >= 0) {
        out.add("resume_after_s", static_cast<double>(config_.resume_after_ns) * s_per_ns);
    }
    if (config_.runtime_confirms_ns >= 0) {
        out.add("runtime_confirms_ms", static_cast<double>(config_.runtime_confirms_ns) * 1e-6);
    }
    if (config_.node_watch_ns >= 0) {
        out.add("node_watch_ms", static_cast<double>(config_.node_watch_ns) * 1e-6);
    }
    out.add("failures", config_.failures)
        .add("failure_law", config_.law == failure_law::forced ? "forced" : "exponential")
        .add("placement", placement_name(config_.where))
        .add("window_s", static_cast<double>(config_.window_ns) * s_per_ns);
    if (config_.law == failure_law::exponential) out.add("mtbf_s", config_.mtbf_s);
    out.add("scenario", config_.scenario_name).add("eta_s", eta_s).add("delta_s", delta_s);
    out.add("tau_ns", static_cast<std::int64_t>(config_.tau_ns)).add("one_port", config_.one_port);
    out.add("propagator", name_of(config_.propagator)).add("ring_order", name_of(config_.order));
    if (config_.hierarchy != hierarchy_kind::flat) {
        out.add("hierarchy", name_of(config_.hierarchy));
    }
    if (config_.joiners > 0) {
        out.add("joiners", config_.joiners).add("join_at_s", static_cast<double>(config_.join_at()) * s_per_ns);
        out.add("join_victims", config_.victims_joined ? "joined" : "any");
        out.add("join_participants", config_.join_participants).add("join_jobs", config_.join_jobs);
        out.add("other_epoch_dropped", other_epoch_dropped_);
        out.add("joins_sent", joins_sent_).add("joins_received", joins_received_);
    }
    out.add("runs", runs_);
    // Seed 002 Section 4.2: the first failure is known by all at about
    // delta - eta/2 on average (the failure strikes uniformly within a period).
    out.add("paper_first_known_s", delta_s - eta_s / 2);
    out.add("first_known_s", stats_json(first_known_s_));
    out.add("all_known_s", stats_json(all_known_s_));
    out.add("stable_s", stats_json(stable_s_));
    out.add("all_stopped_s", stats_json(all_stopped_s_));
    out.add("victims", stats_json(victims_));
    out.add("expected_stops", stats_json(expected_stops_));
    out.add("failures_struck", stats_json(failures_));
    out.add("failures_during_stabilization", stats_json(failures_during_));
    out.add("notices_started", stats_json(notices_started_));
    out.add("suspicions", stats_json(suspicions_));
    out.add("censuses", stats_json(censuses_));
    json_object per_process;
    per_process.add("heartbeats", heartbeats_pp_.mean())
        .add("new_observer", new_observer_pp_.mean())
        .add("notice", notices_pp_.mean())
        .add("census_probes", census_probes_pp_.mean())
        .add("total", messages_pp_.mean());
    out.add("messages_per_process", per_process);
    // What crosses the network: the cost that must follow nodes (seed 000).
    json_object across;
    across.add("heartbeats_per_period", across_heartbeats_per_period_.mean())
        .add("messages_per_process", across_messages_pp_.mean());
    out.add("across_nodes", across);
    if (notice_per_notice_pp_.count > 0) {
        out.add("notice_messages_per_process_per_notice", notice_per_notice_pp_.mean());
    } else {
        out.add_null("notice_messages_per_process_per_notice");
    }
    if (notice_per_fault_pp_.count > 0) {
        out.add("notice_messages_per_process_per_fault", notice_per_fault_pp_.mean());
        out.add("survivor_notice_messages_per_process_per_fault", survivor_notice_per_fault_pp_.mean());
    } else {
        out.add_null("notice_messages_per_process_per_fault");
        out.add_null("survivor_notice_messages_per_process_per_fault");
    }
    json_object bound;
    bound.add("checked_runs", bound_checked_runs_).add("max_ratio", bound_ratio_.max).add("violations", violations_.bound);
    out.add("bound", bound);
    json_object violations;
    violations.add("accuracy", violations_.accuracy)
        .add("completeness", violations_.completeness)
        .add("ring", violations_.ring)
        .add("bound", violations_.bound)
        .add("stop", violations_.stop)
        .add("not_stabilized_runs", not_stabilized_runs_)
        .add("violating_runs", violating_runs_);
    out.add("violations", violations);
    out.add("bound_violations", violations_.bound);
    std::string seeds = "[";
    for (std::size_t i = 0; i < violating_seeds_.size(); ++i) {
        if (i > 0) seeds += ',';
        seeds += std::to_string(violating_seeds_[i]);
    }
    out.add_raw("violating_seeds", seeds + "]");
    out.add("events", events_).add("peak_queue", peak_queue_);
    return out.str();
}

std::uint64_t run_configuration(const sim_config& config, std::uint64_t seed, std::uint32_t runs,
                                std::ostream& out, std::ostream& err) {
    summary total(config, seed, runs);
    std::uint64_t run_seed = seed;
    for (std::uint32_t run = 0; run < runs; ++run) {
        const run_result result = simulate(config, run_seed);
        total.add(result);
        if (result.violations.total() > 0) {
            err << "ftsim: violation in run " << run << " of seed " << seed << " (replay: --seed " << run_seed
                << " --runs 1, nodes " << config.nodes << ", failures " << config.failures << ")\n";
            for (const std::string& detail : result.details) {
                err << "ftsim:   " << detail << " [seed " << run_seed << "]\n";
            }
        }
        run_seed = next_run_seed(run_seed);
    }
    out << total.json() << '\n';
    out.flush();
    return total.violating_runs();
}

}  // namespace btl_ft::sim
