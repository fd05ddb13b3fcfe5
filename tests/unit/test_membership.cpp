// The union of connected jobs (membership.hpp) and a detector that starts
// knowing the failures of the one before it (detector_config::known_failures).
#include <gtest/gtest.h>

#include <algorithm>

#include "btl_ft/membership.hpp"
#include "btl_ft/ring.hpp"
#include "recorder.hpp"

namespace btl_ft::testing {
namespace {

constexpr time_ns ms = 1'000'000;

TEST(Membership, OneJobIsEpochZeroInRankOrder) {
    const membership world(7, 4);
    EXPECT_EQ(world.epoch(), 0u);
    EXPECT_EQ(world.size(), 4u);
    EXPECT_EQ(world.rank_of({7, 3}), 3u);
    EXPECT_EQ(world.rank_of({7, 4}), std::nullopt);
    EXPECT_EQ(world.rank_of({8, 0}), std::nullopt);
    EXPECT_EQ(world.member_at(2), (member{7, 2}));
}

TEST(Membership, JobsAreOrderedByIdentifierWhateverTheOrderOfJoining) {
    const membership world(5, 4);
    const job_extent later[] = {{9, 2}, {2, 3}};
    const membership joined = world.joined(later);
    EXPECT_EQ(joined.epoch(), 1u);
    EXPECT_EQ(joined.size(), 9u);
    // job 2 (3 processes), then job 5 (4), then job 9 (2)
    EXPECT_EQ(joined.rank_of({2, 0}), 0u);
    EXPECT_EQ(joined.rank_of({5, 0}), 3u);
    EXPECT_EQ(joined.rank_of({9, 1}), 8u);
    for (rank_t r = 0; r < joined.size(); ++r) {
        EXPECT_EQ(joined.rank_of(joined.member_at(r)), r);
    }
    // the same union however it was reached: every process numbers it alike
    const job_extent first[] = {{2, 3}};
    const job_extent second[] = {{9, 2}};
    const membership stepwise = world.joined(first).joined(second);
    EXPECT_EQ(stepwise.epoch(), 2u);
    for (rank_t r = 0; r < joined.size(); ++r) {
        EXPECT_EQ(stepwise.member_at(r), joined.member_at(r));
    }
}

TEST(Membership, AJobAlreadyInIsNotAddedTwice) {
    const membership world(5, 4);
    const job_extent again[] = {{5, 4}, {6, 1}};
    const membership joined = world.joined(again);
    EXPECT_EQ(joined.size(), 5u);
    EXPECT_TRUE(joined.contains(5));
    EXPECT_TRUE(joined.contains(6));
    EXPECT_FALSE(joined.contains(7));
}

// Two unions that connect each build the same one from the other's jobs.
TEST(Membership, TwoUnionsBuildTheSameUnionFromEachOther) {
    const job_extent parents[] = {{2, 3}, {7, 1}};
    const job_extent children[] = {{5, 2}};
    std::vector<job_extent> seen_by_parents(std::begin(parents), std::end(parents));
    seen_by_parents.insert(seen_by_parents.end(), std::begin(children), std::end(children));
    std::vector<job_extent> seen_by_children(std::begin(children), std::end(children));
    seen_by_children.insert(seen_by_children.end(), std::begin(parents), std::end(parents));
    const membership a = membership::of(seen_by_parents, 2);
    const membership b = membership::of(seen_by_children, 2);
    EXPECT_EQ(a.size(), 6u);
    EXPECT_EQ(a.epoch(), 2u);
    for (rank_t r = 0; r < a.size(); ++r) {
        EXPECT_EQ(a.member_at(r), b.member_at(r));
    }
    EXPECT_EQ(a.rank_of({5, 1}), 4u);
}

TEST(Membership, FailuresAreCarriedIntoTheNewNumbering) {
    const membership parents(5, 4);
    const job_extent child[] = {{2, 3}};  // a lower identifier: the parents move up by 3
    const membership joined = parents.joined(child);
    const known_failure before[] = {{1, failure_kind::crashed}, {3, failure_kind::suspected}};
    const std::vector<known_failure> carried = joined.carried(parents, before);
    const std::vector<known_failure> expected = {{4, failure_kind::crashed}, {6, failure_kind::suspected}};
    EXPECT_EQ(carried, expected);
}

detector_config config_of(rank_t size, rank_t self, std::span<const known_failure> known) {
    detector_config config = make_config(size, self, 10 * ms, 50 * ms);
    config.known_failures = known;
    config.quorum = true;
    return config;
}

TEST(KnownFailures, TheDetectorStartsWithThemAndWatchesAroundThem) {
    recorder io;
    // 0 1 2 3 4 5 on a ring in rank order: 4 and 5 failed before the join,
    // so 0's emitter is 3 and its observer 1; 3's observer is 0.
    const known_failure known[] = {{4, failure_kind::crashed}, {5, failure_kind::suspected}};
    detector zero(config_of(6, 0, known), ring::from_order({0, 1, 2, 3, 4, 5}), io, io);
    EXPECT_EQ(zero.emitter(), 3u);
    EXPECT_EQ(zero.observer(), 1u);
    EXPECT_EQ(zero.dead().size(), 2u);
    EXPECT_EQ(zero.kind_of(4), failure_kind::crashed);
    EXPECT_EQ(zero.kind_of(5), failure_kind::suspected);
    recorder io3;
    detector three(config_of(6, 3, known), ring::from_order({0, 1, 2, 3, 4, 5}), io3, io3);
    EXPECT_EQ(three.observer(), 0u);
    zero.start(0);
    three.start(0);
    // 0 registers with its emitter 3, never with a known failure
    const auto registrations = io.sent_of(wire::msg_type::new_observer, 6);
    for (const auto& [to, msg] : registrations) {
        EXPECT_EQ(to, 3u);
    }
    // 3's heartbeats go to 0, over the failed 4 and 5
    ASSERT_FALSE(io3.words.empty());
    EXPECT_EQ(io3.words.back().first, 0u);
    // they are never reported again
    zero.tick(20 * ms);
    EXPECT_TRUE(io.failed.empty());
}

TEST(KnownFailures, TheyDoNotCountTowardTheQuorum) {
    // 3 of 6 failed before the join. Counted with them, one more failure
    // would leave 2 of 6: a minority, and this process would stop. Counted
    // from the 3 alive when the new detector starts, 2 of 3 remain.
    recorder io;
    const known_failure known[] = {{3, failure_kind::suspected}, {4, failure_kind::suspected}, {5, failure_kind::suspected}};
    detector zero(config_of(6, 0, known), ring::from_order({0, 1, 2, 3, 4, 5}), io, io);
    zero.start(0);
    zero.report_failure(1 * ms, 2, failure_kind::unreachable);
    zero.tick(1000 * ms);  // past the quorum wait
    EXPECT_FALSE(io.declared);
    EXPECT_FALSE(zero.stopped());
    EXPECT_EQ(io.failed, std::vector<rank_t>{2});

    // The control: the same 4 failures learnt by one detector stop it.
    recorder alone;
    detector counted(config_of(6, 0, {}), ring::from_order({0, 1, 2, 3, 4, 5}), alone, alone);
    counted.start(0);
    for (const rank_t rank : {3u, 4u, 5u, 2u}) {
        counted.report_failure(1 * ms, rank, failure_kind::unreachable);
    }
    counted.tick(1000 * ms);
    EXPECT_TRUE(alone.declared);
}

}  // namespace
}  // namespace btl_ft::testing
