// Where `ftsim allreduce` puts its victims in the k-nomial tree, in the
// shape of seed 001's Table 1 columns: anywhere (random, the root
// included), in different subtrees (parallel: none an ancestor of another,
// so their repairs may overlap), in a chain of parents (serial: a process
// and its ancestors, repaired one after the other in the seed), or a chain
// of two beside the rest in other subtrees (mixed). Only random may take
// the root: the seed's table fails processes below it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "btl_ft/knomial_tree.hpp"
#include "btl_ft/types.hpp"
#include "rng.hpp"

namespace btl_ft::sim {

enum class victim_shape { random, parallel, serial, mixed };

std::string_view shape_name(victim_shape shape);
std::optional<victim_shape> parse_shape(std::string_view text);

struct victims_draw {
    std::vector<rank_t> victims;  // the chain of serial and mixed deepest first
    std::string error;            // the tree has no such place (too shallow)
};

// `count` distinct victims of this shape, drawn uniformly among the ways
// the shape allows (by rejection for parallel and the rest of mixed).
victims_draw draw_victims(rng& draw, const knomial_tree& tree, rank_t count, victim_shape shape);

}  // namespace btl_ft::sim
