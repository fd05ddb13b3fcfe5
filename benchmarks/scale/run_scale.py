#!/usr/bin/env python3
"""Scale benchmark of ftsim: wall time and peak memory from 2^10 to 2^20.

Runs ftsim once per (size, scenario) and appends one JSON line per run to
benchmarks/results/scale.jsonl: the ftsim configuration and result line as
printed, plus wall_s and max_rss_kib measured here. Peak memory comes from
GNU time (`/usr/bin/time -f %M`), whose own small process is what forks the
simulator; when it is missing, from os.wait4() on the child, whose maximum
then includes the forked Python image (~15 MiB), a floor noted in the record.
Rejected: resource.getrusage(RUSAGE_CHILDREN), whose maximum covers every
child so far rather than the one run.

Sizes run smallest first and one at a time (the machine is shared).
"""
import argparse
import datetime
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ftsim", default=os.environ.get("FTSIM", "build/core/sim/ftsim"),
                        help="path to the ftsim binary (default: $FTSIM or build/core/sim/ftsim)")
    parser.add_argument("--min-exp", type=int, default=10, help="smallest size 2^K (default 10)")
    parser.add_argument("--max-exp", type=int, default=20, help="largest size 2^K (default 20)")
    parser.add_argument("--step", type=int, default=2, help="exponent step (default 2: 2^10, 2^12, ...)")
    parser.add_argument("--scenario", default="lownoise,lowlat", help="comma list (default lownoise,lowlat)")
    parser.add_argument("--propagator", default="hba", help="default hba")
    parser.add_argument("--failures", default="1", help="failures per run (default 1)")
    parser.add_argument("--runs", type=int, default=1, help="runs per size (default 1)")
    parser.add_argument("--seed", default="1", help="ftsim --seed (default 1)")
    parser.add_argument("--extra", default="", help="extra ftsim flags, space separated")
    parser.add_argument("--out", default=str(ROOT / "benchmarks/results/scale.jsonl"),
                        help="JSON lines file to append to")
    return parser.parse_args(argv)


GNU_TIME = "/usr/bin/time"


def run_one(ftsim, args):
    """Runs ftsim with `args`; returns (status, stdout, stderr, wall_s, max_rss_kib, rss_source)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(mode="r") as usage_file:
        command = [ftsim] + args
        use_time = os.access(GNU_TIME, os.X_OK)
        if use_time:
            command = [GNU_TIME, "-f", "%M", "-o", usage_file.name] + command
        start = time.monotonic()
        # malloc on transparent huge pages: a million detectors' state spans
        # far more pages than the TLB holds (2^17 node loss: 172 -> 140 s of
        # CPU, the same output)
        env = {**os.environ, "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}
        child = subprocess.Popen(command, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall_s = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        rss, source = usage.ru_maxrss, "wait4 (includes the forked python image)"
        if use_time:
            rss, source = int(usage_file.read().strip().splitlines()[-1]), "gnu time %M"
        return (os.waitstatus_to_exitcode(status), out.read().decode(), err.read().decode(), wall_s, rss,
                source)


def record_run(out_path, record, stderr, label):
    """Appends `record` (its exit_status, wall_s, max_rss_kib set) to the JSON
    lines file, with the end of stderr when the run failed; prints one line.
    Returns the exit status."""
    status = record["exit_status"]
    if status != 0:
        record["stderr"] = stderr[-2000:]
    with out_path.open("a") as sink:
        sink.write(json.dumps(record) + "\n")
    print(f"{label}: exit {status}, {record['wall_s']:.1f} s, {record['max_rss_kib'] / 1024:.0f} MiB", flush=True)
    return status


def main(argv):
    options = parse_args(argv)
    ftsim = str(pathlib.Path(options.ftsim).resolve())
    if not os.access(ftsim, os.X_OK):
        sys.exit(f"run_scale.py: --ftsim: {ftsim} is not an executable (build it first)")
    out_path = pathlib.Path(options.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    worst = 0
    for exponent in range(options.min_exp, options.max_exp + 1, options.step):
        for scenario in options.scenario.split(","):
            args = ["--nodes", str(1 << exponent), "--failures", options.failures, "--scenario", scenario,
                    "--propagator", options.propagator, "--runs", str(options.runs), "--seed", options.seed]
            args += options.extra.split()
            status, stdout, stderr, wall_s, rss, rss_source = run_one(ftsim, args)
            lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
            record = {
                "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "nodes": 1 << exponent, "scenario": scenario, "propagator": options.propagator,
                "failures": options.failures, "runs": options.runs, "seed": options.seed,
                "args": args, "exit_status": status, "wall_s": round(wall_s, 3), "max_rss_kib": rss,
                "max_rss_source": rss_source,
                "ftsim": lines[0] if lines else None,
            }
            worst = max(worst, record_run(out_path, record, stderr, f"2^{exponent} {scenario}"))
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
