// The near future of event_queue.hpp: one bucket per nanosecond over a
// window of `span` nanoseconds that starts at the last popped time.
//
// Every message and heartbeat put lands at most tau (1 us by default) after
// it was sent, so during a broadcast nearly all pending events sit in this
// window: ~10^7 of them at 2^20 processes. In a binary or 4-ary heap each
// pop then walks a dozen levels of a few hundred MiB, one cache miss per
// level; here a push appends to its bucket, and a bucket is sorted once,
// when it becomes the earliest, then read in order. The buckets hold one
// time each, so a sort only breaks ties by (node, kind, payload), and the
// pop order is the same as the heap's.
//
// A bitmap of non-empty buckets finds the next one in a few word scans, so
// sparse periods (heartbeats only) cost nothing either. Events outside the
// window (timers, one-port transfers queued behind others, delays longer
// than the span) are refused and go to the heap or lane.
//
// Rejected: a classic calendar queue with a tuned bucket width (several
// times per bucket need a full sort and a resize policy) and a radix heap
// (it orders by time only, and the ties need the whole event).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "event.hpp"

namespace btl_ft::sim {

class time_buckets {
public:
    static constexpr std::size_t span = 4096;  // nanoseconds, a power of two

    time_buckets();
    bool empty() const { return count_ == 0; }
    std::size_t size() const { return count_; }
    // Takes `item` when it falls in [floor, floor + span), where floor is
    // the last popped time; false when it belongs elsewhere.
    bool offer(const event& item);
    // The earliest event; requires !empty(). Not const: it may sort a bucket.
    const event& front();
    event pop_front();
    // Everything popped so far was at or before `at`: the window moves up.
    void advance_floor(time_ns at);
    // The events after front() in pop order, as far as the earliest bucket
    // goes: a hint for prefetching, nothing more.
    std::span<const event> after_front() const;

private:
    static std::size_t slot_of(time_ns at) { return static_cast<std::size_t>(at) & (span - 1); }
    void find_head();
    void mark(std::size_t slot, bool occupied);

    std::vector<std::vector<event>> buckets_;
    std::array<std::uint64_t, span / 64> occupied_{};
    time_ns floor_ = 0;
    std::size_t count_ = 0;
    // The earliest non-empty bucket, found and sorted lazily by front() or
    // pop_front(); cursor_ of its events are popped.
    bool head_known_ = false;
    time_ns head_at_ = 0;
    std::size_t cursor_ = 0;
};

}  // namespace btl_ft::sim
