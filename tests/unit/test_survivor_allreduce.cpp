// The survivor allreduce (seed 001 fed by the detector): its range sets, its
// tree, its wire format, and scripted failure schedules checked by the
// oracle of allreduce_world (consistent, exactly once, every survivor a
// contributor, every survivor returns).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "allreduce_world.hpp"
#include "btl_ft/allreduce_wire.hpp"
#include "btl_ft/dead_set.hpp"
#include "btl_ft/knomial_tree.hpp"
#include "btl_ft/rank_ranges.hpp"

namespace btl_ft::testing {
namespace {

using sim::allreduce_world;
using sim::allreduce_world_options;

rank_ranges ranges(std::vector<rank_range> list) { return rank_ranges(std::move(list)); }

TEST(RankRanges, UniteMergesTouchingRanges) {
    rank_ranges set = ranges({{0, 2}, {5, 7}});
    set.unite(ranges({{2, 5}, {9, 10}}));
    EXPECT_EQ(set, ranges({{0, 7}, {9, 10}}));
    EXPECT_EQ(set.count(), 8u);
    EXPECT_TRUE(set.contains(6));
    EXPECT_FALSE(set.contains(7));
    EXPECT_FALSE(set.contains(8));
}

// unite merges in place: against the union of the ranks, for random
// sets of up to 40 ranks, as bitmaps.
TEST(RankRanges, UniteIsTheUnionOfTheRanks) {
    std::mt19937 random(7);
    const auto set_of = [](std::uint64_t bits) {
        rank_ranges set;
        for (rank_t rank = 0; rank < 40;) {
            if (!(bits >> rank & 1)) {
                ++rank;
                continue;
            }
            const rank_t begin = rank;
            while (rank < 40 && (bits >> rank & 1)) ++rank;
            set.push_back({begin, rank});
        }
        return set;
    };
    for (int run = 0; run < 20000; ++run) {
        const std::uint64_t a = random() & random(), b = random() & random() & (std::uint64_t{random()} << 8);
        rank_ranges set = set_of(a);
        set.unite(set_of(b));
        ASSERT_EQ(set, set_of(a | b)) << std::hex << a << " | " << b;
    }
    rank_ranges self = set_of(0b1101);
    self.unite(self);
    EXPECT_EQ(self, set_of(0b1101));
    self.assign_one(3);
    EXPECT_EQ(self, rank_ranges::of(3));
}

TEST(RankRanges, IncludesAndIntersects) {
    const rank_ranges set = ranges({{0, 4}, {8, 12}});
    EXPECT_TRUE(set.includes(ranges({{1, 3}, {8, 9}})));
    EXPECT_FALSE(set.includes(ranges({{3, 5}})));
    EXPECT_TRUE(set.intersects(ranges({{3, 5}})));
    EXPECT_FALSE(set.intersects(ranges({{4, 8}, {12, 20}})));
}

TEST(RankRanges, CoversWhenEveryGapFailed) {
    const rank_ranges set = ranges({{0, 2}, {4, 6}});
    EXPECT_FALSE(set.covers(0, 8, dead_set({2, 3})));
    EXPECT_TRUE(set.covers(0, 8, dead_set({2, 3, 6, 7})));
    EXPECT_TRUE(set.covers(4, 6, dead_set{}));
    EXPECT_FALSE(set.covers(1, 5, dead_set({2})));
}

TEST(KnomialTree, EverySubtreeIsItsRangeAndItsChildren) {
    for (const std::uint32_t radix : {2u, 3u, 4u, 7u}) {
        for (rank_t size = 1; size <= 70; ++size) {
            const knomial_tree tree(size, radix);
            std::vector<rank_t> children;
            for (rank_t rank = 0; rank < size; ++rank) {
                tree.children(rank, children);
                rank_t covered = 1;
                for (const rank_t child : children) {
                    EXPECT_EQ(tree.parent(child), rank) << "radix " << radix << " size " << size;
                    covered += tree.subtree_end(child) - child;
                }
                EXPECT_EQ(covered, tree.subtree_end(rank) - rank) << "radix " << radix << " size " << size;
                EXPECT_LE(children.size(), (radix - 1) * 7u);
            }
            EXPECT_EQ(tree.subtree_end(0), size);
        }
    }
}

TEST(KnomialTree, BinomialOrderSendsToTheLargestSubtreeFirst) {
    const knomial_tree tree(16, 2);
    std::vector<rank_t> children;
    tree.children(0, children);
    EXPECT_EQ(children, (std::vector<rank_t>{8, 4, 2, 1}));
    tree.children(12, children);
    EXPECT_EQ(children, (std::vector<rank_t>{14, 13}));
    EXPECT_EQ(tree.parent(13), 12u);
}

TEST(AllreduceWire, RoundTripsAndRefusesWhatIsMalformed) {
    allreduce_wire::message in{.type = allreduce_wire::msg_type::result, .sequence = 300, .root = 2,
                               .decided_by = 1, .contributors = ranges({{0, 3}, {200, 260}}),
                               .value = std::vector<std::byte>(8, std::byte{7})};
    std::vector<std::byte> bytes;
    allreduce_wire::encode(in, bytes);
    allreduce_wire::message out;
    const allreduce_wire::limits bounds{.size = 300, .max_value_bytes = 8};
    ASSERT_EQ(allreduce_wire::decode(bytes, bounds, out), wire::status::ok);
    EXPECT_EQ(out.contributors, in.contributors);
    EXPECT_EQ(out.sequence, 300u);
    EXPECT_EQ(out.root, 2u);
    EXPECT_EQ(out.decided_by, 1u);
    EXPECT_EQ(out.value, in.value);

    EXPECT_EQ(allreduce_wire::decode(bytes, {.size = 300, .max_value_bytes = 4}, out), wire::status::bad_value_length);
    EXPECT_EQ(allreduce_wire::decode(bytes, {.size = 250, .max_value_bytes = 8}, out), wire::status::rank_out_of_range);
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
        EXPECT_NE(allreduce_wire::decode(std::span(bytes).first(cut), bounds, out), wire::status::ok) << cut;
    }
    std::vector<std::byte> longer = bytes;
    longer.push_back(std::byte{0});
    EXPECT_EQ(allreduce_wire::decode(longer, bounds, out), wire::status::trailing_bytes);
    std::vector<std::byte> foreign = bytes;
    foreign[1] = std::byte{0x74};  // the detector's magic
    EXPECT_EQ(allreduce_wire::decode(foreign, bounds, out), wire::status::bad_magic);
    // A second range touching the first: gap 0.
    const std::vector<std::byte> touching = {std::byte{0x66}, std::byte{0x72}, std::byte{allreduce_wire::version}, std::byte{1},
                                             std::byte{1},    std::byte{2},    std::byte{0}, std::byte{2},
                                             std::byte{0},    std::byte{1},    std::byte{0}};
    EXPECT_EQ(allreduce_wire::decode(touching, {.size = 10, .max_value_bytes = 0}, out), wire::status::unsorted);

    // The fast path: an exchange's step where a result's root goes (at most
    // 33), and a result it decided, by the size of the job.
    in.type = allreduce_wire::msg_type::exchange;
    in.root = 33;
    allreduce_wire::encode(in, bytes);
    ASSERT_EQ(allreduce_wire::decode(bytes, bounds, out), wire::status::ok);
    EXPECT_EQ(out.type, allreduce_wire::msg_type::exchange);
    EXPECT_EQ(out.root, 33u);
    in.root = 34;
    allreduce_wire::encode(in, bytes);
    EXPECT_EQ(allreduce_wire::decode(bytes, bounds, out), wire::status::rank_out_of_range);
    in.type = allreduce_wire::msg_type::hold;
    in.decided_by = allreduce_wire::fast_path_decider(300);
    allreduce_wire::encode(in, bytes);
    ASSERT_EQ(allreduce_wire::decode(bytes, bounds, out), wire::status::ok);
    EXPECT_EQ(out.decided_by, 300u);
    in.decided_by = 301;
    allreduce_wire::encode(in, bytes);
    EXPECT_EQ(allreduce_wire::decode(bytes, bounds, out), wire::status::rank_out_of_range);
}

void expect_clean(allreduce_world& net, time_ns horizon = 1'000'000'000) {
    EXPECT_TRUE(net.run(horizon)) << "a live process never returned";
    EXPECT_EQ(net.check(), "");
}

// Up, then down: the root's PREPARE to its successor is the successor's
// RESULT, and the successor sends the root's.
TEST(SurvivorAllreduce, FailureFreeTakesTwoMessagesPerProcess) {
    for (const std::uint32_t radix : {2u, 3u, 4u}) {
        for (const rank_t size : {1u, 2u, 7u, 16u, 33u}) {
            allreduce_world net({.size = size, .radix = radix});
            expect_clean(net);
            EXPECT_EQ(net.messages(), 2u * (size - 1)) << "radix " << radix << " size " << size;
            EXPECT_EQ(net.outcome(0, 0).contributors.count(), size);
        }
    }
}

TEST(SurvivorAllreduce, ConsecutiveCallsWithSkewedStartsStayApart) {
    allreduce_world net({.size = 13, .radix = 3, .calls = 6, .start_spread_ns = 50'000});
    expect_clean(net);
    EXPECT_EQ(net.messages(), 6u * 2u * 12u);
}

// Failed before the call, at the root, an inner process and a leaf; known
// to everybody at the call, or learnt by each at a random moment in it.
TEST(SurvivorAllreduce, FailedBeforeTheCallAreLeftOut) {
    for (const bool known : {true, false}) {
        for (const rank_t victim : {0u, 4u, 8u, 15u}) {
            allreduce_world net({.size = 16, .seed = victim + 7});
            net.fail_before(victim, known);
            expect_clean(net);
            EXPECT_FALSE(net.outcome(1, 0).contributors.contains(victim));
            EXPECT_EQ(net.outcome(1, 0).contributors.count(), 15u);
        }
    }
}

// An inner process dies right after sending its partial up, and its
// children learn it at once and re-send theirs to the root around it. When
// a child's arrives first, the late partial of the dead process meets it and
// is dropped; when it arrives last, the child's is already in. Either way
// nothing counts twice. Over 40 seeds both orders happen.
TEST(SurvivorAllreduce, AnInnerProcessDyingAfterItsPartialCountsNothingTwice) {
    std::uint64_t dropped = 0;
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        allreduce_world net({.size = 16, .seed = seed, .max_delay_ns = 100'000, .detect_min_ns = 0, .detect_max_ns = 50'000});
        net.crash_after_sends(8, 1);
        expect_clean(net);
        dropped += net.process(0).stats().overlapping;
    }
    EXPECT_GT(dropped, 0u);
}

// Crashing before its partial: its subtree goes around it.
TEST(SurvivorAllreduce, AnInnerProcessDyingBeforeItsPartialIsBypassed) {
    allreduce_world net({.size = 16});
    net.crash_at(8, 0);
    expect_clean(net);
    EXPECT_FALSE(net.outcome(0, 0).contributors.contains(8));
    EXPECT_EQ(net.outcome(0, 0).contributors.count(), 15u);
}

// The root decides, sends RESULT to its first child and dies, its other
// RESULTs never leave: the survivors must all return the decision the first
// child holds, through the next root.
TEST(SurvivorAllreduce, ARootDyingMidBroadcastIsReplacedWithoutANewValue) {
    for (const bool lose : {false, true}) {
        allreduce_world net({.size = 16, .lose_in_flight = lose});
        net.crash_after_sends(0, 1);
        expect_clean(net);
        EXPECT_GE(net.process(1).stats().root_takeovers + net.process(8).stats().holds_sent, 0u);
    }
}

TEST(SurvivorAllreduce, ARootDyingBeforeDecidingIsReplaced) {
    allreduce_world net({.size = 16});
    net.crash_at(0, 3'000);
    expect_clean(net);
    EXPECT_EQ(net.outcome(1, 0).decided_by, 1u);
    EXPECT_FALSE(net.outcome(1, 0).contributors.contains(0));
}

// The root (0) and its successor (1) fail once the decision is out; it
// reaches 12 only, through 8, which fails too, over a slow link. By then 12
// knows all three failed and has sent its partial to the new root (2):
// it must drop the late decision, which 2 is not computing with.
TEST(SurvivorAllreduce, ALateResultOfAFailedRootIsDroppedAfterMovingOn) {
    allreduce_world net({.size = 16, .min_delay_ns = 10'000, .max_delay_ns = 10'000, .detect_min_ns = 50'000,
                       .detect_max_ns = 50'000});
    net.crash_after_sends(0, 1);  // PREPARE to 1
    net.crash_after_sends(1, 2);  // its partial, RESULT to 8 (its first, the largest subtree)
    net.crash_after_sends(8, 2);  // its partial, RESULT to 12
    net.slow_link(8, 12, 5'000'000);
    expect_clean(net);
    EXPECT_EQ(net.outcome(12, 0).decided_by, 2u);
    EXPECT_EQ(net.process(12).stats().from_failed, 1u);
}

// Serial faults: a process, then its parent, then the root.
TEST(SurvivorAllreduce, SerialFaultsUpTheTree) {
    allreduce_world net({.size = 32, .calls = 2});
    net.crash_at(13, 0);
    net.crash_at(12, 1'000'000);
    net.crash_at(8, 2'000'000);
    net.crash_at(0, 3'000'000);
    expect_clean(net);
}

TEST(SurvivorAllreduce, ParallelFaultsInDifferentSubtrees) {
    allreduce_world net({.size = 32, .radix = 4});
    for (const rank_t victim : {4u, 9u, 17u, 30u}) net.crash_at(victim, 2'000);
    expect_clean(net);
}

// A process the others declared failed, running on until it learns it,
// never returns a result that leaves it out.
TEST(SurvivorAllreduce, AFalselySuspectedProcessIsExcludedNotInconsistent) {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        allreduce_world net({.size = 12, .seed = seed});
        net.suspect_at(static_cast<rank_t>(seed % 12), 0);
        expect_clean(net);
    }
}

// One process alone, its sends going nowhere: for what it counts and says.
struct nowhere final : collective_transport {
    void send(rank_t, std::span<const std::byte>) override {}
};
struct no_operation final : reduce_operation {
    void combine(std::span<std::byte>, std::span<const std::byte>) const override {}
};

TEST(SurvivorAllreduce, MalformedAndForeignMessagesAreDroppedAndCounted) {
    nowhere transport;
    no_operation operation;
    survivor_allreduce process({.size = 4, .self = 1, .radix = 2}, transport, operation);
    const std::vector<std::byte> garbage(5, std::byte{0x66});
    process.on_message(0, garbage);
    process.on_message(9, garbage);
    std::vector<std::byte> buffer;
    process.on_message(0, allreduce_wire::encode(allreduce_wire::msg_type::partial, 7, 0, 0, rank_ranges::of(0),
                                                 std::vector<std::byte>(8), buffer));  // a call far ahead
    EXPECT_EQ(process.stats().received, 3u);
    EXPECT_EQ(process.stats().malformed, 2u);
    EXPECT_EQ(process.stats().out_of_sequence, 1u);
    // A value of another length than the call's.
    process.begin(std::vector<std::byte>(8));
    process.on_message(3, allreduce_wire::encode(allreduce_wire::msg_type::partial, 1, 0, 0, rank_ranges::of(3),
                                                 std::vector<std::byte>(4), buffer));
    EXPECT_EQ(process.stats().malformed, 3u);
    EXPECT_EQ(process.status(), allreduce_status::running);
}

// What a stuck call prints at mpi_ft_verbose 1: the root it waits on, the
// failed ranks, and per call what is combined and where its partial went.
TEST(SurvivorAllreduce, DescribeNamesWhatACallWaitsFor) {
    nowhere transport;
    no_operation operation;
    survivor_allreduce process({.size = 8, .self = 2, .radix = 4}, transport, operation);
    EXPECT_EQ(process.describe(), "root 0, successor 3, failed {}, 0 early");
    process.begin(std::vector<std::byte>(8));
    EXPECT_EQ(process.describe(), "root 0, successor 3, failed {}, 0 early; call 1: combined {2}, partial {2} to 0");
    const std::vector<rank_t> failed{0, 3};
    process.on_failed(failed);
    EXPECT_EQ(process.describe(), "root 1, successor 4, failed {0,3}, 0 early; call 1: combined {2}, partial {2} to 1");
}

}  // namespace
}  // namespace btl_ft::testing
