// fttune: how to choose eta and delta for a platform (seed 002, Section 3.3).
//
// Prints the largest delta that keeps the risk of not stabilizing under a
// bound (risk.hpp), and an eta and delta to start from: delta no smaller
// than what this machine showed accurate (--accurate-from, the
// false-failure table of benchmarks/RESULTS.md), eta a tenth of delta as
// libmpi's defaults. --figure prints seed 002's Figure 3 instead: the
// largest safe delta for sizes 2^10 to 2^18 and 256,000 and per-node MTBFs
// of 1 to 45 years, one JSON line each.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "json.hpp"
#include "risk.hpp"

namespace {

using btl_ft::rank_t;
using btl_ft::time_ns;
using namespace btl_ft::sim;

constexpr double ns_per_year = 365.25 * 86400e9;

const char* const usage =
    "fttune - eta and delta for a platform (seed 002, Section 3.3)\n"
    "\n"
    "Usage:\n"
    "  fttune --nodes N --mtbf D [--processes P] [--risk R] [--tau D] [--accurate-from D]\n"
    "  fttune --figure [--risk R] [--tau D]\n"
    "\n"
    "  --nodes N          nodes of the job (also 2^K): the members of the node-level\n"
    "                     ring (mpi_ft_detector_hierarchy node, the default)\n"
    "  --mtbf D           mean time between failures of one node (e.g. 20y)\n"
    "  --processes P      processes of the job, P >= N (default N, one a node)\n"
    "  --risk R           accepted probability that more failures strike before the\n"
    "                     detector is stable again than Theorem 1 allows (default 1e-9)\n"
    "  --tau D            bound on a message's delay, measured (default 1us)\n"
    "  --accurate-from D  the smallest delta with no false failure on these machines\n"
    "                     (benchmarks/RESULTS.md, false failures; default 0.05s)\n"
    "  --figure           Figure 3 of seed 002 as JSON lines: n = 2^10..2^18 and\n"
    "                     256000, MTBF 1, 5, 10, 20 and 45 years\n"
    "\n"
    "Durations take a unit: ns, us, ms, s, min, h, d, y.\n";

struct options {
    rank_t nodes = 0;
    rank_t processes = 0;
    time_ns mtbf_ns = 0;
    double risk = 1e-9;
    time_ns tau_ns = 1000;
    time_ns accurate_from_ns = 50'000'000;
    bool figure = false;
};

std::optional<options> parse(const std::vector<std::string_view>& args, std::string& error) {
    options o;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view flag = args[i];
        if (flag == "--figure") {
            o.figure = true;
            continue;
        }
        if (i + 1 >= args.size()) {
            error = std::string(flag) + " needs a value (or is unknown)";
            return std::nullopt;
        }
        const std::string_view value = args[++i];
        const auto bad = [&](const char* rule) {
            error = std::string(flag) + " " + std::string(value) + ": " + rule;
            return std::nullopt;
        };
        if (flag == "--nodes" || flag == "--processes") {
            const auto n = parse_nodes(value);
            if (!n || *n < 2) return bad("must be a number, at least 2 (or 2^K)");
            (flag == "--nodes" ? o.nodes : o.processes) = *n;
        } else if (flag == "--mtbf" || flag == "--tau" || flag == "--accurate-from") {
            const auto d = parse_duration(value);
            if (!d || *d <= 0) return bad("must be a positive duration with a unit (e.g. 20y, 1us)");
            (flag == "--mtbf" ? o.mtbf_ns : flag == "--tau" ? o.tau_ns : o.accurate_from_ns) = *d;
        } else if (flag == "--risk") {
            const auto r = parse_double(value);
            if (!r || *r <= 0 || *r >= 1) return bad("must be a probability in (0, 1)");
            o.risk = *r;
        } else {
            error = "unknown option " + std::string(flag);
            return std::nullopt;
        }
    }
    if (!o.figure && (o.nodes == 0 || o.mtbf_ns == 0)) {
        error = "--nodes and --mtbf are required (or --figure)";
        return std::nullopt;
    }
    if (o.processes == 0) o.processes = o.nodes;
    if (o.processes < o.nodes) {
        error = "--processes " + std::to_string(o.processes) + ": fewer than --nodes " + std::to_string(o.nodes);
        return std::nullopt;
    }
    return o;
}

std::string seconds(time_ns ns) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g s", static_cast<double>(ns) / 1e9);
    return text;
}

int print_figure(const options& o) {
    for (const double years : {1.0, 5.0, 10.0, 20.0, 45.0}) {
        // 2^10 to 2^18, and the seed's largest platform
        for (const rank_t n : {1u << 10, 1u << 11, 1u << 12, 1u << 13, 1u << 14, 1u << 15, 1u << 16, 1u << 17,
                               1u << 18, 256000u}) {
            const risk_advice a = largest_safe_delta(n, years * ns_per_year / 1e9, o.risk, o.tau_ns);
            json_object line;
            line.add("nodes", n).add("mtbf_years", years).add("risk", o.risk).add("tau_ns", o.tau_ns);
            line.add("tolerated", a.tolerated).add("largest_delta_s", static_cast<double>(a.largest_delta_ns) / 1e9);
            std::cout << line.str() << '\n';
        }
    }
    return 0;
}

int advise(const options& o) {
    const risk_advice a = largest_safe_delta(o.nodes, static_cast<double>(o.mtbf_ns) / 1e9, o.risk, o.tau_ns);
    std::printf("%u nodes, MTBF %.4g years each, risk %g, message delays under %s\n", o.nodes,
                static_cast<double>(o.mtbf_ns) / ns_per_year, o.risk, seconds(o.tau_ns).c_str());
    if (o.processes > o.nodes) {
        // Two levels declare a node's loss as one failure of the node ring,
        // so the bound counts nodes; flat, it would be ppn failures at once.
        std::printf("  %u processes (%.3g a node): with two levels (mpi_ft_detector_hierarchy node, the\n"
                    "  default) a node's loss is one failure of the ring of %u nodes, which this counts;\n"
                    "  a crash of one process is known from its node in milliseconds\n",
                    o.processes, static_cast<double>(o.processes) / o.nodes, o.nodes);
    }
    if (a.tolerated == 0) {
        std::printf("  fewer than 4 processes: Theorem 1 tolerates no overlapping failure, no delta is safe by it\n");
        return 1;
    }
    std::printf("  failures Theorem 1 tolerates before the detector is stable again: M = %u\n", a.tolerated);
    std::printf("  largest safe delta: %s (stabilization within T(M) = %s; P(more than M failures in T(M)) = %.2g)\n",
                seconds(a.largest_delta_ns).c_str(), seconds(a.stabilization_ns).c_str(), a.risk_at_largest);
    if (a.largest_delta_ns < o.accurate_from_ns) {
        std::printf("  no delta is both safe and accurate here: the smallest accurate one (%s) is larger;\n"
                    "  lower the message delays or accept a larger risk\n",
                    seconds(o.accurate_from_ns).c_str());
        return 1;
    }
    // The default timeout (1 s) where it lies in the range; else the nearest end.
    time_ns delta = BTL_FT_DEFAULT_TIMEOUT_NS;
    delta = delta < o.accurate_from_ns ? o.accurate_from_ns : delta > a.largest_delta_ns ? a.largest_delta_ns : delta;
    const time_ns eta = delta / 10;
    std::printf("  any delta from %s (accurate here) to %s (safe): the smaller, the sooner a hang is known\n",
                seconds(o.accurate_from_ns).c_str(), seconds(a.largest_delta_ns).c_str());
    std::printf("  to start from: delta %s, eta %s (a tenth, as libmpi's defaults):\n", seconds(delta).c_str(),
                seconds(eta).c_str());
    std::printf("    mpirun --with-ft ulfm --mca mpi_ft_detector_timeout %g --mca mpi_ft_detector_period %g ...\n",
                static_cast<double>(delta) / 1e9, static_cast<double>(eta) / 1e9);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help") {
        std::cout << usage;
        return args.empty() ? 2 : 0;
    }
    std::string error;
    const auto parsed = parse(args, error);
    if (!parsed) {
        std::cerr << "fttune: " << error << "\n\n" << usage;
        return 2;
    }
    return parsed->figure ? print_figure(*parsed) : advise(*parsed);
}
