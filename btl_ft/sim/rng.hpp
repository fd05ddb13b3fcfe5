// Seeded randomness for ftsim. One 64-bit seed per run; each kind of random
// choice (heartbeat phases, message delays, failures, injected faults) reads
// its own stream derived from that seed, so adding a draw to one stream does
// not shift the numbers another stream sees.
//
// The idea: splitmix64 to derive stream states, xoshiro256** to draw, and
// Lemire's multiply-shift to map a draw onto [0, bound) without modulo bias.
// Rejected: std::mt19937_64 with std::uniform_int_distribution, whose mapping
// differs between standard libraries and so breaks "one seed reproduces".
#pragma once

#include <cmath>
#include <cstdint>

namespace btl_ft::sim {

constexpr std::uint64_t splitmix64(std::uint64_t& state) {
    state += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// The seed of run r + 1 from the seed of run r: run r of seed S is exactly
// run 0 of that derived seed, so a violating run replays with --runs 1.
constexpr std::uint64_t next_run_seed(std::uint64_t seed) {
    std::uint64_t state = seed ^ 0x5d1c0a7e2b3f4d61ULL;
    return splitmix64(state);
}

enum class stream : std::uint64_t { phases = 1, delays = 2, failures = 3, faults = 4, ring = 5, swim = 6, joins = 7 };

// __extension__ keeps -Wpedantic quiet about the GCC/Clang 128-bit type.
__extension__ using u128 = unsigned __int128;

class rng {
public:
    rng(std::uint64_t seed, stream which) {
        std::uint64_t state = seed ^ (static_cast<std::uint64_t>(which) * 0xd6e8feb86659fd93ULL);
        for (auto& word : s_) {
            word = splitmix64(state);
        }
    }

    std::uint64_t next() {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    // Uniform in [0, bound); bound > 0. The tiny bias of the plain
    // multiply-shift (bound / 2^64) is far below anything ftsim measures.
    std::uint64_t below(std::uint64_t bound) {
        return static_cast<std::uint64_t>((static_cast<u128>(next()) * bound) >> 64);
    }

    // Uniform in (0, 1]: never 0, so -log() below is finite.
    double unit_open_closed() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }

    // Exponential with the given mean, for failure inter-arrival times.
    double exponential(double mean) { return -mean * std::log(unit_open_closed()); }

    bool chance(double probability) { return unit_open_closed() <= probability; }

private:
    static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t s_[4]{};
};

}  // namespace btl_ft::sim
