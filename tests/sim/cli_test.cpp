// The command line as a function: every flag documented, every bad flag or
// value rejected with a message naming it, lists expanded in order.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli.hpp"

namespace btl_ft::sim {
namespace {

cli_parse parse(std::vector<std::string_view> args) {
    return parse_cli(args);
}

TEST(Cli, HelpDocumentsEveryFlag) {
    const std::string help = help_text();
    for (const std::string_view flag : known_flags()) {
        EXPECT_NE(help.find(std::string(flag) + " "), std::string::npos) << flag << " is not in --help";
    }
    ASSERT_TRUE(parse({"--help"}).options);
    EXPECT_TRUE(parse({"--help"}).options->help);
}

TEST(Cli, ParsesTheDocumentedForm) {
    const auto parsed = parse({"--nodes", "1024", "--failures", "3", "--scenario", "lowlat", "--propagator",
                               "chord", "--runs", "5", "--seed", "0x10", "--one-port", "--tau", "2us"});
    ASSERT_TRUE(parsed.options) << parsed.error;
    const auto expanded = expand(*parsed.options);
    ASSERT_TRUE(expanded.error.empty()) << expanded.error;
    ASSERT_EQ(expanded.configs.size(), 1u);
    const sim_config& config = expanded.configs[0];
    EXPECT_EQ(config.nodes, 1024u);
    EXPECT_EQ(config.failures, 3u);
    EXPECT_EQ(config.period_ns, ns_per_s / 10);
    EXPECT_EQ(config.timeout_ns, ns_per_s);
    EXPECT_EQ(config.propagator, propagator_kind::chord);
    EXPECT_EQ(config.tau_ns, 2000);
    EXPECT_TRUE(config.one_port);
    EXPECT_EQ(parsed.options->runs, 5u);
    EXPECT_EQ(parsed.options->seed, 16u);
}

TEST(Cli, ListsExpandIntoOneConfigurationEach) {
    const auto parsed = parse({"--nodes", "2^10,4096", "--failures", "1,max", "--propagator", "hba,bmg"});
    ASSERT_TRUE(parsed.options) << parsed.error;
    const auto expanded = expand(*parsed.options);
    ASSERT_EQ(expanded.configs.size(), 8u);
    EXPECT_EQ(expanded.configs[0].nodes, 1024u);
    EXPECT_EQ(expanded.configs[1].failures, 9u);  // max = floor(log2 1024) - 1
    EXPECT_EQ(expanded.configs[3].failures, 11u);
    EXPECT_EQ(expanded.configs[4].propagator, propagator_kind::bmg);
}

TEST(Cli, MtbfSelectsExponentialFailures) {
    const auto parsed = parse({"--nodes", "64", "--mtbf", "1y"});
    ASSERT_TRUE(parsed.options);
    const auto expanded = expand(*parsed.options);
    ASSERT_EQ(expanded.configs.size(), 1u);
    EXPECT_EQ(expanded.configs[0].law, failure_law::exponential);
    EXPECT_NEAR(expanded.configs[0].mtbf_s, 365.25 * 86400, 1e-3);
}

struct bad_case {
    std::vector<std::string_view> args;
    std::string_view names;
};

TEST(Cli, BadFlagsAndValuesAreRejectedByName) {
    const std::vector<bad_case> cases{
        {{"--nodes", "64", "--frobnicate"}, "--frobnicate"},
        {{"--nodes", "1"}, "--nodes"},
        {{"--nodes", "lots"}, "--nodes"},
        {{"--nodes", "2^40"}, "--nodes"},
        {{"--nodes", "64", "--failures", "-1"}, "--failures"},
        {{"--nodes", "64", "--scenario", "fast"}, "--scenario"},
        {{"--nodes", "64", "--propagator", "gossip"}, "--propagator"},
        {{"--nodes", "64", "--runs", "0"}, "--runs"},
        {{"--nodes", "64", "--seed", "-3"}, "--seed"},
        {{"--nodes", "64", "--tau", "5"}, "--tau"},
        {{"--nodes", "64", "--ring-order", "zigzag"}, "--ring-order"},
        {{"--nodes", "64", "--failure-placement", "nearby"}, "--failure-placement"},
        {{"--nodes", "64", "--drop-messages", "1.5"}, "--drop-messages"},
        {{"--nodes", "64", "--runs"}, "--runs"},
        {{"--failures", "1"}, "--nodes"},
        {{"--nodes", "64", "--fault", "meteor"}, "--fault"},
        {{"--nodes", "64", "--probe-width", "0"}, "--probe-width"},
        {{"--nodes", "64", "--probe-width", "9"}, "--probe-width"},
        {{"--nodes", "64", "--quorum", "yes"}, "--quorum"},
        {{"--nodes", "64", "--witness", "1"}, "--witness"},
        {{"--nodes", "64", "--runtime-confirms-ms", "-5"}, "--runtime-confirms-ms"},
        {{"--nodes", "64", "--node-watch-ms", "soon"}, "--node-watch-ms"},
        {{"--nodes", "64", "--resume-after", "soon"}, "--resume-after"},
        {{"--nodes", "64", "--ppn", "0"}, "--ppn"},
    };
    for (const bad_case& bad : cases) {
        const auto parsed = parse(bad.args);
        EXPECT_FALSE(parsed.options) << bad.names;
        EXPECT_NE(parsed.error.find(bad.names), std::string::npos) << parsed.error;
    }
}

TEST(Cli, DefaultsAreLibmpis) {
    const auto parsed = parse({"--nodes", "64"});
    ASSERT_TRUE(parsed.options);
    const sim_config config = expand(*parsed.options).configs.at(0);
    EXPECT_EQ(static_cast<int>(config.order), BTL_FT_DEFAULT_RING_ORDER);
    EXPECT_EQ(static_cast<int>(config.propagator), BTL_FT_DEFAULT_PROPAGATOR);
    EXPECT_EQ(config.probe_width, static_cast<std::uint32_t>(BTL_FT_DEFAULT_PROBE_WIDTH));
    EXPECT_EQ(config.quorum, BTL_FT_DEFAULT_QUORUM != 0);
    EXPECT_EQ(config.witness, BTL_FT_DEFAULT_WITNESS != 0);
    EXPECT_EQ(config.fault, fault_kind::crash);
    EXPECT_LT(config.runtime_confirms_ns, 0);
    EXPECT_LT(config.node_watch_ns, 0);
}

TEST(Cli, FaultFlagsParse) {
    const auto parsed = parse({"--nodes", "256", "--ppn", "16", "--fault", "node-loss", "--probe-width", "1",
                               "--quorum", "off", "--witness", "off", "--runtime-confirms-ms", "2.5",
                               "--node-watch-ms", "1.5"});
    ASSERT_TRUE(parsed.options) << parsed.error;
    const auto expanded = expand(*parsed.options);
    ASSERT_TRUE(expanded.error.empty()) << expanded.error;
    const sim_config& config = expanded.configs.at(0);
    EXPECT_EQ(config.fault, fault_kind::node_loss);
    EXPECT_EQ(config.node_count(), 16u);
    EXPECT_EQ(config.probe_width, 1u);
    EXPECT_FALSE(config.quorum);
    EXPECT_FALSE(config.witness);
    EXPECT_EQ(config.runtime_confirms_ns, 2'500'000);
    EXPECT_EQ(config.node_watch_ns, 1'500'000);
}

TEST(Cli, FaultValuesThatOnlyFailPerConfigurationAreRejected) {
    const std::vector<bad_case> cases{
        {{"--nodes", "64", "--ppn", "16", "--fault", "node-loss", "--failures", "4"}, "--failures"},
        {{"--nodes", "64", "--ppn", "128"}, "--ppn"},
        {{"--nodes", "64", "--fault", "crash", "--resume-after", "10s"}, "--resume-after"},
        {{"--nodes", "64", "--fault", "hang", "--resume-after", "1s", "--scenario", "lowlat"}, "--resume-after"},
        {{"--nodes", "64", "--ppn", "8", "--fault", "partition", "--mtbf", "1y"}, "--fault"},
        {{"--nodes", "64", "--join", "64"}, "--join"},
        {{"--nodes", "64", "--join", "8", "--fault", "node-loss", "--ppn", "8"}, "--join"},
        {{"--nodes", "64", "--join", "8", "--fault", "hang", "--resume-after", "200s"}, "--join"},
        {{"--nodes", "64", "--join", "8", "--warmup", "1s"}, "--warmup"},
        {{"--nodes", "64", "--join", "8", "--join-at", "1s"}, "--join-at"},
        {{"--nodes", "64", "--join", "2", "--join-victims", "joined", "--failures", "3"}, "--join-victims"},
        {{"--nodes", "64", "--join-victims", "joined"}, "--join-victims"},
        {{"--nodes", "64", "--join-jobs", "2"}, "--join-jobs"},
        {{"--nodes", "64", "--join", "5", "--join-jobs", "2"}, "--join-jobs"},
        {{"--nodes", "64", "--join", "7", "--join-jobs", "7"}, "--join-jobs"},
        {{"--nodes", "64", "--join", "4", "--join-jobs", "2", "--join-participants", "1"}, "--join-participants"},
    };
    for (const bad_case& bad : cases) {
        const auto parsed = parse(bad.args);
        ASSERT_TRUE(parsed.options) << parsed.error;
        EXPECT_NE(expand(*parsed.options).error.find(bad.names), std::string::npos) << bad.names;
    }
}

TEST(Cli, ValuesThatOnlyFailPerConfigurationAreRejected) {
    const auto too_many = parse({"--nodes", "8", "--failures", "8"});
    ASSERT_TRUE(too_many.options);
    EXPECT_NE(expand(*too_many.options).error.find("--failures"), std::string::npos);
    const auto inverted = parse({"--nodes", "8", "--eta", "2s", "--delta", "1s"});
    ASSERT_TRUE(inverted.options);
    EXPECT_NE(expand(*inverted.options).error.find("--delta"), std::string::npos);
}

}  // namespace
}  // namespace btl_ft::sim
