// allreduce_runs.hpp: the runner and its command line. Configurations are
// the product of --nodes, --inactive and --faults; runs differ only in
// which processes fail and when (the network is deterministic LogP).
#include "allreduce_runs.hpp"

#include <algorithm>
#include <ostream>

#include "allreduce_victims.hpp"
#include "allreduce_world.hpp"
#include "btl_ft/assert.hpp"
#include "cli.hpp"
#include "json.hpp"
#include "report.hpp"
#include "rng.hpp"

namespace btl_ft::sim {
namespace {

allreduce_world_options world_options(const allreduce_sim_config& config, std::uint32_t radix, std::uint64_t seed) {
    allreduce_world_options options;
    options.size = config.nodes;
    options.radix = radix;
    options.seed = seed;
    options.latency_ns = config.latency;
    options.overhead_ns = config.overhead;
    options.detect_ns = config.detect;
    return options;
}

struct one_run {
    time_ns latency = 0;  // the last survivor's return
    double messages_per_process = 0;
    std::string problems;
};

// The last survivor's return, and the messages every process sent.
one_run measure(allreduce_world& world, rank_t nodes, time_ns horizon) {
    one_run result;
    const bool ended = world.run(horizon);
    result.problems = world.check();
    if (!ended && result.problems.empty()) result.problems = "a survivor never returned\n";
    for (rank_t r = 0; r < nodes; ++r) {
        if (world.alive(r)) result.latency = std::max(result.latency, world.outcome(r, 0).at);
    }
    result.messages_per_process = static_cast<double>(world.messages()) / nodes;
    return result;
}

time_ns horizon_of(const allreduce_sim_config& config, time_ns fault_free) {
    // Each failure costs at most a detection and a broadcast; far beyond
    // that a run is stuck, and the oracle says so.
    return 100 * (fault_free + config.detect + 64 * (config.latency + config.overhead)) *
           (1 + config.inactive + config.faults);
}

}  // namespace

std::uint32_t best_radix(const allreduce_sim_config& config) {
    std::uint32_t best = 2;
    time_ns best_latency = never;
    // The latency falls with the radix while the tree gets shallower, then
    // rises as the root serves more children: stop 8 radices past the best.
    const std::uint32_t largest = std::min<std::uint32_t>(std::max<rank_t>(config.nodes, 2), 64);
    for (std::uint32_t radix = 2; radix <= largest && radix <= best + 8; ++radix) {
        allreduce_world world(world_options(config, radix, config.seed));
        const one_run run = measure(world, config.nodes, never);
        if (run.latency < best_latency) {
            best_latency = run.latency;
            best = radix;
        }
    }
    return best;
}

std::uint64_t run_allreduce(const allreduce_sim_config& config, std::ostream& out, std::ostream& errors) {
    BTL_FT_ASSERT(config.radix >= 2, "run_allreduce needs the radix resolved (best_radix)");
    const std::uint32_t radix = config.radix;
    allreduce_world fault_free_world(world_options(config, radix, config.seed));
    const one_run fault_free = measure(fault_free_world, config.nodes, never);
    std::uint64_t violating = fault_free.problems.empty() ? 0 : 1;
    if (violating) errors << "ftsim allreduce: fault-free run broke the oracle:\n" << fault_free.problems;

    sample latency, messages;
    std::uint64_t run_seed = config.seed;
    const rank_t failing = config.inactive + config.faults;
    const knomial_tree tree(config.nodes, radix);
    for (std::uint32_t run = 0; run < config.runs; ++run) {
        allreduce_world world(world_options(config, radix, run_seed));
        rng draw(run_seed, stream::failures);
        const victims_draw drawn = draw_victims(draw, tree, failing, config.shape);
        if (!drawn.error.empty()) {
            errors << "ftsim allreduce: --shape " << shape_name(config.shape) << ": " << drawn.error << '\n';
            return violating + 1;
        }
        const std::vector<rank_t>& victims = drawn.victims;
        for (rank_t i = 0; i < config.inactive; ++i) world.fail_before(victims[i], config.inactive_known);
        for (rank_t i = config.inactive; i < failing; ++i) {
            world.crash_at(victims[i], static_cast<time_ns>(draw.below(static_cast<std::uint64_t>(fault_free.latency) + 1)));
        }
        const one_run result = measure(world, config.nodes, horizon_of(config, fault_free.latency));
        if (!result.problems.empty()) {
            ++violating;
            errors << "ftsim allreduce: --seed " << run_seed << " --runs 1 (nodes " << config.nodes << ", inactive "
                   << config.inactive << ", faults " << config.faults << ") broke the oracle:\n" << result.problems;
        }
        latency.add(static_cast<double>(result.latency));
        messages.add(result.messages_per_process);
        run_seed = next_run_seed(run_seed);
    }
    const double per_fault = failing > 0 ? 1.0 / failing : 0.0;
    json_object line;
    line.add("mode", "allreduce").add("seed", config.seed).add("nodes", config.nodes).add("radix", radix);
    line.add("inactive", config.inactive).add("inactive_known", config.inactive_known).add("faults", config.faults);
    line.add("shape", shape_name(config.shape));
    line.add("unit", config.unit).add("latency_L", config.latency).add("overhead_o", config.overhead);
    line.add("detect", config.detect).add("runs", config.runs);
    line.add("fault_free_latency", fault_free.latency).add("fault_free_messages_per_process", fault_free.messages_per_process);
    line.add("latency_mean", latency.mean()).add("latency_max", latency.max);
    line.add("messages_per_process_mean", messages.mean());
    line.add("latency_penalty_per_fault", (latency.mean() - static_cast<double>(fault_free.latency)) * per_fault);
    line.add("messages_penalty_per_fault_per_process",
             (messages.mean() - fault_free.messages_per_process) * per_fault);
    line.add("violating_runs", violating);
    out << line.str() << '\n';
    out.flush();
    return violating;
}

}  // namespace btl_ft::sim
