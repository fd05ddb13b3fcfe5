// Scenario table, run horizon and the Theorem 1 bound.
#include "config.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include "btl_ft/detector.hpp"

namespace btl_ft::sim {

std::optional<scenario> find_scenario(std::string_view name) {
    static constexpr std::array<scenario, 2> table{{
        {"lownoise", 10 * ns_per_s, 60 * ns_per_s},
        {"lowlat", ns_per_s / 10, ns_per_s},
    }};
    for (const scenario& known : table) {
        if (known.name == name) {
            return known;
        }
    }
    return std::nullopt;
}

namespace {
time_ns horizon_for_forced(const sim_config& config) {
    // Generous: twice the worst case Lemma 1 allows even past f_max, so a
    // run that is merely slow is never cut short.
    const time_ns victims = config.strikes_nodes() ? time_ns{config.failures} * config.per_node : config.failures;
    const time_ns f = victims + 2;
    return config.window_ns + 2 * f * (f + 1) * config.timeout_ns + 4 * config.period_ns;
}
}  // namespace

time_ns sim_config::horizon() const {
    if (horizon_ns >= 0) {
        return horizon_ns;
    }
    if (law == failure_law::exponential) {
        return 200 * timeout_ns;
    }
    const time_ns resumed = resume_after_ns > 0 ? window_ns + resume_after_ns : 0;
    return std::max(horizon_for_forced(*this), resumed + settle());
}

detector_config sim_config::detector_base() const {
    detector_config base = make_config(nodes, 0, period_ns, timeout_ns);
    // Processes start at random phases within one period (world::run).
    base.start_skew_ns = period_ns;
    base.propagator = propagator;
    base.probe_width = probe_width;
    base.quorum = quorum;
    base.node_grace_ns = node_grace_ns;
    base.hierarchy = hierarchy;
    return base;
}

std::uint32_t sim_config::effective_probe_width() const { return detector_base().probe_width_used(); }

time_ns sim_config::declaration_wait_ns() const {
    const detector_config base = detector_base();
    const bool remote_witness = witness && per_node > 1;
    const time_ns probe_wait = base.probe_wait_after_timeout();
    return remote_witness ? std::max(base.remote_witness_wait(), probe_wait) : probe_wait;
}

time_ns census_stop_bound_ns(const sim_config& config, time_ns quorum_wait_ns) {
    const time_ns census_window = config.detector_base().census_window();
    return (config.tau_ns + config.timeout_ns + config.declaration_wait_ns()) + census_window + quorum_wait_ns;
}

namespace {
double broadcast_bound_ns(rank_t n, time_ns tau_ns) {
    return 8.0 * static_cast<double>(tau_ns) * std::log2(static_cast<double>(n));
}
}  // namespace

double stabilization_bound_ns(std::uint32_t f, rank_t n, time_ns delta_ns, time_ns window_ns, time_ns tau_ns) {
    const double ff = f;
    const double broadcast_ns = broadcast_bound_ns(n, tau_ns);
    const double confirmed_delta_ns = static_cast<double>(delta_ns + window_ns);
    return ff * (ff + 1) * confirmed_delta_ns + ff * static_cast<double>(tau_ns) +
           ff * (ff + 1) / 2 * broadcast_ns;
}

double burst_bound_ns(rank_t d, rank_t n, std::uint32_t width, time_ns delta_ns, time_ns window_ns, time_ns tau_ns) {
    const double steps = d > 1 ? std::ceil(static_cast<double>(d - 1) / width) : 0.0;
    const auto delta = static_cast<double>(delta_ns), window = static_cast<double>(window_ns);
    const auto tau = static_cast<double>(tau_ns);
    return (tau + delta + window) + steps * (2 * delta + window) + tau + (1 + steps) * broadcast_bound_ns(n, tau_ns);
}

std::uint32_t max_tolerated_failures(rank_t n) {
    if (n < 4) {
        return 0;
    }
    const auto floor_log2 = static_cast<std::uint32_t>(std::bit_width(n) - 1);
    return floor_log2 - 1;
}

}  // namespace btl_ft::sim
