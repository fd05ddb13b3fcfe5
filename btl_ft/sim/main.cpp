// ftsim's entry point: parse, expand, run each configuration, exit with the
// verdict. All logic lives in the btl_ft_sim library so tests reach it.
#include <iostream>
#include <span>
#include <string_view>
#include <vector>

#include "allreduce_runs.hpp"
#include "cli.hpp"
#include "report.hpp"
#include "swim.hpp"

namespace {

int run_allreduce_command(std::span<const std::string_view> args) {
    using namespace btl_ft::sim;
    using btl_ft::rank_t;
    const allreduce_cli_parse parsed = parse_allreduce_cli(args);
    if (!parsed.options) {
        std::cerr << "ftsim allreduce: " << parsed.error << '\n';
        return 2;
    }
    const allreduce_cli& options = *parsed.options;
    if (options.help) {
        std::cout << allreduce_help_text();
        return 0;
    }
    std::uint64_t violating_runs = 0;
    for (const rank_t nodes : options.nodes) {
        allreduce_sim_config sized = options.base;
        sized.nodes = nodes;
        const std::uint32_t radix = sized.radix != 0 ? sized.radix : best_radix(sized);
        for (const rank_t inactive : options.inactive) {
            for (const rank_t faults : options.faults) {
                for (const victim_shape shape : options.shapes) {
                    allreduce_sim_config config = sized;
                    config.radix = radix;
                    config.inactive = inactive;
                    config.faults = faults;
                    config.shape = shape;
                    violating_runs += run_allreduce(config, std::cout, std::cerr);
                }
            }
        }
    }
    return violating_runs == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace btl_ft::sim;
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    if (!args.empty() && args[0] == "allreduce") return run_allreduce_command(std::span(args).subspan(1));
    const cli_parse parsed = parse_cli(args);
    if (!parsed.options) {
        std::cerr << "ftsim: " << parsed.error << '\n';
        return 2;
    }
    const cli_options& options = *parsed.options;
    if (options.help) {
        std::cout << help_text();
        return 0;
    }
    if (options.swim) {
        for (const auto nodes : options.nodes) {
            run_swim(nodes, options.seed, options.runs, std::cout);
        }
        return 0;
    }
    const cli_expansion expansion = expand(options);
    if (!expansion.error.empty()) {
        std::cerr << "ftsim: " << expansion.error << '\n';
        return 2;
    }
    std::uint64_t violating_runs = 0;
    for (const sim_config& config : expansion.configs) {
        violating_runs += run_configuration(config, options.seed, options.runs, std::cout, std::cerr);
    }
    return violating_runs == 0 ? 0 : 1;
}
