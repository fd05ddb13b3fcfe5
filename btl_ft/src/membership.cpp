// The union of connected jobs and its numbering (membership.hpp).
#include "btl_ft/membership.hpp"

#include <algorithm>

#include "btl_ft/assert.hpp"

namespace btl_ft {

membership::membership(std::uint32_t job, rank_t size) : jobs_{{job, size}}, by_job_{0}, first_rank_{0}, size_(size) {
    BTL_FT_ASSERT(size > 0, "a job of no process");
}

membership membership::joined(std::span<const job_extent> joining) const {
    std::vector<job_extent> jobs = jobs_;
    jobs.insert(jobs.end(), joining.begin(), joining.end());
    return of(jobs, epoch_ + 1);
}

membership membership::of(std::span<const job_extent> jobs, std::uint32_t epoch) {
    membership next;
    for (const job_extent& extent : jobs) {
        BTL_FT_ASSERT(extent.size > 0, "a job of no process");
        const auto at = next.position_of(extent.job);
        if (at == next.by_job_.end() || next.jobs_[*at].job != extent.job) {
            next.by_job_.insert(at, next.jobs_.size());
            next.jobs_.push_back(extent);
        }
    }
    BTL_FT_ASSERT(!next.jobs_.empty(), "a union of no job");
    for (const job_extent& extent : next.jobs_) {
        BTL_FT_ASSERT(next.size_ <= no_rank - 1 - extent.size, "the union has more processes than ranks can name");
        next.first_rank_.push_back(next.size_);
        next.size_ += extent.size;
    }
    next.epoch_ = epoch;
    return next;
}

std::vector<std::size_t>::const_iterator membership::position_of(std::uint32_t job) const {
    return std::lower_bound(by_job_.begin(), by_job_.end(), job,
                            [this](std::size_t index, std::uint32_t wanted) { return jobs_[index].job < wanted; });
}

bool membership::contains(std::uint32_t job) const {
    const auto at = position_of(job);
    return at != by_job_.end() && jobs_[*at].job == job;
}

std::optional<rank_t> membership::rank_of(member process) const {
    const auto at = position_of(process.job);
    if (at == by_job_.end() || jobs_[*at].job != process.job || process.rank >= jobs_[*at].size) {
        return std::nullopt;
    }
    return first_rank_[*at] + process.rank;
}

member membership::member_at(rank_t rank) const {
    BTL_FT_ASSERT(rank < size_, "a rank beyond the membership");
    const auto after = std::upper_bound(first_rank_.begin(), first_rank_.end(), rank);
    const auto index = static_cast<std::size_t>(after - first_rank_.begin()) - 1;
    return {jobs_[index].job, rank - first_rank_[index]};
}

std::vector<known_failure> membership::carried(const membership& before,
                                               std::span<const known_failure> failures) const {
    std::vector<known_failure> out;
    for (const known_failure& failure : failures) {
        if (const auto rank = rank_of(before.member_at(failure.rank))) {
            out.push_back({*rank, failure.kind});
        }
    }
    std::sort(out.begin(), out.end(), [](const known_failure& a, const known_failure& b) { return a.rank < b.rank; });
    return out;
}

}  // namespace btl_ft
