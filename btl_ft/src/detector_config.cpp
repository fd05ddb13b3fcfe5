// A detector's configuration: how one is made (make_config, with libmpi's
// defaults), the values derived from it, each with its one formula, and the
// rules a usable one follows. The rules are the core's alone: the shim and
// ftsim only check that a value is of the right kind (a number, a known
// word), then report the core's verdict under their own names, which they
// find by field id.
#include <algorithm>
#include <array>
#include <bit>
#include <string>

#include "btl_ft/detector.hpp"
#include "btl_ft/node_layout.hpp"
#include "btl_ft/wire.hpp"

namespace btl_ft {
namespace {

config_problem too(btl_ft_config_field field, long long value, std::string rule) {
    return {field, value, std::move(rule)};
}

constexpr bool interval_ok(time_ns value) { return value >= 0 && value <= max_interval_ns; }

}  // namespace

detector_config make_config(rank_t size, rank_t self, time_ns period_ns, time_ns timeout_ns) {
    detector_config config;
    config.size = size;
    config.self = self;
    config.period_ns = period_ns;
    config.timeout_ns = timeout_ns;
    config.propagator = static_cast<propagator_kind>(BTL_FT_DEFAULT_PROPAGATOR);
    config.probe_width = BTL_FT_DEFAULT_PROBE_WIDTH;
    config.quorum = BTL_FT_DEFAULT_QUORUM != 0;
    config.node_grace_ns = BTL_FT_DEFAULT_NODE_GRACE_NS;
    return config;
}

time_ns detector_config::confirm_window() const {
    const time_ns window = confirm_ns > 0 ? confirm_ns : default_confirm_ns(timeout_ns);
    return std::max(window, answer_within_ns);
}

time_ns detector_config::confirm_lead() const { return std::min(confirm_window(), timeout_ns - period_ns); }

std::uint32_t detector_config::probe_width_used() const {
    const auto log2_size = static_cast<std::uint32_t>(std::bit_width(size) - 1);
    return std::max<std::uint32_t>(1, std::min(probe_width, log2_size));
}

std::optional<config_problem> find_config_problem(const detector_config& config) {
    if (config.size == 0) return too(BTL_FT_FIELD_SIZE, 0, "must be at least 1");
    if (config.size == no_rank) return too(BTL_FT_FIELD_SIZE, config.size, "must be below 2^32-1");
    if (config.self >= config.size) return too(BTL_FT_FIELD_SELF, config.self, "must be below size");
    if (config.period_ns <= 0) return too(BTL_FT_FIELD_PERIOD_NS, config.period_ns, "must be positive");
    if (config.timeout_ns <= config.period_ns) {
        return too(BTL_FT_FIELD_TIMEOUT_NS, config.timeout_ns, "must be larger than the period");
    }
    if (config.timeout_ns > max_interval_ns) {
        return too(BTL_FT_FIELD_TIMEOUT_NS, config.timeout_ns, "must be at most 2^52 ns (about 52 days)");
    }
    if (!interval_ok(config.start_skew_ns)) {
        return too(BTL_FT_FIELD_START_SKEW_NS, config.start_skew_ns, "must be in [0, 2^52] ns");
    }
    if (config.max_message_bytes < wire::min_message_bytes) {
        return too(BTL_FT_FIELD_MAX_MESSAGE_BYTES, static_cast<long long>(config.max_message_bytes),
                   "must be at least 128");
    }
    if (config.flag_handle.size() > wire::max_handle_bytes) {
        return too(BTL_FT_FIELD_FLAG_HANDLE_LENGTH, static_cast<long long>(config.flag_handle.size()),
                   "must be at most " + std::to_string(wire::max_handle_bytes));
    }
    if (config.probe_width < 1 || config.probe_width > max_probe_width) {
        return too(BTL_FT_FIELD_PROBE_WIDTH, config.probe_width,
                   "must be in [1, " + std::to_string(max_probe_width) + "]");
    }
    if (!interval_ok(config.witness_patience_ns)) {
        return too(BTL_FT_FIELD_WITNESS_PATIENCE_NS, config.witness_patience_ns, "must be in [0, 2^52] ns");
    }
    if (!interval_ok(config.node_grace_ns)) {
        return too(BTL_FT_FIELD_NODE_GRACE_NS, config.node_grace_ns, "must be in [0, 2^52] ns");
    }
    if (config.node_of_rank && config.node_of_rank->size() != config.size) {
        return too(BTL_FT_FIELD_NODE_OF_RANK, static_cast<long long>(config.node_of_rank->size()),
                   "must have size entries");
    }
    if (!interval_ok(config.quorum_wait_ns)) {
        return too(BTL_FT_FIELD_QUORUM_WAIT_NS, config.quorum_wait_ns, "must be in [0, 2^52] ns");
    }
    if (config.confirm_ns < 0 || config.confirm_ns > config.timeout_ns) {
        return too(BTL_FT_FIELD_CONFIRM_NS, config.confirm_ns, "must be in [0, timeout_ns] (0: the default)");
    }
    if (config.answer_within_ns < 0 || config.answer_within_ns > config.timeout_ns) {
        return too(BTL_FT_FIELD_ANSWER_WITHIN_NS, config.answer_within_ns, "must be in [0, timeout_ns]");
    }
    if (config.propagator > propagator_kind::chord) {
        return too(BTL_FT_FIELD_PROPAGATOR, static_cast<int>(config.propagator), "is unknown");
    }
    if (config.hierarchy > hierarchy_kind::node) {
        return too(BTL_FT_FIELD_HIERARCHY, static_cast<int>(config.hierarchy), "is unknown");
    }
    for (const known_failure& failure : config.known_failures) {
        if (failure.rank >= config.size || failure.rank == config.self) {
            return too(BTL_FT_FIELD_KNOWN_FAILURES, failure.rank, "must name ranks below size, other than self");
        }
    }
    if (config.hierarchy == hierarchy_kind::node && (!config.layout || config.layout->size() != config.size)) {
        return too(BTL_FT_FIELD_HIERARCHY, static_cast<int>(config.hierarchy),
                   "needs the node of every rank (a node layout of size entries)");
    }
    return std::nullopt;
}

const char* name_of(btl_ft_config_field field) {
    static constexpr std::array<const char*, BTL_FT_FIELD_COUNT> names = {
        "(none)",        "config",           "size",           "self",
        "period_ns",     "timeout_ns",       "start_skew_ns",  "ring_order",
        "propagator",    "node_of_rank",     "max_message_bytes", "flag_handle_length",
        "probe_width",   "quorum_wait_ns",   "confirm_ns",     "answer_within_ns",
        "witness_patience_ns", "node_grace_ns", "hierarchy", "known_failures",
    };
    const auto index = static_cast<std::size_t>(field);
    return index < names.size() ? names[index] : "?";
}

std::string describe(const config_problem& problem) {
    return std::string(name_of(problem.field)) + " (" + std::to_string(problem.value) + ") " + problem.rule;
}

std::string config_error(const detector_config& config) {
    const auto problem = find_config_problem(config);
    return problem ? describe(*problem) : std::string();
}

}  // namespace btl_ft
