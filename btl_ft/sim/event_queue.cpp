// The three parts of event_queue.hpp. Sifting moves a hole instead of
// swapping, so each level costs one copy; the heap grows by half, not by
// doubling, because with delays beyond the near window (a long --tau,
// one-port queues) the messages of a 2^20 broadcast land here, ~2e7 at
// once, and doubling would reserve ~400 MiB it never uses.
#include "event_queue.hpp"

#include "btl_ft/assert.hpp"

namespace btl_ft::sim {

namespace {
constexpr std::size_t arity = 4;
}

event_queue::part event_queue::earliest_part() {
    BTL_FT_ASSERT(!empty(), "the earliest event of an empty event queue");
    part best = part::near;
    const event* head = near_.empty() ? nullptr : &near_.front();
    if (!lane_.empty() && (head == nullptr || earlier(lane_.front(), *head))) {
        best = part::lane;
        head = &lane_.front();
    }
    if (!heap_.empty() && (head == nullptr || earlier(heap_.front(), *head))) {
        best = part::heap;
    }
    return best;
}

const event& event_queue::top() {
    switch (earliest_part()) {
        case part::near: return near_.front();
        case part::lane: return lane_.front();
        case part::heap: break;
    }
    return heap_.front();
}

void event_queue::push(const event& item) {
    if (near_.offer(item)) {
        // taken
    } else if (lane_.empty() || !earlier(item, lane_.back())) {
        lane_.push_back(item);
    } else {
        heap_push(item);
    }
    if (size() > peak_) {
        peak_ = size();
    }
}

event event_queue::pop() {
    event first;
    switch (earliest_part()) {
        case part::near: first = near_.pop_front(); break;
        case part::lane:
            first = lane_.front();
            lane_.pop_front();
            break;
        case part::heap: first = heap_pop(); break;
    }
    near_.advance_floor(first.at);
    return first;
}

void event_queue::heap_push(const event& item) {
    if (heap_.size() == heap_.capacity()) {
        heap_.reserve(heap_.size() + heap_.size() / 2 + 1024);
    }
    std::size_t hole = heap_.size();
    heap_.push_back(item);
    while (hole > 0) {
        const std::size_t parent = (hole - 1) / arity;
        if (!earlier(item, heap_[parent])) {
            break;
        }
        heap_[hole] = heap_[parent];
        hole = parent;
    }
    heap_[hole] = item;
}

event event_queue::heap_pop() {
    const event first = heap_.front();
    const event last = heap_.back();
    heap_.pop_back();
    const std::size_t count = heap_.size();
    if (count == 0) {
        return first;
    }
    std::size_t hole = 0;
    for (;;) {
        const std::size_t child = hole * arity + 1;
        if (child >= count) {
            break;
        }
        const std::size_t end = child + arity < count ? child + arity : count;
        std::size_t best = child;
        for (std::size_t other = child + 1; other < end; ++other) {
            if (earlier(heap_[other], heap_[best])) {
                best = other;
            }
        }
        if (!earlier(heap_[best], last)) {
            break;
        }
        heap_[hole] = heap_[best];
        hole = best;
    }
    heap_[hole] = last;
    return first;
}

}  // namespace btl_ft::sim
