// ftsim's entry point: parse, expand, run each configuration, exit with the
// verdict. All logic lives in the btl_ft_sim library so tests reach it.
#include <iostream>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "report.hpp"
#include "swim.hpp"

int main(int argc, char** argv) {
    using namespace btl_ft::sim;
    const std::vector<std::string_view> args(argv + 1, argv + argc);
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
