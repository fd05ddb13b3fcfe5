// The survivor allreduce's wire format (survivor_allreduce.hpp). Its own
// magic, "fr", so that a message on the wrong channel is refused, and the
// same rules as the detector's format (wire.hpp): 4-byte header, LEB128
// varints in their shortest form, nothing read out of bounds, no trailing
// byte, so a message that decodes re-encodes to the same bytes.
//
//   PARTIAL  sequence, contributors, value      (up the tree)
//   HOLD     sequence, decided_by, contributors, value
//                                              (to a new root: "the old root decided this")
//   RESULT   sequence, root, decided_by, contributors, value
//                                              (down the tree; root: the root it travels under)
//   PREPARE  as RESULT                         (root to its successor, which sends it down)
//   EXCHANGE sequence, step, value             (the fast path: recursive doubling)
//   GREETING (nothing)                         (opens a link a repair would use: dropped)
//
// An EXCHANGE carries no contributors: while nothing fails, what its
// sender has combined by a step follows from its rank and the step
// (survivor_allreduce_fast.cpp), and its receiver falls back to the tree,
// with its own value alone, as soon as anything fails.
//
// decided_by is a rank, or the size of the job for a result of the fast
// path, which no single process decided (fast_path_decider).
// contributors: a count of ranges, then for each the gap from the end of the
// previous one (from 0 for the first; at least 1 after it, as ranges never
// touch) and its length (at least 1). value: its length (at most the
// limit; the receiver checks it is its call's), then the bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "btl_ft/rank_ranges.hpp"
#include "btl_ft/types.hpp"
#include "btl_ft/wire.hpp"

namespace btl_ft::allreduce_wire {

inline constexpr std::uint8_t magic0 = 0x66;  // 'f'
inline constexpr std::uint8_t magic1 = 0x72;  // 'r'
inline constexpr std::uint8_t version = 4;

enum class msg_type : std::uint8_t { partial = 1, hold = 2, result = 3, prepare = 4, exchange = 5, greeting = 6 };

struct message {
    msg_type type = msg_type::partial;
    std::uint32_t sequence = 0;
    rank_t root = 0;        // result, prepare; exchange: the step
    rank_t decided_by = 0;  // hold, result, prepare
    rank_ranges contributors;  // empty in an exchange
    std::vector<std::byte> value;
};

struct limits {
    rank_t size;              // every rank below it
    std::size_t max_value_bytes;  // longer values are refused
};

// The decided_by of a result of the fast path, in a job of `size`.
inline constexpr rank_t fast_path_decider(rank_t size) { return size; }

// The longest message of any type in a job of `size` with a value of
// `value_bytes`: a set of ranks in [0, size) is at most (size + 1) / 2
// ranges that never touch.
inline constexpr std::size_t max_message_bytes(rank_t size, std::size_t value_bytes) {
    // sequence, root, decided_by, count, value length, a gap and a length per range
    return wire::header_bytes + wire::max_varint_bytes * (5 + 2 * ((std::size_t{size} + 1) / 2)) + value_bytes;
}

wire::status decode(std::span<const std::byte> bytes, const limits& bounds, message& out);
// `out` ends as the message's bytes.
void encode(const message& in, std::vector<std::byte>& out);
// The same from parts, into `buffer` grown to the message's longest form
// and never shrunk (a sender's scratch: it neither shrinks nor fills
// again call after call): the message is the part returned.
std::span<const std::byte> encode(msg_type type, std::uint32_t sequence, rank_t root, rank_t decided_by,
                                  const rank_ranges& contributors, std::span<const std::byte> value,
                                  std::vector<std::byte>& buffer);  // not an exchange
std::span<const std::byte> encode_exchange(std::uint32_t sequence, std::uint32_t step, std::span<const std::byte> value,
                                           std::vector<std::byte>& buffer);
std::span<const std::byte> encode_greeting(std::vector<std::byte>& buffer);

}  // namespace btl_ft::allreduce_wire
