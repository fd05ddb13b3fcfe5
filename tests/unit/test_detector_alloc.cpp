// The heartbeat path allocates nothing: ticks that emit words, words read
// from the flag, and heartbeats carried as active messages. Counted with a
// replacement operator new that is armed only around the steady-state loop.
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

#include "btl_ft/dead_set.hpp"
#include "btl_ft/detector.hpp"
#include "btl_ft/ring.hpp"
#include "btl_ft/wire.hpp"

namespace {
bool counting = false;
std::size_t allocations = 0;
}  // namespace

void* operator new(std::size_t size) {
    if (counting) ++allocations;
    if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
    throw std::bad_alloc();
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }

namespace btl_ft {
namespace {

// Counts, never stores: a transport that allocated would hide the result.
struct counting_io final : transport, sink {
    std::size_t words = 0;
    std::size_t messages = 0;
    bool put_heartbeat(rank_t, std::uint64_t) override {
        ++words;
        return true;
    }
    void send(rank_t, std::span<const std::byte>) override { ++messages; }
    void on_failed(std::span<const rank_t>) override {}
    void on_declared_dead_self(rank_t, const char*) override {}
};

TEST(HeartbeatPath, AllocatesNothing) {
    counting_io io;
    const detector_config config = make_config(1024, 10, 1000, 5000);
    detector core(config, ring::make_flat(ring_order::rank, 1024, 0), io, io);
    core.start(0);
    counting = true;
    for (std::uint32_t period = 1; period <= 10000; ++period) {
        const time_ns now = period * config.period_ns;
        core.tick(now);
        core.on_heartbeat_word(now, heartbeat_word(9, period));
        core.on_heartbeat_word(now, heartbeat_word(4, period));  // stale
        const auto carried = wire::encode_heartbeat(heartbeat_word(9, period + 1));
        core.on_message(now, 9, carried);
    }
    counting = false;
    EXPECT_EQ(allocations, 0u);
    EXPECT_EQ(io.words, 10001u);
    EXPECT_EQ(io.messages, 0u);
    EXPECT_EQ(core.stats().suspicions, 0u);
    EXPECT_EQ(core.stats().stale_heartbeats, 10000u);
    // The counter works: a notice does allocate.
    counting = true;
    core.report_failure(20000 * config.period_ns, 500);
    counting = false;
    EXPECT_GT(allocations, 0u);
}

}  // namespace
}  // namespace btl_ft
