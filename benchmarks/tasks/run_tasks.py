#!/usr/bin/env python3
"""Runs the bag-of-tasks program (tasks.c) under failures; prints, last, one
JSON object per run: the program's fields, the configuration, and mpirun's
exit status.

  run_tasks.py --np 8 --inject none|crash|hang|node --victim R | --victims R1,R2
               [--eta-ms 10] [--delta-ms 5*eta] [--runs 1] [--config btl_ft]
               [--when time|long] [--at-ms 1000] [--gap-ms 2500]
               [--tasks 48] [--short-ms 20] [--long-ms 1000] [--long-every 8]
               [--deadline-s 60] [--lock]

Victims fail in the order given: the first at --at-ms after the start, each
next --gap-ms later; with --when long a worker fails halfway through the
first long task it begins after that time (rank 0, the coordinator, always
at the time). `node` kills every process of each victim's emulated node
(tests/netns, 3 nodes, needs root); where they cannot be made, it prints
that it skipped. --lock holds the machine-wide MPI lock around each run
(leave it out when already under `flock /tmp/btlft-mpi.lock`).
"""
import argparse
import json
import os
import sys

from benchmarks.tasks import tasks_job


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=8)
    p.add_argument("--inject", choices=["none", "crash", "hang", "node"], default="none")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--victim", type=int, default=None)
    who.add_argument("--victims", default=None, help="comma list of world ranks")
    p.add_argument("--eta-ms", type=float, default=10)
    p.add_argument("--delta-ms", type=float, default=None, help="default 5 x eta")
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--config", choices=list(tasks_job.common.CONFIGS), default="btl_ft")
    p.add_argument("--when", choices=["time", "long"], default="time")
    p.add_argument("--at-ms", type=float, default=1000)
    p.add_argument("--gap-ms", type=float, default=2500)
    p.add_argument("--deadline-s", type=float, default=60)
    p.add_argument("--lock", action="store_true")
    for name, default in (("tasks", 48), ("short-ms", 20), ("long-ms", 1000), ("long-every", 8),
                          ("seed", 1)):
        p.add_argument(f"--{name}", type=float if name.endswith("ms") else int, default=default)
    p.add_argument("--iters-per-ms", type=float, default=None,
                   help="the same work in every run (default: rank 0 measures it each run)")
    options = p.parse_args(argv)
    if options.inject != "none" and options.victim is None and options.victims is None:
        p.error(f"--inject {options.inject} needs --victim or --victims")
    return options


def job_of(o):
    victims = [o.victim] if o.victim is not None else [int(v) for v in (o.victims or "").split(",") if v]
    workload = {"tasks": o.tasks, "short_ms": o.short_ms, "long_ms": o.long_ms,
                "long_every": o.long_every, "seed": o.seed}
    return tasks_job.Job(np=o.np, inject=o.inject, victims=victims if o.inject != "none" else [],
                         config=o.config, eta_ms=o.eta_ms, delta_ms=o.delta_ms or 5 * o.eta_ms,
                         when=o.when, at_ms=o.at_ms, gap_ms=o.gap_ms, deadline_s=o.deadline_s,
                         workload=workload)


def describe(r):
    if "skipped" in r:
        return f"skipped: {r['skipped']}"
    if not r["finished"]:
        return f"did not finish within {r['bound_s']:g} s (mpirun exit {r['mpirun_exit']})"
    recoveries = ", ".join(f"rank {f['rank']} {f['recovery_ms']} ms" for f in r["failures"])
    return (f"correct {r['correct']}, {r['tasks_done']} done, {r['tasks_lost']} lost, "
            f"{r['tasks_redone']} redone, {r['time_s']:.2f} s; recovery: {recoveries or 'none'}; "
            f"mpirun exit {r['mpirun_exit']}")


def main(argv):
    o = parse(argv)
    job = job_of(o)
    # ranks that die write crash droppings (*.btr) where they run: not here
    tasks_job.common.RUN_DIR.mkdir(parents=True, exist_ok=True)
    os.chdir(tasks_job.common.RUN_DIR)
    results = []
    for i in range(o.runs):
        r = tasks_job.run(job, lock=o.lock, iters_per_ms=o.iters_per_ms)
        r["run"] = i
        print(f"run {i + 1}/{o.runs} {job.config} {job.inject} {job.victims}: {describe(r)}",
              file=sys.stderr, flush=True)
        results.append(r)
    for r in results:
        print(json.dumps(r))
    return 0 if all(r.get("correct") or "skipped" in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
