// One census (detector_census.cpp says when and why one runs): whom it
// PROBEd, who answered, and the verdict once its window closed. Held only
// while one runs, so the simulator's million detectors pay a pointer each.
#pragma once

#include <cstdint>
#include <vector>

#include "btl_ft/dead_set.hpp"
#include "invariants.hpp"

namespace btl_ft {

// Processes a census asks at most: enough that a process reaching half of
// the job is never taken for a clear minority (detector_census.cpp).
inline constexpr rank_t census_sample = 256;

class census {
public:
    // `targets`: sorted, distinct, not empty; PROBEd with `round`, answers
    // awaited until `deadline`.
    census(std::vector<rank_t> targets, std::uint32_t round, time_ns deadline);

    // Whom `self` asks: every process it believes alive (neither failed
    // nor departed) up to census_sample of them, else census_sample drawn
    // at random without repetition, seeded by `self` and `round` so that a
    // simulation replays. Sorted.
    static std::vector<rank_t> choose(rank_t size, rank_t self, const dead_set& dead, const dead_set& departed,
                                      std::uint32_t round);

    const std::vector<rank_t>& targets() const { return targets_; }
    std::uint32_t round() const { return round_; }
    time_ns deadline() const { return deadline_; }  // never once closed
    bool closed() const { return deadline_ == never; }

    // A PROBE_REPLY: true when it answers this census (an answer after the
    // window closed still counts, until the census is dropped).
    bool record(rank_t from, std::uint32_t round);
    void close();

    // Closed, and fewer than a quarter of the asked (itself counted, as it
    // answers) answered. A target that left cleanly or that the runtime
    // confirmed crashed is out of the job and counts neither way.
    bool says_cut_off(const dead_set& departed, const dead_set& crashed) const;

    void check() const;

private:
    std::vector<rank_t> targets_;
    std::vector<std::uint8_t> answered_;  // per target
    std::uint32_t round_ = 0;
    time_ns deadline_ = never;
};

}  // namespace btl_ft
