// ftsim's command line: parsing into configurations, and the help text.
// Pure functions over the argument list so tests can check every error
// without spawning a process. List-valued flags (--nodes 1024,4096) expand
// into one configuration per combination, each printed as one JSON line.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config.hpp"

namespace btl_ft::sim {

struct cli_options {
    bool help = false;
    bool swim = false;
    std::vector<rank_t> nodes;
    std::vector<std::string> failures;  // counts, or "max" for floor(log2 n) - 1
    std::vector<std::string> scenarios;
    std::vector<propagator_kind> propagators;
    std::uint32_t runs = 10;
    std::uint64_t seed = 1;
    std::optional<time_ns> eta_ns;
    std::optional<time_ns> delta_ns;
    bool exponential = false;
    sim_config base;  // everything that is not a list
};

struct cli_parse {
    std::optional<cli_options> options;
    std::string error;  // names the flag when options is empty
};

cli_parse parse_cli(std::span<const std::string_view> args);
// The configurations to run, in output order; fails on a value that only
// makes sense per configuration (e.g. more failures than processes).
struct cli_expansion {
    std::vector<sim_config> configs;
    std::string error;
};
cli_expansion expand(const cli_options& options);
std::string help_text();
// Every flag parse_cli() accepts, so a test can check --help documents each.
std::vector<std::string_view> known_flags();

// "1us", "0.1s", "10min", "1y" -> nanoseconds.
std::optional<time_ns> parse_duration(std::string_view text);
// A finite number, all of `text`.
std::optional<double> parse_double(std::string_view text);
// "1048576" or "2^20" (exponent at most 26).
std::optional<rank_t> parse_nodes(std::string_view text);

}  // namespace btl_ft::sim
