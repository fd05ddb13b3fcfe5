// A transport and sink that only record, for driving one detector by hand:
// the test plays every peer, feeding words and encoded messages and reading
// back what the detector put, sent and reported.
#pragma once

#include <vector>

#include "btl_ft/detector.hpp"
#include "btl_ft/wire.hpp"

namespace btl_ft::testing {

struct recorder final : transport, sink {
    struct sent {
        rank_t to;
        std::vector<std::byte> bytes;
    };
    std::vector<std::pair<rank_t, std::uint64_t>> words;
    std::vector<sent> messages;
    std::vector<rank_t> failed;
    std::vector<rank_t> suspected;  // declared failed by this process itself
    std::vector<std::byte> observer_handle;
    rank_t handle_from = no_rank;
    bool declared = false;
    rank_t told_by = no_rank;
    std::vector<process_state> local;  // local_state()'s answers by rank (unknown beyond)
    std::vector<rank_t> asked_about;   // local_state()'s questions
    struct join_seen {
        rank_t from;
        std::uint32_t epoch;
        std::vector<job_extent> jobs;
        std::vector<known_failure> known;
    };
    std::vector<join_seen> joins;

    // puts_work false: no one-sided path, so the detector sends HEARTBEATs
    bool put_heartbeat(rank_t observer, std::uint64_t word) override {
        words.emplace_back(observer, word);
        return puts_work;
    }
    bool puts_work = true;
    void send(rank_t peer, std::span<const std::byte> bytes) override { messages.push_back({peer, {bytes.begin(), bytes.end()}}); }
    void on_observer_handle(rank_t observer, std::span<const std::byte> handle) override {
        handle_from = observer;
        observer_handle.assign(handle.begin(), handle.end());
    }
    process_state local_state(rank_t rank) override {
        asked_about.push_back(rank);
        return rank < local.size() ? local[rank] : process_state::unknown;
    }
    void on_failed(std::span<const rank_t> ranks) override { failed.insert(failed.end(), ranks.begin(), ranks.end()); }
    void on_suspected(std::span<const rank_t> ranks) override { suspected.insert(suspected.end(), ranks.begin(), ranks.end()); }
    void on_join(rank_t from, const join_notice& join) override {
        joins.push_back({from, join.epoch, {join.jobs.begin(), join.jobs.end()}, {join.known.begin(), join.known.end()}});
    }
    void on_declared_dead_self(rank_t by, const char*) override {
        declared = true;
        told_by = by;
    }

    // Decoded messages of one type sent so far (job of `size` ranks).
    std::vector<std::pair<rank_t, wire::message>> sent_of(wire::msg_type type, rank_t size) const {
        std::vector<std::pair<rank_t, wire::message>> out;
        for (const sent& one : messages) {
            wire::message msg;
            if (wire::decode(one.bytes, {size, 1u << 20}, msg) == wire::status::ok && msg.type == type) {
                out.emplace_back(one.to, msg);
            }
        }
        return out;
    }
};

inline detector_config config_for(rank_t size, rank_t self, propagator_kind kind = propagator_kind::hba) {
    detector_config config = make_config(size, self, 10'000'000, 50'000'000);
    config.start_skew_ns = 20'000'000;
    config.propagator = kind;
    config.quorum = false;  // on where a test asks for it
    return config;
}

inline std::vector<std::byte> notice_bytes(rank_t source, std::uint32_t sequence, std::vector<rank_t> failed,
                                           std::vector<rank_t> departed = {},
                                           wire::notice_mode mode = wire::notice_mode::hba, route_tag route = route_origin,
                                           std::vector<rank_t> crashed = {}, std::vector<rank_t> unreachable = {}) {
    std::vector<std::byte> out;
    wire::encode_notice({mode, route, source, sequence, failed, departed, crashed, unreachable}, out);
    return out;
}

}  // namespace btl_ft::testing
