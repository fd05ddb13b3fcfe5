// allreduce_model.hpp. Ranks are visited from the last down: a child's
// rank is above its parent's, so every partial's arrival is known before
// its parent is served.
#include "btl_ft/allreduce_model.hpp"

#include <algorithm>
#include <bit>
#include <vector>

#include "btl_ft/assert.hpp"
#include "btl_ft/knomial_tree.hpp"

namespace btl_ft {
namespace {

// The last of `arrivals` handled, one at a time, o each, by a port free
// from time 0; the port's own free time after it goes to *port_free.
time_ns serve(std::vector<time_ns>& arrivals, time_ns overhead, time_ns* port_free) {
    std::sort(arrivals.begin(), arrivals.end());
    time_ns handled = 0, free_at = 0;
    for (const time_ns at : arrivals) {
        handled = std::max(at, free_at);
        free_at = handled + overhead;
    }
    *port_free = free_at;
    return handled;
}

}  // namespace

time_ns allreduce_latency(rank_t size, std::uint32_t radix, const logp_cost& cost) {
    BTL_FT_ASSERT(size > 0 && radix >= 2, "a latency asked for no process or a radix below 2");
    if (size == 1) return 0;
    const knomial_tree tree(size, radix);
    const time_ns o = cost.overhead, L = cost.latency;
    // UP: when each process's partial reaches its parent.
    std::vector<time_ns> partial_at(size, 0);
    std::vector<rank_t> children;
    std::vector<time_ns> arrivals;
    time_ns root_decides = 0;
    for (rank_t r = size; r-- > 0;) {
        tree.children(r, children);
        arrivals.clear();
        for (const rank_t child : children) arrivals.push_back(partial_at[child]);
        time_ns port_free = 0;
        const time_ns covered = serve(arrivals, o, &port_free);
        if (r == 0) {
            root_decides = covered;
        } else {
            // sent from the handler of the last partial, once the port is free
            partial_at[r] = std::max(covered, port_free) + o + L;
        }
    }
    // DOWN: the root's PREPARE to rank 1 (a leaf: 1 is no multiple of the
    // radix), then RESULT from each process to its children in order, rank
    // 1 sending for the root. A process returns when it handles it.
    std::vector<time_ns> returns_at(size, 0);
    returns_at[0] = root_decides;
    returns_at[1] = root_decides + 2 * o + L;
    time_ns last = std::max(returns_at[0], returns_at[1]);
    for (rank_t r = 0; r < size; ++r) {
        if (r == 1) continue;  // its sends are the root's
        tree.children(r, children);
        const time_ns from = r == 0 ? returns_at[1] : returns_at[r];
        time_ns sent = 0;
        for (const rank_t child : children) {
            if (child == 1) continue;
            ++sent;
            returns_at[child] = from + (sent + 1) * o + L;
            last = std::max(last, returns_at[child]);
        }
    }
    return last;
}

std::uint32_t allreduce_fast_rounds(rank_t size) {
    BTL_FT_ASSERT(size > 0, "rounds asked for no process");
    const rank_t power = std::bit_floor(size);
    return static_cast<std::uint32_t>(std::countr_zero(power)) + (power == size ? 0 : 2);
}

time_ns allreduce_fast_latency(rank_t size, const logp_cost& cost) {
    return allreduce_fast_rounds(size) * (cost.latency + 2 * cost.overhead);
}

bool allreduce_fast_path_pays(rank_t size, std::uint32_t radix, const logp_cost& cost) {
    return size >= 2 && allreduce_fast_latency(size, cost) < allreduce_latency(size, radix, cost);
}

bool allreduce_fast_path_pays_yielding(rank_t size) {
    constexpr std::uint32_t flat_tree_steps = 3;
    return size >= 2 && allreduce_fast_rounds(size) < flat_tree_steps;
}

std::uint32_t allreduce_best_radix(rank_t size, const logp_cost& cost) {
    std::uint32_t best = 2;
    time_ns best_latency = never;
    const std::uint32_t largest = std::min<std::uint32_t>(std::max<rank_t>(size, 2), 64);
    for (std::uint32_t radix = 2; radix <= largest && radix <= best + 8; ++radix) {
        const time_ns latency = allreduce_latency(size, radix, cost);
        if (latency < best_latency) {
            best_latency = latency;
            best = radix;
        }
    }
    return best;
}

}  // namespace btl_ft
