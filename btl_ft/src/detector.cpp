// Entry points of the detector: argument checks, the reentrancy guard,
// message dispatch, and the invariants checked after every call. The
// protocol itself lives in detector_ring.cpp and detector_notice.cpp.
#include "btl_ft/detector.hpp"

#include <algorithm>

#include "btl_ft/assert.hpp"
#include "detector_state.hpp"

namespace btl_ft {
namespace {

// Marks the detector busy for the duration of an entry point and checks the
// invariants on the way out.
class call_guard {
public:
    // Every entry point passes the caller's clock; the protocol's deadlines
    // assume it never goes back (the shim reads it under its core lock).
    call_guard(detector::state& s, time_ns now) : s_(s) {
        BTL_FT_ASSERT(!s_.in_call, "a transport or sink callback called back into the detector");
        BTL_FT_ASSERT(now >= s_.last_call_at, "the caller's clock went backwards");
        s_.in_call = true;
        s_.last_call_at = now;
    }
    ~call_guard() {
        s_.check_invariants();
        s_.due_at = s_.next_deadline();
        s_.in_call = false;
    }
    call_guard(const call_guard&) = delete;
    call_guard& operator=(const call_guard&) = delete;

private:
    detector::state& s_;
};

}  // namespace

detector::state::state(const detector_config& given, std::shared_ptr<const ring> shared_ring, transport& transport_to,
                       sink& sink_to)
    : config(given), ring_order(std::move(shared_ring)), net(transport_to), out(sink_to) {
    const std::string error = config_error(config);
    BTL_FT_ASSERT(error.empty(), error.c_str());
    BTL_FT_ASSERT(ring_order && ring_order->size() == config.size, "ring size differs from the job size");
    std::copy(config.flag_handle.begin(), config.flag_handle.end(), handle.begin());
    config.flag_handle = std::span<const std::byte>(handle.data(), given.flag_handle.size());
    for (const known_failure& failure : config.known_failures) {
        BTL_FT_ASSERT(failure.rank < config.size && failure.rank != config.self, "a known failure of self or beyond the job");
        dead.insert(failure.rank);
        if (failure.kind == failure_kind::crashed) crashed.insert(failure.rank);
        if (failure.kind == failure_kind::unreachable) unreachable.insert(failure.rank);
    }
    noticed = dead;  // their notices went out before the join
    config.known_failures = {};
    emitter = find_emitter();
    observer = ring_order->successor(config.self);
    while (observer != config.self && gone(observer)) {
        observer = ring_order->successor(observer);
    }
}

void detector::state::check_invariants() const {
    if (stopped) {
        return;
    }
    const rank_t me = self();
    BTL_FT_ASSERT(!dead.contains(me) && !departed.contains(me), "self is in its own dead or departed set");
    BTL_FT_ASSERT(alone() || !gone(emitter), "a dead or departed process is the emitter");
    BTL_FT_ASSERT(!alone() || dead.size() + departed.size() == config.size - 1u, "alone while a process is alive");
    BTL_FT_ASSERT(observer != me || alone(), "observer is self while not alone");
    BTL_FT_ASSERT(observer == no_rank || observer == me || !gone(observer), "a dead or departed process is the observer");
    BTL_FT_ASSERT(!started || alone() || emitter_deadline != never, "the emitter is not watched");
    BTL_FT_ASSERT(!confirm.active() || (started && !alone()), "confirming before start, or while alone");
    BTL_FT_ASSERT(probes.empty() || !alone(), "probing while alone");
    BTL_FT_ASSERT(!episode.waiting() || config.quorum, "a quorum wait with the quorum rule off");
    for (const probe_slot& slot : probes.slots()) {
        BTL_FT_ASSERT(slot.rank != emitter && slot.rank != me, "probing the emitter or self");
    }
}

detector::detector(const detector_config& config, std::shared_ptr<const ring> ring, transport& transport, sink& sink)
    : state_(std::make_unique<state>(config, std::move(ring), transport, sink)) {}

detector::~detector() = default;

void detector::start(time_ns now) {
    call_guard guard(*state_, now);
    state& s = *state_;
    BTL_FT_ASSERT(!s.started, "start() called twice");
    s.started = true;
    if (s.stopped || s.alone()) {
        return;
    }
    s.expect_emitter_by(now + s.config.first_deadline_after());
    // An observer with a flag handle (an RDMA key) registers it with its
    // first emitter exactly as after mending, or the emitter could only
    // ever send its heartbeats as messages.
    if (!s.config.flag_handle.empty()) {
        s.send_new_observer();
    }
    s.emit_heartbeat();
    s.next_heartbeat_at = now + s.config.period_ns;
}

time_ns detector::tick(time_ns now) {
    call_guard guard(*state_, now);
    state& s = *state_;
    if (!s.started || s.stopped) {
        return never;
    }
    // Ran well past its deadline: this process was descheduled or stopped,
    // and its emitter's silence may be its own. It asks before accusing,
    // once more even if it was already asking.
    const time_ns overdue = s.due_at == never ? 0 : now - s.due_at;
    const bool late = overdue > s.config.timeout_ns / 4;
    if (late) {
        ++s.stats.late_wakeups;
    }
    // Away for longer than a timeout: none of that silence was heard
    if (overdue > s.config.timeout_ns) {
        s.uncounted_ns += overdue;
    }
    if (now >= s.episode.wait_deadline() && s.check_quorum(now)) {
        return never;
    }
    if (now >= s.census_deadline()) {
        s.close_census(now);
        if (s.stopped) {
            return never;
        }
    }
    if (now >= s.emitter_deadline) {
        if (s.confirm.should_ask(late)) {
            s.start_confirm(now);
        } else {
            s.suspect_emitter(now);
        }
    }
    if (s.stopped) {
        return never;
    }
    if (now >= s.next_heartbeat_at) {
        s.emit_heartbeat();
        // After a stall, resume the period from now rather than bursting.
        const time_ns next = s.next_heartbeat_at + s.config.period_ns;
        s.next_heartbeat_at = next > now ? next : now + s.config.period_ns;
    }
    return s.next_deadline();
}

bool detector::on_message(time_ns now, rank_t from, std::span<const std::byte> bytes) {
    call_guard guard(*state_, now);
    state& s = *state_;
    if (s.stopped) {
        s.answer_after_leave(from, bytes);
        return true;
    }
    wire::message msg;  // empty vectors: decoding a heartbeat allocates nothing
    if (wire::decode(bytes, {s.config.size, s.config.max_message_bytes}, msg) != wire::status::ok) {
        ++s.stats.malformed_dropped;
        return false;
    }
    // Taken whoever sends it, from this union or another (the transport
    // delivers a JOIN across unions, membership.hpp): it names its union in
    // full, and `from` is a rank of the sender's.
    if (msg.type == wire::msg_type::join) {
        s.on_join(from, msg);
        return true;
    }
    const bool foreign = from >= s.config.size || from == s.self();
    if (foreign || ((msg.type == wire::msg_type::heartbeat || msg.type == wire::msg_type::probe_reply) &&
                    heartbeat_emitter(msg.word) != from)) {
        ++s.stats.malformed_dropped;
        return false;
    }
    // Obeyed whoever sends it, even a rank we consider dead: two processes
    // that each exclude the other must not both carry on.
    if (msg.type == wire::msg_type::declared_dead) {
        s.declared_dead_self(from, "declared dead by a peer that had already excluded this process");
        return true;
    }
    if (s.dead.contains(from)) {
        s.tell_dead(from);  // it talks after being declared dead: it must stop
        return true;
    }
    if (s.departed.contains(from)) {
        return true;
    }
    switch (msg.type) {
    case wire::msg_type::heartbeat: s.accept_word(now, msg.word); break;
    case wire::msg_type::new_observer: s.on_new_observer(now, from, msg); break;
    case wire::msg_type::notice: s.on_notice(now, from, msg); break;
    case wire::msg_type::leave: s.on_leave(now, from, msg); break;
    case wire::msg_type::declared_dead: break;
    case wire::msg_type::join: break;
    case wire::msg_type::probe: s.on_probe(from, msg); break;
    case wire::msg_type::probe_reply: s.on_probe_reply(now, from, msg); break;
    case wire::msg_type::witness: s.on_witness(from, msg); break;
    case wire::msg_type::witness_reply: s.on_witness_reply(now, from, msg); break;
    }
    return true;
}

void detector::on_heartbeat_word(time_ns now, std::uint64_t word) {
    call_guard guard(*state_, now);
    if (!state_->stopped) {
        state_->accept_word(now, word);
    }
}

void detector::report_failure(time_ns now, rank_t rank, failure_kind kind) {
    const failure_report one[] = {{rank, kind}};
    report_failures(now, one);
}

void detector::report_failures(time_ns now, std::span<const failure_report> reports) {
    call_guard guard(*state_, now);
    state& s = *state_;
    bool notify = false;
    std::vector<rank_t> failed;
    for (const failure_report& report : reports) {
        const rank_t rank = report.rank;
        if (s.stopped) {
            return;
        }
        if (rank >= s.config.size || rank == s.self()) {
            continue;
        }
        if (report.kind == failure_kind::crashed && s.dead.contains(rank)) {
            s.confirm_crash(rank);
            s.check_quorum(now);
            continue;
        }
        const bool observed = rank == s.emitter;
        if (!s.mark_failed(now, rank, report.kind)) {
            continue;
        }
        // This process observes it: it is the one to fence it, as if its own
        // timeout had found it (a transport error may name a live process).
        // A process seen ending needs no fence.
        if (observed && report.kind != failure_kind::crashed) {
            const rank_t fenced[] = {rank};
            s.out.on_suspected(fenced);
        }
        if (s.check_quorum(now)) {
            return;  // this process stops: what the call found goes no further
        }
        s.fix_neighbours(now, true);
        notify = notify || observed || !s.runtime_told_everyone(rank, report.kind);
        failed.push_back(rank);
    }
    if (notify) {
        s.broadcast(now, {});
    }
    if (!failed.empty()) {
        s.report(failed);
    }
}

void detector::on_shrunk(time_ns now, std::span<const rank_t> members) {
    call_guard guard(*state_, now);
    state& s = *state_;
    if (s.stopped) {
        return;
    }
    rank_t alive_members = 0;
    for (const rank_t rank : members) {
        alive_members += rank < s.config.size && !s.gone(rank) ? 1 : 0;
    }
    if (alive_members == s.config.size - s.dead.size() - s.departed.size()) {
        s.settle();
        s.check_quorum(now);
    }
}

void detector::leave(time_ns now, std::span<const rank_t> leaving_too) {
    call_guard guard(*state_, now);
    state& s = *state_;
    if (s.stopped) {
        return;
    }
    for (const rank_t rank : leaving_too) {
        if (rank < s.config.size && rank != s.self() && !s.dead.contains(rank)) {
            s.departed.insert(rank);
        }
    }
    s.send_leave();
    s.stopped = true;
    s.left = true;
}

long detector::announce_join(time_ns now, const join_notice& next, std::span<const rank_t> to) {
    call_guard guard(*state_, now);
    return state_->stopped ? 0 : state_->announce_join(next, to);
}

time_ns detector::next_deadline() const { return state_->next_deadline(); }

// Every line: a notice touches most of them (configuration, sets, timers,
// quorum episode, counters), and leaving any out measured slower.
void detector::prefetch_state() const {
    const char* bytes = reinterpret_cast<const char*>(state_.get());
    for (std::size_t line = 0; line < sizeof(state); line += 64) {
        __builtin_prefetch(bytes + line);
    }
}

void detector::prefetch_sets() const {
    __builtin_prefetch(state_->dead.ranks().data());
}

rank_t detector::self() const { return state_->self(); }
rank_t detector::emitter() const { return state_->emitter; }
rank_t detector::observer() const { return state_->observer; }
bool detector::stopped() const { return state_->stopped; }
const dead_set& detector::dead() const { return state_->dead; }

// A confirmation may come after the failure (a fenced hang the runtime then
// saw end): crashed wins. What a notice brings is a hang unless it names
// the rank crashed or unreachable.
failure_kind detector::kind_of(rank_t rank) const {
    if (state_->crashed.contains(rank)) return failure_kind::crashed;
    if (state_->unreachable.contains(rank)) return failure_kind::unreachable;
    return failure_kind::suspected;
}
const detector_stats& detector::stats() const { return state_->stats; }

}  // namespace btl_ft
