// JOIN (detector_join.cpp): a process that took part in a connect tells
// the processes of its old union left out of it where the union went; a
// process that receives one hands it to its sink, whoever sent it.
#include <gtest/gtest.h>

#include <cstring>

#include "btl_ft/btl_ft.h"
#include "btl_ft/ring.hpp"
#include "recorder.hpp"

namespace btl_ft::testing {
namespace {

constexpr time_ns ms = 1'000'000;
const std::vector<job_extent> two_jobs = {{4, 6, 0}, {9, 1, 1}};

struct one_detector {
    explicit one_detector(rank_t size, rank_t self = 0, std::size_t max_bytes = 4096) {
        detector_config config = config_for(size, self);
        config.max_message_bytes = max_bytes;
        core = std::make_unique<detector>(config, ring::make_flat(ring_order::rank, size, 1), io, io);
        core->start(0);
    }
    recorder io;
    std::unique_ptr<detector> core;
};

TEST(Join, EveryProcessLeftOutHearsItButSelfAndTheFailed) {
    one_detector p(6);
    p.core->report_failure(1 * ms, 4, failure_kind::crashed);
    p.io.messages.clear();
    const std::vector<known_failure> known = {{4, failure_kind::crashed}, {6, failure_kind::suspected}};
    const std::vector<rank_t> left_out = {0, 2, 3, 4, 5};
    EXPECT_EQ(p.core->announce_join(2 * ms, {1, two_jobs, known}, left_out), 2);
    const auto joins = p.io.sent_of(wire::msg_type::join, 6);
    ASSERT_EQ(joins.size(), 3u);
    std::vector<rank_t> to;
    for (const auto& [rank, msg] : joins) {
        to.push_back(rank);
        EXPECT_EQ(msg.epoch, 1u);
        EXPECT_EQ(msg.jobs, two_jobs);
        EXPECT_EQ(msg.known, known);
    }
    EXPECT_EQ(to, (std::vector<rank_t>{2, 3, 5}));
    EXPECT_EQ(p.core->stats().joins_sent, 3u);
}

TEST(Join, ItReachesTheSinkEvenFromASenderKnownFailedOrDeparted) {
    one_detector p(6, 2);
    std::vector<std::byte> bytes;
    const std::vector<known_failure> known = {{6, failure_kind::unreachable}};
    const std::vector<job_extent> later = {{4, 6, 0}, {9, 1, 3}};
    wire::encode_join({3, later, known}, bytes);
    EXPECT_TRUE(p.core->on_message(1 * ms, 0, bytes));
    p.core->report_failure(2 * ms, 0);
    EXPECT_TRUE(p.core->on_message(3 * ms, 0, bytes));
    // from another union: its sender's rank may be beyond this one's, or
    // this process's own
    EXPECT_TRUE(p.core->on_message(4 * ms, 6, bytes));
    EXPECT_TRUE(p.core->on_message(5 * ms, 2, bytes));
    ASSERT_EQ(p.io.joins.size(), 4u);
    EXPECT_EQ(p.io.joins[0].from, 0u);
    EXPECT_EQ(p.io.joins[2].from, 6u);
    EXPECT_EQ(p.io.joins[0].epoch, 3u);
    EXPECT_EQ(p.io.joins[0].jobs, later);
    EXPECT_EQ(p.io.joins[0].known, known);
    EXPECT_EQ(p.core->stats().joins_received, 4u);
    EXPECT_EQ(p.core->stats().malformed_dropped, 0u);
    // the core moves nothing itself: the caller leaves it
    EXPECT_FALSE(p.core->stopped());
}

TEST(Join, AMalformedJoinIsDroppedAndCounted) {
    one_detector p(6, 2);
    const std::vector<std::byte> no_job = {std::byte{0x66}, std::byte{0x74}, std::byte{wire::version},
                                           std::byte{static_cast<std::uint8_t>(wire::msg_type::join)},
                                           std::byte{1}, std::byte{0}, std::byte{0}};
    EXPECT_FALSE(p.core->on_message(1 * ms, 0, no_job));
    EXPECT_TRUE(p.io.joins.empty());
    EXPECT_EQ(p.core->stats().malformed_dropped, 1u);
}

TEST(Join, FailuresThatDoNotFitAreLeftOutFromTheHighestRank) {
    one_detector p(4, 0, wire::min_message_bytes);
    std::vector<known_failure> known;
    for (rank_t rank = 10; rank < 1000; rank += 7) {
        known.push_back({rank, failure_kind::suspected});
    }
    const std::vector<job_extent> big = {{4, 4, 0}, {5, 2000, 2}};
    const std::vector<rank_t> left_out = {1, 2};
    const long carried = p.core->announce_join(1 * ms, {2, big, known}, left_out);
    ASSERT_GT(carried, 0);
    ASSERT_LT(carried, static_cast<long>(known.size()));
    ASSERT_EQ(p.io.messages.size(), 2u);
    EXPECT_LE(p.io.messages[0].bytes.size(), wire::min_message_bytes);
    const auto joins = p.io.sent_of(wire::msg_type::join, 4);
    ASSERT_EQ(joins.size(), 2u);
    EXPECT_EQ(joins[0].second.known, (std::vector<known_failure>(known.begin(), known.begin() + carried)));
    // one more would not have fitted
    std::vector<std::byte> bytes;
    wire::encode_join({2, big, std::span(known).first(static_cast<std::size_t>(carried) + 1)}, bytes);
    EXPECT_GT(bytes.size(), wire::min_message_bytes);
}

TEST(Join, JobsThatDoNotFitSendNothing) {
    one_detector p(4, 0, wire::min_message_bytes);
    std::vector<job_extent> many;
    for (std::uint32_t job = 0; job < 30; ++job) {
        many.push_back({0x10000000u + job, 0x100000u, job == 0 ? 0u : 2u});
    }
    const std::vector<rank_t> left_out = {1, 2, 3};
    EXPECT_EQ(p.core->announce_join(1 * ms, {2, many, {}}, left_out), -1);
    EXPECT_TRUE(p.io.messages.empty());
    EXPECT_EQ(p.core->stats().joins_sent, 0u);
}

// Through the C ABI, as the shim calls it: the JOIN one detector sends is
// the `joined` callback of the other; arguments that are not a union are
// refused before the core sees them.
struct letters {
    std::vector<std::vector<unsigned char>> sent;
    std::vector<btl_ft_job_extent_t> jobs;
    std::vector<btl_ft_known_failure_t> known;
    uint32_t from = UINT32_MAX, epoch = 0;
};

btl_ft_callbacks_t callbacks_into(letters& box) {
    btl_ft_callbacks_t callbacks{};
    callbacks.context = &box;
    callbacks.put_heartbeat = [](void*, uint32_t, uint64_t) { return 0; };
    callbacks.send = [](void* context, uint32_t, const void* bytes, size_t length) {
        const auto* begin = static_cast<const unsigned char*>(bytes);
        static_cast<letters*>(context)->sent.emplace_back(begin, begin + length);
    };
    callbacks.failed = [](void*, const uint32_t*, size_t) {};
    callbacks.declared_dead_self = [](void*, uint32_t, const char*) {};
    callbacks.joined = [](void* context, uint32_t from, uint32_t epoch, const btl_ft_job_extent_t* jobs,
                          size_t job_count, const btl_ft_known_failure_t* known, size_t known_count) {
        auto& into = *static_cast<letters*>(context);
        into.from = from;
        into.epoch = epoch;
        into.jobs.assign(jobs, jobs + job_count);
        into.known.assign(known, known + known_count);
    };
    return callbacks;
}

TEST(Join, TheCApiCarriesItFromOneDetectorToTheOther) {
    letters a, b;
    btl_ft_config_t config{};
    config.size = 3;
    config.period_ns = 10 * ms;
    config.timeout_ns = 50 * ms;
    const btl_ft_callbacks_t to_a = callbacks_into(a), to_b = callbacks_into(b);
    btl_ft_detector_t *sender = nullptr, *receiver = nullptr;
    char error[256];
    ASSERT_EQ(btl_ft_create(&config, &to_a, &sender, error, sizeof(error)), 0) << error;
    config.self = 2;
    ASSERT_EQ(btl_ft_create(&config, &to_b, &receiver, error, sizeof(error)), 0) << error;
    ASSERT_EQ(btl_ft_start(sender, 0), 0);
    ASSERT_EQ(btl_ft_start(receiver, 0), 0);
    a.sent.clear();
    const btl_ft_job_extent_t jobs[] = {{4, 3, 0}, {9, 2, 1}}, twice[] = {{4, 3, 0}, {4, 3, 1}},
                              unordered[] = {{9, 2, 1}, {4, 3, 0}};
    const btl_ft_known_failure_t known[] = {{3, BTL_FT_CRASHED}}, outside[] = {{5, BTL_FT_CRASHED}};
    const uint32_t to[] = {2};
    EXPECT_EQ(btl_ft_announce_join(sender, 1 * ms, 1, twice, 2, known, 1, to, 1), -1);
    EXPECT_EQ(btl_ft_announce_join(sender, 1 * ms, 1, unordered, 2, known, 1, to, 1), -1);
    EXPECT_EQ(btl_ft_announce_join(sender, 1 * ms, 2, jobs, 2, known, 1, to, 1), -1);  // not the last since
    EXPECT_EQ(btl_ft_announce_join(sender, 1 * ms, 1, jobs, 2, outside, 1, to, 1), -1);
    EXPECT_TRUE(a.sent.empty());
    EXPECT_EQ(btl_ft_announce_join(sender, 1 * ms, 1, jobs, 2, known, 1, to, 1), 1);
    ASSERT_EQ(a.sent.size(), 1u);
    EXPECT_EQ(btl_ft_on_message(receiver, 2 * ms, 0, a.sent[0].data(), a.sent[0].size()), 0);
    EXPECT_EQ(b.from, 0u);
    EXPECT_EQ(b.epoch, 1u);
    ASSERT_EQ(b.jobs.size(), 2u);
    EXPECT_EQ(b.jobs[1].job, 9u);
    EXPECT_EQ(b.jobs[1].size, 2u);
    ASSERT_EQ(b.known.size(), 1u);
    EXPECT_EQ(b.known[0].rank, 3u);
    EXPECT_EQ(b.known[0].kind, BTL_FT_CRASHED);
    btl_ft_stats_t stats{};
    btl_ft_get_stats(receiver, &stats);
    EXPECT_EQ(stats.joins_received, 1u);
    btl_ft_destroy(sender);
    btl_ft_destroy(receiver);
}

}  // namespace
}  // namespace btl_ft::testing
