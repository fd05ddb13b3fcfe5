// Parsing for cli.hpp. Each flag has one small handler; an unknown flag, a
// missing value or a value out of range yields a message naming the flag.
#include "cli.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>

namespace btl_ft::sim {

namespace {

constexpr rank_t max_nodes = rank_t{1} << 26;

std::vector<std::string_view> split_commas(std::string_view text) {
    std::vector<std::string_view> parts;
    std::size_t begin = 0;
    for (;;) {
        const std::size_t comma = text.find(',', begin);
        parts.push_back(text.substr(begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin));
        if (comma == std::string_view::npos) {
            return parts;
        }
        begin = comma + 1;
    }
}

template <typename T>
std::optional<T> parse_integer(std::string_view text) {
    T value{};
    int base = 10;
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        text.remove_prefix(2);
        base = 16;
    }
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (error != std::errc{} || end != text.data() + text.size() || text.empty()) {
        return std::nullopt;
    }
    return value;
}

std::optional<double> parse_probability(std::string_view text) {
    const auto value = parse_double(text);
    if (!value || *value < 0 || *value > 1) {
        return std::nullopt;
    }
    return value;
}

using handler = std::function<std::string(cli_options&, std::string_view)>;

std::string set_fault(cli_options& options, std::string_view value) {
    static constexpr std::array<std::pair<std::string_view, fault_kind>, 4> kinds{{
        {"crash", fault_kind::crash}, {"hang", fault_kind::hang},
        {"node-loss", fault_kind::node_loss}, {"partition", fault_kind::partition},
    }};
    for (const auto& [word, kind] : kinds) {
        if (word == value) {
            options.base.fault = kind;
            return {};
        }
    }
    return "--fault: '" + std::string(value) + "' is not one of crash, hang, node-loss, partition";
}

// A handler for an on|off flag stored in `field`.
handler switch_flag(std::string flag, bool sim_config::*field) {
    return [flag, field](cli_options& options, std::string_view value) -> std::string {
        if (value != "on" && value != "off") {
            return flag + ": '" + std::string(value) + "' is not on or off";
        }
        options.base.*field = value == "on";
        return {};
    };
}

std::string set_probe_width(cli_options& options, std::string_view value) {
    const auto width = parse_integer<std::uint32_t>(value);
    if (!width || *width < 1 || *width > BTL_FT_PROBE_WIDTH_MAX) {
        return "--probe-width: '" + std::string(value) + "' is not a width in [1, " +
               BTL_FT_STRINGIFY(BTL_FT_PROBE_WIDTH_MAX) + "]";
    }
    options.base.probe_width = *width;
    return {};
}

// A delay in milliseconds into *out; an error naming the option, or empty.
std::string set_delay_ms(std::string_view option, std::string_view value, time_ns& out) {
    const auto ms = parse_double(value);
    if (!ms || *ms < 0 || *ms > 1e12) {
        return std::string(option) + ": '" + std::string(value) + "' is not a non-negative number of milliseconds";
    }
    out = static_cast<time_ns>(std::llround(*ms * 1e6));
    return {};
}

std::string set_runtime_confirms(cli_options& options, std::string_view value) {
    return set_delay_ms("--runtime-confirms-ms", value, options.base.runtime_confirms_ns);
}

std::string set_node_watch(cli_options& options, std::string_view value) {
    return set_delay_ms("--node-watch-ms", value, options.base.node_watch_ns);
}

std::string set_nodes(cli_options& options, std::string_view value) {
    options.nodes.clear();
    for (std::string_view part : split_commas(value)) {
        const auto nodes = parse_nodes(part);
        if (!nodes || *nodes < 2 || *nodes > max_nodes) {
            return "--nodes: '" + std::string(part) + "' is not a process count in [2, 2^26]";
        }
        options.nodes.push_back(*nodes);
    }
    return {};
}

std::string set_failures(cli_options& options, std::string_view value) {
    options.failures.clear();
    for (std::string_view part : split_commas(value)) {
        if (part != "max" && !parse_integer<std::uint32_t>(part)) {
            return "--failures: '" + std::string(part) + "' is not a count or 'max'";
        }
        options.failures.emplace_back(part);
    }
    return {};
}

std::string set_scenarios(cli_options& options, std::string_view value) {
    options.scenarios.clear();
    for (std::string_view part : split_commas(value)) {
        if (!find_scenario(part)) {
            return "--scenario: '" + std::string(part) + "' is not one of lownoise, lowlat";
        }
        options.scenarios.emplace_back(part);
    }
    return {};
}

std::string set_propagators(cli_options& options, std::string_view value) {
    options.propagators.clear();
    for (std::string_view part : split_commas(value)) {
        const auto kind = parse_propagator(part);
        if (!kind) {
            return "--propagator: '" + std::string(part) + "' is not one of hba, bmg, chord";
        }
        options.propagators.push_back(*kind);
    }
    return {};
}

// A handler for a flag whose value is a duration stored through `setter`.
handler duration_flag(std::string flag, std::function<void(cli_options&, time_ns)> setter, bool allow_zero) {
    return [flag, setter, allow_zero](cli_options& options, std::string_view value) -> std::string {
        const auto ns = parse_duration(value);
        if (!ns || *ns < 0 || (!allow_zero && *ns == 0)) {
            return flag + ": '" + std::string(value) + "' is not a " + (allow_zero ? "" : "positive ") +
                   "duration such as 1us, 0.1s, 10min, 1y";
        }
        setter(options, *ns);
        return {};
    };
}

handler probability_flag(std::string flag, double fault_config::*field) {
    return [flag, field](cli_options& options, std::string_view value) -> std::string {
        const auto p = parse_probability(value);
        if (!p) {
            return flag + ": '" + std::string(value) + "' is not a probability in [0, 1]";
        }
        options.base.faults.*field = *p;
        return {};
    };
}

const std::map<std::string_view, handler, std::less<>>& valued_flags() {
    static const std::map<std::string_view, handler, std::less<>> flags{
        {"--nodes", set_nodes},
        {"--failures", set_failures},
        {"--scenario", set_scenarios},
        {"--propagator", set_propagators},
        {"--runs", [](cli_options& o, std::string_view v) -> std::string {
             const auto runs = parse_integer<std::uint32_t>(v);
             if (!runs || *runs == 0) return "--runs: '" + std::string(v) + "' is not a positive count";
             o.runs = *runs;
             return {};
         }},
        {"--seed", [](cli_options& o, std::string_view v) -> std::string {
             const auto seed = parse_integer<std::uint64_t>(v);
             if (!seed) return "--seed: '" + std::string(v) + "' is not a 64-bit unsigned integer";
             o.seed = *seed;
             return {};
         }},
        {"--ppn", [](cli_options& o, std::string_view v) -> std::string {
             const auto count = parse_integer<rank_t>(v);
             if (!count || *count == 0) return "--ppn: '" + std::string(v) + "' is not a positive count";
             o.base.per_node = *count;
             return {};
         }},
        {"--fault", set_fault},
        {"--join", [](cli_options& o, std::string_view v) -> std::string {
             const auto count = parse_integer<rank_t>(v);
             if (!count || *count == 0) return "--join: '" + std::string(v) + "' is not a positive count";
             o.base.joiners = *count;
             return {};
         }},
        {"--join-participants", [](cli_options& o, std::string_view v) -> std::string {
             const auto count = parse_integer<rank_t>(v);
             if (!count || *count == 0) return "--join-participants: '" + std::string(v) + "' is not a positive count";
             o.base.join_participants = *count;
             return {};
         }},
        {"--join-jobs", [](cli_options& o, std::string_view v) -> std::string {
             const auto count = parse_integer<rank_t>(v);
             if (!count || *count == 0) return "--join-jobs: '" + std::string(v) + "' is not a positive count";
             o.base.join_jobs = *count;
             return {};
         }},
        {"--join-at", duration_flag("--join-at", [](cli_options& o, time_ns v) { o.base.join_at_ns = v; }, false)},
        {"--join-victims", [](cli_options& o, std::string_view v) -> std::string {
             if (v == "any") o.base.victims_joined = false;
             else if (v == "joined") o.base.victims_joined = true;
             else return "--join-victims: '" + std::string(v) + "' is not one of any, joined";
             return {};
         }},
        {"--probe-width", set_probe_width},
        {"--quorum", switch_flag("--quorum", &sim_config::quorum)},
        {"--witness", switch_flag("--witness", &sim_config::witness)},
        {"--runtime-confirms-ms", set_runtime_confirms},
        {"--node-watch-ms", set_node_watch},
        {"--resume-after", duration_flag("--resume-after", [](cli_options& o, time_ns v) { o.base.resume_after_ns = v; }, true)},
        {"--ring-order", [](cli_options& o, std::string_view v) -> std::string {
             const auto order = parse_ring_order(v);
             if (!order) return "--ring-order: '" + std::string(v) + "' is not one of rank, node, shuffle";
             o.base.order = *order;
             return {};
         }},
        {"--hierarchy", [](cli_options& o, std::string_view v) -> std::string {
             const auto kind = parse_hierarchy(v);
             if (!kind) return "--hierarchy: '" + std::string(v) + "' is not one of flat, node";
             o.base.hierarchy = *kind;
             return {};
         }},
        {"--failure-placement", [](cli_options& o, std::string_view v) -> std::string {
             if (v == "random") o.base.where = placement::random;
             else if (v == "consecutive") o.base.where = placement::consecutive;
             else if (v == "consecutive-ranks") o.base.where = placement::consecutive_ranks;
             else return "--failure-placement: '" + std::string(v) + "' is not one of random, consecutive, consecutive-ranks";
             return {};
         }},
        {"--tau", duration_flag("--tau", [](cli_options& o, time_ns v) { o.base.tau_ns = v; }, false)},
        {"--eta", duration_flag("--eta", [](cli_options& o, time_ns v) { o.eta_ns = v; }, false)},
        {"--delta", duration_flag("--delta", [](cli_options& o, time_ns v) { o.delta_ns = v; }, false)},
        {"--window", duration_flag("--window", [](cli_options& o, time_ns v) { o.base.window_ns = v; }, true)},
        {"--warmup", duration_flag("--warmup", [](cli_options& o, time_ns v) { o.base.warmup_ns = v; }, true)},
        {"--settle", duration_flag("--settle", [](cli_options& o, time_ns v) { o.base.settle_ns = v; }, true)},
        {"--horizon", duration_flag("--horizon", [](cli_options& o, time_ns v) { o.base.horizon_ns = v; }, false)},
        {"--mtbf", duration_flag("--mtbf", [](cli_options& o, time_ns v) {
             o.exponential = true;
             o.base.mtbf_s = static_cast<double>(v) / static_cast<double>(ns_per_s);
         }, false)},
        {"--stall", duration_flag("--stall", [](cli_options& o, time_ns v) { o.base.faults.stall_ns = v; }, true)},
        {"--wedge", duration_flag("--wedge", [](cli_options& o, time_ns v) {
             o.base.faults.stall_ns = v;
             o.base.faults.stall_wedged = true;
         }, true)},
        {"--drop-messages", probability_flag("--drop-messages", &fault_config::drop_message_probability)},
    };
    return flags;
}

}  // namespace

std::optional<double> parse_double(std::string_view text) {
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size() || text.empty() || !std::isfinite(value)) {
        return std::nullopt;
    }
    return value;
}

// "1048576" or "2^20".
std::optional<rank_t> parse_nodes(std::string_view text) {
    if (text.starts_with("2^")) {
        const auto exponent = parse_integer<std::uint32_t>(text.substr(2));
        if (!exponent || *exponent > 26) {
            return std::nullopt;
        }
        return rank_t{1} << *exponent;
    }
    return parse_integer<rank_t>(text);
}

std::optional<time_ns> parse_duration(std::string_view text) {
    static constexpr std::array<std::pair<std::string_view, double>, 8> units{{
        {"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"min", 60e9}, {"s", 1e9}, {"h", 3600e9}, {"d", 86400e9},
        {"y", 365.25 * 86400e9},
    }};
    for (const auto& [suffix, scale] : units) {
        if (text.size() <= suffix.size() || !text.ends_with(suffix)) {
            continue;
        }
        const auto number = parse_double(text.substr(0, text.size() - suffix.size()));
        if (!number) {
            continue;  // "5ms" also ends with "s"; try the other units
        }
        const double ns = std::round(*number * scale);
        if (ns < 0 || ns > 9.0e18) {
            return std::nullopt;
        }
        return static_cast<time_ns>(ns);
    }
    return std::nullopt;
}

std::vector<std::string_view> known_flags() {
    std::vector<std::string_view> flags{"--help", "--swim", "--one-port"};
    for (const auto& [flag, unused] : valued_flags()) {
        flags.push_back(flag);
    }
    return flags;
}

cli_parse parse_cli(std::span<const std::string_view> args) {
    cli_options options;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view flag = args[i];
        if (flag == "--help" || flag == "-h") {
            options.help = true;
            continue;
        }
        if (flag == "--swim" || flag == "--one-port") {
            (flag == "--swim" ? options.swim : options.base.one_port) = true;
            continue;
        }
        const auto found = valued_flags().find(flag);
        if (found == valued_flags().end()) {
            return {std::nullopt, "unknown flag '" + std::string(flag) + "' (see --help)"};
        }
        if (i + 1 >= args.size()) {
            return {std::nullopt, std::string(flag) + ": missing value"};
        }
        if (std::string error = found->second(options, args[++i]); !error.empty()) {
            return {std::nullopt, error};
        }
    }
    if (!options.help && options.nodes.empty()) {
        return {std::nullopt, "--nodes: required"};
    }
    return {options, {}};
}

}  // namespace btl_ft::sim
