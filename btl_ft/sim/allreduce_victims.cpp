// allreduce_victims.hpp: the victims' places in the tree.
#include "allreduce_victims.hpp"

#include <algorithm>
#include <array>

namespace btl_ft::sim {
namespace {

constexpr std::array<std::pair<victim_shape, std::string_view>, 4> names{{
    {victim_shape::random, "random"},
    {victim_shape::parallel, "parallel"},
    {victim_shape::serial, "serial"},
    {victim_shape::mixed, "mixed"},
}};

// Rejection gives up after this many draws per victim: a tree too small for
// the shape (every non-root rank an ancestor of the others) says so.
constexpr int draws_per_victim = 10'000;

// The rank and its `length - 1` nearest ancestors, none of them the root;
// empty when the rank is not that deep.
std::vector<rank_t> chain_from(const knomial_tree& tree, rank_t rank, rank_t length) {
    std::vector<rank_t> chain;
    for (rank_t at = rank; chain.size() < length; at = tree.parent(at)) {
        if (at == 0 || at == no_rank) return {};
        chain.push_back(at);
    }
    return chain;
}

std::vector<rank_t> draw_chain(rng& draw, const knomial_tree& tree, rank_t length) {
    std::vector<rank_t> deep_enough;
    for (rank_t r = 1; r < tree.size(); ++r) {
        if (!chain_from(tree, r, length).empty()) deep_enough.push_back(r);
    }
    if (deep_enough.empty()) return {};
    return chain_from(tree, deep_enough[draw.below(deep_enough.size())], length);
}

bool related(const knomial_tree& tree, rank_t a, rank_t b) {
    return a == b || tree.is_ancestor(a, b) || tree.is_ancestor(b, a);
}

// Adds `count` non-root ranks related to none already in `victims`.
bool add_parallel(rng& draw, const knomial_tree& tree, rank_t count, std::vector<rank_t>& victims) {
    const std::size_t wanted = victims.size() + count;
    for (int tries = 0; victims.size() < wanted; ++tries) {
        if (tries == draws_per_victim * static_cast<int>(count)) return false;
        const rank_t candidate = 1 + static_cast<rank_t>(draw.below(tree.size() - 1));
        if (std::none_of(victims.begin(), victims.end(), [&](rank_t v) { return related(tree, v, candidate); })) {
            victims.push_back(candidate);
        }
    }
    return true;
}

std::vector<rank_t> draw_random(rng& draw, rank_t nodes, rank_t count) {
    std::vector<rank_t> all(nodes);
    for (rank_t r = 0; r < nodes; ++r) all[r] = r;
    for (rank_t i = 0; i < count; ++i) std::swap(all[i], all[i + draw.below(nodes - i)]);
    all.resize(count);
    return all;
}

}  // namespace

std::string_view shape_name(victim_shape shape) {
    return std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.first == shape; })->second;
}

std::optional<victim_shape> parse_shape(std::string_view text) {
    const auto found = std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.second == text; });
    if (found == names.end()) return std::nullopt;
    return found->first;
}

victims_draw draw_victims(rng& draw, const knomial_tree& tree, rank_t count, victim_shape shape) {
    const std::string where = " in a tree of " + std::to_string(tree.size()) + " at radix " +
                              std::to_string(tree.radix());
    victims_draw result;
    if (count == 0) return result;
    switch (shape) {
        case victim_shape::random:
            result.victims = draw_random(draw, tree.size(), count);
            break;
        case victim_shape::parallel:
            if (!add_parallel(draw, tree, count, result.victims)) {
                result.error = "no " + std::to_string(count) + " processes in different subtrees" + where;
            }
            break;
        case victim_shape::serial:
        case victim_shape::mixed: {
            const rank_t length = shape == victim_shape::serial ? count : std::min<rank_t>(count, 2);
            result.victims = draw_chain(draw, tree, length);
            if (result.victims.empty()) {
                result.error = "no chain of " + std::to_string(length) + " below the root" + where;
            } else if (!add_parallel(draw, tree, count - length, result.victims)) {
                result.error = "no " + std::to_string(count - length) + " processes beside a chain of " +
                               std::to_string(length) + where;
            }
            break;
        }
    }
    if (!result.error.empty()) result.victims.clear();
    return result;
}

}  // namespace btl_ft::sim
