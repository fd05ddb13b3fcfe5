// One simulated run: n detectors (the real btl_ft::detector state machines),
// a network, a crash injector and the oracle, driven by one event queue in
// simulated nanoseconds. Everything random derives from the run seed.
//
// The world is the detectors' transport and sink. Their calls are
// synchronous inside an entry point, so the world knows which process is
// calling (current_) and one adapter serves all n detectors. Rejected: a
// transport object per process, 32 MiB of adapters at 2^20 processes.
//
// Each process has at most one live timer event: its current deadline.
// After every input (heartbeat word, message) the world asks the detector
// whether the deadline moved; an event whose time no longer matches the
// process's deadline is stale and skipped.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "btl_ft/detector.hpp"
#include "btl_ft/ring.hpp"
#include "config.hpp"
#include "event_queue.hpp"
#include "failure_injector.hpp"
#include "message_pool.hpp"
#include "network.hpp"
#include "oracle.hpp"

namespace btl_ft::sim {

struct run_result {
    std::uint64_t seed = 0;
    std::uint32_t failures = 0;                     // crashes injected
    std::uint32_t failures_during_stabilization = 0;  // struck while unstable, after the first
    std::uint32_t bound_failures = 0;               // f of the longest checked period
    time_ns first_known_ns = -1;  // after the first failure: all survivors know it
    time_ns all_known_ns = -1;    // ... know every failure
    time_ns stable_ns = -1;       // ... and the ring is reconnected
    bool bound_checked = false;
    double bound_ratio = 0;       // longest period / T(f)
    violation_counts violations;
    std::vector<std::string> details;
    detector_stats totals;        // summed over every process
    network_stats network;
    std::uint64_t events = 0;
    std::uint64_t peak_queue = 0;
    time_ns end_ns = 0;
};

class world final : private transport, private sink, private process_view {
public:
    world(const sim_config& config, std::uint64_t run_seed);
    ~world() override;
    run_result run();

private:
    // transport
    bool put_heartbeat(rank_t observer, std::uint64_t word) override;
    void send(rank_t peer, std::span<const std::byte> bytes) override;
    process_state local_state(rank_t rank) override;
    // sink
    void on_failed(std::span<const rank_t> ranks) override;
    void on_declared_dead_self(rank_t told_by, const char* reason) override;
    // process_view
    rank_t emitter_of(rank_t process) const override;
    rank_t observer_of(rank_t process) const override;
    std::span<const rank_t> dead_set_of(rank_t process) const override;

    void build_detectors();
    void dispatch(const event& item);
    void on_start(rank_t process);
    void on_tick(const event& item);
    void on_heartbeat(const event& item);
    void on_message(const event& item);
    void on_failure(const event& item);
    void after_input(rank_t process);
    void reschedule(rank_t process, time_ns deadline);
    void after_event();
    run_result collect();

    const sim_config& config_;
    std::uint64_t seed_;
    std::shared_ptr<const ring> ring_;
    network network_;
    failure_injector injector_;
    oracle oracle_;
    event_queue queue_;
    message_pool messages_;
    std::deque<detector> detectors_;  // a deque: detectors cannot move
    std::vector<time_ns> deadline_;   // per process; never = no timer
    std::vector<std::uint8_t> started_;
    time_ns now_ = 0;
    rank_t current_ = no_rank;
    time_ns end_at_ = 0;
    std::uint32_t failures_struck_ = 0;
    bool failures_pending_ = false;
    std::uint64_t events_ = 0;
    std::uint64_t deadline_anomalies_ = 0;
};

// Runs `config` once with `run_seed`; the whole run is a function of both.
run_result simulate(const sim_config& config, std::uint64_t run_seed);

}  // namespace btl_ft::sim
