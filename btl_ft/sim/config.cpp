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
    const time_ns f = config.failures + 2;
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
    return horizon_for_forced(*this);
}

double stabilization_bound_ns(std::uint32_t f, rank_t n, time_ns delta_ns, time_ns tau_ns) {
    const double ff = f;
    const double broadcast_ns = 8.0 * static_cast<double>(tau_ns) * std::log2(static_cast<double>(n));
    const double confirmed_delta_ns = static_cast<double>(delta_ns + default_confirm_ns(delta_ns));
    return ff * (ff + 1) * confirmed_delta_ns + ff * static_cast<double>(tau_ns) +
           ff * (ff + 1) / 2 * broadcast_ns;
}

std::uint32_t max_tolerated_failures(rank_t n) {
    if (n < 4) {
        return 0;
    }
    const auto floor_log2 = static_cast<std::uint32_t>(std::bit_width(n) - 1);
    return floor_log2 - 1;
}

}  // namespace btl_ft::sim
