"""A crash reaches every survivor as a crash: after the last rank SIGKILLs
itself, each survivor's next MPI_Barrier fails with MPIX_ERR_PROC_FAILED,
the agreement that follows names exactly that rank, and the detector's
verbose line calls it crashed (the runtime or its node saw it end), never
hung, and names no other rank. On one host every survivor saw the end
its watcher saw the end itself (mpi_ft_detector_watch_node: "rank V of
this node ended outside MPI_Finalize"): the rank before it, and no other,
since each process watches only the next of its node. Unless the test
runs with the watch off.

With --victim-mb the victim first writes that many MiB of its own, which
the kernel takes tens of milliseconds per GiB to free once it is killed:
every survivor must learn of the crash before the victim has ended (a
pidfd each holds on it is not yet readable when its barrier fails), which
only its watcher's lifeline can tell (mpi_ft_detector_watch_lifeline); its
watcher's line says so. With --exit-status the victim calls _exit() with
that status instead of the kill, without MPI_Finalize: a failure all the
same, which the lifeline tells as early since the victim keeps its last
thread, and mpirun exits with that status.

With --stop-daemon the runtime's daemon is stopped across the crash, so
that the runtime cannot report it: the node watch alone tells the
survivors, and they must still call it crashed (a heartbeat timeout would
say hung). Across nodes, or with the application over tcp (BTL=tcp and
the like), it may also say unreachable (a transport
error came first, and every survivor's notice says so). The MPI_T variable
mpi_ft_detector_failure_kind says the same to the application.

  crash_notice.py [--np 8] [--nodes 2] [--victim-mb M] [--exit-status S] [--mca KEY=VALUE]

--nodes runs across emulated nodes (tests/netns), where Open MPI's default
collectives are hierarchical (coll/han), the case ULFM's semantics are
easiest to lose in. Exit 77 (skipped) when the nodes cannot be made.
How fast is benchmarks/crash's question (make bench, stage crash); this
test checks what a survivor learns, with no assertion on time.
"""
import argparse
import re
import sys
from pathlib import Path

from mpijobs import daemon_stopper

from mpijobs import nodes as netns
from mpijobs import checks, launch, mpicmd, paths

PROGRAM = paths.ROOT / "benchmarks" / "crash" / "crash_notice.c"
BOUND_S = 60
RESUME_AFTER_S = 3
# the values of mpi_ft_detector_failure_kind (enum btl_ft_failure_kind)
PVAR_KIND = {0: "alive", 1: "unreachable", 2: "crashed", 3: "hung"}
# "[host:pid] [[job,1],R] btl_ft: rank V of this node ended outside MPI_Finalize"
NODE_SAW_END = re.compile(r"\[\[\d+,\d+\],(\d+)\] btl_ft: rank (\d+) of this node ended outside MPI_Finalize")


def pvar_problems(survivors, victim, nodes):
    """What each survivor read from mpi_ft_detector_failure_kind: the victim
    crashed (or, across nodes or over tcp, unreachable), everyone else alive."""
    allowed = {"crashed"} if nodes == 1 and not over_tcp() else {"crashed", "unreachable"}
    problems = []
    for r in survivors:
        kinds = r.get("failure_kind")
        if kinds is None:
            problems.append(f"rank {r['rank']}: no MPI_T variable mpi_ft_detector_failure_kind")
            continue
        named = {rank: PVAR_KIND.get(kind, f"unknown {kind}") for rank, kind in enumerate(kinds)}
        if named.get(victim) not in allowed:
            problems.append(f"rank {r['rank']}: MPI_T says rank {victim} is {named.get(victim)}")
        wrong = {rank: kind for rank, kind in named.items() if rank != victim and kind != "alive"}
        if wrong:
            problems.append(f"rank {r['rank']}: MPI_T says healthy ranks failed: {wrong}")
    return problems


def over_tcp():
    """The application's transport is tcp (BTL=tcp, uct:tcp, ofi:...tcp...)."""
    return "tcp" in (mpicmd.selected_transport() or "")


def lifeline_problems(run, survivors, victim):
    """Every survivor knew before the victim had ended, told by the lifeline."""
    problems = [f"rank {r['rank']}: the victim had ended when its barrier failed "
                f"(victim_ended {r.get('victim_ended')})" for r in survivors if r.get("victim_ended") is not False]
    if not re.search(rf"rank {victim} of this node ended outside MPI_Finalize: crashed "
                     r"\(its lifeline was cut: it is dying\)", run.output):
        problems.append(f"the watcher did not say rank {victim}'s lifeline was cut")
    return problems


def check(run, np, nodes, watches_node=True, victim_mb=0, exit_status=0):
    victim = np - 1
    problems = checks.exit_problems(run, BOUND_S, exit_status)
    survivors = [r for r in run.records if "barrier_ms" in r]
    if len(survivors) != np - 1:
        problems.append(f"{len(survivors)} of {np - 1} survivors reported")
    for r in survivors:
        if r["barrier_error"] != "proc_failed" or r["failed"] != [victim]:
            problems.append(f"rank {r['rank']}: barrier {r['barrier_error']}, failed {r['failed']}")
        if r["barrier_ms"] is None:
            problems.append(f"rank {r['rank']}: rank {victim} failed before it killed itself")
    kinds = {(int(rank), kind) for rank, kind in mpicmd.FAILURE_KIND.findall(run.output)}
    if any(rank != victim for rank, _ in kinds):
        problems.append(f"a healthy rank was called failed: {sorted(kinds)}")
    # On one host the runtime's report comes first. Across nodes, or with
    # the application over a tcp transport, the dead process's connections
    # may reset before it arrives: unreachable.
    if nodes == 1 and not over_tcp() and (victim, "crashed") not in kinds:
        problems.append(f"no survivor called rank {victim} crashed (saw {sorted(kinds) or 'nothing'})")
    watched = {int(rank) for rank, victim_rank in NODE_SAW_END.findall(run.output) if int(victim_rank) == victim}
    if nodes == 1 and watches_node and watched != {victim - 1}:
        problems.append(f"survivors that saw rank {victim} end on their node: {sorted(watched)}, "
                        f"not its watcher {victim - 1} alone")
    if any(kind == "hung" for _, kind in kinds):
        problems.append(f"a crash was called a hang: {sorted(kinds)}")
    if victim_mb:
        problems += lifeline_problems(run, survivors, victim)
    return problems + pvar_problems(survivors, victim, nodes)


def run_job(args, exe, inject):
    """The job's run, or None when its emulated nodes cannot be made."""
    program = [exe, "--victim", args.np - 1, "--inject-file", inject, "--deadline-s", 30]
    if args.victim_mb:
        program += ["--victim-mb", args.victim_mb]
    if args.exit_status:
        program += ["--exit-status", args.exit_status]
    mca = {"mpi_ft_verbose": 1, **dict(kv.split("=", 1) for kv in args.mca)}
    if args.nodes == 1 and args.stop_daemon:
        hold = inject + ".hold"
        stopper = daemon_stopper.DaemonStopper(hold, inject, RESUME_AFTER_S)
        stopper.start()
        run = launch.run(mpicmd.mpirun(args.np, program + ["--hold-file", hold], mca=mca), BOUND_S)
        stopper.finish()
        if stopper.note:
            run.output += f"\n(daemon stopper: {stopper.note})"
        return run
    if args.nodes == 1:
        return launch.run(mpicmd.mpirun(args.np, program, mca=mca), BOUND_S)
    with netns.taken_for_a_test(args.nodes) as names:
        if names is None:
            return None
        try:
            return launch.run(netns.mpirun_command_netns(args.np, program, mca=mca, nodes=args.nodes),
                               BOUND_S)
        finally:
            netns.reap(names)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--np", type=int, default=8)
    p.add_argument("--nodes", type=int, default=1, help="emulated nodes (1: this host, no namespaces)")
    p.add_argument("--mca", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--victim-mb", type=int, default=0,
                   help="MiB the victim writes first; every survivor must know before it ended")
    p.add_argument("--exit-status", type=int, default=0,
                   help="the victim calls _exit() with this status instead of SIGKILL")
    p.add_argument("--stop-daemon", action="store_true",
                   help="stop the runtime's daemon (SIGSTOP) from before the crash until "
                        f"{RESUME_AFTER_S} s after it (one host only)")
    args = p.parse_args()
    exe = mpicmd.compile_test(PROGRAM)
    inject = mpicmd.inject_file()
    try:
        run = run_job(args, exe, inject)
    finally:
        Path(inject).unlink(missing_ok=True)
    if run is None:
        return netns.SKIP
    name = "crash_notice" if args.nodes == 1 else f"crash_notice_{args.nodes}nodes"
    watches_node = dict(kv.split("=", 1) for kv in args.mca).get("mpi_ft_detector_watch_node", "1") \
        not in ("0", "false")
    return checks.verdict(name, run, check(run, args.np, args.nodes, watches_node, args.victim_mb,
                                           args.exit_status))


if __name__ == "__main__":
    sys.exit(main())
