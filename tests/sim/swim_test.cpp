// SWIM random probing (seed 002 Section 4.3) against the balls-into-bins
// expectations: covering N processes takes about ln N rounds, and the fullest
// target of a round gets a handful of probes, never fewer than two.
#include <gtest/gtest.h>

#include <cmath>

#include "rng.hpp"
#include "swim.hpp"

namespace btl_ft::sim {
namespace {

TEST(Swim, CoverageTakesAboutLogNRounds) {
    constexpr rank_t nodes = 2000;
    double rounds = 0;
    std::uint64_t seed = 11;
    constexpr int runs = 50;
    for (int run = 0; run < runs; ++run) {
        const swim_run one = simulate_swim(nodes, seed);
        EXPECT_GE(one.rounds_to_cover, 3u);
        EXPECT_GE(one.max_probes, 3u);
        EXPECT_GE(one.max_probes, one.first_round_max_probes);
        rounds += one.rounds_to_cover;
        seed = next_run_seed(seed);
    }
    // E[rounds] ~ ln N + 0.58 (coupon collector with Poisson(1) rounds).
    EXPECT_NEAR(rounds / runs, std::log(nodes) + 0.58, 1.2);
}

TEST(Swim, TwoProcessesProbeEachOtherInOneRound) {
    const swim_run one = simulate_swim(2, 3);
    EXPECT_EQ(one.rounds_to_cover, 1u);
    EXPECT_EQ(one.max_probes, 1u);
}

}  // namespace
}  // namespace btl_ft::sim
