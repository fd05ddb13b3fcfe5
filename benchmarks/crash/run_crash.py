#!/usr/bin/env python3
"""crash_notice: from a crash to every survivor's interrupted barrier and
first agreement, at 4, 8 and 16 ranks on one host and across 2 emulated nodes.

Runs benchmarks/crash/crash_notice.c: the last rank SIGKILLs itself right
after a barrier, each survivor times its next MPI_Barrier (which must fail
with MPIX_ERR_PROC_FAILED) and its first MPIX_Comm_agree. The worst
survivor is what a job waits for, so each run records the last survivor's
times. Configurations are interleaved inside each cell, repetitions too, so
a slow minute of the shared machine hits them alike. Besides btl_ft and
stock, "btl_ft-no-node-watch" shows what mpi_ft_detector_watch_node adds,
"btl_ft-no-lifeline" what mpi_ft_detector_watch_lifeline adds to it (the
setup "1 host, victim of 1 GiB" gives the kernel a large teardown: 8 ranks,
the victim having written 1 GiB), and "floor" (1 host only) runs
crash_floor.c: the same crash without MPI,
survivors spinning with sched_yield and told by a pidfd, what the kernel
and the scheduler alone cost. Output: benchmarks/results/crash.jsonl.
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path

from benchmarks import common
from mpijobs import daemon_stopper

from mpijobs import nodes as netns
from mpijobs import mpicmd

PROGRAM = Path(__file__).resolve().parent / "crash_notice.c"
FLOOR_PROGRAM = Path(__file__).resolve().parent / "crash_floor.c"
# what an MPI rank's teardown frees, about (crash_floor's victim frees as much)
FLOOR_TOUCH_MB = 64
NO_WATCH = "btl_ft-no-node-watch"
NO_LIFELINE = "btl_ft-no-lifeline"
FLOOR = "floor"
DAEMON_STOPPED = "1 host, daemon stopped"
LARGE_VICTIM = "1 host, victim of 1 GiB"
LARGE_VICTIM_MB = 1024
RESUME_AFTER_S = 3
DEADLINE_S = 15
QUICK_DEADLINE_S = 5  # what stock misses across nodes it misses for good


def extra_mca(config, setup):
    mca = {NO_WATCH: {"mpi_ft_detector_watch_node": "false"},
           NO_LIFELINE: {"mpi_ft_detector_watch_lifeline": "false"}}.get(config, {})
    if setup == "2 nodes":
        mca.update(common.across_nodes_mca(common.CONFIGS[base_config(config)][0]))
    return mca


def base_config(config):
    return "btl_ft" if config in (NO_WATCH, NO_LIFELINE) else config


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer sizes and repetitions")
    p.add_argument("--reps", type=int, default=None)
    p.add_argument("--configs", default=",".join([*common.CONFIGS, NO_WATCH, NO_LIFELINE, FLOOR]),
                   help="comma list of configurations (default: all of common.CONFIGS, "
                        f"'{NO_WATCH}', '{NO_LIFELINE}' and '{FLOOR}')")
    return p.parse_args(argv)


def summarize(run, n):
    survivors = [r for r in run.records if "barrier_ms" in r]
    # a survivor without times: the victim failed before its kill (wrong)
    correct = [r for r in survivors if r["barrier_error"] == "proc_failed" and r["failed"] == [n - 1]
               and r["barrier_ms"] is not None]
    barrier = sorted(r["barrier_ms"] for r in survivors if r["barrier_ms"] is not None)
    agree = sorted(r["agree_ms"] for r in survivors if r["agree_ms"] is not None)
    return {"survivors_reported": len(survivors), "detected": len(survivors) == n - 1,
            "correct": len(correct) == n - 1,
            "first_barrier_ms": barrier[0] if barrier else None,
            "last_barrier_ms": barrier[-1] if barrier else None,
            "last_agree_ms": agree[-1] if agree else None}


def floor_run(n):
    """crash_floor.c, compiled with the system's cc: no MPI in it."""
    exe = common.BIN / "crash_floor"
    if not exe.exists() or exe.stat().st_mtime < FLOOR_PROGRAM.stat().st_mtime:
        exe.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cc", "-O2", "-pthread", "-o", str(exe), str(FLOOR_PROGRAM)], check=True)
    with common.MpiLock():
        out = subprocess.run([str(exe), str(n), str(FLOOR_TOUCH_MB)], capture_output=True, text=True,
                             timeout=60)
    survivors = json.loads(out.stdout)["survivor_ms"] if out.returncode == 0 else []
    return {"benchmark": "crash", "config": FLOOR, "setup": "1 host", "n": n, "victim": n - 1,
            "touch_mb": FLOOR_TOUCH_MB, "returncode": out.returncode,
            "survivors_reported": len(survivors), "detected": len(survivors) == n - 1,
            "correct": len(survivors) == n - 1,
            "first_barrier_ms": survivors[0] if survivors else None,
            "last_barrier_ms": survivors[-1] if survivors else None, "last_agree_ms": None}


def one_run(config, n, setup, eta_s=None, deadline_s=DEADLINE_S):
    if config == FLOOR:
        return floor_run(n)
    variant, mca = common.config_mca(base_config(config), eta_s, None if eta_s is None else 5 * eta_s,
                                     extra=extra_mca(config, setup))
    exe = common.compile_for(PROGRAM, variant)
    inject = mpicmd.inject_file()
    program = [exe, "--victim", n - 1, "--inject-file", inject, "--deadline-s", deadline_s]
    if setup == LARGE_VICTIM:
        program += ["--victim-mb", LARGE_VICTIM_MB]
    stopper = None
    if setup == DAEMON_STOPPED:
        hold = inject + ".hold"
        program += ["--hold-file", hold]
        stopper = daemon_stopper.DaemonStopper(hold, inject, RESUME_AFTER_S)
        stopper.start()
    if setup in ("1 host", DAEMON_STOPPED, LARGE_VICTIM):
        run = common.run_mpi(mpicmd.mpirun(n, program, mca=mca, variant=variant),
                             deadline_s + 20 + n, expect_records=n - 1)
    else:
        with netns.exclusive():
            names, _ = netns.ensure_nodes(2)
            try:
                run = common.run_mpi(netns.mpirun_command_netns(n, program, mca=mca, variant=variant),
                                     deadline_s + 20 + n, expect_records=n - 1)
            finally:
                netns.reap(names)
    if stopper:
        stopper.finish()
    Path(inject).unlink(missing_ok=True)
    record = {"benchmark": "crash", "config": config, "setup": setup, "n": n, "victim": n - 1,
              "eta_s": eta_s, "mca": mca, "outcome": run.outcome, "returncode": run.returncode,
              "wall_s": run.wall_s, **summarize(run, n)}
    if stopper and stopper.note:
        record["stopper"] = stopper.note
    if not record["correct"]:
        record["output_tail"] = run.output[-800:]
    return record


def cells(quick):
    sizes = [8] if quick else [4, 8, 16]
    for n in sizes:
        yield n, "1 host"
    yield 8, DAEMON_STOPPED
    yield 8, LARGE_VICTIM
    yield 4, "2 nodes"


def main(argv):
    options = parse(argv)
    reps = options.reps or (1 if options.quick else 5)
    deadline_s = QUICK_DEADLINE_S if options.quick else DEADLINE_S
    configs = options.configs.split(",")
    sink = common.JsonLines("crash")
    try:
        netns.ensure_nodes(2)
        nodes_missing = None
    except netns.Unavailable as e:
        nodes_missing = str(e)
    todo = list(cells(options.quick))
    total = len(todo) * reps * len(configs)
    done = 0
    for n, setup in todo:
        if setup == "2 nodes" and nodes_missing:
            common.progress(f"crash {setup}: skipped, no emulated nodes here ({nodes_missing})")
            continue
        for rep in range(reps):
            for config in configs:
                if config == FLOOR and setup != "1 host":
                    continue
                done += 1
                r = one_run(config, n, setup, deadline_s=deadline_s)
                r["rep"] = rep
                sink.write(r)
                agree = "" if r["last_agree_ms"] is None else f", agree {r['last_agree_ms']:.1f} ms"
                shown = (f"barrier {r['first_barrier_ms']:.1f}..{r['last_barrier_ms']:.1f} ms{agree}"
                         if r["detected"] else "not detected")
                common.progress(f"crash {setup} n={n} rep {rep} {config}: {shown}"
                                f"{'' if r['correct'] else ' (INCORRECT)'}", done, total)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
