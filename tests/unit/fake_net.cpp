// Implementation of the unit-test network (see fake_net.hpp).
#include <gtest/gtest.h>

#include "fake_net.hpp"

#include <algorithm>

#include "btl_ft/dead_set.hpp"

namespace btl_ft::testing {

// One process: its detector plus the transport and sink the detector talks
// to, which post into the shared queue or record what the sink was told.
struct fake_net::node final : transport, sink {
    node(fake_net& owner_net, rank_t own_rank) : net(owner_net), rank(own_rank) {}

    bool put_heartbeat(rank_t observer, std::uint64_t word) override {
        const time_ns arrival = net.network_.heartbeat_arrival(rank, observer, net.now_);
        if (!net.crosses_cut(rank, observer)) {
            net.queue_.push({.at = arrival, .payload = word, .node = observer, .kind = sim::event_kind::heartbeat});
        }
        return true;
    }
    void send(rank_t peer, std::span<const std::byte> bytes) override {
        ++net.messages_sent_;
        const time_ns arrival = *net.network_.message_arrival(rank, peer, net.now_);  // no faults: never dropped
        if (!net.crosses_cut(rank, peer)) {
            net.queue_.push({.at = arrival, .payload = net.messages_.store(rank, bytes), .node = peer,
                             .kind = sim::event_kind::message});
        }
    }
    void on_failed(std::span<const rank_t> ranks) override {
        for (const rank_t failed : ranks) {
            seen.push_back({net.now_, failed});
        }
    }
    void on_declared_dead_self(rank_t, const char*) override { declared = true; }
    void on_suspected(std::span<const rank_t> ranks) override {
        if (net.options_.runtime_confirm_ns < 0) {
            return;
        }
        for (const rank_t suspect : ranks) {
            const bool reachable = net.cut_side_.empty() || net.cut_side_[suspect] == net.cut_side_[rank];
            if (reachable && !net.nodes_[suspect]->is_crashed) {
                net.crash(suspect);  // the fence
            }
        }
    }

    fake_net& net;
    rank_t rank;
    std::unique_ptr<detector> core;
    time_ns deadline = never;
    bool is_crashed = false;
    bool declared = false;
    time_ns hung_until = 0;
    time_ns deaf_until = 0;
    std::vector<failure_seen> seen;
};

namespace {
sim::sim_config network_model(const net_options& options) {
    sim::sim_config config;
    config.nodes = options.size;
    config.min_delay_ns = options.min_delay_ns;
    config.tau_ns = options.max_delay_ns;
    return config;
}
}  // namespace

fake_net::fake_net(net_options options)
    : options_(std::move(options)), net_config_(network_model(options_)), network_(net_config_, options_.seed) {
    ring_ = options_.node_of_rank.empty() ? ring::make_flat(options_.order, options_.size, options_.seed)
                                          : ring::make(options_.order, options_.node_of_rank, options_.seed);
    for (rank_t rank = 0; rank < options_.size; ++rank) {
        nodes_.push_back(std::make_unique<node>(*this, rank));
        detector_config config = make_config(options_.size, rank, options_.period_ns, options_.timeout_ns);
        config.start_skew_ns = options_.start_skew_ns;
        config.propagator = options_.propagator;
        config.max_message_bytes = options_.max_message_bytes;
        config.probe_width = options_.probe_width;
        config.quorum = options_.quorum;
        config.quorum_wait_ns = options_.quorum_wait_ns;
        nodes_.back()->core = std::make_unique<detector>(config, ring_, *nodes_.back(), *nodes_.back());
    }
}

fake_net::~fake_net() = default;

void fake_net::start_all() {
    for (auto& one : nodes_) {
        one->core->start(now_);
        one->deadline = one->core->tick(now_);
    }
}

// Lost in the partition, silently.
bool fake_net::crosses_cut(rank_t from, rank_t to) const {
    return !cut_side_.empty() && cut_side_[from] != cut_side_[to];
}

bool fake_net::live(rank_t rank) const { return !nodes_[rank]->is_crashed && !nodes_[rank]->core->stopped(); }

time_ns fake_net::timer_of(rank_t rank) const {
    const node& one = *nodes_[rank];
    return one.is_crashed ? never : std::max(one.deadline, one.hung_until);
}

void fake_net::deliver(const sim::event& item) {
    node& target = *nodes_[item.node];
    const bool message = item.kind == sim::event_kind::message;
    if (target.is_crashed) {
        if (message) {
            messages_.release(item.payload);
        }
        return;
    }
    if (target.hung_until > now_) {
        sim::event later = item;
        later.at = target.hung_until;  // a stopped process reads its input when it resumes
        queue_.push(later);
        return;
    }
    if (item.kind == sim::event_kind::confirm) {
        target.core->report_failure(now_, static_cast<rank_t>(item.payload), failure_kind::crashed);
    } else if (item.kind == sim::event_kind::heartbeat) {
        if (target.deaf_until > now_) {
            return;
        }
        target.core->on_heartbeat_word(now_, item.payload);
    } else {
        target.core->on_message(now_, messages_.from(item.payload), messages_.bytes(item.payload));
        messages_.release(item.payload);
    }
    target.deadline = target.core->tick(now_);
}

void fake_net::run_until(time_ns end) {
    for (;;) {
        rank_t next_timer = no_rank;
        time_ns timer_at = never;
        for (rank_t rank = 0; rank < size(); ++rank) {
            if (timer_of(rank) < timer_at) {
                timer_at = timer_of(rank);
                next_timer = rank;
            }
        }
        const time_ns event_at = queue_.empty() ? never : queue_.top().at;
        const time_ns next = std::min(event_at, timer_at);
        if (next > end) {
            break;
        }
        now_ = std::max(now_, next);
        if (event_at <= timer_at) {
            deliver(queue_.pop());
        } else {
            node& due = *nodes_[next_timer];
            due.deadline = due.core->tick(now_);
        }
    }
    now_ = std::max(now_, end);
}

void fake_net::crash(rank_t rank) {
    nodes_[rank]->is_crashed = true;
    if (options_.runtime_confirm_ns >= 0) {
        runtime_reports(rank);
    }
}

// From the victim's side of a cut only, like a daemon that reaped it.
void fake_net::runtime_reports(rank_t victim) {
    for (rank_t rank = 0; rank < size(); ++rank) {
        if (rank != victim && !crosses_cut(victim, rank)) {
            queue_.push({.at = now_ + options_.runtime_confirm_ns, .payload = victim, .node = rank,
                         .kind = sim::event_kind::confirm});
        }
    }
}
void fake_net::hang(rank_t rank, time_ns until) { nodes_[rank]->hung_until = until; }
void fake_net::lose_words_to(rank_t rank, time_ns until) { nodes_[rank]->deaf_until = until; }

void fake_net::cut_off(const std::vector<rank_t>& side) {
    cut_side_.assign(nodes_.size(), false);
    for (const rank_t rank : side) {
        cut_side_.at(rank) = true;
    }
}
detector& fake_net::at(rank_t rank) { return *nodes_[rank]->core; }
bool fake_net::crashed(rank_t rank) const { return nodes_[rank]->is_crashed; }
const std::vector<failure_seen>& fake_net::failures_seen_by(rank_t rank) const { return nodes_[rank]->seen; }
bool fake_net::declared_dead(rank_t rank) const { return nodes_[rank]->declared; }

::testing::AssertionResult fake_net::survivors_agree(const std::vector<rank_t>& expected) const {
    std::vector<rank_t> sorted_expected = expected;
    std::sort(sorted_expected.begin(), sorted_expected.end());
    for (rank_t rank = 0; rank < size(); ++rank) {
        if (!live(rank)) {
            continue;
        }
        std::vector<rank_t> seen;
        for (const failure_seen& one : nodes_[rank]->seen) {
            seen.push_back(one.rank);
        }
        std::sort(seen.begin(), seen.end());
        if (seen != sorted_expected) {
            auto failure = ::testing::AssertionFailure() << "rank " << rank << " was told of {";
            for (const rank_t one : seen) failure << one << ' ';
            return failure << "}, expected " << sorted_expected.size() << " ranks";
        }
        if (std::vector<rank_t>(nodes_[rank]->core->dead().ranks().begin(), nodes_[rank]->core->dead().ranks().end()) !=
            sorted_expected) {
            return ::testing::AssertionFailure() << "rank " << rank << " has a dead set that differs from its reports";
        }
    }
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult fake_net::ring_mended() const {
    for (rank_t rank = 0; rank < size(); ++rank) {
        if (!live(rank)) {
            continue;
        }
        rank_t expected = ring_->predecessor(rank);
        while (expected != rank && !live(expected)) {
            expected = ring_->predecessor(expected);
        }
        if (nodes_[rank]->core->emitter() != expected) {
            return ::testing::AssertionFailure()
                   << "rank " << rank << " observes " << nodes_[rank]->core->emitter() << ", not " << expected;
        }
        if (expected != rank && nodes_[expected]->core->observer() != rank) {
            return ::testing::AssertionFailure()
                   << "rank " << expected << " heartbeats to " << nodes_[expected]->core->observer() << ", not " << rank;
        }
    }
    return ::testing::AssertionSuccess();
}

}  // namespace btl_ft::testing
