// The detector's sub-protocols as types, tested alone: a confirmation, the
// probe window, a quorum episode and a census. The detector tests
// (test_detector_*) show what they do together over a network; these show
// each type's own rules and that a broken rule stops the process.
#include <gtest/gtest.h>

#include <vector>

#include "census.hpp"
#include "confirmation.hpp"
#include "probe_window.hpp"
#include "quorum_episode.hpp"

namespace btl_ft {
namespace {

// --- confirmation ---

TEST(Confirmation, AsksOnceThenAgainOnlyWhenLate) {
    confirmation c;
    EXPECT_TRUE(c.should_ask(false));
    c.ask(7);
    EXPECT_TRUE(c.active());
    EXPECT_FALSE(c.should_ask(false)) << "an on-time deadline accuses";
    EXPECT_TRUE(c.should_ask(true)) << "a late wakeup asks once more";
    c.ask(9);
    EXPECT_FALSE(c.should_ask(true)) << "never a third time";
    EXPECT_DEATH(c.ask(10), "at most twice");
}

TEST(Confirmation, AnAnswerToAnyOfItsRoundsCounts) {
    confirmation c;
    EXPECT_FALSE(c.answered_by(5)) << "nothing answers an idle confirmation";
    c.ask(5);
    c.ask(8);
    EXPECT_TRUE(c.answered_by(5));
    EXPECT_TRUE(c.answered_by(6)) << "a round between the two (a probe window's) is in the range";
    EXPECT_TRUE(c.answered_by(8));
    EXPECT_FALSE(c.answered_by(4));
    EXPECT_FALSE(c.answered_by(9));
    c.end();
    EXPECT_FALSE(c.answered_by(8)) << "an ended confirmation takes no answer";
}

TEST(Confirmation, RoundsWrapAroundTwoToTheThirtyTwo) {
    confirmation c;
    c.ask(0xffffffffu);
    c.ask(1);
    EXPECT_TRUE(c.answered_by(0xffffffffu));
    EXPECT_TRUE(c.answered_by(0));
    EXPECT_TRUE(c.answered_by(1));
    EXPECT_FALSE(c.answered_by(2));
    EXPECT_FALSE(c.answered_by(0xfffffffeu));
}

TEST(Confirmation, EndingForgetsTheWitness) {
    confirmation c;
    EXPECT_DEATH(c.await_remote_witness(), "outside a confirmation");
    c.ask(1);
    c.await_remote_witness();
    EXPECT_TRUE(c.awaiting_remote_witness());
    c.witness_answered();
    EXPECT_FALSE(c.awaiting_remote_witness());
    EXPECT_TRUE(c.active()) << "an answer from the witness does not end the confirmation";
    c.await_remote_witness();
    c.end();
    EXPECT_FALSE(c.awaiting_remote_witness());
    EXPECT_TRUE(c.should_ask(false)) << "the next timeout starts afresh";
}

// --- probe window ---

std::vector<rank_t> ranks_of(std::span<const probe_slot> slots) {
    std::vector<rank_t> out;
    for (const probe_slot& slot : slots) out.push_back(slot.rank);
    return out;
}

TEST(ProbeWindow, OpensASlotPerNewPredecessorWithItsOwnRound) {
    probe_window w;
    probe_window::slots_t opened;
    std::uint32_t rounds = 10;
    const std::vector<rank_t> behind{6, 5, 4};
    const auto fresh = w.rebuild(behind, true, 100, rounds, opened);
    EXPECT_EQ(ranks_of(fresh), behind);
    EXPECT_EQ(fresh[0].round, 11u);
    EXPECT_EQ(fresh[2].round, 13u);
    EXPECT_EQ(rounds, 13u);
    EXPECT_EQ(ranks_of(w.slots()), behind);
}

TEST(ProbeWindow, ARebuildKeepsSlotsAndOpensOnlyWhatIsNew) {
    probe_window w;
    probe_window::slots_t opened;
    std::uint32_t rounds = 0;
    const std::vector<rank_t> first{6, 5};
    w.rebuild(first, true, 100, rounds, opened);
    // 6 became the emitter: the window behind it is now 5, 4.
    const std::vector<rank_t> second{5, 4};
    const auto fresh = w.rebuild(second, true, 300, rounds, opened);
    EXPECT_EQ(ranks_of(fresh), std::vector<rank_t>{4}) << "5 keeps its slot: no second PROBE";
    EXPECT_EQ(w.slots()[0].deadline, 100) << "and its window is not restarted";
    EXPECT_EQ(w.slots()[1].round, 3u);
}

TEST(ProbeWindow, WithoutOpeningTheWindowStopsAtTheFirstUnprobed) {
    probe_window w;
    probe_window::slots_t opened;
    std::uint32_t rounds = 0;
    const std::vector<rank_t> first{4};
    w.rebuild(first, true, 100, rounds, opened);
    const std::vector<rank_t> behind{5, 4};
    const auto fresh = w.rebuild(behind, false, 300, rounds, opened);
    EXPECT_TRUE(fresh.empty());
    EXPECT_TRUE(w.empty()) << "4 lies beyond 5, which was never probed: the run behind the emitter ends at 5";
}

TEST(ProbeWindow, SilentPredecessorsAreAddedUpToTheFirstAnswerOrOpenWindow) {
    probe_window w;
    probe_window::slots_t opened;
    std::uint32_t rounds = 0;
    const std::vector<rank_t> behind{6, 5, 4, 3};
    w.rebuild(behind, true, 100, rounds, opened);
    EXPECT_TRUE(w.answer(4, 3));
    EXPECT_FALSE(w.answer(4, 2)) << "a reply of another round";
    EXPECT_FALSE(w.answer(9, 1)) << "a reply from a rank never probed";
    failed_batch found;
    found.add(7);  // the emitter
    w.add_silent(100, [](rank_t rank) { return rank == 5; }, found);
    EXPECT_EQ((std::vector<rank_t>(found.view().begin(), found.view().end())), (std::vector<rank_t>{7, 6}))
        << "6 is silent, 5 is gone already, 4 answered: the walk ends there";
    failed_batch early;
    w.add_silent(99, [](rank_t) { return false; }, early);
    EXPECT_EQ(early.count, 0u) << "no window has run out";
}

TEST(ProbeWindow, RefusesMoreThanItsCapacity) {
    probe_window w;
    probe_window::slots_t opened;
    std::uint32_t rounds = 0;
    const std::vector<rank_t> too_many(probe_window::capacity + 1, 1);
    EXPECT_DEATH(w.rebuild(too_many, true, 1, rounds, opened), "more candidates");
    const std::vector<rank_t> twice{3, 3};
    EXPECT_DEATH(w.rebuild(twice, true, 1, rounds, opened), "two slots");
}

// --- quorum episode ---

TEST(QuorumEpisode, LosingHalfOrMoreIsAMinorityUnlessTheTieBreakRemains) {
    quorum_episode e;
    e.begin(8, 0);
    for (rank_t rank : {4, 5, 6}) e.count(0, rank, false, 10);
    EXPECT_FALSE(e.minority([] { return rank_t{0}; })) << "5 of 8 remain";
    e.count(1, 7, false, 10);
    EXPECT_FALSE(e.minority([] { return rank_t{0}; })) << "exactly half, and rank 0 (not lost) breaks the tie";
    EXPECT_TRUE(e.minority([] { return rank_t{4}; })) << "exactly half, and the tie-break rank is lost";
    e.count(2, 3, false, 10);
    EXPECT_TRUE(e.minority([] { return rank_t{0}; })) << "3 of 8 remain";
}

TEST(QuorumEpisode, ConfirmedCrashesLeaveTheCountAndTheBase) {
    quorum_episode e;
    e.begin(8, 0);
    for (rank_t rank : {4, 5, 6, 7}) e.count(0, rank, false, 10);
    e.count(0, 3, true, 10);  // confirmed at once
    EXPECT_TRUE(e.minority([] { return rank_t{4}; })) << "4 lost of a base of 7";
    e.confirm(4);
    e.confirm(5);
    EXPECT_FALSE(e.counted(4));
    EXPECT_FALSE(e.minority([] { return rank_t{6}; })) << "2 lost of a base of 5";
    e.confirm(2) ;  // never counted: changes nothing
    EXPECT_FALSE(e.minority([] { return rank_t{6}; }));
}

TEST(QuorumEpisode, EndsAfterTheGapAndASettleForgetsIt) {
    quorum_episode e;
    EXPECT_TRUE(e.over(0));
    e.begin(4, 1);
    e.count(100, 2, false, 50);
    EXPECT_FALSE(e.over(149));
    EXPECT_TRUE(e.over(150));
    EXPECT_EQ(e.lowest(), 1u);
    e.settle();
    EXPECT_TRUE(e.over(0));
    EXPECT_FALSE(e.counted(2));
}

TEST(QuorumEpisode, HoldsFailuresOnlyWhileWaiting) {
    quorum_episode e;
    const rank_t ranks[] = {3, 4};
    EXPECT_DEATH(e.hold(ranks), "outside a wait");
    EXPECT_TRUE(e.wait(100, 500));
    EXPECT_FALSE(e.wait(200, 500)) << "a wait already running keeps its deadline";
    EXPECT_EQ(e.wait_deadline(), 600);
    e.hold(ranks);
    EXPECT_EQ(e.stop_waiting(), (std::vector<rank_t>{3, 4}));
    EXPECT_FALSE(e.waiting());
    EXPECT_TRUE(e.stop_waiting().empty()) << "released once";
}

TEST(QuorumEpisode, CountingARankTwiceOrMoreThanTheLiveStops) {
    quorum_episode e;
    e.begin(2, 0);
    e.count(0, 1, false, 10);
    EXPECT_DEATH(e.count(0, 1, false, 10), "counted twice");
    e.count(0, 0, false, 10);
    EXPECT_DEATH(e.count(0, 2, true, 10), "more failures than live processes");
}

// --- census ---

TEST(Census, TakesEveryLiveProcessUpToTheSample) {
    const dead_set dead({2}), departed({5});
    const std::vector<rank_t> targets = census::choose(8, 0, dead, departed, 1);
    EXPECT_EQ(targets, (std::vector<rank_t>{1, 3, 4, 6, 7}));
}

TEST(Census, DrawsASortedSampleThatReplays) {
    const dead_set dead({10, 11}), none;
    const std::vector<rank_t> a = census::choose(5000, 7, dead, none, 3);
    EXPECT_EQ(a.size(), census_sample);
    EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
    EXPECT_EQ(std::adjacent_find(a.begin(), a.end()), a.end());
    for (const rank_t rank : a) {
        EXPECT_NE(rank, 7u);
        EXPECT_FALSE(dead.contains(rank));
    }
    EXPECT_EQ(a, census::choose(5000, 7, dead, none, 3)) << "same self and round: same draw";
    EXPECT_NE(a, census::choose(5000, 7, dead, none, 4)) << "another round draws again";
}

TEST(Census, SaysCutOffOnlyOnceClosedAndUnderAQuarter) {
    // 8 targets; with itself, 9 asked: cut off while 4 * answered < 9, i.e. at most 2 answered.
    census c({1, 2, 3, 4, 5, 6, 7, 8}, 4, 100);
    const dead_set none;
    EXPECT_TRUE(c.record(1, 4));
    EXPECT_FALSE(c.record(2, 3)) << "another round";
    EXPECT_FALSE(c.record(9, 4)) << "not a target";
    EXPECT_FALSE(c.says_cut_off(none, none)) << "no verdict while the window is open";
    c.close();
    EXPECT_TRUE(c.says_cut_off(none, none)) << "2 of 9 answered";
    EXPECT_TRUE(c.record(2, 4)) << "a late answer still counts";
    EXPECT_FALSE(c.says_cut_off(none, none)) << "3 of 9";
    EXPECT_DEATH(c.close(), "closed twice");
}

TEST(Census, DepartedAndCrashedTargetsCountNeitherWay) {
    census c({1, 2, 3, 4, 5, 6, 7, 8}, 1, 100);
    c.record(1, 1);
    c.close();
    EXPECT_TRUE(c.says_cut_off(dead_set{}, dead_set{})) << "2 of 9 asked answered";
    EXPECT_FALSE(c.says_cut_off(dead_set({2, 3}), dead_set({4, 5, 6}))) << "2 of 4";
}

TEST(Census, RefusesUnsortedOrEmptyTargets) {
    EXPECT_DEATH(census({3, 1}, 1, 10), "sorted and distinct");
    EXPECT_DEATH(census({}, 1, 10), "asks nobody");
}

}  // namespace
}  // namespace btl_ft
