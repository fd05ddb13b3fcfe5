// The Poisson tail and the search for the largest safe delta (risk.hpp).
#include "risk.hpp"

#include <algorithm>
#include <cmath>

#include "btl_ft/detector.hpp"
#include "config.hpp"

namespace btl_ft::sim {

// Term by term in log space: mean^k e^-mean / k! underflows long before the
// tail stops mattering (mean in the millions when delta is far too large).
double poisson_more_than(std::uint32_t f, double mean) {
    if (mean <= 0) {
        return 0;
    }
    const auto term = [&](double k) { return std::exp(k * std::log(mean) - mean - std::lgamma(k + 1)); };
    double below = 0;  // P(N <= f)
    for (std::uint32_t k = 0; k <= f; ++k) {
        below += term(k);
    }
    if (below < 0.5) {
        return 1 - below;
    }
    double above = 0;  // summed directly, so a tail of 1e-12 is not lost to rounding
    for (double k = f + 1.0;; ++k) {
        const double t = term(k);
        above += t;
        if (t <= above * 1e-17 || k > f + 10000.0) {
            return above;
        }
    }
}

namespace {
// W of stabilization_bound_ns for delta, with eta a tenth of it as advised.
time_ns wait_after_timeout(time_ns delta_ns) {
    return make_config(2, 0, std::max<time_ns>(1, delta_ns / 10), std::max<time_ns>(2, delta_ns))
        .probe_wait_after_timeout();
}

double risk_at(rank_t nodes, std::uint32_t tolerated, double rate_per_ns, time_ns delta_ns, time_ns tau_ns) {
    const double stabilization = stabilization_bound_ns(tolerated, nodes, delta_ns, wait_after_timeout(delta_ns), tau_ns);
    return poisson_more_than(tolerated, rate_per_ns * stabilization);
}
}  // namespace

risk_advice largest_safe_delta(rank_t nodes, double mtbf_s, double risk, time_ns tau_ns) {
    risk_advice advice;
    advice.tolerated = max_tolerated_failures(nodes);
    if (advice.tolerated == 0 || mtbf_s <= 0) {
        return advice;
    }
    const double rate_per_ns = nodes / (mtbf_s * 1e9);
    // The risk grows with delta: bisect to the nanosecond over [0, 2^52].
    time_ns safe = 0, unsafe = max_interval_ns;
    if (risk_at(nodes, advice.tolerated, rate_per_ns, unsafe, tau_ns) < risk) {
        safe = unsafe;
    }
    while (unsafe - safe > 1) {
        const time_ns mid = safe + (unsafe - safe) / 2;
        (risk_at(nodes, advice.tolerated, rate_per_ns, mid, tau_ns) < risk ? safe : unsafe) = mid;
    }
    advice.largest_delta_ns = safe;
    advice.stabilization_ns = static_cast<time_ns>(
        stabilization_bound_ns(advice.tolerated, nodes, safe, wait_after_timeout(safe), tau_ns));
    advice.risk_at_largest = risk_at(nodes, advice.tolerated, rate_per_ns, safe, tau_ns);
    return advice;
}

}  // namespace btl_ft::sim
