// Words for the selectable ring orders, propagators and hierarchies, shared by the C ABI
// (MCA parameter values), the simulator's command line and log messages, so
// that one spelling is accepted everywhere. Also the out-of-line part of the
// always-on assertion, which must not pull <cstdio> into every header.
#include <cstdio>
#include <cstdlib>

#include "btl_ft/assert.hpp"
#include "btl_ft/types.hpp"

namespace btl_ft {

std::optional<ring_order> parse_ring_order(std::string_view word) {
    if (word == "rank") return ring_order::rank;
    if (word == "node") return ring_order::node;
    if (word == "shuffle") return ring_order::shuffle;
    return std::nullopt;
}

std::optional<propagator_kind> parse_propagator(std::string_view word) {
    if (word == "hba") return propagator_kind::hba;
    if (word == "bmg") return propagator_kind::bmg;
    if (word == "chord") return propagator_kind::chord;
    return std::nullopt;
}

std::optional<hierarchy_kind> parse_hierarchy(std::string_view word) {
    if (word == "flat") return hierarchy_kind::flat;
    if (word == "node") return hierarchy_kind::node;
    return std::nullopt;
}

std::string_view name_of(ring_order order) {
    switch (order) {
    case ring_order::rank: return "rank";
    case ring_order::node: return "node";
    case ring_order::shuffle: return "shuffle";
    }
    return "?";
}

std::string_view name_of(propagator_kind kind) {
    switch (kind) {
    case propagator_kind::hba: return "hba";
    case propagator_kind::bmg: return "bmg";
    case propagator_kind::chord: return "chord";
    }
    return "?";
}

std::string_view name_of(hierarchy_kind kind) {
    switch (kind) {
    case hierarchy_kind::flat: return "flat";
    case hierarchy_kind::node: return "node";
    }
    return "?";
}

namespace detail {
void assert_failed(const char* condition, const char* what, const char* file, int line) {
    std::fprintf(stderr, "btl_ft: invariant violated at %s:%d: %s (%s)\n", file, line, what, condition);
    std::fflush(stderr);
    std::abort();
}
}  // namespace detail

}  // namespace btl_ft
