// Jobs join the first (sim_config::joiners): what a spawn or a
// connect/accept does to the detectors (membership.hpp). The first job's
// processes start on a detector of their own job; a joined job's start at
// the join on their connect's union, knowing the failures their spawner
// knew; each process of the first job that takes part in a connect moves
// within one period of the join, after sending a JOIN to those of the
// first job left out of it and leave()ing its old detector, so that an old
// observer that has not moved yet does not take its silence for a failure.
// Heartbeats and messages carry their sender's union, and a receiver that
// runs another union's detector drops them: ranks mean other processes in
// two unions. A JOIN alone crosses unions: it names its union in full.
//
// A process that hears a JOIN weighs it against the union it runs
// (verdict_on): it follows a union of every job it watches and more, and
// merges one that lacks some of them (two spawns at once, join_jobs > 1)
// into the union of both, which it then tells the processes of the jobs
// not in both. A spawner whose connect has not ended keeps what it hears
// until it has moved, as the shim does.
//
// Process indices are the ranks of the union of every job: the first job
// is job 1 and keeps its ranks; joined job k is job 0 for k = 0 (a lower
// number than the first job's, as a job started apart and accepted later
// may have) and job k + 1 after, all joining at epoch 1, so ordered by
// number. The run checks that every process runs that union before
// failures may strike (joined_by()).
#include <algorithm>
#include <array>
#include <string>

#include "btl_ft/assert.hpp"
#include "btl_ft/wire.hpp"
#include "rng.hpp"
#include "world_join.hpp"

namespace btl_ft::sim {
namespace {

constexpr std::uint32_t first_job = 1;
// A join event's payload when JOINs are to be weighed; otherwise the
// joined job whose connect ends.
constexpr std::uint64_t follow_payload = ~std::uint64_t{0};

std::uint32_t joined_job_number(rank_t k) { return k == 0 ? 0 : k + 1; }

}  // namespace

member world::member_of_process(rank_t process) const {
    const rank_t first = config_.first_joined();
    if (process < first) {
        return {first_job, process};
    }
    const rank_t size = config_.joined_job_size();
    return {joined_job_number((process - first) / size), (process - first) % size};
}

rank_t world::process_of_member(member process) const {
    if (process.job == first_job) {
        return process.rank;
    }
    const rank_t k = process.job == 0 ? 0 : process.job - 1;
    return config_.first_joined() + k * config_.joined_job_size() + process.rank;
}

rank_t world::process_at(rank_t process, rank_t rank) const {
    if (!join_) {
        return rank;
    }
    return process_of_member(join_->unions[join_->union_of[process]]->of.member_at(rank));
}

std::optional<rank_t> world::rank_for(rank_t process, rank_t other) const {
    if (!join_) {
        return other;
    }
    return join_->unions[join_->union_of[process]]->of.rank_of(member_of_process(other));
}

// The tag of a union: its index among those some process ran, made once,
// with its ring (the one of every job is the world's own).
std::uint8_t world::intern(const membership& of) {
    for (std::size_t index = 0; index < join_->unions.size(); ++index) {
        if (join_->unions[index]->of.identity() == of.identity()) {
            return static_cast<std::uint8_t>(index);
        }
    }
    BTL_FT_ASSERT(join_->unions.size() < 255, "more unions than an event's tag names");
    auto view = std::make_unique<join_state::union_view>(join_state::union_view{of, {}, {}, {}});
    if (of.size() == config_.nodes) {
        view->nodes = node_of_rank_;
        view->layout = layout_;
        view->watch = ring_;
    } else {
        auto nodes = std::make_shared<std::vector<std::uint32_t>>();
        for (rank_t rank = 0; rank < of.size(); ++rank) {
            nodes->push_back((*node_of_rank_)[process_of_member(of.member_at(rank))]);
        }
        view->nodes = nodes;
        view->layout = layout_ ? node_layout::make(*nodes) : nullptr;
        const std::uint64_t ring_seed = rng(seed_, stream::ring).next();
        view->watch = view->layout ? ring::make_grouped(config_.order, *view->layout, ring_seed)
                                  : ring::make(config_.order, *nodes, ring_seed);
    }
    join_->unions.push_back(std::move(view));
    return static_cast<std::uint8_t>(join_->unions.size() - 1);
}

void world::build_join() {
    const rank_t first = config_.first_joined();
    BTL_FT_ASSERT(config_.joiners > 0 && first > 0 && config_.joiners % config_.join_jobs == 0,
                  "a join needs the first job and joined jobs of one size");
    join_ = std::make_unique<join_state>(membership(first_job, first));
    std::vector<job_extent> every{{first_job, first, 0}};
    for (rank_t k = 0; k < config_.join_jobs; ++k) {
        every.push_back({joined_job_number(k), config_.joined_job_size(), 1});
    }
    const membership everyone = membership::of(every);
    for (rank_t process = 0; process < config_.nodes; ++process) {
        BTL_FT_ASSERT(everyone.rank_of(member_of_process(process)) == process, "process indices are not the union's ranks");
    }
    const std::uint8_t own = intern(join_->first);
    join_->everyone = intern(everyone);
    join_->union_of.assign(config_.nodes, own);
    join_->current.resize(config_.nodes);
    const join_state::union_view& first_view = *join_->unions[own];
    const detector_config base = base_config(first_view.nodes, first_view.layout);
    for (rank_t process = 0; process < first; ++process) {
        detector_config mine = base;
        mine.self = process;
        join_->current[process] = std::make_unique<detector>(mine, first_view.watch, static_cast<transport&>(*this),
                                                             static_cast<sink&>(*this));
    }
    join_->moved_at.assign(config_.nodes, never);
    join_->connecting.assign(config_.nodes, 0);
    join_->follows.assign(config_.nodes, 0);
    join_->heard.resize(config_.nodes);
    join_->heard_known.resize(config_.nodes);
    for (rank_t process = first; process < config_.nodes; ++process) {
        join_->union_of[process] = intern(join_->first.joined(std::array{job_extent{member_of_process(process).job,
                                                                                    config_.joined_job_size()}}));
    }
}

// Each process of the first job that takes part in a connect learns of its
// end within one period of the join; the others, from JOINs.
void world::schedule_join(time_ns at) {
    rng moments(seed_, stream::joins);
    for (rank_t process = 0; process < config_.first_joined(); ++process) {
        const auto lag = static_cast<time_ns>(moments.below(static_cast<std::uint64_t>(config_.period_ns)));
        for (rank_t k = 0; k < config_.join_jobs; ++k) {
            if (config_.joins_connect(process, k)) {
                join_->connecting[process] = 1;
                queue_.push({.at = at + lag, .payload = k, .node = process, .kind = event_kind::join});
            }
        }
    }
}

detector& world::joined_detector(rank_t process) const {
    BTL_FT_ASSERT(join_->current[process] != nullptr, "a joined process without a detector");
    return *join_->current[process];
}

bool world::has_detector(rank_t process) const { return !join_ || join_->current[process] != nullptr; }

std::uint8_t world::epoch_of(rank_t process) const { return join_ ? join_->union_of[process] : 0; }

// Another union's input is dropped, but for a JOIN.
bool world::other_epoch(const event& item) {
    if (!join_ || item.epoch == join_->union_of[item.node] ||
        (item.kind == event_kind::message && wire::is_join(messages_.bytes(item.payload)))) {
        return false;
    }
    ++join_->dropped;
    return true;
}

// A JOIN that reaches a joined process before its detector started (it is
// still in its own connect): weighed once it has.
bool world::keep_early_join(const event& item) {
    if (!join_ || has_detector(item.node) || mode_[item.node] != mode::running ||
        !wire::is_join(messages_.bytes(item.payload))) {
        return false;
    }
    wire::message msg;
    if (wire::decode(messages_.bytes(item.payload), {no_rank - 1, messages_.bytes(item.payload).size()}, msg) == wire::status::ok) {
        keep_heard(item.node, {msg.epoch, msg.jobs, msg.known});
    }
    return true;
}

// What a process's detector knows failed, by process.
std::vector<std::pair<member, failure_kind>> world::named_failures_of(rank_t process) const {
    std::vector<std::pair<member, failure_kind>> named;
    const detector& one = active(process);
    const membership& of = join_->unions[join_->union_of[process]]->of;
    for (const rank_t rank : one.dead().ranks()) {
        named.emplace_back(of.member_at(rank), one.kind_of(rank));
    }
    return named;
}

// Failures by process as ranks of union `target`, sorted, each once with
// its strongest kind; processes outside it are left out.
std::vector<known_failure> world::known_in(std::uint8_t target,
                                           std::span<const std::pair<member, failure_kind>> named) const {
    const membership& of = join_->unions[target]->of;
    std::vector<known_failure> known;
    for (const auto& [process, kind] : named) {
        if (const auto rank = of.rank_of(process)) {
            known.push_back({*rank, kind});
        }
    }
    std::sort(known.begin(), known.end(), [](const known_failure& a, const known_failure& b) {
        return a.rank != b.rank ? a.rank < b.rank : a.kind > b.kind;
    });
    known.erase(std::unique(known.begin(), known.end(),
                            [](const known_failure& a, const known_failure& b) { return a.rank == b.rank; }),
                known.end());
    return known;
}

void world::start_on(rank_t process, std::uint8_t target, std::span<const known_failure> known) {
    const join_state::union_view& view = *join_->unions[target];
    detector_config mine = base_config(view.nodes, view.layout);
    mine.self = *view.of.rank_of(member_of_process(process));
    mine.known_failures = known;
    join_->union_of[process] = target;
    join_->current[process] = std::make_unique<detector>(mine, view.watch, static_cast<transport&>(*this),
                                                         static_cast<sink&>(*this));
    join_->current[process]->start(now_);
}

// The first job's detectors that were left behind count too.
void world::add_join_totals(run_result& result, void (*add)(detector_stats&, const detector_stats&)) const {
    result.other_epoch_dropped = join_->dropped;
    for (const auto& one : join_->left) {
        add(result.totals, one->stats());
    }
}

// A process of a joined job starts on its connect's union with the
// failures its spawner knew, and its application learns them at once, as
// the spawner's did. JOINs that came before are weighed now.
void world::start_joiner(rank_t process) {
    const std::uint8_t target = join_->union_of[process];
    const rank_t k = (process - config_.first_joined()) / config_.joined_job_size();
    rank_t spawner = config_.join_jobs > 1 ? k : 0;
    while (config_.join_jobs == 1 && spawner < config_.first_joined() && !runs(spawner)) {
        ++spawner;
    }
    std::vector<known_failure> known;
    if (spawner < config_.first_joined() && runs(spawner)) {
        known = known_in(target, named_failures_of(spawner));
    }
    current_ = process;
    start_on(process, target, known);
    join_->moved_at[process] = now_;
    std::vector<rank_t> ranks;
    for (const known_failure& failure : known) {
        ranks.push_back(process_at(process, failure.rank));
    }
    if (!ranks.empty()) {
        oracle_.on_learned(process, ranks, now_);
    }
    schedule_follow(process);
}

// Leaves the old detector (after its JOIN, if `announce` names whom to
// tell in the old union) and starts on `target`, knowing what the old one
// and the JOINs heard knew; tells `merged_to` (ranks of `target`) of it.
void world::move_to(rank_t process, std::uint8_t target, const std::vector<rank_t>& announce,
                    const std::vector<rank_t>& merged_to) {
    current_ = process;
    std::vector<std::pair<member, failure_kind>> named = named_failures_of(process);
    named.insert(named.end(), join_->heard_known[process].begin(), join_->heard_known[process].end());
    const std::vector<known_failure> known = known_in(target, named);
    const membership& next = join_->unions[target]->of;
    detector& old = active(process);
    if (!announce.empty()) {
        const long carried = old.announce_join(now_, {next.epoch(), next.jobs(), known}, announce);
        BTL_FT_ASSERT(carried == static_cast<long>(known.size()), "a simulated JOIN left failures out");
    }
    old.leave(now_);
    join_->left.push_back(std::move(join_->current[process]));
    start_on(process, target, known);
    join_->moved_at[process] = now_;
    if (!merged_to.empty()) {
        join_->current[process]->announce_join(now_, {next.epoch(), next.jobs(), known}, merged_to);
    }
    deadline_[process] = never;
    reschedule(process, active(process).tick(now_));
}

// A spawner's connect ended: it moves to the union with its child job,
// telling the rest of its old union. What it heard meanwhile is weighed
// next.
void world::connect_move(rank_t process, rank_t k) {
    const std::uint8_t base = join_->union_of[process];
    const membership& old = join_->unions[base]->of;
    const std::uint8_t target =
        intern(old.joined(std::array{job_extent{joined_job_number(k), config_.joined_job_size()}}));
    std::vector<rank_t> left_out;
    for (rank_t other = 0; other < config_.first_joined(); ++other) {
        if (!config_.joins_connect(other, k)) {
            left_out.push_back(*old.rank_of(member_of_process(other)));
        }
    }
    move_to(process, target, left_out, {});
    join_->connecting[process] = 0;
    schedule_follow(process);
}

// Weighs every JOIN heard against the union run now: it follows a union of
// more jobs, and merges one that lacks some; after a merge, the processes
// of the jobs not in every union weighed hear of the result.
void world::follow_heard(rank_t process) {
    const std::uint8_t from = join_->union_of[process];
    membership target = join_->unions[from]->of;
    bool merged = false;
    for (const std::uint8_t heard : join_->heard[process]) {
        const membership& one = join_->unions[heard]->of;
        switch (verdict_on(target, one)) {
            case join_verdict::stale: break;
            case join_verdict::follow: target = one; break;
            case join_verdict::merge:
                target = membership::merged(target, one);
                merged = true;
                break;
        }
    }
    const std::uint8_t to = intern(target);
    std::vector<rank_t> tell;
    if (merged && std::ranges::none_of(join_->heard[process], [to](std::uint8_t heard) { return heard == to; })) {
        std::vector<const membership*> weighed{&join_->unions[from]->of};
        for (const std::uint8_t heard : join_->heard[process]) {
            weighed.push_back(&join_->unions[heard]->of);
        }
        tell = target.ranks_not_in_every(weighed);
    }
    join_->heard[process].clear();
    if (to != from) {
        move_to(process, to, {}, tell);
    }
    join_->heard_known[process].clear();
}

void world::schedule_follow(rank_t process) {
    if (!join_->heard[process].empty() && join_->follows[process] == 0 && join_->connecting[process] == 0) {
        join_->follows[process] = 1;
        queue_.push({.at = now_, .payload = follow_payload, .node = process, .kind = event_kind::join});
    }
}

// A spawner's connect ends, or JOINs are to be weighed. A hung process
// never moves (the union's ring finds it), a crashed or stopped one is gone.
void world::on_join(const event& item) {
    const rank_t process = item.node;
    if (item.payload == follow_payload) {
        join_->follows[process] = 0;
    }
    if (!runs(process) || active(process).stopped()) {
        return;
    }
    if (item.payload == follow_payload) {
        follow_heard(process);
    } else {
        connect_move(process, static_cast<rank_t>(item.payload));
    }
}

void world::keep_heard(rank_t process, const join_notice& join) {
    const membership named = membership::of(join.jobs);
    join_->heard[process].push_back(intern(named));
    for (const known_failure& failure : join.known) {
        join_->heard_known[process].emplace_back(named.member_at(failure.rank), failure.kind);
    }
}

// The sink's: a JOIN reached current_. It is weighed as an event of its
// own (the detector that called cannot be left from inside the call), or
// once the process's own connect ended; later JOINs before then are
// weighed with it.
void world::on_join(rank_t /*from*/, const join_notice& join) {
    keep_heard(current_, join);
    schedule_follow(current_);
}

// Every process runs the union of every job before failures may strike: a
// JOIN that never arrived, or two unions never merged, would leave one
// behind, and the others would take its silence for a failure.
void world::check_everyone_moved(run_result& result) const {
    for (rank_t process = 0; process < config_.nodes; ++process) {
        if (join_->union_of[process] != join_->everyone || join_->moved_at[process] > config_.joined_by()) {
            ++result.violations.completeness;
            result.details.push_back("process " + std::to_string(process) + " did not run the union of every job by " +
                                     std::to_string(config_.joined_by()) + " ns");
        }
    }
}

}  // namespace btl_ft::sim
