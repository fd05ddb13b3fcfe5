// The private state of one detector and the helpers its entry points share.
// Four sub-protocols are types of their own, each checking its invariants
// on entry and exit: confirmation.hpp, probe_window.hpp, quorum_episode.hpp
// and census.hpp. The state composes them and does their I/O. The helpers
// are split by job: detector.cpp (entry points, dispatch, invariants),
// detector_ring.cpp (heartbeats, suspicion, mending, leave),
// detector_probe.cpp (probing the predecessors behind a new emitter),
// detector_witness.cpp (asking the emitter's node whether it still runs),
// detector_quorum.cpp (partitions), detector_census.cpp (how much of the
// job a process still reaches), detector_notice.cpp (starting, receiving
// and forwarding failure notices), detector_two_levels.cpp (what the
// node hierarchy changes) and detector_join.cpp (telling a union's
// processes left out of a connect where it went).
//
// Memory per process stays O(|D|): the dead and departed sets, the set of
// ranks already told they are dead, a fixed window of probes, and a few
// scalars. Notices are deduped by content instead of by a table of
// (source, sequence) pairs: D only grows, so a notice that names no rank
// we do not already know is a copy (or a subset) of one we have forwarded,
// and dropping it needs no state at all.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "btl_ft/dead_set.hpp"
#include "btl_ft/detector.hpp"
#include "btl_ft/node_layout.hpp"
#include "btl_ft/overlay.hpp"
#include "btl_ft/ring.hpp"
#include "btl_ft/wire.hpp"
#include "census.hpp"
#include "confirmation.hpp"
#include "probe_window.hpp"
#include "quorum_episode.hpp"

namespace btl_ft {

struct detector::state {
    state(const detector_config& config, std::shared_ptr<const ring> ring, transport& net, sink& out);

    // --- configuration and collaborators ---
    detector_config config;
    std::array<std::byte, wire::max_handle_bytes> handle{};  // owned copy of config.flag_handle
    std::shared_ptr<const ring> ring_order;
    transport& net;
    sink& out;

    // --- protocol state ---
    dead_set dead;        // D: failed, reported to the sink
    dead_set departed;    // left cleanly, never reported
    dead_set told_dead;   // ranks already sent DECLARED_DEAD
    dead_set crashed;     // the part of D the runtime confirmed
    dead_set unreachable; // the part of D a transport error named (here, or in a notice)
    dead_set noticed;     // two levels: the part of D a notice carried, here or from here
    rank_t emitter;       // == self when alone
    rank_t observer;      // == self when alone, no_rank while awaiting a NEWOBSERVER
    bool started = false;
    bool stopped = false;
    bool left = false;     // stopped by leave(), as opposed to declared dead
    bool in_call = false;  // reentrancy guard: callbacks must not call back in
    time_ns next_heartbeat_at = never;
    time_ns emitter_deadline = never;
    time_ns emitter_due = never;  // heard by then, or declared (the timeout)
    std::uint32_t emitted_sequence = 0;  // of our own heartbeats
    std::uint64_t last_word = 0;  // last word seen in the flag (0 = empty flag)
    bool have_sequence = false;    // last_sequence belongs to the current emitter
    std::uint32_t last_sequence = 0;
    time_ns last_heard_at = 0;    // last word or probe answer from the emitter (or when it became one)
    // Since last_heard_at, silence the witness patience does not count:
    // this process's own wake-ups later than a timeout, and the spans a
    // witness saw the emitter denied the CPU (detector_witness.cpp).
    time_ns uncounted_ns = 0;
    time_ns witnessed_at = 0;           // the latest witness answer, or last_heard_at
    time_ns uncounted_at_witness = 0;   // uncounted_ns then
    time_ns due_at = never;       // next_deadline() when the last entry point returned
    time_ns last_call_at = 0;     // the `now` of the latest entry point: never goes back
    std::uint32_t notice_sequence = 0;
    // Every PROBE's round, whatever asks: a confirmation, the probe window
    // or a census. A reply names its round, so the three never mix.
    std::uint32_t probe_round = 0;

    // --- sub-protocols ---
    // The emitter was silent for the timeout less confirm_lead() and was
    // sent a PROBE; emitter_deadline is then the end of the confirmation
    // window (detector_config::confirm_window()): the timeout.
    confirmation confirm;
    // Two levels: the emitter's node-mates behind it that a witness of the
    // current confirmation, or of the mending, saw stopped.
    dead_set witnessed_row;
    // Two levels: the round of the WITNESS asked about a new emitter of
    // another node at a mending after a failure, until it answers.
    std::uint32_t mend_witness_round = 0;
    bool mend_witness_asked = false;
    // Predecessors behind the emitter, only while it has not yet sent its
    // first word after a mending.
    probe_window probes;
    // Failures less than episode_gap() apart, and the wait of a process the
    // count finds cut off.
    quorum_episode episode;
    std::unique_ptr<census> census_run;  // while one runs
    detector_stats stats;

    // --- helpers (detector_ring.cpp) ---
    rank_t self() const { return config.self; }
    bool gone(rank_t rank) const { return dead.contains(rank) || departed.contains(rank); }
    bool alone() const { return emitter == config.self; }
    std::uint32_t next_round() { return ++probe_round; }
    void emit_heartbeat();
    void accept_word(time_ns now, std::uint64_t word);
    void expect_emitter_by(time_ns due);
    void suspect_emitter(time_ns now);
    void declare_suspected(time_ns now, std::span<const rank_t> declared, std::span<const rank_t> copies,
                           bool node_silent);
    void start_confirm(time_ns now);
    void heard_emitter(time_ns now);
    rank_t find_emitter() const;
    void mend(time_ns now, bool after_failure);
    void send_new_observer();  // registers our flag handle with the emitter
    void fix_neighbours(time_ns now, bool after_failure);
    void on_new_observer(time_ns now, rank_t from, const wire::message& msg);
    void on_leave(time_ns now, rank_t from, const wire::message& msg);
    void leave_bytes(std::vector<std::byte>& bytes) const;
    void send_leave();
    void answer_after_leave(rank_t from, std::span<const std::byte> bytes);
    void tell_dead(rank_t rank);
    void declared_dead_self(rank_t told_by, const char* reason);
    bool mark_failed(time_ns now, rank_t rank, failure_kind kind);
    void report(std::span<const rank_t> ranks);  // to the sink, or held while the quorum waits
    time_ns next_deadline() const;

    // --- probes (detector_probe.cpp) ---
    void refresh_probes(time_ns now, bool send_new);
    void condemn_silent_probes(time_ns now, failed_batch& found);
    void on_probe(rank_t from, const wire::message& msg);
    void on_probe_reply(time_ns now, rank_t from, const wire::message& msg);

    // --- witnesses (detector_witness.cpp) ---
    bool same_node(rank_t a, rank_t b) const;
    rank_t witness_for(rank_t subject) const;
    rank_t next_node_mate(rank_t subject, rank_t after) const;
    void ask_witness(time_ns now);
    void silence_starts(time_ns now);
    void wait_for_silent_node(time_ns now);
    void apply_witness(time_ns now, process_state seen);
    void on_witness(rank_t from, const wire::message& msg);
    void stopped_row_behind(rank_t subject, std::vector<rank_t>& behind) const;
    void on_witness_reply(time_ns now, rank_t from, const wire::message& msg);
    void keep_witnessed_row(rank_t witness, std::span<const rank_t> behind);
    // detector_join.cpp
    std::vector<std::byte> join_bytes(const join_notice& next, std::size_t& carried) const;
    long announce_join(const join_notice& next, std::span<const rank_t> to);
    void on_join(rank_t from, const wire::message& msg);

    // --- partitions (detector_quorum.cpp) ---
    time_ns episode_gap() const;
    rank_t live_count() const { return config.size - static_cast<rank_t>(dead.size() + departed.size()); }
    void count_failure(time_ns now, rank_t rank, failure_kind kind);
    void confirm_crash(rank_t rank);
    void settle();
    rank_t tie_break_rank() const;
    bool cut_off() const;
    bool check_quorum(time_ns now);  // true when it stopped this process
    void stop_node_mates();

    // --- census (detector_census.cpp) ---
    void start_census(time_ns now);
    bool on_census_reply(time_ns now, rank_t from, std::uint32_t round);
    void close_census(time_ns now);
    bool census_says_cut_off() const;
    time_ns census_deadline() const { return census_run ? census_run->deadline() : never; }

    // --- notices (detector_notice.cpp) ---
    // `suspects` also get a copy, so a falsely suspected process learns it.
    void broadcast(time_ns now, std::span<const rank_t> suspects);
    void broadcast_direct(const dead_set& skip, std::span<const rank_t> suspects);
    void on_notice(time_ns now, rank_t from, const wire::message& msg);
    bool knows_failures_in(const wire::message& msg) const;  // the notice names no new failure or crash
    void forward(const wire::message& msg);
    void encode_own_notice(std::vector<std::byte>& bytes) const;
    // The overlay of the configured hierarchy, as this process forwards.
    void notice_hops(const overlay_route& route, route_tag received, std::vector<hop>& hops) const;
    std::vector<rank_t> unreachable_not_crashed(std::span<const rank_t> failed) const;
    void send_all(std::vector<std::byte>& bytes, const std::vector<hop>& hops);

    // --- two levels (detector_two_levels.cpp) ---
    void suspect_with_two_levels(time_ns now, rank_t suspect, const failed_batch& found, bool node_silent);
    void condemn_stopped_mates(time_ns now, rank_t suspect, std::vector<rank_t>& declared);
    void ask_witness_after_mend();
    bool on_mend_witness_reply(time_ns now, rank_t from, const wire::message& msg);
    void tell_condemned_mates(const wire::message& msg);
    void tell_source_what_it_missed(rank_t from, const wire::message& msg);
    bool answers_a_notice_of_ours(rank_t from, const wire::message& msg) const;
    bool runtime_told_everyone(rank_t rank, failure_kind kind) const;
    bool spreads_news(const wire::message& msg);

    // --- invariants (detector.cpp) ---
    void check_invariants() const;
};

}  // namespace btl_ft
