// The stabilization risk of seed 002, Section 3.3, and the largest safe
// delta fttune prints: the Poisson tail against direct sums, the seed's 22 s
// at 256,000 nodes and a 20-year MTBF, and how the bound moves with MTBF,
// risk and size.
#include <gtest/gtest.h>

#include <cmath>

#include "risk.hpp"

namespace btl_ft::sim {
namespace {

constexpr double year_s = 365.25 * 86400;
constexpr time_ns tau_ns = 1000;

TEST(Risk, PoissonTailMatchesDirectSums) {
    EXPECT_NEAR(poisson_more_than(0, 1.0), 1 - std::exp(-1.0), 1e-15);
    EXPECT_NEAR(poisson_more_than(2, 3.0), 1 - std::exp(-3.0) * (1 + 3.0 + 4.5), 1e-14);
    // a far tail, where 1 - CDF would round to 0: P(N > 3) at mean 1e-3
    const double m = 1e-3;
    const double direct = std::exp(-m) * (std::pow(m, 4) / 24 + std::pow(m, 5) / 120 + std::pow(m, 6) / 720);
    EXPECT_NEAR(poisson_more_than(3, m) / direct, 1.0, 1e-6);
    EXPECT_DOUBLE_EQ(poisson_more_than(5, 0.0), 0.0);
    EXPECT_NEAR(poisson_more_than(16, 1e7), 1.0, 1e-12) << "a mean far beyond f: no underflow to 0";
}

TEST(Risk, ReproducesSeed002At256000NodesAndTwentyYears) {
    const risk_advice a = largest_safe_delta(256000, 20 * year_s, 1e-9, tau_ns);
    EXPECT_EQ(a.tolerated, 16u);  // floor(log2 256000) - 1
    EXPECT_GT(a.largest_delta_ns, 21'900'000'000);  // the seed: delta <= 22 s
    EXPECT_LT(a.largest_delta_ns, 22'050'000'000);
    EXPECT_LE(a.risk_at_largest, 1e-9);
}

// The risk depends on lambda * T(M), both linear: delta (the PROBE ends at
// the timeout, so nothing is added to it) scales with the MTBF. So 45
// years gives 21.97 * 45 / 20 = 49.4 s; the seed's text says 60 s, which
// its own formula does not give (noted in docs/tuning.md).
TEST(Risk, TheLargestSafeDeltaScalesWithTheMtbf) {
    const auto twenty = largest_safe_delta(256000, 20 * year_s, 1e-9, tau_ns).largest_delta_ns;
    const auto fortyfive = largest_safe_delta(256000, 45 * year_s, 1e-9, tau_ns).largest_delta_ns;
    EXPECT_NEAR(static_cast<double>(fortyfive) / static_cast<double>(twenty), 45.0 / 20, 1e-4);
}

TEST(Risk, ALargerRiskOrASmallerPlatformAllowsALargerDelta) {
    const auto base = largest_safe_delta(1u << 14, 20 * year_s, 1e-9, tau_ns).largest_delta_ns;
    EXPECT_GT(largest_safe_delta(1u << 14, 20 * year_s, 1e-6, tau_ns).largest_delta_ns, base);
    EXPECT_LT(largest_safe_delta(1u << 18, 20 * year_s, 1e-9, tau_ns).largest_delta_ns, base);
}

TEST(Risk, NoDeltaIsSafeWithoutAToleratedFailure) {
    const risk_advice a = largest_safe_delta(3, 20 * year_s, 1e-9, tau_ns);
    EXPECT_EQ(a.tolerated, 0u);
    EXPECT_EQ(a.largest_delta_ns, 0);
}

}  // namespace
}  // namespace btl_ft::sim
