// From parsed options to the list of configurations to run, and the help
// text that documents every flag. Kept apart from the parser so each file
// has one job: cli.cpp reads words, this file gives them meaning.
#include <string>

#include "btl_ft/detector.hpp"
#include "cli.hpp"

namespace btl_ft::sim {

namespace {

// A join (world_join.cpp): failures strike once every process watches on
// the union's ring, so that the seeds' bounds apply to them.
std::string check_join(const sim_config& out) {
    if (out.joiners == 0) {
        if (out.join_participants > 0) return "--join-participants: no --join";
        if (out.join_jobs > 1) return "--join-jobs: no --join";
        return out.victims_joined ? "--join-victims joined: no --join" : std::string{};
    }
    if (out.join_participants > out.first_joined()) {
        return "--join-participants: " + std::to_string(out.join_participants) + " exceed the first job's " +
               std::to_string(out.first_joined()) + " processes";
    }
    if (out.join_jobs > 1) {
        if (out.joiners % out.join_jobs != 0) {
            return "--join-jobs: " + std::to_string(out.joiners) + " joined processes are not " +
                   std::to_string(out.join_jobs) + " jobs of one size";
        }
        if (out.join_jobs > out.first_joined() || out.join_jobs > 6) {
            return "--join-jobs: at most 6, and at most the first job's processes (one spawner each)";
        }
        if (out.join_participants > 0) {
            return "--join-participants: with --join-jobs, each job is spawned by one process";
        }
    }
    if (out.joiners >= out.nodes) {
        return "--join: " + std::to_string(out.joiners) + " joined processes leave no first job among " +
               std::to_string(out.nodes);
    }
    if (out.fault != fault_kind::crash && out.fault != fault_kind::hang) {
        return "--join: with --fault crash or hang only";
    }
    if (out.resume_after_ns >= 0) {
        return "--join: a hang that resumes is not simulated across a join (no --resume-after)";
    }
    if (out.join_at_ns >= 0 && out.join_at_ns < out.period_ns) {
        return "--join-at: before every process of the first job started (at least one eta)";
    }
    if (out.warmup_ns >= 0 && out.warmup_ns < out.joined_by()) {
        return "--warmup: failures must strike after the join settled, at least " +
               std::to_string(out.joined_by()) + " ns";
    }
    if (out.victims_joined && (out.law != failure_law::forced || out.failures > out.joiners)) {
        return "--join-victims joined: forced failures, at most the " + std::to_string(out.joiners) +
               " joined processes";
    }
    return {};
}

// Values that only make sense together with the fault and the job's size.
std::string check_fault(const sim_config& out, const std::string& failures) {
    if (out.per_node > out.nodes) {
        return "--ppn: " + std::to_string(out.per_node) + " processes per node exceed the " +
               std::to_string(out.nodes) + " processes";
    }
    if (out.strikes_nodes() && out.law == failure_law::forced && out.failures >= out.node_count()) {
        return "--failures: " + failures + " nodes leave no other node among " + std::to_string(out.node_count());
    }
    if (out.strikes_nodes() && (out.law == failure_law::exponential || out.where != placement::random)) {
        return "--fault: node-loss and partition strike random nodes at forced times (no --mtbf, no consecutive "
               "--failure-placement)";
    }
    if (out.resume_after_ns >= 0 && out.fault != fault_kind::hang) {
        return "--resume-after: only a hang (--fault hang) resumes";
    }
    if (out.resume_after_ns >= 0 && out.resume_after_ns < 2 * out.timeout_ns) {
        return "--resume-after: " + std::to_string(out.resume_after_ns) +
               " ns is shorter than two timeouts; the hang must be declared before it ends";
    }
    if (std::string error = check_join(out); !error.empty()) {
        return error;
    }
    if (out.runtime_confirms_ns >= 0 && out.runtime_confirms_ns > max_interval_ns) {
        return "--runtime-confirms-ms: too large";
    }
    if (out.node_watch_ns >= 0 && out.node_watch_ns > max_interval_ns) {
        return "--node-watch-ms: too large";
    }
    return {};
}

std::string make_config(const cli_options& options, rank_t nodes, const std::string& failures,
                        std::string_view scenario_name, propagator_kind propagator, sim_config& out) {
    out = options.base;
    out.nodes = nodes;
    const scenario timing = *find_scenario(scenario_name);
    out.scenario_name = std::string(scenario_name);
    out.period_ns = options.eta_ns.value_or(timing.period_ns);
    out.timeout_ns = options.delta_ns.value_or(timing.timeout_ns);
    out.propagator = propagator;
    out.law = options.exponential ? failure_law::exponential : failure_law::forced;
    if (failures == "max") {
        out.failures = std::max<std::uint32_t>(1, max_tolerated_failures(nodes));
    } else {
        out.failures = static_cast<std::uint32_t>(std::stoul(failures));
    }
    if (out.law == failure_law::forced && !out.strikes_nodes() && out.failures >= nodes) {
        return "--failures: " + failures + " failures leave no survivor among " + std::to_string(nodes) +
               " processes";
    }
    if (std::string error = check_fault(out, failures); !error.empty()) {
        return error;
    }
    if (out.timeout_ns <= out.period_ns) {
        return "--delta: the timeout (" + std::to_string(out.timeout_ns) + " ns) must exceed the period --eta (" +
               std::to_string(out.period_ns) + " ns)";
    }
    return {};
}

}  // namespace

cli_expansion expand(const cli_options& options) {
    const std::vector<std::string> failures = options.failures.empty() ? std::vector<std::string>{"1"}
                                                                       : options.failures;
    const std::vector<std::string> scenarios = options.scenarios.empty() ? std::vector<std::string>{"lownoise"}
                                                                         : options.scenarios;
    const std::vector<propagator_kind> propagators =
        options.propagators.empty() ? std::vector<propagator_kind>{propagator_kind::hba} : options.propagators;
    cli_expansion result;
    for (const std::string& scenario_name : scenarios) {
        for (const propagator_kind propagator : propagators) {
            for (const rank_t nodes : options.nodes) {
                for (const std::string& count : failures) {
                    sim_config config;
                    std::string error = make_config(options, nodes, count, scenario_name, propagator, config);
                    if (!error.empty()) {
                        return {{}, error};
                    }
                    result.configs.push_back(std::move(config));
                }
            }
        }
    }
    return result;
}

std::string help_text() {
    return R"(ftsim - discrete-event simulator of the btl_ft failure detector (seed 002, Section 4)

Usage:
  ftsim --nodes N --failures F --scenario lownoise|lowlat --propagator hba|bmg|chord --runs R --seed S [options]
  ftsim --swim --nodes N --runs R --seed S
  ftsim allreduce --nodes N [options]   (the survivor allreduce, seed 001: ftsim allreduce --help)

Drives the real btl_ft::detector state machines: heartbeats on the observation
ring, ring mending and failure notices, with message delays uniform in (0, tau].
Prints one JSON line per configuration (lists multiply: --nodes 1024,4096).
Checks every run: accuracy (no live process declared dead), completeness (every
failure reaches every survivor, the ring is mended), that a failed process that
runs again (a resumed hang, the losing side of a cut) stops, and the bounds, with
W the wait after the timeout (0: the confirmation PROBE goes out before it; the
node grace, at least delta/2, with witnesses and --ppn above 1) and B(n) = 8 tau log2 n:
  crash, hang (Theorem 1, f <= floor(log2 n)-1):
    T(f) <= f(f+1)(delta + W) + f tau + f(f+1)/2 B(n)
  node-loss, partition (every victim at one instant; d = longest row of victims
  on the ring, w = probe width, s = ceil((d-1)/w)):
    T <= (tau + delta + W) + s(2 delta + W) + tau + (1 + s) B(n)
  partition, a cut side under 1/8 of the job (--ppn above 1, witnesses on): each of
  its processes watching one across the cut stops, by its census, within
    T_stop <= (tau + delta + W) + W + Q     (Q: the quorum wait, 0.5 s)
Any violation is printed on stderr with the seed that replays it (--runs 1).

Configuration:
  --nodes N[,N..]         processes, 2..2^26; also 2^K (required)
  --failures F[,F..]      forced failures, or 'max' = floor(log2 N) - 1 (default 1);
                          with --mtbf: the most failures one run may see
  --scenario S[,S..]      lownoise (eta 10 s, delta 60 s, default) or lowlat (eta 0.1 s, delta 1 s)
  --propagator P[,P..]    notice overlay: hba (default), bmg, chord
  --runs R                runs per configuration (default 10)
  --seed S                64-bit seed, decimal or 0x-hex (default 1); run r+1 uses a seed derived from run r
  --ppn K                 K consecutive ranks per node, as mpirun maps by slot (default 1);
                          the ring orders node and shuffle are built from it as in libmpi,
                          and a silent emitter's node witnesses whether it still runs
  --swim                  SWIM random probing instead (Section 4.3): rounds until every
                          process is probed, and the most probes on one process per round

Network and ring:
  --tau D                 upper bound of the uniform message delay (default 1us)
  --one-port              a process sends and/or receives one message at a time
  --ring-order O          rank, node (libmpi's default: neighbours on different nodes), shuffle
  --hierarchy H           flat (the default: the seeds' model) or node (libmpi's default):
                          node-mates observe each other, heartbeats and notices cross
                          nodes once per node (seed 000)
  --probe-width K         predecessors watched at once when mending, 1..8 (default: libmpi's, 8;
                          capped at floor(log2 N)); 1 = one at a time as in seed 002
  --quorum on|off         the side of a cut with fewer than half of the processes stops
                          (default: libmpi's, on)
  --witness on|off        ask a silent emitter's node whether it still runs (default: libmpi's, on)
  --eta D                 override the scenario's heartbeat period
  --delta D               override the scenario's suspicion timeout (must exceed eta)

Failures:
  --fault F               what a failure is (default crash):
                            crash      the process ends
                            hang       it stops (SIGSTOP): no ticks, no sends, what reaches it waits
                            node-loss  every process of a node crashes at once; --failures counts nodes
                            partition  --failures nodes are cut off at once, silently; the side with
                                       fewer than half of the processes must stop (quorum rule)
  --resume-after D        a hung process resumes after D (at least 2 delta) and must learn that it
                          was declared failed, within delta
  --runtime-confirms-ms X the runtime reports a crash (crash, node-loss; not a hang or a cut) to
                          the processes of other nodes X ms after it (default: never)
  --node-watch-ms X       the processes of a crashed process's own node see it end X ms after the
                          crash (mpi_ft_detector_watch_node's pidfds; default: never)
  --failure-placement P   random (default), consecutive (victim, then its ring predecessors) or
                          consecutive-ranks (victim, then the ranks below it: seed 003's sequential failures)
  --window D              spread forced failures uniformly over D after the first (default 0: at once)
  --mtbf D                exponential failures, lambda = alive/D (per-process MTBF, e.g. 1y);
                          the first strikes at the end of warm-up, injection stops once stable
  --warmup D              time before the first failure (default 2 eta; with --join, 4 eta +
                          2 delta after the join, and at least 2 eta + 2 delta after it)
  --join M                the last M processes are a second job that joins the first (a spawn,
                          a connect/accept) at --join-at D (default eta): they start then on
                          the detector of the union, and each process of the first job moves to
                          it within one eta (crash and hang faults, struck after the join)
  --join-victims W        any (default) or joined: forced failures strike the joined job only
  --join-participants P   only the first job's P lowest ranks take part in the connect (a spawn
                          from MPI_COMM_SELF: 1); each sends the others a JOIN before it moves,
                          and they move when it arrives (default: all take part)
  --join-jobs K           the M joined processes are K jobs of M/K (at most 6), job k spawned
                          by process k of the first job alone, all at once: each spawner sends
                          the others a JOIN, and whoever hears two unions merges them
  --settle D              simulated time kept after stabilisation (default 2 delta + eta)
  --horizon D             longest time after the first failure before a run counts as
                          not stabilised (default from the failure plan)

Faults that void Theorem 1 (to see the checkers fail):
  --stall D               one random live process is starved for D from the end of warm-up
                          (a false suspicion when D > delta - eta and it has no
                          node-mate, --ppn 1, to witness it starved)
  --wedge D               the same, but its node sees it running: its detector is wedged
                          (a false suspicion when D > delta - eta, or with --ppn
                          above 1, when D > max(4 delta, 1 s))
  --drop-messages P       an active message (NEWOBSERVER, notice) is lost with probability P

Durations take a unit: ns, us, ms, s, min, h, d, y (e.g. 1us, 0.1s, 1y).

Exit status: 0 all checks passed, 1 a checker found a violation, 2 bad command line.
  --help                  this text
)";
}

}  // namespace btl_ft::sim
