// Delay drawing and one-port booking for network.hpp.
#include "network.hpp"

#include <algorithm>

#include "btl_ft/assert.hpp"

namespace btl_ft::sim {

network::network(const sim_config& config, std::uint64_t run_seed)
    : per_node_(config.per_node),
      tau_ns_(config.tau_ns),
      min_delay_ns_(config.min_delay_ns),
      faults_(config.faults),
      delays_(run_seed, stream::delays),
      faults_rng_(run_seed, stream::faults) {
    BTL_FT_ASSERT(min_delay_ns_ > 0 && tau_ns_ >= min_delay_ns_, "message delays need 0 < min_delay <= tau");
    if (config.one_port) {
        port_free_at_.assign(config.nodes, 0);
    }
    if (faults_.stall_ns > 0) {
        stalled_ = static_cast<rank_t>(faults_rng_.below(config.nodes));
        stall_from_ = config.warmup();
        stall_until_ = stall_from_ + faults_.stall_ns;
    }
}

time_ns network::transfer(rank_t from, rank_t to, time_ns now) {
    const time_ns sent = now;
    if (stalled(from, now)) {
        ++stats_.stalled_sends;
        now = stall_until_;  // held by the hung process until it resumes
    }
    // With the floor at 1 ns this is 1 + below(tau): the draws of seed 002's (0, tau].
    const auto spread = static_cast<std::uint64_t>(tau_ns_ - min_delay_ns_ + 1);
    const auto delay = min_delay_ns_ + static_cast<time_ns>(delays_.below(spread));
    time_ns start = now;
    if (!port_free_at_.empty()) {
        start = std::max({now, port_free_at_[from], port_free_at_[to]});
        port_free_at_[from] = start + delay;
        port_free_at_[to] = start + delay;
    }
    const time_ns arrival = start + delay;
    stats_.max_delay_ns = std::max(stats_.max_delay_ns, arrival - sent);
    return arrival;
}

time_ns network::heartbeat_arrival(rank_t from, rank_t to, time_ns now) {
    ++stats_.heartbeats;
    stats_.heartbeats_across_nodes += across_nodes(from, to) ? 1 : 0;
    return transfer(from, to, now);
}

std::optional<time_ns> network::message_arrival(rank_t from, rank_t to, time_ns now) {
    ++stats_.messages;
    stats_.messages_across_nodes += across_nodes(from, to) ? 1 : 0;
    if (faults_.drop_message_probability > 0 && faults_rng_.chance(faults_.drop_message_probability)) {
        ++stats_.dropped_messages;
        return std::nullopt;
    }
    return transfer(from, to, now);
}

}  // namespace btl_ft::sim
