// The C ABI of btl_ft.h: validates the configuration with messages that name
// the field (they end up in MPI_Init's error output, next to the MCA
// parameter), builds the ring, and bridges the C callbacks to the C++
// transport and sink. No protocol logic lives here. No exception leaves
// this file: the caller is C.
#include "btl_ft/btl_ft.h"
#include "btl_ft/wire.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "btl_ft/dead_set.hpp"
#include "btl_ft/detector.hpp"
#include "btl_ft/membership.hpp"
#include "btl_ft/node_layout.hpp"
#include "btl_ft/ring.hpp"

static_assert(static_cast<int>(btl_ft::ring_order::rank) == BTL_FT_RING_RANK &&
              static_cast<int>(btl_ft::ring_order::node) == BTL_FT_RING_NODE &&
              static_cast<int>(btl_ft::ring_order::shuffle) == BTL_FT_RING_SHUFFLE);
static_assert(static_cast<int>(btl_ft::process_state::unknown) == BTL_FT_STATE_UNKNOWN &&
              static_cast<int>(btl_ft::process_state::running) == BTL_FT_STATE_RUNNING &&
              static_cast<int>(btl_ft::process_state::stopped) == BTL_FT_STATE_STOPPED &&
              static_cast<int>(btl_ft::process_state::gone) == BTL_FT_STATE_GONE &&
              static_cast<int>(btl_ft::process_state::starved) == BTL_FT_STATE_STARVED);
static_assert(static_cast<int>(btl_ft::propagator_kind::hba) == BTL_FT_PROPAGATOR_HBA &&
              static_cast<int>(btl_ft::propagator_kind::bmg) == BTL_FT_PROPAGATOR_BMG &&
              static_cast<int>(btl_ft::propagator_kind::chord) == BTL_FT_PROPAGATOR_CHORD);
static_assert(static_cast<int>(btl_ft::hierarchy_kind::flat) == BTL_FT_HIERARCHY_FLAT &&
              static_cast<int>(btl_ft::hierarchy_kind::node) == BTL_FT_HIERARCHY_NODE);

namespace {

int c_kind(btl_ft::failure_kind kind) {
    switch (kind) {
    case btl_ft::failure_kind::crashed: return BTL_FT_CRASHED;
    case btl_ft::failure_kind::unreachable: return BTL_FT_UNREACHABLE;
    case btl_ft::failure_kind::suspected: return BTL_FT_HUNG;
    }
    return 0;
}

class c_bridge final : public btl_ft::transport, public btl_ft::sink {
public:
    explicit c_bridge(const btl_ft_callbacks_t& callbacks) : callbacks_(callbacks) {}

    bool put_heartbeat(btl_ft::rank_t observer, std::uint64_t word) override {
        return callbacks_.put_heartbeat(callbacks_.context, observer, word) == 0;
    }
    void send(btl_ft::rank_t peer, std::span<const std::byte> bytes) override {
        callbacks_.send(callbacks_.context, peer, bytes.data(), bytes.size());
    }
    void on_observer_handle(btl_ft::rank_t observer, std::span<const std::byte> handle) override {
        if (callbacks_.observer_handle != nullptr) {
            callbacks_.observer_handle(callbacks_.context, observer, handle.empty() ? nullptr : handle.data(), handle.size());
        }
    }
    void on_failed(std::span<const btl_ft::rank_t> ranks) override {
        callbacks_.failed(callbacks_.context, ranks.data(), ranks.size());
    }
    void on_declared_dead_self(btl_ft::rank_t told_by, const char* reason) override {
        callbacks_.declared_dead_self(callbacks_.context, told_by, reason);
    }
    void on_suspected(std::span<const btl_ft::rank_t> ranks) override {
        if (callbacks_.suspected != nullptr) {
            callbacks_.suspected(callbacks_.context, ranks.data(), ranks.size());
        }
    }
    void on_close_call(btl_ft::rank_t emitter, btl_ft::time_ns silent_ns) override {
        if (callbacks_.close_call != nullptr) {
            callbacks_.close_call(callbacks_.context, emitter, silent_ns);
        }
    }

    void on_join(btl_ft::rank_t from, const btl_ft::join_notice& join) override {
        if (callbacks_.joined == nullptr) {
            return;
        }
        std::vector<btl_ft_job_extent_t> jobs;
        std::vector<btl_ft_known_failure_t> known;
        for (const btl_ft::job_extent& job : join.jobs) {
            jobs.push_back({job.job, job.size, job.since});
        }
        for (const btl_ft::known_failure& failure : join.known) {
            known.push_back({failure.rank, c_kind(failure.kind)});
        }
        callbacks_.joined(callbacks_.context, from, join.epoch, jobs.data(), jobs.size(), known.data(), known.size());
    }

    btl_ft::process_state local_state(btl_ft::rank_t rank) override {
        if (callbacks_.local_state == nullptr) {
            return btl_ft::process_state::unknown;
        }
        const int state = callbacks_.local_state(callbacks_.context, rank);
        return state >= BTL_FT_STATE_UNKNOWN && state <= BTL_FT_STATE_STARVED ? static_cast<btl_ft::process_state>(state)
                                                                         : btl_ft::process_state::unknown;
    }

private:
    btl_ft_callbacks_t callbacks_;
};

std::string check_c_args(const btl_ft_config_t* config, const btl_ft_callbacks_t* callbacks) {
    if (config == nullptr) return "config is NULL";
    if (callbacks == nullptr) return "callbacks is NULL";
    if (callbacks->put_heartbeat == nullptr) return "callbacks.put_heartbeat is NULL";
    if (callbacks->send == nullptr) return "callbacks.send is NULL";
    if (callbacks->failed == nullptr) return "callbacks.failed is NULL";
    if (callbacks->declared_dead_self == nullptr) return "callbacks.declared_dead_self is NULL";
    return {};
}

// An MCA word into its enum value: 0, or -1 on an unknown word.
template <typename Parse>
int parse_word(const char* word, int* out, Parse parse) {
    if (word == nullptr || out == nullptr) return -1;
    const auto parsed = parse(word);
    if (!parsed) return -1;
    *out = static_cast<int>(*parsed);
    return 0;
}

bool valid_ring_order(int value) { return value >= BTL_FT_RING_RANK && value <= BTL_FT_RING_SHUFFLE; }
bool valid_propagator(int value) { return value >= BTL_FT_PROPAGATOR_HBA && value <= BTL_FT_PROPAGATOR_CHORD; }
bool valid_hierarchy(int value) { return value >= BTL_FT_HIERARCHY_FLAT && value <= BTL_FT_HIERARCHY_NODE; }

// The fields only the C ABI has (enum values as ints, a pointer and its length).
std::optional<btl_ft::config_problem> c_field_problem(const btl_ft_config_t& config) {
    if (!valid_ring_order(config.ring_order)) {
        return btl_ft::config_problem{BTL_FT_FIELD_RING_ORDER, config.ring_order,
                                      std::string("must be one of ") + btl_ft_ring_order_words};
    }
    if (!valid_propagator(config.propagator)) {
        return btl_ft::config_problem{BTL_FT_FIELD_PROPAGATOR, config.propagator,
                                      std::string("must be one of ") + btl_ft_propagator_words};
    }
    if (!valid_hierarchy(config.hierarchy)) {
        return btl_ft::config_problem{BTL_FT_FIELD_HIERARCHY, config.hierarchy,
                                      std::string("must be one of ") + btl_ft_hierarchy_words};
    }
    if (config.flag_handle == nullptr && config.flag_handle_length > 0) {
        return btl_ft::config_problem{BTL_FT_FIELD_FLAG_HANDLE_LENGTH, static_cast<long long>(config.flag_handle_length),
                                      "needs a flag_handle, which is NULL"};
    }
    if (config.known_failures == nullptr && config.known_failure_count > 0) {
        return btl_ft::config_problem{BTL_FT_FIELD_KNOWN_FAILURES, static_cast<long long>(config.known_failure_count),
                                      "(a count) needs known_failures, which is NULL"};
    }
    for (std::size_t i = 0; i < config.known_failure_count; ++i) {
        const int kind = config.known_failures[i].kind;
        if (kind < BTL_FT_UNREACHABLE || kind > BTL_FT_HUNG) {
            return btl_ft::config_problem{BTL_FT_FIELD_KNOWN_FAILURES, kind,
                                          "(a kind) must be an enum btl_ft_failure_kind"};
        }
    }
    return std::nullopt;
}

btl_ft::failure_kind core_kind(int kind) {
    switch (kind) {
    case BTL_FT_CRASHED: return btl_ft::failure_kind::crashed;
    case BTL_FT_HUNG: return btl_ft::failure_kind::suspected;
    default: return btl_ft::failure_kind::unreachable;
    }
}

// Through make_config, as ftsim and the unit tests' fakes build theirs. The
// known failures are copied into `known`, which must outlive the result.
btl_ft::detector_config core_config(const btl_ft_config_t& config, std::vector<btl_ft::known_failure>& known) {
    btl_ft::detector_config out = btl_ft::make_config(config.size, config.self, config.period_ns, config.timeout_ns);
    known.clear();
    for (std::size_t i = 0; config.known_failures != nullptr && i < config.known_failure_count; ++i) {
        known.push_back({config.known_failures[i].rank, core_kind(config.known_failures[i].kind)});
    }
    out.known_failures = known;
    out.start_skew_ns = config.start_skew_ns;
    out.propagator = static_cast<btl_ft::propagator_kind>(config.propagator);
    out.max_message_bytes = config.max_message_bytes == 0 ? BTL_FT_MESSAGE_MAX_BYTES : config.max_message_bytes;
    out.flag_handle = {static_cast<const std::byte*>(config.flag_handle), config.flag_handle_length};
    out.quorum = config.quorum != 0;
    if (config.probe_width != 0) {
        out.probe_width = config.probe_width;
    }
    if (config.quorum_wait_ns != 0) {
        out.quorum_wait_ns = config.quorum_wait_ns;
    }
    out.confirm_ns = config.confirm_ns;
    out.answer_within_ns = config.answer_within_ns;
    out.node_grace_ns = config.node_grace_ns;
    out.witness_patience_ns = config.witness_patience_ns;
    if (config.node_of_rank != nullptr && config.witness != 0) {
        out.node_of_rank = std::make_shared<const std::vector<std::uint32_t>>(config.node_of_rank,
                                                                              config.node_of_rank + config.size);
    }
    if (valid_hierarchy(config.hierarchy)) {
        out.hierarchy = static_cast<btl_ft::hierarchy_kind>(config.hierarchy);
    }
    if (out.hierarchy == btl_ft::hierarchy_kind::node && config.size > 0) {
        out.layout = config.node_of_rank != nullptr
                         ? btl_ft::node_layout::make({config.node_of_rank, config.size})
                         : btl_ft::node_layout::make(std::vector<std::uint32_t>(config.size, 0));
    }
    return out;
}

std::optional<btl_ft::config_problem> first_problem(const btl_ft_config_t& config, const btl_ft::detector_config& core) {
    if (auto problem = c_field_problem(config)) return problem;
    return btl_ft::find_config_problem(core);
}

// C jobs as the core's, checked here where the core would assert: at least
// one, none empty, no more processes than a rank can name (their total in
// `total`), and with `ordered`, listed as a union lists them.
std::optional<std::vector<btl_ft::job_extent>> extents_of(const btl_ft_job_extent_t* jobs, std::size_t count, bool ordered,
                                                          btl_ft::rank_t& total) {
    std::vector<btl_ft::job_extent> extents;
    total = 0;
    for (std::size_t i = 0; jobs != nullptr && i < count; ++i) {
        if (jobs[i].size == 0 || jobs[i].size >= btl_ft::no_rank - 1 - total) {
            return std::nullopt;
        }
        total += jobs[i].size;
        extents.push_back({jobs[i].job, jobs[i].size, jobs[i].since});
    }
    if (extents.empty() || (ordered && !btl_ft::in_union_order(extents))) {
        return std::nullopt;
    }
    return extents;
}

void write_error(char* error, std::size_t error_length, const char* what, const char* text) noexcept {
    if (error != nullptr && error_length > 0) {
        std::snprintf(error, error_length, "btl_ft: %s: %s", what, text);
    }
}

}  // namespace

struct btl_ft_membership {
    btl_ft::membership of;
};

struct btl_ft_detector {
    explicit btl_ft_detector(const btl_ft_callbacks_t& callbacks) : bridge(callbacks) {}
    c_bridge bridge;
    std::unique_ptr<btl_ft::detector> core;
    char failure[160] = "";  // a fixed buffer: recording a bad_alloc must not allocate
};

namespace {

// What the exception being handled says; called from a catch (...) block,
// which keeps the exception, and so the text, alive.
const char* current_exception_text() noexcept {
    try {
        throw;
    } catch (const std::exception& e) {
        return e.what();
    } catch (...) {
        return "an exception of unknown type";
    }
}

// Runs one call into the core; an exception is caught here and leaves the
// detector inert, since the core's state may be half updated.
template <typename Call>
int guarded(btl_ft_detector_t* detector, Call&& call) noexcept {
    if (detector->failure[0] != '\0') return BTL_FT_BROKEN;
    try {
        call();
        return 0;
    } catch (...) {
        std::snprintf(detector->failure, sizeof detector->failure, "%s", current_exception_text());
    }
    return BTL_FT_BROKEN;
}

}  // namespace

extern "C" {

const char btl_ft_ring_order_words[] = "rank|node|shuffle";
const char btl_ft_propagator_words[] = "hba|bmg|chord";
const char btl_ft_hierarchy_words[] = "flat|node";

int btl_ft_create(const btl_ft_config_t* config, const btl_ft_callbacks_t* callbacks, btl_ft_detector_t** out,
                  char* error, size_t error_length) {
    try {
        std::string problem = out == nullptr ? "out is NULL" : check_c_args(config, callbacks);
        btl_ft::detector_config core;
        std::vector<btl_ft::known_failure> known;
        if (problem.empty()) {
            core = core_config(*config, known);
            if (const auto found = first_problem(*config, core)) {
                problem = "config." + btl_ft::describe(*found);
            }
        }
        if (!problem.empty()) {
            write_error(error, error_length, "invalid detector configuration", problem.c_str());
            return -1;
        }
        std::shared_ptr<const btl_ft::ring> ring;
        const auto order = static_cast<btl_ft::ring_order>(config->ring_order);
        if (core.layout) {
            ring = btl_ft::ring::make_grouped(order, *core.layout, config->seed);
        } else if (config->node_of_rank == nullptr) {
            ring = btl_ft::ring::make_flat(order, config->size, config->seed);
        } else {
            ring = btl_ft::ring::make(order, {config->node_of_rank, config->size}, config->seed);
        }
        auto made = std::make_unique<btl_ft_detector>(*callbacks);
        made->core = std::make_unique<btl_ft::detector>(core, std::move(ring), made->bridge, made->bridge);
        *out = made.release();
        return 0;
    } catch (...) {
        write_error(error, error_length, "could not create the detector", current_exception_text());
    }
    return -1;
}

void btl_ft_destroy(btl_ft_detector_t* detector) { delete detector; }

int btl_ft_start(btl_ft_detector_t* detector, int64_t now_ns) {
    return guarded(detector, [&] { detector->core->start(now_ns); });
}

int64_t btl_ft_tick(btl_ft_detector_t* detector, int64_t now_ns) {
    int64_t next = BTL_FT_BROKEN;
    const int status = guarded(detector, [&] { next = detector->core->tick(now_ns); });
    return status == 0 ? next : status;
}

int btl_ft_on_message(btl_ft_detector_t* detector, int64_t now_ns, uint32_t from, const void* bytes, size_t length) {
    bool accepted = false;
    const int status = guarded(detector, [&] {
        accepted = detector->core->on_message(now_ns, from, {static_cast<const std::byte*>(bytes), length});
    });
    return status != 0 ? status : accepted ? 0 : -1;
}

int btl_ft_on_heartbeat_word(btl_ft_detector_t* detector, int64_t now_ns, uint64_t word) {
    return guarded(detector, [&] { detector->core->on_heartbeat_word(now_ns, word); });
}

namespace {
btl_ft::failure_kind reported_kind(int kind) {
    return kind == BTL_FT_CRASHED ? btl_ft::failure_kind::crashed : btl_ft::failure_kind::unreachable;
}
}  // namespace

int btl_ft_report_failure(btl_ft_detector_t* detector, int64_t now_ns, uint32_t rank, int kind) {
    return guarded(detector, [&] { detector->core->report_failure(now_ns, rank, reported_kind(kind)); });
}

int btl_ft_report_failures(btl_ft_detector_t* detector, int64_t now_ns, const uint32_t* ranks, const int* kinds,
                           size_t count) {
    return guarded(detector, [&] {
        std::vector<btl_ft::detector::failure_report> reports(count);
        for (size_t i = 0; i < count; ++i) {
            reports[i] = {ranks[i], reported_kind(kinds[i])};
        }
        detector->core->report_failures(now_ns, reports);
    });
}

int btl_ft_on_shrunk(btl_ft_detector_t* detector, int64_t now_ns, const uint32_t* members, size_t count) {
    return guarded(detector, [&] { detector->core->on_shrunk(now_ns, {members, count}); });
}

int btl_ft_leave(btl_ft_detector_t* detector, int64_t now_ns, const uint32_t* leaving_too, size_t count) {
    return guarded(detector, [&] { detector->core->leave(now_ns, {leaving_too, leaving_too == nullptr ? 0 : count}); });
}

long btl_ft_announce_join(btl_ft_detector_t* detector, int64_t now_ns, uint32_t epoch, const btl_ft_job_extent_t* jobs,
                          size_t job_count, const btl_ft_known_failure_t* known, size_t known_count, const uint32_t* to,
                          size_t to_count) {
    long carried = -1;
    const int status = guarded(detector, [&] {
        btl_ft::rank_t total = 0;
        const auto extents = extents_of(jobs, job_count, true, total);
        std::vector<btl_ft::known_failure> failures;
        if (!extents || extents->back().since != epoch) {
            return;
        }
        for (std::size_t i = 0; known != nullptr && i < known_count; ++i) {
            if (known[i].rank >= total || (i > 0 && known[i].rank <= known[i - 1].rank)) {
                return;
            }
            failures.push_back({known[i].rank, core_kind(known[i].kind)});
        }
        carried = detector->core->announce_join(now_ns, {epoch, *extents, failures}, {to, to == nullptr ? 0 : to_count});
    });
    return status != 0 ? status : carried;
}

int btl_ft_is_join(const void* bytes, size_t length) {
    return bytes != nullptr && btl_ft::wire::is_join({static_cast<const std::byte*>(bytes), length}) ? 1 : 0;
}

const char* btl_ft_failure(const btl_ft_detector_t* detector) {
    return detector->failure[0] == '\0' ? nullptr : detector->failure;
}

uint32_t btl_ft_emitter(const btl_ft_detector_t* detector) { return detector->core->emitter(); }
uint32_t btl_ft_observer(const btl_ft_detector_t* detector) { return detector->core->observer(); }
int btl_ft_is_dead(const btl_ft_detector_t* detector, uint32_t rank) { return detector->core->dead().contains(rank) ? 1 : 0; }

int btl_ft_failure_kind(const btl_ft_detector_t* detector, uint32_t rank) {
    return detector->core->dead().contains(rank) ? c_kind(detector->core->kind_of(rank)) : 0;
}

void btl_ft_get_stats(const btl_ft_detector_t* detector, btl_ft_stats_t* out) {
    const btl_ft::detector_stats& stats = detector->core->stats();
    *out = {stats.heartbeats_sent,     stats.heartbeats_missed,      stats.suspicions,       stats.new_observer_sent,
            stats.notices_started,     stats.notice_messages_sent,   stats.notices_received, stats.notices_duplicate,
            stats.malformed_dropped,   stats.stale_heartbeats,       stats.confirmations,    stats.confirmed_alive,
            stats.close_calls,         stats.late_wakeups,           stats.quorum_holds,     stats.witness_queries,
            stats.witnessed_running,   stats.witnessed_down,         stats.witness_answers,  stats.joins_sent,
            stats.joins_received,      stats.witnessed_starved};
}

int btl_ft_parse_ring_order(const char* word, int* out) { return parse_word(word, out, btl_ft::parse_ring_order); }
int btl_ft_parse_propagator(const char* word, int* out) { return parse_word(word, out, btl_ft::parse_propagator); }
int btl_ft_parse_hierarchy(const char* word, int* out) { return parse_word(word, out, btl_ft::parse_hierarchy); }

const char* btl_ft_ring_order_name(int ring_order) {
    if (!valid_ring_order(ring_order)) return nullptr;
    return btl_ft::name_of(static_cast<btl_ft::ring_order>(ring_order)).data();
}

const char* btl_ft_propagator_name(int propagator) {
    if (!valid_propagator(propagator)) return nullptr;
    return btl_ft::name_of(static_cast<btl_ft::propagator_kind>(propagator)).data();
}

const char* btl_ft_hierarchy_name(int hierarchy) {
    if (!valid_hierarchy(hierarchy)) return nullptr;
    return btl_ft::name_of(static_cast<btl_ft::hierarchy_kind>(hierarchy)).data();
}

int btl_ft_config_problem(const btl_ft_config_t* config, char* rule, size_t rule_length) {
    const auto say = [&](const char* text) {
        if (rule != nullptr && rule_length > 0) std::snprintf(rule, rule_length, "%s", text);
    };
    if (config == nullptr) {
        say("is NULL");
        return BTL_FT_FIELD_CONFIG;
    }
    try {
        std::vector<btl_ft::known_failure> known;
        const auto problem = first_problem(*config, core_config(*config, known));
        if (!problem) return BTL_FT_FIELD_NONE;
        say(problem->rule.c_str());
        return problem->field;
    } catch (...) {
        say(current_exception_text());  // checking met an exception: the configuration as a whole
        return BTL_FT_FIELD_CONFIG;
    }
}

btl_ft_membership_t* btl_ft_membership_create(const btl_ft_job_extent_t* jobs, size_t count) {
    try {
        btl_ft::rank_t total = 0;
        const auto extents = extents_of(jobs, count, false, total);
        return extents ? new btl_ft_membership{btl_ft::membership::of(*extents)} : nullptr;
    } catch (...) {
        return nullptr;
    }
}

btl_ft_membership_t* btl_ft_membership_merged(const btl_ft_membership_t* a, const btl_ft_membership_t* b) {
    try {
        return new btl_ft_membership{btl_ft::membership::merged(a->of, b->of)};
    } catch (...) {
        return nullptr;  // out of memory, or more processes than ranks can name
    }
}

int btl_ft_membership_verdict(const btl_ft_membership_t* watched, const btl_ft_membership_t* heard) {
    switch (btl_ft::verdict_on(watched->of, heard->of)) {
    case btl_ft::join_verdict::stale: return BTL_FT_JOIN_STALE;
    case btl_ft::join_verdict::follow: return BTL_FT_JOIN_FOLLOW;
    case btl_ft::join_verdict::merge: return BTL_FT_JOIN_MERGE;
    }
    return BTL_FT_JOIN_STALE;
}

uint64_t btl_ft_membership_identity(const btl_ft_membership_t* membership) { return membership->of.identity(); }

void btl_ft_membership_destroy(btl_ft_membership_t* membership) { delete membership; }
uint32_t btl_ft_membership_epoch(const btl_ft_membership_t* membership) { return membership->of.epoch(); }
uint32_t btl_ft_membership_size(const btl_ft_membership_t* membership) { return membership->of.size(); }
size_t btl_ft_membership_job_count(const btl_ft_membership_t* membership) { return membership->of.jobs().size(); }

btl_ft_job_extent_t btl_ft_membership_job_at(const btl_ft_membership_t* membership, size_t index) {
    const btl_ft::job_extent extent = membership->of.jobs()[index];
    return {extent.job, extent.size, extent.since};
}

int btl_ft_membership_rank_of(const btl_ft_membership_t* membership, uint32_t job, uint32_t job_rank, uint32_t* rank) {
    const auto found = membership->of.rank_of({job, job_rank});
    if (!found) return -1;
    *rank = *found;
    return 0;
}

int btl_ft_membership_member_at(const btl_ft_membership_t* membership, uint32_t rank, uint32_t* job,
                                uint32_t* job_rank) {
    if (rank >= membership->of.size()) return -1;
    const btl_ft::member process = membership->of.member_at(rank);
    *job = process.job;
    *job_rank = process.rank;
    return 0;
}

const char* btl_ft_config_field_name(int field) {
    if (field < BTL_FT_FIELD_NONE || field >= BTL_FT_FIELD_COUNT) return nullptr;
    return btl_ft::name_of(static_cast<btl_ft_config_field>(field));
}

}  // extern "C"
