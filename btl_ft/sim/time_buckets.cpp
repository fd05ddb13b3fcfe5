// The buckets of time_buckets.hpp. Only the earliest bucket is kept sorted
// (from its first unread event on): a push into it keeps it so, a push
// into any other bucket is a plain append.
#include "time_buckets.hpp"

#include <algorithm>
#include <bit>

#include "btl_ft/assert.hpp"

namespace btl_ft::sim {

namespace {
constexpr std::size_t word_bits = 64;
constexpr std::size_t words = time_buckets::span / word_bits;
}  // namespace

time_buckets::time_buckets() : buckets_(span) {}

bool time_buckets::offer(const event& item) {
    if (item.at < floor_ || item.at - floor_ >= static_cast<time_ns>(span)) {
        return false;
    }
    const std::size_t slot = slot_of(item.at);
    std::vector<event>& bucket = buckets_[slot];
    if (head_known_ && item.at == head_at_) {
        const auto unread = bucket.begin() + static_cast<std::ptrdiff_t>(cursor_);
        bucket.insert(std::upper_bound(unread, bucket.end(), item, earlier), item);
    } else {
        if (head_known_ && item.at < head_at_) {
            // Nothing of the old head was popped, or the floor would be at it.
            BTL_FT_ASSERT(cursor_ == 0, "an event before a partly popped bucket");
            head_known_ = false;
        }
        bucket.push_back(item);
    }
    mark(slot, true);
    ++count_;
    return true;
}

void time_buckets::mark(std::size_t slot, bool occupied) {
    const std::uint64_t bit = std::uint64_t{1} << (slot % word_bits);
    if (occupied) {
        occupied_[slot / word_bits] |= bit;
    } else {
        occupied_[slot / word_bits] &= ~bit;
    }
}

// The first occupied slot at or after the floor's, going round once.
void time_buckets::find_head() {
    if (head_known_) {
        return;
    }
    BTL_FT_ASSERT(count_ > 0, "the head of empty buckets");
    const std::size_t start = slot_of(floor_);
    const std::size_t first_word = start / word_bits;
    const std::uint64_t at_or_after = ~std::uint64_t{0} << (start % word_bits);
    std::size_t found = span;
    for (std::size_t step = 0; step <= words && found == span; ++step) {
        const std::size_t word = (first_word + step) % words;
        std::uint64_t bits = occupied_[word];
        if (step == 0) {
            bits &= at_or_after;
        } else if (step == words) {
            bits &= ~at_or_after;  // back at the first word: the slots before the floor's
        }
        if (bits != 0) {
            found = word * word_bits + static_cast<std::size_t>(std::countr_zero(bits));
        }
    }
    BTL_FT_ASSERT(found != span, "events counted but no bucket occupied");
    head_at_ = floor_ + static_cast<time_ns>((found - start) & (span - 1));
    std::vector<event>& bucket = buckets_[found];
    std::sort(bucket.begin(), bucket.end(), earlier);
    cursor_ = 0;
    head_known_ = true;
}

const event& time_buckets::front() {
    find_head();
    return buckets_[slot_of(head_at_)][cursor_];
}

event time_buckets::pop_front() {
    find_head();
    const std::size_t slot = slot_of(head_at_);
    std::vector<event>& bucket = buckets_[slot];
    const event item = bucket[cursor_++];
    --count_;
    if (cursor_ == bucket.size()) {
        bucket.clear();  // keeps its capacity for the next pass of the window
        mark(slot, false);
        cursor_ = 0;
        head_known_ = false;
    }
    return item;
}

void time_buckets::advance_floor(time_ns at) {
    floor_ = std::max(floor_, at);
}

std::span<const event> time_buckets::after_front() const {
    if (!head_known_) {
        return {};
    }
    const std::vector<event>& bucket = buckets_[slot_of(head_at_)];
    return std::span<const event>(bucket).subspan(cursor_ + 1);
}

}  // namespace btl_ft::sim
