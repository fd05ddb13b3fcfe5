// The detector under faults and odd input: failures learnt elsewhere, false
// suspicion, notices naming self, processes that talk after being declared
// dead, stale and missing heartbeat words, malformed input, and the direct
// fallback when a skip set no longer fits in one message. Single-detector
// tests drive one detector by hand through a recorder.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_net.hpp"
#include "recorder.hpp"

namespace btl_ft::testing {
namespace {

struct probe {
    explicit probe(rank_t size, rank_t self, detector_config config = {})
        : core(config.size == 0 ? config_for(size, self) : config, ring::make_flat(ring_order::rank, size, 0), io, io) {}
    recorder io;
    detector core;
};

TEST(DetectorFaults, ReportFailureSpreadsBeforeAnyTimeoutAndMendsAtOnce) {
    fake_net net({.size = 12});
    net.start_all();
    net.run_until(200 * ms);
    net.crash(5);
    net.at(0).report_failure(net.now(), 5);
    net.run_until(220 * ms);  // well before the 50 ms timeout
    EXPECT_TRUE(net.survivors_agree({5}));
    EXPECT_EQ(net.at(6).emitter(), 4u);
    net.run_until(600 * ms);
    EXPECT_TRUE(net.survivors_agree({5}));
    EXPECT_TRUE(net.ring_mended());
    EXPECT_EQ(net.at(6).stats().suspicions, 0u);  // it never had to time out
}

// The crash path (#18): the first process the runtime tells starts the
// notice, and every survivor learns within a few message delays, no
// timeout involved, that it was a crash, not a hang.
TEST(DetectorFaults, ACrashTheRuntimeReportsToOneProcessReachesEveryoneAsACrash) {
    fake_net net({.size = 12});
    net.start_all();
    net.run_until(200 * ms);
    net.crash(5);
    net.at(9).report_failure(net.now(), 5, failure_kind::crashed);
    net.run_until(205 * ms);  // ceil(log2 12) hops of at most 1 ms each, and some
    EXPECT_TRUE(net.survivors_agree({5}));
    for (rank_t rank = 0; rank < net.size(); ++rank) {
        if (rank != 5) {
            EXPECT_EQ(net.at(rank).kind_of(5), failure_kind::crashed) << rank;
        }
    }
    // one that learns of a failure from a transport error says so, and so
    // does everyone its notice reaches: a transport error is not a hang
    net.crash(7);
    net.at(2).report_failure(net.now(), 7, failure_kind::unreachable);
    EXPECT_EQ(net.at(2).kind_of(7), failure_kind::unreachable);
    net.run_until(net.now() + 5 * ms);
    EXPECT_TRUE(net.survivors_agree({5, 7}));
    for (rank_t rank = 0; rank < net.size(); ++rank) {
        if (rank != 5 && rank != 7) {
            EXPECT_EQ(net.at(rank).kind_of(7), failure_kind::unreachable) << rank;
        }
    }
}

TEST(DetectorFaults, ReportFailureEverywhereCostsOneFloodNotOnePerProcess) {
    fake_net net({.size = 32});
    net.start_all();
    net.run_until(200 * ms);
    net.crash(9);
    for (rank_t rank = 0; rank < 32; ++rank) {
        if (rank != 9) net.at(rank).report_failure(net.now(), 9);
    }
    net.run_until(240 * ms);
    EXPECT_TRUE(net.survivors_agree({9}));
    // Each process starts its own notice but forwards none (nothing new).
    std::uint64_t forwarded = 0;
    for (rank_t rank = 0; rank < 32; ++rank) {
        if (rank == 9) continue;
        forwarded += net.at(rank).stats().notice_messages_sent;
        EXPECT_EQ(net.at(rank).stats().notices_received, net.at(rank).stats().notices_duplicate);
    }
    EXPECT_LT(forwarded, 31u * 12u);  // ~2 log n each, started; a flood per process would be 31x more
}

// Node-mates killed together are found in one look (the node watch passes
// from one ended process to the next): one notice names them all, where a
// call each sends a wave of notices per failure.
TEST(DetectorFaults, FailuresReportedTogetherTakeOneNotice) {
    const auto notice_messages = [](fake_net& net) {
        std::uint64_t sent = 0;
        for (rank_t rank = 0; rank < net.size(); ++rank) {
            sent += net.at(rank).stats().notice_messages_sent;
        }
        return sent;
    };
    fake_net together({.size = 16});
    fake_net one_by_one({.size = 16});
    for (fake_net* net : {&together, &one_by_one}) {
        net->start_all();
        net->run_until(200 * ms);
        net->crash(4);
        net->crash(5);
    }
    const detector::failure_report both[] = {{4, failure_kind::crashed}, {5, failure_kind::crashed}};
    together.at(3).report_failures(together.now(), both);
    one_by_one.at(3).report_failure(one_by_one.now(), 4, failure_kind::crashed);
    one_by_one.at(3).report_failure(one_by_one.now(), 5, failure_kind::crashed);
    EXPECT_EQ(together.at(3).stats().notices_started, 1u);
    EXPECT_EQ(one_by_one.at(3).stats().notices_started, 2u);
    for (fake_net* net : {&together, &one_by_one}) {
        net->run_until(210 * ms);
        EXPECT_TRUE(net->survivors_agree({4, 5}));
        for (rank_t rank = 0; rank < net->size(); ++rank) {
            if (rank != 4 && rank != 5) {
                EXPECT_EQ(net->at(rank).kind_of(5), failure_kind::crashed) << rank;
            }
        }
    }
    EXPECT_LT(notice_messages(together), notice_messages(one_by_one));
    // a report naming this process or a rank out of range is skipped, not the batch
    fake_net net({.size = 8});
    net.start_all();
    net.run_until(200 * ms);
    net.crash(6);
    const detector::failure_report odd[] = {{2, failure_kind::crashed}, {99, failure_kind::crashed},
                                            {6, failure_kind::crashed}};
    net.at(2).report_failures(net.now(), odd);
    net.run_until(210 * ms);
    EXPECT_TRUE(net.survivors_agree({6}));
}

TEST(DetectorFaults, FalseSuspicionStopsTheSuspectOnly) {
    fake_net net({.size = 8});
    net.start_all();
    net.run_until(200 * ms);
    net.hang(3, 400 * ms);  // SIGSTOP for four timeouts
    net.run_until(900 * ms);
    EXPECT_TRUE(net.declared_dead(3));
    EXPECT_TRUE(net.at(3).stopped());
    EXPECT_TRUE(net.survivors_agree({3}));
    EXPECT_TRUE(net.ring_mended());
}

TEST(DetectorFaults, NoticeNamingSelfStops) {
    probe p(8, 2);
    p.core.start(0);
    p.core.on_message(1 * ms, 5, notice_bytes(5, 1, {2, 6}));
    EXPECT_TRUE(p.io.declared);
    EXPECT_EQ(p.io.told_by, 5u);
    EXPECT_TRUE(p.core.stopped());
    EXPECT_TRUE(p.io.failed.empty());  // it stops before reporting anything
    const auto sent_before = p.io.messages.size() + p.io.words.size();
    p.core.on_heartbeat_word(2 * ms, heartbeat_word(1, 9));
    EXPECT_EQ(p.core.tick(500 * ms), never);
    EXPECT_EQ(p.io.messages.size() + p.io.words.size(), sent_before);
}

TEST(DetectorFaults, DeclaredDeadMessageStops) {
    probe p(8, 2);
    p.core.start(0);
    EXPECT_TRUE(p.core.on_message(1 * ms, 7, wire::encode_declared_dead()));
    EXPECT_TRUE(p.io.declared);
    EXPECT_EQ(p.io.told_by, 7u);
    EXPECT_TRUE(p.core.stopped());
}

TEST(DetectorFaults, ProcessTalkingAfterBeingDeclaredDeadIsToldOnce) {
    probe p(8, 2);
    p.core.start(0);
    p.core.on_message(1 * ms, 4, notice_bytes(4, 1, {6}));
    ASSERT_EQ(p.io.failed, std::vector<rank_t>{6});
    const auto tells = [&] { return p.io.sent_of(wire::msg_type::declared_dead, 8).size(); };
    EXPECT_EQ(tells(), 0u);
    p.core.on_message(2 * ms, 6, notice_bytes(6, 1, {0}));  // ignored: 0 is not reported
    std::vector<std::byte> new_observer;
    wire::encode_new_observer({}, new_observer);
    p.core.on_message(3 * ms, 6, new_observer);
    p.core.on_heartbeat_word(4 * ms, heartbeat_word(6, 3));
    EXPECT_EQ(tells(), 1u);
    EXPECT_EQ(p.io.sent_of(wire::msg_type::declared_dead, 8).at(0).first, 6u);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{6});
    EXPECT_EQ(p.core.observer(), 3u);  // the NEWOBSERVER from 6 was not obeyed
}

TEST(DetectorFaults, StaleAndMissedWordsAreCounted) {
    probe p(8, 2);
    p.core.start(0);
    p.core.on_heartbeat_word(1 * ms, heartbeat_word(1, 1));
    p.core.on_heartbeat_word(2 * ms, heartbeat_word(1, 1));  // same word again: not new, not stale
    p.core.on_heartbeat_word(31 * ms, heartbeat_word(1, 4));  // 2 and 3 never seen
    EXPECT_EQ(p.core.stats().heartbeats_missed, 2u);
    p.core.on_heartbeat_word(32 * ms, heartbeat_word(0, 7));  // not our emitter
    EXPECT_EQ(p.core.stats().stale_heartbeats, 1u);
    EXPECT_EQ(p.core.stats().suspicions, 0u);
    // The deadline follows the last new word from the emitter: a PROBE one
    // window before it, and the suspicion at it when the PROBE is unanswered.
    p.core.tick(31 * ms + 50 * ms - confirm_ns - 1);
    EXPECT_EQ(p.core.stats().confirmations, 0u);
    p.core.tick(31 * ms + 50 * ms - confirm_ns);
    EXPECT_EQ(p.core.stats().confirmations, 1u);
    p.core.tick(31 * ms + 50 * ms - 1);
    EXPECT_EQ(p.core.stats().suspicions, 0u);
    p.core.tick(31 * ms + 50 * ms);
    EXPECT_EQ(p.core.stats().suspicions, 1u);
    EXPECT_EQ(p.core.emitter(), 0u);
}

TEST(DetectorFaults, SequenceWrapIsNotAGap) {
    probe p(4, 2);
    p.core.start(0);
    p.core.on_heartbeat_word(1 * ms, heartbeat_word(1, 0xffffffffu));
    p.core.on_heartbeat_word(2 * ms, heartbeat_word(1, 1));  // 0 is skipped by emitters
    EXPECT_EQ(p.core.stats().heartbeats_missed, 1u);
    p.core.on_heartbeat_word(3 * ms, heartbeat_word(1, 0xfffffff0u));  // older: proof of life, no gap
    EXPECT_EQ(p.core.stats().heartbeats_missed, 1u);
}

TEST(DetectorFaults, FirstHeartbeatGetsGracePlusTwoTimeouts) {
    detector_config unprobed = config_for(4, 2);
    unprobed.probe_width = 1;  // one predecessor at a time, as in Algorithm 1
    probe p(4, 2, unprobed);
    p.core.start(100 * ms);
    EXPECT_EQ(p.io.words.size(), 1u);  // the first heartbeat goes out at start
    EXPECT_EQ(p.io.words.at(0), std::make_pair(3u, heartbeat_word(2, 1)));
    p.core.tick(100 * ms + 20 * ms + 100 * ms - confirm_ns - 1);
    EXPECT_EQ(p.core.stats().confirmations, 0u);
    p.core.tick(100 * ms + 20 * ms + 100 * ms - confirm_ns);
    p.core.tick(100 * ms + 20 * ms + 100 * ms - 1);
    EXPECT_EQ(p.core.stats().suspicions, 0u);
    p.core.tick(100 * ms + 20 * ms + 100 * ms);
    EXPECT_EQ(p.core.stats().suspicions, 1u);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});
    // FindEmitter skips 1; NEWOBSERVER goes to 0 carrying our flag handle,
    // and 0 gets two timeouts.
    const auto claims = p.io.sent_of(wire::msg_type::new_observer, 4);
    ASSERT_EQ(claims.size(), 1u);
    EXPECT_EQ(claims.at(0).first, 0u);
    EXPECT_EQ(p.core.emitter(), 0u);
    const time_ns mended_at = 220 * ms;
    p.core.tick(mended_at + 100 * ms - confirm_ns - 1);
    EXPECT_EQ(p.core.stats().confirmations, 1u);
    p.core.tick(mended_at + 100 * ms - confirm_ns);
    p.core.tick(mended_at + 100 * ms);
    EXPECT_EQ(p.core.stats().suspicions, 2u);
    EXPECT_EQ(p.core.emitter(), 3u);
}

// The shim fences exactly what this process declared failed itself: its
// timed-out emitter and the silent probed predecessors, never what it heard.
TEST(DetectorFaults, OnlyWhatThisProcessObservedIsReportedAsSuspected) {
    probe p(8, 4);
    p.core.start(0);
    p.core.report_failure(1 * ms, 6);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{6});
    EXPECT_TRUE(p.io.suspected.empty());
    p.core.tick(20 * ms + 100 * ms);  // grace + 2 timeouts: emitter 3 never spoke
    p.core.tick(20 * ms + 100 * ms + confirm_ns);  // nor answered the PROBE
    EXPECT_EQ(p.io.suspected, std::vector<rank_t>{3});
    EXPECT_EQ(p.io.failed, (std::vector<rank_t>{6, 3}));
}

// A report that names this process's emitter (a transport error, say) is
// fenced here: this process is the one that observes it.
TEST(DetectorFaults, AReportNamingTheEmitterIsFencedHere) {
    probe p(8, 4);
    p.core.start(0);
    ASSERT_EQ(p.core.emitter(), 3u);
    p.core.report_failure(1 * ms, 3, failure_kind::unreachable);
    EXPECT_EQ(p.io.suspected, std::vector<rank_t>{3});
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{3});
    p.core.report_failure(2 * ms, 6, failure_kind::unreachable);  // not observed here
    EXPECT_EQ(p.io.suspected, std::vector<rank_t>{3});
}

// A crash names a process that is gone (the runtime or its node saw it
// end): even its observer has nothing to fence.
TEST(DetectorFaults, ACrashOfTheEmitterIsNotFenced) {
    probe p(8, 4);
    p.core.start(0);
    ASSERT_EQ(p.core.emitter(), 3u);
    p.core.report_failure(1 * ms, 3, failure_kind::crashed);
    EXPECT_TRUE(p.io.suspected.empty());
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{3});
}

// Without a one-sided path to its observer, the heartbeat goes as a
// HEARTBEAT message (which the observer checks like any other message).
TEST(DetectorFaults, AHeartbeatWithoutAPutPathIsSentAsAMessage) {
    probe p(8, 4);
    p.io.puts_work = false;
    p.core.start(0);
    p.core.tick(10 * ms);
    const auto beats = p.io.sent_of(wire::msg_type::heartbeat, 8);
    ASSERT_EQ(beats.size(), p.io.words.size());
    ASSERT_GE(beats.size(), 2u);
    for (std::size_t i = 0; i < beats.size(); ++i) {
        EXPECT_EQ(beats[i].first, p.core.observer());
        EXPECT_EQ(beats[i].second.word, p.io.words[i].second);
    }
    p.io.puts_work = true;
    p.core.tick(20 * ms);
    EXPECT_EQ(p.io.sent_of(wire::msg_type::heartbeat, 8).size(), beats.size());  // put, not sent
}

TEST(DetectorFaults, NewObserverGetsAHeartbeatAtOnceAndTheHandle) {
    const std::vector<std::byte> handle = {std::byte{9}, std::byte{8}, std::byte{7}};
    probe p(8, 2);
    p.core.start(0);
    std::vector<std::byte> claim;
    wire::encode_new_observer(handle, claim);
    p.core.on_message(5 * ms, 4, claim);
    EXPECT_EQ(p.core.observer(), 4u);
    EXPECT_EQ(p.io.handle_from, 4u);
    EXPECT_EQ(p.io.observer_handle, handle);
    EXPECT_EQ(p.io.words.back(), std::make_pair(4u, heartbeat_word(2, 2)));
    EXPECT_EQ(p.core.next_deadline(), 15 * ms);
}

TEST(DetectorFaults, MalformedAndForeignInputIsDroppedAndCounted) {
    probe p(8, 2);
    p.core.start(0);
    const std::vector<std::byte> junk = {std::byte{1}, std::byte{2}};
    EXPECT_FALSE(p.core.on_message(1, 3, junk));
    EXPECT_FALSE(p.core.on_message(1, 99, wire::encode_declared_dead()));  // no such rank
    EXPECT_FALSE(p.core.on_message(1, 2, wire::encode_declared_dead()));   // from self
    EXPECT_FALSE(p.core.on_message(1, 1, wire::encode_heartbeat(heartbeat_word(5, 1))));  // forged emitter
    EXPECT_FALSE(p.core.on_message(1, 3, notice_bytes(3, 1, {100})));  // rank out of range
    EXPECT_EQ(p.core.stats().malformed_dropped, 5u);
    EXPECT_FALSE(p.core.stopped());
    EXPECT_TRUE(p.core.on_message(1, 1, wire::encode_heartbeat(heartbeat_word(1, 1))));
}

TEST(DetectorFaults, NoticeIsForwardedOnceAlongTheOverlayInTheMessage) {
    probe p(16, 5, config_for(16, 5, propagator_kind::chord));  // our own config differs: the message wins
    p.core.start(0);
    EXPECT_TRUE(p.core.on_message(1 * ms, 0, notice_bytes(0, 1, {9}, {}, wire::notice_mode::hba, 1 + 0)));
    const auto forwarded = p.io.sent_of(wire::msg_type::notice, 16);
    std::vector<hop> expected;
    const dead_set skip({9});
    overlay_hops({propagator_kind::hba, 16, 0, skip}, 5, 1, expected);
    ASSERT_EQ(forwarded.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(forwarded[i].first, expected[i].target);
        EXPECT_EQ(forwarded[i].second.route, expected[i].route);
        EXPECT_EQ(forwarded[i].second.failed, std::vector<rank_t>{9});
        EXPECT_EQ(forwarded[i].second.source, 0u);
    }
    p.core.on_message(2 * ms, 3, notice_bytes(0, 1, {9}, {}, wire::notice_mode::hba, 1 + 1));  // a copy
    p.core.on_message(3 * ms, 7, notice_bytes(7, 4, {9}));  // another source, nothing new
    EXPECT_EQ(p.io.sent_of(wire::msg_type::notice, 16).size(), expected.size());
    EXPECT_EQ(p.core.stats().notices_duplicate, 2u);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{9});
}

TEST(DetectorFaults, SkipSetTooLargeFallsBackToDirectNotices) {
    fake_net net({.size = 200, .max_message_bytes = 128});
    net.start_all();
    net.run_until(100 * ms);
    std::vector<rank_t> victims;
    for (rank_t rank = 20; rank < 170; ++rank) victims.push_back(rank);
    for (const rank_t rank : victims) net.crash(rank);
    for (const rank_t rank : victims) net.at(0).report_failure(net.now(), rank);
    net.run_until(400 * ms);
    EXPECT_TRUE(net.survivors_agree(victims));
    EXPECT_TRUE(net.ring_mended());
    // The last notices could not carry 150 ranks in 128 bytes: they went
    // straight to all 49 others, in chunks.
    EXPECT_GT(net.at(0).stats().notice_messages_sent, 49u * 2u);
}

TEST(DetectorFaults, DirectNoticeChunksCarryEverythingToEveryone) {
    detector_config config = config_for(300, 0);
    config.max_message_bytes = 128;
    probe p(300, 0, config);
    p.core.start(0);
    for (rank_t rank = 1; rank < 300; rank += 2) p.core.report_failure(1 * ms, rank);  // 150 failures
    p.io.messages.clear();
    p.core.report_failure(2 * ms, 2);
    std::vector<std::vector<rank_t>> got(300);
    for (const auto& [to, msg] : p.io.sent_of(wire::msg_type::notice, 300)) {
        EXPECT_EQ(msg.mode, wire::notice_mode::direct);
        got[to].insert(got[to].end(), msg.failed.begin(), msg.failed.end());
    }
    for (const auto& one : p.io.messages) EXPECT_LE(one.bytes.size(), 128u);
    const auto dead = p.core.dead().ranks();
    for (rank_t rank = 4; rank < 300; rank += 2) {
        std::sort(got[rank].begin(), got[rank].end());
        ASSERT_TRUE(std::ranges::equal(got[rank], dead)) << "rank " << rank;
    }
    EXPECT_TRUE(got[1].empty());  // dead ranks get nothing
}

TEST(DetectorFaults, CallbacksMustNotReenter) {
    struct reentrant final : transport, sink {
        detector* core = nullptr;
        bool put_heartbeat(rank_t, std::uint64_t) override {
            core->tick(0);
            return true;
        }
        void send(rank_t, std::span<const std::byte>) override {}
        void on_failed(std::span<const rank_t>) override {}
        void on_declared_dead_self(rank_t, const char*) override {}
    } io;
    detector core(config_for(4, 0), ring::make_flat(ring_order::rank, 4, 0), io, io);
    io.core = &core;
    EXPECT_DEATH(core.start(0), "called back into the detector");
}

}  // namespace
}  // namespace btl_ft::testing

namespace btl_ft::testing {
namespace {

// The RDMA key of an observer must reach its first emitter at start, not
// only after a mending: without it every heartbeat of a failure-free job
// travels as an active message (seen in the MPI put-path test).
TEST(DetectorStart, ObserverRegistersItsFlagHandleWithItsFirstEmitter) {
    const std::vector<std::byte> handle{std::byte{0xab}, std::byte{0xcd}};
    detector_config observer_config = config_for(4, 2);
    observer_config.flag_handle = handle;
    probe observer(4, 2, observer_config);
    probe emitter(4, 1);
    observer.core.start(0);
    const auto sent = observer.io.sent_of(wire::msg_type::new_observer, 4);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].first, 1u);
    emitter.core.start(0);
    for (const auto& one : observer.io.messages) emitter.core.on_message(1 * ms, 2, one.bytes);
    EXPECT_EQ(emitter.io.handle_from, 2u);
    EXPECT_EQ(emitter.io.observer_handle, handle);
    EXPECT_EQ(emitter.core.observer(), 2u);
}

TEST(DetectorStart, WithoutAHandleStartSendsNoMessage) {
    probe observer(4, 2);
    observer.core.start(0);
    EXPECT_TRUE(observer.io.messages.empty());
}

}  // namespace
}  // namespace btl_ft::testing

namespace btl_ft::testing {
namespace {

// 3's words to its observer 4 are lost for 200 ms (4 timeouts) while 3
// runs: 4 PROBEs it at each timeout, 3 answers, and nobody is declared
// failed. Each answer after a long silence is a close call, counted.
TEST(DetectorConfirm, AnEmitterThatAnswersItsProbeIsKept) {
    fake_net net({.size = 8});
    net.start_all();
    net.run_until(200 * ms);
    net.lose_words_to(4, 400 * ms);
    net.run_until(1000 * ms);
    EXPECT_TRUE(net.survivors_agree({}));
    for (rank_t rank = 0; rank < net.size(); ++rank) EXPECT_EQ(net.at(rank).stats().suspicions, 0u) << rank;
    EXPECT_GE(net.at(4).stats().confirmed_alive, 3u);
    EXPECT_GE(net.at(4).stats().close_calls, 3u);
    EXPECT_EQ(net.at(4).emitter(), 3u);
}

// A process that ran far past its deadline (descheduled, stopped) PROBEs
// its emitter afresh before accusing it, once.
TEST(DetectorConfirm, ALateObserverAsksAgainBeforeAccusing) {
    probe p(8, 2);
    p.core.start(0);
    p.core.on_heartbeat_word(1 * ms, heartbeat_word(1, 1));
    for (time_ns now = 10 * ms; now <= 50 * ms; now += 10 * ms) p.core.tick(now);  // heartbeats, on time
    p.core.tick(51 * ms);  // on time: PROBE 1
    EXPECT_EQ(p.core.stats().confirmations, 1u);
    EXPECT_EQ(p.core.stats().late_wakeups, 0u);
    p.core.tick(200 * ms);  // far past the window: this process was late
    EXPECT_EQ(p.core.stats().late_wakeups, 1u);
    EXPECT_EQ(p.core.stats().confirmations, 2u);
    EXPECT_EQ(p.core.stats().suspicions, 0u);
    std::array<std::byte, wire::max_probe_reply_bytes> bytes{};
    const std::uint32_t round = p.io.sent_of(wire::msg_type::probe, 8).back().second.sequence;
    p.core.on_message(201 * ms, 1, wire::encode_probe_reply(round, heartbeat_word(1, 9), bytes));
    EXPECT_EQ(p.core.stats().confirmed_alive, 1u);
    p.core.tick(300 * ms);  // a fresh silence: PROBE
    p.core.tick(400 * ms);  // late while asking: once more
    EXPECT_EQ(p.core.stats().suspicions, 0u);
    p.core.tick(500 * ms);  // late again while asking a second time: accused
    EXPECT_EQ(p.core.stats().suspicions, 1u);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});
}

// An emitter whose host answers only every so often (the MPI driver while
// the application computes) is given that long to answer the PROBE: 30 ms
// here, past the default window of 10 ms (a fifth of the timeout). The
// PROBE goes out that much earlier; the declaration stays at the timeout.
TEST(DetectorConfirm, TheWindowCoversHowLongTheHostTakesToAnswer) {
    for (const time_ns answer_within : {time_ns{0}, 30 * ms}) {
        detector_config config = config_for(8, 2);
        config.answer_within_ns = answer_within;
        probe p(8, 2, config);
        p.core.start(0);
        p.core.on_heartbeat_word(1 * ms, heartbeat_word(1, 1));
        const time_ns probe_at = 1 * ms + 50 * ms - (answer_within == 0 ? confirm_ns : answer_within);
        EXPECT_EQ(config.confirm_lead(), 51 * ms - probe_at);
        p.core.tick(probe_at - 1);
        ASSERT_EQ(p.core.stats().confirmations, 0u);
        p.core.tick(probe_at);
        ASSERT_EQ(p.core.stats().confirmations, 1u);
        p.core.tick(probe_at + 11 * ms);  // past the default window
        const std::uint32_t round = p.io.sent_of(wire::msg_type::probe, 8).back().second.sequence;
        std::array<std::byte, wire::max_probe_reply_bytes> bytes{};
        p.core.on_message(probe_at + 25 * ms, 1, wire::encode_probe_reply(round, heartbeat_word(1, 6), bytes));
        if (answer_within == 0) {
            EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});
        } else {
            EXPECT_TRUE(p.io.failed.empty());
            EXPECT_EQ(p.core.stats().confirmed_alive, 1u);
            EXPECT_EQ(p.core.emitter(), 1u);
        }
    }
}

TEST(DetectorConfirm, AnAnswerBoundBeyondTheTimeoutIsRejected) {
    detector_config config = config_for(8, 2);
    config.answer_within_ns = config.timeout_ns + 1;
    EXPECT_NE(config_error(config).find("answer_within_ns"), std::string::npos);
}

}  // namespace
}  // namespace btl_ft::testing
