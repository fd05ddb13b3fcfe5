"""ulfm_agree across emulated nodes, with one injected fault, as a test.

  netns_scenario.py --kind none|crash|hang|stop-ranks|kill-ranks|kill-node|cut|cut-blackhole|stop-victims
                    [--nodes 2] [--np 4] [--victims 3] [--lost-nodes 1] [--variant ompi|ompi-stock]
                    [--expect pass|report] [--deadline-s 20] [--mca KEY=VALUE]
                    [--summary crashed|hung|lost]

crash: the victims kill themselves (SIGKILL); hang: they stop themselves
(SIGSTOP), each when it next leaves MPIX_Comm_agree, so several victims stop
some time apart; stop-victims: they are stopped from outside, all at one
instant. The node losses hit the last node (the last --lost-nodes
nodes, at the same instant) from outside once its ranks compute: stop-ranks stops its MPI ranks
(SIGSTOP: a hung node), kill-ranks kills them,
kill-node every process in it (prted too), cut and cut-blackhole isolate it
silently (see nodes.cut_link). Checks are scenario.py's, plus for a cut: the
cut node's ranks have stopped (they must not go on as a second set of
survivors) a few seconds after the cut; with --summary, mpirun's summary
line names every victim as crashed, hung (fenced) or lost with its node
(tests/mpi/failure_summary.py, check_summary). --expect report
prints what happened without failing on it (a fault the build under test is
not expected to survive). Exit 77 (ctest: skipped) when namespaces cannot be
made or the build has no mpirun.
"""
import argparse
import json
import signal
import sys
import threading
import time
from pathlib import Path

from mpijobs import nodes
from tests.mpi import scenario
from tests.mpi import failure_summary
from mpijobs import checks, launch, mpicmd, paths, stuck

EXTERNAL = ("stop-ranks", "kill-ranks", "kill-node", "cut", "cut-blackhole", "stop-victims")


def parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", choices=["none", "crash", "hang", *EXTERNAL], required=True)
    p.add_argument("--nodes", type=int, default=2)
    p.add_argument("--np", type=int, default=4)
    p.add_argument("--victims", default=None,
                   help="crash, hang and stop-victims only; default: the last rank")
    p.add_argument("--lost-nodes", type=int, default=1, help="node losses only: how many nodes, the last ones")
    p.add_argument("--variant", default="ompi", help="build/VARIANT; env BTL_FT_OMPI_PREFIX wins")
    p.add_argument("--expect", choices=["pass", "report"], default="pass")
    p.add_argument("--deadline-s", type=int, default=20, help="per-rank bound on detection")
    p.add_argument("--slack-s", type=int, default=30, help="mpirun's bound is deadline + slack")
    p.add_argument("--mca", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--detached", action="store_true",
                   help="each node's daemon in a session of its own, as PRRTE does by default "
                        "(nodes.mpirun_command_netns)")
    p.add_argument("--source", default=str(paths.ROOT / "tests" / "mpi" / "ulfm_agree.c"),
                   help="a program with ulfm_agree's options and output")
    p.add_argument("--name", default=None)
    p.add_argument("--linger-s", type=float, default=0,
                   help="survivors go on this long on the shrunk communicator after recovering")
    p.add_argument("--summary", choices=["crashed", "hung", "lost"], default=None,
                   help="check mpirun's summary line names every victim so")
    p.add_argument("--agreed-within-ms", type=float, default=None,
                   help="every survivor agreed on the victims within this long of the injection "
                        "(a protocol's bound in timeouts, with room for this machine's stalls)")
    return p


def parse():
    return parser().parse_args()


def job_args(kind, **fields):
    """The options of one scenario as the command line would give them, for
    the benchmarks that run jobs of their own: an option added here later
    gets its default there too."""
    args = parser().parse_args(["--kind", kind])
    unknown = set(fields) - set(vars(args))
    if unknown:
        raise TypeError(f"netns_scenario has no option {sorted(unknown)}")
    vars(args).update(fields)
    return args


def victims_of(args):
    if args.kind == "none":
        return []
    if args.kind in ("crash", "hang", "stop-victims"):
        return [int(v) for v in (args.victims or str(args.np - 1)).split(",")]
    return [rank for index in lost_node_indexes(args) for rank in nodes.ranks_on(index, args.np, args.nodes)]


def lost_node_indexes(args):
    count = args.lost_nodes
    if not 1 <= count < args.nodes:
        raise SystemExit(f"--lost-nodes {count}: must leave at least one of {args.nodes} nodes")
    return range(args.nodes - count, args.nodes)


class Injector(threading.Thread):
    """Waits until the lost nodes compute, then injects the node loss into
    each, one right after the other, and writes when (CLOCK_MONOTONIC, which
    ulfm_agree reads) to the inject file. For a cut, also records which
    reset/unreachable counters moved in every namespace during the window
    the survivors have to notice it."""

    def __init__(self, args, lost, exe, victims, inject_file, all_nodes):
        super().__init__(daemon=True)
        self.args, self.lost, self.exe, self.victims = args, lost, str(exe), victims
        self.inject_file, self.all_nodes = inject_file, all_nodes
        self.notes = {}
        self.job_ended = threading.Event()

    def run(self):
        try:
            self._inject()
        except Exception as e:      # reported as a problem, not lost on stderr
            self.notes["error"] = f"injection failed: {e!r}"

    def _inject(self):
        start = time.monotonic()
        for node in self.lost:
            ranks = nodes.ranks_on(self.all_nodes.index(node), self.args.np, len(self.all_nodes))
            if not nodes.wait_started(node, self.exe, ranks, self.args.deadline_s,
                                      alone=len(self.all_nodes) == 1):
                self.notes["error"] = f"{node} never ran ranks {ranks} talking to another node"
                return
        # ulfm_agree's start-up MPI_Barrier is not fault tolerant: a loss there
        # can leave survivors waiting on a live peer for ever. The barrier ends
        # within milliseconds of the first cross-node connection; this margin
        # puts the loss in the agreement loop. Nothing is timed from here.
        time.sleep(0.5)
        namespaces = [nodes.HEAD, *self.all_nodes]
        before = {ns: nodes.net_counters(ns) for ns in namespaces}
        kind = self.args.kind
        # found before the instant is taken: the signals then follow it at
        # once, and hit every lost node within microseconds
        ranks = {pid: rank for pid, rank in nodes.ranks_of_nodes(self.lost, self.exe).items()
                 if rank in self.victims}
        everything = nodes.processes_of_nodes(self.lost) if kind == "kill-node" else list(ranks)
        Path(self.inject_file).write_text(f"{time.monotonic_ns()}\n")
        self.notes["injected_after_s"] = round(time.monotonic() - start, 2)
        if kind in ("stop-ranks", "stop-victims"):
            nodes.signal_all(ranks, signal.SIGSTOP)
            self.notes["stopped_ranks"] = sorted(ranks.values())
        elif kind in ("kill-ranks", "kill-node"):
            nodes.signal_all(everything, signal.SIGKILL)
            if kind == "kill-node":   # a daemon's children that appeared meanwhile
                nodes.kill_node(self.lost)
            self.notes["killed_ranks"] = sorted(ranks.values())
            self._snapshot_if_slow()
        else:
            for node in self.lost:
                nodes.cut_link(node, "blackhole" if kind == "cut-blackhole" else "down")
            time.sleep(max(1, self.args.deadline_s - 3))   # ranks give up at deadline_s
            self.notes["counter_deltas"] = _deltas(before, namespaces)
            # the cut side must have stopped (fenced) by now, not carried on
            self.notes["cut_side_running"] = sorted(r for node in self.lost
                                                    for r in nodes.rank_processes(node, self.exe).values())

    def _snapshot_if_slow(self):
        """The runtime sees killed processes at once and the survivors agree
        within milliseconds (within δ plus the node grace if it does not):
        survivors still running 2δ + 1 s after the kill are stuck somewhere.
        (Survivors told to linger are given that much longer.)
        Where each of their threads waits is then kept for the report: a
        survivor stayed silent for 4 s and was declared failed, about 1 run in
        50, until these stacks showed a deadlock in btl/tcp (patch 0039).
        gdb stops each survivor it reads (state t), and their detectors then
        declare it hung: failures reported after a snapshot are its doing."""
        mca = dict(kv.split("=", 1) for kv in self.args.mca)
        delta_s = float(mca.get("mpi_ft_detector_timeout", 1.0))
        # gdb stops the process it reads (ptrace): never while it should run
        if self.job_ended.wait(2 * delta_s + 1 + self.args.linger_s):
            return
        survivors = {pid: rank for ns in self.all_nodes if ns not in self.lost
                     for pid, rank in nodes.rank_processes(ns, self.exe).items()}
        if survivors:
            self.notes["slow_survivors"] = {
                f"rank {rank}": {"threads": stuck.thread_states(pid), "gdb": stuck.user_stacks(pid)}
                for pid, rank in sorted(survivors.items(), key=lambda x: x[1])}


def _deltas(before, namespaces):
    out = {}
    for ns in namespaces:
        after = nodes.net_counters(ns)
        changed = {k: after[k] - v for k, v in before[ns].items() if after[k] != v}
        if changed:
            out[ns] = changed
    return out


def outcome(run, overrun_notes):
    """One line saying what happened, for reports."""
    survivors = [r for r in run.records if "agreed_ms" in r]
    errors = [r for r in run.records if "error" in r]
    finished = [r for r in run.records if "rounds" in r]
    if "lost communication with a remote daemon" in run.output:
        what = "PRRTE aborted the job: it lost communication with a remote daemon"
    elif survivors:
        ms = sorted(r["agreed_ms"] for r in survivors)
        what = f"{len(survivors)} survivors agreed on {survivors[0]['failed']}, agreed_ms {ms[0]:.1f}..{ms[-1]:.1f}"
    elif errors:
        what = f"{len(errors)} ranks reported errors, e.g. {errors[0]['error']!r}"
    else:
        what = f"{len(finished)} ranks finished without failure"
    if run.timed_out:
        alive = overrun_notes.get("still_running", {})
        end = f"at the bound, still running: {alive or 'nothing in our namespaces'}"
    else:
        end = f"mpirun exited {run.returncode}"
    return f"{what}; {end}; {run.wall_s:.1f} s"


def run_job(args, names, exe, victims):
    inject = mpicmd.inject_file()
    kind = {"none": "none", "crash": "crash", "hang": "hang"}.get(args.kind, "external")
    program = [exe, "--victims", ",".join(map(str, victims)) or "0", "--kind", kind,
               "--inject-after-ms", 400, "--inject-file", inject, "--deadline-s", args.deadline_s,
               "--linger-s", args.linger_s]
    mca = dict(kv.split("=", 1) for kv in args.mca)
    cmd = nodes.mpirun_command_netns(args.np, program, mca=mca, variant=args.variant, nodes=args.nodes,
                                     detached=args.detached)
    if args.kind == "stop-victims":
        per_node = nodes.ranks_per_node(args.np, args.nodes)
        lost = sorted({names[v // per_node] for v in victims}, key=names.index)
    else:
        lost = [names[index] for index in lost_node_indexes(args)] if kind == "external" else []
    injector = Injector(args, lost, exe, victims, inject, names) if kind == "external" else None
    overrun_notes = {}

    def on_overrun():
        # who was still there says whether mpirun or only a cut node hung
        overrun_notes["still_running"] = {
            ns: sorted({_comm(p) for p in nodes.pids_in(ns)}) for ns in [nodes.HEAD, *names]
            if nodes.pids_in(ns)}
        nodes.reap(names)

    try:
        if injector:
            injector.start()
        run = launch.run(cmd, deadline_s=args.deadline_s + args.slack_s,
                          on_overrun=on_overrun)
        if injector:
            injector.job_ended.set()
            injector.join(timeout=args.deadline_s)
    finally:
        nodes.reap(names)
        Path(inject).unlink(missing_ok=True)
    return run, (injector.notes if injector else {}), overrun_notes


def _comm(pid):
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def late_agreements(args, run):
    """Survivors that agreed later than --agreed-within-ms after the
    injection (or whose injection time is unknown)."""
    if args.agreed_within_ms is None:
        return []
    late = [(r["rank"], r["agreed_ms"]) for r in run.records
            if "agreed_ms" in r and not 0 <= r["agreed_ms"] <= args.agreed_within_ms]
    return [f"rank {rank} agreed {ms:.0f} ms after the injection, over {args.agreed_within_ms:.0f} ms"
            for rank, ms in late]


def main():
    args = parse()
    mpirun = paths.prefix(args.variant) / "bin" / "mpirun"
    if not mpirun.exists():
        print(f"SKIPPED: no {mpirun} (make stock / make ompi, or set BTL_FT_OMPI_PREFIX)")
        return nodes.SKIP
    victims = victims_of(args)
    exe = mpicmd.compile_test(args.source, args.variant)
    with nodes.taken_for_a_test(args.nodes) as names:
        if names is None:
            return nodes.SKIP
        run, notes, overrun_notes = run_job(args, names, exe, victims)

    name = args.name or f"{args.kind}-{args.nodes}nodes-np{args.np}"
    save(name, args, run)
    check_args = argparse.Namespace(np=args.np, kind="none" if args.kind == "none" else "crash",
                                    deadline_s=args.deadline_s)
    bound = f"mpirun overran its bound of {args.deadline_s + args.slack_s} s"
    problems = [bound if p.startswith("mpirun overran") else p
                for p in scenario.check(check_args, run, victims)]
    if "error" in notes:
        problems.insert(0, notes["error"])
    if notes.get("cut_side_running"):
        problems.append(f"ranks {notes['cut_side_running']} of the cut node still ran "
                        f"{max(1, args.deadline_s - 3)} s after the cut: a second set of survivors")
    problems += linger_problems(args, run, victims)
    problems += late_agreements(args, run)
    if notes.get("killed_ranks") not in (None, victims):
        problems.append(f"killed ranks {notes['killed_ranks']}, expected {victims}")
    if args.summary:
        per_node = nodes.ranks_per_node(args.np, args.nodes)
        reason = {"crashed": lambda v: failure_summary.CRASHED, "hung": lambda v: failure_summary.FENCED,
                  "lost": lambda v: f"lost with its node {names[v // per_node]}"}[args.summary]
        problems += failure_summary.check_summary(run.output, args.np, {v: reason(v) for v in victims})
    for r in run.records:
        print(json.dumps(r))
    summary = outcome(run, overrun_notes)
    print(json.dumps({"scenario": name, "outcome": summary, **notes}))
    if args.expect == "report":
        print(f"REPORT (not asserted) {name}: {summary}")
        for p in problems:
            print(f"  would fail: {p}")
        return 1 if "error" in notes else 0
    return checks.verdict(name, run, problems)


def linger_problems(args, run, victims):
    """With --linger-s, every survivor must have gone on that long."""
    lingered = [r for r in run.records if "lingered_s" in r]
    if args.linger_s and args.kind != "none" and len(lingered) != args.np - len(victims):
        return [f"{len(lingered)} of {args.np - len(victims)} survivors went on for {args.linger_s} s"]
    return []


def save(name, args, run):
    checks.save_records(f"netns-{name}", run.records, variant=args.variant)


if __name__ == "__main__":
    sys.exit(main())
