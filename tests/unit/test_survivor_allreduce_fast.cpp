// The survivor allreduce's fast path (FAST in survivor_allreduce.hpp):
// recursive doubling while nothing fails, the tree once something does. Each
// scenario runs in allreduce_world, whose oracle checks that every survivor
// returns the same value and contributors, each counted once.
#include <gtest/gtest.h>

#include <bit>

#include "allreduce_world.hpp"
#include "property_seeds.hpp"
#include "btl_ft/allreduce_wire.hpp"
#include "btl_ft/prng.hpp"

namespace btl_ft::testing {
namespace {

using sim::allreduce_world;
using sim::allreduce_world_options;

constexpr std::size_t fast = 8;  // the world's values are 8 bytes

void expect_clean(allreduce_world& net) {
    EXPECT_TRUE(net.run(1'000'000'000)) << "a live process never returned";
    EXPECT_EQ(net.check(), "");
}

std::uint64_t total(const allreduce_world& net, std::uint64_t allreduce_stats::*counter) {
    std::uint64_t sum = 0;
    for (rank_t r = 0; r < net.process(0).size(); ++r) sum += net.process(r).stats().*counter;
    return sum;
}

// log2 p exchanges per process of the largest power of two p, one more
// each way for a rank folded in: and nothing else.
TEST(SurvivorAllreduceFast, FailureFreeTakesOnlyTheExchanges) {
    for (const rank_t size : {2u, 3u, 4u, 5u, 7u, 8u, 16u, 24u, 64u}) {
        allreduce_world net({.size = size, .calls = 2, .fast_max_bytes = fast});
        expect_clean(net);
        const rank_t power = std::bit_floor(size);
        const std::uint64_t per_call = std::uint64_t{power} * std::countr_zero(power) + 2u * (size - power);
        EXPECT_EQ(net.messages(), 2 * per_call) << size << " processes";
        EXPECT_EQ(total(net, &allreduce_stats::fast_done), 2u * size);
        EXPECT_EQ(total(net, &allreduce_stats::fast_fallbacks), 0u);
        EXPECT_EQ(net.outcome(size - 1, 1).contributors.count(), size);
        EXPECT_EQ(net.outcome(0, 0).decided_by, allreduce_wire::fast_path_decider(size));
    }
}

// Beyond its bounds the call takes the tree: a longer value, a larger job.
TEST(SurvivorAllreduceFast, LongerValuesAndLargerJobsTakeTheTree) {
    allreduce_world longer({.size = 8, .fast_max_bytes = fast - 1});
    expect_clean(longer);
    EXPECT_EQ(longer.messages(), 2u * 7u);
    allreduce_world larger({.size = 65, .fast_max_bytes = fast});
    expect_clean(larger);
    EXPECT_EQ(larger.messages(), 2u * 64u);
}

// A failure known when the call begins: the tree from the start.
TEST(SurvivorAllreduceFast, AFailureKnownAtTheCallTakesTheTree) {
    allreduce_world net({.size = 8, .fast_max_bytes = fast});
    net.fail_before(5, true);
    expect_clean(net);
    EXPECT_EQ(total(net, &allreduce_stats::exchanges_sent), 0u);
    EXPECT_FALSE(net.outcome(0, 0).contributors.contains(5));
}

// In LogP (L 10, o 1) the fast path takes log2 n rounds of L + 2o, less
// the first send's wait: 47 at 16 processes, where the tree takes 60 at its
// best radix.
TEST(SurvivorAllreduceFast, ItTakesLog2NRoundsInLogP) {
    allreduce_world net({.size = 16, .latency_ns = 10, .overhead_ns = 1, .fast_max_bytes = fast});
    expect_clean(net);
    time_ns last = 0;
    for (rank_t r = 0; r < 16; ++r) last = std::max(last, net.outcome(r, 0).at);
    EXPECT_EQ(last, 47);
}

// A process crashing after k of its exchanges, at every k and for every
// rank: some processes have combined everyone and returned, the others fall
// back to the tree, and the root must adopt what the first returned.
TEST(SurvivorAllreduceFast, ACrashAmidTheExchangesLeavesOneResult) {
    std::uint64_t completed = 0, fell_back = 0;
    for (const rank_t size : {4u, 6u, 8u}) {
        for (rank_t victim = 0; victim < size; ++victim) {
            for (std::uint32_t sends = 1; sends <= 4; ++sends) {
                allreduce_world net({.size = size, .seed = victim * 31u + sends, .fast_max_bytes = fast});
                net.crash_after_sends(victim, sends);
                expect_clean(net);
                if (HasFailure()) {
                    ADD_FAILURE() << size << " processes, " << victim << " crashing after " << sends << " sends";
                    return;
                }
                completed += total(net, &allreduce_stats::fast_done);
                fell_back += total(net, &allreduce_stats::fast_fallbacks);
            }
        }
    }
    EXPECT_GT(completed, 0u);
    EXPECT_GT(fell_back, 0u);
}

// A process that returned by the fast path, then falsely suspected: the
// others may decide without it, and no survivor disagrees.
TEST(SurvivorAllreduceFast, ASuspectedProcessThatReturnedLeavesNoDisagreement) {
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        allreduce_world net({.size = 8, .seed = seed, .fast_max_bytes = fast});
        net.suspect_at(static_cast<rank_t>(seed % 8), static_cast<time_ns>(seed * 500));
        expect_clean(net);
    }
}

// The root fails after everyone returned: those still in the next call
// fall back, those with the finished call report it, nobody disagrees.
TEST(SurvivorAllreduceFast, TheRootFailingBetweenCalls) {
    allreduce_world net({.size = 8, .calls = 3, .start_spread_ns = 30'000, .fast_max_bytes = fast});
    net.crash_at(0, 25'000);
    expect_clean(net);
}

// Random failures timed into the exchanges (crashes after a few sends,
// suspicions within the first rounds), 2000 seeds (property_seeds.hpp
// tells how to run others): half the schedules mix processes that returned by the fast
// path with processes that fell back.
TEST(SurvivorAllreduceFast, RandomFailuresDuringTheExchangesLeaveOneResult) {
    const seed_range seeds = seeds_to_run(2000);
    std::uint64_t mixed = 0;
    for (std::uint64_t seed = seeds.first; seed <= seeds.last; ++seed) {
        splitmix64 draw(seed);
        allreduce_world_options options{.seed = seed, .fast_max_bytes = fast};
        options.size = static_cast<rank_t>(2 + draw.below(40));
        options.radix = static_cast<std::uint32_t>(2 + draw.below(4));
        options.calls = static_cast<std::uint32_t>(1 + draw.below(2));
        options.lose_in_flight = draw.below(2) == 1;
        allreduce_world net(options);
        const rank_t failures = static_cast<rank_t>(1 + draw.below(3));
        for (rank_t i = 0; i < failures; ++i) {
            const rank_t victim = static_cast<rank_t>(draw.below(options.size));
            if (draw.below(3) == 0) {
                net.suspect_at(victim, static_cast<time_ns>(draw.below(20'000)));
            } else {
                net.crash_after_sends(victim, static_cast<std::uint32_t>(1 + draw.below(6)));
            }
        }
        const bool ended = net.run(1'000'000'000);
        const std::string problems = net.check();
        ASSERT_TRUE(ended && problems.empty()) << "seed " << seed << ", size " << options.size << "\n" << problems;
        mixed += total(net, &allreduce_stats::fast_done) > 0 && total(net, &allreduce_stats::fast_fallbacks) > 0;
    }
    if (!seeds.replay) {
        EXPECT_GT(mixed, seeds.count() / 4) << mixed << " mixed schedules";
    }
    RecordProperty("mixed", static_cast<int>(mixed));
}

}  // namespace
}  // namespace btl_ft::testing
