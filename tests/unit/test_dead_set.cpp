// dead_set: membership, and the alive-list arithmetic that overlays rely on,
// checked against a brute-force alive list.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "btl_ft/dead_set.hpp"
#include "btl_ft/prng.hpp"

namespace btl_ft {
namespace {

TEST(DeadSet, InsertIsIdempotentAndSorted) {
    dead_set set;
    EXPECT_TRUE(set.empty());
    EXPECT_TRUE(set.insert(7));
    EXPECT_TRUE(set.insert(2));
    EXPECT_FALSE(set.insert(7));
    EXPECT_TRUE(set.insert(5));
    EXPECT_EQ(set.size(), 3u);
    EXPECT_TRUE(std::is_sorted(set.ranks().begin(), set.ranks().end()));
    EXPECT_TRUE(set.contains(5));
    EXPECT_FALSE(set.contains(6));
    EXPECT_EQ(set.count_below(6), 2u);
    EXPECT_EQ(set.alive_count(10), 7u);
}

TEST(DeadSet, RejectsUnsortedConstruction) {
    EXPECT_DEATH(dead_set({3, 1}), "strictly increasing");
    EXPECT_DEATH(dead_set({1, 1}), "strictly increasing");
}

TEST(DeadSet, AliveIndexAndAliveAtMatchBruteForce) {
    splitmix64 random(11);
    for (int trial = 0; trial < 300; ++trial) {
        const rank_t universe = 1 + static_cast<rank_t>(random.below(200));
        dead_set set;
        const auto dead_count = random.below(universe);  // at least one alive
        while (set.size() < dead_count) set.insert(static_cast<rank_t>(random.below(universe)));
        std::vector<rank_t> alive;
        for (rank_t rank = 0; rank < universe; ++rank) {
            if (!set.contains(rank)) alive.push_back(rank);
        }
        ASSERT_EQ(alive.size(), set.alive_count(universe));
        for (rank_t index = 0; index < alive.size(); ++index) {
            ASSERT_EQ(set.alive_at(index), alive[index]) << "trial " << trial;
            ASSERT_EQ(set.alive_index(alive[index]), index);
        }
    }
}

TEST(DeadSet, AliveArithmeticAtTwoToTheTwenty) {
    splitmix64 random(12);
    dead_set set;
    while (set.size() < 1000) set.insert(static_cast<rank_t>(random.below(1u << 20)));
    for (int sample = 0; sample < 20000; ++sample) {
        const auto rank = static_cast<rank_t>(random.below(1u << 20));
        if (set.contains(rank)) continue;
        const rank_t index = set.alive_index(rank);
        ASSERT_EQ(set.alive_at(index), rank);
        ASSERT_EQ(index, rank - set.count_below(rank));
    }
    rank_t largest_alive = (1u << 20) - 1;
    while (set.contains(largest_alive)) --largest_alive;
    EXPECT_EQ(set.alive_at(set.alive_count(1u << 20) - 1), largest_alive);
}

TEST(DeadSet, AliveIndexOfAMemberIsAnError) {
    dead_set set({4});
    EXPECT_DEATH((void)set.alive_index(4), "alive_index of a rank in the set");
}

TEST(DeadSet, MergedIsTheUnion) {
    const std::vector<rank_t> a = {1, 4, 9};
    const std::vector<rank_t> b = {2, 4, 10};
    const dead_set both = dead_set::merged(a, b);
    EXPECT_EQ(std::vector<rank_t>(both.ranks().begin(), both.ranks().end()), (std::vector<rank_t>{1, 2, 4, 9, 10}));
    EXPECT_EQ(dead_set::merged({}, {}).size(), 0u);
}

}  // namespace
}  // namespace btl_ft
