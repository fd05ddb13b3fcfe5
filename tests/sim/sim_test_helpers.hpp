// What the simulator's property tests share: a run's configuration at the
// `lowlat` timings (eta 0.1 s, delta 1 s) and a run's checker details.
#pragma once

#include <string>

#include "config.hpp"
#include "world.hpp"

namespace btl_ft::sim {

inline sim_config lowlat_nodes(rank_t node_count, rank_t per_node, fault_kind fault, std::uint32_t failures) {
    sim_config config;
    config.nodes = node_count * per_node;
    config.per_node = per_node;
    config.scenario_name = "lowlat";
    config.period_ns = ns_per_s / 10;
    config.timeout_ns = ns_per_s;
    config.fault = fault;
    config.failures = failures;
    return config;
}

// The oracle's first findings, one per line, for a failing expectation.
inline std::string details(const run_result& result) {
    std::string text;
    for (const std::string& line : result.details) {
        text += line + "\n";
    }
    return text;
}

}  // namespace btl_ft::sim
