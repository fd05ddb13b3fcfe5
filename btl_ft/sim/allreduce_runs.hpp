// `ftsim allreduce`: the survivor allreduce at scale, in the shape of seed
// 001's §5.2 (Figs. 8-10): for each configuration, the fault-free latency,
// then R runs with inactive processes (failed before the call) and
// run-time faults (a crash at a random moment of the fault-free call),
// reporting the latency until the last survivor returns and the messages
// per process, and their increase per fault. Every run is checked by the
// world's oracle (consistent, exactly once, every survivor a contributor);
// a violating run is printed with its seed and makes ftsim exit 1.
//
// Time is in ticks: the seed's steps with --latency 10 --overhead 1, or
// nanoseconds when durations carry units.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "allreduce_victims.hpp"
#include "btl_ft/types.hpp"

namespace btl_ft::sim {

struct allreduce_sim_config {
    rank_t nodes = 1024;
    std::uint32_t radix = 0;   // 0: the radix with the lowest fault-free latency
    rank_t inactive = 0;       // failed before the call
    bool inactive_known = true;  // ... and known to all when it starts
    rank_t faults = 0;         // crash during the call
    victim_shape shape = victim_shape::random;  // where the failing are in the tree
    time_ns latency = 10;      // L
    time_ns overhead = 1;      // o
    time_ns detect = 100;      // from a crash to its declaration
    std::uint32_t runs = 10;
    std::uint64_t seed = 1;
    std::string unit = "step";
};

struct allreduce_cli {
    std::vector<rank_t> nodes;
    std::vector<rank_t> inactive{0};
    std::vector<rank_t> faults{0};
    std::vector<victim_shape> shapes{victim_shape::random};
    allreduce_sim_config base;
    bool help = false;
    struct {
        bool latency = false, overhead = false, detect = false;
    } with_units;  // given as durations rather than steps
};

struct allreduce_cli_parse {
    std::optional<allreduce_cli> options;
    std::string error;
};

allreduce_cli_parse parse_allreduce_cli(std::span<const std::string_view> args);
std::string allreduce_help_text();
std::vector<std::string_view> allreduce_known_flags();

// The radix with the lowest fault-free latency for these network settings.
std::uint32_t best_radix(const allreduce_sim_config& config);
// Runs one configuration (its radix resolved) and writes one JSON line; the
// number of runs that broke the oracle (their seeds and what broke go to
// `errors`).
std::uint64_t run_allreduce(const allreduce_sim_config& config, std::ostream& out, std::ostream& errors);

}  // namespace btl_ft::sim
