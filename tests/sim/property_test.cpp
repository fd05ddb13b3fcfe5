// Property tests: random failure schedules driving the real detectors. For
// every seed the configuration itself is drawn (size, number and placement
// of failures, spread, overlay, delays, one-port), then the run must be
// accurate, complete, mend the ring and, within Theorem 1's preconditions,
// stabilise within T(f). Faults that break the preconditions must make the
// matching checker fire, or the clean results above would prove nothing.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "btl_ft/detector.hpp"
#include "config.hpp"
#include "rng.hpp"
#include "world.hpp"
#include "sim_test_helpers.hpp"

namespace btl_ft::sim {
namespace {

sim_config lowlat(rank_t nodes, std::uint32_t failures) {
    sim_config config;
    config.nodes = nodes;
    config.scenario_name = "lowlat";
    config.period_ns = ns_per_s / 10;
    config.timeout_ns = ns_per_s;
    config.failures = failures;
    return config;
}

std::string describe(const sim_config& c, std::uint64_t seed) {
    return "seed " + std::to_string(seed) + " n=" + std::to_string(c.nodes) + " f=" + std::to_string(c.failures) +
           " placement=" + (c.where == placement::random ? "random" : "consecutive") + " window_ns=" +
           std::to_string(c.window_ns) + " propagator=" + std::string(name_of(c.propagator)) + " tau_ns=" +
           std::to_string(c.tau_ns) + (c.one_port ? " one-port" : "");
}

// A configuration drawn from `seed`, within Theorem 1's preconditions.
sim_config draw_config(std::uint64_t seed) {
    rng draws(seed, stream::faults);
    const auto nodes = static_cast<rank_t>(4 + draws.below(253));
    sim_config config = lowlat(nodes, 1);
    config.failures = 1 + static_cast<std::uint32_t>(draws.below(std::max(1u, max_tolerated_failures(nodes))));
    config.where = draws.chance(0.5) ? placement::consecutive : placement::random;
    config.window_ns = draws.chance(0.5) ? 0 : static_cast<time_ns>(draws.below(ns_per_s));
    static constexpr std::array kinds{propagator_kind::hba, propagator_kind::bmg, propagator_kind::chord};
    config.propagator = kinds[draws.below(kinds.size())];
    config.one_port = draws.chance(0.3);
    // Delays from network-fast to a third of the period (eta >= 3 tau).
    static constexpr std::array<time_ns, 4> taus{1000, 100'000, 1'000'000, 30'000'000};
    config.tau_ns = taus[draws.below(config.one_port ? 3 : 4)];
    return config;
}

TEST(Property, RandomFailureSchedulesAreDetectedAccuratelyWithinTheBound) {
    int bound_checked = 0;
    constexpr std::uint64_t seeds = 300;
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
        const sim_config config = draw_config(seed);
        SCOPED_TRACE(describe(config, seed));
        const run_result result = simulate(config, seed);
        EXPECT_EQ(result.violations.total(), 0u) << details(result);
        EXPECT_EQ(result.failures, config.failures);
        EXPECT_GE(result.stable_ns, 0) << "never stabilised";
        EXPECT_GE(result.stable_ns, result.all_known_ns);
        EXPECT_GE(result.all_known_ns, result.first_known_ns);
        // Nobody can know of a crash before its observer's timeout fires.
        EXPECT_GE(result.first_known_ns, config.timeout_ns - config.period_ns - config.tau_ns);
        bound_checked += result.bound_checked ? 1 : 0;
        EXPECT_LE(result.bound_ratio, 1.0);
    }
    EXPECT_EQ(bound_checked, static_cast<int>(seeds));  // the preconditions hold by construction
}

// The same schedules with nodes of 2 to 8 processes: witnesses answer for
// crashed emitters ("gone", declared at the timeout without the PROBE's
// window) and for remote ones by message; nothing else may change.
TEST(Property, WitnessesKeepRandomSchedulesAccurateAndWithinTheBound) {
    std::uint64_t answered = 0;
    for (std::uint64_t seed = 1; seed <= 100; ++seed) {
        sim_config config = draw_config(seed);
        config.per_node = 2 + static_cast<rank_t>(seed % 7);
        SCOPED_TRACE(describe(config, seed) + " per_node " + std::to_string(config.per_node));
        const run_result result = simulate(config, seed);
        EXPECT_EQ(result.violations.total(), 0u) << details(result);
        EXPECT_GE(result.stable_ns, 0) << "never stabilised";
        EXPECT_GE(result.first_known_ns, config.timeout_ns - config.period_ns - config.tau_ns);
        EXPECT_LE(result.bound_ratio, 1.0);
        answered += result.totals.witnessed_down;
    }
    EXPECT_GT(answered, 50u);  // witnesses really took part
}

TEST(Property, SlowMessagesBelowTheTimeoutNeverCondemnTheLiving) {
    // Heartbeat gaps stay below eta + tau < delta, so no live process may be
    // suspected, however slow the network; Theorem 1 is not checked (eta < 3 tau).
    for (std::uint64_t seed = 300; seed < 340; ++seed) {
        rng draws(seed, stream::faults);
        sim_config config = lowlat(static_cast<rank_t>(8 + draws.below(120)), 1);
        config.failures = 1 + static_cast<std::uint32_t>(draws.below(max_tolerated_failures(config.nodes)));
        config.tau_ns = config.timeout_ns - config.period_ns - 100'000'000;  // 0.8 s
        config.window_ns = static_cast<time_ns>(draws.below(ns_per_s));
        SCOPED_TRACE(describe(config, seed));
        const run_result result = simulate(config, seed);
        EXPECT_EQ(result.violations.total(), 0u) << details(result);
        EXPECT_GE(result.stable_ns, 0);
        EXPECT_FALSE(result.bound_checked);
    }
}

TEST(Property, FirstFailureAloneIsKnownAfterAboutOneTimeout) {
    // Seed 002 Section 4.2: delta - eta/2 on average; each run lies in
    // [delta - eta, delta + tau] (plus the broadcast, microseconds here).
    // The unanswered confirmation PROBE went out a window before the
    // timeout, so it adds nothing, for a crash as for a hang.
    for (const fault_kind fault : {fault_kind::crash, fault_kind::hang}) {
        sim_config config = lowlat(64, 1);
        config.fault = fault;
        double sum_s = 0;
        constexpr int runs = 40;
        for (std::uint64_t seed = 100; seed < 100 + runs; ++seed) {
            const run_result result = simulate(config, seed);
            ASSERT_EQ(result.violations.total(), 0u) << details(result);
            EXPECT_GE(result.first_known_ns, config.timeout_ns - config.period_ns);
            EXPECT_LE(result.first_known_ns, config.timeout_ns + config.tau_ns + 1'000'000);
            sum_s += static_cast<double>(result.first_known_ns) / ns_per_s;
        }
        EXPECT_NEAR(sum_s / runs, 0.95, 0.03);
    }
}

TEST(Property, ExponentialFailuresOverlapAndStillStabilise) {
    std::uint32_t overlapping = 0;
    for (std::uint64_t seed = 200; seed < 240; ++seed) {
        sim_config config = lowlat(128, max_tolerated_failures(128));
        config.law = failure_law::exponential;
        config.mtbf_s = 128 * 0.5;  // lambda = 2/s: about two failures per timeout
        SCOPED_TRACE("seed " + std::to_string(seed));
        const run_result result = simulate(config, seed);
        EXPECT_EQ(result.violations.total(), 0u) << details(result);
        EXPECT_GE(result.stable_ns, 0);
        overlapping += result.failures_during_stabilization;
    }
    EXPECT_GT(overlapping, 40u);  // the schedule really overlaps failures
}

TEST(Property, AStalledProcessMakesTheAccuracyCheckerFire) {
    sim_config config = lowlat(32, 0);
    config.faults.stall_ns = 2 * config.timeout_ns;  // silent for longer than delta
    const run_result result = simulate(config, 5);
    EXPECT_GT(result.network.stalled_sends, 0u);
    EXPECT_GT(result.violations.accuracy, 0u);
}

TEST(Property, AShortStallIsNotASuspicion) {
    sim_config config = lowlat(32, 0);
    config.faults.stall_ns = config.timeout_ns - 2 * config.period_ns;  // the gap stays below delta
    const run_result result = simulate(config, 5);
    EXPECT_GT(result.network.stalled_sends, 0u);
    EXPECT_EQ(result.violations.total(), 0u) << details(result);
}

// The starvation witnesses exist for: twice the timeout without a word is a
// false failure alone on a node, and none with its node-mates to vouch for it.
TEST(Property, AStarvedProcessWithNodeMatesIsNotDeclared) {
    sim_config config = lowlat(32, 0);
    config.per_node = 4;
    config.faults.stall_ns = 2 * config.timeout_ns;
    const run_result result = simulate(config, 5);
    EXPECT_GT(result.network.stalled_sends, 0u);
    EXPECT_GT(result.totals.witnessed_running, 0u);
    EXPECT_EQ(result.violations.total(), 0u) << details(result);
}

// ... for as long as its host sees it denied the CPU: past the patience
// too (3 of about 3,000 double-load respawn runs in MPI, before the
// witness told starved from running).
TEST(Property, AProcessStarvedPastThePatienceIsNotDeclared) {
    sim_config config = lowlat(32, 0);
    config.per_node = 4;
    config.faults.stall_ns = config.detector_base().witness_patience() + 4 * config.timeout_ns;
    config.settle_ns = 2 * config.faults.stall_ns;  // the run outlasts the stall
    const run_result result = simulate(config, 5);
    EXPECT_GT(result.network.stalled_sends, 0u);
    EXPECT_GE(result.totals.witnessed_starved, 4u);
    EXPECT_EQ(result.violations.total(), 0u) << details(result);
}

// ... but a witness only delays a wedged detector: silent for longer than
// its patience (4 timeouts here) while its host sees it running, a process
// is declared all the same.
TEST(Property, AWitnessDelaysButNeverPreventsADeclaration) {
    sim_config config = lowlat(32, 0);
    config.per_node = 4;
    config.faults.stall_ns = config.detector_base().witness_patience() + 2 * config.timeout_ns;
    config.faults.stall_wedged = true;
    config.settle_ns = 2 * config.faults.stall_ns;  // the run outlasts the stall
    const run_result result = simulate(config, 5);
    EXPECT_GE(result.totals.witnessed_running, 3u);
    EXPECT_EQ(result.totals.witnessed_starved, 0u);
    EXPECT_GT(result.violations.accuracy, 0u);
}

TEST(Property, LostMessagesMakeTheCompletenessCheckerFire) {
    sim_config config = lowlat(32, 1);
    config.faults.drop_message_probability = 1.0;  // no notice ever arrives
    const run_result result = simulate(config, 6);
    EXPECT_GT(result.network.dropped_messages, 0u);
    EXPECT_GT(result.violations.completeness, 0u);
    EXPECT_LT(result.stable_ns, 0);
}

TEST(Property, NoFailuresMeansNoSuspicionAndOnlyHeartbeats) {
    const sim_config config = lowlat(64, 0);
    const run_result result = simulate(config, 9);
    EXPECT_EQ(result.violations.total(), 0u) << details(result);
    EXPECT_EQ(result.totals.suspicions, 0u);
    EXPECT_EQ(result.totals.notice_messages_sent, 0u);
    EXPECT_GT(result.totals.heartbeats_sent, 64u * 20);  // 2 eta warm-up + 2 delta + eta settle
}

}  // namespace
}  // namespace btl_ft::sim
