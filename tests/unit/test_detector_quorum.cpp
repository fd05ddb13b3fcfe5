// The quorum rule: after a silent partition only the side with a majority of
// the processes (at exactly half, the side of the lowest rank) goes on; the
// other side stops itself instead of becoming a second set of survivors.
// Each partition test also runs with the rule off, where both sides carry
// on, so the checks can fail. Failures spread over time never stop anyone,
// nor do failures the runtime confirmed, however close together.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "btl_ft/dead_set.hpp"
#include "fake_net.hpp"

namespace btl_ft::testing {
namespace {

constexpr time_ns timeout_ns = 50 * ms;  // fake_net's delta

std::vector<rank_t> range(rank_t first, rank_t end) {
    std::vector<rank_t> out;
    for (rank_t rank = first; rank < end; ++rank) out.push_back(rank);
    return out;
}

// Partitions 8 ranks at 200 ms into `cut` and the rest, runs 2 s (tens of
// timeouts: every side has found the other by then), returns the net.
std::unique_ptr<fake_net> partitioned(const std::vector<rank_t>& cut, bool quorum) {
    auto net = std::make_unique<fake_net>(net_options{.size = 8, .quorum = quorum});
    net->start_all();
    net->run_until(200 * ms);
    net->cut_off(cut);
    net->run_until(2000 * ms);
    return net;
}

std::vector<rank_t> stopped_of(const fake_net& net) {
    std::vector<rank_t> out;
    for (rank_t rank = 0; rank < net.size(); ++rank) {
        if (net.declared_dead(rank)) out.push_back(rank);
    }
    return out;
}

TEST(Quorum, HalvesWithoutTheLowestRankStop) {
    const auto cut = range(4, 8);
    const auto net = partitioned(cut, true);
    EXPECT_EQ(stopped_of(*net), cut);
    EXPECT_TRUE(net->survivors_agree(cut));  // 0..3 found exactly 4..7
    EXPECT_TRUE(net->ring_mended());
}

TEST(Quorum, MinorityStops) {
    const auto cut = range(5, 8);
    const auto net = partitioned(cut, true);
    EXPECT_EQ(stopped_of(*net), cut);
    EXPECT_TRUE(net->survivors_agree(cut));
}

TEST(Quorum, MinorityStopsEvenWithTheLowestRank) {
    const auto cut = range(0, 3);
    const auto net = partitioned(cut, true);
    EXPECT_EQ(stopped_of(*net), cut);
    EXPECT_TRUE(net->survivors_agree(cut));
}

TEST(Quorum, WithoutItBothSidesCarryOn) {
    const auto net = partitioned(range(4, 8), false);
    EXPECT_TRUE(stopped_of(*net).empty());
    // each side reports the other failed: two sets of survivors
    for (rank_t rank = 0; rank < 8; ++rank) {
        EXPECT_EQ(net->failures_seen_by(rank).size(), 4u) << "rank " << rank;
    }
}

// One crash every 10 timeouts, five in all: each episode loses one of the
// processes alive when it began, so nobody stops although 5 of 8 are gone.
TEST(Quorum, FailuresOneAtATimeNeverStopAnyone) {
    fake_net net({.size = 8, .quorum = true});
    net.start_all();
    net.run_until(200 * ms);
    std::vector<rank_t> crashed;
    for (const rank_t victim : {0u, 5u, 2u, 7u, 3u}) {
        net.crash(victim);
        crashed.push_back(victim);
        net.run_for(10 * timeout_ns);
    }
    EXPECT_TRUE(stopped_of(net).empty());
    std::ranges::sort(crashed);
    EXPECT_TRUE(net.survivors_agree(crashed));
}

// The "recover and go on" loop of a ULFM program, one failure after the
// other inside one episode until one process is left: crashes the runtime
// confirms, and hangs that the observers fence (killed, then confirmed),
// never count. Without the runtime, the same schedule looks like a cut.
TEST(Quorum, ConfirmedFailuresInQuickSuccessionNeverStopTheSurvivor) {
    for (const bool hang : {false, true}) {
        for (const bool runtime : {true, false}) {
            for (const std::vector<rank_t>& victims : {std::vector<rank_t>{3, 2, 1}, std::vector<rank_t>{0, 1, 2}}) {
                fake_net net({.size = 4, .quorum = true, .runtime_confirm_ns = runtime ? 5 * ms : -1});
                net.start_all();
                net.run_until(200 * ms);
                for (const rank_t victim : victims) {
                    hang ? net.hang(victim, never) : net.crash(victim);
                    net.run_for(timeout_ns + 30 * ms);  // found, then the next one
                }
                net.run_for(1000 * ms);
                const rank_t survivor = 6 - victims[0] - victims[1] - victims[2];
                EXPECT_EQ(net.declared_dead(survivor), !runtime)
                    << (hang ? "hangs " : "crashes ") << victims[0] << victims[1] << victims[2]
                    << (runtime ? " with" : " without") << " the runtime";
            }
        }
    }
}

// Half the job, the lowest rank among it, hangs at once: the count says
// "cut off", so the rest hold the failures back from the application until
// the fences are confirmed, then release them and go on.
TEST(Quorum, FailuresAreHeldUntilTheRuntimeConfirmsThem) {
    fake_net net({.size = 4, .quorum = true, .runtime_confirm_ns = 20 * ms});
    net.start_all();
    net.run_until(200 * ms);
    net.hang(0, never);  // observed by 1
    net.hang(2, never);  // observed by 3: both found at once
    // both suspected (by 200 ms + timeout + confirmation + a hop), neither fence confirmed yet
    net.run_until(200 * ms + timeout_ns + confirm_ns + 5 * ms);
    // each reported its own suspect at once (1 of 4) and holds the second
    const auto held = [&](rank_t rank) { return net.failures_seen_by(rank).size() < net.at(rank).dead().size(); };
    EXPECT_TRUE(held(1));
    EXPECT_TRUE(held(3));
    EXPECT_GE(net.at(1).stats().quorum_holds + net.at(3).stats().quorum_holds, 1u);
    net.run_until(1500 * ms);
    EXPECT_FALSE(net.declared_dead(1));
    EXPECT_FALSE(net.declared_dead(3));
    EXPECT_TRUE(net.survivors_agree({0, 2}));
}

TEST(Quorum, ACutOffMinorityStopsWithTheRuntimeOnToo) {
    fake_net net({.size = 8, .quorum = true, .runtime_confirm_ns = 5 * ms});
    net.start_all();
    net.run_until(200 * ms);
    net.cut_off(range(5, 8));
    net.run_until(2000 * ms);
    EXPECT_EQ(stopped_of(net), range(5, 8));
    EXPECT_TRUE(net.survivors_agree(range(5, 8)));
}

// A shrink that every live process answered proves they are all reachable:
// what failed before it counts no more. A smaller shrink proves nothing.
TEST(Quorum, AShrinkOfEveryLiveProcessSettlesTheEpisode) {
    for (const bool whole : {true, false}) {
        fake_net net({.size = 4, .quorum = true});
        net.start_all();
        net.run_until(200 * ms);
        std::vector<rank_t> members = {0, 1, 2, 3};
        for (const rank_t victim : {3u, 2u, 1u}) {
            net.hang(victim, never);
            net.run_for(timeout_ns + 30 * ms);
            std::erase(members, victim);
            if (members.size() > 1) {  // a shrink after each failure but the last
                const std::vector<rank_t> shrunk = whole ? members : std::vector<rank_t>{0};
                for (const rank_t rank : members) net.at(rank).on_shrunk(net.now(), shrunk);
            }
        }
        net.run_for(1000 * ms);
        EXPECT_EQ(net.declared_dead(0), !whole) << (whole ? "whole" : "partial") << " shrinks";
    }
}

// The documented price: half the job crashing at once, the lowest rank
// among them, looks like a partition, and the survivors stop too.
TEST(Quorum, HalfCrashingAtOnceWithTheLowestRankStopsTheRest) {
    fake_net net({.size = 8, .quorum = true});
    net.start_all();
    net.run_until(200 * ms);
    for (const rank_t victim : range(0, 4)) net.crash(victim);
    net.run_until(2000 * ms);
    EXPECT_EQ(stopped_of(net), range(4, 8));
}

}  // namespace
}  // namespace btl_ft::testing
