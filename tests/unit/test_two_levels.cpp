// Two levels (seed 000): the node layout, the grouped ring, the two-level
// overlay, and what the detector does differently with them: a silent node
// declared whole in one notice, two witnesses asked, a condemned node told
// as one, and crashes the runtime told everyone not broadcast again.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <set>

#include "btl_ft/node_layout.hpp"
#include "btl_ft/overlay.hpp"
#include "btl_ft/prng.hpp"
#include "flood_helpers.hpp"
#include "btl_ft/ring.hpp"
#include "fake_net.hpp"
#include "recorder.hpp"

namespace btl_ft::testing {
namespace {

using namespace flood_helpers;

// `nodes` nodes of 1 to `max_ppn` processes; ranks by slot, or dealt at
// random when `scattered`.
std::vector<std::uint32_t> random_nodes(splitmix64& random, rank_t nodes, rank_t max_ppn, bool scattered) {
    std::vector<std::uint32_t> node_of_rank;
    for (rank_t node = 0; node < nodes; ++node) {
        const auto ppn = static_cast<rank_t>(1 + random.below(max_ppn));
        node_of_rank.insert(node_of_rank.end(), ppn, 1000 + 7 * node);  // ids are not numbers 0..n-1
    }
    if (scattered) {
        for (std::size_t i = node_of_rank.size(); i > 1; --i) {
            std::swap(node_of_rank[i - 1], node_of_rank[random.below(i)]);
        }
    }
    return node_of_rank;
}

TEST(NodeLayout, LiveProcessesAgreeWithAScanOfTheNode) {
    splitmix64 random(1);
    for (int trial = 0; trial < 300; ++trial) {
        const bool scattered = trial % 2 == 1;
        const auto node_of_rank = random_nodes(random, static_cast<rank_t>(1 + random.below(20)), 9, scattered);
        const auto layout = node_layout::make(node_of_rank);
        const auto size = static_cast<rank_t>(node_of_rank.size());
        ASSERT_EQ(layout->size(), size);
        if (!scattered) {
            EXPECT_TRUE(layout->contiguous());
        }
        const dead_set skip = random_skip(random, size, random.below(size));
        std::vector<rank_t> lost;
        for (rank_t node = 0; node < layout->node_count(); ++node) {
            std::vector<rank_t> live;
            for (const rank_t rank : layout->ranks_of(node)) {
                ASSERT_EQ(layout->node_of(rank), node);
                if (!skip.contains(rank)) live.push_back(rank);
            }
            ASSERT_EQ(layout->live_count(node, skip), live.size());
            for (rank_t i = 0; i < live.size(); ++i) {
                ASSERT_EQ(layout->live_process(node, i, skip), live[i]) << "trial " << trial;
            }
            if (live.empty()) lost.push_back(node);
        }
        ASSERT_EQ(layout->lost_nodes(skip), dead_set(lost));
    }
}

TEST(NodeLayout, NodesAreNumberedByTheirIdsWhateverTheRankOrder) {
    const auto layout = node_layout::make(std::vector<std::uint32_t>{50, 7, 50, 7, 9});
    EXPECT_EQ(layout->node_count(), 3u);
    EXPECT_FALSE(layout->contiguous());
    EXPECT_EQ(std::vector<rank_t>(layout->ranks_of(0).begin(), layout->ranks_of(0).end()), (std::vector<rank_t>{1, 3}));
    EXPECT_EQ(layout->node_of(4), 1u);
    EXPECT_EQ(layout->node_of(0), 2u);
}

TEST(GroupedRing, CrossesFromNodeToNodeOncePerNode) {
    splitmix64 random(2);
    for (int trial = 0; trial < 100; ++trial) {
        const auto node_of_rank = random_nodes(random, static_cast<rank_t>(1 + random.below(12)), 8, trial % 2 == 1);
        const auto layout = node_layout::make(node_of_rank);
        for (const ring_order order : {ring_order::rank, ring_order::node, ring_order::shuffle}) {
            const auto made = ring::make_grouped(order, *layout, 9);
            ASSERT_EQ(made->size(), layout->size());
            rank_t crossings = 0;
            for (rank_t rank = 0; rank < made->size(); ++rank) {
                const rank_t next = made->successor(rank);
                ASSERT_EQ(made->predecessor(next), rank);
                crossings += layout->node_of(next) != layout->node_of(rank) ? 1 : 0;
            }
            EXPECT_EQ(crossings, layout->node_count() == 1 ? 0 : layout->node_count());
        }
    }
}

// One two-level broadcast to completion, as the detector runs it, counting
// the messages that cross between nodes.
struct node_flood : flood_result {
    std::uint64_t across = 0;
};

node_flood flood(propagator_kind kind, const node_layout& layout, rank_t source, const dead_set& skip,
                 const std::vector<char>& crashed) {
    const overlay_route route{kind, layout.size(), source, skip};
    std::uint64_t across = 0;
    const flood_result result = flood_with(
        layout.size(), source, crashed,
        [&](rank_t self, route_tag received, std::vector<hop>& out) { node_overlay_hops(route, layout, self, received, out); },
        [&](const in_flight& message) -> std::string {
            const bool crosses = layout.node_of(message.to) != layout.node_of(message.from);
            across += crosses ? 1 : 0;
            if (skip.contains(message.to) || message.to == message.from) {
                return "message from " + std::to_string(message.from) + " to " + std::to_string(message.to);
            }
            if ((message.route == route_local) == crosses) {
                return "a local star tag across nodes, or a link tag within one";
            }
            return {};
        });
    return {result, across};
}

TEST(NodeOverlay, EveryKindReachesEveryParticipantWithinLogNodesPlusOneHops) {
    splitmix64 random(3);
    for (int trial = 0; trial < 400; ++trial) {
        const auto node_of_rank = random_nodes(random, static_cast<rank_t>(1 + random.below(40)), 12, trial % 3 == 2);
        const auto layout = node_layout::make(node_of_rank);
        const auto size = layout->size();
        const dead_set skip = random_skip(random, size, random.below(size / 2 + 1));
        const rank_t source = random_participant(random, size, skip);
        const std::vector<char> none(size, 0);
        const rank_t live_nodes = layout->node_count() - static_cast<rank_t>(layout->lost_nodes(skip).size());
        for (const propagator_kind kind : {propagator_kind::hba, propagator_kind::bmg, propagator_kind::chord}) {
            const node_flood result = flood(kind, *layout, source, skip, none);
            ASSERT_EQ(result.error, "") << name_of(kind);
            ASSERT_EQ(missed(result.got, skip, none), 0u) << name_of(kind) << " trial " << trial;
            EXPECT_LE(result.depth, static_cast<unsigned>(std::bit_width(live_nodes)) + 2) << name_of(kind);
        }
    }
}

// The landings: k - 1 processes dying unseen during the broadcast, at most
// one per node and never the source, where k = floor(log2 nodes) as in the
// flat overlay, lose nobody else: a node whose first landing is dead still
// hears over the links that land on its second. (Both landings of one node
// dead lose the node: two landings is what two levels pay for, see
// overlay.hpp.)
TEST(NodeOverlay, UnseenFailuresOfLandingsLoseNobodyElse) {
    splitmix64 random(4);
    for (int trial = 0; trial < 600; ++trial) {
        std::vector<std::uint32_t> node_of_rank;
        const auto nodes = static_cast<rank_t>(4 + random.below(60));
        for (rank_t node = 0; node < nodes; ++node) {
            node_of_rank.insert(node_of_rank.end(), 2 + random.below(10), node);
        }
        const auto layout = node_layout::make(node_of_rank);
        const auto size = layout->size();
        const dead_set skip;
        const rank_t source = random_participant(random, size, skip);
        const auto k = static_cast<unsigned>(std::bit_width(nodes)) - 1;
        std::vector<char> crashed(size, 0);
        std::set<rank_t> struck_nodes{layout->node_of(source)};
        for (unsigned crashes = 0; crashes + 1 < k;) {
            const auto node = static_cast<rank_t>(random.below(nodes));
            if (struck_nodes.insert(node).second) {
                crashed[layout->live_process(node, static_cast<rank_t>(random.below(node_landings)), skip)] = 1;
                ++crashes;
            }
        }
        const node_flood result = flood(propagator_kind::hba, *layout, source, skip, crashed);
        ASSERT_EQ(result.error, "");
        ASSERT_EQ(missed(result.got, skip, crashed), 0u) << "trial " << trial << " nodes " << nodes;
    }
}

// What seed 000 promises: messages across nodes follow the nodes, and each
// process gets about one copy, whatever the processes per node.
TEST(NodeOverlay, MessagesAcrossNodesFollowNodesNotProcesses) {
    for (const rank_t ppn : {1u, 16u, 64u}) {
        const rank_t nodes = 256;
        const std::vector<std::uint32_t> node_of_rank = [&] {
            std::vector<std::uint32_t> out;
            for (rank_t node = 0; node < nodes; ++node) out.insert(out.end(), ppn, node);
            return out;
        }();
        const auto layout = node_layout::make(node_of_rank);
        const dead_set skip({3});
        const std::vector<char> none(layout->size(), 0);
        const node_flood result = flood(propagator_kind::hba, *layout, ppn == 1 ? 7 : 4, skip, none);
        ASSERT_EQ(missed(result.got, skip, none), 0u);
        const double across_per_node = static_cast<double>(result.across) / nodes;
        // About 2 log2(nodes) links a node, each used by at most two landings.
        EXPECT_LE(across_per_node, 2.0 * node_landings * 8) << "ppn " << ppn;
        const double per_process = static_cast<double>(result.messages) / layout->size();
        if (ppn == 64) {
            EXPECT_LE(per_process, 3.0);  // flat hba: about 2 log2 n, 26 at this size
        }
    }
}

// --- the detector ---------------------------------------------------------

constexpr time_ns timeout_ns = 50 * ms;

// Self 4 of 8, nodes {0,1,2,3} and {4,5,6,7}; its emitter is 3, across.
struct two_level_observer {
    explicit two_level_observer(rank_t self = 4) : core(config(self), ring(), io, io) {
        core.start(0);
        core.on_heartbeat_word(1 * ms, heartbeat_word(core.emitter(), 1));
    }
    static std::vector<std::uint32_t> nodes() { return {0, 0, 0, 0, 1, 1, 1, 1}; }
    static std::shared_ptr<const btl_ft::ring> ring() {
        return ring::make_grouped(ring_order::node, *node_layout::make(nodes()), 0);
    }
    static detector_config config(rank_t self) {
        detector_config config = config_for(8, self);
        config.node_of_rank = std::make_shared<const std::vector<std::uint32_t>>(nodes());
        config.hierarchy = hierarchy_kind::node;
        config.layout = node_layout::make(nodes());
        config.node_grace_ns = 0;  // half a timeout
        return config;
    }
    // Ticks at every deadline, as a host that wakes on time does (a late
    // wake-up would give the emitter a second round).
    void run_until(time_ns until) {
        for (time_ns at = core.next_deadline(); at <= until; at = core.next_deadline()) core.tick(at);
    }
    static constexpr time_ns timed_out_at = 1 * ms + timeout_ns;
    recorder io;
    detector core;
};

TEST(TwoLevels, ASilentNodeIsDeclaredWholeInOneNotice) {
    two_level_observer p;
    ASSERT_EQ(p.core.emitter(), 3u);
    p.run_until(p.timed_out_at);
    std::set<rank_t> asked;
    for (const auto& [to, msg] : p.io.sent_of(wire::msg_type::witness, 8)) asked.insert(to);
    EXPECT_EQ(asked, (std::set<rank_t>{0, 1}));  // two witnesses on the emitter's node
    p.run_until(p.timed_out_at + timeout_ns / 2);
    EXPECT_EQ(p.io.failed, (std::vector<rank_t>{0, 1, 2, 3}));
    EXPECT_EQ(p.core.stats().notices_started, 1u);
    const auto notices = p.io.sent_of(wire::msg_type::notice, 8);
    ASSERT_FALSE(notices.empty());
    EXPECT_EQ(notices.front().second.failed, (std::vector<rank_t>{0, 1, 2, 3}));
    // One copy for the condemned node, at the suspect; the rest go to node-mates.
    std::size_t to_lost_node = 0;
    for (const auto& [to, msg] : notices) to_lost_node += to < 4 ? 1 : 0;
    EXPECT_EQ(to_lost_node, 1u);
    EXPECT_EQ(p.core.emitter(), 7u);  // the ring closes inside this node
}

TEST(TwoLevels, AnAnswerFromEitherWitnessTellsAHangFromALostNode) {
    two_level_observer p;
    p.run_until(p.timed_out_at);
    const auto questions = p.io.sent_of(wire::msg_type::witness, 8);
    ASSERT_EQ(questions.size(), 2u);
    std::vector<std::byte> bytes;
    const auto& [witness, question] = questions.back();
    wire::encode_witness_reply(question.sequence, 3, process_state::stopped, {}, bytes);
    EXPECT_TRUE(p.core.on_message(p.timed_out_at + 1 * ms, witness, bytes));
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{3});
    EXPECT_EQ(p.core.emitter(), 2u);
}

// Self 4 observes 3 across; 3 and 2 hung together. The witness sees the
// row behind 3 on its node, which self cannot, and names it: both are
// declared in one notice at the timeout, not 2 behind 3 two timeouts later.
TEST(TwoLevels, AWitnessNamesTheStoppedRowBehindTheEmitter) {
    two_level_observer p;
    p.run_until(p.timed_out_at);
    const auto questions = p.io.sent_of(wire::msg_type::witness, 8);
    ASSERT_EQ(questions.size(), 2u);
    const auto& [witness, question] = questions.front();
    std::vector<std::byte> bytes;
    // 6 is of self's node: a witness of node 0 cannot vouch for it
    wire::encode_witness_reply(question.sequence, 3, process_state::stopped, std::vector<rank_t>{2, 6}, bytes);
    EXPECT_TRUE(p.core.on_message(p.timed_out_at + 1 * ms, witness, bytes));
    EXPECT_EQ(p.io.failed, (std::vector<rank_t>{2, 3}));
    EXPECT_EQ(p.core.stats().notices_started, 1u);
    EXPECT_EQ(p.core.emitter(), 1u);
}

// A row named in an earlier confirmation is not used for a later one.
TEST(TwoLevels, AWitnessedRowCountsForItsConfirmationOnly) {
    two_level_observer p;
    p.run_until(p.timed_out_at);
    const auto [witness, question] = p.io.sent_of(wire::msg_type::witness, 8).front();
    std::vector<std::byte> bytes;
    wire::encode_witness_reply(question.sequence, 3, process_state::running, std::vector<rank_t>{2}, bytes);
    EXPECT_TRUE(p.core.on_message(p.timed_out_at + 1 * ms, witness, bytes));
    EXPECT_TRUE(p.io.failed.empty());  // running: another timeout
    p.io.messages.clear();
    time_ns at = p.timed_out_at + 1 * ms;
    while (p.io.sent_of(wire::msg_type::witness, 8).empty() && at < p.timed_out_at + 2 * timeout_ns) {
        at = p.core.next_deadline();  // up to the next confirmation, which asks again
        p.core.tick(at);
    }
    const auto asked_again = p.io.sent_of(wire::msg_type::witness, 8);
    ASSERT_FALSE(asked_again.empty());
    const time_ns answered_at = at + 1 * ms;
    wire::encode_witness_reply(asked_again.front().second.sequence, 3, process_state::stopped, {}, bytes);
    EXPECT_TRUE(p.core.on_message(answered_at, asked_again.front().first, bytes));
    p.run_until(answered_at + timeout_ns / 4);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{3});
}

// The witness's side: asked about a stopped node-mate, it names the
// stopped or gone node-mates right behind it, up to the first that runs.
TEST(TwoLevels, AWitnessAnswersWithTheStoppedRowBehindItsSubject) {
    two_level_observer p(0);  // of node 0: 1, 2 and 3 are its node-mates
    p.io.local = {process_state::running, process_state::stopped, process_state::stopped, process_state::stopped};
    p.io.messages.clear();
    std::array<std::byte, wire::max_witness_bytes> question{};
    EXPECT_TRUE(p.core.on_message(2 * ms, 4, wire::encode_witness(9, 3, question)));
    const auto replies = p.io.sent_of(wire::msg_type::witness_reply, 8);
    ASSERT_EQ(replies.size(), 1u);
    EXPECT_EQ(replies[0].first, 4u);
    EXPECT_EQ(replies[0].second.state, process_state::stopped);
    EXPECT_EQ(replies[0].second.behind, (std::vector<rank_t>{1, 2}));  // the walk ends at itself
    // One that ended ends the row (an end in MPI_Finalize is gone too).
    p.io.local[2] = process_state::gone;
    p.io.messages.clear();
    EXPECT_TRUE(p.core.on_message(3 * ms, 4, wire::encode_witness(10, 3, question)));
    EXPECT_TRUE(p.io.sent_of(wire::msg_type::witness_reply, 8).at(0).second.behind.empty());
    // A subject that runs comes with no row.
    p.io.local = {process_state::running, process_state::stopped, process_state::stopped, process_state::running};
    p.io.messages.clear();
    EXPECT_TRUE(p.core.on_message(4 * ms, 4, wire::encode_witness(11, 3, question)));
    EXPECT_TRUE(p.io.sent_of(wire::msg_type::witness_reply, 8).at(0).second.behind.empty());
}

// Self 4 mends onto 2, of the other node, after 3 failed: nobody timed 2's
// silence (3 observed it), so that node is asked about 2 at once.
struct mended_across {
    mended_across() {
        p.io.messages.clear();
        EXPECT_TRUE(p.core.on_message(2 * ms, 5, notice_bytes(5, 1, {3}, {}, wire::notice_mode::hba, 1)));
        EXPECT_EQ(p.core.emitter(), 2u);
    }
    wire::message question() const {
        const auto asked = p.io.sent_of(wire::msg_type::witness, 8);
        EXPECT_EQ(asked.size(), 1u);
        EXPECT_EQ(asked.at(0).first, 0u);  // 2's witness: the first live after it on its node
        EXPECT_EQ(asked.at(0).second.subject, 2u);
        return asked.at(0).second;
    }
    two_level_observer p;
};

TEST(TwoLevels, AStoppedEmitterOfAnotherNodeFoundAtAMendingIsDeclaredAtOnce) {
    mended_across m;
    std::vector<std::byte> bytes;
    wire::encode_witness_reply(m.question().sequence, 2, process_state::stopped, std::vector<rank_t>{1}, bytes);
    EXPECT_TRUE(m.p.core.on_message(3 * ms, 0, bytes));
    EXPECT_EQ(m.p.io.failed, (std::vector<rank_t>{3, 1, 2}));  // 3 from the notice, then the row
    EXPECT_EQ(m.p.core.emitter(), 0u);
}

TEST(TwoLevels, AnEmitterFoundRunningOrGoneAtAMendingGetsItsUsualGrace) {
    for (const process_state seen : {process_state::running, process_state::gone, process_state::unknown}) {
        mended_across m;
        std::vector<std::byte> bytes;
        wire::encode_witness_reply(m.question().sequence, 2, seen, {}, bytes);
        EXPECT_TRUE(m.p.core.on_message(3 * ms, 0, bytes));
        EXPECT_EQ(m.p.io.failed, std::vector<rank_t>{3});
        EXPECT_EQ(m.p.core.emitter(), 2u);
        // A second answer, or one from another node, changes nothing either.
        wire::encode_witness_reply(m.question().sequence, 2, process_state::stopped, {}, bytes);
        EXPECT_TRUE(m.p.core.on_message(4 * ms, 0, bytes));
        EXPECT_EQ(m.p.io.failed, std::vector<rank_t>{3});
    }
}

TEST(TwoLevels, AStoppedAnswerFromOutsideTheEmittersNodeIsIgnored) {
    mended_across m;
    std::vector<std::byte> bytes;
    wire::encode_witness_reply(m.question().sequence, 2, process_state::stopped, {}, bytes);
    EXPECT_TRUE(m.p.core.on_message(3 * ms, 6, bytes));
    EXPECT_EQ(m.p.io.failed, std::vector<rank_t>{3});
    EXPECT_EQ(m.p.core.emitter(), 2u);
}

TEST(TwoLevels, ACondemnedProcessTellsItsCondemnedNodeMatesAndStops) {
    two_level_observer p(1);
    p.io.messages.clear();
    EXPECT_TRUE(p.core.on_message(2 * ms, 5, notice_bytes(5, 1, {0, 1, 2, 3}, {}, wire::notice_mode::hba, 1)));
    EXPECT_TRUE(p.io.declared);
    std::set<rank_t> told;
    for (const auto& [to, msg] : p.io.sent_of(wire::msg_type::notice, 8)) {
        EXPECT_EQ(msg.route, route_local);
        told.insert(to);
    }
    EXPECT_EQ(told, (std::set<rank_t>{0, 2, 3}));
}

TEST(TwoLevels, ALocalCopyOfACondemnationIsNotPassedOn) {
    two_level_observer p(1);
    p.io.messages.clear();
    EXPECT_TRUE(p.core.on_message(2 * ms, 2, notice_bytes(5, 1, {0, 1, 2, 3}, {}, wire::notice_mode::hba, route_local)));
    EXPECT_TRUE(p.io.declared);
    EXPECT_TRUE(p.io.messages.empty());
}

TEST(TwoLevels, ACrashTheRuntimeReportedIsBroadcastOnlyByItsObserver) {
    two_level_observer observer;  // 4 observes 3
    observer.io.messages.clear();
    observer.core.report_failure(2 * ms, 3, failure_kind::crashed);
    EXPECT_FALSE(observer.io.sent_of(wire::msg_type::notice, 8).empty());

    two_level_observer other(6);  // observes 5: not 3's observer
    other.io.messages.clear();
    other.core.report_failure(2 * ms, 3, failure_kind::crashed);
    EXPECT_TRUE(other.io.sent_of(wire::msg_type::notice, 8).empty());
    EXPECT_EQ(other.io.failed, std::vector<rank_t>{3});
    // ... but it forwards the first notice that names it: 3's node-mates,
    // whom the runtime does not tell, may hear it only that way.
    EXPECT_TRUE(other.core.on_message(3 * ms, 0, notice_bytes(0, 1, {3}, {}, wire::notice_mode::hba, 1)));
    EXPECT_FALSE(other.io.sent_of(wire::msg_type::notice, 8).empty());
    other.io.messages.clear();
    EXPECT_TRUE(other.core.on_message(4 * ms, 1, notice_bytes(0, 1, {3}, {}, wire::notice_mode::hba, 2)));
    EXPECT_TRUE(other.io.sent_of(wire::msg_type::notice, 8).empty());  // once

    two_level_observer mate(6);  // a crash on its own node: the node watch, told to all
    mate.io.messages.clear();
    mate.core.report_failure(2 * ms, 7, failure_kind::crashed);
    EXPECT_FALSE(mate.io.sent_of(wire::msg_type::notice, 8).empty());
}

// News forwarded once, whichever copy brought it.
TEST(TwoLevels, ANoticeIsForwardedOnItsFirstCopyOnly) {
    two_level_observer p(6);
    p.io.messages.clear();
    EXPECT_TRUE(p.core.on_message(3 * ms, 0, notice_bytes(0, 1, {3}, {}, wire::notice_mode::hba, 1)));
    EXPECT_FALSE(p.io.sent_of(wire::msg_type::notice, 8).empty());
    p.io.messages.clear();
    EXPECT_TRUE(p.core.on_message(4 * ms, 1, notice_bytes(0, 1, {3}, {}, wire::notice_mode::hba, 2)));
    EXPECT_TRUE(p.io.sent_of(wire::msg_type::notice, 8).empty());
}

// A source that missed a failure (its landing died unseen) hears of it
// from whoever got its notice straight from it and knows more.
TEST(TwoLevels, ASourceThatMissedAFailureIsToldByItsFirstHop) {
    two_level_observer p(6);
    p.core.report_failure(2 * ms, 1, failure_kind::unreachable);  // 6 knows of 1
    p.io.messages.clear();
    EXPECT_TRUE(p.core.on_message(3 * ms, 2, notice_bytes(2, 1, {3}, {}, wire::notice_mode::hba, 1)));
    const auto replies = p.io.sent_of(wire::msg_type::notice, 8);
    ASSERT_FALSE(replies.empty());
    EXPECT_EQ(replies.front().first, 2u);
    EXPECT_EQ(replies.front().second.failed, std::vector<rank_t>{1});

    p.io.messages.clear();  // a copy forwarded by someone else: no answer
    EXPECT_TRUE(p.core.on_message(4 * ms, 0, notice_bytes(2, 2, {4}, {}, wire::notice_mode::hba, 1)));
    for (const auto& [to, msg] : p.io.sent_of(wire::msg_type::notice, 8)) EXPECT_NE(to, 2u);
}

TEST(TwoLevels, TheHierarchyNeedsALayoutOfTheJob) {
    detector_config config = config_for(8, 0);
    config.hierarchy = hierarchy_kind::node;
    EXPECT_NE(config_error(config).find("hierarchy"), std::string::npos);
    config.layout = node_layout::make(std::vector<std::uint32_t>(7, 0));
    EXPECT_NE(config_error(config), "");
    config.layout = node_layout::make(std::vector<std::uint32_t>(8, 0));
    EXPECT_EQ(config_error(config), "");
}

}  // namespace
}  // namespace btl_ft::testing
