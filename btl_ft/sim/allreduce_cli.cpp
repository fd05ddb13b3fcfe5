// `ftsim allreduce`'s command line (allreduce_runs.hpp): a flag table,
// each entry parsing one value into the options.
#include <functional>
#include <map>

#include "allreduce_runs.hpp"
#include "cli.hpp"

namespace btl_ft::sim {
namespace {

using setter = std::function<std::string(allreduce_cli&, std::string_view)>;

std::string count_list(std::string_view flag, std::string_view text, std::vector<rank_t>& out) {
    out.clear();
    while (!text.empty()) {
        const std::size_t comma = text.find(',');
        const auto value = parse_nodes(text.substr(0, comma));
        if (!value) return std::string(flag) + ": '" + std::string(text.substr(0, comma)) + "' is not a count";
        out.push_back(*value);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    }
    return out.empty() ? std::string(flag) + ": empty list" : std::string{};
}

std::string shape_list(std::string_view text, std::vector<victim_shape>& out) {
    out.clear();
    while (!text.empty()) {
        const std::size_t comma = text.find(',');
        const auto shape = parse_shape(text.substr(0, comma));
        if (!shape) {
            return "--shape: '" + std::string(text.substr(0, comma)) + "' is not random, parallel, serial or mixed";
        }
        out.push_back(*shape);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    }
    return out.empty() ? "--shape: empty list" : std::string{};
}

// A plain number is in ticks (the seed's steps); with a unit, nanoseconds.
std::string ticks(std::string_view flag, std::string_view text, time_ns& out, bool& has_unit) {
    if (const auto ns = parse_duration(text)) {
        out = *ns;
        has_unit = true;
        return {};
    }
    if (const auto plain = parse_nodes(text)) {
        out = *plain;
        return {};
    }
    return std::string(flag) + ": '" + std::string(text) + "' is neither a number of steps nor a duration";
}

const std::map<std::string_view, setter>& flags() {
    static const std::map<std::string_view, setter> table{
        {"--nodes", [](allreduce_cli& o, std::string_view v) { return count_list("--nodes", v, o.nodes); }},
        {"--inactive", [](allreduce_cli& o, std::string_view v) { return count_list("--inactive", v, o.inactive); }},
        {"--faults", [](allreduce_cli& o, std::string_view v) { return count_list("--faults", v, o.faults); }},
        {"--shape", [](allreduce_cli& o, std::string_view v) { return shape_list(v, o.shapes); }},
        {"--radix",
         [](allreduce_cli& o, std::string_view v) -> std::string {
             if (v == "auto") {
                 o.base.radix = 0;
                 return {};
             }
             const auto radix = parse_nodes(v);
             if (!radix || *radix < 2) return "--radix: '" + std::string(v) + "' is not auto or a radix of at least 2";
             o.base.radix = *radix;
             return {};
         }},
        {"--latency", [](allreduce_cli& o, std::string_view v) { return ticks("--latency", v, o.base.latency, o.with_units.latency); }},
        {"--overhead", [](allreduce_cli& o, std::string_view v) { return ticks("--overhead", v, o.base.overhead, o.with_units.overhead); }},
        {"--detect", [](allreduce_cli& o, std::string_view v) { return ticks("--detect", v, o.base.detect, o.with_units.detect); }},
        {"--runs",
         [](allreduce_cli& o, std::string_view v) -> std::string {
             const auto runs = parse_nodes(v);
             if (!runs || *runs == 0) return "--runs: '" + std::string(v) + "' is not a positive count";
             o.base.runs = *runs;
             return {};
         }},
        {"--seed",
         [](allreduce_cli& o, std::string_view v) -> std::string {
             const auto seed = parse_double(v);
             if (!seed || *seed < 0 || *seed != static_cast<double>(static_cast<std::uint64_t>(*seed))) {
                 return "--seed: '" + std::string(v) + "' is not a non-negative integer";
             }
             o.base.seed = static_cast<std::uint64_t>(*seed);
             return {};
         }},
    };
    return table;
}

}  // namespace

std::vector<std::string_view> allreduce_known_flags() {
    std::vector<std::string_view> known{"--help", "--inactive-unknown"};
    for (const auto& [flag, unused] : flags()) known.push_back(flag);
    return known;
}

allreduce_cli_parse parse_allreduce_cli(std::span<const std::string_view> args) {
    allreduce_cli options;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view flag = args[i];
        if (flag == "--help" || flag == "-h") {
            options.help = true;
            continue;
        }
        if (flag == "--inactive-unknown") {
            options.base.inactive_known = false;
            continue;
        }
        const auto found = flags().find(flag);
        if (found == flags().end()) return {std::nullopt, "unknown flag '" + std::string(flag) + "' (see ftsim allreduce --help)"};
        if (i + 1 >= args.size()) return {std::nullopt, std::string(flag) + ": missing value"};
        if (std::string error = found->second(options, args[++i]); !error.empty()) return {std::nullopt, error};
    }
    if (options.help) return {options, {}};
    if (options.nodes.empty()) return {std::nullopt, "--nodes: required"};
    const auto& units = options.with_units;
    if (units.latency != units.overhead || units.latency != units.detect) {
        return {std::nullopt, "--latency, --overhead, --detect: give all three in steps (plain numbers) or all as durations"};
    }
    if (options.base.overhead <= 0) return {std::nullopt, "--overhead: must be above 0 (the LogP o)"};
    options.base.unit = units.latency ? "ns" : "step";
    for (const rank_t nodes : options.nodes) {
        for (const rank_t inactive : options.inactive) {
            for (const rank_t faults : options.faults) {
                if (nodes == 0 || inactive + faults >= nodes) {
                    return {std::nullopt, "--inactive, --faults: " + std::to_string(inactive + faults) +
                                              " failures leave no survivor of " + std::to_string(nodes)};
                }
            }
        }
    }
    return {options, {}};
}

std::string allreduce_help_text() {
    return R"(ftsim allreduce: the survivor allreduce (seed 001) at scale, fed by a detector.

Each configuration (the product of --nodes, --inactive, --faults and
--shape) prints one JSON line: the fault-free latency and messages per
process, then over --runs runs with random victims placed as --shape says,
the mean latency until the last survivor
returns, the messages per process, and both increases per fault. The oracle
checks every run (same result everywhere, each contributor once, every
survivor a contributor); a broken run is printed with its seed, exit 1.

The network is LogP: a message takes L, and a process's port sends or
receives one message per o. A failure is declared --detect after it and
reaches each process one hop of L + o per bit its rank differs from the
failed one (a hypercube broadcast, as btl_ft's notices).

  --nodes N[,N...]      processes (a number or 2^k), required
  --inactive K[,K...]   processes failed before the call (default 0)
  --inactive-unknown    ... not yet known when the call starts: declared
                        --detect after it starts (default: known to all)
  --faults K[,K...]     processes that crash during the call, each at a
                        random moment of the fault-free latency (default 0)
  --shape S[,S...]      where the victims (inactive and faults alike) are in
                        the tree, as seed 001's Table 1 columns: random
                        (default; the root too), parallel (none an ancestor
                        of another), serial (a process and its nearest
                        ancestors), mixed (a process and its parent, the
                        rest in other subtrees); all but random spare the
                        root; a tree with no such place (too shallow, too
                        small) is an error, exit 1
  --radix auto|K        the k-nomial radix; auto (default) takes the one with
                        the lowest fault-free latency, as seed 001 does
  --latency L           message latency (default 10)
  --overhead o          per-message port time (default 1)
  --detect D            from a crash to its declaration (default 100)
                        L, o and D are steps as plain numbers (seed 001's
                        setting is --latency 10 --overhead 1), or all three
                        durations (1530ns, 130ns, 2ms)
  --runs R              runs per configuration (default 10)
  --seed S              first run's seed (default 1)
  --help                this text
)";
}

}  // namespace btl_ft::sim
