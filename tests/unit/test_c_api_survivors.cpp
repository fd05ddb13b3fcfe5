// The survivor allreduce through its C ABI, as the Open MPI shim drives it:
// the radix rule that MPI_Init reports, a call between processes whose
// messages go through C callbacks, and the one-line description.
#include <gtest/gtest.h>

#include <cmath>

#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "btl_ft/btl_ft_survivors.h"

namespace {

struct mail {
    std::uint32_t from, to;
    std::vector<unsigned char> bytes;
};

struct process {
    std::deque<mail>* post;
    std::uint32_t self;
};

void send_cb(void* context, std::uint32_t peer, const void* bytes, size_t length) {
    auto* p = static_cast<process*>(context);
    const auto* first = static_cast<const unsigned char*>(bytes);
    p->post->push_back({p->self, peer, std::vector<unsigned char>(first, first + length)});
}

void sum_cb(void*, void* into, const void* value, size_t length) {
    std::uint64_t a, b;
    ASSERT_EQ(length, sizeof a);
    std::memcpy(&a, into, sizeof a);
    std::memcpy(&b, value, sizeof b);
    a += b;
    std::memcpy(into, &a, sizeof a);
}

// The machines of one communicator, their messages going through `post`.
struct job {
    job(std::uint32_t size, std::uint32_t radix, size_t fast_max_bytes) : context(size), machine(size) {
        for (std::uint32_t r = 0; r < size; ++r) {
            context[r] = {&post, r};
            const btl_ft_survivors_callbacks_t callbacks{&context[r], send_cb, sum_cb};
            machine[r] = btl_ft_survivors_create(size, r, radix, fast_max_bytes, &callbacks);
        }
    }
    ~job() {
        for (btl_ft_survivors_t* m : machine) btl_ft_survivors_destroy(m);
    }
    job(const job&) = delete;
    job& operator=(const job&) = delete;

    // Every process but `failed` begins a call with 2^rank.
    void begin(std::uint32_t failed = UINT32_MAX) {
        for (std::uint32_t r = 0; r < machine.size(); ++r) {
            const std::uint64_t value = std::uint64_t{1} << r;
            if (r != failed) {
                ASSERT_EQ(btl_ft_survivors_begin(machine[r], &value, sizeof value), 0);
            }
        }
    }
    // Hands every message over, in order, but those to `failed`.
    void deliver(std::uint32_t failed = UINT32_MAX) {
        while (!post.empty()) {
            const mail m = post.front();
            post.pop_front();
            if (m.to != failed) btl_ft_survivors_message(machine[m.to], m.from, m.bytes.data(), m.bytes.size());
        }
    }
    std::uint64_t result(std::uint32_t rank) const {
        std::uint64_t value;
        std::memcpy(&value, btl_ft_survivors_result(machine[rank]), sizeof value);
        return value;
    }

    std::deque<mail> post;
    std::vector<process> context;
    std::vector<btl_ft_survivors_t*> machine;
};

TEST(CApiSurvivors, TheRadixRuleNamesItsBounds) {
    EXPECT_EQ(btl_ft_survivors_radix_problem(BTL_FT_SURVIVORS_DEFAULT_RADIX), nullptr);
    EXPECT_EQ(btl_ft_survivors_radix_problem(2), nullptr);
    EXPECT_EQ(btl_ft_survivors_radix_problem(65536), nullptr);
    ASSERT_NE(btl_ft_survivors_radix_problem(1), nullptr);
    EXPECT_STREQ(btl_ft_survivors_radix_problem(1), "must be 0 (chosen for each communicator) or between 2 and 65536");
    EXPECT_NE(btl_ft_survivors_radix_problem(65537), nullptr);
    std::deque<mail> post;
    process p{&post, 0};
    const btl_ft_survivors_callbacks_t callbacks{&p, send_cb, sum_cb};
    EXPECT_EQ(btl_ft_survivors_create(4, 0, 1, 0, &callbacks), nullptr);
    EXPECT_EQ(btl_ft_survivors_create(4, 4, 2, 0, &callbacks), nullptr);
    // the caller resolves "chosen for each communicator" first
    EXPECT_EQ(btl_ft_survivors_create(4, 0, BTL_FT_SURVIVORS_RADIX_AUTO, 0, &callbacks), nullptr);
}

TEST(CApiSurvivors, TheLatencyRatioRuleNamesItsBounds) {
    EXPECT_EQ(btl_ft_survivors_latency_ratio_problem(BTL_FT_SURVIVORS_DEFAULT_LATENCY_RATIO), nullptr);
    EXPECT_EQ(btl_ft_survivors_latency_ratio_problem(0.01), nullptr);
    EXPECT_EQ(btl_ft_survivors_latency_ratio_problem(10000), nullptr);
    EXPECT_STREQ(btl_ft_survivors_latency_ratio_problem(0), "must be a number from 0.01 to 10000");
    EXPECT_NE(btl_ft_survivors_latency_ratio_problem(-1), nullptr);
    EXPECT_NE(btl_ft_survivors_latency_ratio_problem(std::nan("")), nullptr);
    EXPECT_NE(btl_ft_survivors_latency_ratio_problem(1e9), nullptr);
}

// The model's choice (AllreduceModel tests), through the C ABI: a flat tree
// for small jobs at the seed's ratio, a narrow one where latency is cheap.
TEST(CApiSurvivors, TheBestRadixComesFromTheModel) {
    EXPECT_EQ(btl_ft_survivors_best_radix(8, BTL_FT_SURVIVORS_DEFAULT_LATENCY_RATIO), 7u);
    EXPECT_EQ(btl_ft_survivors_best_radix(65536, BTL_FT_SURVIVORS_DEFAULT_LATENCY_RATIO), 9u);
    EXPECT_LE(btl_ft_survivors_best_radix(65536, 1.0), 4u);
    EXPECT_EQ(btl_ft_survivors_best_radix(1, BTL_FT_SURVIVORS_DEFAULT_LATENCY_RATIO), 2u);
    // an invalid ratio still gives a radix a machine accepts
    EXPECT_EQ(btl_ft_survivors_radix_problem(btl_ft_survivors_best_radix(8, -1.0)), nullptr);
}

// Recursive doubling's log2 n rounds against the tree's three steps: it
// pays where messages are cheap to wait for, not where each hop waits long.
TEST(CApiSurvivors, TheFastPathPaysWhereTheModelSaysSo) {
    EXPECT_EQ(btl_ft_survivors_fast_path_pays(16, 14, BTL_FT_SURVIVORS_DEFAULT_LATENCY_RATIO), 1);
    EXPECT_EQ(btl_ft_survivors_fast_path_pays(4, 3, 100.0), 1);
    EXPECT_EQ(btl_ft_survivors_fast_path_pays(16, 16, 100.0), 0);
    EXPECT_EQ(btl_ft_survivors_fast_path_pays(1, 2, BTL_FT_SURVIVORS_DEFAULT_LATENCY_RATIO), 0);
    EXPECT_EQ(btl_ft_survivors_fast_path_pays(BTL_FT_SURVIVORS_FAST_MAX_SIZE + 1, 8, 1.0), 0);
    EXPECT_EQ(btl_ft_survivors_fast_path_pays(8, 1, 1.0), 0);  // no such radix
}

// Where processes yield: in fewer rounds than the flat tree's three steps.
TEST(CApiSurvivors, WhereProcessesYieldTheFastPathPaysAtTwoAndFour) {
    std::vector<std::uint32_t> pays;
    for (std::uint32_t size = 0; size <= 2 * BTL_FT_SURVIVORS_FAST_MAX_SIZE; ++size) {
        if (btl_ft_survivors_fast_path_pays_yielding(size)) pays.push_back(size);
    }
    EXPECT_EQ(pays, (std::vector<std::uint32_t>{2, 4}));
}

// Five processes, rank 3 failed before the call: the others return the sum
// over {0, 1, 2, 4}, and say so as ranges.
TEST(CApiSurvivors, ACallThroughCallbacksLeavesOutTheFailed) {
    constexpr std::uint32_t size = 5, failed = 3;
    job processes(size, 2, BTL_FT_SURVIVORS_DEFAULT_FAST_MAX_BYTES);
    for (std::uint32_t r = 0; r < size; ++r) {
        ASSERT_NE(processes.machine[r], nullptr);
        EXPECT_EQ(btl_ft_survivors_status(processes.machine[r]), BTL_FT_SURVIVORS_IDLE);
        if (r != failed) btl_ft_survivors_failed(processes.machine[r], &failed, 1);
    }
    processes.begin(failed);
    processes.deliver(failed);
    for (std::uint32_t r = 0; r < size; ++r) {
        if (r == failed) continue;
        ASSERT_EQ(btl_ft_survivors_status(processes.machine[r]), BTL_FT_SURVIVORS_DONE) << r;
        EXPECT_EQ(processes.result(r), 0b10111u);
        std::uint32_t pairs[4] = {};
        ASSERT_EQ(btl_ft_survivors_contributors(processes.machine[r], pairs, 2), 2u);
        EXPECT_EQ(std::vector<std::uint32_t>(pairs, pairs + 4), (std::vector<std::uint32_t>{0, 3, 4, 5}));
    }
    char line[64];
    btl_ft_survivors_describe(processes.machine[1], line, sizeof line);
    EXPECT_EQ(std::string(line).rfind("root 0, successor 2, failed {3}", 0), 0u) << line;
    EXPECT_EQ(std::strlen(line), sizeof line - 1);  // cut to fit, with its NUL
}

// Four processes, nothing failed, a value within the fast path's bound:
// two exchanges each, and nothing else.
TEST(CApiSurvivors, AFailureFreeCallTakesTheFastPath) {
    constexpr std::uint32_t size = 4;
    job processes(size, 2, sizeof(std::uint64_t));
    processes.begin();
    processes.deliver();
    for (std::uint32_t r = 0; r < size; ++r) {
        ASSERT_EQ(btl_ft_survivors_status(processes.machine[r]), BTL_FT_SURVIVORS_DONE) << r;
        EXPECT_EQ(processes.result(r), 0b1111u);
        const btl_ft_survivors_counts_t counts = btl_ft_survivors_counters(processes.machine[r]);
        EXPECT_EQ(counts.exchanges_sent, 2u);
        EXPECT_EQ(counts.fast_done, 1u);
        EXPECT_EQ(counts.partials_sent + counts.results_sent + counts.holds_sent, 0u);
    }
}

// The peer to receive from: the round's partner on the fast path, with
// room for any message of an 8-byte value; on the tree, any peer for the
// root combining partials and the root for its successor, which waits
// for the decision; nobody once the call is done.
TEST(CApiSurvivors, TheAwaitedPeerIsTheRoundsPartnerOrTheResultsSender) {
    job fast(4, 2, sizeof(std::uint64_t));
    fast.begin();
    size_t max_bytes = 0;
    EXPECT_EQ(btl_ft_survivors_awaited(fast.machine[1], &max_bytes), 0u);
    EXPECT_GE(max_bytes, sizeof(std::uint64_t) + 4);
    fast.deliver();
    EXPECT_EQ(btl_ft_survivors_awaited(fast.machine[1], &max_bytes), BTL_FT_SURVIVORS_ANY_PEER);
    job tree(4, 2, 0);
    tree.begin();
    EXPECT_EQ(btl_ft_survivors_awaited(tree.machine[0], &max_bytes), BTL_FT_SURVIVORS_ANY_PEER);
    EXPECT_EQ(btl_ft_survivors_awaited(tree.machine[1], &max_bytes), 0u);
}

// The bound set between calls, as the shim sets the one its processes
// agreed on: the tree before, the fast path after; refused during a call.
TEST(CApiSurvivors, TheFastPathsBoundIsSetBetweenCalls) {
    constexpr std::uint32_t size = 4;
    job processes(size, 2, 0);
    processes.begin();
    EXPECT_EQ(btl_ft_survivors_set_fast_max_bytes(processes.machine[2], sizeof(std::uint64_t)), -1);
    processes.deliver();
    for (btl_ft_survivors_t* m : processes.machine) {
        ASSERT_EQ(btl_ft_survivors_status(m), BTL_FT_SURVIVORS_DONE);
        EXPECT_EQ(btl_ft_survivors_counters(m).exchanges_sent, 0u);
        EXPECT_EQ(btl_ft_survivors_set_fast_max_bytes(m, sizeof(std::uint64_t)), 0);
    }
    processes.begin();
    processes.deliver();
    for (std::uint32_t r = 0; r < size; ++r) {
        ASSERT_EQ(btl_ft_survivors_status(processes.machine[r]), BTL_FT_SURVIVORS_DONE) << r;
        EXPECT_EQ(processes.result(r), 0b1111u);
        EXPECT_EQ(btl_ft_survivors_counters(processes.machine[r]).fast_done, 1u);
    }
}

}  // namespace
