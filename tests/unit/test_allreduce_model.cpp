// The survivor allreduce's failure-free LogP latency, by which a
// communicator chooses its radix (allreduce_model.hpp). Its agreement with
// the simulation of every state machine is a sim test
// (AllreduceModel.EqualsTheSimulationWhenNothingFails).
#include <gtest/gtest.h>

#include "btl_ft/allreduce_model.hpp"

namespace btl_ft {
namespace {

// Seed 001's setting, L = 10, o = 1.
constexpr logp_cost seed_setting{10, 1};

TEST(AllreduceModel, OneProcessReturnsAtOnce) { EXPECT_EQ(allreduce_latency(1, 2, seed_setting), 0); }

// 1's partial reaches the root at o + L = 11, handled then; the root's
// PREPARE leaves after its port's o for that receive and its own o for the
// send: 11 + 2o + L = 23.
TEST(AllreduceModel, TwoProcessesTakeAPartialAndAPrepare) { EXPECT_EQ(allreduce_latency(2, 2, seed_setting), 23); }

// The hand-worked binomial case of the sim tests
// (AllreduceRuns.FaultFreeLatencyIsTheLogPSum).
TEST(AllreduceModel, EightProcessesBinomialIsTheLogPSum) { EXPECT_EQ(allreduce_latency(8, 2, seed_setting), 83); }

// Any radix from the size up is the same flat tree.
TEST(AllreduceModel, RadicesFromTheSizeUpAreOneFlatTree) {
    for (const std::uint32_t radix : {16u, 17u, 1000u}) {
        EXPECT_EQ(allreduce_latency(16, radix, seed_setting), allreduce_latency(16, 16, seed_setting));
    }
}

// Where a message's latency dwarfs its overhead a flat tree wins for small
// jobs (one level up and one down), and a deeper one when the root would
// serve too many; where they are equal, narrow trees win.
TEST(AllreduceModel, TheBestRadixFollowsTheRatioOfLatencyToOverhead) {
    EXPECT_EQ(allreduce_best_radix(4, seed_setting), 3u);
    EXPECT_EQ(allreduce_best_radix(8, seed_setting), 7u);
    EXPECT_LT(allreduce_best_radix(4096, seed_setting), 64u);
    EXPECT_GT(allreduce_best_radix(4096, seed_setting), 4u);
    EXPECT_LE(allreduce_best_radix(4096, {1, 1}), 4u);
    EXPECT_EQ(allreduce_best_radix(1, seed_setting), 2u);
}

TEST(AllreduceModel, TheBestRadixIsNoSlowerThanAnyOther) {
    for (const rank_t size : {5u, 16u, 100u, 1000u}) {
        const time_ns best = allreduce_latency(size, allreduce_best_radix(size, seed_setting), seed_setting);
        for (std::uint32_t radix = 2; radix <= 64; ++radix) {
            EXPECT_LE(best, allreduce_latency(size, radix, seed_setting)) << size << " processes, radix " << radix;
        }
    }
}

}  // namespace
}  // namespace btl_ft
