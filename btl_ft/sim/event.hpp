// A simulation event: 24 bytes of plain data, ordered by its content
// (time, node, kind, payload) so that the pop sequence is a function of the
// pushed events alone and does not depend on how a container breaks ties.
#pragma once

#include <cstdint>

#include "btl_ft/types.hpp"

namespace btl_ft::sim {

enum class event_kind : std::uint8_t {
    start,      // a process starts its detector (random heartbeat phase)
    tick,       // a detector deadline; stale when superseded
    heartbeat,  // payload: the heartbeat word, node: the observer
    message,    // payload: message pool slot, node: the destination
    failure,    // payload: index into the failure plan
    resume,     // node: a hung process that resumes
    confirm,    // node: a crashed process the runtime now reports to other nodes
    node_watch, // node: a crashed process its node-mates now see ended
    join,       // node: a process of the first job moves to the union's detector
};

struct event {
    time_ns at = 0;
    std::uint64_t payload = 0;
    rank_t node = 0;
    event_kind kind = event_kind::start;
    // heartbeat, message: the sender's membership (world_join.cpp); a
    // receiver of another epoch never sees it
    std::uint8_t epoch = 0;
};
static_assert(sizeof(event) == 24, "events must stay small: millions are pending at 2^20 processes");

// Strict weak order on event content; total on distinct events. Inline:
// sorting a bucket of the near future calls it ~log2(bucket) times per event.
inline bool earlier(const event& a, const event& b) {
    if (a.at != b.at) {
        return a.at < b.at;
    }
    if (a.node != b.node) {
        return a.node < b.node;
    }
    if (a.kind != b.kind) {
        return a.kind < b.kind;
    }
    if (a.epoch != b.epoch) {
        return a.epoch < b.epoch;
    }
    return a.payload < b.payload;
}

}  // namespace btl_ft::sim
