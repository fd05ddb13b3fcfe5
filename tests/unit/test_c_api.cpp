// The C ABI: configuration errors name the field, words parse, two
// detectors wired through C callbacks detect a failure end to end, and an
// exception inside the core becomes an error code, never an unwind into C.
#include <gtest/gtest.h>

#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "btl_ft/btl_ft.h"

extern "C" int btl_ft_c_header_check(void);

namespace {

struct mailbox {
    struct letter {
        uint32_t to;
        std::vector<unsigned char> bytes;
    };
    uint32_t self = 0;
    std::vector<letter> outbox;
    std::vector<std::pair<uint32_t, uint64_t>> words;
    std::vector<uint32_t> failed;
    bool declared = false;
};

btl_ft_callbacks_t callbacks_for(mailbox& box) {
    btl_ft_callbacks_t callbacks{};
    callbacks.context = &box;
    callbacks.put_heartbeat = [](void* context, uint32_t observer, uint64_t word) {
        static_cast<mailbox*>(context)->words.emplace_back(observer, word);
        return 0;
    };
    callbacks.send = [](void* context, uint32_t peer, const void* bytes, size_t length) {
        const auto* begin = static_cast<const unsigned char*>(bytes);
        static_cast<mailbox*>(context)->outbox.push_back({peer, {begin, begin + length}});
    };
    callbacks.failed = [](void* context, const uint32_t* ranks, size_t count) {
        auto& target = *static_cast<mailbox*>(context);
        target.failed.insert(target.failed.end(), ranks, ranks + count);
    };
    callbacks.declared_dead_self = [](void* context, uint32_t, const char*) {
        static_cast<mailbox*>(context)->declared = true;
    };
    return callbacks;
}

uint64_t confirmations_of(const btl_ft_detector_t* detector) {
    btl_ft_stats_t stats{};
    btl_ft_get_stats(detector, &stats);
    return stats.confirmations;
}

btl_ft_config_t valid_config(uint32_t size, uint32_t self) {
    btl_ft_config_t config{};
    config.size = size;
    config.self = self;
    config.period_ns = 10'000'000;
    config.timeout_ns = 50'000'000;
    config.ring_order = BTL_FT_RING_RANK;
    config.propagator = BTL_FT_PROPAGATOR_HBA;
    return config;
}

// Creation must fail with a message that names `field`.
void expect_rejected(const btl_ft_config_t& config, const char* field) {
    mailbox box;
    const btl_ft_callbacks_t callbacks = callbacks_for(box);
    btl_ft_detector_t* detector = nullptr;
    char error[256] = "untouched";
    EXPECT_EQ(btl_ft_create(&config, &callbacks, &detector, error, sizeof error), -1) << field;
    EXPECT_EQ(detector, nullptr);
    EXPECT_NE(std::strstr(error, field), nullptr) << "message: " << error;
    EXPECT_TRUE(std::string(error).starts_with("btl_ft: invalid detector configuration: ")) << error;
}

TEST(CApi, ErrorsNameTheField) {
    auto config = valid_config(4, 1);
    config.size = 0;
    expect_rejected(config, "config.size (0)");
    config = valid_config(4, 4);
    expect_rejected(config, "config.self (4) must be below size");
    config = valid_config(4, 1);
    config.period_ns = 0;
    expect_rejected(config, "config.period_ns");
    config = valid_config(4, 1);
    config.timeout_ns = config.period_ns;
    expect_rejected(config, "config.timeout_ns (10000000) must be larger than the period");
    config = valid_config(4, 1);
    config.start_skew_ns = -1;
    expect_rejected(config, "config.start_skew_ns");
    config = valid_config(4, 1);
    config.ring_order = 3;
    expect_rejected(config, "config.ring_order (3) must be one of rank|node|shuffle");
    config = valid_config(4, 1);
    config.propagator = -1;
    expect_rejected(config, "config.propagator (-1) must be one of hba|bmg|chord");
    config = valid_config(4, 1);
    const unsigned char handle[65] = {};
    config.flag_handle = handle;
    config.flag_handle_length = 65;
    expect_rejected(config, "config.flag_handle_length (65) must be at most 64");
    config.flag_handle = nullptr;
    config.flag_handle_length = 8;
    expect_rejected(config, "config.flag_handle_length (8) needs a flag_handle, which is NULL");
    config = valid_config(4, 1);
    config.max_message_bytes = 100;
    expect_rejected(config, "config.max_message_bytes (100)");
    config = valid_config(4, 1);
    config.probe_width = 9;  // 0 means the core's default; 1..8 are taken as given
    expect_rejected(config, "probe_width (9) must be in [1, 8]");
}

TEST(CApi, MissingCallbacksAreNamed) {
    mailbox box;
    btl_ft_callbacks_t callbacks = callbacks_for(box);
    callbacks.send = nullptr;
    const auto config = valid_config(4, 1);
    btl_ft_detector_t* detector = nullptr;
    char error[128];
    EXPECT_EQ(btl_ft_create(&config, &callbacks, &detector, error, sizeof error), -1);
    EXPECT_NE(std::strstr(error, "callbacks.send is NULL"), nullptr) << error;
    EXPECT_EQ(btl_ft_create(nullptr, &callbacks, &detector, error, sizeof error), -1);
    EXPECT_NE(std::strstr(error, "config is NULL"), nullptr) << error;
    // A tiny error buffer is truncated, not overrun.
    char tiny[8];
    EXPECT_EQ(btl_ft_create(nullptr, &callbacks, &detector, tiny, sizeof tiny), -1);
    EXPECT_EQ(std::strlen(tiny), 7u);
}

TEST(CApi, ParsesWords) {
    int value = -1;
    EXPECT_EQ(btl_ft_parse_ring_order("node", &value), 0);
    EXPECT_EQ(value, BTL_FT_RING_NODE);
    EXPECT_EQ(btl_ft_parse_ring_order("shuffle", &value), 0);
    EXPECT_EQ(value, BTL_FT_RING_SHUFFLE);
    EXPECT_EQ(btl_ft_parse_ring_order("Node", &value), -1);
    EXPECT_EQ(btl_ft_parse_propagator("bmg", &value), 0);
    EXPECT_EQ(value, BTL_FT_PROPAGATOR_BMG);
    EXPECT_EQ(btl_ft_parse_propagator("gossip", &value), -1);
    EXPECT_EQ(btl_ft_parse_propagator(nullptr, &value), -1);
    EXPECT_STREQ(btl_ft_ring_order_words, "rank|node|shuffle");
    EXPECT_STREQ(btl_ft_propagator_words, "hba|bmg|chord");
    EXPECT_EQ(btl_ft_parse_hierarchy("node", &value), 0);
    EXPECT_EQ(value, BTL_FT_HIERARCHY_NODE);
    EXPECT_EQ(btl_ft_parse_hierarchy("tree", &value), -1);
    EXPECT_STREQ(btl_ft_hierarchy_words, "flat|node");
    EXPECT_STREQ(btl_ft_hierarchy_name(BTL_FT_DEFAULT_HIERARCHY), "node");
    EXPECT_EQ(btl_ft_hierarchy_name(2), nullptr);
}

// Two levels through the C ABI: an unknown value is named; with nodes, or
// without (one node), the detector is made.
TEST(CApi, TheHierarchyIsCheckedAndBuilt) {
    auto config = valid_config(4, 1);
    config.hierarchy = 7;
    expect_rejected(config, "config.hierarchy (7) must be one of flat|node");
    char rule[128];
    EXPECT_EQ(btl_ft_config_problem(&config, rule, sizeof rule), BTL_FT_FIELD_HIERARCHY);
    EXPECT_STREQ(btl_ft_config_field_name(BTL_FT_FIELD_HIERARCHY), "hierarchy");
    mailbox box;
    const btl_ft_callbacks_t callbacks = callbacks_for(box);
    const uint32_t nodes[] = {5, 5, 9, 9};
    for (const uint32_t* node_of_rank : {static_cast<const uint32_t*>(nullptr), nodes}) {
        config = valid_config(4, 1);
        config.hierarchy = BTL_FT_HIERARCHY_NODE;
        config.node_of_rank = node_of_rank;
        btl_ft_detector_t* detector = nullptr;
        char error[256];
        ASSERT_EQ(btl_ft_create(&config, &callbacks, &detector, error, sizeof error), 0) << error;
        btl_ft_destroy(detector);
    }
}

TEST(CApi, NamesWordsBack) {
    for (int order : {BTL_FT_RING_RANK, BTL_FT_RING_NODE, BTL_FT_RING_SHUFFLE}) {
        int parsed = -1;
        ASSERT_NE(btl_ft_ring_order_name(order), nullptr);
        EXPECT_EQ(btl_ft_parse_ring_order(btl_ft_ring_order_name(order), &parsed), 0);
        EXPECT_EQ(parsed, order);
    }
    EXPECT_STREQ(btl_ft_propagator_name(BTL_FT_DEFAULT_PROPAGATOR), "hba");
    EXPECT_STREQ(btl_ft_ring_order_name(BTL_FT_DEFAULT_RING_ORDER), "node");
    EXPECT_EQ(btl_ft_ring_order_name(3), nullptr);
    EXPECT_EQ(btl_ft_propagator_name(-1), nullptr);
}

// What the shim reports under the MCA variable's name: the member, by id,
// and the rule, the same verdict btl_ft_create() reaches.
TEST(CApi, ConfigProblemNamesTheMemberAndTheRule) {
    char rule[128] = "untouched";
    auto config = valid_config(4, 1);
    EXPECT_EQ(btl_ft_config_problem(&config, rule, sizeof rule), BTL_FT_FIELD_NONE);
    config.timeout_ns = config.period_ns;
    EXPECT_EQ(btl_ft_config_problem(&config, rule, sizeof rule), BTL_FT_FIELD_TIMEOUT_NS);
    EXPECT_STREQ(rule, "must be larger than the period");
    config = valid_config(4, 1);
    config.period_ns = -5;
    EXPECT_EQ(btl_ft_config_problem(&config, rule, sizeof rule), BTL_FT_FIELD_PERIOD_NS);
    EXPECT_STREQ(rule, "must be positive");
    config = valid_config(4, 1);
    config.probe_width = 9;
    EXPECT_EQ(btl_ft_config_problem(&config, rule, sizeof rule), BTL_FT_FIELD_PROBE_WIDTH);
    EXPECT_STREQ(rule, "must be in [1, 8]");
    config = valid_config(4, 1);
    config.node_grace_ns = -1;
    EXPECT_EQ(btl_ft_config_problem(&config, rule, sizeof rule), BTL_FT_FIELD_NODE_GRACE_NS);
    config = valid_config(4, 1);
    config.ring_order = 7;
    EXPECT_EQ(btl_ft_config_problem(&config, rule, sizeof rule), BTL_FT_FIELD_RING_ORDER);
    EXPECT_EQ(btl_ft_config_problem(nullptr, rule, sizeof rule), BTL_FT_FIELD_CONFIG);
    EXPECT_STREQ(rule, "is NULL");
}

// Every field id has a name, the one btl_ft_create()'s message uses.
TEST(CApi, EveryConfigFieldHasItsMemberName) {
    EXPECT_STREQ(btl_ft_config_field_name(BTL_FT_FIELD_TIMEOUT_NS), "timeout_ns");
    EXPECT_STREQ(btl_ft_config_field_name(BTL_FT_FIELD_NODE_GRACE_NS), "node_grace_ns");
    EXPECT_STREQ(btl_ft_config_field_name(BTL_FT_FIELD_START_SKEW_NS), "start_skew_ns");
    for (int field = BTL_FT_FIELD_NONE; field < BTL_FT_FIELD_COUNT; ++field) {
        ASSERT_NE(btl_ft_config_field_name(field), nullptr) << field;
        EXPECT_STRNE(btl_ft_config_field_name(field), "?") << field;
    }
    EXPECT_EQ(btl_ft_config_field_name(BTL_FT_FIELD_COUNT), nullptr);
}

// The first heartbeat is due after the 2 timeouts of a new link plus the
// start skew.
TEST(CApi, TheFirstHeartbeatIsDueAfterTwoTimeoutsAndTheStartSkew) {
    for (int64_t skew : {int64_t{0}, int64_t{300'000'000}}) {
        mailbox box;
        const auto callbacks = callbacks_for(box);
        auto config = valid_config(2, 0);
        config.start_skew_ns = skew;
        btl_ft_detector_t* detector = nullptr;
        char error[128];
        ASSERT_EQ(btl_ft_create(&config, &callbacks, &detector, error, sizeof error), 0) << error;
        ASSERT_EQ(btl_ft_start(detector, 1000), 0);
        const int64_t due = 1000 + 2 * config.timeout_ns + skew;
        // the silent emitter is first probed (a confirmation) only one
        // confirmation window before `due`, and declared only at `due`
        const int64_t window = config.timeout_ns / 5;
        for (int64_t now = 1000; now < due - window; now += config.period_ns / 4) {
            btl_ft_tick(detector, now);
        }
        EXPECT_EQ(confirmations_of(detector), 0u) << skew;
        btl_ft_tick(detector, due - window);
        EXPECT_EQ(confirmations_of(detector), 1u) << skew;
        btl_ft_tick(detector, due - 1);
        EXPECT_TRUE(box.failed.empty()) << skew;
        btl_ft_tick(detector, due);
        EXPECT_EQ(box.failed, std::vector<uint32_t>{1}) << skew;
        btl_ft_destroy(detector);
    }
}

TEST(CApi, HeaderCompilesAsC) { EXPECT_EQ(btl_ft_c_header_check(), 0); }

TEST(CApi, TwoDetectorsDetectAFailureThroughCallbacks) {
    mailbox boxes[3];
    btl_ft_detector_t* detectors[3] = {};
    const uint32_t nodes[3] = {0, 1, 0};
    for (uint32_t rank = 0; rank < 3; ++rank) {
        boxes[rank].self = rank;
        auto config = valid_config(3, rank);
        config.ring_order = BTL_FT_RING_NODE;
        config.node_of_rank = nodes;
        const auto callbacks = callbacks_for(boxes[rank]);
        char error[128];
        ASSERT_EQ(btl_ft_create(&config, &callbacks, &detectors[rank], error, sizeof error), 0) << error;
        btl_ft_start(detectors[rank], 0);
    }
    // Deliver words and messages by hand, for 2 and 0 only: 1 is dead from
    // the start (it never gets to run).
    const auto pump = [&](int64_t now) {
        for (const uint32_t rank : {0u, 2u}) {
            btl_ft_tick(detectors[rank], now);
            for (const auto& [observer, word] : boxes[rank].words) {
                if (observer != 1) btl_ft_on_heartbeat_word(detectors[observer], now, word);
            }
            boxes[rank].words.clear();
            for (const auto& letter : boxes[rank].outbox) {
                if (letter.to != 1) btl_ft_on_message(detectors[letter.to], now, rank, letter.bytes.data(), letter.bytes.size());
            }
            boxes[rank].outbox.clear();
        }
    };
    for (int64_t now = 0; now <= 400'000'000; now += 1'000'000) pump(now);
    EXPECT_EQ(boxes[0].failed, std::vector<uint32_t>{1});
    EXPECT_EQ(boxes[2].failed, std::vector<uint32_t>{1});
    EXPECT_EQ(btl_ft_is_dead(detectors[0], 1), 1);
    EXPECT_EQ(btl_ft_is_dead(detectors[0], 2), 0);
    // found by silence: a hang, as both survivors know it; a live rank has no kind
    EXPECT_EQ(btl_ft_failure_kind(detectors[0], 1), BTL_FT_HUNG);
    EXPECT_EQ(btl_ft_failure_kind(detectors[2], 1), BTL_FT_HUNG);
    EXPECT_EQ(btl_ft_failure_kind(detectors[0], 2), 0);
    // the runtime's word that it ended makes it a crash
    EXPECT_EQ(btl_ft_report_failure(detectors[0], 400'000'000, 1, BTL_FT_CRASHED), 0);
    EXPECT_EQ(btl_ft_failure_kind(detectors[0], 1), BTL_FT_CRASHED);
    EXPECT_EQ(btl_ft_emitter(detectors[0]), btl_ft_observer(detectors[0]));
    btl_ft_stats_t stats{};
    btl_ft_get_stats(detectors[0], &stats);
    EXPECT_GT(stats.heartbeats_sent, 30u);
    btl_ft_get_stats(detectors[2], &stats);
    std::uint64_t suspicions = stats.suspicions;
    btl_ft_get_stats(detectors[0], &stats);
    EXPECT_EQ(suspicions + stats.suspicions, 1u);  // exactly one observer suspected 1
    EXPECT_EQ(stats.malformed_dropped, 0u);
    // The bad-message path of the C ABI.
    const unsigned char junk[3] = {1, 2, 3};
    EXPECT_EQ(btl_ft_on_message(detectors[0], 400'000'000, 2, junk, sizeof junk), -1);
    for (auto* detector : detectors) btl_ft_destroy(detector);
}

// Known failures start dead, keep their kind and are never reported again;
// a bad one is named like any other field.
TEST(CApi, KnownFailuresStartDeadAndAreNotReportedAgain) {
    mailbox box;
    const auto callbacks = callbacks_for(box);
    const btl_ft_known_failure_t known[] = {{1, BTL_FT_CRASHED}, {3, BTL_FT_HUNG}};
    auto config = valid_config(4, 0);
    config.known_failures = known;
    config.known_failure_count = 2;
    btl_ft_detector_t* detector = nullptr;
    char error[128];
    ASSERT_EQ(btl_ft_create(&config, &callbacks, &detector, error, sizeof error), 0) << error;
    EXPECT_EQ(btl_ft_failure_kind(detector, 1), BTL_FT_CRASHED);
    EXPECT_EQ(btl_ft_failure_kind(detector, 3), BTL_FT_HUNG);
    EXPECT_EQ(btl_ft_failure_kind(detector, 2), 0);
    EXPECT_EQ(btl_ft_emitter(detector), 2u);  // 3, its predecessor, is known dead
    ASSERT_EQ(btl_ft_start(detector, 0), 0);
    btl_ft_report_failure(detector, 1, 3, BTL_FT_UNREACHABLE);
    EXPECT_TRUE(box.failed.empty());
    btl_ft_destroy(detector);

    const btl_ft_known_failure_t of_self[] = {{0, BTL_FT_HUNG}};
    config.known_failures = of_self;
    config.known_failure_count = 1;
    expect_rejected(config, "known_failures");
    const btl_ft_known_failure_t beyond[] = {{4, BTL_FT_HUNG}};
    config.known_failures = beyond;
    expect_rejected(config, "known_failures");
    const btl_ft_known_failure_t no_kind[] = {{2, 0}};
    config.known_failures = no_kind;
    expect_rejected(config, "known_failures");
    config.known_failures = nullptr;
    expect_rejected(config, "known_failures");
}

TEST(CApi, AMembershipNumbersTheUnionByJoiningEpochThenJobThenRank) {
    const btl_ft_job_extent_t jobs[] = {{9, 2, 7}, {4, 3, 0}, {9, 2, 8}};
    btl_ft_membership_t* membership = btl_ft_membership_create(jobs, 3);
    ASSERT_NE(membership, nullptr);
    EXPECT_EQ(btl_ft_membership_epoch(membership), 7u);
    EXPECT_EQ(btl_ft_membership_size(membership), 5u);
    ASSERT_EQ(btl_ft_membership_job_count(membership), 2u);
    EXPECT_EQ(btl_ft_membership_job_at(membership, 0).job, 4u);
    EXPECT_EQ(btl_ft_membership_job_at(membership, 1).size, 2u);
    EXPECT_EQ(btl_ft_membership_job_at(membership, 1).since, 7u);
    uint32_t rank = 99, job = 99, job_rank = 99;
    ASSERT_EQ(btl_ft_membership_rank_of(membership, 9, 1, &rank), 0);
    EXPECT_EQ(rank, 4u);
    EXPECT_EQ(btl_ft_membership_rank_of(membership, 9, 2, &rank), -1);
    EXPECT_EQ(btl_ft_membership_rank_of(membership, 5, 0, &rank), -1);
    ASSERT_EQ(btl_ft_membership_member_at(membership, 2, &job, &job_rank), 0);
    EXPECT_EQ(job, 4u);
    EXPECT_EQ(job_rank, 2u);
    EXPECT_EQ(btl_ft_membership_member_at(membership, 5, &job, &job_rank), -1);
    btl_ft_membership_destroy(membership);

    const btl_ft_job_extent_t empty_job[] = {{1, 0, 0}};
    EXPECT_EQ(btl_ft_membership_create(empty_job, 1), nullptr);
    EXPECT_EQ(btl_ft_membership_create(jobs, 0), nullptr);
    const btl_ft_job_extent_t too_many[] = {{1, 0x80000000u, 0}, {2, 0x80000000u, 1}};
    EXPECT_EQ(btl_ft_membership_create(too_many, 2), nullptr);
}

// Two unions made at once from one job, as the shim merges them.
TEST(CApi, TwoUnionsOfOneEpochMergeAlikeAndTellWhatToDo) {
    const btl_ft_job_extent_t a_jobs[] = {{1, 4, 0}, {3, 1, 1}}, b_jobs[] = {{1, 4, 0}, {2, 2, 1}};
    btl_ft_membership_t* a = btl_ft_membership_create(a_jobs, 2);
    btl_ft_membership_t* b = btl_ft_membership_create(b_jobs, 2);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_NE(btl_ft_membership_identity(a), btl_ft_membership_identity(b));
    EXPECT_EQ(btl_ft_membership_verdict(a, b), BTL_FT_JOIN_MERGE);
    btl_ft_membership_t* ab = btl_ft_membership_merged(a, b);
    btl_ft_membership_t* ba = btl_ft_membership_merged(b, a);
    ASSERT_NE(ab, nullptr);
    ASSERT_NE(ba, nullptr);
    EXPECT_EQ(btl_ft_membership_identity(ab), btl_ft_membership_identity(ba));
    EXPECT_EQ(btl_ft_membership_size(ab), 7u);
    uint32_t rank = 99;
    ASSERT_EQ(btl_ft_membership_rank_of(ab, 3, 0, &rank), 0);
    EXPECT_EQ(rank, 6u);  // job 3 moved past job 2
    EXPECT_EQ(btl_ft_membership_verdict(a, ab), BTL_FT_JOIN_FOLLOW);
    EXPECT_EQ(btl_ft_membership_verdict(ab, b), BTL_FT_JOIN_STALE);
    for (btl_ft_membership_t* one : {a, b, ab, ba}) {
        btl_ft_membership_destroy(one);
    }
}

// Stands for the core running out of memory mid-call: the exception is
// thrown below the C ABI (in a callback the core calls) and must stop there.
TEST(CApi, AnExceptionInsideTheCoreBecomesBrokenAndStaysSo) {
    mailbox box;
    btl_ft_callbacks_t callbacks = callbacks_for(box);
    callbacks.put_heartbeat = [](void*, uint32_t, uint64_t) -> int { throw std::bad_alloc(); };
    const auto config = valid_config(4, 1);
    btl_ft_detector_t* detector = nullptr;
    char error[128];
    ASSERT_EQ(btl_ft_create(&config, &callbacks, &detector, error, sizeof error), 0) << error;
    EXPECT_EQ(btl_ft_failure(detector), nullptr);
    const int started = btl_ft_start(detector, 0);
    const int64_t next = btl_ft_tick(detector, 20'000'000);
    // the first heartbeat is put by start or by the first tick
    EXPECT_TRUE(started == BTL_FT_BROKEN || next == BTL_FT_BROKEN) << started << " " << next;
    ASSERT_NE(btl_ft_failure(detector), nullptr);
    EXPECT_NE(std::strstr(btl_ft_failure(detector), "bad_alloc"), nullptr) << btl_ft_failure(detector);
    // inert from then on: no call reaches the core again
    EXPECT_EQ(btl_ft_tick(detector, 40'000'000), BTL_FT_BROKEN);
    EXPECT_EQ(btl_ft_on_heartbeat_word(detector, 40'000'000, 7), BTL_FT_BROKEN);
    const unsigned char junk[3] = {1, 2, 3};
    EXPECT_EQ(btl_ft_on_message(detector, 40'000'000, 2, junk, sizeof junk), BTL_FT_BROKEN);
    EXPECT_EQ(btl_ft_report_failure(detector, 40'000'000, 2, BTL_FT_CRASHED), BTL_FT_BROKEN);
    EXPECT_EQ(btl_ft_leave(detector, 40'000'000, nullptr, 0), BTL_FT_BROKEN);
    btl_ft_stats_t stats{};
    btl_ft_get_stats(detector, &stats);
    EXPECT_EQ(stats.malformed_dropped, 0u);  // the junk never reached the core
    btl_ft_destroy(detector);
}

// The caller's clock must never go back (the shim reads it under its core
// lock); a call that breaks this stops the process rather than corrupting
// the deadlines.
TEST(CApiDeathTest, AClockThatGoesBackIsACallerBug) {
    mailbox box;
    const btl_ft_callbacks_t callbacks = callbacks_for(box);
    const auto config = valid_config(4, 1);
    btl_ft_detector_t* detector = nullptr;
    char error[128];
    ASSERT_EQ(btl_ft_create(&config, &callbacks, &detector, error, sizeof error), 0) << error;
    ASSERT_EQ(btl_ft_start(detector, 0), 0);
    btl_ft_tick(detector, 20'000'000);
    btl_ft_tick(detector, 20'000'000);  // the same instant twice is fine
    EXPECT_DEATH(btl_ft_tick(detector, 19'999'999), "clock went backwards");
    btl_ft_destroy(detector);
}

}  // namespace
