// The crash injector: when failures strike and whom they strike. Forced
// failures (seed 002 Figure 4) are planned up front: the first at the end of
// warm-up, the others uniformly within `window_ns`, victims distinct and
// either random or ring-consecutive (each next victim is the ring predecessor
// of the previous one, the worst case of Lemma 1). Exponential failures
// (Figure 5) draw the next inter-arrival time from lambda = alive / mtbf when
// the previous one strikes, and a victim uniformly among the alive.
//
// With node-loss and partition a victim is a node: the plan draws distinct
// nodes the same way and victims() expands each into its processes. A
// partition cuts all its nodes at one instant, as one failure.
//
// The injector only decides; the world applies the fault and the oracle
// judges its consequences, so a new fault pattern never touches a checker.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "btl_ft/ring.hpp"
#include "btl_ft/types.hpp"
#include "config.hpp"
#include "rng.hpp"

namespace btl_ft::sim {

class failure_injector {
public:
    failure_injector(const sim_config& config, const ring& ring, std::uint64_t run_seed);

    // Time of the first failure, or nothing when the plan has none.
    std::optional<time_ns> first_at() const;
    // The processes failure number `index` strikes now.
    std::vector<rank_t> victims(std::uint32_t index, const std::function<bool(rank_t)>& alive);
    // Time of failure `index + 1`, given that `index` struck at `now`.
    std::optional<time_ns> next_at(std::uint32_t index, time_ns now, rank_t alive_count);

private:
    void plan_forced(const ring& ring);
    void plan_nodes(std::uint32_t count);

    const sim_config& config_;
    rng rng_;
    std::vector<time_ns> forced_at_;
    std::vector<rank_t> forced_victims_;
};

}  // namespace btl_ft::sim
