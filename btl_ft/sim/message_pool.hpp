// Storage for active messages in flight. The detector's bytes are only valid
// during send(), so the simulator copies them here and the delivery event
// carries the slot number.
//
// At 2^20 processes one broadcast puts ~2e7 notices in flight at once, so
// slots are small and fixed: 32 bytes (a notice naming one failure takes
// ~16) and 128 bytes (one naming tens), each class in chunks of 4096 slots,
// which grow without copying or doubling, recycled through a free list. Longer
// messages, rare, get a vector each. Rejected: one std::vector per message
// (a malloc/free pair and a 24-byte header per message).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "btl_ft/types.hpp"

namespace btl_ft::sim {

class message_pool {
public:
    std::uint64_t store(rank_t from, std::span<const std::byte> bytes);
    rank_t from(std::uint64_t slot) const;
    std::span<const std::byte> bytes(std::uint64_t slot) const;
    void release(std::uint64_t slot);
    // A hint: `slot` is read soon (its delivery is a few events ahead).
    void prefetch(std::uint64_t slot) const;
    std::size_t in_use() const { return in_use_; }

private:
    template <std::size_t Bytes>
    struct fixed_slot {
        rank_t from;
        std::uint8_t length;
        std::byte data[Bytes - sizeof(rank_t) - 1];
        static constexpr std::size_t capacity = Bytes - sizeof(rank_t) - 1;
    };
    // Slots in chunks of 4096 rather than a std::deque's 512-byte blocks:
    // the chunk table stays small enough to be in the cache when a slot a
    // few events ahead is prefetched (a deque's map of 10^6 blocks was not).
    template <std::size_t Bytes>
    struct fixed_class {
        static constexpr std::size_t chunk_slots = 4096;
        std::vector<std::unique_ptr<fixed_slot<Bytes>[]>> chunks;
        std::size_t count = 0;
        std::vector<std::uint32_t> free;
        std::uint32_t take();
        fixed_slot<Bytes>& operator[](std::size_t index) const {
            return chunks[index / chunk_slots][index % chunk_slots];
        }
    };
    static_assert(sizeof(fixed_slot<32>) == 32 && sizeof(fixed_slot<128>) == 128);
    struct large_slot {
        rank_t from = no_rank;
        std::vector<std::byte> data;
    };
    // The class of a slot number sits in its top two bits.
    static constexpr int class_shift = 62;
    static constexpr std::uint64_t index_mask = (std::uint64_t{1} << class_shift) - 1;

    fixed_class<32> small_;
    fixed_class<128> medium_;
    std::deque<large_slot> large_;
    std::vector<std::uint32_t> large_free_;
    std::size_t in_use_ = 0;
};

}  // namespace btl_ft::sim
