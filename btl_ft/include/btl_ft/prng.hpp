// splitmix64: the small seeded generator behind every random choice of the
// core (the shuffled ring, tie-breaks of the node ring). It must give the
// same sequence at every process for the same seed, on every platform and
// standard library, so it is written out here rather than taken from
// <random>, whose distributions are implementation-defined.
#pragma once

#include <cstdint>

namespace btl_ft {

class splitmix64 {
public:
    explicit constexpr splitmix64(std::uint64_t seed) : state_(seed) {}

    constexpr std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

    // Uniform in [0, bound), bound > 0. Rejection keeps it exactly uniform,
    // so the permutation does not depend on modulo bias details.
    constexpr std::uint64_t below(std::uint64_t bound) {
        const std::uint64_t threshold = (0 - bound) % bound;
        for (;;) {
            const std::uint64_t value = next();
            if (value >= threshold) {
                return value % bound;
            }
        }
    }

private:
    std::uint64_t state_;
};

}  // namespace btl_ft
