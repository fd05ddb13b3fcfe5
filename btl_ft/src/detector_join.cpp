// JOIN (membership.hpp): a connect made a new union, and the processes of
// the old one that took no part in it (a spawn from MPI_COMM_SELF in a job
// of several processes) learn of it from those that did, before these
// leave. A process left out would never move, and the new union would take
// its silence for a failure; its job-mates would keep watching nobody of
// the joined job.
//
// The JOIN goes straight from each sender to each process left out, not
// along an overlay: a connect is rare, the message is small, and the senders
// are every process of the old union that took part, so that one of them
// dying does not keep the others from hearing.
#include "detector_state.hpp"

namespace btl_ft {

// The JOIN with as many of the known failures as fit, the lowest ranks
// first; empty when the jobs alone do not fit.
std::vector<std::byte> detector::state::join_bytes(const join_notice& next, std::size_t& carried) const {
    std::vector<std::byte> bytes;
    const auto encode = [&](std::size_t count) {
        wire::encode_join({next.epoch, next.jobs, next.known.first(count)}, bytes);
        return bytes.size() <= config.max_message_bytes;
    };
    carried = next.known.size();
    if (encode(carried)) {
        return bytes;
    }
    std::size_t fits = 0, too_many = carried;  // encode(fits) is unknown only for fits == 0
    while (too_many - fits > 1) {
        const std::size_t middle = fits + (too_many - fits) / 2;
        (encode(middle) ? fits : too_many) = middle;
    }
    carried = fits;
    if (!encode(fits)) {
        bytes.clear();
    }
    return bytes;
}

long detector::state::announce_join(const join_notice& next, std::span<const rank_t> to) {
    std::size_t carried = 0;
    const std::vector<std::byte> bytes = join_bytes(next, carried);
    if (bytes.empty()) {
        return -1;
    }
    for (const rank_t rank : to) {
        if (rank < config.size && rank != self() && !dead.contains(rank)) {
            net.send(rank, bytes);
            ++stats.joins_sent;
        }
    }
    return static_cast<long>(carried);
}

void detector::state::on_join(rank_t from, const wire::message& msg) {
    ++stats.joins_received;
    out.on_join(from, {msg.epoch, msg.jobs, msg.known});
}

}  // namespace btl_ft
