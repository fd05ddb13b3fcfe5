// The survivor allreduce's greetings (survivor_allreduce::greet): who each
// process greets, that a greeting is dropped and counted, and that
// greetings change no outcome, on the tree, on the fast path and under
// random failures, checked by the oracle of allreduce_world.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "allreduce_world.hpp"
#include "btl_ft/allreduce_wire.hpp"
#include "btl_ft/prng.hpp"

namespace btl_ft::testing {
namespace {

using sim::allreduce_world;
using sim::allreduce_world_options;

struct recording final : collective_transport {
    void send(rank_t peer, std::span<const std::byte> bytes) override {
        peers.insert(peer);
        allreduce_wire::message message;
        decoded_ok = decoded_ok && allreduce_wire::decode(bytes, {.size = 1000, .max_value_bytes = 8}, message) ==
                                       wire::status::ok &&
                     message.type == allreduce_wire::msg_type::greeting;
    }
    std::set<rank_t> peers;
    bool decoded_ok = true;
};
struct no_operation final : reduce_operation {
    void combine(std::span<std::byte>, std::span<const std::byte>) const override {}
};

std::set<rank_t> greeted_by(rank_t self, rank_t size, std::uint32_t radix) {
    recording transport;
    no_operation operation;
    survivor_allreduce process({.size = size, .self = self, .radix = radix}, transport, operation);
    process.greet();
    EXPECT_TRUE(transport.decoded_ok) << "rank " << self;
    EXPECT_EQ(process.stats().greetings_sent, transport.peers.size());
    return transport.peers;
}

// Radix 4 at 64: 0 is the root, 1 its successor; 4 a child of the root, 5
// a grandchild, 21 three levels down (20, then 16, then 0).
TEST(SurvivorAllreduceGreet, TheParentTheGrandparentAndNearTheRootTheSuccessor) {
    EXPECT_EQ(greeted_by(0, 64, 4), (std::set<rank_t>{}));
    EXPECT_EQ(greeted_by(1, 64, 4), (std::set<rank_t>{0}));
    EXPECT_EQ(greeted_by(4, 64, 4), (std::set<rank_t>{0, 1}));
    EXPECT_EQ(greeted_by(5, 64, 4), (std::set<rank_t>{4, 0, 1}));
    EXPECT_EQ(greeted_by(21, 64, 4), (std::set<rank_t>{20, 16}));
    EXPECT_EQ(greeted_by(0, 1, 2), (std::set<rank_t>{}));
    // a flat tree: every other rank a child of the root
    EXPECT_EQ(greeted_by(7, 8, 8), (std::set<rank_t>{0, 1}));
}

TEST(SurvivorAllreduceGreet, AGreetingIsDroppedAndCounted) {
    recording transport;
    no_operation operation;
    survivor_allreduce process({.size = 4, .self = 0, .radix = 2}, transport, operation);
    std::vector<std::byte> buffer;
    const std::span<const std::byte> greeting = allreduce_wire::encode_greeting(buffer);
    EXPECT_EQ(greeting.size(), wire::header_bytes);
    process.on_message(3, greeting);
    process.begin(std::vector<std::byte>(8));
    process.on_message(2, greeting);
    const std::vector<rank_t> failed{1};
    process.on_failed(failed);
    process.on_message(1, greeting);  // from a process known failed: a greeting still
    EXPECT_EQ(process.stats().received, 3u);
    EXPECT_EQ(process.stats().greetings, 3u);
    EXPECT_EQ(process.stats().malformed, 0u);
    EXPECT_EQ(process.stats().from_failed, 0u);
    EXPECT_EQ(process.status(), allreduce_status::running);
    // with a byte more, malformed
    std::vector<std::byte> longer(greeting.begin(), greeting.end());
    longer.push_back(std::byte{0});
    process.on_message(2, longer);
    EXPECT_EQ(process.stats().malformed, 1u);
}

std::uint64_t total(const allreduce_world& net, std::uint64_t allreduce_stats::*counter) {
    std::uint64_t sum = 0;
    for (rank_t r = 0; r < net.process(0).size(); ++r) sum += net.process(r).stats().*counter;
    return sum;
}

// Failure-free, on the tree and on the fast path: the same calls and
// messages as without greetings, the greetings beside them, each received
// once; none moves a call off the fast path.
TEST(SurvivorAllreduceGreet, GreetingsChangeNoFailureFreeCall) {
    for (const std::size_t fast_max_bytes : {std::size_t{0}, std::size_t{8}}) {
        for (const rank_t size : {2u, 8u, 16u, 33u}) {
            allreduce_world plain({.size = size, .radix = 4, .calls = 2, .fast_max_bytes = fast_max_bytes});
            allreduce_world greeting({.size = size, .radix = 4, .calls = 2, .fast_max_bytes = fast_max_bytes,
                                      .greet = true});
            ASSERT_TRUE(plain.run(1'000'000'000));
            ASSERT_TRUE(greeting.run(1'000'000'000));
            EXPECT_EQ(greeting.check(), "");
            const std::uint64_t sent = total(greeting, &allreduce_stats::greetings_sent);
            EXPECT_GT(sent, 0u);
            EXPECT_EQ(total(greeting, &allreduce_stats::greetings), sent);
            EXPECT_EQ(greeting.messages(), plain.messages() + sent) << size << " processes";
            EXPECT_EQ(total(greeting, &allreduce_stats::fast_done), total(plain, &allreduce_stats::fast_done));
            EXPECT_EQ(total(greeting, &allreduce_stats::fast_fallbacks), 0u);
            EXPECT_EQ(greeting.outcome(size - 1, 1).value, plain.outcome(size - 1, 1).value);
        }
    }
}

// A process and its parent crash at once, and random schedules of up to a
// third of the processes crashing or suspected: consistent and exact with
// greetings in flight.
TEST(SurvivorAllreduceGreet, FailuresWithGreetingsStayConsistentAndExact) {
    for (const std::size_t fast_max_bytes : {std::size_t{0}, std::size_t{8}}) {
        allreduce_world serial({.size = 16, .radix = 4, .fast_max_bytes = fast_max_bytes, .greet = true});
        serial.crash_at(4, 0);
        serial.crash_at(5, 0);
        EXPECT_TRUE(serial.run(1'000'000'000));
        EXPECT_EQ(serial.check(), "");
        EXPECT_EQ(serial.outcome(6, 0).contributors.count(), 14u);
    }
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
        splitmix64 draw(seed);
        allreduce_world_options options{.size = static_cast<rank_t>(2 + draw.below(40)),
                                        .radix = static_cast<std::uint32_t>(2 + draw.below(4)),
                                        .calls = 2,
                                        .seed = seed,
                                        .greet = true};
        options.fast_max_bytes = draw.below(2) == 1 ? 8 : 0;
        allreduce_world net(options);
        for (rank_t i = 0; i < options.size / 3; ++i) {
            const rank_t victim = static_cast<rank_t>(draw.below(options.size));
            if (draw.below(4) == 0) {
                net.suspect_at(victim, static_cast<time_ns>(draw.below(30'000)));
            } else {
                net.crash_at(victim, static_cast<time_ns>(draw.below(30'000)));
            }
        }
        ASSERT_TRUE(net.run(10'000'000'000)) << "seed " << seed << ": a live process never returned";
        ASSERT_EQ(net.check(), "") << "seed " << seed;
    }
}

}  // namespace
}  // namespace btl_ft::testing
