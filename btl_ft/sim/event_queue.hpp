// The pending-event set of one simulation: the near future in per-
// nanosecond buckets, a FIFO lane, and a 4-ary min-heap for the rest, over
// 24-byte POD events ordered by content (event.hpp). Pop takes the earliest
// of the three heads, so which part holds an event never changes the order.
//
// Most pushes fall in one of two patterns. Heartbeat timers go to now +
// eta: since now only grows they arrive in order, and an event that sorts
// after the lane's last one is appended there in O(1) and never sifted.
// Messages and heartbeat puts land at most tau ahead: they go to the near
// buckets (time_buckets.hpp), appended and sorted one bucket at a time.
// The heap holds what neither takes (irregular deadlines, far arrivals),
// little at any time. Rejected: a calendar queue for everything, whose
// bucket width must be tuned to the mix of microsecond delays and
// second-long periods; and a plain heap, whose ~n timers cost ~40% of a
// 2^20 run in cache misses, and whose ~10^7 messages in flight during a
// broadcast cost a cache miss per level on every pop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "event.hpp"
#include "time_buckets.hpp"

namespace btl_ft::sim {

class event_queue {
public:
    bool empty() const { return heap_.empty() && lane_.empty() && near_.empty(); }
    std::size_t size() const { return heap_.size() + lane_.size() + near_.size(); }
    std::size_t peak_size() const { return peak_; }
    // Not const: finding the earliest near event may sort its bucket.
    const event& top();
    void push(const event& item);
    event pop();
    // Some of the events after top(), in pop order: a prefetching hint.
    std::span<const event> upcoming() const { return near_.after_front(); }

private:
    enum class part : std::uint8_t { near, lane, heap };
    part earliest_part();
    void heap_push(const event& item);
    event heap_pop();

    time_buckets near_;
    std::vector<event> heap_;
    std::deque<event> lane_;  // sorted by construction
    std::size_t peak_ = 0;
};

}  // namespace btl_ft::sim
