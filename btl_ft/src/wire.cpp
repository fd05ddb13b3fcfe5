// Encoder and decoder of wire.hpp. The decoder is a cursor over the input
// that fails closed: every read checks the remaining length first, and the
// first error stops decoding; a count is checked against the bytes left
// before anything is reserved, so a forged count cannot make it allocate.
#include "btl_ft/wire.hpp"

#include <algorithm>

#include "btl_ft/assert.hpp"
#include "btl_ft/dead_set.hpp"
#include "wire_codec.hpp"

namespace btl_ft::wire {
namespace {

using codec::reader;
using codec::writer;

// The detector's magic and version open every message.
template <typename Writer>
void put_header(Writer& put, msg_type type) {
    put.header(magic0, magic1, version, static_cast<std::uint8_t>(type));
}

// Two sorted lists share no rank.
bool disjoint(const std::vector<rank_t>& x, const std::vector<rank_t>& y) {
    std::vector<rank_t>::const_iterator a = x.begin(), b = y.begin();
    while (a != x.end() && b != y.end()) {
        if (*a == *b) return false;
        *a < *b ? ++a : ++b;
    }
    return true;
}

// Failed and departed are disjoint, so are crashed and unreachable, and the
// source is in neither.
bool lists_consistent(const message& out) {
    const auto contains = [](const std::vector<rank_t>& list, rank_t rank) {
        return std::binary_search(list.begin(), list.end(), rank);
    };
    if (contains(out.failed, out.source) || contains(out.departed, out.source)) {
        return false;
    }
    return disjoint(out.failed, out.departed) && disjoint(out.crashed, out.unreachable);
}

void decode_notice(reader& in, const limits& bounds, message& out) {
    const std::uint8_t mode = in.byte();
    const std::uint8_t route = in.byte();
    out.source = in.varint();
    out.sequence = in.varint();
    if (!in.ok()) return;
    if (mode > static_cast<std::uint8_t>(notice_mode::direct)) return in.fail(status::bad_mode);
    if (route > route_tag_max) return in.fail(status::bad_route);
    if (out.source >= bounds.size) return in.fail(status::rank_out_of_range);
    out.mode = static_cast<notice_mode>(mode);
    out.route = route;
    in.rank_list(bounds.size, out.failed);
    in.rank_list(bounds.size, out.departed);
    in.rank_list(bounds.size, out.crashed);
    in.rank_list(bounds.size, out.unreachable);
    if (in.ok() && !lists_consistent(out)) in.fail(status::overlap);
    if (in.ok() && !(contains_all(out.failed, out.crashed) && contains_all(out.failed, out.unreachable))) {
        in.fail(status::not_failed);
    }
}

// The jobs of a JOIN, and the size of the union they make (0 if refused).
rank_t decode_jobs(reader& in, std::vector<job_extent>& jobs) {
    jobs.clear();
    const std::uint32_t count = in.varint();
    if (!in.ok()) return 0;
    if (count == 0 || count > in.left() / 3) {  // a job takes 3 bytes at least
        in.fail(count == 0 ? status::bad_jobs : status::truncated);
        return 0;
    }
    std::uint64_t size = 0;
    for (std::uint32_t i = 0; i < count && in.ok(); ++i) {
        const job_extent job{in.varint(), in.varint(), in.varint()};
        size += job.size;
        if (in.ok() && (job.size == 0 || size >= no_rank)) {
            in.fail(status::bad_jobs);
        }
        jobs.push_back(job);
    }
    if (in.ok() && !in_union_order(jobs)) in.fail(status::bad_jobs);
    return in.ok() ? static_cast<rank_t>(size) : 0;
}

void decode_join(reader& in, message& out) {
    out.epoch = in.varint();
    const rank_t size = decode_jobs(in, out.jobs);
    out.known.clear();
    if (in.ok() && out.jobs.back().since != out.epoch) return in.fail(status::bad_jobs);
    if (!in.ok()) return;
    in.rank_list(size, out.failed);
    if (!in.ok()) return;
    if (out.failed.size() > in.left()) return in.fail(status::truncated);
    for (const rank_t rank : out.failed) {
        const std::uint8_t kind = in.byte();
        if (in.ok() && kind > static_cast<std::uint8_t>(failure_kind::crashed)) return in.fail(status::bad_kind);
        out.known.push_back({rank, static_cast<failure_kind>(kind)});
    }
    out.failed.clear();
}

void decode_body(reader& in, const limits& bounds, message& out) {
    switch (out.type) {
    case msg_type::heartbeat: out.word = in.u64(); break;
    case msg_type::new_observer:
        out.handle_length = in.byte();
        if (in.ok() && out.handle_length > max_handle_bytes) return in.fail(status::bad_handle_length);
        in.copy({out.handle.data(), out.handle_length});
        break;
    case msg_type::notice: decode_notice(in, bounds, out); break;
    case msg_type::leave: in.rank_list(bounds.size, out.departed); break;
    case msg_type::declared_dead: break;
    case msg_type::probe: out.sequence = in.varint(); break;
    case msg_type::probe_reply:
        out.sequence = in.varint();
        out.word = in.u64();
        break;
    case msg_type::witness:
    case msg_type::witness_reply:
        out.sequence = in.varint();
        out.subject = in.varint();
        if (in.ok() && out.subject >= bounds.size) return in.fail(status::rank_out_of_range);
        if (out.type == msg_type::witness_reply) {
            const std::uint8_t state = in.byte();
            if (in.ok() && state > static_cast<std::uint8_t>(process_state::starved)) return in.fail(status::bad_state);
            out.state = static_cast<process_state>(state);
            in.rank_list(bounds.size, out.behind);
        }
        break;
    case msg_type::join: decode_join(in, out); break;
    }
}

}  // namespace

notice_mode mode_of(propagator_kind kind) { return static_cast<notice_mode>(kind); }

propagator_kind kind_of(notice_mode mode) {
    BTL_FT_ASSERT(mode != notice_mode::direct, "a direct notice has no overlay");
    return static_cast<propagator_kind>(mode);
}

bool is_join(std::span<const std::byte> bytes) {
    return bytes.size() >= header_bytes && bytes[0] == std::byte{magic0} && bytes[1] == std::byte{magic1} &&
           bytes[2] == std::byte{version} && bytes[3] == std::byte{static_cast<std::uint8_t>(msg_type::join)};
}

status decode(std::span<const std::byte> bytes, const limits& bounds, message& out) {
    if (bytes.size() > bounds.max_bytes) return status::oversize;
    reader in(bytes);
    std::uint8_t type = 0;
    const status header = codec::read_header(in, magic0, magic1, version, static_cast<std::uint8_t>(msg_type::heartbeat),
                                             static_cast<std::uint8_t>(msg_type::join), type);
    if (header != status::ok) return header;
    out.type = static_cast<msg_type>(type);
    decode_body(in, bounds, out);
    if (in.ok() && in.left() != 0) in.fail(status::trailing_bytes);
    return in.error();
}

std::array<std::byte, heartbeat_bytes> encode_heartbeat(std::uint64_t word) {
    std::array<std::byte, heartbeat_bytes> out{std::byte{magic0}, std::byte{magic1}, std::byte{version},
                                               std::byte{static_cast<std::uint8_t>(msg_type::heartbeat)}};
    for (unsigned i = 0; i < 8; ++i) {
        out[header_bytes + i] = std::byte{static_cast<std::uint8_t>(word >> (8 * i))};
    }
    return out;
}

std::array<std::byte, header_bytes> encode_declared_dead() {
    return {std::byte{magic0}, std::byte{magic1}, std::byte{version},
            std::byte{static_cast<std::uint8_t>(msg_type::declared_dead)}};
}

std::span<const std::byte> encode_probe(std::uint32_t round, std::array<std::byte, max_probe_bytes>& out) {
    codec::array_writer put(out);
    put_header(put, msg_type::probe);
    put.varint(round);
    return put.used();
}

std::span<const std::byte> encode_probe_reply(std::uint32_t round, std::uint64_t word,
                                              std::array<std::byte, max_probe_reply_bytes>& out) {
    codec::array_writer put(out);
    put_header(put, msg_type::probe_reply);
    put.varint(round);
    put.u64(word);
    return put.used();
}

std::span<const std::byte> encode_witness(std::uint32_t round, rank_t subject,
                                          std::array<std::byte, max_witness_bytes>& out) {
    codec::array_writer put(out);
    put_header(put, msg_type::witness);
    put.varint(round);
    put.varint(subject);
    return put.used();
}

void encode_witness_reply(std::uint32_t round, rank_t subject, process_state state,
                          std::span<const rank_t> behind, std::vector<std::byte>& out) {
    writer put(out);
    put_header(put, msg_type::witness_reply);
    put.varint(round);
    put.varint(subject);
    put.byte(static_cast<std::uint8_t>(state));
    put.rank_list(behind);
}

void encode_new_observer(std::span<const std::byte> handle, std::vector<std::byte>& out) {
    BTL_FT_ASSERT(handle.size() <= max_handle_bytes, "flag handle too long");
    writer put(out);
    put_header(put, msg_type::new_observer);
    put.byte(static_cast<std::uint8_t>(handle.size()));
    out.insert(out.end(), handle.begin(), handle.end());
}

void encode_notice(const notice_fields& fields, std::vector<std::byte>& out) {
    BTL_FT_ASSERT(fields.route <= route_tag_max, "route tag out of range");
    writer put(out);
    put_header(put, msg_type::notice);
    put.byte(static_cast<std::uint8_t>(fields.mode));
    put.byte(fields.route);
    put.varint(fields.source);
    put.varint(fields.sequence);
    BTL_FT_ASSERT(contains_all(fields.failed, fields.crashed), "a crashed rank that is not in the failed list");
    BTL_FT_ASSERT(contains_all(fields.failed, fields.unreachable), "an unreachable rank that is not in the failed list");
    put.rank_list(fields.failed);
    put.rank_list(fields.departed);
    put.rank_list(fields.crashed);
    put.rank_list(fields.unreachable);
}

void encode_leave(std::span<const rank_t> departed, std::vector<std::byte>& out) {
    writer put(out);
    put_header(put, msg_type::leave);
    put.rank_list(departed);
}

void encode_join(const join_fields& fields, std::vector<std::byte>& out) {
    BTL_FT_ASSERT(!fields.jobs.empty(), "a JOIN names no job");
    writer put(out);
    put_header(put, msg_type::join);
    put.varint(fields.epoch);
    put.varint(static_cast<std::uint32_t>(fields.jobs.size()));
    BTL_FT_ASSERT(in_union_order(fields.jobs) && fields.jobs.back().since == fields.epoch,
                  "a JOIN lists its jobs out of the union's order");
    for (const job_extent& job : fields.jobs) {
        BTL_FT_ASSERT(job.size > 0, "a JOIN lists a job of no process");
        put.varint(job.job);
        put.varint(job.size);
        put.varint(job.since);
    }
    std::vector<rank_t> ranks;
    ranks.reserve(fields.known.size());
    for (const known_failure& failure : fields.known) {
        ranks.push_back(failure.rank);
    }
    put.rank_list(ranks);
    for (const known_failure& failure : fields.known) {
        put.byte(static_cast<std::uint8_t>(failure.kind));
    }
}

const char* describe(status value) {
    switch (value) {
    case status::ok: return "ok";
    case status::truncated: return "truncated";
    case status::bad_magic: return "bad magic";
    case status::bad_version: return "unknown version";
    case status::bad_type: return "unknown message type";
    case status::oversize: return "longer than the maximum message size";
    case status::trailing_bytes: return "trailing bytes";
    case status::bad_varint: return "malformed varint";
    case status::rank_out_of_range: return "rank out of range";
    case status::unsorted: return "rank list not strictly increasing";
    case status::overlap: return "rank both failed and departed, both crashed and unreachable, or source listed";
    case status::not_failed: return "crashed or unreachable rank not in the failed list";
    case status::bad_handle_length: return "flag handle too long";
    case status::bad_mode: return "unknown notice mode";
    case status::bad_route: return "route tag out of range";
    case status::bad_state: return "unknown process state";
    case status::bad_value_length: return "value of the wrong length";
    case status::bad_jobs: return "job list empty, out of the union's order, with a job twice or an empty job, or too large";
    case status::bad_kind: return "unknown failure kind";
    }
    return "?";
}

}  // namespace btl_ft::wire
