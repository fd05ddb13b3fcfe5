// The quorum rule: after a silent partition only the side with a majority of
// the processes (at exactly half, the side of the lowest rank) goes on; the
// other side stops itself instead of becoming a second set of survivors.
// Each partition test also runs with the rule off, where both sides carry
// on, so the checks can fail. Failures spread over time never stop anyone.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

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
