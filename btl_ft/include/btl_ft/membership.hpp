// Who one detector watches: the union of the jobs an application is
// connected to (its own, then each job it spawns, connects to or accepts),
// the jobs in the order they joined and each job's ranks in order, so that
// a join never moves a process already watched: those that took no part in
// it can follow without renumbering anything (a JOIN). Every process of the
// union lists the jobs alike, since each learns them from the same lists
// (the views two unions exchange, a JOIN). A join makes the next
// membership, one epoch later; the detector over it is a new one, which
// starts knowing the failures the old one knew
// (detector_config::known_failures).
//
// The epoch names the detector a message belongs to. Ranks mean different
// processes in two epochs, so the transport delivers a message to the
// detector of its sender's epoch only and drops the others: the core never
// sees a message of another membership. A process that moves to the next
// epoch first leave()s the old detector, so that its old observer, which
// may not have moved yet, does not take its silence for a failure.
//
// Rejected: one ring per job with notices crossing between the jobs. A
// job of one process, or a job whose processes all hang together, has
// nobody to observe it; on one ring every process has an observer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "btl_ft/types.hpp"

namespace btl_ft {

// One job of the union: its identifier (the same at every process, e.g.
// PMIx's job number) and its size.
struct job_extent {
    std::uint32_t job = 0;
    rank_t size = 0;
    friend bool operator==(const job_extent&, const job_extent&) = default;
};

// A process of the union, named as its job names it.
struct member {
    std::uint32_t job = 0;
    rank_t rank = 0;
    friend bool operator==(const member&, const member&) = default;
};

// A failure known before a join, carried into the new detector.
struct known_failure {
    rank_t rank = 0;
    failure_kind kind = failure_kind::suspected;
    friend bool operator==(const known_failure&, const known_failure&) = default;
};

class membership {
public:
    // One job: the membership of MPI_COMM_WORLD at start, epoch 0.
    membership(std::uint32_t job, rank_t size);

    // The union with `joining` (jobs already in are ignored), one epoch
    // later: the jobs already in keep their ranks, and each new job's
    // ranks follow, together and in order, in the order listed.
    membership joined(std::span<const job_extent> joining) const;

    // The union of `jobs` in the order listed (a job listed twice counts
    // once, where it was first listed) at `epoch`: what two unions that
    // connect both compute from each other's jobs and epochs, the later
    // epoch plus one, when they list them in the same order.
    static membership of(std::span<const job_extent> jobs, std::uint32_t epoch);

    std::uint32_t epoch() const { return epoch_; }
    rank_t size() const { return size_; }
    std::span<const job_extent> jobs() const { return jobs_; }
    bool contains(std::uint32_t job) const;

    // The union rank of a process, or nothing when its job is not in.
    std::optional<rank_t> rank_of(member process) const;
    member member_at(rank_t rank) const;  // rank < size()

    // Failures another membership knew (ranks of `before`), in this one's
    // ranks, sorted; processes not in this membership are left out.
    std::vector<known_failure> carried(const membership& before, std::span<const known_failure> failures) const;

private:
    membership() = default;
    // Where `job` is, or would go, in by_job_.
    std::vector<std::size_t>::const_iterator position_of(std::uint32_t job) const;
    std::vector<job_extent> jobs_;      // in the order they joined, unique
    std::vector<std::size_t> by_job_;   // indices into jobs_, sorted by job
    std::vector<rank_t> first_rank_;    // union rank of each job's rank 0
    rank_t size_ = 0;
    std::uint32_t epoch_ = 0;
};

}  // namespace btl_ft
