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
    // job 5 (4 processes) keeps its ranks, then the jobs that joined
    // together, by number: job 2 (3), then job 9 (2)
    EXPECT_EQ(joined.rank_of({5, 0}), 0u);
    EXPECT_EQ(joined.rank_of({2, 0}), 4u);
    EXPECT_EQ(joined.rank_of({9, 1}), 8u);
    EXPECT_EQ(joined.rank_of({2, 3}), std::nullopt);
    EXPECT_EQ(joined.rank_of({3, 0}), std::nullopt);
    for (rank_t r = 0; r < joined.size(); ++r) {
        EXPECT_EQ(joined.rank_of(joined.member_at(r)), r);
    }
    // job 9 first, then job 2: a lower number that joins later comes after
    const job_extent first[] = {{9, 2}};
    const job_extent second[] = {{2, 3}};
    const membership stepwise = world.joined(first).joined(second);
    EXPECT_EQ(stepwise.epoch(), 2u);
    EXPECT_EQ(stepwise.rank_of({9, 0}), 4u);
    EXPECT_EQ(stepwise.rank_of({2, 0}), 6u);
    EXPECT_NE(stepwise.identity(), joined.identity());
    // nobody already in moved
    const membership middle = world.joined(first);
    for (rank_t r = 0; r < middle.size(); ++r) {
        EXPECT_EQ(stepwise.member_at(r), middle.member_at(r));
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
    EXPECT_EQ(joined.jobs()[0].since, 0u);  // not stamped again
    // listed twice: counted once, with its earliest epoch
    const job_extent twice[] = {{8, 2, 3}, {3, 1, 2}, {8, 2, 1}};
    const membership listed = membership::of(twice);
    EXPECT_EQ(listed.size(), 3u);
    EXPECT_EQ(listed.epoch(), 2u);
    EXPECT_EQ(listed.rank_of({8, 0}), 0u);
    EXPECT_EQ(listed.rank_of({3, 0}), 2u);
}

// Two unions that connect build the same one from each other's jobs,
// whatever order each lists them in: the union is a function of its jobs.
TEST(Membership, TheUnionOfTheSameJobsIsTheSameWhateverTheOrderListed) {
    const job_extent listed[] = {{7, 3, 0}, {2, 1, 1}, {5, 2, 2}};
    const job_extent reversed[] = {{5, 2, 2}, {2, 1, 1}, {7, 3, 0}};
    const membership a = membership::of(listed);
    const membership b = membership::of(reversed);
    EXPECT_EQ(a.size(), 6u);
    EXPECT_EQ(a.epoch(), 2u);
    EXPECT_EQ(a.identity(), b.identity());
    for (rank_t r = 0; r < a.size(); ++r) {
        EXPECT_EQ(a.member_at(r), b.member_at(r));
    }
    EXPECT_EQ(a.rank_of({5, 1}), 5u);
    EXPECT_TRUE(in_union_order(a.jobs()));
    EXPECT_FALSE(in_union_order(reversed));
    const job_extent twice[] = {{7, 3, 0}, {2, 1, 1}, {7, 3, 2}};
    EXPECT_FALSE(in_union_order(twice));
}

// Two spawns at once from one job (membership.hpp): each makes a union of
// epoch 1. Whoever hears of both merges them, into the same union whatever
// the order it hears them in, and whatever the grouping of three.
TEST(Membership, UnionsMadeAtOnceMergeAlikeEverywhere) {
    const membership parents(1, 4);
    const job_extent a_job[] = {{3, 2}};
    const job_extent b_job[] = {{2, 1}};
    const job_extent c_job[] = {{4, 3}};
    const membership a = parents.joined(a_job), b = parents.joined(b_job), c = parents.joined(c_job);
    EXPECT_EQ(a.epoch(), b.epoch());
    EXPECT_NE(a.identity(), b.identity());
    const membership ab = membership::merged(a, b);
    EXPECT_EQ(ab.identity(), membership::merged(b, a).identity());
    EXPECT_EQ(ab.size(), 7u);
    EXPECT_EQ(ab.epoch(), 1u);
    EXPECT_EQ(ab.rank_of({2, 0}), 4u);  // by job number within epoch 1
    EXPECT_EQ(ab.rank_of({3, 1}), 6u);
    const membership left = membership::merged(ab, c);
    const membership right = membership::merged(a, membership::merged(c, b));
    EXPECT_EQ(left.identity(), right.identity());
    EXPECT_EQ(membership::merged(left, left).identity(), left.identity());
    // the verdicts along the way
    EXPECT_EQ(verdict_on(a, b), join_verdict::merge);
    EXPECT_EQ(verdict_on(a, ab), join_verdict::follow);
    EXPECT_EQ(verdict_on(ab, a), join_verdict::stale);
    EXPECT_EQ(verdict_on(ab, ab), join_verdict::stale);
    EXPECT_EQ(verdict_on(parents, a), join_verdict::follow);
    // whom a parent that merged a and b tells: the children of both
    const membership* weighed[] = {&a, &b};
    const std::vector<rank_t> told = ab.ranks_not_in_every(weighed);
    EXPECT_EQ(told, (std::vector<rank_t>{4, 5, 6}));
    const membership* alone[] = {&left, &left};
    EXPECT_TRUE(left.ranks_not_in_every(alone).empty());
}

TEST(Membership, FailuresAreCarriedIntoTheNewNumbering) {
    const membership parents(5, 4);
    const job_extent child[] = {{2, 3}};
    const membership parents_first = parents.joined(child);
    const known_failure before[] = {{1, failure_kind::crashed}, {3, failure_kind::suspected}};
    const std::vector<known_failure> same = {{1, failure_kind::crashed}, {3, failure_kind::suspected}};
    EXPECT_EQ(parents_first.carried(parents, before), same);
    // a union where the child came first: the parents move up by 3
    const job_extent child_first[] = {{2, 3, 0}, {5, 4, 1}};
    const membership moved = membership::of(child_first);
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
