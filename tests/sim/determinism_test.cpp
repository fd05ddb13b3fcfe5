// One seed reproduces a simulation: the same seed gives byte-identical JSON,
// a run replays alone from its printed seed, another seed gives other numbers.
#include <gtest/gtest.h>

#include <sstream>

#include "config.hpp"
#include "report.hpp"
#include "rng.hpp"
#include "swim.hpp"

namespace btl_ft::sim {
namespace {

sim_config busy_config() {
    sim_config config;
    config.nodes = 200;
    config.period_ns = ns_per_s / 10;
    config.timeout_ns = ns_per_s;
    config.failures = 4;
    config.window_ns = ns_per_s / 2;
    config.one_port = true;
    config.order = ring_order::shuffle;
    return config;
}

std::string run_json(const sim_config& config, std::uint64_t seed, std::uint32_t runs) {
    std::ostringstream out, err;
    run_configuration(config, seed, runs, out, err);
    return out.str();
}

TEST(Determinism, SameSeedGivesIdenticalJson) {
    const sim_config config = busy_config();
    const std::string first = run_json(config, 77, 3);
    EXPECT_EQ(first, run_json(config, 77, 3));
    EXPECT_NE(first.find("\"seed\":77"), std::string::npos);
    EXPECT_NE(first, run_json(config, 78, 3));
}

TEST(Determinism, EachRunReplaysFromItsOwnSeed) {
    const sim_config config = busy_config();
    const run_result second_run = simulate(config, next_run_seed(77));
    const run_result replay = simulate(config, next_run_seed(77));
    EXPECT_EQ(second_run.stable_ns, replay.stable_ns);
    EXPECT_EQ(second_run.events, replay.events);
    EXPECT_EQ(second_run.totals.notice_messages_sent, replay.totals.notice_messages_sent);
    const run_result first_run = simulate(config, 77);
    EXPECT_NE(first_run.events, second_run.events);
}

TEST(Determinism, SwimIsReproducible) {
    std::ostringstream a, b;
    run_swim(1000, 5, 20, a);
    run_swim(1000, 5, 20, b);
    EXPECT_EQ(a.str(), b.str());
}

}  // namespace
}  // namespace btl_ft::sim
