// The checkers alone, fed by a scripted view instead of detectors: each test
// shows one checker accepting a good history and rejecting a bad one, so a
// property test that reports "no violation" means something.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "btl_ft/ring.hpp"
#include "oracle.hpp"

namespace btl_ft::sim {
namespace {

constexpr rank_t n = 8;

class scripted_view final : public process_view {
public:
    scripted_view() : emitter(n), observer(n), dead(n) {
        for (rank_t r = 0; r < n; ++r) {
            emitter[r] = (r + n - 1) % n;
            observer[r] = (r + 1) % n;
        }
    }
    rank_t emitter_of(rank_t p) const override { return emitter[p]; }
    rank_t observer_of(rank_t p) const override { return observer[p]; }
    std::span<const rank_t> dead_set_of(rank_t p) const override { return dead[p]; }

    std::vector<rank_t> emitter, observer;
    std::vector<std::vector<rank_t>> dead;
};

struct oracle_fixture : ::testing::Test {
    oracle_fixture() {
        config.nodes = n;
        config.period_ns = 100;
        config.timeout_ns = 1000;
        config.tau_ns = 1;
    }
    // Every survivor learns `victim` at `now`, as its sink would say.
    void everyone_learns(oracle& judge, rank_t victim, time_ns now) {
        for (rank_t p = 0; p < n; ++p) {
            if (judge.alive(p)) {
                view.dead[p].push_back(victim);
                std::sort(view.dead[p].begin(), view.dead[p].end());
                const rank_t one[] = {victim};
                judge.on_learned(p, one, now);
            }
        }
    }
    void mend_around(rank_t victim) {
        view.emitter[(victim + 1) % n] = (victim + n - 1) % n;
        view.observer[(victim + n - 1) % n] = (victim + 1) % n;
    }

    sim_config config;
    std::shared_ptr<const ring> order = ring::make_flat(ring_order::rank, n, 0);
    scripted_view view;
};

TEST_F(oracle_fixture, GoodHistoryStabilisesWithoutViolations) {
    oracle judge(config, *order, view);
    judge.on_crash(3, 0);
    EXPECT_FALSE(judge.check_stable(0));
    everyone_learns(judge, 3, 500);
    EXPECT_FALSE(judge.check_stable(500));  // everyone knows, ring not mended
    mend_around(3);
    EXPECT_TRUE(judge.check_stable(600));
    judge.finish();
    EXPECT_EQ(judge.violations().total(), 0u);
    EXPECT_EQ(judge.first_known_at(), 500);
    ASSERT_EQ(judge.periods().size(), 1u);
    EXPECT_EQ(judge.periods()[0].known_at, 500);
    EXPECT_EQ(judge.periods()[0].stable_at, 600);
}

// A cut-off process that must stop by a deadline (a census's) and stops
// later, or never, is a stop violation; one that stops in time is not.
TEST_F(oracle_fixture, AStopPastItsDeadlineIsAStopViolation) {
    oracle judge(config, *order, view);
    for (const rank_t cut : {3u, 4u, 5u}) {
        judge.on_crash(cut, 0);
        judge.expect_stop(cut, 500);
    }
    judge.on_declared_dead_self(3, 3, "cut off", 500);
    EXPECT_EQ(judge.violations().stop, 0u);
    judge.on_declared_dead_self(4, 4, "cut off", 501);
    EXPECT_EQ(judge.violations().stop, 1u);
    judge.finish();
    EXPECT_EQ(judge.violations().stop, 2u);  // 5 never stopped
}

TEST_F(oracle_fixture, LiveProcessDeclaredDeadIsAnAccuracyViolation) {
    oracle judge(config, *order, view);
    const rank_t live[] = {5};
    judge.on_learned(2, live, 10);
    judge.on_declared_dead_self(5, 2, "test", 20);
    EXPECT_EQ(judge.violations().accuracy, 2u);
}

TEST_F(oracle_fixture, FailureNobodyLearnsIsACompletenessViolation) {
    oracle judge(config, *order, view);
    judge.on_crash(3, 0);
    mend_around(3);
    EXPECT_FALSE(judge.check_stable(100));
    judge.finish();
    EXPECT_GE(judge.violations().completeness, 1u);
}

TEST_F(oracle_fixture, SlowStabilisationBreaksTheBound) {
    oracle judge(config, *order, view);
    judge.on_crash(3, 0);
    mend_around(3);
    // T(1) = 2 (delta + c) + tau + 8 tau log2 8 = 2425 ns here (c = delta / 5).
    everyone_learns(judge, 3, 2500);
    EXPECT_TRUE(judge.check_stable(2500));
    judge.finish();
    EXPECT_EQ(judge.violations().bound, 1u);
    EXPECT_GT(judge.max_bound_ratio(), 1.0);
}

TEST_F(oracle_fixture, BoundNotCheckedBeyondTheoremPreconditions) {
    oracle judge(config, *order, view);
    for (rank_t victim : {1u, 3u, 5u}) {  // f = 3 > floor(log2 8) - 1
        judge.on_crash(victim, 0);
    }
    EXPECT_FALSE(judge.bound_applicable(judge.periods()[0]));
}

TEST_F(oracle_fixture, WrongNeighbourAfterStabilityIsARingViolation) {
    oracle judge(config, *order, view);
    judge.on_crash(3, 0);
    mend_around(3);
    everyone_learns(judge, 3, 100);
    EXPECT_TRUE(judge.check_stable(100));
    view.observer[6] = 0;  // far from the failure: only the final sweep sees it
    judge.finish();
    EXPECT_EQ(judge.violations().ring, 1u);
}

TEST_F(oracle_fixture, SinkAndDeadSetMustAgree) {
    oracle judge(config, *order, view);
    judge.on_crash(3, 0);
    mend_around(3);
    everyone_learns(judge, 3, 100);
    EXPECT_TRUE(judge.check_stable(100));
    view.dead[0].push_back(4);  // in D, never reported through the sink, and alive
    judge.finish();
    EXPECT_EQ(judge.violations().accuracy, 1u);
}

}  // namespace
}  // namespace btl_ft::sim
