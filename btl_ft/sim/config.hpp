// Everything one ftsim configuration is made of: the scenario timings of
// seed 002 Section 4.1, the network model, the failure injector and the
// optional faults used to show that the checkers can fail. Plain data; the
// command line fills it, the world reads it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "btl_ft/btl_ft.h"
#include "btl_ft/detector.hpp"
#include "btl_ft/types.hpp"

namespace btl_ft::sim {

inline constexpr time_ns ns_per_s = 1'000'000'000;

struct scenario {
    std::string_view name;
    time_ns period_ns;   // eta
    time_ns timeout_ns;  // delta
};

// lownoise: eta = 10 s, delta = 60 s; lowlat: eta = 0.1 s, delta = 1 s.
std::optional<scenario> find_scenario(std::string_view name);

enum class failure_law : std::uint8_t {
    forced,       // `failures` victims at once or spread over `window_ns`
    exponential,  // first at the end of warm-up, then lambda = alive / mtbf
};
enum class placement : std::uint8_t {
    random,       // distinct victims drawn uniformly
    consecutive,  // a victim, then its ring predecessors: Lemma 1's worst case
    consecutive_ranks,  // a victim, then the ranks below it: neighbours in rank order only (seed 003, Fig. 4)
};

// What a failure does to its victims. The victims of crash and hang are
// processes; those of node-loss and partition are whole nodes, and
// `failures` then counts nodes.
enum class fault_kind : std::uint8_t {
    crash,      // the process ends: no ticks, no sends, nothing received
    hang,       // SIGSTOP: no ticks, no sends; what arrives waits for a resume
    node_loss,  // every process of a node crashes at once
    partition,  // a set of nodes is cut off silently; both sides run on
};

// Named faults that void Theorem 1's preconditions; they exist so tests
// can show each checker failing.
struct fault_config {
    // One live process, drawn at random, stops talking for stall_ns from the
    // first failure time (the end of warm-up): starved of CPU, so its node
    // sees it starved (what a witness answers). What it sends meanwhile
    // leaves when it resumes.
    time_ns stall_ns = 0;
    // The stalled process is wedged instead: its detector silent while its
    // node sees it running, so the witness patience ends it.
    bool stall_wedged = false;
    double drop_message_probability = 0;  // an active message is lost
    bool any() const { return stall_ns > 0 || drop_message_probability > 0; }
};

// The libmpi defaults come from btl_ft.h, the one place the MCA
// parameters read them from too, so the simulator runs what MPI runs.
inline constexpr ring_order default_ring_order = static_cast<ring_order>(BTL_FT_DEFAULT_RING_ORDER);
inline constexpr propagator_kind default_propagator = static_cast<propagator_kind>(BTL_FT_DEFAULT_PROPAGATOR);

struct sim_config {
    rank_t nodes = 1024;  // processes (seed 002 calls them nodes)
    // Processes per node: ranks k*per_node .. (k+1)*per_node-1 share node k,
    // and a witness there answers for them. 1: every process alone on its
    // node, so no witness is ever asked (the detector without witnesses).
    rank_t per_node = 1;
    std::string scenario_name = "lownoise";
    time_ns period_ns = 10 * ns_per_s;
    time_ns timeout_ns = 60 * ns_per_s;
    time_ns tau_ns = 1000;  // message delays are uniform in [min_delay_ns, tau]
    // 1 ns: seed 002's (0, tau]. The unit tests' fake network sets a floor
    // (a message between two real hosts never takes no time).
    time_ns min_delay_ns = 1;
    bool one_port = false;
    propagator_kind propagator = default_propagator;
    // As libmpi builds it: ring::make over the node of every rank
    // (ring::make_grouped, with the nodes in this order, for `node`).
    ring_order order = default_ring_order;
    hierarchy_kind hierarchy = hierarchy_kind::flat;  // the seeds' model; libmpi's default is node
    std::uint32_t probe_width = BTL_FT_DEFAULT_PROBE_WIDTH;
    bool quorum = BTL_FT_DEFAULT_QUORUM != 0;
    bool witness = BTL_FT_DEFAULT_WITNESS != 0;
    time_ns node_grace_ns = BTL_FT_DEFAULT_NODE_GRACE_NS;
    fault_kind fault = fault_kind::crash;
    time_ns resume_after_ns = -1;      // hang: the victim resumes this long after; -1: never
    // The runtime (PMIx) tells the processes of other nodes that a crashed
    // process (crash, node-loss; never a hang or a cut) ended, this long
    // after; -1: it never does.
    time_ns runtime_confirms_ns = -1;
    // A crashed process's watcher, the node-mate before it (one pidfd,
    // mpi_ft_detector_watch_node), sees it end this long after; -1: never.
    time_ns node_watch_ns = -1;
    failure_law law = failure_law::forced;
    std::uint32_t failures = 1;  // forced count, or cap for exponential
    time_ns window_ns = 0;
    placement where = placement::random;
    double mtbf_s = 365.25 * 86400;  // mu_ind, per process
    time_ns warmup_ns = -1;          // -1: 2 eta
    time_ns settle_ns = -1;          // -1: 2 delta + eta
    time_ns horizon_ns = -1;         // -1: derived from the failure plan
    fault_config faults;
    // A second job joins (MPI_Comm_spawn, connect/accept): the last
    // `joiners` processes start at join_at() (each within one period) on
    // the detector of the union, and every process of the first job moves
    // from its own job's detector to the union's within one period of it
    // (membership.hpp, world_join.cpp). 0: one job.
    rank_t joiners = 0;
    time_ns join_at_ns = -1;      // -1: one period
    bool victims_joined = false;  // forced failures strike the joined job only
    // How many of the first job took part in the connect (its lowest
    // ranks; 0: all of them). The others learn of the join from a JOIN that
    // each of those sends before it moves (a spawn from MPI_COMM_SELF: 1).
    rank_t join_participants = 0;
    // How many jobs the joiners are, of joiners / join_jobs processes each.
    // With more than one, job k is spawned by process k of the first job
    // alone, all at once: each connect makes a union of its own at epoch 1,
    // and whoever hears of two merges them (membership.hpp).
    rank_t join_jobs = 1;

    rank_t first_joined() const { return nodes - joiners; }
    rank_t joined_job_size() const { return joiners / join_jobs; }
    // Whether a process of the first job takes part in the connect of
    // joined job k.
    bool joins_connect(rank_t process, rank_t k) const {
        if (join_jobs > 1) return process == k;
        return join_participants == 0 || process < join_participants;
    }
    // A process of the first job that took no part in the connect.
    bool left_out_of_join(rank_t process) const {
        return join_jobs == 1 && join_participants > 0 && process >= join_participants && process < first_joined();
    }
    time_ns join_at() const { return join_at_ns >= 0 ? join_at_ns : period_ns; }
    // When every process watches on the union's ring: all moved (one
    // period) and each new link past its first deadline (two timeouts and
    // the start skew). Failures come later, so the seeds' bounds apply.
    time_ns joined_by() const { return join_at() + 2 * period_ns + 2 * timeout_ns; }
    rank_t node_count() const { return (nodes + per_node - 1) / per_node; }
    std::uint32_t node_of(rank_t process) const { return process / per_node; }
    // Processes a failure strikes: one, or a whole node.
    bool strikes_nodes() const { return fault == fault_kind::node_loss || fault == fault_kind::partition; }
    // What every process's detector is given (self 0), built as libmpi
    // builds it (make_config), without the node of every rank, which the
    // world shares among all of them.
    detector_config detector_base() const;
    // Predecessors an observer watches at once, as the detector caps it.
    std::uint32_t effective_probe_width() const;
    // W: the longest an observer waits between its emitter's timeout and
    // the declaration. The PROBE went out confirm_lead() before the
    // timeout, so its window ends there (0 here) unless it is longer than
    // delta - eta; or the node grace (at least half a timeout) when it
    // asked a witness on another node that never answers (the emitter's
    // whole node is down or cut off).
    time_ns declaration_wait_ns() const;
    time_ns warmup() const {
        return warmup_ns >= 0 ? warmup_ns : joiners > 0 ? joined_by() + 2 * period_ns : 2 * period_ns;
    }
    time_ns settle() const { return settle_ns >= 0 ? settle_ns : 2 * timeout_ns + period_ns; }
    // How long after the first failure a run may take before it is declared
    // not stabilized (a completeness violation).
    time_ns horizon() const;
};

// Theorem 1 (seed 002): T(f) <= f(f+1) delta + f tau + f(f+1)/2 B(n), with
// B(n) = 8 tau log2 n, for f <= floor(log2 n) - 1. Here an observer PROBEs
// its silent emitter and declares it at most W after the timeout
// (sim_config::declaration_wait_ns; 0 without a silent node): every mending
// step lasts at most 2 delta + W <= 2 (delta + W), so delta becomes delta + W. Probing only
// shortens it: a step condemns its emitter and at least zero probed
// predecessors, never fewer than the one of Lemma 1.
double stabilization_bound_ns(std::uint32_t f, rank_t n, time_ns delta_ns, time_ns window_ns, time_ns tau_ns);

// A burst: every victim struck at one instant (a node loss, a cut), d the
// longest row of victims next to each other on the ring, w the probe
// width. The observer behind a row hears its last word at most tau after
// the burst, times out delta later and declares the first victim W after
// that; each later mending step (2 delta of grace, then W) condemns its
// new emitter and the w - 1 predecessors probed with it, so the row takes
// s = ceil((d - 1) / w) more steps, and one NEWOBSERVER (tau) closes the
// ring. Rows are mended in parallel, each by its own observer, and each
// step starts one broadcast of at most B(n):
//   T_burst <= (tau + delta + W) + s (2 delta + W) + tau + (1 + s) B(n).
// With the `node` ring order a node of at most n/2 processes never has two
// processes side by side, so d = 1 and a node loss is known in about
// delta + W + B(n), whatever the number of processes per node.
double burst_bound_ns(rank_t d, rank_t n, std::uint32_t width, time_ns delta_ns, time_ns window_ns, time_ns tau_ns);

// A process cut off with less than an eighth of the job, whose emitter is
// on the other side, stops within
//   T_stop <= (tau + delta + W) + W + Q
// of the cut (detector_census.cpp): its emitter's last word arrives at most
// tau after the cut, times out delta later, and the witness it asks on the
// emitter's node never answers (W, the node grace); the census it then
// starts gets no answer from the other side in its window (W again), and
// fewer than a quarter of its draws answer (an eighth expected, 256 draws:
// the census errs with probability 4·10^-8); the quorum wait Q follows.
// Without witnesses (one process per node) no census runs: only the count
// stops it, eventually.
time_ns census_stop_bound_ns(const sim_config& config, time_ns quorum_wait_ns);
std::uint32_t max_tolerated_failures(rank_t n);

}  // namespace btl_ft::sim
