// The byte-level cursor and writers behind the wire formats of the core (the
// detector's, wire.cpp, and the survivor allreduce's): a reader that fails
// closed, LEB128 varints in their shortest form, sorted rank lists as gaps.
// Private to btl_ft/src.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "btl_ft/assert.hpp"
#include "btl_ft/wire.hpp"

namespace btl_ft::wire::codec {

class reader {
public:
    explicit reader(std::span<const std::byte> bytes) : bytes_(bytes) {}

    std::size_t left() const { return bytes_.size() - at_; }
    status error() const { return error_; }
    bool ok() const { return error_ == status::ok; }
    void fail(status why) {
        if (ok()) error_ = why;
    }

    std::uint8_t byte() {
        if (!ok() || left() < 1) {
            fail(status::truncated);
            return 0;
        }
        return std::to_integer<std::uint8_t>(bytes_[at_++]);
    }

    std::uint64_t u64() {
        std::uint64_t value = 0;
        for (unsigned i = 0; i < 8; ++i) {
            value |= std::uint64_t{byte()} << (8 * i);
        }
        return value;
    }

    // LEB128, at most 5 bytes, shortest form only.
    std::uint32_t varint() {
        std::uint64_t value = 0;
        for (unsigned i = 0; i < max_varint_bytes; ++i) {
            const std::uint8_t next = byte();
            if (!ok()) return 0;
            value |= std::uint64_t{next & 0x7fu} << (7 * i);
            if ((next & 0x80u) == 0) {
                if ((i > 0 && next == 0) || value > 0xffffffffULL) {
                    fail(status::bad_varint);
                }
                return static_cast<std::uint32_t>(value);
            }
        }
        fail(status::bad_varint);
        return 0;
    }

    void copy(std::span<std::byte> into) {
        if (!ok() || left() < into.size()) {
            fail(status::truncated);
            return;
        }
        std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(at_), into.size(), into.begin());
        at_ += into.size();
    }

    // First rank, then strictly positive gaps, every rank below `size`.
    void rank_list(rank_t size, std::vector<rank_t>& out) {
        out.clear();
        const std::uint32_t count = varint();
        if (!ok()) return;
        if (count > size) return fail(status::rank_out_of_range);
        if (count > left()) return fail(status::truncated);
        out.reserve(count);
        std::uint64_t rank = 0;
        for (std::uint32_t i = 0; i < count && ok(); ++i) {
            const std::uint32_t step = varint();
            if (i > 0 && step == 0) return fail(status::unsorted);
            rank = (i == 0 ? 0 : rank) + step;
            if (rank >= size) return fail(status::rank_out_of_range);
            out.push_back(static_cast<rank_t>(rank));
        }
    }

private:
    std::span<const std::byte> bytes_;
    std::size_t at_ = 0;
    status error_ = status::ok;
};

// The encodings every writer shares, over the writer's own byte(): one
// growing into a vector, one filling a fixed array where nothing may allocate.
template <typename Self>
class encoder {
public:
    // Two magic bytes, the version, the type: every format's first 4 bytes.
    void header(std::uint8_t first, std::uint8_t second, std::uint8_t format_version, std::uint8_t type) {
        self().byte(first);
        self().byte(second);
        self().byte(format_version);
        self().byte(type);
    }
    void varint(std::uint32_t value) {
        for (; value >= 0x80u; value >>= 7) self().byte(static_cast<std::uint8_t>(value | 0x80u));
        self().byte(static_cast<std::uint8_t>(value));
    }
    void u64(std::uint64_t value) {
        for (unsigned i = 0; i < 8; ++i) self().byte(static_cast<std::uint8_t>(value >> (8 * i)));
    }

private:
    Self& self() { return static_cast<Self&>(*this); }
};

class writer : public encoder<writer> {
public:
    explicit writer(std::vector<std::byte>& out) : out_(out) { out_.clear(); }

    void byte(std::uint8_t value) { out_.push_back(std::byte{value}); }
    void rank_list(std::span<const rank_t> ranks) {
        varint(static_cast<std::uint32_t>(ranks.size()));
        rank_t previous = 0;
        for (std::size_t i = 0; i < ranks.size(); ++i) {
            BTL_FT_ASSERT(i == 0 || ranks[i] > previous, "encoding a rank list that is not strictly increasing");
            varint(ranks[i] - previous);
            previous = ranks[i];
        }
    }

private:
    std::vector<std::byte>& out_;
};

// Fills a span sized beforehand: for the messages that must not allocate,
// and for those whose longest form is known before they are written.
class array_writer : public encoder<array_writer> {
public:
    explicit array_writer(std::span<std::byte> into) : into_(into) {}
    void byte(std::uint8_t value) {
        BTL_FT_ASSERT(at_ < into_.size(), "a message overflows the bytes sized for it");
        into_[at_++] = std::byte{value};
    }
    void bytes(std::span<const std::byte> data) {
        BTL_FT_ASSERT(data.size() <= into_.size() - at_, "a message overflows the bytes sized for it");
        std::copy(data.begin(), data.end(), into_.begin() + static_cast<std::ptrdiff_t>(at_));
        at_ += data.size();
    }
    std::span<const std::byte> used() const { return into_.first(at_); }

private:
    std::span<std::byte> into_;
    std::size_t at_ = 0;
};

// Reads a format's 4-byte header: its two magic bytes, its version and a
// type in [first_type, last_type]; ok and the type, or why it is refused.
inline status read_header(reader& in, std::uint8_t first, std::uint8_t second, std::uint8_t format_version,
                          std::uint8_t first_type, std::uint8_t last_type, std::uint8_t& type) {
    const std::uint8_t m0 = in.byte(), m1 = in.byte(), v = in.byte();
    type = in.byte();
    if (!in.ok()) return in.error();
    if (m0 != first || m1 != second) return status::bad_magic;
    if (v != format_version) return status::bad_version;
    if (type < first_type || type > last_type) return status::bad_type;
    return status::ok;
}

}  // namespace btl_ft::wire::codec
