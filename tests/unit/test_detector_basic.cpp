// The detector over the fake network: quiet steady state, one failure
// detected after about one timeout and reported once everywhere (for each
// propagator), ring mending over consecutive and overlapping failures,
// node-aware rings, small jobs, and clean departures.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_net.hpp"

namespace btl_ft::testing {
namespace {

time_ns latest_report(const fake_net& net) {
    time_ns latest = 0;
    for (rank_t rank = 0; rank < net.size(); ++rank) {
        for (const failure_seen& seen : net.failures_seen_by(rank)) latest = std::max(latest, seen.at);
    }
    return latest;
}

std::uint64_t total_suspicions(fake_net& net) {
    std::uint64_t total = 0;
    for (rank_t rank = 0; rank < net.size(); ++rank) total += net.at(rank).stats().suspicions;
    return total;
}

TEST(Detector, SteadyStateIsQuietAndHeartbeatsEveryPeriod) {
    fake_net net({});
    net.start_all();
    net.run_until(1000 * ms);
    EXPECT_TRUE(net.survivors_agree({}));
    EXPECT_TRUE(net.ring_mended());
    EXPECT_EQ(net.messages_sent(), 0u);  // heartbeats are puts; nothing else is needed
    for (rank_t rank = 0; rank < net.size(); ++rank) {
        EXPECT_NEAR(static_cast<double>(net.at(rank).stats().heartbeats_sent), 101.0, 1.0);
        EXPECT_EQ(net.at(rank).stats().suspicions, 0u);
        EXPECT_EQ(net.at(rank).stats().heartbeats_missed, 0u);
    }
}

class SingleFailure : public ::testing::TestWithParam<std::tuple<propagator_kind, rank_t>> {};

TEST_P(SingleFailure, DetectedAfterAboutOneTimeoutAndReportedOnceEverywhere) {
    const auto [kind, size] = GetParam();
    fake_net net({.size = size, .propagator = kind});
    net.start_all();
    net.run_until(200 * ms);
    net.crash(3);
    net.run_until(700 * ms);
    EXPECT_TRUE(net.survivors_agree({3}));
    EXPECT_TRUE(net.ring_mended());
    EXPECT_EQ(net.at(4).stats().suspicions, 1u);
    EXPECT_EQ(total_suspicions(net), 1u);
    // The last word left 3 at most a period before the crash: detection
    // falls within [crash - period + timeout, crash + timeout + delay], each
    // plus the unanswered confirmation PROBE's window.
    const time_ns detected = net.failures_seen_by(4).at(0).at;
    EXPECT_GE(detected, 200 * ms - 10 * ms + 50 * ms + confirm_ns);
    EXPECT_LE(detected, 200 * ms + 50 * ms + confirm_ns + 1 * ms);
    EXPECT_LE(latest_report(net), detected + 12 * ms);  // a handful of hops
    for (rank_t rank = 0; rank < size; ++rank) {
        if (rank != 3) {
            EXPECT_EQ(net.at(rank).stats().notices_started, rank == 4 ? 1u : 0u);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(EveryPropagator, SingleFailure,
                         ::testing::Combine(::testing::Values(propagator_kind::hba, propagator_kind::bmg,
                                                              propagator_kind::chord),
                                            ::testing::Values(rank_t{8}, rank_t{13}, rank_t{32})));

TEST(Detector, SizeOneIsAloneAndSilent) {
    fake_net net({.size = 1});
    net.start_all();
    net.run_until(500 * ms);
    EXPECT_EQ(net.at(0).emitter(), 0u);
    EXPECT_EQ(net.at(0).observer(), 0u);
    EXPECT_EQ(net.at(0).next_deadline(), never);
    EXPECT_EQ(net.at(0).stats().heartbeats_sent, 0u);
    EXPECT_EQ(net.messages_sent(), 0u);
}

TEST(Detector, SizeTwoSurvivorEndsAlone) {
    fake_net net({.size = 2});
    net.start_all();
    net.run_until(100 * ms);
    EXPECT_EQ(net.at(0).emitter(), 1u);
    EXPECT_EQ(net.at(0).observer(), 1u);
    net.crash(1);
    net.run_until(400 * ms);
    EXPECT_TRUE(net.survivors_agree({1}));
    EXPECT_EQ(net.at(0).emitter(), 0u);
    EXPECT_EQ(net.at(0).observer(), 0u);
    EXPECT_EQ(net.at(0).next_deadline(), never);
}

TEST(Detector, RingMendsOverConsecutiveFailures) {
    fake_net net({.size = 10});
    net.start_all();
    std::vector<rank_t> crashed;
    time_ns at = 200 * ms;
    for (const rank_t victim : {3u, 2u, 4u, 9u, 0u}) {
        net.run_until(at);
        net.crash(victim);
        crashed.push_back(victim);
        at += 200 * ms;
        net.run_until(at);
        EXPECT_TRUE(net.survivors_agree(crashed)) << "after crashing " << victim;
        EXPECT_TRUE(net.ring_mended()) << "after crashing " << victim;
    }
    EXPECT_EQ(net.at(5).emitter(), 1u);
    EXPECT_EQ(net.at(1).observer(), 5u);
}

TEST(Detector, ObserverOfTheFailedFailingToo) {
    // 3 and its observer 4 crash together: 5 suspects 4 after one timeout,
    // mends onto 3 (not known dead), suspects it two timeouts later.
    fake_net net({.size = 9});
    net.start_all();
    net.run_until(200 * ms);
    net.crash(3);
    net.crash(4);
    net.run_until(800 * ms);
    EXPECT_TRUE(net.survivors_agree({3, 4}));
    EXPECT_TRUE(net.ring_mended());
    EXPECT_EQ(net.at(5).stats().suspicions, 2u);
    EXPECT_EQ(net.at(5).emitter(), 2u);
    EXPECT_LE(latest_report(net), 200 * ms + 3 * 50 * ms + 2 * confirm_ns + 15 * ms);
}

TEST(Detector, ObserverFailsWhileAboutToDetect) {
    fake_net net({.size = 9});
    net.start_all();
    net.run_until(200 * ms);
    net.crash(3);
    net.run_until(235 * ms);  // 4 has not suspected 3 yet
    net.crash(4);
    net.run_until(900 * ms);
    EXPECT_TRUE(net.survivors_agree({3, 4}));
    EXPECT_TRUE(net.ring_mended());
}

TEST(Detector, NodeRingDetectsALostNodeInParallel) {
    std::vector<std::uint32_t> blocks;  // ranks 0-3 on node 0, 4-7 on node 1, ...
    for (std::uint32_t rank = 0; rank < 16; ++rank) blocks.push_back(rank / 4);
    const auto lose_node_one = [&](ring_order order, std::uint32_t probe_width) {
        fake_net net({.size = 16, .order = order, .node_of_rank = blocks, .probe_width = probe_width});
        net.start_all();
        net.run_until(200 * ms);
        for (rank_t rank = 4; rank < 8; ++rank) net.crash(rank);
        net.run_until(1500 * ms);
        EXPECT_TRUE(net.survivors_agree({4, 5, 6, 7})) << name_of(order);
        EXPECT_TRUE(net.ring_mended()) << name_of(order);
        return latest_report(net) - 200 * ms;
    };
    const time_ns node_order = lose_node_one(ring_order::node, 4);
    const time_ns rank_order = lose_node_one(ring_order::rank, 4);
    const time_ns rank_order_unprobed = lose_node_one(ring_order::rank, 1);
    EXPECT_LE(node_order, 50 * ms + confirm_ns + 15 * ms);  // four observers elsewhere, in parallel
    // On the rank ring one observer meets the whole row: probing finds it in
    // one 2*timeout step, mending alone in one step per process.
    EXPECT_LE(rank_order, 50 * ms + 2 * 50 * ms + 2 * confirm_ns + 15 * ms);
    EXPECT_GE(rank_order_unprobed, 50 * ms + 3 * 2 * 50 * ms - 10 * ms);
}

TEST(Detector, LeaveIsNeverReportedAsFailure) {
    fake_net net({.size = 8});
    net.start_all();
    net.run_until(200 * ms);
    net.at(3).leave(net.now());
    net.run_until(500 * ms);
    EXPECT_TRUE(net.survivors_agree({}));
    EXPECT_TRUE(net.at(3).stopped());
    EXPECT_EQ(net.at(4).emitter(), 2u);
    EXPECT_EQ(net.at(2).observer(), 4u);
    // Then its neighbours leave one after the other: still no failure.
    net.at(4).leave(net.now());
    net.run_for(100 * ms);
    net.at(2).leave(net.now());
    net.run_until(1000 * ms);
    EXPECT_TRUE(net.survivors_agree({}));
    EXPECT_TRUE(net.ring_mended());
    EXPECT_EQ(net.at(5).emitter(), 1u);
    EXPECT_EQ(total_suspicions(net), 0u);
}

TEST(Detector, NeighboursLeavingAtTheSameInstantAreNotFailures) {
    fake_net net({.size = 8});
    net.start_all();
    net.run_until(200 * ms);
    for (const rank_t rank : {2u, 3u, 4u}) net.at(rank).leave(net.now());
    net.run_until(800 * ms);
    EXPECT_TRUE(net.survivors_agree({}));
    EXPECT_TRUE(net.ring_mended());
    EXPECT_EQ(net.at(5).emitter(), 1u);
}

// In MPI a process that left is gone at once (its transport closes with
// it), so it cannot answer a NEWOBSERVER with its LEAVE as above. A job
// that finalizes while another it is connected to goes on leaves together:
// each names the others, and the observer that stays mends past all.
TEST(Detector, NeighboursLeavingTogetherNameEachOther) {
    for (const bool named : {true, false}) {
        fake_net net({.size = 8});
        net.start_all();
        net.run_until(200 * ms);
        const rank_t together[] = {2u, 3u};
        for (const rank_t rank : together) {
            net.at(rank).leave(net.now(), named ? std::span<const rank_t>(together) : std::span<const rank_t>());
        }
        for (const rank_t rank : together) net.crash(rank);  // gone, and no runtime tells
        net.run_until(1000 * ms);
        if (named) {
            EXPECT_EQ(total_suspicions(net), 0u);
            EXPECT_TRUE(net.survivors_agree({}));
            EXPECT_EQ(net.at(4).emitter(), 1u);
        } else {
            EXPECT_GT(total_suspicions(net), 0u);  // the control: 4 mends onto 2, which never answers
        }
    }
}

TEST(Detector, FailureAfterALeaveSkipsTheDeparted) {
    fake_net net({.size = 8});
    net.start_all();
    net.run_until(200 * ms);
    net.at(3).leave(net.now());
    net.run_until(300 * ms);
    net.crash(4);  // its observer 5 must walk past 4 (failed) and 3 (departed)
    net.run_until(800 * ms);
    EXPECT_TRUE(net.survivors_agree({4}));
    EXPECT_TRUE(net.ring_mended());
    EXPECT_EQ(net.at(5).emitter(), 2u);
}

}  // namespace
}  // namespace btl_ft::testing
