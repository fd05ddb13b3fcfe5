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

TEST(Membership, JobsAreNumberedInTheOrderTheyJoined) {
    const membership world(5, 4);
    const job_extent later[] = {{9, 2}, {2, 3}};
    const membership joined = world.joined(later);
    EXPECT_EQ(joined.epoch(), 1u);
    EXPECT_EQ(joined.size(), 9u);
    // job 5 (4 processes) keeps its ranks, then job 9 (2), then job 2 (3),
    // whatever their identifiers
    EXPECT_EQ(joined.rank_of({5, 0}), 0u);
    EXPECT_EQ(joined.rank_of({9, 1}), 5u);
    EXPECT_EQ(joined.rank_of({2, 0}), 6u);
    EXPECT_EQ(joined.rank_of({2, 3}), std::nullopt);
    EXPECT_EQ(joined.rank_of({3, 0}), std::nullopt);
    for (rank_t r = 0; r < joined.size(); ++r) {
        EXPECT_EQ(joined.rank_of(joined.member_at(r)), r);
    }
    // the same union reached in two joins: nobody already in moved
    const job_extent first[] = {{9, 2}};
    const job_extent second[] = {{2, 3}};
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
    const job_extent twice[] = {{8, 2}, {3, 1}, {8, 2}};
    const membership listed = membership::of(twice, 4);
    EXPECT_EQ(listed.size(), 3u);
    EXPECT_EQ(listed.rank_of({3, 0}), 2u);  // where job 8 was first listed
}

// Two unions that connect build the same one when they list each other's
// jobs in the same order (the shim lists first the side whose processes
// must keep their ranks), and different ones otherwise.
TEST(Membership, TwoUnionsBuildTheSameUnionWhenTheyListTheJobsAlike) {
    const job_extent parents[] = {{7, 3}, {2, 1}};
    const job_extent children[] = {{5, 2}};
    std::vector<job_extent> listed(std::begin(parents), std::end(parents));
    listed.insert(listed.end(), std::begin(children), std::end(children));
    const membership a = membership::of(listed, 2);
    const membership b = membership::of(listed, 2);
    EXPECT_EQ(a.size(), 6u);
    EXPECT_EQ(a.epoch(), 2u);
    for (rank_t r = 0; r < a.size(); ++r) {
        EXPECT_EQ(a.member_at(r), b.member_at(r));
    }
    EXPECT_EQ(a.rank_of({5, 1}), 5u);
    std::vector<job_extent> children_first(std::begin(children), std::end(children));
    children_first.insert(children_first.end(), std::begin(parents), std::end(parents));
    EXPECT_EQ(membership::of(children_first, 2).rank_of({5, 1}), 1u);
}

TEST(Membership, FailuresAreCarriedIntoTheNewNumbering) {
    const membership parents(5, 4);
    const job_extent child[] = {{2, 3}};
    const membership parents_first = parents.joined(child);
    const known_failure before[] = {{1, failure_kind::crashed}, {3, failure_kind::suspected}};
    const std::vector<known_failure> same = {{1, failure_kind::crashed}, {3, failure_kind::suspected}};
    EXPECT_EQ(parents_first.carried(parents, before), same);
    // a union that lists the child first: the parents move up by 3
    const job_extent child_first[] = {{2, 3}, {5, 4}};
    const membership moved = membership::of(child_first, 1);
    const std::vector<known_failure> expected = {{4, failure_kind::crashed}, {6, failure_kind::suspected}};
    EXPECT_EQ(moved.carried(parents, before), expected);
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
