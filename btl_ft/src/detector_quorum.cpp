// Partitions: a process cut off with the smaller part of the job stops.
//
// A silent cut splits the processes into sides that each see the other
// fail. Left alone, every side would agree among itself and go on: two sets
// of survivors computing on one job. The side with a majority of the
// processes that were alive when the failures began goes on; a process
// that finds itself with fewer than half of them stops (declared dead by
// itself), and at exactly half the side holding the lowest of those ranks
// wins. One side at most can go on, so the job never forks.
//
// The count is per failure episode, failures less than episode_gap apart,
// not over the job's life: a job that loses one process at a time keeps
// going however many it loses in all. The gap covers how long one side
// takes to find the whole other side: one timeout for the first suspicion,
// then two per mending step, which probing shortens.
//
// The price: real crashes of half the job or more at once, without the
// lowest rank among the survivors, stop the survivors too. Beyond floor(log2
// n) - 1 simultaneous failures the notice overlay guarantees nothing
// anyway; an application that must survive more turns this off.
//
// Rejected: asking the runtime which side it still reaches. PRRTE's job
// control answers at once, before any daemon is reached, and a cut daemon
// notices its lost lifeline only after TCP keepalive, seconds later, while
// the cut processes would already have agreed among themselves.
#include "btl_ft/assert.hpp"
#include "detector_state.hpp"

namespace btl_ft {

namespace {
constexpr time_ns episode_gap_timeouts = 4;
}  // namespace

// Called before a new failure is added to D.
void detector::state::count_failure(time_ns now) {
    if (now >= episode_end) {
        episode_live = config.size - static_cast<rank_t>(dead.size() + departed.size());
        episode_lowest = 0;
        while (gone(episode_lowest)) {
            ++episode_lowest;
        }
        episode_failed = 0;
    }
    ++episode_failed;
    episode_end = now + episode_gap_timeouts * config.timeout_ns;
}

bool detector::state::cut_off() const {
    BTL_FT_ASSERT(episode_failed <= episode_live, "more failures than live processes");
    const std::uint64_t twice_remaining = 2 * static_cast<std::uint64_t>(episode_live - episode_failed);
    return twice_remaining < episode_live || (twice_remaining == episode_live && dead.contains(episode_lowest));
}

bool detector::state::stop_if_cut_off() {
    if (!config.quorum || stopped || !cut_off()) {
        return false;
    }
    declared_dead_self(self(), "cut off from at least half of the processes alive when the failures began "
                               "(quorum lost): stopping rather than going on as a second set of survivors");
    return true;
}

}  // namespace btl_ft
