// The hot paths allocate nothing in their steady state: the detector's
// heartbeats (ticks that emit words, words read from the flag, heartbeats
// carried as active messages), and the survivor allreduce's calls in a
// row while nothing fails. Counted with a replacement operator new that is
// armed only around the steady-state loop.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "btl_ft/dead_set.hpp"
#include "btl_ft/detector.hpp"
#include "btl_ft/ring.hpp"
#include "btl_ft/survivor_allreduce.hpp"
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

// Processes of one survivor allreduce, delivering in order from storage
// reserved up front, so that only the machines could allocate.
class allreduce_loopback {
public:
    allreduce_loopback(rank_t size, std::uint32_t radix, std::size_t fast_max_bytes) {
        outboxes_.reserve(size);
        machines_.reserve(size);
        queue_.reserve(4096);
        for (rank_t self = 0; self < size; ++self) {
            outboxes_.push_back(std::make_unique<outbox>(*this, self));
            machines_.push_back(std::make_unique<survivor_allreduce>(
                allreduce_config{.size = size, .self = self, .radix = radix, .fast_max_bytes = fast_max_bytes},
                *outboxes_.back(), sum_));
        }
    }

    // One call of every process, each adding its rank plus one: true when
    // every one returned (size)(size + 1)/2.
    bool call() {
        for (rank_t self = 0; self < machines_.size(); ++self) {
            const double value = self + 1.0;
            machines_[self]->begin(std::as_bytes(std::span(&value, 1)));
        }
        for (std::size_t next = 0; next < queue_.size(); ++next) {
            const message& m = queue_[next];
            machines_[m.to]->on_message(m.from, std::span(m.bytes.data(), m.length));
        }
        queue_.clear();
        const double size = static_cast<double>(machines_.size());
        for (const auto& machine : machines_) {
            double result = 0;
            if (machine->status() != allreduce_status::done) return false;
            std::memcpy(&result, machine->result().data(), sizeof(result));
            if (result != size * (size + 1) / 2) return false;
        }
        return true;
    }

private:
    struct message {
        rank_t from, to;
        std::size_t length;
        std::array<std::byte, 128> bytes;
    };
    struct outbox final : collective_transport {
        outbox(allreduce_loopback& to, rank_t from) : net(to), self(from) {}
        void send(rank_t peer, std::span<const std::byte> bytes) override {
            ASSERT_LE(bytes.size(), sizeof(message::bytes));
            ASSERT_LT(net.queue_.size(), net.queue_.capacity());  // no growth: it would count
            message& m = net.queue_.emplace_back();
            m.from = self;
            m.to = peer;
            m.length = bytes.size();
            std::memcpy(m.bytes.data(), bytes.data(), bytes.size());
        }
        allreduce_loopback& net;
        rank_t self;
    };
    struct sum final : reduce_operation {
        void combine(std::span<std::byte> into, std::span<const std::byte> value) const override {
            double a = 0, b = 0;
            std::memcpy(&a, into.data(), sizeof(a));
            std::memcpy(&b, value.data(), sizeof(b));
            a += b;
            std::memcpy(into.data(), &a, sizeof(a));
        }
    };
    sum sum_;
    std::vector<std::unique_ptr<outbox>> outboxes_;
    std::vector<std::unique_ptr<survivor_allreduce>> machines_;
    std::vector<message> queue_;
};

// The flat tree, a tree of two levels, recursive doubling with ranks
// folded in, and 2 ranks on the fast path: after two calls have given
// each machine's two call states their storage.
TEST(SurvivorAllreduceCalls, InARowAllocateNothing) {
    struct setup {
        rank_t size;
        std::uint32_t radix;
        std::size_t fast_max_bytes;
    };
    for (const setup& s : {setup{8, 8, 0}, setup{16, 4, 0}, setup{6, 6, 512}, setup{2, 2, 512}}) {
        allreduce_loopback processes(s.size, s.radix, s.fast_max_bytes);
        for (int warm = 0; warm < 3; ++warm) ASSERT_TRUE(processes.call());
        allocations = 0;
        counting = true;
        bool all_right = true;
        for (int call = 0; call < 100; ++call) all_right = processes.call() && all_right;
        counting = false;
        EXPECT_TRUE(all_right) << "size " << s.size << " radix " << s.radix;
        EXPECT_EQ(allocations, 0u) << "size " << s.size << " radix " << s.radix << " fast path up to "
                                   << s.fast_max_bytes << " bytes";
    }
}

}  // namespace
}  // namespace btl_ft
