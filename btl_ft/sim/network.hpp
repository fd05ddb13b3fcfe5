// The network of seed 002 Section 4.1: every message (heartbeat put or
// active message) takes a delay drawn uniformly in (0, tau] (from a floor
// up to tau, for the unit tests' fake network, which uses this model too). With the
// one-port option a process sends and/or receives one message at a time: a
// transfer occupies the ports of both ends for its whole delay and starts
// when both are free. The named faults (a stalled process, lost messages)
// are applied here too, on their own random stream.
//
// Ports are booked greedily at send time, in the order sends happen. A
// receiver-side queue in arrival order would be closer to hardware but needs
// an event per port hand-over; the greedy booking keeps one event per
// message and still serialises everything a node sends or receives.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "btl_ft/types.hpp"
#include "config.hpp"
#include "rng.hpp"

namespace btl_ft::sim {

struct network_stats {
    std::uint64_t heartbeats = 0;
    std::uint64_t messages = 0;
    std::uint64_t heartbeats_across_nodes = 0;  // between processes of different nodes
    std::uint64_t messages_across_nodes = 0;
    std::uint64_t stalled_sends = 0;
    std::uint64_t dropped_messages = 0;
    time_ns max_delay_ns = 0;  // send to arrival, port waits included
};

class network {
public:
    network(const sim_config& config, std::uint64_t run_seed);
    // Arrival time of a heartbeat put from `from` to `to`.
    time_ns heartbeat_arrival(rank_t from, rank_t to, time_ns now);
    // Arrival time of an active message, or nothing when a fault drops it.
    std::optional<time_ns> message_arrival(rank_t from, rank_t to, time_ns now);
    const network_stats& stats() const { return stats_; }
    rank_t stalled_process() const { return stalled_; }
    bool stalled(rank_t process, time_ns now) const {
        return process == stalled_ && now >= stall_from_ && now < stall_until_;
    }

private:
    time_ns transfer(rank_t from, rank_t to, time_ns now);

    bool across_nodes(rank_t from, rank_t to) const { return from / per_node_ != to / per_node_; }

    rank_t per_node_;
    time_ns tau_ns_;
    time_ns min_delay_ns_;
    fault_config faults_;
    rank_t stalled_ = no_rank;
    time_ns stall_from_ = 0;
    time_ns stall_until_ = 0;
    rng delays_;
    rng faults_rng_;
    std::vector<time_ns> port_free_at_;  // empty unless one-port
    network_stats stats_;
};

}  // namespace btl_ft::sim
