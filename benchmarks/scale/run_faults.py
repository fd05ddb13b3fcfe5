#!/usr/bin/env python3
"""Scale benchmark of ftsim's faults as libmpi runs them (64 processes per node).

One ftsim run per case: a node loss and a cut of 1 node at 2^14, 2^17 and
2^20 processes, and beside each a single crash at the same size (the
single-failure figure), each flat and with two levels (--hierarchy node). Appends one JSON line per case to
benchmarks/results/scale_faults.jsonl: the ftsim result line as printed
(seed, flags, bound_violations), wall time and peak memory measured here
(run_scale.run_one), and the figures the report quotes: time until every
survivor knows, notice messages per process per fault.

Cases run smallest first, one at a time (the machine is shared); --only
picks some by name, so the long 2^20 run can be done on its own.
"""
import argparse
import datetime
import json
import os
import pathlib
import sys

from benchmarks.scale import run_scale

ROOT = pathlib.Path(__file__).resolve().parents[2]
COMMON = ["--ppn", "64", "--scenario", "lowlat", "--runs", "1"]
FAULT_CASES = [(size, fault) for size in ("2^14", "2^17", "2^20") for fault in ("crash", "node-loss", "partition")]
# Each case with both hierarchies: "node-loss-2^14" is the flat one (seed
# 002), "node-loss-2^14/node" the two levels of seed 000.
CASES = [(f"{fault}-{size}{suffix}", ["--nodes", size, "--fault", fault] + hierarchy)
         for size, fault in FAULT_CASES
         for suffix, hierarchy in (("", []), ("/node", ["--hierarchy", "node"]))]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ftsim", default=os.environ.get("FTSIM", "build/core/sim/ftsim"),
                        help="path to the ftsim binary (default: $FTSIM or build/core/sim/ftsim)")
    parser.add_argument("--only", default="", help="comma list of case names (default: all): "
                        + ", ".join(name for name, _ in CASES))
    parser.add_argument("--seed", default="1", help="ftsim --seed (default 1)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks/results/scale_faults.jsonl"),
                        help="JSON lines file to append to")
    return parser.parse_args(argv)


def summary(name, args, result, status, wall_s, rss, rss_source):
    line = result or {}
    mean = lambda key: (line.get(key) or {}).get("mean")  # noqa: E731
    return {
        "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "case": name, "args": args, "exit_status": status, "wall_s": round(wall_s, 3), "max_rss_kib": rss,
        "max_rss_source": rss_source, "all_known_s": mean("all_known_s"), "stable_s": mean("stable_s"),
        "all_stopped_s": mean("all_stopped_s"),
        "notice_messages_per_process_per_fault": line.get("notice_messages_per_process_per_fault"),
        "hierarchy": line.get("hierarchy", "flat"), "across_nodes": line.get("across_nodes"),
        "bound_violations": line.get("bound_violations"), "ftsim": result,
    }


def main(argv):
    options = parse_args(argv)
    ftsim = str(pathlib.Path(options.ftsim).resolve())
    if not os.access(ftsim, os.X_OK):
        sys.exit(f"run_faults.py: --ftsim: {ftsim} is not an executable (build it first)")
    wanted = [name for name in options.only.split(",") if name]
    unknown = set(wanted) - {name for name, _ in CASES}
    if unknown:
        sys.exit(f"run_faults.py: --only: unknown case(s) {', '.join(sorted(unknown))}")
    out_path = pathlib.Path(options.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    worst = 0
    for name, flags in CASES:
        if wanted and name not in wanted:
            continue
        args = flags + COMMON + ["--seed", options.seed]
        status, stdout, stderr, wall_s, rss, rss_source = run_scale.run_one(ftsim, args)
        lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
        record = summary(name, args, lines[0] if lines else None, status, wall_s, rss, rss_source)
        worst = max(worst, run_scale.record_run(out_path, record, stderr, name))
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
