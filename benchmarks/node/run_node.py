#!/usr/bin/env python3
"""agree_after_failure, kind node: one of two emulated nodes lost.

The job spans two network namespaces (tests/netns), two ranks on each; once
the ranks compute, node 1 is lost in one of two ways: everything on it
killed (its PRRTE daemon too), or its link cut silently. Survivors report
the time from the loss to the return of MPIX_Comm_agree, as in run_agree.py;
one JSON line per run in benchmarks/results/node.jsonl, with how mpirun
ended. Needs root; where namespaces cannot be made, one line says so.
"""
import argparse
import sys

from benchmarks import common
from tests.netns import netns_scenario
from mpijobs import nodes

NP, NODES = 4, 2


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="one eta, one repetition")
    p.add_argument("--reps", type=int, default=None)
    return p.parse_args(argv)


def run_cell(sink, config, eta, loss, rep, deadline_s, slack_s):
    variant, mca = common.config_mca(config, eta, 5 * eta, {"async_mpi_finalize": "1"})
    exe = common.compile_for(common.ULFM_AGREE, variant)
    victims = nodes.ranks_on(NODES - 1, NP, NODES)
    args = netns_scenario.job_args(loss, np=NP, nodes=NODES, deadline_s=deadline_s, slack_s=slack_s,
                                   variant=variant, mca=[f"{k}={v}" for k, v in mca.items()])
    with nodes.exclusive():
        names, _ = nodes.ensure_nodes(NODES)
        run, notes, overrun = netns_scenario.run_job(args, names, exe, victims)
    survivors = [r for r in run.records if "agreed_ms" in r]
    agreed = sorted(r["agreed_ms"] for r in survivors)
    record = {"benchmark": "node", "config": config, "loss": loss, "n": NP, "nodes": NODES,
              "victims": victims, "eta_s": eta, "delta_s": 5 * eta, "rep": rep, "deadline_s": deadline_s,
              "mca": mca, "returncode": run.returncode, "timed_out": run.timed_out, "wall_s": run.wall_s,
              "survivors_expected": NP - len(victims), "survivors_reported": len(survivors),
              "detected": len(survivors) == NP - len(victims),
              "correct": all(sorted(r["failed"]) == victims and r["result_ok"] for r in survivors),
              "first_agreed_ms": agreed[0] if agreed else None,
              "last_agreed_ms": agreed[-1] if agreed else None,
              "outcome": netns_scenario.outcome(run, overrun),
              "cut_side_running": notes.get("cut_side_running")}
    sink.write(record)
    return record


def main(argv):
    options = parse(argv)
    reps = options.reps or (1 if options.quick else 3)
    etas = [0.1] if options.quick else [0.01, 0.1]
    # a cut is given up by PRRTE after 4 s (keepalive): mpirun's bound must cover that
    deadline_s, slack_s = (6, 8) if options.quick else (10, 15)
    sink = common.JsonLines("node")
    try:
        nodes.ensure_nodes(NODES)
    except nodes.Unavailable as e:
        sink.write({"benchmark": "node", "skipped": f"cannot create emulated nodes: {e}"})
        common.progress(f"node: skipped, cannot create emulated nodes: {e}")
        return 0
    total = len(etas) * 2 * reps * len(common.CONFIGS)
    done = 0
    for eta in etas:
        for loss in ("kill-node", "cut"):
            for rep in range(reps):
                with common.MpiLock():
                    for config in common.CONFIGS:
                        r = run_cell(sink, config, eta, loss, rep, deadline_s, slack_s)
                        done += 1
                        shown = (f"{r['first_agreed_ms']:.1f}..{r['last_agreed_ms']:.1f} ms" if r["detected"]
                                 else f"not detected within {deadline_s} s")
                        common.progress(f"node eta={eta * 1e3:g}ms {loss} {config}: {shown}; "
                                        f"{r['outcome']}", done, total)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
