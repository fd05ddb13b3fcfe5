// A small deterministic network of real detectors for unit tests: a fake
// clock, in-memory message and heartbeat queues with seeded delays, and
// crash / hang / lost-heartbeat injection. Everything is driven from one
// event loop, so a test is a script of "run until t, inject, run, assert".
//
// Its engine is the simulator's: ftsim's event queue, message pool and
// network model (delays uniform between a floor and a ceiling), so there is
// one network model. What stays here is the scripting (crash, hang, cut at
// any moment) and an O(n) scan for the next timer, fine at tens of
// processes: ftsim's world is the place for scale.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "btl_ft/detector.hpp"
#include "btl_ft/ring.hpp"
#include "event_queue.hpp"
#include "message_pool.hpp"
#include "network.hpp"

namespace btl_ft::testing {

inline constexpr time_ns ms = 1'000'000;
inline constexpr time_ns us = 1'000;
// An emitter silent for the timeout (50 ms here) is PROBEd, and declared
// failed only when this window passes without an answer.
inline constexpr time_ns confirm_ns = default_confirm_ns(50 * ms);

struct net_options {
    rank_t size = 8;
    time_ns period_ns = 10 * ms;
    time_ns timeout_ns = 50 * ms;
    time_ns start_skew_ns = 10 * ms;  // how far apart the processes start
    propagator_kind propagator = propagator_kind::hba;
    ring_order order = ring_order::rank;
    std::vector<std::uint32_t> node_of_rank;  // empty: one node
    std::uint64_t seed = 1;
    time_ns min_delay_ns = 100 * us;
    time_ns max_delay_ns = 1 * ms;
    std::size_t max_message_bytes = 4096;
    std::uint32_t probe_width = BTL_FT_DEFAULT_PROBE_WIDTH;
    bool quorum = false;
    time_ns quorum_wait_ns = detector_config{}.quorum_wait_ns;
    // The runtime, as PRRTE under ULFM: -1 = absent. Otherwise a crash is
    // reported (report_failure, crashed) to every process this long after
    // it, and a process an observer declared failed itself is fenced:
    // killed at once, then reported the same way. Neither crosses a cut.
    time_ns runtime_confirm_ns = -1;
};

struct failure_seen {
    time_ns at;
    rank_t rank;
};

class fake_net {
public:
    explicit fake_net(net_options options);
    ~fake_net();
    fake_net(const fake_net&) = delete;
    fake_net& operator=(const fake_net&) = delete;

    void start_all();  // every detector starts at now()
    void run_until(time_ns end);
    void run_for(time_ns duration) { run_until(now_ + duration); }

    void crash(rank_t rank);                     // stops for good (the runtime may tell)
    void hang(rank_t rank, time_ns until);       // like SIGSTOP: input waits, no timers
    void lose_words_to(rank_t rank, time_ns until);  // its heartbeat flag writes are lost
    // From now on nothing crosses between `side` and the other processes
    // (a silent network partition); both sides keep running.
    void cut_off(const std::vector<rank_t>& side);

    detector& at(rank_t rank);
    const ring& ring_order() const { return *ring_; }
    time_ns now() const { return now_; }
    rank_t size() const { return static_cast<rank_t>(nodes_.size()); }
    bool crashed(rank_t rank) const;
    const std::vector<failure_seen>& failures_seen_by(rank_t rank) const;
    bool declared_dead(rank_t rank) const;
    std::uint64_t messages_sent() const { return messages_sent_; }

    // Every survivor (not crashed, not stopped) has exactly `expected` as
    // its failures, each reported once; and the ring of survivors is mended
    // (each one's emitter is its closest live predecessor on the ring).
    ::testing::AssertionResult survivors_agree(const std::vector<rank_t>& expected) const;
    ::testing::AssertionResult ring_mended() const;

private:
    struct node;
    friend struct node;

    // Events are the simulator's: a heartbeat (payload: the word), a
    // message (payload: its message_pool slot) or a runtime report
    // (kind confirm, payload: the crashed rank), `node` the receiver.
    bool crosses_cut(rank_t from, rank_t to) const;
    void runtime_reports(rank_t victim);
    void deliver(const sim::event& item);
    bool live(rank_t rank) const;
    time_ns timer_of(rank_t rank) const;

    std::shared_ptr<const ring> ring_;
    std::vector<std::unique_ptr<node>> nodes_;
    net_options options_;
    sim::sim_config net_config_;  // the network model's part: delays, no faults
    sim::network network_;
    sim::event_queue queue_;
    sim::message_pool messages_;
    time_ns now_ = 0;
    std::uint64_t messages_sent_ = 0;
    std::vector<bool> cut_side_;  // empty: no partition
};

}  // namespace btl_ft::testing
