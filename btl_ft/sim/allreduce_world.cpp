// allreduce_world.hpp: one event queue ordered by (time, insertion), so a
// seed gives one schedule. Kept apart from world.cpp: the detector's world
// is built for 2^20 processes and its timers, this one for a collective's
// few messages per process; they share the random source and the oracle's
// idea (the truth is known here, never a verdict).
#include "allreduce_world.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <queue>
#include <sstream>

#include "btl_ft/prng.hpp"

namespace btl_ft::sim {
namespace {

class sum_u64 final : public reduce_operation {
public:
    void combine(std::span<std::byte> into, std::span<const std::byte> value) const override {
        std::uint64_t a = 0, b = 0;
        std::memcpy(&a, into.data(), sizeof a);
        std::memcpy(&b, value.data(), sizeof b);
        a += b;
        std::memcpy(into.data(), &a, sizeof a);
    }
};

enum class kind : std::uint8_t {
    begin,
    message,
    learn,       // `to` learns that `from` failed
    learn_wave,  // every process `to` hops from `from` learns that it failed (the overlay model)
    crash,
    suspect,
};

struct event {
    time_ns at;
    std::uint64_t order;
    kind what;
    rank_t to;
    rank_t from;                  // message: sender; learn: the failed rank
    std::vector<std::byte> bytes;  // message
    bool operator>(const event& other) const {
        return at != other.at ? at > other.at : order > other.order;
    }
};

}  // namespace

struct allreduce_world::impl {
    struct port final : collective_transport {
        impl* net;
        rank_t self;
        void send(rank_t peer, std::span<const std::byte> bytes) override { net->send(self, peer, bytes); }
    };

    allreduce_world_options options;
    splitmix64 random;
    sum_u64 sum;
    std::vector<port> ports;
    std::vector<std::unique_ptr<survivor_allreduce>> processes;
    std::vector<std::uint8_t> dead;      // crashed, or failed before
    std::vector<std::uint8_t> declared;  // suspected while running: failed for the oracle
    std::vector<std::uint32_t> sends;
    std::vector<std::uint32_t> crash_after;  // 0: never
    std::vector<std::uint32_t> calls_begun;
    std::vector<time_ns> busy_until;  // LogP: the process's port is taken until then
    std::vector<std::vector<call_outcome>> outcomes;  // [rank][call]
    std::vector<rank_t> known_before;                 // failed before, known at every begin
    std::map<std::pair<rank_t, rank_t>, time_ns> slow_links;
    std::priority_queue<event, std::vector<event>, std::greater<>> queue;
    std::uint64_t order = 0;
    std::uint64_t messages = 0;
    time_ns now = 0;
    bool started = false;

    explicit impl(const allreduce_world_options& opts) : options(opts), random(opts.seed) {
        const rank_t n = options.size;
        ports.resize(n);
        dead.assign(n, 0);
        declared.assign(n, 0);
        sends.assign(n, 0);
        crash_after.assign(n, 0);
        calls_begun.assign(n, 0);
        busy_until.assign(options.overhead_ns > 0 ? n : 0, 0);
        outcomes.assign(n, std::vector<call_outcome>(options.calls));
        for (rank_t r = 0; r < n; ++r) {
            ports[r].net = this;
            ports[r].self = r;
            processes.push_back(std::make_unique<survivor_allreduce>(
                allreduce_config{.size = n, .self = r, .radix = options.radix, .fast_max_bytes = options.fast_max_bytes}, ports[r], sum));
        }
    }

    time_ns between(time_ns low, time_ns high) {
        return low + static_cast<time_ns>(random.below(static_cast<std::uint64_t>(high - low) + 1));
    }

    void push(time_ns at, kind what, rank_t to, rank_t from, std::vector<std::byte> bytes = {}) {
        queue.push(event{at, order++, what, to, from, std::move(bytes)});
    }

    std::uint64_t value_of(rank_t rank, std::uint32_t call) const {
        splitmix64 mix(options.seed * 0x9e3779b97f4a7c15ULL + rank * 1000003ULL + call);
        return mix.next();
    }

    void send(rank_t from, rank_t to, std::span<const std::byte> bytes) {
        if (dead[from]) return;
        ++messages;
        ++sends[from];
        const auto slow = slow_links.find({from, to});
        time_ns at = now + (slow != slow_links.end() ? slow->second : between(options.min_delay_ns, options.max_delay_ns));
        if (logp()) {
            // The sender's port is taken o per message, in the order it sends.
            const time_ns start = std::max(now, busy_until[from]);
            busy_until[from] = start + options.overhead_ns;
            at = busy_until[from] + options.latency_ns;
        }
        push(at, kind::message, to, from, {bytes.begin(), bytes.end()});
        // At once: the rest of the input it is handling sends nothing.
        if (crash_after[from] != 0 && sends[from] == crash_after[from]) crash(from);
    }

    bool logp() const { return options.overhead_ns > 0; }

    // Everybody (`rank` too when it still runs) learns that `rank` failed.
    void tell_failed(rank_t rank, time_ns at) {
        if (options.detect_ns >= 0) {
            // Declared detect_ns after, then one hypercube hop of L + o per
            // bit in which a process's rank differs from the failed one.
            const time_ns hop = options.latency_ns + options.overhead_ns;
            std::uint32_t hops = 0;
            while ((rank_t{1} << hops) < options.size) ++hops;
            for (std::uint32_t h = 0; h <= hops; ++h) {
                push(at + options.detect_ns + static_cast<time_ns>(h) * hop, kind::learn_wave, h, rank);
            }
            return;
        }
        for (rank_t r = 0; r < options.size; ++r) {
            if (r == rank && dead[rank]) continue;
            push(at + between(options.detect_min_ns, options.detect_max_ns), kind::learn, r, rank);
        }
    }

    void crash(rank_t rank) {
        if (dead[rank]) return;
        dead[rank] = 1;
        tell_failed(rank, now);
    }

    void suspect(rank_t rank) {
        declared[rank] = 1;
        tell_failed(rank, now);
    }

    void learn(rank_t process, rank_t failed_rank) {
        if (dead[process]) return;
        processes[process]->on_failed(std::span<const rank_t>(&failed_rank, 1));
        after_input(process);
    }

    bool failed(rank_t rank) const { return dead[rank] || declared[rank]; }

    void begin(rank_t rank) {
        const std::uint32_t call = calls_begun[rank]++;
        if (call == 0 && !known_before.empty()) processes[rank]->on_failed(known_before);
        if (call == 0 && options.greet) processes[rank]->greet();
        const std::uint64_t value = value_of(rank, call);
        std::byte bytes[8];
        std::memcpy(bytes, &value, sizeof value);
        processes[rank]->begin(bytes);
        after_input(rank);
    }

    // A process whose current call just ended records it and begins the next.
    void after_input(rank_t rank) {
        survivor_allreduce& process = *processes[rank];
        const std::uint32_t call = calls_begun[rank];
        if (call == 0 || process.status() == allreduce_status::running) return;
        call_outcome& out = outcomes[rank][call - 1];
        if (out.returned) return;
        out.returned = true;
        out.status = process.status();
        out.at = now;
        if (out.status == allreduce_status::done) {
            out.value.assign(process.result().begin(), process.result().end());
            out.contributors = process.contributors();
            out.decided_by = process.decided_by();
        }
        if (call < options.calls && out.status == allreduce_status::done) {
            push(now + between(0, options.start_spread_ns), kind::begin, rank, rank);
        }
    }

    void trace(const event& item) const {
        static const bool on = std::getenv("BTL_FT_TRACE") != nullptr;
        if (!on) return;
        std::fprintf(stderr, "%9lld ", static_cast<long long>(now));
        switch (item.what) {
        case kind::begin: std::fprintf(stderr, "%u begins call %u\n", item.to, calls_begun[item.to] + 1); return;
        case kind::crash: std::fprintf(stderr, "%u crashes\n", item.to); return;
        case kind::suspect: std::fprintf(stderr, "%u is suspected\n", item.to); return;
        case kind::learn: std::fprintf(stderr, "%u learns %u failed\n", item.to, item.from); return;
        case kind::learn_wave: std::fprintf(stderr, "%u hops from %u learn it failed\n", item.to, item.from); return;
        case kind::message: break;
        }
        allreduce_wire::message message;
        (void)allreduce_wire::decode(item.bytes, {options.size, 8}, message);
        static const char* const names[] = {"?", "PARTIAL", "HOLD", "RESULT", "PREPARE", "EXCHANGE"};
        std::fprintf(stderr, "%u -> %u %s seq %u root %u decided_by %u {", item.from, item.to,
                     names[static_cast<int>(message.type)], message.sequence, message.root, message.decided_by);
        for (const rank_range& range : message.contributors.ranges()) {
            std::fprintf(stderr, " %u-%u", range.begin, range.end - 1);
        }
        std::fprintf(stderr, " }%s\n", dead[item.to] ? " (to the dead)" : "");
    }

    void dispatch(const event& item) {
        trace(item);
        if (item.what == kind::learn_wave) {
            for (rank_t r = 0; r < options.size; ++r) {
                if (static_cast<std::uint32_t>(std::popcount(r ^ item.from)) == item.to) learn(r, item.from);
            }
            return;
        }
        if (dead[item.to]) return;
        if (item.what == kind::message && logp()) {
            // One message at a time through the receiver's port, o each.
            if (busy_until[item.to] > now) {
                push(busy_until[item.to], item.what, item.to, item.from, item.bytes);
                return;
            }
            busy_until[item.to] = now + options.overhead_ns;
        }
        switch (item.what) {
        case kind::begin: begin(item.to); break;
        case kind::crash: crash(item.to); break;
        case kind::suspect: suspect(item.to); break;
        case kind::learn: learn(item.to, item.from); break;
        case kind::learn_wave: break;
        case kind::message:
            if (dead[item.from] && options.lose_in_flight && random.below(2) == 0) return;
            processes[item.to]->on_message(item.from, item.bytes);
            after_input(item.to);
            break;
        }
    }

    bool all_ended() const {
        for (rank_t r = 0; r < options.size; ++r) {
            if (!failed(r) && !(calls_begun[r] == options.calls && outcomes[r].back().returned)) {
                // A live process excluded from a call stops there.
                bool excluded = false;
                for (const call_outcome& out : outcomes[r]) excluded = excluded || out.status == allreduce_status::excluded;
                if (!excluded) return false;
            }
        }
        return true;
    }
};

allreduce_world::allreduce_world(const allreduce_world_options& options) : impl_(std::make_unique<impl>(options)) {}
allreduce_world::~allreduce_world() = default;

void allreduce_world::fail_before(rank_t rank, bool known_to_all) {
    impl_->dead[rank] = 1;
    if (known_to_all) {
        impl_->known_before.insert(std::lower_bound(impl_->known_before.begin(), impl_->known_before.end(), rank),
                                   rank);
        return;
    }
    if (impl_->options.detect_ns >= 0) {
        impl_->tell_failed(rank, 0);  // failed just before the call
        return;
    }
    for (rank_t r = 0; r < impl_->options.size; ++r) {
        if (r != rank) {
            impl_->push(impl_->between(0, impl_->options.detect_max_ns), kind::learn, r, rank);
        }
    }
}

void allreduce_world::crash_at(rank_t rank, time_ns at) {
    impl_->push(at, kind::crash, rank, rank);
}

void allreduce_world::suspect_at(rank_t rank, time_ns at) {
    impl_->push(at, kind::suspect, rank, rank);
}

void allreduce_world::slow_link(rank_t from, rank_t to, time_ns delay_ns) {
    impl_->slow_links[{from, to}] = delay_ns;
}

void allreduce_world::crash_after_sends(rank_t rank, std::uint32_t sends) { impl_->crash_after[rank] = sends; }

bool allreduce_world::run(time_ns horizon) {
    impl& net = *impl_;
    if (!net.started) {
        net.started = true;
        for (rank_t r = 0; r < net.options.size; ++r) {
            net.push(net.between(0, net.options.start_spread_ns), kind::begin, r, r);
        }
    }
    while (!net.queue.empty() && net.queue.top().at <= horizon) {
        const event item = net.queue.top();
        net.queue.pop();
        net.now = item.at;
        net.dispatch(item);
    }
    return net.all_ended();
}

std::string allreduce_world::check() const {
    const impl& net = *impl_;
    std::ostringstream problems;
    for (std::uint32_t call = 0; call < net.options.calls; ++call) {
        const call_outcome* first = nullptr;
        for (rank_t r = 0; r < net.options.size; ++r) {
            const call_outcome& out = net.outcomes[r][call];
            if (out.status == allreduce_status::done && !out.contributors.contains(r)) {
                problems << "call " << call << ": rank " << r << " returned a result without itself\n";
            }
            if (net.failed(r) || !out.returned) continue;
            if (out.status != allreduce_status::done) {
                problems << "call " << call << ": live rank " << r << " ended excluded\n";
                continue;
            }
            if (!first) first = &out;
            if (out.value != first->value || !(out.contributors == first->contributors)) {
                problems << "call " << call << ": rank " << r << " holds another result than the first survivor\n";
            }
        }
        if (!first) continue;
        std::uint64_t expected = 0;
        for (const rank_range& range : first->contributors.ranges()) {
            for (rank_t r = range.begin; r < range.end; ++r) expected += net.value_of(r, call);
        }
        std::uint64_t got = 0;
        std::memcpy(&got, first->value.data(), sizeof got);
        if (got != expected) problems << "call " << call << ": value is not the sum of exactly the contributors\n";
        for (rank_t r = 0; r < net.options.size; ++r) {
            if (!net.failed(r) && !first->contributors.contains(r)) {
                problems << "call " << call << ": live rank " << r << " is not a contributor\n";
            }
        }
    }
    for (rank_t r = 0; r < net.options.size; ++r) {
        if (net.failed(r)) continue;
        for (std::uint32_t call = 0; call < net.options.calls; ++call) {
            if (!net.outcomes[r][call].returned) problems << "live rank " << r << " never ended call " << call << "\n";
        }
    }
    return problems.str();
}

const call_outcome& allreduce_world::outcome(rank_t rank, std::uint32_t call) const {
    return impl_->outcomes[rank][call];
}
bool allreduce_world::alive(rank_t rank) const { return !impl_->failed(rank); }

const survivor_allreduce& allreduce_world::process(rank_t rank) const { return *impl_->processes[rank]; }
std::uint64_t allreduce_world::messages() const { return impl_->messages; }

}  // namespace btl_ft::sim
