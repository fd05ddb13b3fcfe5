// Writes a small seed corpus for the wire fuzzer: one valid message of each
// type (several notices, and the survivor allreduce's), so the fuzzer starts from the accepted grammar
// instead of having to discover the magic and varints by itself.
#include <array>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "btl_ft/allreduce_wire.hpp"
#include "btl_ft/detector.hpp"
#include "btl_ft/wire.hpp"

namespace {

void write(const std::string& directory, const std::string& name, std::span<const std::byte> bytes) {
    std::ofstream out(directory + "/" + name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
    using namespace btl_ft;
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s corpus-directory\n", argv[0]);
        return 2;
    }
    const std::string directory = argv[1];
    write(directory, "heartbeat", wire::encode_heartbeat(heartbeat_word(5, 77)));
    write(directory, "declared_dead", wire::encode_declared_dead());
    std::vector<std::byte> out;
    const std::vector<std::byte> handle(16, std::byte{0xab});
    wire::encode_new_observer(handle, out);
    write(directory, "new_observer", out);
    const std::vector<rank_t> failed = {1, 3, 9, 200, 16000}, departed = {4, 15}, small = {2, 7};
    const std::vector<rank_t> crashed = {9}, unreachable = {3, 200};
    wire::encode_notice({wire::notice_mode::hba, route_origin, 0, 1, failed, departed, crashed, unreachable}, out);
    write(directory, "notice_hba", out);
    wire::encode_notice({wire::notice_mode::chord, 5, 11, 300, small, {}, small, {}}, out);
    write(directory, "notice_chord_small_job", out);
    wire::encode_notice({wire::notice_mode::direct, route_origin, 6, 1, {}, small, {}, {}}, out);
    write(directory, "notice_direct", out);
    wire::encode_leave(departed, out);
    write(directory, "leave", out);
    std::array<std::byte, wire::max_probe_bytes> probe{};
    write(directory, "probe", wire::encode_probe(300, probe));
    std::array<std::byte, wire::max_probe_reply_bytes> reply{};
    write(directory, "probe_reply", wire::encode_probe_reply(300, heartbeat_word(5, 77), reply));
    std::array<std::byte, wire::max_witness_bytes> witness{};
    write(directory, "witness", wire::encode_witness(300, 5, witness));
    wire::encode_witness_reply(300, 5, process_state::stopped, std::vector<rank_t>{3, 4}, out);
    write(directory, "witness_reply", out);
    const std::vector<job_extent> jobs = {{3, 4, 0}, {9, 1, 2}};
    const std::vector<known_failure> known = {{1, failure_kind::crashed}, {4, failure_kind::suspected}};
    wire::encode_join({2, jobs, known}, out);
    write(directory, "join", out);
    // The survivor allreduce's messages, in a job of 17 (the fuzzer's limits).
    const rank_ranges contributors({{0, 3}, {5, 17}});
    const std::vector<std::byte> value(8, std::byte{0x11});
    using allreduce_wire::msg_type;
    for (const auto& [type, name] : {std::pair{msg_type::partial, "ar_partial"}, std::pair{msg_type::hold, "ar_hold"},
                                     std::pair{msg_type::result, "ar_result"}, std::pair{msg_type::prepare, "ar_prepare"}}) {
        write(directory, name, allreduce_wire::encode(type, 4, 1, 2, contributors, value, out));
    }
    write(directory, "ar_exchange", allreduce_wire::encode_exchange(4, 1, value, out));
    write(directory, "ar_greeting", allreduce_wire::encode_greeting(out));
    return 0;
}
