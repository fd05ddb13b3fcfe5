// A confirmation: an observer whose emitter timed out asks the emitter
// itself (a PROBE) before declaring it failed, since its heartbeats may be
// stuck behind a slow path while a PROBE gets through, and asks a witness
// on the emitter's node whether the emitter still runs
// (detector_witness.cpp). detector_ring.cpp drives it; this type holds
// what one confirmation is and which answers count.
//
// It asks once. A process that finds itself woken late (it was stalled:
// the silence may be its own) may ask once more before accusing. Every
// PROBE of one confirmation has its own round, and an answer to any of
// them counts, the first as much as the last: a stalled observer's first
// PROBE may be answered after it sent the second.
#pragma once

#include <cstdint>

#include "btl_ft/assert.hpp"
#include "invariants.hpp"

namespace btl_ft {

class confirmation {
public:
    bool active() const { return active_; }
    std::uint32_t round() const { return round_; }  // of the latest PROBE
    // A remote witness was asked and has not answered: if the emitter is
    // declared meanwhile, its whole node was silent (what a cut looks like).
    bool awaiting_remote_witness() const { return awaiting_remote_witness_; }

    // At the emitter's deadline: ask (again), or accuse. `late`: this
    // process woke well past its deadline.
    bool should_ask(bool late) const { return !active_ || (late && attempts_ == 1); }

    // A PROBE of round `round` went to the emitter: the confirmation starts,
    // or asks again.
    void ask(std::uint32_t round) {
        invariants_checked<confirmation> checked(*this);
        BTL_FT_ASSERT(should_ask(true), "a confirmation asks at most twice");
        if (!active_) {
            first_round_ = round;
        }
        active_ = true;
        ++attempts_;
        round_ = round;
    }

    // Rounds are given in increasing order (modulo 2^32), so every round of
    // this confirmation lies between the first and the latest.
    bool answered_by(std::uint32_t round) const {
        return active_ && round - first_round_ <= round_ - first_round_;
    }

    void await_remote_witness() {
        invariants_checked<confirmation> checked(*this);
        BTL_FT_ASSERT(active_, "a witness asked outside a confirmation");
        awaiting_remote_witness_ = true;
    }
    void witness_answered() {
        invariants_checked<confirmation> checked(*this);
        awaiting_remote_witness_ = false;
    }

    // The emitter was heard, seen running, declared, or replaced.
    void end() {
        invariants_checked<confirmation> checked(*this);
        active_ = false;
        attempts_ = 0;
        awaiting_remote_witness_ = false;
    }

    void check() const {
        BTL_FT_ASSERT(active_ || (attempts_ == 0 && !awaiting_remote_witness_),
                      "an ended confirmation still counts attempts or awaits a witness");
        BTL_FT_ASSERT(!active_ || (attempts_ >= 1 && attempts_ <= 2), "a confirmation asks once or twice");
        BTL_FT_ASSERT(!active_ || round_ - first_round_ >= attempts_ - 1u, "two PROBEs of one round");
    }

private:
    std::uint32_t first_round_ = 0;
    std::uint32_t round_ = 0;
    std::uint8_t attempts_ = 0;
    bool active_ = false;
    bool awaiting_remote_witness_ = false;
};

}  // namespace btl_ft
