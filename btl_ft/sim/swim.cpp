// Probe drawing and aggregation for swim.hpp.
#include "swim.hpp"

#include <algorithm>
#include <ostream>
#include <vector>

#include "json.hpp"
#include "report.hpp"
#include "rng.hpp"

namespace btl_ft::sim {

swim_run simulate_swim(rank_t nodes, std::uint64_t run_seed) {
    rng draws(run_seed, stream::swim);
    std::vector<std::uint32_t> probes(nodes);
    std::vector<std::uint8_t> probed(nodes, 0);
    rank_t unprobed = nodes;
    swim_run result;
    std::uint64_t sum_of_maxima = 0;
    while (unprobed > 0) {
        std::fill(probes.begin(), probes.end(), 0);
        for (rank_t prober = 0; prober < nodes; ++prober) {
            // Uniform over the other N - 1 processes: draw in [0, N-1) and
            // skip over the prober itself.
            auto target = static_cast<rank_t>(draws.below(nodes - 1));
            target += target >= prober ? 1 : 0;
            ++probes[target];
            if (probed[target] == 0) {
                probed[target] = 1;
                --unprobed;
            }
        }
        const std::uint32_t round_max = *std::max_element(probes.begin(), probes.end());
        if (result.rounds_to_cover == 0) {
            result.first_round_max_probes = round_max;
        }
        ++result.rounds_to_cover;
        result.max_probes = std::max(result.max_probes, round_max);
        sum_of_maxima += round_max;
    }
    result.mean_round_max_probes = static_cast<double>(sum_of_maxima) / result.rounds_to_cover;
    return result;
}

void run_swim(rank_t nodes, std::uint64_t seed, std::uint32_t runs, std::ostream& out) {
    sample rounds, round_max, first_round_max, run_max;
    std::uint64_t run_seed = seed;
    for (std::uint32_t run = 0; run < runs; ++run) {
        const swim_run one = simulate_swim(nodes, run_seed);
        rounds.add(one.rounds_to_cover);
        round_max.add(one.mean_round_max_probes);
        first_round_max.add(one.first_round_max_probes);
        run_max.add(one.max_probes);
        run_seed = next_run_seed(run_seed);
    }
    json_object line;
    line.add("mode", "swim").add("seed", seed).add("nodes", nodes).add("runs", runs);
    line.add("rounds_to_cover_mean", rounds.mean()).add("rounds_to_cover_max", rounds.max);
    line.add("rounds_to_cover_min", rounds.min);
    // Figure 7's L(N): the largest number of probes on one process in a round.
    line.add("max_probes_per_round_mean", round_max.mean());
    line.add("max_probes_first_round_mean", first_round_max.mean());
    // The fullest target over all rounds a run needs to cover everyone.
    line.add("max_probes_per_run_mean", run_max.mean());
    line.add("max_probes_max", run_max.max);
    out << line.str() << '\n';
    out.flush();
}

}  // namespace btl_ft::sim
