// One failure episode of the quorum rule (detector_quorum.cpp says why the
// rule exists): the failures less than a gap apart, counted against the
// processes alive when the first of them struck, and the wait a process
// that finds itself cut off spends holding its new failures back from the
// sink. The detector decides when an episode begins (it knows who is
// alive) and what a count means for it; this type keeps the arithmetic.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "btl_ft/assert.hpp"
#include "btl_ft/dead_set.hpp"
#include "invariants.hpp"

namespace btl_ft {

class quorum_episode {
public:
    // The next failure begins a new episode.
    bool over(time_ns now) const { return now >= end_; }

    // `live` processes were alive (neither failed nor departed) before the
    // episode's first failure, the lowest of them `lowest`.
    void begin(rank_t live, rank_t lowest) {
        invariants_checked<quorum_episode> checked(*this);
        live_ = live;
        lowest_ = lowest;
        counted_.clear();
        confirmed_ = 0;
    }

    // A failure of a process alive at the episode's start, before it enters
    // D. A crash the runtime confirmed is proof of death, not of a cut: it
    // leaves the count and the base alike. The episode lasts `gap` more.
    void count(time_ns now, rank_t rank, bool confirmed, time_ns gap) {
        invariants_checked<quorum_episode> checked(*this);
        if (confirmed) {
            ++confirmed_;
        } else {
            const bool fresh = counted_.insert(rank);
            BTL_FT_ASSERT(fresh, "a failure counted twice");
        }
        end_ = now + gap;
    }

    // The runtime confirmed a failure already in D.
    void confirm(rank_t rank) {
        invariants_checked<quorum_episode> checked(*this);
        if (counted_.erase(rank)) {
            ++confirmed_;
        }
    }

    // Every live process answered a shrink: what failed so far was no cut.
    void settle() {
        invariants_checked<quorum_episode> checked(*this);
        end_ = 0;
        counted_.clear();
        confirmed_ = 0;
    }

    rank_t lowest() const { return lowest_; }
    bool counted(rank_t rank) const { return counted_.contains(rank); }

    // The count alone says this process is on the smaller side: fewer than
    // half of the base remain, or exactly half without the tie-break rank
    // (`tie_break()`: the lowest of the episode's processes that the
    // runtime has not confirmed dead; asked only at exactly half).
    template <class TieBreak>
    bool minority(TieBreak tie_break) const {
        const rank_t base = live_ - confirmed_;
        const auto lost = static_cast<rank_t>(counted_.size());
        const std::uint64_t twice_remaining = 2 * static_cast<std::uint64_t>(base - lost);
        return twice_remaining < base || (twice_remaining == base && counted_.contains(tie_break()));
    }

    // --- the wait ---
    bool waiting() const { return wait_until_ != never; }
    time_ns wait_deadline() const { return wait_until_; }
    // True when the wait began here (it may have begun before).
    bool wait(time_ns now, time_ns wait_ns) {
        invariants_checked<quorum_episode> checked(*this);
        if (waiting()) {
            return false;
        }
        wait_until_ = now + wait_ns;
        return true;
    }
    void hold(std::span<const rank_t> ranks) {
        invariants_checked<quorum_episode> checked(*this);
        BTL_FT_ASSERT(waiting(), "failures held back outside a wait");
        held_.insert(held_.end(), ranks.begin(), ranks.end());
    }
    // The count no longer says cut off: the held failures go to the sink.
    std::vector<rank_t> stop_waiting() {
        invariants_checked<quorum_episode> checked(*this);
        wait_until_ = never;
        return std::exchange(held_, {});
    }

    void check() const {
        BTL_FT_ASSERT(counted_.size() + confirmed_ <= live_, "more failures than live processes");
        BTL_FT_ASSERT(waiting() || held_.empty(), "failures held back outside a wait");
    }

private:
    time_ns end_ = 0;
    time_ns wait_until_ = never;
    rank_t live_ = 0;
    rank_t lowest_ = 0;
    rank_t confirmed_ = 0;
    dead_set counted_;
    std::vector<rank_t> held_;
};

}  // namespace btl_ft
