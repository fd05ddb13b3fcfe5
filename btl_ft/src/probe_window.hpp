// The probe window: the predecessors behind a new emitter that an observer
// PROBEs in parallel after a failure, each with its own window for an
// answer (detector_probe.cpp says why). This type holds the slots, in ring
// order behind the emitter, and decides which of them a rebuild keeps,
// which it opens, and which a silent walk condemns; the detector finds the
// candidates and sends the PROBEs.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

#include "btl_ft/assert.hpp"
#include "btl_ft/detector.hpp"
#include "invariants.hpp"

namespace btl_ft {

// A predecessor probed beyond the new emitter: it has its own 2*timeout
// window from when the PROBE left. A PROBE_REPLY of that round closes the
// window for good (deadline `never`), which keeps a slot at 16 bytes.
struct probe_slot {
    time_ns deadline = never;
    rank_t rank = no_rank;
    std::uint32_t round = 0;
    bool answered() const { return deadline == never; }
};

static_assert(sizeof(probe_slot) == 16, "probe slots are held by every simulated detector");

// Ranks newly found failed in one step, reported in one notice: the
// emitter and the probed predecessors behind it.
struct failed_batch {
    std::array<rank_t, max_probe_width> ranks{};
    std::size_t count = 0;
    void add(rank_t rank) { ranks.at(count++) = rank; }
    std::span<const rank_t> view() const { return {ranks.data(), count}; }
};

class probe_window {
public:
    static constexpr std::size_t capacity = max_probe_width - 1;
    using slots_t = std::array<probe_slot, capacity>;

    std::span<const probe_slot> slots() const { return {slots_.data(), count_}; }
    bool empty() const { return count_ == 0; }

    // The emitter lives: what lies behind it is its own observer's business.
    void forget() { count_ = 0; }

    // Rebuilds the window over `behind`: the live predecessors behind the
    // emitter, nearest first, at most `capacity`. A rank already probed
    // keeps its slot, round and deadline, so mending again neither restarts
    // its window nor PROBEs it twice. A rank not yet probed gets a new slot
    // (round ++rounds, window until `deadline`) if `open_new`; otherwise the
    // window ends before it, a contiguous run behind the emitter. Returns
    // the new slots: the detector PROBEs them, in order.
    std::span<const probe_slot> rebuild(std::span<const rank_t> behind, bool open_new, time_ns deadline,
                                        std::uint32_t& rounds, slots_t& opened) {
        invariants_checked<probe_window> checked(*this);
        BTL_FT_ASSERT(behind.size() <= capacity, "more candidates than the widest window");
        const slots_t before = slots_;
        const auto before_end = before.begin() + static_cast<std::ptrdiff_t>(count_);
        std::size_t opened_count = 0;
        count_ = 0;
        for (const rank_t candidate : behind) {
            const auto kept = std::find_if(before.begin(), before_end,
                                           [&](const probe_slot& slot) { return slot.rank == candidate; });
            if (kept != before_end) {
                slots_[count_++] = *kept;
                continue;
            }
            if (!open_new) {
                break;
            }
            const probe_slot fresh{deadline, candidate, ++rounds};
            slots_[count_++] = fresh;
            opened[opened_count++] = fresh;
        }
        return {opened.data(), opened_count};
    }

    // A PROBE_REPLY from `from` for `round` closes its slot for good; false
    // when no slot waits for that answer (a late reply to a dropped slot).
    bool answer(rank_t from, std::uint32_t round) {
        invariants_checked<probe_window> checked(*this);
        for (std::size_t i = 0; i < count_; ++i) {
            if (slots_[i].rank == from && slots_[i].round == round) {
                slots_[i].deadline = never;
                return true;
            }
        }
        return false;
    }

    // The emitter's grace ran out: walks the window in ring order and adds
    // to `found` every predecessor silent past its own window, skipping the
    // ones `gone` names (a notice or a LEAVE named them meanwhile). An
    // answer, or a window still open, ends the walk: the mending that
    // follows lands there.
    template <class Gone>
    void add_silent(time_ns now, Gone gone, failed_batch& found) const {
        for (std::size_t i = 0; i < count_; ++i) {
            const probe_slot& slot = slots_[i];
            if (gone(slot.rank)) {
                continue;
            }
            if (slot.answered() || now < slot.deadline) {
                break;
            }
            found.add(slot.rank);
        }
    }

    // O(capacity^2) = 49 comparisons at most.
    void check() const {
        BTL_FT_ASSERT(count_ <= capacity, "more probes than the widest window");
        for (std::size_t i = 0; i < count_; ++i) {
            BTL_FT_ASSERT(slots_[i].rank != no_rank, "a probe slot without a rank");
            for (std::size_t j = i + 1; j < count_; ++j) {
                BTL_FT_ASSERT(slots_[i].rank != slots_[j].rank, "one rank probed in two slots");
            }
        }
    }

private:
    slots_t slots_{};
    std::size_t count_ = 0;
};

}  // namespace btl_ft
