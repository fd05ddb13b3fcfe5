#!/usr/bin/env python3
"""Benchmark stage `tasks`: the bag of tasks (tasks.c) with 0, 1 and 2
failures of each kind (crash, hang, lost node) under btl_ft, stock's
detector and stock's defaults, on the same work: the first run measures the
machine's speed and every later run is given it, so each does the same
iterations. One JSON line per run in benchmarks/results/tasks.jsonl.

Failures: worker 4 halfway through its first task (a long one), then (the
second failure) rank 0, the coordinator, 1.5 s after the start; a lost node is the node of rank 4,
then the node of rank 2 (3 emulated nodes of 2 ranks). A configuration that
never recovers shows as "did not finish within T s" (the program's own
bound; mpirun's is 20 s more).
"""
import argparse
import sys

from benchmarks.tasks import tasks_job
from benchmarks import common

NP = 6
WORKLOAD = {"tasks": 48, "short_ms": 20, "long_ms": 600, "long_every": 4}
VICTIMS = {"crash": [[4], [4, 0]], "hang": [[4], [4, 0]], "node": [[4], [4, 2]]}
ETA_MS, DELTA_MS = 10, 50


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="one run per cell, one failure of each kind, "
                                                        "a shorter bound")
    p.add_argument("--reps", type=int, default=None)
    return p.parse_args(argv)


def cells(quick):
    """quick: one failure of each kind"""
    yield "none", []
    for kind, lists in VICTIMS.items():
        for victims in lists[:1] if quick else lists:
            yield kind, victims


def job(config, kind, victims, deadline_s, slack_s):
    return tasks_job.Job(np=NP, inject=kind, victims=victims, config=config, eta_ms=ETA_MS,
                         delta_ms=DELTA_MS, when="long", at_ms=0, gap_ms=1500,
                         deadline_s=deadline_s, slack_s=slack_s, workload=WORKLOAD)


def main(argv):
    options = parse(argv)
    reps = options.reps or (1 if options.quick else 3)
    # stock's detector often leaves mpirun running after the answer, to its bound
    deadline_s, slack_s = (15, 5) if options.quick else (40, 20)
    sink = common.JsonLines("tasks")
    speed = tasks_job.run(job("btl_ft", "none", [], deadline_s, slack_s), lock=True).get("iters_per_ms")
    if not speed:
        common.progress("tasks: the calibration run gave no answer; stopping")
        return 1
    all_cells = list(cells(options.quick))
    total, done = len(all_cells) * len(common.CONFIGS) * reps, 0
    for rep in range(reps):
        for kind, victims in all_cells:
            for config in common.CONFIGS:
                r = tasks_job.run(job(config, kind, victims, deadline_s, slack_s), lock=True, iters_per_ms=speed)
                r.pop("tail", None) if r.get("correct") else None
                sink.write({"benchmark": "tasks", "rep": rep, "failures_injected": len(victims), **r})
                done += 1
                shown = (r.get("skipped") or (f"{r['time_s']:.2f} s, correct {r['correct']}" if r.get("finished")
                                              else f"did not finish within {r['bound_s']:g} s"))
                common.progress(f"tasks {kind} {victims} {config}: {shown}", done, total)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
