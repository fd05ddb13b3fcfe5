// Wire format: round trips, canonical re-encoding, size of a 1,000-failure
// notice at 2^20 ranks, and rejection of every kind of malformed input
// (truncation at every byte, bad header, bad lengths, bad varints, unsorted,
// out-of-range and overlapping ranks, trailing bytes, oversize).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>

#include "btl_ft/prng.hpp"
#include "btl_ft/wire.hpp"

namespace btl_ft::wire {
namespace {

const limits job{1u << 20, 4096};

std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
    std::vector<std::byte> out;
    for (const int value : values) out.push_back(std::byte{static_cast<unsigned char>(value)});
    return out;
}

std::vector<std::byte> a_notice(std::vector<rank_t> failed = {3, 70, 5000, 1u << 19}, std::vector<rank_t> departed = {9}) {
    std::vector<std::byte> out;
    encode_notice({notice_mode::chord, 17, 12345, 0xfffffffe, failed, departed}, out);
    return out;
}

// A union of jobs 7 (3 processes, from epoch 0) and 300 (2^20, joined at
// epoch 0x12345), knowing two failures.
std::vector<std::byte> a_join() {
    const std::vector<job_extent> jobs = {{7, 3, 0}, {300, 1u << 20, 0x12345}};
    const std::vector<known_failure> known = {{1, failure_kind::crashed}, {(1u << 20) + 2, failure_kind::suspected}};
    std::vector<std::byte> out;
    encode_join({0x12345, jobs, known}, out);
    return out;
}

std::vector<std::vector<std::byte>> one_of_each() {
    std::vector<std::vector<std::byte>> all;
    const auto heartbeat = encode_heartbeat(0x0123456789abcdefULL);
    all.emplace_back(heartbeat.begin(), heartbeat.end());
    const auto dead = encode_declared_dead();
    all.emplace_back(dead.begin(), dead.end());
    std::vector<std::byte> out;
    const std::vector<std::byte> handle(64, std::byte{0x5a});
    encode_new_observer(handle, out);
    all.push_back(out);
    all.push_back(a_notice());
    const std::vector<rank_t> departed = {1, 2, 1000};
    encode_leave(departed, out);
    all.push_back(out);
    std::array<std::byte, max_probe_bytes> probe{};
    const auto asked = encode_probe(300, probe);
    all.emplace_back(asked.begin(), asked.end());
    std::array<std::byte, max_probe_reply_bytes> reply{};
    const auto answered = encode_probe_reply(0xffffffffu, 0x0123456789abcdefULL, reply);
    all.emplace_back(answered.begin(), answered.end());
    std::array<std::byte, max_witness_bytes> witness{};
    const auto question = encode_witness(301, 1000, witness);
    all.emplace_back(question.begin(), question.end());
    const std::vector<rank_t> behind = {998, 999};
    all.emplace_back();
    encode_witness_reply(301, 1000, process_state::stopped, behind, all.back());
    all.push_back(a_join());
    return all;
}

TEST(Wire, RoundTripsEveryType) {
    message msg;
    const auto heartbeat = encode_heartbeat(0x0123456789abcdefULL);
    ASSERT_EQ(decode(heartbeat, job, msg), status::ok);
    EXPECT_EQ(msg.type, msg_type::heartbeat);
    EXPECT_EQ(msg.word, 0x0123456789abcdefULL);

    ASSERT_EQ(decode(encode_declared_dead(), job, msg), status::ok);
    EXPECT_EQ(msg.type, msg_type::declared_dead);

    std::vector<std::byte> out;
    const std::vector<std::byte> handle = {std::byte{1}, std::byte{2}, std::byte{3}};
    encode_new_observer(handle, out);
    ASSERT_EQ(decode(out, job, msg), status::ok);
    EXPECT_EQ(msg.type, msg_type::new_observer);
    EXPECT_TRUE(std::ranges::equal(msg.handle_bytes(), handle));

    ASSERT_EQ(decode(a_notice(), job, msg), status::ok);
    EXPECT_EQ(msg.type, msg_type::notice);
    EXPECT_EQ(msg.mode, notice_mode::chord);
    EXPECT_EQ(msg.route, 17);
    EXPECT_EQ(msg.source, 12345u);
    EXPECT_EQ(msg.sequence, 0xfffffffeu);
    EXPECT_EQ(msg.failed, (std::vector<rank_t>{3, 70, 5000, 1u << 19}));
    EXPECT_EQ(msg.departed, (std::vector<rank_t>{9}));

    const std::vector<rank_t> departed = {0, 1, (1u << 20) - 1};
    encode_leave(departed, out);
    ASSERT_EQ(decode(out, job, msg), status::ok);
    EXPECT_EQ(msg.type, msg_type::leave);
    EXPECT_EQ(msg.departed, departed);
}

TEST(Wire, ProbeAndReplyRoundTripAtTheirSizeBounds) {
    message msg;
    std::array<std::byte, max_probe_bytes> probe{};
    for (const std::uint32_t round : {0u, 127u, 128u, 0xffffffffu}) {
        const auto bytes = encode_probe(round, probe);
        ASSERT_EQ(decode(bytes, job, msg), status::ok) << round;
        EXPECT_EQ(msg.type, msg_type::probe);
        EXPECT_EQ(msg.sequence, round);
    }
    EXPECT_EQ(encode_probe(0xffffffffu, probe).size(), max_probe_bytes);
    std::array<std::byte, max_probe_reply_bytes> reply{};
    const auto bytes = encode_probe_reply(0xffffffffu, 0xfedcba9876543210ULL, reply);
    EXPECT_EQ(bytes.size(), max_probe_reply_bytes);
    ASSERT_EQ(decode(bytes, job, msg), status::ok);
    EXPECT_EQ(msg.type, msg_type::probe_reply);
    EXPECT_EQ(msg.sequence, 0xffffffffu);
    EXPECT_EQ(msg.word, 0xfedcba9876543210ULL);
}

TEST(Wire, MalformedProbesAreRejected) {
    message msg;
    // PROBE without its round, with a non-shortest round, with a trailing byte.
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 6}), job, msg), status::truncated);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 6, 0x81, 0x00}), job, msg), status::bad_varint);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 6, 1, 0}), job, msg), status::trailing_bytes);
    // PROBE_REPLY whose word is one byte short, or missing.
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 7, 1, 1, 2, 3, 4, 5, 6, 7}), job, msg), status::truncated);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 7, 1}), job, msg), status::truncated);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 7, 1, 1, 2, 3, 4, 5, 6, 7, 8}), job, msg), status::ok);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 7, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9}), job, msg), status::trailing_bytes);
    // A probe of the previous wire version is not understood.
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, 1, 6, 1}), job, msg), status::bad_version);
}

TEST(Wire, WitnessMessagesRoundTripAndRejectBadFields) {
    message msg;
    std::array<std::byte, max_witness_bytes> question{};
    ASSERT_EQ(decode(encode_witness(0xffffffffu, 1023, question), job, msg), status::ok);
    EXPECT_EQ(msg.type, msg_type::witness);
    EXPECT_EQ(msg.sequence, 0xffffffffu);
    EXPECT_EQ(msg.subject, 1023u);
    std::vector<std::byte> bytes;
    encode_witness_reply(7, 5, process_state::gone, std::vector<rank_t>{2, 4}, bytes);
    ASSERT_EQ(decode(bytes, job, msg), status::ok);
    EXPECT_EQ(msg.type, msg_type::witness_reply);
    EXPECT_EQ(msg.subject, 5u);
    EXPECT_EQ(msg.state, process_state::gone);
    EXPECT_EQ(msg.behind, (std::vector<rank_t>{2, 4}));
    encode_witness_reply(7, 5, process_state::running, {}, bytes);
    ASSERT_EQ(decode(bytes, job, msg), status::ok);
    EXPECT_TRUE(msg.behind.empty());  // not the last decode's
    encode_witness_reply(7, 5, process_state::starved, {}, bytes);
    ASSERT_EQ(decode(bytes, job, msg), status::ok);
    EXPECT_EQ(msg.state, process_state::starved);
    // A state beyond `starved`, a subject outside the job, a missing state, a
    // missing row, a row that repeats a rank or leaves the job.
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 9, 7, 5, 5, 0}), job, msg), status::bad_state);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 8, 7, 0x80, 0x08}), {1024, 4096}, msg), status::rank_out_of_range);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 9, 7, 5}), job, msg), status::truncated);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 9, 7, 5, 2}), job, msg), status::truncated);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 9, 7, 5, 2, 2, 3, 0}), job, msg), status::unsorted);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 9, 7, 5, 2, 2, 1, 0x80, 0x08}), {1024, 4096}, msg),
              status::rank_out_of_range);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 8, 7, 5, 0}), job, msg), status::trailing_bytes);
}

// Its ranks are the new union's, beyond the receiver's own job size.
TEST(Wire, JoinRoundTripsWithRanksOfTheNewUnion) {
    message msg;
    ASSERT_EQ(decode(a_join(), {4, 4096}, msg), status::ok);
    EXPECT_EQ(msg.type, msg_type::join);
    EXPECT_EQ(msg.epoch, 0x12345u);
    EXPECT_EQ(msg.jobs, (std::vector<job_extent>{{7, 3, 0}, {300, 1u << 20, 0x12345}}));
    EXPECT_EQ(msg.known, (std::vector<known_failure>{{1, failure_kind::crashed}, {(1u << 20) + 2, failure_kind::suspected}}));
}

// A union lists its jobs in the order they joined, not by identifier.
TEST(Wire, AJoinKeepsTheOrderOfItsJobs) {
    std::vector<std::byte> out;
    const std::vector<job_extent> jobs = {{9, 2, 0}, {4, 3, 1}};
    encode_join({1, jobs, {}}, out);
    message msg;
    ASSERT_EQ(decode(out, job, msg), status::ok);
    EXPECT_EQ(msg.jobs, jobs);
}

// What a transport reads to hand a JOIN across unions: the header alone.
TEST(Wire, AJoinIsKnownByItsHeader) {
    EXPECT_TRUE(is_join(a_join()));
    EXPECT_FALSE(is_join(a_notice()));
    const auto heartbeat = encode_heartbeat(7);
    EXPECT_FALSE(is_join(heartbeat));
    std::vector<std::byte> old = a_join();
    old[2] = std::byte{version - 1};
    EXPECT_FALSE(is_join(old));
    const std::vector<std::byte> whole = a_join();
    EXPECT_FALSE(is_join(std::span(whole).first(3)));
}

TEST(Wire, MalformedJoinsAreRejected) {
    message msg;
    const int join = static_cast<int>(msg_type::join);
    // Each job is (job, size, since). Epoch 1 and: no job; job 5 twice;
    // jobs 5, 6, then 5 again; 6 (since 1) before 5 (since 0); an empty
    // job; a last since other than the epoch.
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, join, 1, 0, 0}), job, msg), status::bad_jobs);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, join, 1, 2, 5, 1, 0, 5, 1, 1, 0}), job, msg), status::bad_jobs);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, join, 1, 3, 5, 1, 0, 6, 1, 1, 5, 1, 1, 0}), job, msg),
              status::bad_jobs);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, join, 1, 2, 6, 1, 1, 5, 1, 0, 0}), job, msg), status::bad_jobs);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, join, 1, 1, 5, 0, 1, 0}), job, msg), status::bad_jobs);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, join, 2, 1, 5, 2, 1, 0}), job, msg), status::bad_jobs);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, join, 1, 1, 5, 2}), job, msg), status::truncated);
    // A job count the bytes left cannot hold.
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, join, 1, 100, 5, 2, 1, 0}), job, msg), status::truncated);
    // Two jobs of 2^31 and more: more processes than ranks can name.
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, join, 1, 2, 1, 0x80, 0x80, 0x80, 0x80, 0x08, 0, 2, 0x80, 0x80,
                               0x80, 0x80, 0x08, 1, 0}),
                     job, msg),
              status::bad_jobs);
    // One job of 2: a failure at rank 2 is outside it; a kind above crashed;
    // a kind missing; a byte after the kinds.
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, join, 1, 1, 5, 2, 1, 1, 2, 0}), job, msg),
              status::rank_out_of_range);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, join, 1, 1, 5, 2, 1, 1, 1, 3}), job, msg), status::bad_kind);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, join, 1, 1, 5, 2, 1, 1, 1}), job, msg), status::truncated);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, join, 1, 1, 5, 2, 1, 1, 1, 2, 0}), job, msg),
              status::trailing_bytes);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, join, 1, 1, 5, 2, 1, 1, 1, 2}), job, msg), status::ok);
}

TEST(Wire, DecodedMessagesReencodeToTheSameBytes) {
    for (const auto& original : one_of_each()) {
        message msg;
        ASSERT_EQ(decode(original, job, msg), status::ok);
        std::vector<std::byte> again;
        switch (msg.type) {
        case msg_type::heartbeat: {
            const auto fixed = encode_heartbeat(msg.word);
            again.assign(fixed.begin(), fixed.end());
            break;
        }
        case msg_type::declared_dead: {
            const auto fixed = encode_declared_dead();
            again.assign(fixed.begin(), fixed.end());
            break;
        }
        case msg_type::new_observer: encode_new_observer(msg.handle_bytes(), again); break;
        case msg_type::notice:
            encode_notice({msg.mode, msg.route, msg.source, msg.sequence, msg.failed, msg.departed, msg.crashed,
                           msg.unreachable},
                          again);
            break;
        case msg_type::leave: encode_leave(msg.departed, again); break;
        case msg_type::probe: {
            std::array<std::byte, max_probe_bytes> fixed{};
            const auto used = encode_probe(msg.sequence, fixed);
            again.assign(used.begin(), used.end());
            break;
        }
        case msg_type::probe_reply: {
            std::array<std::byte, max_probe_reply_bytes> fixed{};
            const auto used = encode_probe_reply(msg.sequence, msg.word, fixed);
            again.assign(used.begin(), used.end());
            break;
        }
        case msg_type::witness: {
            std::array<std::byte, max_witness_bytes> fixed{};
            const auto used = encode_witness(msg.sequence, msg.subject, fixed);
            again.assign(used.begin(), used.end());
            break;
        }
        case msg_type::witness_reply: encode_witness_reply(msg.sequence, msg.subject, msg.state, msg.behind, again); break;
        case msg_type::join: encode_join({msg.epoch, msg.jobs, msg.known}, again); break;
        }
        EXPECT_EQ(again, original);
    }
}

TEST(Wire, ThousandFailuresAmongTwoToTheTwentyFitInFourKilobytes) {
    splitmix64 random(5);
    std::vector<rank_t> spread_evenly, random_spread, clustered;
    for (rank_t i = 0; i < 1000; ++i) spread_evenly.push_back(i * ((1u << 20) / 1000));
    std::set<rank_t> picked;
    while (picked.size() < 1000) picked.insert(static_cast<rank_t>(random.below(1u << 20)));
    random_spread.assign(picked.begin(), picked.end());
    // Worst case for LEB128 gaps: every gap takes at least 2 bytes (>= 128),
    // and as many as still fit in 2^20 take 3 (>= 2^14): 56 of them.
    rank_t rank = 0;
    for (rank_t i = 0; i < 1000; ++i) {
        clustered.push_back(rank);
        rank += i < 56 ? (1u << 14) : 128;
    }
    ASSERT_LT(clustered.back(), 1u << 20);
    for (const auto* list : {&spread_evenly, &random_spread, &clustered}) {
        const std::size_t encoded = a_notice(*list, {}).size();
        EXPECT_LT(encoded, 4096u);
        EXPECT_GT(encoded, 1800u);  // the lists really are in there (about 2 bytes a rank)
        message msg;
        ASSERT_EQ(decode(a_notice(*list, {}), job, msg), status::ok);
        EXPECT_EQ(msg.failed, *list);
    }
}

TEST(Wire, EveryTruncationIsRejected) {
    for (const auto& original : one_of_each()) {
        for (std::size_t length = 0; length < original.size(); ++length) {
            message msg;
            const status got = decode(std::span(original).first(length), job, msg);
            EXPECT_NE(got, status::ok) << "prefix of " << length << " bytes";
        }
    }
}

TEST(Wire, HeaderErrors) {
    message msg;
    auto flipped = a_notice();
    flipped[2] = std::byte{version + 1};
    EXPECT_EQ(decode(flipped, job, msg), status::bad_version);
    auto foreign = a_notice();
    foreign[0] = std::byte{0x67};
    EXPECT_EQ(decode(foreign, job, msg), status::bad_magic);
    for (const int type : {0, 11, 255}) {
        auto unknown = a_notice();
        unknown[3] = std::byte{static_cast<unsigned char>(type)};
        EXPECT_EQ(decode(unknown, job, msg), status::bad_type) << type;
    }
    EXPECT_EQ(decode({}, job, msg), status::truncated);
}

TEST(Wire, TrailingBytesAndOversizeAreRejected) {
    message msg;
    for (auto longer : one_of_each()) {
        longer.push_back(std::byte{0});
        EXPECT_EQ(decode(longer, job, msg), status::trailing_bytes);
    }
    std::vector<rank_t> many;
    for (rank_t i = 0; i < 3000; ++i) many.push_back(i * 300);
    EXPECT_EQ(decode(a_notice(many, {}), job, msg), status::oversize);
    EXPECT_EQ(decode(a_notice(many, {}), {1u << 20, 1u << 20}, msg), status::ok);
}

TEST(Wire, BadLengthsAreRejected) {
    message msg;
    // NEWOBSERVER claiming a 65-byte handle, and one claiming more than it has.
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 2, 65}), job, msg), status::bad_handle_length);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 2, 3, 1, 2}), job, msg), status::truncated);
    // LEAVE: count above the job size; count above the bytes left.
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 4, 0x05}), {4, 4096}, msg), status::rank_out_of_range);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 4, 0xff, 0xff, 0x03}), job, msg), status::truncated);
}

TEST(Wire, BadVarintsAreRejected) {
    message msg;
    // LEAVE with one rank encoded in a non-shortest form (0x81 0x00 = 1).
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 4, 1, 0x81, 0x00}), job, msg), status::bad_varint);
    // Six continuation bytes, and a 5-byte value above 2^32-1.
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 4, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}), job, msg), status::bad_varint);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 4, 0xff, 0xff, 0xff, 0xff, 0x1f}), job, msg), status::bad_varint);
}

TEST(Wire, BadRankListsAreRejected) {
    message msg;
    // LEAVE with ranks 5, 5 (gap 0).
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 4, 2, 5, 0}), job, msg), status::unsorted);
    // A rank at the job size, and a gap that runs past it.
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 4, 1, 8}), {8, 4096}, msg), status::rank_out_of_range);
    EXPECT_EQ(decode(bytes_of({0x66, 0x74, version, 4, 2, 6, 2}), {8, 4096}, msg), status::rank_out_of_range);
    // Notice source out of range, source listed as failed, a rank both failed and departed.
    std::vector<std::byte> out;
    encode_notice({notice_mode::hba, 0, 12, 1, {}, {}}, out);
    EXPECT_EQ(decode(out, {12, 4096}, msg), status::rank_out_of_range);
    const std::vector<rank_t> has_source = {1, 12};
    encode_notice({notice_mode::hba, 0, 12, 1, has_source, {}}, out);
    EXPECT_EQ(decode(out, job, msg), status::overlap);
    const std::vector<rank_t> failed = {1, 4}, departed = {2, 4};
    encode_notice({notice_mode::hba, 0, 12, 1, failed, departed}, out);
    EXPECT_EQ(decode(out, job, msg), status::overlap);
}

TEST(Wire, ANoticeSaysWhichFailuresCrashedAndWhichWereUnreachable) {
    const std::vector<rank_t> failed = {2, 7, 9, 40}, crashed = {7}, unreachable = {2, 40};
    std::vector<std::byte> out;
    encode_notice({notice_mode::bmg, 3, 11, 5, failed, {}, crashed, unreachable}, out);
    message msg;
    ASSERT_EQ(decode(out, job, msg), status::ok);
    EXPECT_EQ(msg.crashed, crashed);
    EXPECT_EQ(msg.unreachable, unreachable);
    // The kinds are disjoint, and each names failed ranks only. The
    // encoder asserts both, so the bad lists are patched into good bytes:
    // the last list is {2, 40} as count 2, gaps 2 and 38.
    ASSERT_EQ(out[out.size() - 3], std::byte{2});
    auto both = out;
    both[both.size() - 2] = std::byte{7};  // {7, 40}: 7 is also crashed
    both[both.size() - 1] = std::byte{33};
    EXPECT_EQ(decode(both, job, msg), status::overlap);
    auto not_failed = out;
    not_failed[not_failed.size() - 2] = std::byte{3};  // {3, 41}
    EXPECT_EQ(decode(not_failed, job, msg), status::not_failed);
}

TEST(Wire, BadModeAndRouteAreRejected) {
    message msg;
    auto bad_mode = a_notice();
    bad_mode[notice_mode_offset] = std::byte{4};
    EXPECT_EQ(decode(bad_mode, job, msg), status::bad_mode);
    auto bad_route = a_notice();
    bad_route[notice_route_offset] = std::byte{route_tag_max + 1};
    EXPECT_EQ(decode(bad_route, job, msg), status::bad_route);
    bad_route[notice_route_offset] = std::byte{route_tag_max};
    EXPECT_EQ(decode(bad_route, job, msg), status::ok);
}

TEST(Wire, EncodingAnUnsortedListIsABug) {
    std::vector<std::byte> out;
    const std::vector<rank_t> unsorted = {4, 2};
    EXPECT_DEATH(encode_leave(unsorted, out), "not strictly increasing");
}

TEST(Wire, EveryStatusIsDescribed) {
    for (int value = 0; value <= static_cast<int>(status::bad_route); ++value) {
        EXPECT_STRNE(describe(static_cast<status>(value)), "?");
    }
}

}  // namespace
}  // namespace btl_ft::wire
