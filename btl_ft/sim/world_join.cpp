// A second job joins the first (sim_config::joiners): what a spawn or a
// connect/accept does to the detectors (membership.hpp). The first job's
// processes start on a detector of their own job; the joined job's start
// at the join on the union's, knowing the failures its spawner knew; each
// process of the first job moves to the union's detector within one
// period of the join, after leave()ing its old one, so that an old
// observer that has not moved yet does not take its silence for a
// failure. Heartbeats and messages carry their sender's epoch, and a
// receiver that runs another epoch's detector drops them: ranks mean other
// processes in the two memberships.
//
// With join_participants, only the first job's lowest ranks take part in
// the connect (a spawn from MPI_COMM_SELF); each of them sends a JOIN to
// the others on its old detector before it leaves it, and a process left
// out moves when the first JOIN reaches it, knowing what the JOIN carried
// as well as its own failures. The run checks that every one of them
// moved before failures may strike (joined_by()).
//
// The first job is job 1 and the joined one job 0: a lower number, as a
// job started apart and accepted later may have. A union numbers its jobs
// in the order they joined, so the first job's ranks are the same in both
// memberships all the same (build_join asserts it).
#include <algorithm>
#include <string>

#include "btl_ft/assert.hpp"
#include "rng.hpp"
#include "world_join.hpp"

namespace btl_ft::sim {
namespace {

// Two lists of failures sorted by rank, as one: a rank in both keeps the
// stronger kind (crashed over unreachable over suspected).
std::vector<known_failure> merged(std::span<const known_failure> a, std::span<const known_failure> b) {
    std::vector<known_failure> out;
    std::size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
        if (j == b.size() || (i < a.size() && a[i].rank < b[j].rank)) {
            out.push_back(a[i++]);
        } else if (i == a.size() || b[j].rank < a[i].rank) {
            out.push_back(b[j++]);
        } else {
            out.push_back({a[i].rank, std::max(a[i].kind, b[j].kind)});
            ++i;
            ++j;
        }
    }
    return out;
}

}  // namespace

void world::build_join() {
    const rank_t first = config_.first_joined();
    BTL_FT_ASSERT(config_.joiners > 0 && first > 0, "a join needs two jobs");
    join_ = std::make_unique<join_state>(first, config_.joiners);
    BTL_FT_ASSERT(join_->all.rank_of({1, first - 1}) == first - 1, "the first job's ranks moved in the union");
    const auto first_nodes = std::make_shared<const std::vector<std::uint32_t>>(
        node_of_rank_->begin(), node_of_rank_->begin() + first);
    const std::shared_ptr<const node_layout> first_layout = layout_ ? node_layout::make(*first_nodes) : nullptr;
    const std::uint64_t ring_seed = rng(seed_, stream::ring).next();
    join_->first_ring = first_layout ? ring::make_grouped(config_.order, *first_layout, ring_seed)
                                     : ring::make(config_.order, *first_nodes, ring_seed);
    const detector_config base = base_config(first_nodes, first_layout);
    for (rank_t process = 0; process < first; ++process) {
        detector_config own = base;
        own.self = process;
        join_->own.emplace_back(own, join_->first_ring, static_cast<transport&>(*this), static_cast<sink&>(*this));
    }
    join_->joined.resize(config_.nodes);
    join_->epoch.assign(config_.nodes, 0);
    join_->moved_at.assign(config_.nodes, never);
    join_->heard.resize(config_.nodes);
    join_->follows.assign(config_.nodes, 0);
    for (rank_t process = first; process < config_.nodes; ++process) {
        join_->epoch[process] = 1;
    }
}

// Each process of the first job that takes part in the connect learns of
// the join within one period of it; the others, from their JOINs.
void world::schedule_join(time_ns at) {
    rng moments(seed_, stream::joins);
    for (rank_t process = 0; process < config_.first_joined(); ++process) {
        const auto lag = static_cast<time_ns>(moments.below(static_cast<std::uint64_t>(config_.period_ns)));
        if (!config_.left_out_of_join(process)) {
            queue_.push({.at = at + lag, .payload = 0, .node = process, .kind = event_kind::join});
        }
    }
}

detector& world::joined_detector(rank_t process) const {
    if (join_->epoch[process] == 0) {
        return join_->own[process];
    }
    BTL_FT_ASSERT(join_->joined[process] != nullptr, "a joined process without a detector");
    return *join_->joined[process];
}

bool world::has_detector(rank_t process) const {
    return !join_ || join_->epoch[process] == 0 || join_->joined[process] != nullptr;
}

std::uint8_t world::epoch_of(rank_t process) const { return join_ ? join_->epoch[process] : 0; }

bool world::other_epoch(const event& item) {
    if (!join_ || item.epoch == join_->epoch[item.node]) {
        return false;
    }
    ++join_->dropped;
    return true;
}

// The failures a process's detector knows, in the union's ranks (carried
// over from its own job's ranks while it still runs that detector).
std::vector<known_failure> world::union_failures_known_by(rank_t process) const {
    const detector& one = active(process);
    std::vector<known_failure> known;
    for (const rank_t rank : one.dead().ranks()) {
        known.push_back({rank, one.kind_of(rank)});
    }
    return epoch_of(process) == 0 ? join_->all.carried(join_->first, known) : known;
}

void world::start_on_union(rank_t process, std::span<const known_failure> known) {
    detector_config own = base_config(node_of_rank_, layout_);
    own.self = process;
    own.known_failures = known;
    join_->joined[process] = std::make_unique<detector>(own, ring_, static_cast<transport&>(*this),
                                                        static_cast<sink&>(*this));
    join_->joined[process]->start(now_);
}

// The first job's detectors that were left behind count too.
void world::add_join_totals(run_result& result, void (*add)(detector_stats&, const detector_stats&)) const {
    result.other_epoch_dropped = join_->dropped;
    for (rank_t process = 0; process < config_.first_joined(); ++process) {
        if (join_->epoch[process] == 1) {
            add(result.totals, join_->own[process].stats());
        }
    }
}

// A process of the joined job starts on the union's detector with the
// failures its spawner (the first job's lowest live process) knew, and its
// application learns them at once, as the spawner's did.
void world::start_joiner(rank_t process) {
    rank_t spawner = 0;
    while (spawner < config_.first_joined() && !runs(spawner)) {
        ++spawner;
    }
    std::vector<known_failure> known;
    if (spawner < config_.first_joined()) {
        known = union_failures_known_by(spawner);
    }
    start_on_union(process, known);
    std::vector<rank_t> ranks;
    for (const known_failure& failure : known) {
        ranks.push_back(failure.rank);
    }
    if (!ranks.empty()) {
        oracle_.on_learned(process, ranks, now_);
    }
}

// A process of the first job moves to the union's detector. A hung one
// never moves (the union's ring finds it), a crashed or stopped one is gone.
// One that took part in the connect first tells those left out of it.
void world::on_join(const event& item) {
    const rank_t process = item.node;
    if (!runs(process) || join_->epoch[process] != 0 || join_->own[process].stopped()) {
        return;
    }
    current_ = process;
    std::vector<known_failure> known = union_failures_known_by(process);
    if (config_.left_out_of_join(process)) {
        known = merged(known, join_->heard[process]);
    } else if (config_.join_participants > 0) {
        announce_join(process, known);
    }
    join_->own[process].leave(now_);
    join_->epoch[process] = 1;
    join_->moved_at[process] = now_;
    start_on_union(process, known);
    deadline_[process] = never;
    reschedule(process, active(process).tick(now_));
}

void world::announce_join(rank_t process, std::span<const known_failure> known) {
    std::vector<rank_t> left_out;
    for (rank_t rank = config_.join_participants; rank < config_.first_joined(); ++rank) {
        left_out.push_back(rank);
    }
    const long carried = join_->own[process].announce_join(now_, {join_->all.epoch(), join_->all.jobs(), known}, left_out);
    BTL_FT_ASSERT(carried == static_cast<long>(known.size()), "a simulated JOIN left failures out");
}

// The sink's: a JOIN reached current_, on its old detector. It moves at
// once, as an event of its own (the detector that called cannot be left
// from inside the call); later JOINs before then add what they know.
void world::on_join(rank_t /*from*/, const join_notice& join) {
    const rank_t process = current_;
    BTL_FT_ASSERT(epoch_of(process) == 0, "a JOIN reached a process that already moved");
    BTL_FT_ASSERT(join.epoch == join_->all.epoch() && std::ranges::equal(join.jobs, join_->all.jobs()),
                  "a JOIN names another union than the simulated one");
    join_->heard[process] = merged(join_->heard[process], join.known);
    if (join_->follows[process] == 0) {
        join_->follows[process] = 1;
        queue_.push({.at = now_, .payload = 0, .node = process, .kind = event_kind::join});
    }
}

// Every process of the first job runs the union's detector before
// failures may strike: a JOIN that never arrived would leave one behind,
// and the union would take its silence for a failure.
void world::check_everyone_moved(run_result& result) const {
    for (rank_t process = 0; process < config_.first_joined(); ++process) {
        if (join_->moved_at[process] > config_.joined_by()) {
            ++result.violations.completeness;
            result.details.push_back("process " + std::to_string(process) + " of the first job had not moved to the union by " +
                                     std::to_string(config_.joined_by()) + " ns");
        }
    }
}

}  // namespace btl_ft::sim
