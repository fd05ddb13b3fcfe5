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
#include "btl_ft/assert.hpp"
#include "detector_state.hpp"

namespace btl_ft {

void detector::state::start_census(time_ns now) {
    if (!config.quorum || census_run) {
        return;
    }
    std::vector<rank_t> targets = census::choose(config.size, self(), dead, departed, probe_round);
    if (targets.empty()) {
        return;
    }
    census_run = std::make_unique<census>(std::move(targets), next_round(), now + config.census_window());
    std::array<std::byte, wire::max_probe_bytes> bytes;
    const auto probe = wire::encode_probe(census_run->round(), bytes);
    for (const rank_t target : census_run->targets()) {
        net.send(target, probe);
    }
    stats.census_probes += census_run->targets().size();
    ++stats.censuses;
}

// True when the reply belonged to the census.
bool detector::state::on_census_reply(time_ns now, rank_t from, std::uint32_t round) {
    if (!census_run || !census_run->record(from, round)) {
        return false;
    }
    if (census_run->closed() && !census_says_cut_off()) {
        census_run.reset();  // a late answer lifted the verdict
        check_quorum(now);
    }
    return true;
}

// Called from tick() once the window ended: the verdict stands while it
// says "cut off" (check_quorum then waits and stops); otherwise the census
// is over and the count alone decides again.
void detector::state::close_census(time_ns now) {
    BTL_FT_ASSERT(census_run && now >= census_run->deadline(), "closing a census before its window ended");
    census_run->close();
    if (!check_quorum(now) && !census_says_cut_off()) {
        census_run.reset();
    }
}

bool detector::state::census_says_cut_off() const {
    return census_run && census_run->says_cut_off(departed, crashed);
}

}  // namespace btl_ft
