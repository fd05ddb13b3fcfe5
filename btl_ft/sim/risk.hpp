// Choosing delta from the risk of not stabilizing (seed 002, Section 3.3).
//
// Theorem 1 holds while at most M = floor(log2 n) - 1 failures strike
// before the system is stable again, within T(M). With failures of a
// platform of n nodes striking as a Poisson process of rate n / mu_ind
// (mu_ind: one node's MTBF), the chance that more than M strike within
// T(M) grows with delta; the largest safe delta keeps it under a risk
// (10^-9 in the seed). T is stabilization_bound_ns (config.hpp): this
// detector's bound, with its wait after the timeout, so the advice is
// about the detector that runs.
#pragma once

#include <cstdint>

#include "btl_ft/types.hpp"

namespace btl_ft::sim {

// P(N > f) for N Poisson of mean `mean`: 1 - sum_{k <= f} mean^k e^-mean / k!.
double poisson_more_than(std::uint32_t f, double mean);

struct risk_advice {
    std::uint32_t tolerated = 0;   // M: failures Theorem 1 allows before stabilization
    time_ns largest_delta_ns = 0;  // under it, P(more than M failures within T(M)) < risk
    time_ns stabilization_ns = 0;  // T(M) at that delta
    double risk_at_largest = 0;    // the probability at that delta
};

// 0 tolerated (n < 4): no delta is safe, largest_delta_ns stays 0.
risk_advice largest_safe_delta(rank_t nodes, double mtbf_s, double risk, time_ns tau_ns);

}  // namespace btl_ft::sim
