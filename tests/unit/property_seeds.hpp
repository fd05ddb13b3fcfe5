// Which seeds a property test runs, read from the environment, so that a
// failing seed replays alone and a long run needs no rebuild.
#pragma once

#include <cstdint>
#include <cstdlib>

namespace btl_ft::testing {

// The seeds a test runs, first to last: BTL_FT_PROPERTY_SEED replays one
// (with BTL_FT_TRACE, event by event), BTL_FT_PROPERTY_SEEDS sets how many
// (a long run by hand), else `fallback` from 1.
struct seed_range {
    std::uint64_t first = 1, last = 1;
    bool replay = false;

    std::uint64_t count() const { return last - first + 1; }
};

inline seed_range seeds_to_run(std::uint64_t fallback) {
    if (const char* one = std::getenv("BTL_FT_PROPERTY_SEED")) {
        const std::uint64_t seed = std::strtoull(one, nullptr, 10);
        return {seed, seed, true};
    }
    const char* count = std::getenv("BTL_FT_PROPERTY_SEEDS");
    return {1, count ? std::strtoull(count, nullptr, 10) : fallback, false};
}

}  // namespace btl_ft::testing
