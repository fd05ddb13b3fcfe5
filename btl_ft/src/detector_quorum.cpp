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
// Only unconfirmed silence counts. A crash the runtime confirmed (its
// daemon reaped the process) is proof of death, not of a cut: it leaves the
// count and the base alike, so a job that loses processes one after the
// other, however quickly, never stops itself. Transport errors do count:
// a transport cannot tell a dead peer from a link that went down. The
// count is per failure episode (failures less than episode_gap apart), and
// a shrink that every live process answered settles the episode.
//
// The count decides nothing at once. A process that finds itself cut off
// holds its new failures back from the sink (so its application cannot
// agree on them and go on) for quorum_wait_ns, while the observers fence
// what they suspected: a hung process is killed and its end confirmed
// within milliseconds, the count drops and the held failures are released.
// Across a real cut nothing is confirmed, and the process stops.
//
// The count grows by a few failures per mending step, so on a large job
// a small cut side would take minutes to reach half; a census
// (detector_census.cpp) finds such a clear minority in one window, and
// its verdict enters the same wait.
//
// Safety with confirmations seen on one side only: if side A confirms x and
// side B does not, B counts x as lost, so B needs more than |A| + 1 to go
// on while A needs at least |B|; both cannot hold.
//
// The price: a cut that isolates the runtime's own side makes the runtime
// report the other side's processes ended once its TCP keepalive gives up
// (seconds); by then the quorum rule has long stopped the minority, unless
// the timeout is longer than that keepalive. Half the job or more hanging
// at once (never confirmed) still stops the rest, as does half the job
// failing by transport errors that the runtime never confirms.
//
// Rejected: asking the runtime which side it still reaches. PRRTE's job
// control answers at once, before any daemon is reached, and a cut daemon
// notices its lost lifeline only after TCP keepalive, seconds later.
#include "btl_ft/assert.hpp"
#include "detector_state.hpp"

namespace btl_ft {

namespace {
constexpr time_ns episode_gap_timeouts = 4;
}  // namespace

// Failures closer than this belong to one episode. A cut side learns the
// other side one mending step at a time, and a step across a silent node
// lasts two timeouts of grace plus the node grace: with 4 timeouts alone
// (200 ms at a timeout of 50 ms, against steps of 350 ms) every step began
// an episode of its own, and a cut side of 30 % never counted half.
time_ns detector::state::episode_gap() const {
    return episode_gap_timeouts * config.timeout_ns + config.remote_witness_wait();
}

// Called before a new failure is added to D.
void detector::state::count_failure(time_ns now, rank_t rank, failure_kind kind) {
    if (episode.over(now)) {
        rank_t lowest = 0;
        while (gone(lowest)) {
            ++lowest;
        }
        episode.begin(live_count(), lowest);
    }
    episode.count(now, rank, kind == failure_kind::crashed, episode_gap());
}

// The runtime confirmed a failure already in D.
void detector::state::confirm_crash(rank_t rank) {
    BTL_FT_ASSERT(dead.contains(rank), "confirming a rank that is not failed");
    if (crashed.insert(rank)) {
        episode.confirm(rank);
    }
}

// Every live process answered a shrink: what failed so far was no cut.
void detector::state::settle() {
    census_run.reset();
    episode.settle();
}

// The lowest rank alive when the episode began that the runtime has not
// confirmed dead since.
rank_t detector::state::tie_break_rank() const {
    rank_t rank = episode.lowest();
    while (rank < config.size &&
           (crashed.contains(rank) || departed.contains(rank) || (dead.contains(rank) && !episode.counted(rank)))) {
        ++rank;
    }
    return rank;
}

bool detector::state::cut_off() const {
    return episode.minority([&] { return tie_break_rank(); }) || census_says_cut_off();
}

bool detector::state::check_quorum(time_ns now) {
    if (!config.quorum || stopped) {
        return false;
    }
    if (!cut_off()) {
        if (episode.waiting()) {
            const std::vector<rank_t> released = episode.stop_waiting();
            if (!released.empty()) {
                out.on_failed(released);
            }
        }
        return false;
    }
    if (episode.wait(now, config.quorum_wait_ns)) {
        ++stats.quorum_holds;
    }
    if (now < episode.wait_deadline()) {
        return false;
    }
    stop_node_mates();
    declared_dead_self(self(), census_says_cut_off()
                                   ? "cut off from most of the job (fewer than a quarter of the processes it "
                                     "asked answered, and the runtime confirmed none of them dead): stopping "
                                     "rather than going on as a second set of survivors"
                                   : "cut off from at least half of the processes alive when the failures began "
                                     "(quorum lost, and the runtime confirmed none of them dead): stopping rather "
                                     "than going on as a second set of survivors");
    return true;
}

// Node-mates share this process's side of a cut, and the other side
// declared them with it (two levels declare a lost node whole; flat, each
// of them has an observer across the cut, in the `node` ring order). Only
// the processes that watch across the cut find it out by themselves; a
// node-mate that watches a node-mate would find out only after the one it
// watches stopped and it mended across the cut: a timeout, the node grace
// and a census each, one process after the other (14 processes of a node
// laid out in rank order took 29 s at delta 50 ms). So they stop with it.
// Without node information (no witnesses, flat) nobody is told.
void detector::state::stop_node_mates() {
    const auto bytes = wire::encode_declared_dead();
    const auto tell = [&](rank_t mate) {
        if (mate != self() && !gone(mate)) {
            net.send(mate, bytes);
        }
    };
    if (config.hierarchy == hierarchy_kind::node) {
        for (const rank_t mate : config.layout->mates_of(self())) {
            tell(mate);
        }
    } else if (config.node_of_rank) {
        for (rank_t rank = 0; rank < config.size; ++rank) {
            if (same_node(self(), rank)) {
                tell(rank);
            }
        }
    }
}

}  // namespace btl_ft
