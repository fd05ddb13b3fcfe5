// libFuzzer target for the wire decoders: the detector's and the survivor
// allreduce's. Beyond "no crash, no out-of-bounds read" (AddressSanitizer),
// it checks each decoder's contract: whatever decodes re-encodes to exactly
// the same bytes (one canonical form), and the decoded notice satisfies what
// the detector relies on (sorted, in range, failed and departed disjoint,
// source in neither), the decoded contributors what the allreduce relies on
// (in range, the value of the call's length), the decoded JOIN a union
// (jobs by joining epoch then number, each once, none empty, the last one's
// epoch the union's; failures sorted, inside it).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "btl_ft/allreduce_wire.hpp"
#include "btl_ft/wire.hpp"

namespace {

using namespace btl_ft;

std::vector<std::byte> reencode(const wire::message& msg) {
    std::vector<std::byte> out;
    switch (msg.type) {
    case wire::msg_type::heartbeat: {
        const auto fixed = wire::encode_heartbeat(msg.word);
        return {fixed.begin(), fixed.end()};
    }
    case wire::msg_type::declared_dead: {
        const auto fixed = wire::encode_declared_dead();
        return {fixed.begin(), fixed.end()};
    }
    case wire::msg_type::new_observer: wire::encode_new_observer(msg.handle_bytes(), out); break;
    case wire::msg_type::notice:
        wire::encode_notice({msg.mode, msg.route, msg.source, msg.sequence, msg.failed, msg.departed, msg.crashed,
                             msg.unreachable},
                            out);
        break;
    case wire::msg_type::leave: wire::encode_leave(msg.departed, out); break;
    case wire::msg_type::probe: {
        std::array<std::byte, wire::max_probe_bytes> fixed{};
        const auto used = wire::encode_probe(msg.sequence, fixed);
        return {used.begin(), used.end()};
    }
    case wire::msg_type::probe_reply: {
        std::array<std::byte, wire::max_probe_reply_bytes> fixed{};
        const auto used = wire::encode_probe_reply(msg.sequence, msg.word, fixed);
        return {used.begin(), used.end()};
    }
    case wire::msg_type::witness: {
        std::array<std::byte, wire::max_witness_bytes> fixed{};
        const auto used = wire::encode_witness(msg.sequence, msg.subject, fixed);
        return {used.begin(), used.end()};
    }
    case wire::msg_type::witness_reply: wire::encode_witness_reply(msg.sequence, msg.subject, msg.state, msg.behind, out); break;
    case wire::msg_type::join: wire::encode_join({msg.epoch, msg.jobs, msg.known}, out); break;
    }
    return out;
}

void require(bool condition) {
    if (!condition) std::abort();
}

void check_list(const std::vector<rank_t>& list, rank_t size) {
    require(std::adjacent_find(list.begin(), list.end(), std::greater_equal<>()) == list.end());
    require(list.empty() || list.back() < size);
}

void check(std::span<const std::byte> bytes, const wire::limits& bounds) {
    wire::message msg;
    if (wire::decode(bytes, bounds, msg) != wire::status::ok) return;
    require(bytes.size() <= bounds.max_bytes);
    const std::vector<std::byte> again = reencode(msg);
    require(std::ranges::equal(again, bytes));
    if (msg.type == wire::msg_type::witness || msg.type == wire::msg_type::witness_reply) require(msg.subject < bounds.size);
    if (msg.type == wire::msg_type::notice || msg.type == wire::msg_type::leave) check_list(msg.departed, bounds.size);
    if (msg.type == wire::msg_type::witness_reply) check_list(msg.behind, bounds.size);
    if (msg.type == wire::msg_type::join) {
        std::uint64_t size = 0;
        std::vector<std::uint32_t> numbers;
        for (std::size_t i = 0; i < msg.jobs.size(); ++i) {
            const job_extent& job = msg.jobs[i];
            require(job.size > 0);
            require(i == 0 || msg.jobs[i - 1].since < job.since ||
                    (msg.jobs[i - 1].since == job.since && msg.jobs[i - 1].job < job.job));
            size += job.size;
            numbers.push_back(job.job);
        }
        std::ranges::sort(numbers);
        require(!msg.jobs.empty() && size < no_rank && std::ranges::adjacent_find(numbers) == numbers.end());
        require(msg.jobs.back().since == msg.epoch);
        for (std::size_t i = 0; i < msg.known.size(); ++i) {
            require(msg.known[i].rank < size && (i == 0 || msg.known[i].rank > msg.known[i - 1].rank));
            require(msg.known[i].kind <= failure_kind::crashed);
        }
    }
    if (msg.type == wire::msg_type::notice) {
        check_list(msg.failed, bounds.size);
        require(msg.source < bounds.size && msg.route <= route_tag_max);
        for (const rank_t rank : msg.failed) {
            require(rank != msg.source && !std::binary_search(msg.departed.begin(), msg.departed.end(), rank));
        }
    }
}

void check_allreduce(std::span<const std::byte> bytes, const allreduce_wire::limits& bounds) {
    allreduce_wire::message msg;
    if (allreduce_wire::decode(bytes, bounds, msg) != wire::status::ok) return;
    std::vector<std::byte> again;
    allreduce_wire::encode(msg, again);
    require(std::ranges::equal(again, bytes));
    // an exchange's step where a result's root goes; a decision of the fast path by the job's size
    const rank_t root_limit = msg.type == allreduce_wire::msg_type::exchange ? 34 : bounds.size;
    require(msg.root < root_limit && msg.decided_by <= allreduce_wire::fast_path_decider(bounds.size));
    const auto ranges = msg.contributors.ranges();
    require(ranges.empty() || ranges.back().end <= bounds.size);
    require(msg.value.size() <= bounds.max_value_bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
    check(bytes, {1u << 20, 4096});
    check(bytes, {17, 256});  // a small job, where range checks bite
    check_allreduce(bytes, {17, 8});
    return 0;
}
