// Overlays: every participant is reached when nothing else fails (over many
// job sizes, sources and skip sets), hba still reaches everyone with up to
// k-1 participants crashed during the broadcast (random and adversarial),
// hops are consistent (the route tag names the real sender; nobody sends to
// a skipped rank, to itself or to the source), and the message counts.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>

#include "btl_ft/overlay.hpp"
#include "btl_ft/prng.hpp"
#include "flood_helpers.hpp"

namespace btl_ft {
namespace {

using namespace flood_helpers;

constexpr propagator_kind all_kinds[] = {propagator_kind::hba, propagator_kind::bmg, propagator_kind::chord};

// Runs one broadcast to completion; `crashed` participants drop what they get.
flood_result flood(propagator_kind kind, rank_t size, rank_t source, const dead_set& skip, const std::vector<char>& crashed) {
    const overlay_route route{kind, size, source, skip};
    return flood_with(
        size, source, crashed, [&](rank_t self, route_tag received, std::vector<hop>& out) { overlay_hops(route, self, received, out); },
        [&](const in_flight& message) -> std::string {
            if (message.to >= size || skip.contains(message.to) || message.to == source || message.to == message.from) {
                return "message from " + std::to_string(message.from) + " to " + std::to_string(message.to);
            }
            if (overlay_sender(route, message.to, message.route) != message.from) {
                return "route tag does not name the sender " + std::to_string(message.from);
            }
            return {};
        });
}

TEST(Overlay, EveryKindReachesEveryParticipantForSizesUpTo300) {
    splitmix64 random(1);
    for (rank_t size = 1; size <= 300; ++size) {
        for (int trial = 0; trial < 3; ++trial) {
            const dead_set skip = random_skip(random, size, random.below(size / 3 + 1));
            const rank_t source = random_participant(random, size, skip);
            const std::vector<char> none(size, 0);
            for (const propagator_kind kind : all_kinds) {
                const flood_result result = flood(kind, size, source, skip, none);
                ASSERT_EQ(result.error, "") << name_of(kind) << " size " << size;
                ASSERT_EQ(missed(result.got, skip, none), 0u) << name_of(kind) << " size " << size << " source " << source;
                const rank_t n = skip.alive_count(size);
                ASSERT_LE(result.depth, static_cast<unsigned>(std::bit_width(n)) + 1) << name_of(kind) << " n " << n;
            }
        }
    }
}

TEST(Overlay, EveryKindReachesEveryParticipantAtTwoToTheSixteen) {
    splitmix64 random(2);
    const rank_t size = 1u << 16;
    const dead_set skip = random_skip(random, size, 300);
    const rank_t source = random_participant(random, size, skip);
    const std::vector<char> none(size, 0);
    for (const propagator_kind kind : all_kinds) {
        const flood_result result = flood(kind, size, source, skip, none);
        ASSERT_EQ(result.error, "") << name_of(kind);
        EXPECT_EQ(missed(result.got, skip, none), 0u) << name_of(kind);
        EXPECT_LE(result.depth, 18u) << name_of(kind);
    }
}

TEST(Overlay, HopsAreConsistentWhenSampledAtTwoToTheTwenty) {
    splitmix64 random(3);
    const rank_t size = 1u << 20;
    const dead_set skip = random_skip(random, size, 1000);
    std::vector<hop> hops;
    for (int sample = 0; sample < 3000; ++sample) {
        const rank_t source = random_participant(random, size, skip);
        const rank_t self = random_participant(random, size, skip);
        const propagator_kind kind = all_kinds[sample % 3];
        const overlay_route route{kind, size, source, skip};
        overlay_hops(route, self, self == source ? route_origin : static_cast<route_tag>(1 + random.below(20)), hops);
        ASSERT_FALSE(hops.empty());
        ASSERT_LE(hops.size(), 40u);
        for (const hop& next : hops) {
            ASSERT_FALSE(skip.contains(next.target));
            ASSERT_NE(next.target, self);
            ASSERT_NE(next.target, source);
            ASSERT_EQ(overlay_sender(route, next.target, next.route), self) << name_of(kind);
        }
    }
}

// The claim of seed 002: each hypercube broadcast completes with up to k-1
// participants dying during it (vertex connectivity of Q_k is k).
TEST(OverlayHba, SurvivesUpToKMinusOneCrashedParticipants) {
    splitmix64 random(4);
    for (int trial = 0; trial < 1500; ++trial) {
        const rank_t size = trial % 10 == 0 ? (1u << (6 + trial % 4)) : static_cast<rank_t>(4 + random.below(297));
        const dead_set skip = random_skip(random, size, trial % 3 == 0 ? 0 : random.below(size / 4 + 1));
        const rank_t n = skip.alive_count(size);
        const unsigned k = static_cast<unsigned>(std::bit_width(n)) - 1;
        if (k < 2) continue;
        const rank_t source = random_participant(random, size, skip);
        std::vector<char> crashed(size, 0);
        std::vector<hop> hops;
        if (trial % 2 == 0) {
            // Adversarial: isolate a participant as far as allowed, crashing
            // k-1 of its overlay neighbours (never the source).
            const rank_t victim = random_participant(random, size, skip);
            if (victim == source) continue;
            overlay_hops({propagator_kind::hba, size, source, skip}, victim, route_origin, hops);
            unsigned crashes = 0;
            for (const hop& next : hops) {
                if (crashes + 1 < k) {
                    crashed[next.target] = 1;
                    ++crashes;
                }
            }
        } else {
            for (unsigned crashes = 0; crashes + 1 < k;) {
                const rank_t victim = random_participant(random, size, skip);
                if (victim != source && !crashed[victim]) {
                    crashed[victim] = 1;
                    ++crashes;
                }
            }
        }
        const flood_result result = flood(propagator_kind::hba, size, source, skip, crashed);
        ASSERT_EQ(result.error, "");
        ASSERT_EQ(missed(result.got, skip, crashed), 0u) << "trial " << trial << " n " << n << " k " << k;
    }
}

// A participant whose only overlay links are all crashed is not reached: the
// tolerance test above would catch an overlay that hid a single path.
TEST(OverlayHba, CrashingEveryNeighbourIsolatesAParticipant) {
    const rank_t size = 64;
    const dead_set skip;
    std::vector<hop> hops;
    overlay_hops({propagator_kind::hba, size, 0, skip}, 37, route_origin, hops);
    std::vector<char> crashed(size, 0);
    for (const hop& next : hops) crashed[next.target] = 1;
    const flood_result result = flood(propagator_kind::hba, size, 0, skip, crashed);
    EXPECT_FALSE(result.got[37]);
}

double messages_per_process(propagator_kind kind, rank_t size, rank_t failed) {
    const dead_set skip({failed});
    const std::vector<char> none(size, 0);
    const flood_result result = flood(kind, size, failed == 0 ? 1 : 0, skip, none);
    EXPECT_EQ(missed(result.got, skip, none), 0u);
    return static_cast<double>(result.messages) / skip.alive_count(size);
}

TEST(OverlayCost, MessagesPerProcessForOneFailure) {
    for (const rank_t size : {1u << 10, (1u << 10) + 1, 1u << 16, (1u << 16) + 1}) {
        const double hba = messages_per_process(propagator_kind::hba, size, size / 3);
        const double bmg = messages_per_process(propagator_kind::bmg, size, size / 3);
        const double chord = messages_per_process(propagator_kind::chord, size, size / 3);
        std::printf("[cost] job %u, one failure (%u alive): hba %.2f  bmg %.2f  chord %.2f messages per process\n", size,
                    size - 1, hba, bmg, chord);
        const double log_n = std::log2(static_cast<double>(size - 1));
        EXPECT_LT(chord, 0.6 * bmg);
        EXPECT_GT(chord, 0.8 * log_n);
        EXPECT_LT(chord, 1.1 * log_n + 1);
        EXPECT_LT(bmg, 2 * log_n + 2);
        EXPECT_LT(hba, 2 * log_n + 1);
    }
}

}  // namespace
}  // namespace btl_ft
