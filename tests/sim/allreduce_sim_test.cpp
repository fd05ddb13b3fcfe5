// ftsim allreduce: its command line and its runner. The state machine and
// the world's oracle have their own tests (tests/unit); here the runner must
// report what the world measured, and refuse what cannot run.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "allreduce_runs.hpp"
#include "allreduce_world.hpp"
#include "btl_ft/allreduce_model.hpp"

namespace btl_ft::sim {
namespace {

allreduce_cli_parse parse(std::vector<std::string_view> args) { return parse_allreduce_cli(args); }

TEST(AllreduceCli, HelpDocumentsEveryFlag) {
    const std::string help = allreduce_help_text();
    for (const std::string_view flag : allreduce_known_flags()) {
        EXPECT_NE(help.find(std::string(flag) + " "), std::string::npos) << flag << " is not in --help";
    }
}

TEST(AllreduceCli, ParsesListsAndUnits) {
    const auto parsed = parse({"--nodes", "2^10,64", "--inactive", "0,10", "--faults", "1", "--radix", "4",
                               "--latency", "1530ns", "--overhead", "130ns", "--detect", "2ms", "--inactive-unknown"});
    ASSERT_TRUE(parsed.options) << parsed.error;
    EXPECT_EQ(parsed.options->nodes, (std::vector<rank_t>{1024, 64}));
    EXPECT_EQ(parsed.options->inactive, (std::vector<rank_t>{0, 10}));
    EXPECT_EQ(parsed.options->base.radix, 4u);
    EXPECT_EQ(parsed.options->base.detect, 2'000'000);
    EXPECT_EQ(parsed.options->base.unit, "ns");
    EXPECT_FALSE(parsed.options->base.inactive_known);
}

TEST(AllreduceCli, RefusesWhatCannotRun) {
    EXPECT_EQ(parse({"--runs", "3"}).error, "--nodes: required");
    EXPECT_NE(parse({"--nodes", "8", "--radix", "1"}).error.find("--radix"), std::string::npos);
    EXPECT_NE(parse({"--nodes", "8", "--latency", "1us"}).error.find("all three"), std::string::npos);
    EXPECT_NE(parse({"--nodes", "8", "--inactive", "4", "--faults", "4"}).error.find("no survivor"),
              std::string::npos);
    EXPECT_NE(parse({"--nodes", "8", "--overhead", "0"}).error.find("--overhead"), std::string::npos);
    EXPECT_NE(parse({"--nodes", "8", "--bogus", "1"}).error.find("unknown flag"), std::string::npos);
}

// Seed 001's setting, 8 processes, binomial, worked out by hand: the root
// has its last partial (from 4, two levels up from 6 and 7) handled at 36;
// PREPARE reaches its successor 1 at 47, which sends to 4 (handled at 59,
// then 6 at 71) and 2; 6 sends to 7, which has it at 83. Each hop is L + o
// plus the sender's and receiver's o where they queue.
TEST(AllreduceRuns, FaultFreeLatencyIsTheLogPSum) {
    allreduce_sim_config config{.nodes = 8, .radix = 2, .runs = 1};
    std::ostringstream out, errors;
    EXPECT_EQ(run_allreduce(config, out, errors), 0u);
    EXPECT_NE(out.str().find("\"fault_free_latency\":83,"), std::string::npos) << out.str();
    EXPECT_EQ(errors.str(), "");
}

TEST(AllreduceRuns, UnknownInactiveProcessesCostAboutADetection) {
    allreduce_sim_config config{.nodes = 256, .radix = 4, .inactive = 4, .inactive_known = false, .faults = 4,
                                .detect = 500, .runs = 20};
    std::ostringstream out, errors;
    EXPECT_EQ(run_allreduce(config, out, errors), 0u) << errors.str();
    allreduce_sim_config known = config;
    known.inactive_known = true;
    known.faults = 0;
    std::ostringstream known_out;
    EXPECT_EQ(run_allreduce(known, known_out, errors), 0u) << errors.str();
    // Known before the call, failures cost nothing; unknown, at least one
    // detection, and not one per failure (they are found in parallel).
    const auto field = [](const std::string& line, const std::string& key) {
        const std::size_t at = line.find("\"" + key + "\":");
        return std::stod(line.substr(at + key.size() + 3));
    };
    EXPECT_LE(field(known_out.str(), "latency_mean"), field(known_out.str(), "fault_free_latency"));
    EXPECT_GE(field(out.str(), "latency_mean"), 500.0);
    EXPECT_LT(field(out.str(), "latency_mean"), 4 * 500.0);
}

TEST(AllreduceRuns, TheRadixSearchPrefersAWiderTreeAtScale) {
    EXPECT_GT(best_radix({.nodes = 4096}), 2u);
    EXPECT_EQ(best_radix({.nodes = 2}), 2u);
}

// The last return of a failure-free call with every state machine running.
time_ns simulated_latency(rank_t size, std::uint32_t radix, const logp_cost& cost) {
    allreduce_world world({.size = size, .radix = radix, .latency_ns = cost.latency, .overhead_ns = cost.overhead});
    EXPECT_TRUE(world.run(never));
    EXPECT_EQ(world.check(), "");
    time_ns last = 0;
    for (rank_t r = 0; r < size; ++r) last = std::max(last, world.outcome(r, 0).at);
    return last;
}

// The core's model (what a communicator chooses its radix by) against the
// simulation of every state machine: the same time for every size up to 40
// at every radix up to past the size, and for some larger jobs.
TEST(AllreduceModel, EqualsTheSimulationWhenNothingFails) {
    for (const logp_cost cost : {logp_cost{1, 1}, logp_cost{10, 1}, logp_cost{7, 3}}) {
        for (rank_t size = 1; size <= 40; ++size) {
            for (std::uint32_t radix = 2; radix <= size + 1; ++radix) {
                ASSERT_EQ(allreduce_latency(size, radix, cost), simulated_latency(size, radix, cost))
                    << size << " processes, radix " << radix << ", L " << cost.latency << ", o " << cost.overhead;
            }
        }
        for (const rank_t size : {100u, 333u, 1024u}) {
            for (const std::uint32_t radix : {2u, 3u, 11u, 64u}) {
                EXPECT_EQ(allreduce_latency(size, radix, cost), simulated_latency(size, radix, cost))
                    << size << " processes, radix " << radix << ", L " << cost.latency << ", o " << cost.overhead;
            }
        }
    }
}

// The fast path's closed form against the simulation of every state
// machine: never below it, and at most a round above.
TEST(AllreduceModel, FastPathWithinARoundOfTheSimulation) {
    for (const logp_cost cost : {logp_cost{1, 1}, logp_cost{10, 1}, logp_cost{7, 3}, logp_cost{100, 1}}) {
        for (rank_t size = 2; size <= 64; ++size) {
            allreduce_world world({.size = size, .latency_ns = cost.latency, .overhead_ns = cost.overhead,
                                   .fast_max_bytes = 8});
            ASSERT_TRUE(world.run(never));
            time_ns simulated = 0;
            for (rank_t r = 0; r < size; ++r) simulated = std::max(simulated, world.outcome(r, 0).at);
            const time_ns model = allreduce_fast_latency(size, cost);
            EXPECT_GE(model, simulated) << size << " processes, L " << cost.latency << ", o " << cost.overhead;
            EXPECT_LE(model - simulated, cost.latency + 2 * cost.overhead)
                << size << " processes, L " << cost.latency << ", o " << cost.overhead << ": model " << model
                << ", simulated " << simulated;
        }
    }
}

TEST(AllreduceModel, ChoosesTheRadixFtsimChooses) {
    for (const time_ns latency : {1, 2, 5, 10, 20}) {
        for (const rank_t size : {2u, 3u, 4u, 8u, 16u, 24u, 64u, 200u, 1024u}) {
            EXPECT_EQ(allreduce_best_radix(size, {latency, 1}),
                      best_radix({.nodes = size, .latency = latency, .overhead = 1}))
                << size << " processes, L/o " << latency;
        }
    }
}

}  // namespace
}  // namespace btl_ft::sim
