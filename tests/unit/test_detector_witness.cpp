// Witnesses: an emitter that timed out while its host still runs it is
// given another timeout (until it has been silent for witness_patience); one its
// host sees stopped or gone is declared at the timeout, without waiting out
// the PROBE's window; a witness on another node is asked by message and
// answers only for its own node. The PROBE and the witness go out a window
// before the timeout (confirms_at).
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_net.hpp"
#include "recorder.hpp"

namespace btl_ft::testing {
namespace {

constexpr time_ns timeout_ns = 50 * ms;

// Self 2 of 4, ranks 0-1 on node 0 and 2-3 on node 1 unless told otherwise;
// rank order, so 2 observes 1 and 1 is the emitter under test.
struct observer_2 {
    explicit observer_2(std::vector<std::uint32_t> nodes = {0, 0, 1, 1}) : core(config_with(std::move(nodes)), ring::make_flat(ring_order::rank, 4, 0), io, io) {
        core.start(0);
        core.on_heartbeat_word(1 * ms, heartbeat_word(1, 1));
    }
    static detector_config config_with(std::vector<std::uint32_t> nodes) {
        detector_config config = config_for(4, 2);
        config.node_of_rank = std::make_shared<const std::vector<std::uint32_t>>(std::move(nodes));
        config.witness_patience_ns = 0;  // the least: 4 timeouts
        config.node_grace_ns = 0;        // half a timeout (ASilentNodeGetsTheNodeGrace sets it)
        return config;
    }
    std::vector<std::pair<rank_t, wire::message>> questions() const { return io.sent_of(wire::msg_type::witness, 4); }
    // Ticks at `first` and each timeout after it (and a window later each
    // time), until the emitter is declared or `most` ticks: how many ticks.
    int timeouts_until_declared(time_ns first, int most) {
        int timeouts = 0;
        for (time_ns now = first; io.failed.empty() && timeouts < most; now += timeout_ns) {
            core.tick(now);
            core.tick(now + confirm_ns);
            ++timeouts;
        }
        return timeouts;
    }
    void answer(time_ns now, rank_t from, std::uint32_t round, rank_t subject, process_state seen) {
        std::vector<std::byte> bytes;
        wire::encode_witness_reply(round, subject, seen, {}, bytes);
        EXPECT_TRUE(core.on_message(now, from, bytes));
    }
    static constexpr time_ns timed_out_at = 1 * ms + timeout_ns;
    static constexpr time_ns confirms_at = timed_out_at - confirm_ns;  // the PROBE, a window before
    recorder io;
    detector core;
};

TEST(Witness, AStarvedEmitterOfThisNodeIsKeptForFourTimeoutsOfSilence) {
    observer_2 p({0, 1, 1, 0});  // 1 and 2 share node 1: 2 witnesses itself
    p.io.local.assign(4, process_state::running);
    time_ns now = p.timed_out_at;
    for (std::uint32_t extension = 1; extension <= 3; ++extension) {
        p.core.tick(now);
        EXPECT_EQ(p.core.stats().witnessed_running, extension);
        EXPECT_TRUE(p.io.failed.empty()) << "declared after " << extension << " timeouts";
        now += timeout_ns;
    }
    // Silent while running for four timeouts: only the PROBE decides now.
    p.core.tick(now);
    EXPECT_EQ(p.core.stats().witnessed_running, 3u);
    EXPECT_TRUE(p.io.failed.empty());
    p.core.tick(now + confirm_ns);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});
    EXPECT_TRUE(std::ranges::all_of(p.io.asked_about, [](rank_t rank) { return rank == 1; }));
}

// Seen in about 1,400 runs of two respawn jobs at once on 2 cores
// (δ 50 ms): the observer's own thread got no CPU for about a second, and
// on waking it found its emitter silent past the patience, asked no
// witness and declared the emitter, itself starved, when it missed the
// PROBE's window. The observer's absence is no silence of the emitter's.
TEST(Witness, TimeTheObserverSpentDescheduledIsNoSilenceOfItsEmitter) {
    observer_2 p({0, 1, 1, 0});
    p.io.local.assign(4, process_state::running);
    p.core.tick(p.timed_out_at);
    EXPECT_EQ(p.core.stats().witnessed_running, 1u);
    const auto late_before = p.core.stats().late_wakeups;
    // woken 1.5 s late: far past the patience of four timeouts
    time_ns now = p.timed_out_at + timeout_ns + 1500 * ms;
    p.core.tick(now);
    EXPECT_EQ(p.core.stats().late_wakeups, late_before + 1);
    EXPECT_EQ(p.core.stats().witnessed_running, 2u) << "the witness was not asked after the late wake-up";
    p.core.tick(now + confirm_ns);
    EXPECT_TRUE(p.io.failed.empty());
    // still silent while running, with the observer on time: declared once
    // its silence while the observer was awake reaches the patience (four
    // timeouts; about one of them passed before the absence)
    const int timeouts = p.timeouts_until_declared(now + timeout_ns, 8);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});
    EXPECT_GE(timeouts, 3) << "declared before four timeouts of silence heard awake";
    EXPECT_LE(timeouts, 4);
}

// Seen in about 3,000 runs of the same stress: the emitter's detector
// thread was runnable for over a second and the kernel never ran it. A
// host that sees that answers `starved`: the silence meanwhile is not the
// emitter's, and the patience does not count it.
TEST(Witness, AnEmitterSeenStarvedIsKeptPastThePatience) {
    observer_2 p({0, 1, 1, 0});
    p.io.local.assign(4, process_state::starved);
    EXPECT_EQ(p.timeouts_until_declared(p.timed_out_at, 12), 12);
    EXPECT_TRUE(p.io.failed.empty()) << "a starved emitter was declared past the patience";
    EXPECT_EQ(p.core.stats().witnessed_starved, 12u);
    EXPECT_EQ(p.core.stats().witnessed_running, 12u);
    // Its detector runs now and still sends nothing (wedged): the patience
    // counts from the last look that found it starved.
    p.io.local.assign(4, process_state::running);
    const int timeouts = p.timeouts_until_declared(p.timed_out_at + 12 * timeout_ns, 8);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});
    EXPECT_GE(timeouts, 4) << "declared before four timeouts of silence while it could run";
    EXPECT_LE(timeouts, 5);
}

// A starved span that this process was itself away for is not left out
// twice: the patience would then outlast the silence it excuses.
TEST(Witness, AStarvedSpanOverlappingTheObserversAbsenceIsCountedOnce) {
    observer_2 p({0, 1, 1, 0});
    p.io.local.assign(4, process_state::running);
    p.core.tick(p.timed_out_at);
    // away 1.5 s, and the emitter starved as long (the whole machine)
    p.io.local.assign(4, process_state::starved);
    time_ns now = p.timed_out_at + timeout_ns + 1500 * ms;
    p.core.tick(now);
    p.core.tick(now + confirm_ns);
    EXPECT_EQ(p.core.stats().witnessed_starved, 1u);
    p.io.local.assign(4, process_state::running);
    const int timeouts = p.timeouts_until_declared(now + timeout_ns, 40);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});
    EXPECT_LE(timeouts, 5) << "the absence and the starvation were both left out";
}

// A witness of another node answers `starved` by message, to the same end.
TEST(Witness, AStarvedAnswerFromAnotherNodeKeepsTheEmitter) {
    observer_2 p;  // 1 is on node 0 with 0 only
    time_ns now = p.confirms_at;
    for (int timeouts = 0; timeouts < 12; ++timeouts) {
        p.core.tick(now);
        const auto asked = p.questions();
        ASSERT_FALSE(asked.empty());
        p.answer(now + 1 * ms, 0, asked.back().second.sequence, 1, process_state::starved);
        now += timeout_ns;
        p.core.tick(now - timeout_ns + confirm_ns + 1 * ms);
    }
    EXPECT_TRUE(p.io.failed.empty());
    EXPECT_EQ(p.core.stats().witnessed_starved, 12u);
}

TEST(Witness, AWordResetsTheExtensions) {
    observer_2 p({0, 1, 1, 0});
    p.io.local.assign(4, process_state::running);
    time_ns now = p.timed_out_at;
    p.core.tick(now);
    p.core.tick(now += timeout_ns);
    EXPECT_EQ(p.core.stats().witnessed_running, 2u);
    p.core.on_heartbeat_word(now += 1 * ms, heartbeat_word(1, 2));
    now += timeout_ns;
    for (int i = 0; i < 3; ++i, now += timeout_ns) p.core.tick(now);
    EXPECT_EQ(p.core.stats().witnessed_running, 5u);
    EXPECT_TRUE(p.io.failed.empty());
}

TEST(Witness, AnAnswerToAnEarlierRoundOfTheSameConfirmationCounts) {
    observer_2 p;
    p.core.tick(p.timed_out_at);
    const std::uint32_t first = p.questions().at(0).second.sequence;
    // This observer stalls past its confirmation window: it asks again
    // (a second round) instead of accusing, and then the first answer comes.
    const time_ns late = p.timed_out_at + confirm_ns + timeout_ns / 2;
    p.core.tick(late);
    ASSERT_EQ(p.questions().size(), 2u);
    EXPECT_NE(p.questions().at(1).second.sequence, first);
    EXPECT_TRUE(p.io.failed.empty());
    p.answer(late + 1 * ms, 0, first, 1, process_state::running);
    EXPECT_EQ(p.core.stats().witnessed_running, 1u);
    p.core.tick(late + confirm_ns);
    EXPECT_TRUE(p.io.failed.empty());
}

TEST(Witness, AStoppedOrVanishedEmitterOfThisNodeIsDeclaredAtTheTimeout) {
    for (const process_state seen : {process_state::stopped, process_state::gone}) {
        observer_2 p({0, 1, 1, 0});
        p.io.local.assign(4, seen);
        p.core.tick(p.timed_out_at);
        EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});  // no confirm_ns wait
        EXPECT_EQ(p.io.suspected, std::vector<rank_t>{1});
        EXPECT_EQ(p.core.stats().witnessed_down, 1u);
    }
}

TEST(Witness, AnEmitterOnAnotherNodeIsVouchedForByAProcessOfItsNode) {
    observer_2 p;  // 1 is on node 0 with 0 only
    p.core.tick(p.confirms_at);
    const auto asked = p.questions();
    ASSERT_EQ(asked.size(), 1u);
    EXPECT_EQ(asked[0].first, 0u);
    EXPECT_EQ(asked[0].second.subject, 1u);
    const std::uint32_t round = asked[0].second.sequence;
    // Answers that do not count: from another node, another round, another subject.
    p.answer(p.confirms_at + 1 * ms, 3, round, 1, process_state::running);
    p.answer(p.confirms_at + 1 * ms, 0, round + 1, 1, process_state::running);
    p.answer(p.confirms_at + 1 * ms, 0, round, 3, process_state::running);
    EXPECT_EQ(p.core.stats().witnessed_running, 0u);
    const time_ns answered_at = p.confirms_at + 2 * ms;
    p.answer(answered_at, 0, round, 1, process_state::running);
    EXPECT_EQ(p.core.stats().witnessed_running, 1u);
    // A whole timeout from the answer before the next declaration, so no
    // second PROBE until a window before it.
    for (time_ns now = p.confirms_at + confirm_ns; now < answered_at + timeout_ns - confirm_ns; now += 1 * ms) {
        p.core.tick(now);
    }
    EXPECT_TRUE(p.io.failed.empty());
    EXPECT_EQ(p.core.stats().confirmations, 1u);
    p.core.tick(answered_at + timeout_ns - confirm_ns);
    EXPECT_EQ(p.core.stats().confirmations, 2u);
}

TEST(Witness, AWitnessThatSawItStoppedEndsTheWaitAtOnce) {
    observer_2 p;
    p.core.tick(p.timed_out_at);
    const std::uint32_t round = p.questions().at(0).second.sequence;
    p.answer(p.timed_out_at + 1 * ms, 0, round, 1, process_state::stopped);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});
}

// Asked a window before the timeout, a witness that sees the emitter
// stopped has it declared at the timeout: not before (a stop may end),
// and not a window later.
TEST(Witness, AStopSeenBeforeTheTimeoutIsDeclaredAtTheTimeout) {
    observer_2 p;
    p.core.tick(p.confirms_at);
    const std::uint32_t round = p.questions().at(0).second.sequence;
    p.answer(p.confirms_at + 1 * ms, 0, round, 1, process_state::stopped);
    EXPECT_EQ(p.core.stats().witnessed_down, 1u);
    p.core.tick(p.timed_out_at - 1);
    EXPECT_TRUE(p.io.failed.empty());
    p.core.tick(p.timed_out_at);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});
}

// The same stop, ended before the timeout: a word from the emitter, and
// nobody is declared.
TEST(Witness, AStopThatEndsBeforeTheTimeoutIsForgotten) {
    observer_2 p;
    p.core.tick(p.confirms_at);
    p.answer(p.confirms_at + 1 * ms, 0, p.questions().at(0).second.sequence, 1, process_state::stopped);
    const time_ns heard_at = p.timed_out_at - 2 * ms;
    p.core.on_heartbeat_word(heard_at, heartbeat_word(1, 2));
    for (time_ns now = heard_at + 1 * ms; now < heard_at + timeout_ns - confirm_ns; now += 1 * ms) {
        p.core.tick(now);
    }
    EXPECT_TRUE(p.io.failed.empty());
    EXPECT_EQ(p.core.stats().confirmations, 1u);
}

// Nobody of the emitter's node answers: it may be starved as a whole, so
// it gets the node grace (at least half a timeout) before the declaration.
TEST(Witness, ASilentNodeGetsTheNodeGrace) {
    for (const time_ns grace : {time_ns{0}, timeout_ns / 2, time_ns{BTL_FT_DEFAULT_NODE_GRACE_NS}}) {
        detector_config config = observer_2::config_with({0, 0, 1, 1});
        config.node_grace_ns = grace;
        recorder io;
        detector core(config, ring::make_flat(ring_order::rank, 4, 0), io, io);
        core.start(0);
        core.on_heartbeat_word(1 * ms, heartbeat_word(1, 1));
        const time_ns declared_at = observer_2::timed_out_at + std::max(grace, timeout_ns / 2);
        core.tick(observer_2::confirms_at);
        core.tick(observer_2::timed_out_at);
        core.tick(declared_at - 1);
        EXPECT_TRUE(io.failed.empty()) << "grace " << grace;
        core.tick(declared_at);
        EXPECT_EQ(io.failed, std::vector<rank_t>{1}) << "grace " << grace;
    }
}

// An emitter alone on its node, from the start or once its node-mate
// failed, has nobody there to ask: its silence is its node's, and it gets
// the node grace as a node whose witness answers nothing does (but starts
// no census). Before, the PROBE's window alone decided, and a stall of
// 100 ms (a virtual CPU taken by the host) had it declared after its
// node-mate's stop (netns.spawn_self_2nodes, parent-hang).
TEST(Witness, AnEmitterLeftAloneOnItsNodeGetsTheNodeGrace) {
    for (const bool mate_failed : {false, true}) {
        observer_2 p(mate_failed ? std::vector<std::uint32_t>{0, 0, 1, 1} : std::vector<std::uint32_t>{0, 2, 1, 1});
        if (mate_failed) {
            p.core.report_failure(2 * ms, 0, failure_kind::crashed);
        }
        const time_ns declared_at = p.timed_out_at + timeout_ns / 2;
        p.core.tick(p.confirms_at);
        p.core.tick(p.timed_out_at + confirm_ns);
        p.core.tick(declared_at - 1);
        EXPECT_TRUE(p.questions().empty()) << "mate failed " << mate_failed;
        EXPECT_EQ(p.io.failed, mate_failed ? std::vector<rank_t>{0} : std::vector<rank_t>{})
            << "declared before the grace, mate failed " << mate_failed;
        p.core.tick(declared_at);
        EXPECT_EQ(p.io.failed.back(), 1u) << "mate failed " << mate_failed;
        EXPECT_EQ(p.core.stats().censuses, 0u) << "mate failed " << mate_failed;
    }
}

// The grace is only a wait: an emitter alone on its node that answers the
// PROBE within it, past the PROBE's own window, is kept.
TEST(Witness, AnEmitterAloneOnItsNodeThatAnswersWithinTheGraceIsKept) {
    observer_2 p({0, 2, 1, 1});
    p.core.tick(p.confirms_at);
    const auto probes = p.io.sent_of(wire::msg_type::probe, 4);
    ASSERT_EQ(probes.size(), 1u);
    const time_ns answered_at = p.timed_out_at + timeout_ns / 2 - 1 * ms;
    for (time_ns now = p.timed_out_at; now < answered_at; now += 1 * ms) {
        p.core.tick(now);
    }
    std::array<std::byte, wire::max_probe_reply_bytes> bytes{};
    EXPECT_TRUE(p.core.on_message(answered_at, 1,
                                  wire::encode_probe_reply(probes[0].second.sequence, heartbeat_word(1, 1), bytes)));
    for (time_ns now = answered_at; now <= answered_at + timeout_ns / 2; now += 1 * ms) {
        p.core.tick(now);
    }
    EXPECT_TRUE(p.io.failed.empty());
    EXPECT_EQ(p.core.stats().confirmed_alive, 1u);
}

// A witness that answers "unknown" runs, so its node is not silent: the
// PROBE decides, in its own window, as without witnesses.
TEST(Witness, AnUnknownAnswerLeavesItToTheProbe) {
    observer_2 p;
    p.core.tick(p.timed_out_at);
    p.answer(p.timed_out_at + 1 * ms, 0, p.questions().at(0).second.sequence, 1, process_state::unknown);
    p.core.tick(p.timed_out_at + confirm_ns);
    EXPECT_TRUE(p.io.failed.empty());
    p.core.tick(p.timed_out_at + 1 * ms + confirm_ns);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});
}

TEST(Witness, WithoutNodesNobodyIsAsked) {
    recorder io;
    io.local.assign(4, process_state::running);
    detector core(config_for(4, 2), ring::make_flat(ring_order::rank, 4, 0), io, io);
    core.start(0);
    core.on_heartbeat_word(1 * ms, heartbeat_word(1, 1));
    core.tick(1 * ms + timeout_ns);
    core.tick(1 * ms + timeout_ns + confirm_ns);
    EXPECT_EQ(io.failed, std::vector<rank_t>{1});
    EXPECT_TRUE(io.asked_about.empty());
    EXPECT_TRUE(io.sent_of(wire::msg_type::witness, 4).empty());
}

TEST(Witness, AWitnessAnswersForItsOwnNodeOnly) {
    observer_2 p;  // self 2 shares node 1 with 3 only
    p.io.local.assign(4, process_state::stopped);
    std::array<std::byte, wire::max_witness_bytes> bytes{};
    EXPECT_TRUE(p.core.on_message(2 * ms, 0, wire::encode_witness(9, 3, bytes)));
    EXPECT_TRUE(p.core.on_message(2 * ms, 0, wire::encode_witness(10, 1, bytes)));
    const auto replies = p.io.sent_of(wire::msg_type::witness_reply, 4);
    ASSERT_EQ(replies.size(), 2u);
    EXPECT_EQ(replies[0].first, 0u);
    EXPECT_EQ(replies[0].second.sequence, 9u);
    EXPECT_EQ(replies[0].second.state, process_state::stopped);
    EXPECT_EQ(replies[1].second.state, process_state::unknown);  // 1 is on node 0
    EXPECT_EQ(p.io.asked_about, std::vector<rank_t>{3});
    EXPECT_EQ(p.core.stats().witness_answers, 2u);
}

}  // namespace
}  // namespace btl_ft::testing
