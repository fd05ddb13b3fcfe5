// Who one detector watches: the union of the jobs an application is
// connected to (its own, then each job it spawns, connects to or accepts).
// Each job carries the epoch at which it joined (`since`), and the union
// lists its jobs by (since, job), each job's ranks in order: a join stamps
// its new jobs one epoch past every job already in, so it never moves a
// process already watched, and those that took no part in it can follow
// without renumbering (a JOIN). The union's epoch is its latest `since`.
//
// The union is a function of its jobs alone, so two unions made at once
// from one (two spawns from MPI_COMM_SELF by two processes of a job, both
// at the same epoch) are merged by whoever hears of both into the same
// union everywhere: merged() is commutative, associative and idempotent
// (a job listed twice keeps its earliest `since`). Merging renumbers the
// processes of the jobs that sort after a job they did not know; the
// identity tells such unions of one epoch apart on the wire.
//
// The epoch and identity name the detector a message belongs to. Ranks
// mean different processes in two unions, so the transport delivers a
// message to the detector of its sender's union only and drops the others:
// the core never sees a message of another membership. A process that
// moves to the next union first leave()s the old detector, so that its old
// observer, which may not have moved yet, does not take its silence for a
// failure.
//
// Rejected: one ring per job with notices crossing between the jobs. A
// job of one process, or a job whose processes all hang together, has
// nobody to observe it; on one ring every process has an observer.
// Rejected: ordering by job number alone. A job started apart and accepted
// later may have a lower number, and every process of the union would
// renumber at each such join.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "btl_ft/types.hpp"

namespace btl_ft {

// One job of the union: its identifier (the same at every process, e.g.
// PMIx's job number), its size and the epoch at which it joined.
struct job_extent {
    std::uint32_t job = 0;
    rank_t size = 0;
    std::uint32_t since = 0;
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

    // The union with `joining` (jobs already in are ignored; the others
    // are stamped one epoch later): the jobs already in keep their ranks,
    // and the new jobs' ranks follow, by job number.
    membership joined(std::span<const job_extent> joining) const;

    // The union of `jobs` by (since, job), a job listed twice counting once
    // with its earliest `since`: what every process computes alike from the
    // same jobs, whatever order they came in.
    static membership of(std::span<const job_extent> jobs);

    // The union of two unions, the same whichever is `a` (see above).
    static membership merged(const membership& a, const membership& b);

    std::uint32_t epoch() const { return epoch_; }
    // A digest of the jobs: two unions of one epoch differ in it unless a
    // 64-bit hash collides.
    std::uint64_t identity() const { return identity_; }
    rank_t size() const { return size_; }
    std::span<const job_extent> jobs() const { return jobs_; }
    bool contains(std::uint32_t job) const;
    // Whether every job of `other` is in this union.
    bool contains_all(const membership& other) const;
    // This union's ranks whose job is missing from one of `unions`: whom a
    // process that merged them into this union tells of it (those of a job
    // in all of them learn of every one themselves).
    std::vector<rank_t> ranks_not_in_every(std::span<const membership* const> unions) const;

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
    std::uint64_t identity_ = 0;
};

// Whether `jobs` are listed as a union lists them: by (since, job), each
// job once.
bool in_union_order(std::span<const job_extent> jobs);

// What a process watching `watched` does with a JOIN naming `heard`.
enum class join_verdict {
    stale,   // every job it names is watched already: drop it
    follow,  // it names every watched job and more: move to `heard`
    merge,   // each names jobs the other lacks: move to merged(), and tell
             // the processes of the jobs in one but not the other
};
join_verdict verdict_on(const membership& watched, const membership& heard);

}  // namespace btl_ft
