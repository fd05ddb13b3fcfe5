// Parallel probing of the predecessors behind a new emitter: a row of hung
// neighbours is found in one 2*timeout step and one notice, a live new
// emitter makes every probe moot, a slow predecessor answering inside its
// window is never condemned, and a hung row that resumes learns it was
// excluded. Each test fails with probing off (probe_width 1).
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_net.hpp"
#include "recorder.hpp"

namespace btl_ft::testing {
namespace {

constexpr time_ns timeout_ns = 50 * ms;  // fake_net's and config_for's delta

// Ranks `first` .. `first + count - 1` of a rank-ordered ring: observer
// first + count watches the last of them.
std::vector<rank_t> row(rank_t first, rank_t count) {
    std::vector<rank_t> out;
    for (rank_t rank = first; rank < first + count; ++rank) out.push_back(rank);
    return out;
}

// While the row is stopped fake_net still counts it among the living, so
// the others are checked here; survivors_agree() once the row has resumed.
::testing::AssertionResult others_learnt(fake_net& net, const std::vector<rank_t>& victims, time_ns by) {
    for (rank_t rank = 0; rank < net.size(); ++rank) {
        if (std::ranges::find(victims, rank) != victims.end()) continue;
        std::vector<rank_t> learnt;
        for (const failure_seen& seen : net.failures_seen_by(rank)) {
            if (seen.at > by) return ::testing::AssertionFailure() << "rank " << rank << " learnt late of " << seen.rank;
            learnt.push_back(seen.rank);
        }
        std::ranges::sort(learnt);
        if (learnt != victims) return ::testing::AssertionFailure() << "rank " << rank << " learnt " << learnt.size();
    }
    return ::testing::AssertionSuccess();
}

class HungRow : public ::testing::TestWithParam<rank_t> {};

TEST_P(HungRow, IsFoundInOneStepAndOneNotice) {
    const rank_t count = GetParam();
    fake_net net({.size = 16});
    net.start_all();
    net.run_until(200 * ms);
    const time_ns stopped_at = net.now();
    const std::vector<rank_t> victims = row(9 - count, count);  // 9 observes 8, the row's last
    for (const rank_t rank : victims) net.hang(rank, 600 * ms);
    // Suspicion after delta, then one 2*delta window for the whole row, each
    // confirmed by an unanswered PROBE; the slack covers the last word in
    // flight and the notice's hops.
    const time_ns bound = stopped_at + 3 * timeout_ns + 2 * confirm_ns + 10 * ms;
    net.run_until(bound);
    EXPECT_TRUE(others_learnt(net, victims, bound));
    // 8 at its timeout, then the rest of the row together, in one notice.
    EXPECT_EQ(net.at(9).stats().suspicions, 2u);
    EXPECT_EQ(net.at(9).stats().notices_started, 2u);
    EXPECT_EQ(net.at(9).emitter(), 8 - count);
    net.run_until(1'500 * ms);  // the row resumed at 600 ms and read its notices
    for (const rank_t rank : victims) EXPECT_TRUE(net.declared_dead(rank)) << rank;
    EXPECT_TRUE(net.survivors_agree(victims));  // each reported exactly once, everywhere
    EXPECT_TRUE(net.ring_mended());
}

INSTANTIATE_TEST_SUITE_P(Probing, HungRow, ::testing::Values(2u, 3u, 4u));

TEST(Probing, HungRowThatResumesLearnsItWasExcluded) {
    fake_net net({.size = 16});
    net.start_all();
    net.run_until(200 * ms);
    // Resumes after one window: mending one at a time would have reached 5
    // only after it was running again, and kept it.
    for (const rank_t rank : {5u, 6u, 7u}) net.hang(rank, 400 * ms);
    net.run_until(1'000 * ms);
    for (const rank_t rank : {5u, 6u, 7u}) EXPECT_TRUE(net.declared_dead(rank)) << rank;
    EXPECT_TRUE(net.survivors_agree({5, 6, 7}));
    EXPECT_TRUE(net.ring_mended());
}

// One detector driven by hand: self 9 of 16 watches 8; width min(8, log2 16) = 4.
struct observer_9 {
    observer_9() : core(config_for(16, 9), ring::make_flat(ring_order::rank, 16, 0), io, io) {
        core.start(0);
        core.on_heartbeat_word(1 * ms, heartbeat_word(8, 1));
        core.tick(1 * ms + timeout_ns);               // 8 falls silent: PROBEd
        core.tick(1 * ms + timeout_ns + confirm_ns);  // no answer: suspected, mend to 7
    }
    void reply(time_ns now, rank_t from, std::uint32_t round) {
        std::array<std::byte, wire::max_probe_reply_bytes> bytes{};
        EXPECT_TRUE(core.on_message(now, from, wire::encode_probe_reply(round, heartbeat_word(from, 3), bytes)));
    }
    std::uint32_t round_sent_to(rank_t rank) const {
        for (const auto& [to, msg] : io.sent_of(wire::msg_type::probe, 16)) {
            if (to == rank) return msg.sequence;
        }
        ADD_FAILURE() << "no probe to " << rank;
        return 0;
    }
    static constexpr time_ns mended_at = 1 * ms + timeout_ns + confirm_ns;
    recorder io;
    detector core;
};

TEST(Probing, MendingProbesThePredecessorsBehindTheNewEmitter) {
    observer_9 p;
    EXPECT_EQ(p.core.emitter(), 7u);
    std::vector<rank_t> probed;
    for (const auto& [to, msg] : p.io.sent_of(wire::msg_type::probe, 16)) probed.push_back(to);
    EXPECT_EQ(probed, (std::vector<rank_t>{8, 6, 5, 4}));  // 8: the confirmation
    EXPECT_EQ(p.core.stats().probes_sent, 3u);
    EXPECT_EQ(p.core.stats().confirmations, 1u);
}

TEST(Probing, ALiveNewEmitterMakesEveryProbeMoot) {
    observer_9 p;
    time_ns now = p.mended_at;
    for (std::uint32_t sequence = 5; now < p.mended_at + 3 * timeout_ns; ++sequence) {
        now += 10 * ms;
        p.core.on_heartbeat_word(now, heartbeat_word(7, sequence));
        p.core.tick(now);
    }
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{8});  // the probes' windows closed unanswered
    EXPECT_EQ(p.core.emitter(), 7u);
    // When 7 dies later, its predecessors are not condemned on old probes.
    p.core.tick(now + timeout_ns);
    p.core.tick(now + timeout_ns + confirm_ns);
    EXPECT_EQ(p.io.failed, (std::vector<rank_t>{8, 7}));
    EXPECT_EQ(p.core.emitter(), 6u);
    EXPECT_EQ(p.core.stats().probes_sent, 3u + 3u);  // forgotten, so 5, 4 and 3 are asked afresh
}

TEST(Probing, SlowPredecessorAnsweringInsideItsWindowIsKept) {
    observer_9 p;
    // 7 and 6 stay silent; 5 answers just before its window closes.
    p.reply(p.mended_at + 2 * timeout_ns - 1, 5, p.round_sent_to(5));
    p.core.tick(p.mended_at + 2 * timeout_ns);
    p.core.tick(p.mended_at + 2 * timeout_ns + confirm_ns);
    EXPECT_EQ(p.io.failed, (std::vector<rank_t>{8, 7, 6}));
    EXPECT_EQ(p.core.emitter(), 5u);
    EXPECT_EQ(p.io.sent_of(wire::msg_type::new_observer, 16).back().first, 5u);
    // 5 has a fresh 2*timeout from the step
    p.core.tick(p.mended_at + 2 * timeout_ns + confirm_ns + 2 * timeout_ns - 1);
    EXPECT_EQ(p.core.stats().suspicions, 2u);
    const auto notices = p.io.sent_of(wire::msg_type::notice, 16);
    EXPECT_EQ(p.core.stats().notices_started, 2u);  // 8 alone, then 7 and 6 together
    EXPECT_EQ(notices.back().second.failed, (std::vector<rank_t>{6, 7, 8}));
}

TEST(Probing, RepliesOfAnotherRoundOrRankCountForNothing) {
    observer_9 p;
    p.reply(p.mended_at + 1 * ms, 6, p.round_sent_to(6) + 1);  // a round 6 was never asked
    p.reply(p.mended_at + 1 * ms, 3, p.round_sent_to(5));       // never probed
    std::array<std::byte, wire::max_probe_reply_bytes> bytes{};
    EXPECT_FALSE(p.core.on_message(p.mended_at + 1 * ms, 6,
                                   wire::encode_probe_reply(p.round_sent_to(6), heartbeat_word(5, 3), bytes)));
    EXPECT_EQ(p.core.stats().malformed_dropped, 1u);  // a reply forging another rank's word
    EXPECT_EQ(p.core.stats().stale_heartbeats, 0u);   // replies are never heartbeat words
    p.core.tick(p.mended_at + 2 * timeout_ns);
    p.core.tick(p.mended_at + 2 * timeout_ns + confirm_ns);
    EXPECT_EQ(p.io.failed, (std::vector<rank_t>{8, 7, 6, 5, 4}));
    EXPECT_EQ(p.core.emitter(), 3u);
}

TEST(Probing, AProcessAnswersAProbeWithItsWordAndALeftOneWithLeave) {
    recorder io;
    detector core(config_for(8, 2), ring::make_flat(ring_order::rank, 8, 0), io, io);
    core.start(0);
    std::array<std::byte, wire::max_probe_bytes> probe{};
    EXPECT_TRUE(core.on_message(1 * ms, 5, wire::encode_probe(42, probe)));
    const auto replies = io.sent_of(wire::msg_type::probe_reply, 8);
    ASSERT_EQ(replies.size(), 1u);
    EXPECT_EQ(replies[0].first, 5u);
    EXPECT_EQ(replies[0].second.sequence, 42u);
    EXPECT_EQ(replies[0].second.word, heartbeat_word(2, 1));
    core.leave(2 * ms);
    core.on_message(3 * ms, 6, wire::encode_probe(43, probe));
    const auto leaves = io.sent_of(wire::msg_type::leave, 8);
    ASSERT_FALSE(leaves.empty());
    EXPECT_EQ(leaves.back().first, 6u);
}

TEST(Probing, WidthIsConfigurableAndBounded) {
    detector_config config = config_for(16, 9);
    config.probe_width = 0;
    EXPECT_NE(config_error(config).find("probe_width"), std::string::npos);
    config.probe_width = max_probe_width + 1;
    EXPECT_NE(config_error(config).find("probe_width"), std::string::npos);
    config.probe_width = 1;  // off: plain Algorithm 1
    EXPECT_EQ(config_error(config), "");
    recorder io;
    detector core(config, ring::make_flat(ring_order::rank, 16, 0), io, io);
    core.start(0);
    core.tick(1'000 * ms);
    core.tick(1'000 * ms + confirm_ns);
    EXPECT_EQ(core.stats().probes_sent, 0u);
    EXPECT_GT(core.stats().suspicions, 0u);
}

}  // namespace
}  // namespace btl_ft::testing
