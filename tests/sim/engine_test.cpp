// Unit tests of the simulator's building blocks: the event order, the
// message pool, the seeded streams, durations and the Theorem 1 formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cli.hpp"
#include "config.hpp"
#include "event_queue.hpp"
#include "message_pool.hpp"
#include "network.hpp"
#include "rng.hpp"

namespace btl_ft::sim {
namespace {

TEST(EventQueue, PopsInContentOrderWhateverThePushOrder) {
    rng draws(42, stream::delays);
    std::vector<event> events;
    for (int i = 0; i < 5000; ++i) {
        // Few distinct times, so ties are common and the tie-break matters.
        events.push_back({.at = static_cast<time_ns>(draws.below(50)),
                          .payload = draws.below(4),
                          .node = static_cast<rank_t>(draws.below(8)),
                          .kind = static_cast<event_kind>(draws.below(5))});
    }
    event_queue queue;
    for (const event& item : events) {
        queue.push(item);
    }
    EXPECT_EQ(queue.size(), events.size());
    std::sort(events.begin(), events.end(), earlier);
    for (const event& expected : events) {
        ASSERT_FALSE(queue.empty());
        const event got = queue.pop();
        EXPECT_FALSE(earlier(got, expected) || earlier(expected, got));
    }
    EXPECT_TRUE(queue.empty());
    EXPECT_EQ(queue.peak_size(), 5000u);
}

TEST(EventQueue, InterleavedPushAndPopStayOrdered) {
    rng draws(7, stream::delays);
    event_queue queue;
    time_ns now = 0;
    for (int i = 0; i < 20000; ++i) {
        queue.push({.at = now + static_cast<time_ns>(draws.below(1000)), .node = 1, .kind = event_kind::tick});
        if (i % 3 == 0) {
            const event got = queue.pop();
            ASSERT_GE(got.at, now);
            now = got.at;
        }
    }
}

// The near buckets, the lane and the heap together, as a run uses them:
// every push at or after the last popped time, many at that very time (into
// a bucket already sorted and partly popped), most within a few hundred ns,
// some beyond the bucket window. The pops must follow a reference order.
TEST(EventQueue, NearBucketsPopInContentOrderAsARunPushes) {
    rng draws(11, stream::delays);
    event_queue queue;
    std::vector<event> pending;  // the reference: what is in the queue
    time_ns now = 0;
    const auto push = [&](const event& item) {
        queue.push(item);
        pending.push_back(item);
    };
    for (int i = 0; i < 200; ++i) {
        push({.at = static_cast<time_ns>(draws.below(100)), .node = static_cast<rank_t>(draws.below(50))});
    }
    for (int i = 0; i < 60000 && !pending.empty(); ++i) {
        const auto least = std::min_element(pending.begin(), pending.end(), earlier);
        const event expected = *least;
        pending.erase(least);
        const event got = queue.pop();
        ASSERT_FALSE(earlier(got, expected) || earlier(expected, got)) << "pop " << i;
        ASSERT_GE(got.at, now);
        now = got.at;
        const std::uint64_t pushes = i < 40000 ? draws.below(3) : 0;
        for (std::uint64_t k = 0; k < pushes; ++k) {
            const std::uint64_t choice = draws.below(10);
            const time_ns ahead = choice == 0   ? 0                                     // the current bucket
                                  : choice == 1 ? 4000 + static_cast<time_ns>(draws.below(9000))  // past the window
                                                : 1 + static_cast<time_ns>(draws.below(300));
            push({.at = now + ahead,
                  .payload = draws.below(4),
                  .node = static_cast<rank_t>(draws.below(50)),
                  .kind = static_cast<event_kind>(draws.below(4))});
        }
        ASSERT_EQ(queue.size(), pending.size());
    }
    EXPECT_TRUE(queue.empty());
}

TEST(MessagePool, KeepsBytesAndSenderUntilReleased) {
    message_pool pool;
    std::vector<std::byte> small(20, std::byte{7});
    std::vector<std::byte> medium(100, std::byte{8});
    std::vector<std::byte> large(300, std::byte{9});
    const auto a = pool.store(3, small);
    const auto m = pool.store(4, medium);
    const auto b = pool.store(5, large);
    small.assign(20, std::byte{0});  // the detector's buffer is reused after send()
    EXPECT_EQ(pool.from(a), 3u);
    EXPECT_EQ(pool.from(m), 4u);
    EXPECT_EQ(pool.from(b), 5u);
    ASSERT_EQ(pool.bytes(a).size(), 20u);
    EXPECT_EQ(pool.bytes(a)[19], std::byte{7});
    ASSERT_EQ(pool.bytes(m).size(), 100u);
    EXPECT_EQ(pool.bytes(m)[99], std::byte{8});
    ASSERT_EQ(pool.bytes(b).size(), 300u);
    EXPECT_EQ(pool.bytes(b)[299], std::byte{9});
    pool.release(a);
    pool.release(m);
    pool.release(b);
    EXPECT_EQ(pool.in_use(), 0u);
    const auto c = pool.store(1, std::span<const std::byte>{});
    EXPECT_EQ(c, a);  // recycled
    EXPECT_TRUE(pool.bytes(c).empty());
}

TEST(Network, DelaysStayWithinTauWithoutOnePort) {
    sim_config config;
    config.nodes = 4;
    config.tau_ns = 1000;
    network net(config, 1);
    for (int i = 0; i < 1000; ++i) {
        const time_ns arrival = net.heartbeat_arrival(0, 1, 5000);
        ASSERT_GT(arrival, 5000);
        ASSERT_LE(arrival, 6000);
    }
    EXPECT_LE(net.stats().max_delay_ns, 1000);
}

TEST(Network, OnePortSerialisesEverythingANodeSendsOrReceives) {
    sim_config config;
    config.nodes = 4;
    config.tau_ns = 1000;
    config.one_port = true;
    network net(config, 1);
    // Three messages leaving node 0 at once, then one into node 3: each
    // starts when the previous transfer involving its ends has finished.
    const time_ns first = *net.message_arrival(0, 1, 0);
    const time_ns second = *net.message_arrival(0, 2, 0);
    const time_ns third = *net.message_arrival(0, 3, 0);
    const time_ns into_three = *net.message_arrival(2, 3, 0);
    EXPECT_GT(second, first);
    EXPECT_GT(third, second);
    EXPECT_GT(into_three, third);
    EXPECT_LE(third, 3000);
    // An unrelated pair is not delayed.
    network idle(config, 1);
    EXPECT_LE(*idle.message_arrival(1, 2, 0), 1000);
}

TEST(Network, StalledProcessSendsNothingUntilItResumes) {
    sim_config config;
    config.nodes = 1;  // the stalled process is then rank 0
    config.tau_ns = 1000;
    config.warmup_ns = 100;
    config.faults.stall_ns = 10'000;
    network net(config, 1);
    ASSERT_EQ(net.stalled_process(), 0u);
    EXPECT_LE(net.heartbeat_arrival(0, 0, 50), 1050);            // before the stall
    EXPECT_GT(net.heartbeat_arrival(0, 0, 200), 10'100);         // held until 10,100
    EXPECT_LE(net.heartbeat_arrival(0, 0, 20'000), 21'000);      // after it
}

TEST(Rng, StreamsAreReproducibleAndIndependent) {
    rng a(123, stream::delays);
    rng b(123, stream::delays);
    rng c(123, stream::failures);
    int same_as_other_stream = 0;
    for (int i = 0; i < 1000; ++i) {
        const auto x = a.next();
        EXPECT_EQ(x, b.next());
        same_as_other_stream += x == c.next() ? 1 : 0;
    }
    EXPECT_EQ(same_as_other_stream, 0);
    EXPECT_NE(next_run_seed(1), next_run_seed(2));
    EXPECT_NE(next_run_seed(1), 1u);
}

TEST(Rng, BelowStaysInRangeAndCoversIt) {
    rng draws(9, stream::delays);
    std::vector<int> seen(10, 0);
    for (int i = 0; i < 10000; ++i) {
        const auto value = draws.below(10);
        ASSERT_LT(value, 10u);
        ++seen[value];
    }
    for (int count : seen) {
        EXPECT_GT(count, 800);  // ~1000 each
    }
}

TEST(Duration, ParsesUnitsAndRejectsGarbage) {
    EXPECT_EQ(parse_duration("1us"), 1000);
    EXPECT_EQ(parse_duration("0.1s"), 100'000'000);
    EXPECT_EQ(parse_duration("5ms"), 5'000'000);
    EXPECT_EQ(parse_duration("2min"), 120 * ns_per_s);
    EXPECT_EQ(parse_duration("1y"), static_cast<time_ns>(365.25 * 86400) * ns_per_s);
    EXPECT_FALSE(parse_duration("10"));
    EXPECT_FALSE(parse_duration("s"));
    EXPECT_FALSE(parse_duration("1parsec"));
}

TEST(Bound, MatchesTheoremOne) {
    // f = 1, n = 1024, delta = 60 s, tau = 1 us: 2 (delta + c) + tau + B,
    // B = 8 tau * 10, c = 20 ms (the confirmation window).
    EXPECT_DOUBLE_EQ(stabilization_bound_ns(1, 1024, 60 * ns_per_s, 20'000'000, 1000), 120.04e9 + 1000 + 80000);
    // f = 3: 12 (delta + c) + 3 tau + 6 B.
    EXPECT_DOUBLE_EQ(stabilization_bound_ns(3, 1024, ns_per_s, 20'000'000, 1000), 12.24e9 + 3000 + 6 * 80000);
    EXPECT_EQ(max_tolerated_failures(1024), 9u);
    EXPECT_EQ(max_tolerated_failures(1023), 8u);
    EXPECT_EQ(max_tolerated_failures(1u << 20), 19u);
    EXPECT_EQ(max_tolerated_failures(3), 0u);
}

TEST(Bound, BurstGrowsByOneStepPerProbeWidthOfTheLongestRow) {
    // d = 1: tau + delta + W, then tau, and one broadcast B = 80 us.
    const time_ns delta = ns_per_s, window = ns_per_s / 2, tau = 1000;
    EXPECT_DOUBLE_EQ(burst_bound_ns(1, 1024, 8, delta, window, tau), 1.5e9 + 2000 + 80000);
    // d = 64, w = 8: s = ceil(63 / 8) = 8 steps of 2 delta + W, 9 broadcasts.
    EXPECT_DOUBLE_EQ(burst_bound_ns(64, 1024, 8, delta, window, tau), 1.5e9 + 8 * 2.5e9 + 2000 + 9 * 80000);
    // Without probing every victim of the row costs a step.
    EXPECT_DOUBLE_EQ(burst_bound_ns(64, 1024, 1, delta, window, tau), 1.5e9 + 63 * 2.5e9 + 2000 + 64 * 80000);
}

// W, the wait after the timeout: nothing when the PROBE's window fits in
// its lead, the rest of it when not, the node grace with witnesses on
// other nodes.
TEST(Bound, WitnessesOnAnotherNodeWidenTheWaitToTheNodeGrace) {
    sim_config config;
    config.timeout_ns = ns_per_s;
    config.period_ns = ns_per_s / 10;
    config.per_node = 1;
    EXPECT_EQ(config.declaration_wait_ns(), 0);  // the PROBE went out 20 ms before the timeout
    config.per_node = 4;
    EXPECT_EQ(config.declaration_wait_ns(), ns_per_s / 2);  // half a timeout is more than the grace
    config.timeout_ns = ns_per_s / 20;
    config.period_ns = ns_per_s / 200;
    EXPECT_EQ(config.declaration_wait_ns(), BTL_FT_DEFAULT_NODE_GRACE_NS);
    config.node_grace_ns = 0;
    EXPECT_EQ(config.declaration_wait_ns(), ns_per_s / 40);
    config.witness = false;
    EXPECT_EQ(config.declaration_wait_ns(), 0);
    config.period_ns = config.timeout_ns - 4'000'000;  // a window of 10 ms, a lead of 4 ms
    EXPECT_EQ(config.declaration_wait_ns(), 6'000'000);
}

}  // namespace
}  // namespace btl_ft::sim
