// The survivor allreduce's world: n state machines (the real
// btl_ft::survivor_allreduce), a network, crashes at a time or right after a
// process's k-th send, false suspicions, and failure knowledge reaching each
// survivor as the detector's notices would. ftsim's `allreduce` mode runs it
// at scale, the unit tests script it. Two network models:
//   - delays uniform in [min, max] (the unit tests' default);
//   - LogP (seed 001, §5.2): a message takes L, and each process's port
//     sends or receives one message per overhead o, in order.
// Two knowledge models: each survivor learns a failure after a delay uniform
// in [detect_min, detect_max], or (detect_ns set) detect_ns after it plus
// one hop of L + o per bit by which its rank differs from the failed one, a
// hypercube broadcast as btl_ft's notices travel.
// It runs several consecutive calls and checks every one with an oracle that
// knows the truth:
//   - every process alive at the end returns, and they all return the same
//     value and contributor set;
//   - every process alive at the end is a contributor;
//   - the value is the sum of exactly the contributors' values (each value is
//     a random 64-bit word, so a value counted twice or missed shows);
//   - no process returns a result that leaves itself out.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "btl_ft/survivor_allreduce.hpp"
#include "btl_ft/types.hpp"

namespace btl_ft::sim {

struct allreduce_world_options {
    rank_t size = 8;
    std::uint32_t radix = 2;
    std::uint32_t calls = 1;
    std::uint64_t seed = 1;
    time_ns min_delay_ns = 1'000;
    time_ns max_delay_ns = 10'000;
    // From a crash to each survivor's on_failed().
    time_ns detect_min_ns = 50'000;
    time_ns detect_max_ns = 2'000'000;
    // How far apart the processes begin each call.
    time_ns start_spread_ns = 0;
    // A crashed process's messages still in flight are lost (half of them),
    // as a transport may lose what a dying process queued.
    bool lose_in_flight = false;
    // LogP when overhead_ns > 0: every message takes latency_ns, and a
    // process's port is taken overhead_ns per message sent or received.
    time_ns latency_ns = 0;
    time_ns overhead_ns = 0;
    // >= 0: the overlay knowledge model (see above) instead of the uniform one.
    time_ns detect_ns = -1;
    // The processes' allreduce_config::fast_max_bytes (values are 8 bytes).
    std::size_t fast_max_bytes = 0;
    // Each process greets (survivor_allreduce::greet) as its first call
    // begins, as the MPI shim does by default: the greetings travel as any
    // message, and the model has no connection for them to open.
    bool greet = false;
};

struct call_outcome {
    bool returned = false;
    allreduce_status status = allreduce_status::idle;
    std::vector<std::byte> value;
    rank_ranges contributors;
    rank_t decided_by = no_rank;
    time_ns at = 0;
};

class allreduce_world {
public:
    explicit allreduce_world(const allreduce_world_options& options);
    ~allreduce_world();

    // Failed before the first call: known to every process at its begin,
    // or learnt by each at a random moment of the first detect_max_ns.
    void fail_before(rank_t rank, bool known_to_all);
    void crash_at(rank_t rank, time_ns at);
    // Crashes `rank` right after its `sends`-th message of the whole run.
    void crash_after_sends(rank_t rank, std::uint32_t sends);
    // Every message from `from` to `to` takes `delay_ns`.
    void slow_link(rank_t from, rank_t to, time_ns delay_ns);
    // A false suspicion: from `at` every process (`rank` too) learns that
    // `rank` failed, but it runs on until it learns it, as a process btl_ft
    // declared failed does before it stops. The oracle counts it as failed.
    void suspect_at(rank_t rank, time_ns at);

    // Runs until every live process has ended every call, or `horizon`.
    // True when they all ended.
    bool run(time_ns horizon = 1'000'000'000);

    // The oracle over every call; empty when all holds, else what broke.
    std::string check() const;

    const call_outcome& outcome(rank_t rank, std::uint32_t call) const;
    bool alive(rank_t rank) const;
    const survivor_allreduce& process(rank_t rank) const;
    std::uint64_t messages() const;  // sent, by every process, over the run

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace btl_ft::sim
