// The detector's wire format: what crosses the network between two detector
// cores, as active messages (the heartbeat itself normally travels as an
// RDMA put of a bare 64-bit word and only uses HEARTBEAT as a fallback).
//
// Every message starts with a 4-byte header: magic "ft", version, type.
// Integers are little-endian; counts and ranks are LEB128 varints in their
// shortest form; a rank list is sorted and strictly increasing, sent as its
// first rank then the gaps (so 1,000 ranks spread over 2^20 take about 2 KB).
// The decoder reads nothing out of bounds, accepts only the shortest varint
// form and no trailing byte, so a message that decodes re-encodes to the very
// same bytes (the fuzzer checks this); anything else is rejected with a
// status naming what was wrong.
//
//   HEARTBEAT      word:u64
//   NEWOBSERVER    length:u8 (<= 64), flag handle bytes
//   NOTICE         mode:u8, route:u8, source, sequence, failed list, departed list,
//                  crashed list (the failed ranks the runtime confirmed dead),
//                  unreachable list (the other failed ranks a transport error named)
//   LEAVE          departed list (ranks the leaver knows left, near it on the ring)
//   DECLARED_DEAD  (nothing: "you are in my dead set")
//   PROBE          round:varint ("are you alive?", from an observer mending)
//   PROBE_REPLY    round:varint, word:u64 (the round asked, the replier's
//                  current heartbeat word; never a heartbeat itself)
//   WITNESS        round:varint, subject ("does `subject`, on your node, run?")
//   WITNESS_REPLY  round:varint, subject, state:u8 (process_state: 0 unknown,
//                  1 running, 2 stopped, 3 gone), behind list (the subject's
//                  stopped node-mates right behind it on the ring)
//   JOIN           epoch:varint, job count, (job, size) per job, job numbers
//                  strictly increasing; known failures: a rank list of the
//                  new union, then one failure_kind byte per rank
//                  ("the union moved on without you: follow it")
//
// mode and route sit at fixed offsets so that a notice is encoded once and
// only its route byte is patched for each hop.
//
// Rejected alternative: fixed 32-bit rank arrays, 4 KB for 1,000 ranks,
// which would not fit the BTL eager limit once the headers are added.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "btl_ft/membership.hpp"
#include "btl_ft/overlay.hpp"
#include "btl_ft/btl_ft.h"
#include "btl_ft/types.hpp"

namespace btl_ft::wire {

inline constexpr std::uint8_t magic0 = 0x66;  // 'f'
inline constexpr std::uint8_t magic1 = 0x74;  // 't'
// 2 added PROBE and PROBE_REPLY. Bumped rather than only adding types: a
// version-1 peer would drop every PROBE, and a silent prober's target is
// condemned, so the two must not half-understand each other.
// 3 added the crashed list of NOTICE, which the quorum rule of a version-2
// peer would not know to leave out of its count.
// 4 added WITNESS and WITNESS_REPLY: a version-3 peer would never answer,
// and its silence would cost every observer the witness it counts on.
// 5 added the unreachable list of NOTICE, so that a failure found by a
// transport error is not reported as a hang by the processes it reaches.
// 6 added JOIN: a version-5 process left out of a connect would never
// follow its union, and the new union would take its silence for a failure.
// 7 added each job's joining epoch to JOIN, which a version-6 peer would
// read as the next job.
// 8 added to WITNESS_REPLY the subject's stopped node-mates behind it, which
// a version-7 peer would refuse as trailing bytes.
inline constexpr std::uint8_t version = 8;
inline constexpr std::size_t header_bytes = 4;
inline constexpr std::size_t heartbeat_bytes = header_bytes + 8;
inline constexpr std::size_t max_handle_bytes = BTL_FT_HANDLE_MAX_BYTES;
inline constexpr std::size_t notice_mode_offset = header_bytes;
inline constexpr std::size_t notice_route_offset = header_bytes + 1;
// Smallest acceptable max_message_bytes: a NEWOBSERVER with a full handle
// and a notice with a few ranks must fit.
inline constexpr std::size_t min_message_bytes = 128;

enum class msg_type : std::uint8_t {
    heartbeat = 1,
    new_observer = 2,
    notice = 3,
    leave = 4,
    declared_dead = 5,
    probe = 6,
    probe_reply = 7,
    witness = 8,
    witness_reply = 9,
    join = 10,
};

// How a notice travels: along an overlay, or (fallback when the skip set
// does not fit in one message) sent by the source to every participant.
enum class notice_mode : std::uint8_t { hba = 0, bmg = 1, chord = 2, direct = 3 };
notice_mode mode_of(propagator_kind kind);
propagator_kind kind_of(notice_mode mode);  // mode != direct

enum class status : std::uint8_t {
    ok,
    truncated,          // ends inside the header or a field
    bad_magic,
    bad_version,
    bad_type,
    oversize,           // longer than the configured maximum
    trailing_bytes,     // bytes after the last field
    bad_varint,         // longer than 5 bytes, above 2^32-1, or not the shortest form
    rank_out_of_range,  // a rank >= job size
    unsorted,           // a rank list with a zero gap (duplicate)
    overlap,            // a rank both failed and departed, or both crashed and unreachable,
                        // or the source listed
    not_failed,         // a crashed or unreachable rank missing from the failed list
    bad_handle_length,  // flag handle > 64 bytes
    bad_mode,
    bad_route,
    bad_state,          // a WITNESS_REPLY state above `gone`
    bad_value_length,   // an allreduce value not of the call's length
    bad_jobs,           // a JOIN's job list empty, out of the union's order,
                        // with a job twice or an empty job, or naming more
                        // processes than ranks can
    bad_kind,           // a JOIN's failure kind above `crashed`
};
const char* describe(status value);

struct limits {
    rank_t size;            // job size: every rank must be below it
    std::size_t max_bytes;  // longer messages are rejected
};

// One decoded message; the vectors are reused between decodes.
struct message {
    msg_type type = msg_type::heartbeat;
    std::uint64_t word = 0;                          // heartbeat, probe_reply
    std::array<std::byte, max_handle_bytes> handle{};  // new_observer
    std::uint8_t handle_length = 0;
    notice_mode mode = notice_mode::hba;             // notice
    route_tag route = route_origin;
    rank_t source = 0;
    std::uint32_t sequence = 0;                      // notice; probe round (probe, probe_reply, witness*)
    rank_t subject = 0;                              // witness, witness_reply
    process_state state = process_state::unknown;    // witness_reply
    std::vector<rank_t> behind;                      // witness_reply: see encode_witness_reply
    std::vector<rank_t> failed;                      // notice
    std::vector<rank_t> departed;                    // notice, leave
    std::vector<rank_t> crashed;                     // notice: a subset of failed
    std::vector<rank_t> unreachable;                 // notice: a subset of failed, none crashed
    std::uint32_t epoch = 0;                         // join: the new union's
    std::vector<job_extent> jobs;                    // join: the new union's jobs
    std::vector<known_failure> known;                // join: failures in the new union's ranks

    std::span<const std::byte> handle_bytes() const { return {handle.data(), handle_length}; }
};

status decode(std::span<const std::byte> bytes, const limits& bounds, message& out);

// Whether `bytes` claim to be a JOIN (the header alone is read): the one
// message a transport hands to a detector of another union than its
// sender's (membership.hpp). decode() still checks the rest.
bool is_join(std::span<const std::byte> bytes);

// Encoders. The fixed-size ones return arrays so the heartbeat path never
// allocates; the others replace the contents of `out`.
std::array<std::byte, heartbeat_bytes> encode_heartbeat(std::uint64_t word);
std::array<std::byte, header_bytes> encode_declared_dead();
void encode_new_observer(std::span<const std::byte> handle, std::vector<std::byte>& out);
struct notice_fields {
    notice_mode mode;
    route_tag route;
    rank_t source;
    std::uint32_t sequence;
    std::span<const rank_t> failed;    // sorted, unique
    std::span<const rank_t> departed;  // sorted, unique
    std::span<const rank_t> crashed;   // sorted, unique, a subset of failed
    std::span<const rank_t> unreachable;  // sorted, unique, a subset of failed, disjoint from crashed
};
void encode_notice(const notice_fields& fields, std::vector<std::byte>& out);
void encode_leave(std::span<const rank_t> departed, std::vector<std::byte>& out);
// A JOIN: the union this process moved to, for the processes of its old
// one that took no part in the connect (membership.hpp). `jobs` in the
// union's order (in_union_order), none empty, the last one's `since` the
// epoch; `known` sorted by rank, unique, below
// the union's size.
struct join_fields {
    std::uint32_t epoch;
    std::span<const job_extent> jobs;
    std::span<const known_failure> known;
};
void encode_join(const join_fields& fields, std::vector<std::byte>& out);

// Worst-case bytes of a rank list of `count` ranks (5 per rank), for chunking.
inline constexpr std::size_t max_varint_bytes = 5;
// Fixed overhead bound of a notice without its ranks.
inline constexpr std::size_t notice_overhead_bytes = header_bytes + 2 + 5 * max_varint_bytes;

// Probes are encoded into caller-owned arrays, so probing allocates nothing;
// each returns the used prefix of `out` (the round is a varint).
inline constexpr std::size_t max_probe_bytes = header_bytes + max_varint_bytes;
inline constexpr std::size_t max_probe_reply_bytes = max_probe_bytes + 8;
std::span<const std::byte> encode_probe(std::uint32_t round, std::array<std::byte, max_probe_bytes>& out);
std::span<const std::byte> encode_probe_reply(std::uint32_t round, std::uint64_t word,
                                              std::array<std::byte, max_probe_reply_bytes>& out);
inline constexpr std::size_t max_witness_bytes = header_bytes + 2 * max_varint_bytes;
std::span<const std::byte> encode_witness(std::uint32_t round, rank_t subject,
                                          std::array<std::byte, max_witness_bytes>& out);
// `behind`: the subject's node-mates right behind it on the ring (sorted,
// unique) that the witness's host sees stopped, so that the asker declares
// a row of them at once (detector_two_levels.cpp).
void encode_witness_reply(std::uint32_t round, rank_t subject, process_state state,
                          std::span<const rank_t> behind, std::vector<std::byte>& out);

}  // namespace btl_ft::wire
