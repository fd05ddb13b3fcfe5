// The census: how much of the job a process still reaches, asked at once
// instead of learnt one mending step at a time.
//
// The quorum count (detector_quorum.cpp) stops a process once half of the
// job is declared failed, and a process declares a few at each mending
// step (its new emitter and the probe window behind it). A node cut off
// from a large job therefore took minutes to stop (64 processes out of
// 2^17: 322 s of simulated time), and until then it reported what it had
// counted to its application, which could agree and go on as a second set
// of survivors. So a process that declares an emitter failed whose whole
// node was silent (the witness it asked there never answered: a lost or
// cut node, seen from either side) also PROBEs a sample of the processes
// it believes alive: all of them up to census_sample, else census_sample
// drawn at random. When the census window ends and fewer than a quarter
// of the sample (itself counted) answered, the process is clearly with a
// small part of the job and enters the quorum wait at once, exactly as if
// the count had said so. An answer that comes later, until the wait ends,
// still counts.
//
// Why a quarter and not a half: a sample cannot decide near half, so the
// census only ever speaks for a clear minority, and leaves near-half cuts
// to the count, which is exact. A process that reaches half of the job
// sees fewer than a quarter of 256 draws answer 8 standard deviations
// below the mean (a binomial tail under 10^-15). A census also declares
// nobody failed: it only decides whether this process stops.
//
// Only a silent node starts one: on a flat job (no node information, no
// witnesses) every suspicion would, and bursts of a few hundred PROBEs
// from several observers at once held a serialised (one-port) network up
// for longer than the window: live processes then stopped.
//
// Rejected: declaring the silent processes failed (no answer within a
// window proves no single process dead), and counting the whole node of
// a silent witness as lost (the witness may hang alone).
#include <algorithm>

#include "btl_ft/assert.hpp"
#include "btl_ft/prng.hpp"
#include "detector_state.hpp"

namespace btl_ft {

namespace {
// Distinguishes the census's draws from every other use of splitmix64.
constexpr std::uint64_t census_salt = 0x63656e737573ULL;  // "census"
}  // namespace

// As long as a witness on another node gets, and never shorter than the
// PROBE's own window: the answers cross other hosts' schedules.
time_ns detector::state::census_window() const {
    return std::max(remote_witness_wait(config.timeout_ns, config.node_grace_ns), confirm_window());
}

// Everyone we believe alive, or census_sample of them drawn at random
// without repetition (seeded by rank and round, so a simulation replays).
std::vector<rank_t> detector::state::census_targets() const {
    const rank_t others = config.size - 1 - static_cast<rank_t>(dead.size() + departed.size());
    std::vector<rank_t> targets;
    if (others <= census_sample) {
        for (rank_t rank = 0; rank < config.size; ++rank) {
            if (rank != self() && !gone(rank)) {
                targets.push_back(rank);
            }
        }
        return targets;
    }
    splitmix64 draws(census_salt ^ (std::uint64_t{self()} << 32) ^ probe_round);
    while (targets.size() < census_sample) {
        const auto rank = static_cast<rank_t>(draws.below(config.size));
        const auto at = std::lower_bound(targets.begin(), targets.end(), rank);
        if (rank != self() && !gone(rank) && (at == targets.end() || *at != rank)) {
            targets.insert(at, rank);
        }
    }
    return targets;
}

void detector::state::start_census(time_ns now) {
    if (!config.quorum || census) {
        return;
    }
    auto running = std::make_unique<census_state>();
    running->targets = census_targets();
    if (running->targets.empty()) {
        return;
    }
    running->answered.assign(running->targets.size(), 0);
    running->round = ++probe_round;
    running->deadline = now + census_window();
    std::array<std::byte, wire::max_probe_bytes> bytes;
    const auto probe = wire::encode_probe(running->round, bytes);
    for (const rank_t target : running->targets) {
        net.send(target, probe);
    }
    stats.census_probes += running->targets.size();
    ++stats.censuses;
    census = std::move(running);
}

// True when the reply belonged to the census.
bool detector::state::on_census_reply(time_ns now, rank_t from, std::uint32_t round) {
    if (!census || round != census->round) {
        return false;
    }
    const auto at = std::lower_bound(census->targets.begin(), census->targets.end(), from);
    if (at == census->targets.end() || *at != from) {
        return false;
    }
    census->answered[static_cast<std::size_t>(at - census->targets.begin())] = 1;
    if (census->closed() && !census_says_cut_off()) {
        census.reset();  // a late answer lifted the verdict
        check_quorum(now);
    }
    return true;
}

// Called from tick() once the window ended: the verdict stands while it
// says "cut off" (check_quorum then waits and stops); otherwise the census
// is over and the count alone decides again.
void detector::state::close_census(time_ns now) {
    BTL_FT_ASSERT(census && now >= census->deadline, "closing a census before its window ended");
    census->deadline = never;
    if (!check_quorum(now) && !census_says_cut_off()) {
        census.reset();
    }
}

// A target that left cleanly (it answered with LEAVE) is no evidence
// either way, and the runtime's word that one crashed takes it out of the
// job: neither counts.
bool detector::state::census_says_cut_off() const {
    if (!census || !census->closed()) {
        return false;
    }
    std::size_t asked = 1;  // ourselves, who answer
    std::size_t answered = 1;
    for (std::size_t i = 0; i < census->targets.size(); ++i) {
        const rank_t rank = census->targets[i];
        if (departed.contains(rank) || crashed.contains(rank)) {
            continue;
        }
        ++asked;
        answered += census->answered[i];
    }
    return 4 * answered < asked;
}

}  // namespace btl_ft
