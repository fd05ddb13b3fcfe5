// survivor_allreduce::awaited(): while a call waits for one peer alone the
// shim posts a receive for that peer, as a collective does, and leaves the
// other peers' messages queued in the PML. These tests hold the machine to
// what that needs: taking messages from the awaited peer alone when there
// is one (from any peer otherwise), in the order each peer sent them,
// every call completes; no message is longer than the bound awaited()
// gives; and after a failure it names no peer.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "btl_ft/survivor_allreduce.hpp"

namespace btl_ft {
namespace {

constexpr std::size_t fast_bytes = 512;

// Per-pair FIFOs, as the PML keeps messages of one sender under one tag.
class fifo_processes {
public:
    fifo_processes(rank_t size, std::uint32_t radix, std::size_t fast_max_bytes)
        : size_(size), queues_(std::size_t{size} * size) {
        for (rank_t self = 0; self < size; ++self) {
            outboxes_.push_back(std::make_unique<outbox>(*this, self));
            machines_.push_back(std::make_unique<survivor_allreduce>(
                allreduce_config{.size = size, .self = self, .radix = radix, .fast_max_bytes = fast_max_bytes},
                *outboxes_.back(), sum_));
        }
    }

    survivor_allreduce& process(rank_t rank) { return *machines_[rank]; }

    // Calls in a row, of `lengths[i]` doubles each, every process beginning
    // its next call as soon as it returned and taking a message only from
    // the peer it awaits, when it awaits one (from the first peer with a
    // message otherwise). False (with a test failure) if a process on the
    // fast path awaits no single peer, a message passes the bound, a
    // result is wrong, or the calls stall. `awaited_takes` counts the
    // messages taken from an awaited peer.
    bool run(const std::vector<std::size_t>& lengths) {
        std::vector<std::size_t> begun(size_, 0);
        for (bool moved = true; moved;) {
            moved = false;
            for (rank_t r = 0; r < size_; ++r) {
                survivor_allreduce& machine = *machines_[r];
                if (machine.status() != allreduce_status::running) {
                    if (begun[r] > 0 && !right_result(r, lengths[begun[r] - 1])) return false;
                    if (begun[r] == lengths.size()) continue;
                    const std::vector<double> value(lengths[begun[r]++], r + 1.0);
                    machine.begin(std::as_bytes(std::span<const double>(value)));
                    moved = true;
                    continue;
                }
                const auto awaited = machine.awaited();
                rank_t from = awaited.from;
                for (rank_t peer = 0; peer < size_ && from == no_rank; ++peer) {
                    if (!queues_[peer * std::size_t{size_} + r].empty()) from = peer;
                }
                if (from == no_rank) continue;
                std::deque<std::vector<std::byte>>& queue = queues_[from * std::size_t{size_} + r];
                if (queue.empty()) continue;
                const std::vector<std::byte> bytes = std::move(queue.front());
                queue.pop_front();
                if (awaited.from != no_rank) {
                    EXPECT_LE(bytes.size(), awaited.max_bytes) << "rank " << r << " of " << size_;
                    ++awaited_takes;
                }
                machine.on_message(from, bytes);
                moved = true;
            }
        }
        for (rank_t r = 0; r < size_; ++r) {
            EXPECT_EQ(begun[r], lengths.size()) << "rank " << r << " of " << size_ << " stalled";
            EXPECT_NE(machines_[r]->status(), allreduce_status::running) << "rank " << r << " of " << size_;
            if (begun[r] != lengths.size() || machines_[r]->status() == allreduce_status::running) return false;
        }
        return true;
    }

private:
    struct outbox final : collective_transport {
        outbox(fifo_processes& to, rank_t from) : net(to), self(from) {}
        void send(rank_t peer, std::span<const std::byte> bytes) override {
            net.queues_[self * std::size_t{net.size_} + peer].emplace_back(bytes.begin(), bytes.end());
        }
        fifo_processes& net;
        rank_t self;
    };
    struct sum final : reduce_operation {
        void combine(std::span<std::byte> into, std::span<const std::byte> value) const override {
            for (std::size_t at = 0; at + sizeof(double) <= into.size(); at += sizeof(double)) {
                double a = 0, b = 0;
                std::memcpy(&a, into.data() + at, sizeof(a));
                std::memcpy(&b, value.data() + at, sizeof(b));
                a += b;
                std::memcpy(into.data() + at, &a, sizeof(a));
            }
        }
    };
    bool right_result(rank_t rank, std::size_t doubles) {
        EXPECT_EQ(machines_[rank]->status(), allreduce_status::done);
        if (machines_[rank]->status() != allreduce_status::done) return false;
        const std::span<const std::byte> result = machines_[rank]->result();
        EXPECT_EQ(result.size(), doubles * sizeof(double));
        double first = 0;
        if (!result.empty()) std::memcpy(&first, result.data(), sizeof(first));
        EXPECT_EQ(first, size_ * (size_ + 1) / 2.0) << "rank " << rank << " of " << size_;
        return result.size() == doubles * sizeof(double) && first == size_ * (size_ + 1) / 2.0;
    }

public:
    std::uint64_t awaited_takes = 0;

private:
    rank_t size_;
    std::vector<std::deque<std::vector<std::byte>>> queues_;  // [from * size + to]
    sum sum_;
    std::vector<std::unique_ptr<outbox>> outboxes_;
    std::vector<std::unique_ptr<survivor_allreduce>> machines_;
};

// The fast path at powers of two and at sizes with ranks folded in, calls
// in a row whose values change length (a peer's next call may then wait in
// its queue): every message but none comes from an awaited peer.
TEST(SurvivorAllreduceAwaited, OnTheFastPathEveryMessageIsAwaited) {
    for (const rank_t size : {2u, 3u, 4u, 5u, 6u, 7u, 8u, 12u, 16u, 33u, 64u}) {
        fifo_processes processes(size, size, fast_bytes);
        EXPECT_TRUE(processes.run({1, 64, 1, 8, 8})) << size << " processes";
        const rank_t power = std::bit_floor(size);
        const std::uint64_t per_call = std::uint64_t{power} * std::countr_zero(power) + 2u * (size - power);
        EXPECT_EQ(processes.awaited_takes, 5 * per_call) << size << " processes";
    }
}

// The tree, flat and of several levels: the results are awaited from one
// peer each (partials from any), and every call completes.
TEST(SurvivorAllreduceAwaited, OnTheTreeEachResultIsAwaited) {
    struct setup {
        rank_t size;
        std::uint32_t radix;
    };
    for (const setup& s : {setup{2, 2}, setup{8, 8}, setup{8, 2}, setup{16, 4}, setup{27, 3}, setup{100, 7}}) {
        fifo_processes processes(s.size, s.radix, 0);
        EXPECT_TRUE(processes.run({1, 64, 1})) << s.size << " processes, radix " << s.radix;
        EXPECT_EQ(processes.awaited_takes, 3u * (s.size - 1)) << s.size << " processes, radix " << s.radix;
    }
}

// A failure moves the call to the tree, where messages come from any peer;
// a root on the tree (a value over the fast path's bound) combines
// partials from any peer.
TEST(SurvivorAllreduceAwaited, AfterAFailureOrWhileCombiningNoSinglePeer) {
    fifo_processes processes(8, 8, fast_bytes);
    const double value = 1.0;
    survivor_allreduce& rank2 = processes.process(2);
    rank2.begin(std::as_bytes(std::span<const double>(&value, 1)));
    EXPECT_EQ(rank2.awaited().from, 3u);  // recursive doubling's first partner
    const rank_t failed[] = {5};
    rank2.on_failed(failed);
    EXPECT_EQ(rank2.awaited().from, no_rank);

    fifo_processes longer(4, 4, fast_bytes);
    const std::vector<double> large(fast_bytes / sizeof(double) + 1, 1.0);
    longer.process(0).begin(std::as_bytes(std::span<const double>(large)));
    EXPECT_EQ(longer.process(0).awaited().from, no_rank);
}

}  // namespace
}  // namespace btl_ft
