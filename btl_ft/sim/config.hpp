// Everything one ftsim configuration is made of: the scenario timings of
// seed 002 Section 4.1, the network model, the failure injector and the
// optional faults used to show that the checkers can fail. Plain data; the
// command line fills it, the world reads it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "btl_ft/types.hpp"

namespace btl_ft::sim {

inline constexpr time_ns ns_per_s = 1'000'000'000;

struct scenario {
    std::string_view name;
    time_ns period_ns;   // eta
    time_ns timeout_ns;  // delta
};

// lownoise: eta = 10 s, delta = 60 s; lowlat: eta = 0.1 s, delta = 1 s.
std::optional<scenario> find_scenario(std::string_view name);

enum class failure_law : std::uint8_t {
    forced,       // `failures` victims at once or spread over `window_ns`
    exponential,  // first at the end of warm-up, then lambda = alive / mtbf
};
enum class placement : std::uint8_t {
    random,       // distinct victims drawn uniformly
    consecutive,  // a victim, then its ring predecessors: Lemma 1's worst case
};

// Named faults beyond crashes. Any of them voids Theorem 1's preconditions;
// they exist so tests can show each checker failing.
struct fault_config {
    // One live process, drawn at random, stops talking for stall_ns from the
    // first failure time (the end of warm-up): starved of CPU, so its node
    // still sees it running (what a witness answers). What it sends
    // meanwhile leaves when it resumes.
    time_ns stall_ns = 0;
    double drop_message_probability = 0;  // an active message is lost
    bool any() const { return stall_ns > 0 || drop_message_probability > 0; }
};

struct sim_config {
    rank_t nodes = 1024;  // processes
    // Processes per node: ranks k*per_node .. (k+1)*per_node-1 share node k,
    // and a witness there answers for them. 1: every process alone on its
    // node, so no witness is ever asked (the detector without witnesses).
    rank_t per_node = 1;
    std::string scenario_name = "lownoise";
    time_ns period_ns = 10 * ns_per_s;
    time_ns timeout_ns = 60 * ns_per_s;
    time_ns tau_ns = 1000;  // message delays are uniform in (0, tau]
    bool one_port = false;
    propagator_kind propagator = propagator_kind::hba;
    ring_order order = ring_order::rank;
    failure_law law = failure_law::forced;
    std::uint32_t failures = 1;  // forced count, or cap for exponential
    time_ns window_ns = 0;
    placement where = placement::random;
    double mtbf_s = 365.25 * 86400;  // mu_ind, per process
    time_ns warmup_ns = -1;          // -1: 2 eta
    time_ns settle_ns = -1;          // -1: 2 delta + eta
    time_ns horizon_ns = -1;         // -1: derived from the failure plan
    fault_config faults;

    time_ns warmup() const { return warmup_ns >= 0 ? warmup_ns : 2 * period_ns; }
    time_ns settle() const { return settle_ns >= 0 ? settle_ns : 2 * timeout_ns + period_ns; }
    // How long after the first failure a run may take before it is declared
    // not stabilized (a completeness violation).
    time_ns horizon() const;
};

// Theorem 1 (seed 002): T(f) <= f(f+1) delta + f tau + f(f+1)/2 B(n), with
// B(n) = 8 tau log2 n, for f <= floor(log2 n) - 1. Here an observer PROBEs
// its silent emitter and declares it only after a confirmation window c
// (default_confirm_ns): every suspicion follows at least one whole timeout
// and adds at most one window, so delta becomes delta + c.
double stabilization_bound_ns(std::uint32_t f, rank_t n, time_ns delta_ns, time_ns tau_ns);
std::uint32_t max_tolerated_failures(rank_t n);

}  // namespace btl_ft::sim
