// The census: an observer that declares an emitter whose whole node was
// silent PROBEs the processes it believes alive; fewer than a quarter
// answering (itself counted) holds its failures and stops it after the
// quorum wait, while the count alone would have waited for half of the
// job to be declared. A quarter or more, or a late answer, keeps it going.
// The test plays every peer: self 2 of 16, nodes of two (0-1, 2-3, ...),
// rank order, so 2 observes 1 (node 0) and asks 0 to witness.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "btl_ft/ring.hpp"
#include "recorder.hpp"

namespace btl_ft::testing {
namespace {

constexpr time_ns timeout_ns = 50'000'000;
constexpr time_ns ms = 1'000'000;

struct observer {
    explicit observer(rank_t job_size = 16, bool quorum = true)
        : size(job_size), core(config_with(job_size, quorum), ring::make_flat(ring_order::rank, job_size, 0), io, io) {
        core.start(0);
        core.on_heartbeat_word(1 * ms, heartbeat_word(1, 1));
    }
    static detector_config config_with(rank_t size, bool quorum) {
        detector_config config = config_for(size, 2);
        std::vector<std::uint32_t> nodes(size);
        for (rank_t rank = 0; rank < size; ++rank) nodes[rank] = rank / 2;
        config.node_of_rank = std::make_shared<const std::vector<std::uint32_t>>(std::move(nodes));
        config.quorum = quorum;
        return config;
    }
    // The emitter times out, neither it nor the witness of its node answers.
    void declare_silent_emitter() {
        core.tick(timed_out_at - confirm_lead);  // the PROBE and the witness's question
        core.tick(declared_at - 1);
        ASSERT_TRUE(io.failed.empty());
        core.tick(declared_at);
    }
    // The census's PROBEs: those sharing one round (a confirmation and
    // each predecessor probed while mending get a round of their own).
    std::vector<std::pair<rank_t, wire::message>> census() const {
        const auto probes = io.sent_of(wire::msg_type::probe, size);
        std::map<std::uint32_t, int> per_round;
        for (const auto& sent : probes) ++per_round[sent.second.sequence];
        std::vector<std::pair<rank_t, wire::message>> out;
        std::ranges::copy_if(probes, std::back_inserter(out),
                             [&](const auto& sent) { return per_round[sent.second.sequence] > 1; });
        return out;
    }
    void answer(time_ns now, rank_t from, std::uint32_t round) {
        std::array<std::byte, wire::max_probe_reply_bytes> bytes{};
        EXPECT_TRUE(core.on_message(now, from, wire::encode_probe_reply(round, heartbeat_word(from, 1), bytes)));
    }
    static constexpr time_ns timed_out_at = 1 * ms + timeout_ns;
    static constexpr time_ns confirm_lead = default_confirm_ns(timeout_ns);
    static constexpr time_ns window = BTL_FT_DEFAULT_NODE_GRACE_NS;  // > timeout / 2
    static constexpr time_ns declared_at = timed_out_at + window;
    static constexpr time_ns census_closes_at = declared_at + window;
    rank_t size;
    recorder io;
    detector core;
};

TEST(Census, ASilentNodeStartsACensusOfEveryoneBelievedAlive) {
    observer p;
    p.declare_silent_emitter();
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});
    const auto asked = p.census();
    std::set<rank_t> targets;
    for (const auto& [to, msg] : asked) targets.insert(to);
    EXPECT_EQ(asked.size(), 14u);  // 16, less itself and the one declared
    EXPECT_EQ(targets.size(), 14u);
    EXPECT_FALSE(targets.contains(1));
    EXPECT_FALSE(targets.contains(2));
    EXPECT_EQ(p.core.stats().censuses, 1u);
}

TEST(Census, FewerThanAQuarterAnsweringHoldsTheFailuresAndStops) {
    observer p;
    p.declare_silent_emitter();
    const std::uint32_t round = p.census().at(0).second.sequence;
    p.answer(p.declared_at + 1 * ms, 3, round);  // its node-mate: 2 of 15 with itself
    p.answer(p.declared_at + 1 * ms, 4, round);  // 3 of 15
    p.core.tick(p.census_closes_at);
    EXPECT_EQ(p.core.stats().quorum_holds, 1u);
    EXPECT_FALSE(p.io.declared);
    // A failure learnt during the wait is held back from the application.
    p.core.report_failure(p.census_closes_at + 1 * ms, 9, failure_kind::unreachable);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});
    p.core.tick(p.census_closes_at + detector_config{}.quorum_wait_ns - 1);
    EXPECT_FALSE(p.io.declared);
    p.core.tick(p.census_closes_at + detector_config{}.quorum_wait_ns);
    EXPECT_TRUE(p.io.declared);
    EXPECT_EQ(p.io.told_by, 2u);
    EXPECT_TRUE(p.core.stopped());
}

TEST(Census, AQuarterAnsweringKeepsItGoing) {
    observer p;
    p.declare_silent_emitter();
    const std::uint32_t round = p.census().at(0).second.sequence;
    for (const rank_t from : {3u, 4u, 5u}) p.answer(p.declared_at + 1 * ms, from, round);  // 4 of 15
    p.core.tick(p.census_closes_at);
    EXPECT_EQ(p.core.stats().quorum_holds, 0u);
    p.core.report_failure(p.census_closes_at + 1 * ms, 9, failure_kind::unreachable);
    EXPECT_EQ(p.io.failed, (std::vector<rank_t>{1, 9}));
    p.core.tick(p.census_closes_at + detector_config{}.quorum_wait_ns);
    EXPECT_FALSE(p.io.declared);
}

TEST(Census, ALateAnswerLiftsTheVerdict) {
    observer p;
    p.declare_silent_emitter();
    const std::uint32_t round = p.census().at(0).second.sequence;
    p.core.tick(p.census_closes_at);
    EXPECT_EQ(p.core.stats().quorum_holds, 1u);
    p.core.report_failure(p.census_closes_at + 1 * ms, 9, failure_kind::unreachable);
    for (const rank_t from : {3u, 4u}) p.answer(p.census_closes_at + 2 * ms, from, round);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});  // 3 of 15: still held
    p.answer(p.census_closes_at + 3 * ms, 5, round);
    EXPECT_EQ(p.io.failed, (std::vector<rank_t>{1, 9}));  // released
    p.core.tick(p.census_closes_at + detector_config{}.quorum_wait_ns);
    EXPECT_FALSE(p.io.declared);
}

// Answers that do not count: another round, a rank not asked.
TEST(Census, OnlyAnswersToItsOwnRoundFromThoseAskedCount) {
    observer p;
    p.declare_silent_emitter();
    const std::uint32_t round = p.census().at(0).second.sequence;
    for (const rank_t from : {3u, 4u, 5u}) p.answer(p.declared_at + 1 * ms, from, round + 7);
    p.answer(p.declared_at + 1 * ms, 1, round);  // declared failed: told so, not counted
    p.core.tick(p.census_closes_at);
    EXPECT_EQ(p.core.stats().quorum_holds, 1u);
}

TEST(Census, AWitnessThatAnswersStartsNoCensus) {
    observer p;
    p.core.tick(p.timed_out_at);
    const auto asked = p.io.sent_of(wire::msg_type::witness, 16);
    ASSERT_EQ(asked.size(), 1u);
    std::vector<std::byte> bytes;
    wire::encode_witness_reply(asked[0].second.sequence, 1, process_state::stopped, {}, bytes);
    p.core.on_message(p.timed_out_at + 1 * ms, 0, bytes);
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});
    EXPECT_TRUE(p.census().empty());
    EXPECT_EQ(p.core.stats().censuses, 0u);
}

TEST(Census, WithoutTheQuorumRuleNoCensus) {
    observer p(16, false);
    p.declare_silent_emitter();
    EXPECT_EQ(p.io.failed, std::vector<rank_t>{1});
    EXPECT_TRUE(p.census().empty());
}

// Beyond census_sample others, a sample of distinct live ranks.
TEST(Census, ALargeJobIsSampled) {
    observer p(4096);
    p.declare_silent_emitter();
    const auto asked = p.census();
    std::set<rank_t> targets;
    for (const auto& [to, msg] : asked) targets.insert(to);
    EXPECT_EQ(asked.size(), 256u);
    ASSERT_EQ(targets.size(), 256u);
    EXPECT_FALSE(targets.contains(1));
    EXPECT_FALSE(targets.contains(2));
    EXPECT_GT(*targets.rbegin(), 2048u);  // drawn across the job, not its start
}

}  // namespace
}  // namespace btl_ft::testing
