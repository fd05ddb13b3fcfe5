// One simulated run: n detectors (the real btl_ft::detector state machines),
// a network, a crash injector and the oracle, driven by one event queue in
// simulated nanoseconds. Everything random derives from the run seed.
//
// The world is the detectors' transport and sink. Their calls are
// synchronous inside an entry point, so the world knows which process is
// calling (current_) and one adapter serves all n detectors. Rejected: a
// transport object per process, 32 MiB of adapters at 2^20 processes.
//
// What a fault does to a process lives in world_faults.cpp: a crashed one
// gets nothing more; a hung one is not ticked and what reaches it waits in
// its backlog until it resumes; a cut one runs on, but nothing crosses the
// cut. The world tells the oracle the truth (who failed), never a verdict.
//
// Each process has at most one live timer event: its current deadline.
// After every input (heartbeat word, message) the world asks the detector
// whether the deadline moved; an event whose time no longer matches the
// process's deadline is stale and skipped.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <span>
#include <utility>
#include <string>
#include <vector>

#include "btl_ft/detector.hpp"
#include "btl_ft/membership.hpp"
#include "btl_ft/node_layout.hpp"
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
    std::uint32_t failures = 0;                     // faults injected (a node, a cut: one)
    std::uint32_t victims = 0;                      // processes they struck
    std::uint32_t failures_during_stabilization = 0;  // struck while unstable, after the first
    std::uint32_t bound_failures = 0;               // f of the longest checked period
    time_ns first_known_ns = -1;  // after the first failure: all survivors know it
    time_ns all_known_ns = -1;    // ... know every failure
    time_ns stable_ns = -1;       // ... and the ring is reconnected
    time_ns all_stopped_ns = -1;  // ... every failed process that ran again stopped
    std::uint32_t expected_stops = 0;  // resumed hangs and the losing side of a cut
    std::uint32_t cut_side = 0;        // processes cut off (partition)
    std::uint32_t losing_side = 0;     // processes on the side that must stop
    bool bound_checked = false;
    double bound_ratio = 0;       // longest period / T(f)
    violation_counts violations;
    std::vector<std::string> details;
    detector_stats totals;        // summed over every process
    std::uint64_t survivor_notice_messages = 0;  // notice messages sent by processes alive in the truth
    network_stats network;
    std::uint64_t events = 0;
    std::uint64_t peak_queue = 0;
    std::uint64_t other_epoch_dropped = 0;  // with a join: heartbeats and messages for a membership left behind
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

    std::shared_ptr<const std::vector<std::uint32_t>> node_of_rank() const;
    std::shared_ptr<const ring> make_ring(std::uint64_t seed) const;
    void build_detectors();
    void prefetch_upcoming();
    void dispatch(const event& item);
    void on_start(rank_t process);
    void on_tick(const event& item);
    void on_heartbeat(const event& item);
    void on_message(const event& item);
    void on_failure(const event& item);
    // world_faults.cpp
    enum class mode : std::uint8_t { running, crashed, hung };
    void strike(rank_t victim);
    void cut(const std::vector<rank_t>& victims);
    void on_resume(const event& item);
    void on_runtime_confirm(const event& item);
    void on_node_watch(const event& item);
    void tell_crashed(rank_t process, rank_t victim);  // the runtime or the node watch
    bool reaches(rank_t to) const;  // from current_, across any cut
    bool runs(rank_t process) const { return mode_[process] == mode::running && started_[process] != 0; }
    void hold(const event& item);  // for a hung process
    void maybe_end();
    void after_input(rank_t process);
    void reschedule(rank_t process, time_ns deadline);
    void after_event();
    run_result collect();
    // world_join.cpp: jobs join the first (sim_config::joiners)
    struct join_state;
    detector_config base_config(std::shared_ptr<const std::vector<std::uint32_t>> nodes,
                                std::shared_ptr<const node_layout> layout) const;
    // The detector a process runs now: its own job's or a union's.
    detector& active(rank_t process) { return join_ ? joined_detector(process) : detectors_[process]; }
    const detector& active(rank_t process) const { return join_ ? joined_detector(process) : detectors_[process]; }
    detector& joined_detector(rank_t process) const;
    bool has_detector(rank_t process) const;  // false: a joiner not started yet
    std::uint8_t epoch_of(rank_t process) const;  // the tag of the union it runs
    // A rank of the union `process` runs as a process index, and back
    // (the same number without a join).
    rank_t process_at(rank_t process, rank_t rank) const;
    std::optional<rank_t> rank_for(rank_t process, rank_t other) const;
    member member_of_process(rank_t process) const;
    rank_t process_of_member(member process) const;
    std::uint8_t intern(const membership& of);
    void build_join();
    void schedule_join(time_ns at);
    void start_joiner(rank_t process);
    void start_on(rank_t process, std::uint8_t target, std::span<const known_failure> known);
    std::vector<std::pair<member, failure_kind>> named_failures_of(rank_t process) const;
    std::vector<known_failure> known_in(std::uint8_t target, std::span<const std::pair<member, failure_kind>> named) const;
    void move_to(rank_t process, std::uint8_t target, const std::vector<rank_t>& announce,
                 const std::vector<rank_t>& merged_to);
    void connect_move(rank_t process, rank_t k);
    void follow_heard(rank_t process);
    void schedule_follow(rank_t process);
    void keep_heard(rank_t process, const join_notice& join);
    bool keep_early_join(const event& item);
    void add_join_totals(run_result& result, void (*add)(detector_stats&, const detector_stats&)) const;
    void on_join(const event& item);
    void on_join(rank_t from, const join_notice& join) override;  // sink: a JOIN arrived
    void check_everyone_moved(run_result& result) const;
    bool other_epoch(const event& item);  // counted and dropped

    const sim_config& config_;
    std::uint64_t seed_;
    std::shared_ptr<const std::vector<std::uint32_t>> node_of_rank_;
    std::shared_ptr<const node_layout> layout_;  // with the node hierarchy only
    std::shared_ptr<const ring> ring_;
    network network_;
    failure_injector injector_;
    oracle oracle_;
    event_queue queue_;
    message_pool messages_;
    std::deque<detector> detectors_;  // a deque: detectors cannot move; empty with a join
    std::unique_ptr<join_state> join_;
    std::vector<time_ns> deadline_;   // per process; never = no timer
    std::vector<std::uint8_t> started_;
    std::vector<mode> mode_;
    std::vector<std::uint8_t> side_;  // empty unless cut: 1 = the cut nodes
    std::unordered_map<rank_t, std::vector<event>> backlog_;  // of hung processes
    std::uint32_t resumes_pending_ = 0;
    std::uint32_t victims_ = 0;
    std::uint32_t cut_side_ = 0;
    std::uint32_t losing_side_ = 0;
    std::uint32_t expected_stops_ = 0;
    time_ns now_ = 0;
    rank_t current_ = no_rank;
    time_ns end_at_ = 0;
    std::uint32_t failures_struck_ = 0;
    bool failures_pending_ = false;
    std::uint64_t events_ = 0;
    std::uint64_t deadline_anomalies_ = 0;
    mutable std::vector<rank_t> translated_;  // dead_set_of()'s, as process indices
};

// Runs `config` once with `run_seed`; the whole run is a function of both.
run_result simulate(const sim_config& config, std::uint64_t run_seed);

}  // namespace btl_ft::sim
