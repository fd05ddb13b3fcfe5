// The heap and lane of event_queue.hpp. Sifting moves a hole instead of
// swapping, so each level costs one copy; the heap grows by half, not by
// doubling, because at 2^20 processes a broadcast puts ~2e7 messages in
// flight at once and doubling would reserve ~400 MiB it never uses.
#include "event_queue.hpp"

#include "btl_ft/assert.hpp"

namespace btl_ft::sim {

namespace {
constexpr std::size_t arity = 4;
}

bool earlier(const event& a, const event& b) {
    if (a.at != b.at) {
        return a.at < b.at;
    }
    if (a.node != b.node) {
        return a.node < b.node;
    }
    if (a.kind != b.kind) {
        return a.kind < b.kind;
    }
    return a.payload < b.payload;
}

const event& event_queue::top() const {
    BTL_FT_ASSERT(!empty(), "top() of an empty event queue");
    if (lane_.empty()) {
        return heap_.front();
    }
    if (heap_.empty() || earlier(lane_.front(), heap_.front())) {
        return lane_.front();
    }
    return heap_.front();
}

void event_queue::push(const event& item) {
    if (lane_.empty() || !earlier(item, lane_.back())) {
        lane_.push_back(item);
    } else {
        heap_push(item);
    }
    if (size() > peak_) {
        peak_ = size();
    }
}

event event_queue::pop() {
    BTL_FT_ASSERT(!empty(), "pop() of an empty event queue");
    if (!lane_.empty() && (heap_.empty() || earlier(lane_.front(), heap_.front()))) {
        const event first = lane_.front();
        lane_.pop_front();
        return first;
    }
    return heap_pop();
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
