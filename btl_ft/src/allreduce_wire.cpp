// Encoder and decoder of allreduce_wire.hpp, on the core's shared codec.
// A count of ranges or a value length is checked against the bytes left
// before anything is reserved, so a forged one cannot make it allocate.
#include "btl_ft/allreduce_wire.hpp"

#include "btl_ft/assert.hpp"
#include "wire_codec.hpp"

namespace btl_ft::allreduce_wire {
namespace {

using wire::status;

// the exchange's step travels where a result's root does
bool has_root(msg_type type) {
    return type == msg_type::result || type == msg_type::prepare || type == msg_type::exchange;
}

bool has_decision(msg_type type) {
    return type == msg_type::hold || type == msg_type::result || type == msg_type::prepare;
}

void read_ranges(wire::codec::reader& in, rank_t size, rank_ranges& out) {
    const std::uint32_t count = in.varint();
    if (!in.ok()) return;
    if (count > size) return in.fail(status::rank_out_of_range);
    if (count > in.left() / 2) return in.fail(status::truncated);
    out.clear();
    std::uint64_t end = 0;
    for (std::uint32_t i = 0; i < count && in.ok(); ++i) {
        const std::uint32_t gap = in.varint();
        const std::uint32_t length = in.varint();
        if (!in.ok()) return;
        if ((i > 0 && gap == 0) || length == 0) return in.fail(status::unsorted);
        const std::uint64_t begin = end + gap;
        end = begin + length;
        if (end > size) return in.fail(status::rank_out_of_range);
        out.push_back({static_cast<rank_t>(begin), static_cast<rank_t>(end)});
    }
}

void read_value(wire::codec::reader& in, std::size_t max_value_bytes, std::vector<std::byte>& out) {
    const std::uint32_t length = in.varint();
    if (!in.ok()) return;
    if (length > max_value_bytes) return in.fail(status::bad_value_length);
    if (length > in.left()) return in.fail(status::truncated);
    out.resize(length);
    in.copy(out);
}

// Grows `buffer` to `bound` bytes if it is shorter: the space a message
// is written into in place, byte by byte push_backs having cost more than
// the rest of a fast-path exchange's handling.
std::span<std::byte> room(std::vector<std::byte>& buffer, std::size_t bound) {
    if (buffer.size() < bound) buffer.resize(bound);
    return buffer;
}

}  // namespace

wire::status decode(std::span<const std::byte> bytes, const limits& bounds, message& out) {
    wire::codec::reader in(bytes);
    std::uint8_t type = 0;
    const status header = wire::codec::read_header(in, magic0, magic1, version,
                                                   static_cast<std::uint8_t>(msg_type::partial),
                                                   static_cast<std::uint8_t>(msg_type::greeting), type);
    if (header != status::ok) return header;
    out.type = static_cast<msg_type>(type);
    if (out.type == msg_type::greeting) {  // nothing follows (the fields cleared keep their storage)
        out.sequence = out.root = out.decided_by = 0;
        out.contributors.clear();
        out.value.clear();
        return in.left() == 0 ? status::ok : status::trailing_bytes;
    }
    out.sequence = in.varint();
    out.root = has_root(out.type) ? in.varint() : 0;
    out.decided_by = has_decision(out.type) ? in.varint() : 0;
    // a step is below 34 (at most 2^32 processes: fold in, 32 doublings, fold out)
    const rank_t root_limit = out.type == msg_type::exchange ? 34 : bounds.size;
    if (in.ok() && (out.root >= root_limit || out.decided_by > fast_path_decider(bounds.size))) {
        in.fail(status::rank_out_of_range);
    }
    if (out.type == msg_type::exchange) {
        out.contributors.clear();
    } else {
        read_ranges(in, bounds.size, out.contributors);
    }
    read_value(in, bounds.max_value_bytes, out.value);
    if (in.ok() && in.left() != 0) in.fail(status::trailing_bytes);
    return in.error();
}

std::span<const std::byte> encode(msg_type type, std::uint32_t sequence, rank_t root, rank_t decided_by,
                                  const rank_ranges& contributors, std::span<const std::byte> value,
                                  std::vector<std::byte>& buffer) {
    BTL_FT_ASSERT(type != msg_type::exchange && type != msg_type::greeting,
                  "an exchange or greeting encoded with contributors");
    const std::size_t varints = 5 + 2 * contributors.ranges().size();  // sequence, root, decided_by, count, length
    wire::codec::array_writer put(room(buffer, wire::header_bytes + wire::max_varint_bytes * varints + value.size()));
    put.header(magic0, magic1, version, static_cast<std::uint8_t>(type));
    put.varint(sequence);
    if (has_root(type)) put.varint(root);
    if (has_decision(type)) put.varint(decided_by);
    put.varint(static_cast<std::uint32_t>(contributors.ranges().size()));
    rank_t end = 0;
    for (const rank_range& range : contributors.ranges()) {
        put.varint(range.begin - end);
        put.varint(range.end - range.begin);
        end = range.end;
    }
    put.varint(static_cast<std::uint32_t>(value.size()));
    put.bytes(value);
    return put.used();
}

std::span<const std::byte> encode_exchange(std::uint32_t sequence, std::uint32_t step, std::span<const std::byte> value,
                                           std::vector<std::byte>& buffer) {
    wire::codec::array_writer put(room(buffer, wire::header_bytes + wire::max_varint_bytes * 3 + value.size()));
    put.header(magic0, magic1, version, static_cast<std::uint8_t>(msg_type::exchange));
    put.varint(sequence);
    put.varint(step);
    put.varint(static_cast<std::uint32_t>(value.size()));
    put.bytes(value);
    return put.used();
}

std::span<const std::byte> encode_greeting(std::vector<std::byte>& buffer) {
    wire::codec::array_writer put(room(buffer, wire::header_bytes));
    put.header(magic0, magic1, version, static_cast<std::uint8_t>(msg_type::greeting));
    return put.used();
}

void encode(const message& in, std::vector<std::byte>& out) {
    std::size_t length = 0;
    if (in.type == msg_type::greeting) {
        length = encode_greeting(out).size();
    } else if (in.type == msg_type::exchange) {
        length = encode_exchange(in.sequence, in.root, in.value, out).size();
    } else {
        length = encode(in.type, in.sequence, in.root, in.decided_by, in.contributors, in.value, out).size();
    }
    out.resize(length);
}

}  // namespace btl_ft::allreduce_wire
