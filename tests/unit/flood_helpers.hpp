// What the overlay tests share (test_overlay.cpp, test_two_levels.cpp):
// one broadcast run to completion, random skip sets and participants, and
// whom a broadcast missed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "btl_ft/dead_set.hpp"
#include "btl_ft/overlay.hpp"
#include "btl_ft/prng.hpp"

namespace btl_ft::flood_helpers {

struct flood_result {
    std::vector<char> got;
    std::uint64_t messages = 0;
    unsigned depth = 0;
    std::string error;
};

struct in_flight {
    rank_t to, from;
    route_tag route;
    unsigned depth;
};

// Runs one broadcast from `source` to completion: every process forwards on
// its first receipt only, `crashed` ones drop what they get. `hops(self,
// received, out)` is the overlay under test; `check(message)` returns what
// is wrong with a message, or "" (the first one stops the run).
template <typename Hops, typename Check>
flood_result flood_with(rank_t size, rank_t source, const std::vector<char>& crashed, Hops hops, Check check) {
    flood_result result;
    result.got.assign(size, 0);
    result.got[source] = 1;
    std::deque<in_flight> queue;
    std::vector<hop> out;
    const auto forward = [&](rank_t from, route_tag received, unsigned depth) {
        hops(from, received, out);
        for (const hop& next : out) queue.push_back({next.target, from, next.route, depth + 1});
    };
    forward(source, route_origin, 0);
    while (!queue.empty() && result.error.empty()) {
        const in_flight message = queue.front();
        queue.pop_front();
        ++result.messages;
        result.error = check(message);
        if (crashed[message.to] || result.got[message.to]) continue;
        result.got[message.to] = 1;
        result.depth = std::max(result.depth, message.depth);
        forward(message.to, message.route, message.depth);
    }
    return result;
}

inline dead_set random_skip(splitmix64& random, rank_t size, std::size_t count) {
    dead_set skip;
    while (skip.size() < count && skip.size() + 1 < size) skip.insert(static_cast<rank_t>(random.below(size)));
    return skip;
}

inline rank_t random_participant(splitmix64& random, rank_t size, const dead_set& skip) {
    return skip.alive_at(static_cast<rank_t>(random.below(skip.alive_count(size))));
}

// Participants that did not get it (and are not crashed).
inline std::size_t missed(const std::vector<char>& got, const dead_set& skip, const std::vector<char>& crashed) {
    std::size_t count = 0;
    for (rank_t rank = 0; rank < got.size(); ++rank) {
        count += !skip.contains(rank) && !crashed[rank] && !got[rank];
    }
    return count;
}

}  // namespace btl_ft::flood_helpers
