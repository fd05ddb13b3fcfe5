// Planning and drawing of crashes for failure_injector.hpp.
#include "failure_injector.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "btl_ft/assert.hpp"

namespace btl_ft::sim {

failure_injector::failure_injector(const sim_config& config, const ring& ring, std::uint64_t run_seed)
    : config_(config), rng_(run_seed, stream::failures) {
    if (config.law == failure_law::forced) {
        plan_forced(ring);
    }
}

void failure_injector::plan_forced(const ring& ring) {
    const rank_t units = config_.strikes_nodes() ? config_.node_count() : config_.nodes;
    const std::uint32_t count = std::min<std::uint32_t>(config_.failures, units - 1);
    if (count == 0) {
        return;
    }
    forced_at_.push_back(config_.warmup());
    if (config_.strikes_nodes()) {
        plan_nodes(count);
        return;
    }
    for (std::uint32_t i = 1; i < count; ++i) {
        const auto offset = static_cast<time_ns>(rng_.below(static_cast<std::uint64_t>(config_.window_ns) + 1));
        forced_at_.push_back(config_.warmup() + offset);
    }
    std::sort(forced_at_.begin(), forced_at_.end());

    // Victims among every process, or among the joined job's only.
    const rank_t lowest = config_.victims_joined ? config_.first_joined() : 0;
    const auto draw = [&] { return lowest + static_cast<rank_t>(rng_.below(config_.nodes - lowest)); };
    const rank_t first = draw();
    forced_victims_.push_back(first);
    if (config_.where == placement::consecutive) {
        for (std::uint32_t i = 1; i < count; ++i) {
            forced_victims_.push_back(ring.predecessor(forced_victims_.back()));
        }
        return;
    }
    if (config_.where == placement::consecutive_ranks) {
        for (std::uint32_t i = 1; i < count; ++i) {
            const rank_t previous = forced_victims_.back();
            forced_victims_.push_back(previous == 0 ? config_.nodes - 1 : previous - 1);
        }
        return;
    }
    std::unordered_set<rank_t> chosen{first};
    while (forced_victims_.size() < count) {
        const rank_t candidate = draw();
        if (chosen.insert(candidate).second) {
            forced_victims_.push_back(candidate);
        }
    }
}

// Distinct random nodes; a partition cuts them all at the first instant.
void failure_injector::plan_nodes(std::uint32_t count) {
    const rank_t nodes = config_.node_count();
    const std::uint32_t strikes = config_.fault == fault_kind::partition ? 1 : count;
    for (std::uint32_t i = 1; i < strikes; ++i) {
        const auto offset = static_cast<time_ns>(rng_.below(static_cast<std::uint64_t>(config_.window_ns) + 1));
        forced_at_.push_back(config_.warmup() + offset);
    }
    std::sort(forced_at_.begin(), forced_at_.end());
    std::unordered_set<rank_t> chosen;
    while (forced_victims_.size() < count) {
        const auto node = static_cast<rank_t>(rng_.below(nodes));
        if (chosen.insert(node).second) {
            forced_victims_.push_back(node);
        }
    }
}

std::optional<time_ns> failure_injector::first_at() const {
    if (config_.law == failure_law::exponential) {
        return config_.failures > 0 ? std::optional<time_ns>(config_.warmup()) : std::nullopt;
    }
    if (forced_at_.empty()) {
        return std::nullopt;
    }
    return forced_at_.front();
}

std::vector<rank_t> failure_injector::victims(std::uint32_t index, const std::function<bool(rank_t)>& alive) {
    if (config_.law == failure_law::exponential) {
        // Rejection sampling: the dead are a vanishing fraction of the job.
        for (;;) {
            const auto candidate = static_cast<rank_t>(rng_.below(config_.nodes));
            if (alive(candidate)) {
                return {candidate};
            }
        }
    }
    BTL_FT_ASSERT(index < forced_at_.size(), "a forced failure beyond the plan");
    if (!config_.strikes_nodes()) {
        return {forced_victims_[index]};
    }
    // A partition cuts every planned node at once; a node loss one node.
    const bool all = config_.fault == fault_kind::partition;
    std::vector<rank_t> struck;
    for (std::size_t i = all ? 0 : index; i < (all ? forced_victims_.size() : index + 1); ++i) {
        const rank_t first = forced_victims_[i] * config_.per_node;
        for (rank_t process = first; process < std::min(first + config_.per_node, config_.nodes); ++process) {
            struck.push_back(process);
        }
    }
    return struck;
}

std::optional<time_ns> failure_injector::next_at(std::uint32_t index, time_ns now, rank_t alive_count) {
    if (config_.law == failure_law::forced) {
        if (index + 1 < forced_at_.size()) {
            return forced_at_[index + 1];
        }
        return std::nullopt;
    }
    if (index + 1 >= config_.failures || alive_count < 2) {
        return std::nullopt;
    }
    const double mean_ns = config_.mtbf_s * static_cast<double>(ns_per_s) / alive_count;
    const double gap_ns = std::ceil(rng_.exponential(mean_ns));
    const double limit = 9.0e18 - static_cast<double>(now);  // far beyond any horizon
    return now + static_cast<time_ns>(std::min(gap_ns, limit));
}

}  // namespace btl_ft::sim
