// The event loop of world.hpp and the glue between detectors, network,
// injector and oracle.
#include "world.hpp"
#include "world_join.hpp"

#include <algorithm>

#include "btl_ft/assert.hpp"
#include "btl_ft/dead_set.hpp"
#include "rng.hpp"

namespace btl_ft::sim {

world::~world() = default;

world::world(const sim_config& config, std::uint64_t run_seed)
    : config_(config),
      seed_(run_seed),
      node_of_rank_(node_of_rank()),
      layout_(config.hierarchy == hierarchy_kind::node ? node_layout::make(*node_of_rank_) : nullptr),
      ring_(make_ring(rng(run_seed, stream::ring).next())),
      network_(config, run_seed),
      injector_(config, *ring_, run_seed),
      oracle_(config, *ring_, *this),
      deadline_(config.nodes, never),
      started_(config.nodes, 0),
      mode_(config.nodes, mode::running) {
    build_detectors();
}

// Ranks k*ppn .. (k+1)*ppn-1 on node k, as mpirun maps by slot; one copy
// shared by the ring and every detector.
std::shared_ptr<const std::vector<std::uint32_t>> world::node_of_rank() const {
    auto nodes = std::make_shared<std::vector<std::uint32_t>>(config_.nodes);
    for (rank_t process = 0; process < config_.nodes; ++process) {
        (*nodes)[process] = config_.node_of(process);
    }
    return nodes;
}

// As libmpi builds it: interleaved by node, or grouped by node for two levels.
std::shared_ptr<const ring> world::make_ring(std::uint64_t seed) const {
    if (layout_) {
        return ring::make_grouped(config_.order, *layout_, seed);
    }
    return ring::make(config_.order, *node_of_rank_, seed);
}

// Every detector's configuration but its rank, for a job of `size`
// processes (the first ones, with a join).
detector_config world::base_config(std::shared_ptr<const std::vector<std::uint32_t>> nodes,
                                   std::shared_ptr<const node_layout> layout) const {
    detector_config base = config_.detector_base();
    base.size = static_cast<rank_t>(nodes->size());
    // libmpi hands the detector the nodes when witnesses are on. With one
    // process per node no witness can exist, and leaving them out spares
    // each suspicion a scan of every rank for a node-mate.
    if (config_.witness && config_.per_node > 1) {
        base.node_of_rank = std::move(nodes);
    }
    base.layout = std::move(layout);
    return base;
}

void world::build_detectors() {
    if (config_.joiners > 0) {
        build_join();
        return;
    }
    const detector_config base = base_config(node_of_rank_, layout_);
    for (rank_t process = 0; process < config_.nodes; ++process) {
        detector_config own = base;
        own.self = process;
        detectors_.emplace_back(own, ring_, static_cast<transport&>(*this), static_cast<sink&>(*this));
    }
}

run_result world::run() {
    rng phases(seed_, stream::phases);
    for (rank_t process = 0; process < config_.nodes; ++process) {
        const auto phase = static_cast<time_ns>(phases.below(static_cast<std::uint64_t>(config_.period_ns)));
        const bool joins = process >= config_.first_joined();
        queue_.push({.at = phase + (joins ? config_.join_at() : 0), .payload = 0, .node = process,
                     .kind = event_kind::start});
    }
    if (join_) {
        schedule_join(config_.join_at());
    }
    end_at_ = config_.warmup() + config_.settle();
    if (const auto first = injector_.first_at()) {
        queue_.push({.at = *first, .payload = 0, .node = 0, .kind = event_kind::failure});
        failures_pending_ = true;
        end_at_ = *first + config_.horizon();
    }
    while (!queue_.empty() && queue_.top().at <= end_at_) {
        const event item = queue_.pop();
        BTL_FT_ASSERT(item.at >= now_, "simulated time went backwards");
        now_ = item.at;
        prefetch_upcoming();
        dispatch(item);
        after_event();
        ++events_;
    }
    oracle_.finish();
    return collect();
}

// During a broadcast each event goes to a process whose state, message
// and failed set are all cache misses, and they dominated the run. The
// events a few places ahead are known (the near buckets of the queue are
// sorted), so their memory is requested now, in two steps: the state and
// the message first, then, once the state has arrived, the failed set it
// points to. Prefetching changes no result, only when the bytes arrive.
void world::prefetch_upcoming() {
    if (join_) {
        return;  // small runs, where a joiner may have no detector yet
    }
    constexpr std::size_t state_ahead = 6;
    constexpr std::size_t sets_ahead = 2;
    const std::span<const event> next = queue_.upcoming();
    if (next.size() > state_ahead) {
        const event& later = next[state_ahead];
        if (later.kind == event_kind::message) {
            messages_.prefetch(later.payload);
        }
        detectors_[later.node].prefetch_state();
        __builtin_prefetch(&mode_[later.node]);
        __builtin_prefetch(&deadline_[later.node]);
        __builtin_prefetch(&started_[later.node]);
    }
    if (next.size() > sets_ahead) {
        detectors_[next[sets_ahead].node].prefetch_sets();
    }
}

void world::dispatch(const event& item) {
    switch (item.kind) {
        case event_kind::start: on_start(item.node); break;
        case event_kind::tick: on_tick(item); break;
        case event_kind::heartbeat: on_heartbeat(item); break;
        case event_kind::message: on_message(item); break;
        case event_kind::failure: on_failure(item); break;
        case event_kind::resume: on_resume(item); break;
        case event_kind::confirm: on_runtime_confirm(item); break;
        case event_kind::node_watch: on_node_watch(item); break;
        case event_kind::join: on_join(item); break;
    }
}

void world::on_start(rank_t process) {
    if (mode_[process] != mode::running) {
        return;  // a process struck before it started never starts (a hung one: at its resume)
    }
    started_[process] = 1;
    current_ = process;
    if (join_ && process >= config_.first_joined()) {
        start_joiner(process);
    } else {
        active(process).start(now_);
    }
    reschedule(process, active(process).tick(now_));
}

void world::on_tick(const event& item) {
    if (!runs(item.node) || deadline_[item.node] != item.at) {
        return;  // crashed, hung, or superseded by a later reschedule
    }
    current_ = item.node;
    deadline_[item.node] = never;
    reschedule(item.node, active(item.node).tick(now_));
}

void world::on_heartbeat(const event& item) {
    // A put into the flag of a process that has not started or has died
    // lands in memory nobody reads; a hung one reads it when it resumes.
    if (mode_[item.node] == mode::hung) {
        hold(item);
        return;
    }
    if (!runs(item.node) || other_epoch(item)) {
        return;
    }
    current_ = item.node;
    active(item.node).on_heartbeat_word(now_, item.payload);
    after_input(item.node);
}

void world::on_message(const event& item) {
    if (mode_[item.node] == mode::hung) {
        hold(item);  // the slot stays taken until the resume delivers it
        return;
    }
    if (keep_early_join(item)) {
        messages_.release(item.payload);
        return;
    }
    if (runs(item.node) && !other_epoch(item)) {
        current_ = item.node;
        const rank_t from = messages_.from(item.payload);
        active(item.node).on_message(now_, from, messages_.bytes(item.payload));
        after_input(item.node);
    }
    messages_.release(item.payload);
}

void world::on_failure(const event& item) {
    if (!failures_pending_ || item.payload != failures_struck_) {
        return;  // injection stopped: the configuration stabilised
    }
    const auto index = static_cast<std::uint32_t>(item.payload);
    const std::vector<rank_t> victims = injector_.victims(index, [this](rank_t r) { return oracle_.alive(r); });
    if (config_.fault == fault_kind::partition) {
        cut(victims);
    } else {
        for (const rank_t victim : victims) {
            strike(victim);
        }
    }
    ++failures_struck_;
    if (const auto next = injector_.next_at(index, now_, oracle_.alive_count())) {
        queue_.push({.at = *next, .payload = failures_struck_, .node = 0, .kind = event_kind::failure});
    } else {
        failures_pending_ = false;
    }
}

// An input can move the deadline (a NEWOBSERVER makes a heartbeat due at
// once); next_deadline() tells without running timers, which is cheaper
// than a tick() after every one of the n heartbeats per period.
void world::after_input(rank_t process) {
    const time_ns deadline = active(process).next_deadline();
    if (deadline <= now_) {
        deadline_[process] = never;
        reschedule(process, active(process).tick(now_));
        return;
    }
    reschedule(process, deadline);
}

void world::reschedule(rank_t process, time_ns deadline) {
    if (deadline == never || deadline == deadline_[process]) {
        if (deadline == never) {
            deadline_[process] = never;
        }
        return;
    }
    if (deadline <= now_) {
        // tick() runs every due timer, so it should never return the past;
        // count it and move on rather than spin.
        ++deadline_anomalies_;
        deadline = now_ + 1;
    }
    deadline_[process] = deadline;
    queue_.push({.at = deadline, .payload = 0, .node = process, .kind = event_kind::tick});
}

void world::after_event() {
    if (!oracle_.in_unstable_period() || !oracle_.check_stable(now_)) {
        return;
    }
    if (config_.law == failure_law::exponential) {
        failures_pending_ = false;  // the run measures one stabilisation
    }
    maybe_end();
}

// Stable, no failure to come, nothing to resume, every process that must
// stop stopped: only the settling time is left.
void world::maybe_end() {
    if (!failures_pending_ && resumes_pending_ == 0 && oracle_.pending_stops() == 0 &&
        !oracle_.in_unstable_period()) {
        end_at_ = std::min(end_at_, now_ + config_.settle());
    }
}

bool world::put_heartbeat(rank_t observer_rank, std::uint64_t word) {
    BTL_FT_ASSERT(current_ != no_rank, "heartbeat put outside a detector call");
    const rank_t observer = process_at(current_, observer_rank);
    BTL_FT_ASSERT(observer < config_.nodes, "heartbeat put outside the world");
    BTL_FT_ASSERT(observer != current_ || config_.nodes == 1, "a process observes itself");
    if (!reaches(observer)) {
        return true;  // lost in the cut, as a put to an unreachable host completes locally
    }
    const time_ns arrival = network_.heartbeat_arrival(current_, observer, now_);
    queue_.push({.at = arrival, .payload = word, .node = observer, .kind = event_kind::heartbeat,
                 .epoch = epoch_of(current_)});
    return true;
}

// The message carries its sender's rank in the sender's union: the one
// the receiver reads it in (another union's are dropped, but a JOIN's).
void world::send(rank_t peer_rank, std::span<const std::byte> bytes) {
    BTL_FT_ASSERT(current_ != no_rank, "send outside a detector call");
    const rank_t peer = process_at(current_, peer_rank);
    BTL_FT_ASSERT(peer < config_.nodes, "send outside the world");
    if (!reaches(peer)) {
        return;
    }
    const auto arrival = network_.message_arrival(current_, peer, now_);
    if (!arrival) {
        return;
    }
    const std::uint64_t slot = messages_.store(active(current_).self(), bytes);
    queue_.push({.at = *arrival, .payload = slot, .node = peer, .kind = event_kind::message,
                 .epoch = epoch_of(current_)});
}

// A witness's host: a crashed process is gone, a hung one stopped, the
// stalled one starved while its stall lasts (running if wedged); any
// other runs.
process_state world::local_state(rank_t rank) {
    BTL_FT_ASSERT(current_ != no_rank, "local_state outside a detector call");
    const rank_t process = process_at(current_, rank);
    BTL_FT_ASSERT(process < config_.nodes, "local_state outside the world");
    switch (mode_[process]) {
        case mode::crashed: return process_state::gone;
        case mode::hung: return process_state::stopped;
        case mode::running: break;
    }
    if (network_.stalled(process, now_) && !config_.faults.stall_wedged) {
        return process_state::starved;
    }
    return process_state::running;
}

void world::on_failed(std::span<const rank_t> ranks) {
    if (!join_) {
        oracle_.on_learned(current_, ranks, now_);
        return;
    }
    std::vector<rank_t> processes;
    for (const rank_t rank : ranks) {
        processes.push_back(process_at(current_, rank));
    }
    oracle_.on_learned(current_, processes, now_);
}

void world::on_declared_dead_self(rank_t told_by, const char* reason) {
    oracle_.on_declared_dead_self(current_, told_by, reason, now_);
    maybe_end();
}

rank_t world::emitter_of(rank_t process) const {
    const rank_t rank = has_detector(process) ? active(process).emitter() : no_rank;
    return rank == no_rank ? no_rank : process_at(process, rank);
}

rank_t world::observer_of(rank_t process) const {
    const rank_t rank = has_detector(process) ? active(process).observer() : no_rank;
    return rank == no_rank ? no_rank : process_at(process, rank);
}

std::span<const rank_t> world::dead_set_of(rank_t process) const {
    if (!has_detector(process)) {
        return {};
    }
    if (!join_) {
        return active(process).dead().ranks();
    }
    translated_.clear();
    for (const rank_t rank : active(process).dead().ranks()) {
        translated_.push_back(process_at(process, rank));
    }
    std::sort(translated_.begin(), translated_.end());
    return translated_;
}

namespace {
void add_counters(detector_stats& total, const detector_stats& one) {
    total.heartbeats_sent += one.heartbeats_sent;
    total.heartbeats_missed += one.heartbeats_missed;
    total.suspicions += one.suspicions;
    total.new_observer_sent += one.new_observer_sent;
    total.notices_started += one.notices_started;
    total.notice_messages_sent += one.notice_messages_sent;
    total.notices_received += one.notices_received;
    total.notices_duplicate += one.notices_duplicate;
    total.malformed_dropped += one.malformed_dropped;
    total.stale_heartbeats += one.stale_heartbeats;
    total.probes_sent += one.probes_sent;
    total.confirmations += one.confirmations;
    total.confirmed_alive += one.confirmed_alive;
    total.close_calls += one.close_calls;
    total.late_wakeups += one.late_wakeups;
    total.quorum_holds += one.quorum_holds;
    total.witness_queries += one.witness_queries;
    total.witnessed_running += one.witnessed_running;
    total.witnessed_starved += one.witnessed_starved;
    total.witnessed_down += one.witnessed_down;
    total.witness_answers += one.witness_answers;
    total.censuses += one.censuses;
    total.census_probes += one.census_probes;
    total.joins_sent += one.joins_sent;
    total.joins_received += one.joins_received;
}
}  // namespace

run_result world::collect() {
    run_result result;
    result.seed = seed_;
    result.failures = failures_struck_;
    result.victims = victims_;
    result.expected_stops = expected_stops_;
    result.cut_side = cut_side_;
    result.losing_side = losing_side_;
    result.violations = oracle_.violations();
    result.details = oracle_.details();
    if (deadline_anomalies_ > 0) {
        result.details.push_back("note: tick() returned a deadline in the past " +
                                 std::to_string(deadline_anomalies_) + " times");
    }
    const auto& periods = oracle_.periods();
    if (!periods.empty()) {
        const time_ns first = periods.front().start;
        if (oracle_.first_known_at() >= 0) {
            result.first_known_ns = oracle_.first_known_at() - first;
        }
        if (periods.back().known_at >= 0) {
            result.all_known_ns = periods.back().known_at - first;
        }
        if (periods.back().stable_at >= 0) {
            result.stable_ns = periods.back().stable_at - first;
        }
        if (oracle_.all_stopped_at() >= 0) {
            result.all_stopped_ns = oracle_.all_stopped_at() - first;
        }
    }
    for (const unstable_period& period : periods) {
        result.failures_during_stabilization += period.failures - 1;
        if (period.stable_at >= 0 && oracle_.bound_applicable(period)) {
            result.bound_checked = true;
            result.bound_failures = std::max(result.bound_failures, period.failures);
        }
    }
    result.bound_ratio = oracle_.max_bound_ratio();
    for (rank_t process = 0; process < config_.nodes; ++process) {
        if (!has_detector(process)) {
            continue;
        }
        add_counters(result.totals, active(process).stats());
        if (oracle_.alive(process)) {
            result.survivor_notice_messages += active(process).stats().notice_messages_sent;
        }
    }
    if (join_) {
        add_join_totals(result, add_counters);
        check_everyone_moved(result);
    }
    result.network = network_.stats();
    result.events = events_;
    result.peak_queue = queue_.peak_size();
    result.end_ns = now_;
    return result;
}

run_result simulate(const sim_config& config, std::uint64_t run_seed) {
    world one(config, run_seed);
    return one.run();
}

}  // namespace btl_ft::sim
