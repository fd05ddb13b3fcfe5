// A second job joins the first (a spawn, a connect/accept): every process
// moves to one detector over the union (membership.hpp, world_join.cpp),
// those of the first job left out of the connect when a JOIN reaches them.
// For random joins and failures after them, every run must be accurate and
// complete, mend the union's ring and stay within the seeds' bounds; a
// joined job of one process, which a ring of its own job could not
// observe, is found like any other process.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "config.hpp"
#include "rng.hpp"
#include "world.hpp"
#include "sim_test_helpers.hpp"

namespace btl_ft::sim {
namespace {

sim_config lowlat_join(rank_t first, rank_t joiners, fault_kind fault, std::uint32_t failures) {
    sim_config config = lowlat_nodes(first + joiners, 1, fault, failures);
    config.joiners = joiners;
    return config;
}

std::string describe(const sim_config& c, std::uint64_t seed) {
    return "seed " + std::to_string(seed) + " n=" + std::to_string(c.nodes) + " joiners=" +
           std::to_string(c.joiners) + " ppn=" + std::to_string(c.per_node) + " hierarchy=" +
           std::string(name_of(c.hierarchy)) + " fault=" + (c.fault == fault_kind::hang ? "hang" : "crash") +
           " f=" + std::to_string(c.failures) + " joined_only=" + std::to_string(c.victims_joined) +
           " participants=" + std::to_string(c.join_participants) + " jobs=" + std::to_string(c.join_jobs);
}

// Draws how many processes fail (victims drawn already: any, or joined
// only), runs `config`, and checks what every random join must hold.
run_result strike_and_check(sim_config& config, rng& draws, std::uint64_t seed) {
    const std::uint32_t most = config.victims_joined ? config.joiners : max_tolerated_failures(config.nodes);
    config.failures = 1 + static_cast<std::uint32_t>(draws.below(std::max<std::uint32_t>(1, most)));
    config.failures = std::min(config.failures, std::max<std::uint32_t>(1, max_tolerated_failures(config.nodes)));
    const run_result result = simulate(config, seed);
    SCOPED_TRACE(describe(config, seed));
    EXPECT_EQ(result.violations.total(), 0u) << details(result);
    EXPECT_GE(result.stable_ns, 0) << "never stabilised";
    EXPECT_EQ(result.victims, config.failures);
    return result;
}

TEST(JoinProperty, RandomJoinsAreAccurateCompleteAndBounded) {
    int bound_checked = 0, joined_struck = 0;
    for (std::uint64_t seed = 1; seed <= 150; ++seed) {
        rng draws(seed, stream::faults);
        static constexpr std::array<rank_t, 5> sizes{1, 2, 3, 8, 24};
        const rank_t per_node = 1 + static_cast<rank_t>(draws.below(4));
        const rank_t first = per_node * (2 + static_cast<rank_t>(draws.below(8)));
        const rank_t joiners = sizes[draws.below(sizes.size())];
        const fault_kind fault = draws.chance(0.5) ? fault_kind::hang : fault_kind::crash;
        sim_config config = lowlat_join(first, joiners, fault, 1);
        config.per_node = per_node;
        config.hierarchy = draws.chance(0.5) ? hierarchy_kind::node : hierarchy_kind::flat;
        config.victims_joined = draws.chance(0.5);
        // all of the first job in the connect, or only its lowest ranks
        config.join_participants = draws.chance(0.5) ? 0 : 1 + static_cast<rank_t>(draws.below(first));
        const run_result result = strike_and_check(config, draws, seed);
        bound_checked += result.bound_checked ? 1 : 0;
        joined_struck += config.victims_joined ? 1 : 0;
    }
    EXPECT_GT(bound_checked, 100);
    EXPECT_GT(joined_struck, 50);
}

// A spawned job of one process that hangs: on the union's ring its
// observer is a process of the first job, and everyone knows at the
// timeout less half a period on average (seed 002's delta - eta/2), as in
// a job that never joined.
// `joins`: the JOIN messages each run must send, and receive.
void expect_lone_child_hang_found_at_the_timeout(rank_t participants, std::uint64_t joins) {
    sim_config config = lowlat_join(8, 1, fault_kind::hang, 1);
    config.victims_joined = true;
    config.join_participants = participants;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        const run_result result = simulate(config, seed);
        SCOPED_TRACE("seed " + std::to_string(seed));
        EXPECT_EQ(result.violations.total(), 0u) << details(result);
        EXPECT_EQ(result.totals.joins_sent, joins);
        EXPECT_EQ(result.totals.joins_received, joins);
        ASSERT_GE(result.all_known_ns, 0) << "the hang was never known by all";
        EXPECT_LE(result.all_known_ns, config.timeout_ns + config.tau_ns * 8 * 4);
        EXPECT_GE(result.all_known_ns, config.timeout_ns - config.period_ns);
    }
}

TEST(JoinProperty, AJoinedJobOfOneProcessThatHangsIsFoundAtTheTimeout) {
    expect_lone_child_hang_found_at_the_timeout(0, 0);
}

// A spawn from MPI_COMM_SELF: only rank 0 of the first job takes part, and
// the lone child hangs. The other 7 follow rank 0's JOIN, each JOIN
// carries what rank 0 knew, and the child's hang is found as if all had
// taken part (the bounds of the test above).
TEST(JoinProperty, ALoneChildOfOneProcessIsWatchedAfterASpawnFromOneParent) {
    expect_lone_child_hang_found_at_the_timeout(1, 7);
}

// Several processes take part: each sends every process left out a JOIN,
// so one of them may die without keeping the others from hearing. Their
// moves stay within the join's settling time, with no false failure.
TEST(JoinProperty, EveryParticipantTellsEveryProcessLeftOut) {
    sim_config config = lowlat_join(32, 4, fault_kind::crash, 0);
    config.failures = 0;
    config.join_participants = 3;
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
        const run_result result = simulate(config, seed);
        SCOPED_TRACE("seed " + std::to_string(seed));
        EXPECT_EQ(result.violations.total(), 0u) << details(result);
        EXPECT_EQ(result.totals.suspicions, 0u);
        EXPECT_EQ(result.totals.joins_sent, 3u * 29u);
        // a JOIN crosses unions: the later ones reach the union's detector,
        // which finds them stale
        EXPECT_EQ(result.totals.joins_received, 3u * 29u);
    }
}

// The first job's processes move at different moments within a period:
// what one sends on its old detector while a peer already runs the new one
// is dropped (its ranks would name other processes), and none of it makes
// a false failure.
TEST(JoinProperty, MessagesOfTheMembershipLeftBehindAreDroppedWithoutHarm) {
    sim_config config = lowlat_join(32, 8, fault_kind::crash, 0);
    config.failures = 0;
    std::uint64_t dropped = 0;
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
        const run_result result = simulate(config, seed);
        EXPECT_EQ(result.violations.total(), 0u) << details(result);
        EXPECT_EQ(result.totals.suspicions, 0u);
        dropped += result.other_epoch_dropped;
    }
    EXPECT_GT(dropped, 0u);
}

// Spawns at once from several processes of the first job (join_jobs):
// each connect makes a union of its own at epoch 1, the others of the
// first job hear each spawner's JOIN, merge the unions they hear into one
// and tell the children, which follow. For random spawns and failures
// after them, every process ends on the union of every job before failures
// strike, and every run is accurate, complete and bounded.
TEST(JoinProperty, SpawnsAtOnceMergeIntoOneUnionEverywhere) {
    int bound_checked = 0, merged_runs = 0;
    for (std::uint64_t seed = 1; seed <= 120; ++seed) {
        rng draws(seed, stream::faults);
        const rank_t jobs = 2 + static_cast<rank_t>(draws.below(3));
        const rank_t per_job = 1 + static_cast<rank_t>(draws.below(3));
        const rank_t per_node = 1 + static_cast<rank_t>(draws.below(3));
        const rank_t first = std::max(jobs, per_node * (2 + static_cast<rank_t>(draws.below(6))));
        const fault_kind fault = draws.chance(0.5) ? fault_kind::hang : fault_kind::crash;
        sim_config config = lowlat_join(first, jobs * per_job, fault, 1);
        config.join_jobs = jobs;
        config.per_node = per_node;
        config.hierarchy = draws.chance(0.5) ? hierarchy_kind::node : hierarchy_kind::flat;
        config.victims_joined = draws.chance(0.5);
        const run_result result = strike_and_check(config, draws, seed);
        SCOPED_TRACE(describe(config, seed));
        // each spawner tells the rest of the first job; the mergers tell
        // the children
        EXPECT_GT(result.totals.joins_sent, static_cast<std::uint64_t>(jobs) * (first - 1));
        bound_checked += result.bound_checked ? 1 : 0;
        merged_runs += result.totals.joins_received > static_cast<std::uint64_t>(jobs) * (first - 1) ? 1 : 0;
    }
    EXPECT_GT(bound_checked, 80);
    EXPECT_GT(merged_runs, 100);
}

// Two parents each spawn a lone child at once, and one child hangs: it is
// watched on the merged union like any process, and everyone knows at the
// timeout's bounds (as for a single spawn, above), with no false failure.
TEST(JoinProperty, ALoneChildOfTwoSpawnsAtOnceThatHangsIsFoundAtTheTimeout) {
    sim_config config = lowlat_join(8, 2, fault_kind::hang, 1);
    config.join_jobs = 2;
    config.victims_joined = true;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        const run_result result = simulate(config, seed);
        SCOPED_TRACE("seed " + std::to_string(seed));
        EXPECT_EQ(result.violations.total(), 0u) << details(result);
        EXPECT_EQ(result.totals.suspicions, 1u);
        ASSERT_GE(result.all_known_ns, 0) << "the hang was never known by all";
        EXPECT_LE(result.all_known_ns, config.timeout_ns + config.tau_ns * 8 * 4);
        EXPECT_GE(result.all_known_ns, config.timeout_ns - config.period_ns);
    }
}

}  // namespace
}  // namespace btl_ft::sim
