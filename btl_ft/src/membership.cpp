// The union of connected jobs and its numbering (membership.hpp).
#include "btl_ft/membership.hpp"

#include <algorithm>
#include <array>

#include "btl_ft/assert.hpp"

namespace btl_ft {

namespace {

// FNV-1a over the jobs in the union's order.
std::uint64_t digest(std::span<const job_extent> jobs) {
    std::uint64_t hash = 14695981039346656037ull;
    const auto mix = [&hash](std::uint32_t value) {
        for (int shift = 0; shift < 32; shift += 8) {
            hash = (hash ^ ((value >> shift) & 0xffu)) * 1099511628211ull;
        }
    };
    for (const job_extent& extent : jobs) {
        mix(extent.job);
        mix(extent.size);
        mix(extent.since);
    }
    return hash;
}

// The union's order: by the epoch a job joined at, then by job.
bool before_in_union(const job_extent& a, const job_extent& b) {
    return a.since != b.since ? a.since < b.since : a.job < b.job;
}

}  // namespace

membership::membership(std::uint32_t job, rank_t size) : membership(of(std::array{job_extent{job, size, 0}})) {}

membership membership::joined(std::span<const job_extent> joining) const {
    std::vector<job_extent> jobs = jobs_;
    for (job_extent extent : joining) {
        if (!contains(extent.job)) {
            extent.since = epoch_ + 1;
            jobs.push_back(extent);
        }
    }
    return of(jobs);
}

membership membership::of(std::span<const job_extent> jobs) {
    membership next;
    std::vector<job_extent> sorted(jobs.begin(), jobs.end());
    // by job, the earliest since first: that one is kept
    std::sort(sorted.begin(), sorted.end(), [](const job_extent& a, const job_extent& b) {
        return a.job != b.job ? a.job < b.job : a.since < b.since;
    });
    sorted.erase(std::unique(sorted.begin(), sorted.end(),
                             [](const job_extent& a, const job_extent& b) { return a.job == b.job; }),
                 sorted.end());
    BTL_FT_ASSERT(!sorted.empty(), "a union of no job");
    std::sort(sorted.begin(), sorted.end(), before_in_union);
    next.jobs_ = std::move(sorted);
    for (std::size_t index = 0; index < next.jobs_.size(); ++index) {
        const job_extent& extent = next.jobs_[index];
        BTL_FT_ASSERT(extent.size > 0, "a job of no process");
        BTL_FT_ASSERT(next.size_ <= no_rank - 1 - extent.size, "the union has more processes than ranks can name");
        next.by_job_.insert(next.position_of(extent.job), index);
        next.first_rank_.push_back(next.size_);
        next.size_ += extent.size;
        next.epoch_ = std::max(next.epoch_, extent.since);
    }
    next.identity_ = digest(next.jobs_);
    return next;
}

membership membership::merged(const membership& a, const membership& b) {
    std::vector<job_extent> jobs = a.jobs_;
    jobs.insert(jobs.end(), b.jobs_.begin(), b.jobs_.end());
    return of(jobs);
}

std::vector<std::size_t>::const_iterator membership::position_of(std::uint32_t job) const {
    return std::lower_bound(by_job_.begin(), by_job_.end(), job,
                            [this](std::size_t index, std::uint32_t wanted) { return jobs_[index].job < wanted; });
}

bool membership::contains(std::uint32_t job) const {
    const auto at = position_of(job);
    return at != by_job_.end() && jobs_[*at].job == job;
}

bool membership::contains_all(const membership& other) const {
    return std::ranges::all_of(other.jobs_, [this](const job_extent& extent) { return contains(extent.job); });
}

std::optional<rank_t> membership::rank_of(member process) const {
    const auto at = position_of(process.job);
    if (at == by_job_.end() || jobs_[*at].job != process.job || process.rank >= jobs_[*at].size) {
        return std::nullopt;
    }
    return first_rank_[*at] + process.rank;
}

std::vector<rank_t> membership::ranks_not_in_every(std::span<const membership* const> unions) const {
    std::vector<rank_t> ranks;
    for (std::size_t index = 0; index < jobs_.size(); ++index) {
        const job_extent& extent = jobs_[index];
        if (!std::ranges::all_of(unions, [&extent](const membership* one) { return one->contains(extent.job); })) {
            for (rank_t rank = 0; rank < extent.size; ++rank) {
                ranks.push_back(first_rank_[index] + rank);
            }
        }
    }
    return ranks;
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

bool in_union_order(std::span<const job_extent> jobs) {
    if (std::adjacent_find(jobs.begin(), jobs.end(), [](const job_extent& a, const job_extent& b) {
            return !before_in_union(a, b);
        }) != jobs.end()) {
        return false;
    }
    std::vector<std::uint32_t> numbers;
    numbers.reserve(jobs.size());
    for (const job_extent& extent : jobs) numbers.push_back(extent.job);
    std::sort(numbers.begin(), numbers.end());
    return std::adjacent_find(numbers.begin(), numbers.end()) == numbers.end();
}

join_verdict verdict_on(const membership& watched, const membership& heard) {
    if (watched.contains_all(heard)) {
        return join_verdict::stale;
    }
    return heard.contains_all(watched) ? join_verdict::follow : join_verdict::merge;
}

}  // namespace btl_ft
