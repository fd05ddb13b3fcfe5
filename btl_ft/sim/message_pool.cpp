// Slot allocation for message_pool.hpp: pop a free slot or grow by one.
#include "message_pool.hpp"

#include <cstring>

#include "btl_ft/assert.hpp"

namespace btl_ft::sim {

template <std::size_t Bytes>
std::uint32_t message_pool::fixed_class<Bytes>::take() {
    if (free.empty()) {
        if (count % chunk_slots == 0) {
            chunks.push_back(std::make_unique_for_overwrite<fixed_slot<Bytes>[]>(chunk_slots));
        }
        return static_cast<std::uint32_t>(count++);
    }
    const std::uint32_t index = free.back();
    free.pop_back();
    return index;
}

namespace {
template <typename Slot>
void fill(Slot& slot, rank_t from, std::span<const std::byte> bytes) {
    slot.from = from;
    slot.length = static_cast<std::uint8_t>(bytes.size());
    if (!bytes.empty()) {
        std::memcpy(slot.data, bytes.data(), bytes.size());
    }
}
}  // namespace

std::uint64_t message_pool::store(rank_t from, std::span<const std::byte> bytes) {
    ++in_use_;
    if (bytes.size() <= fixed_slot<32>::capacity) {
        const std::uint32_t index = small_.take();
        fill(small_[index], from, bytes);
        return index;
    }
    if (bytes.size() <= fixed_slot<128>::capacity) {
        const std::uint32_t index = medium_.take();
        fill(medium_[index], from, bytes);
        return (std::uint64_t{1} << class_shift) | index;
    }
    std::uint32_t index = 0;
    if (large_free_.empty()) {
        index = static_cast<std::uint32_t>(large_.size());
        large_.emplace_back();
    } else {
        index = large_free_.back();
        large_free_.pop_back();
    }
    large_[index].from = from;
    large_[index].data.assign(bytes.begin(), bytes.end());
    return (std::uint64_t{2} << class_shift) | index;
}

rank_t message_pool::from(std::uint64_t slot) const {
    const std::size_t index = slot & index_mask;
    switch (slot >> class_shift) {
        case 0: return small_[index].from;
        case 1: return medium_[index].from;
        default: return large_[index].from;
    }
}

std::span<const std::byte> message_pool::bytes(std::uint64_t slot) const {
    const std::size_t index = slot & index_mask;
    switch (slot >> class_shift) {
        case 0: return {small_[index].data, small_[index].length};
        case 1: return {medium_[index].data, medium_[index].length};
        default: return large_[index].data;
    }
}

void message_pool::prefetch(std::uint64_t slot) const {
    const std::size_t index = slot & index_mask;
    switch (slot >> class_shift) {
        case 0: __builtin_prefetch(&small_[index]); break;
        case 1:
            __builtin_prefetch(&medium_[index]);
            __builtin_prefetch(reinterpret_cast<const char*>(&medium_[index]) + 64);
            break;
        default: break;  // rare
    }
}

void message_pool::release(std::uint64_t slot) {
    BTL_FT_ASSERT(in_use_ > 0, "message slot released twice");
    --in_use_;
    const auto index = static_cast<std::uint32_t>(slot & index_mask);
    switch (slot >> class_shift) {
        case 0: small_.free.push_back(index); break;
        case 1: medium_.free.push_back(index); break;
        default:
            large_[index].data.clear();
            large_free_.push_back(index);
            break;
    }
}

}  // namespace btl_ft::sim
