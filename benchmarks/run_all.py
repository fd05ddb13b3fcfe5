#!/usr/bin/env python3
"""Runs every benchmark in one go, then draws the plots and writes RESULTS.md.

  run_all.py --quick   (make bench-quick: fewer sizes and repetitions, < 10 min)
  run_all.py           (make bench: the full matrix, < 60 min)

Each benchmark is its own script and process, so one can be re-run alone
while working on it; this driver only sequences them, records the machine
and how long each took (results/run.json), and keeps going when one fails so
the report still shows what was measured. The machine description is taken
here, at the start of the run, so it describes the run and not the report.
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import common
from mpijobs import mpicmd

HERE = Path(__file__).resolve().parent


def harness_transport():
    """BTL=... (mpijobs/mpirun.py): the transport every job was restricted to."""
    name = mpicmd.selected_transport()
    return {"name": name, "mca": mpicmd.transport_mca(name)} if name else None


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
               platform.processor() or "unknown")
    mem_kib = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal"))
    return {"nproc": os.cpu_count(), "cpu_model": cpu, "memory_gib": round(mem_kib / 2**20, 1),
            "kernel": platform.release(), "hostname": platform.node(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


TRANSPORT_INDEPENDENT = ("scale", "sim_faults", "fig4", "fig3", "propagate", "node", "two_levels")


def stages(quick):
    flag = ["--quick"] if quick else []
    ftsim = common.ftsim_path()
    # the test build's ftsim is sanitized, ~3x slower and larger: 2^20 would not fit the hour
    release = ftsim is not None and ftsim == common.ROOT / "build/core/sim/ftsim"
    max_exp = 16 if quick else (20 if release else 18)
    scale = [sys.executable, str(HERE / "scale/run_scale.py"), "--out", str(common.RESULTS / "scale.jsonl"),
             "--max-exp", str(max_exp)]
    if ftsim:
        scale += ["--ftsim", str(ftsim)]
    # node loss and cuts with 64 processes per node: 2^14 takes ~30 s, 2^17
    # ~7 min; 2^20 (over an hour on 2 cores) only by hand: run_faults.py --only
    faults = [sys.executable, str(HERE / "scale/run_faults.py"), "--out",
              str(common.RESULTS / "scale_faults.jsonl"),
              "--only", "crash-2^14,node-loss-2^14,partition-2^14"
              + ",crash-2^14/node,node-loss-2^14/node,partition-2^14/node"
              + ("" if quick else ",crash-2^17,node-loss-2^17,crash-2^17/node,node-loss-2^17/node")]
    fig4 = ["bash", str(HERE / "scale/fig4_runs.sh"), str(common.RESULTS / "ftsim_fig4.jsonl")]
    if ftsim:
        faults += ["--ftsim", str(ftsim)]
        fig4 = ["env", f"FTSIM={ftsim}"] + fig4
    # seed 002's Figure 3: the largest safe delta by size and MTBF (fttune)
    fttune = common.fttune_path()
    fig3 = ["bash", "-c", f'"{fttune}" --figure > "{common.RESULTS / "fttune_fig3.jsonl"}"']
    all_stages = [
        ("scale", scale),
        ("sim_faults", faults),
        ("fig4", fig4),
        ("fig3", fig3),
        ("propagate", [sys.executable, str(HERE / "propagate/run_propagate.py")] + flag),
        ("agree", [sys.executable, str(HERE / "agree/run_agree.py")] + flag),
        ("crash", [sys.executable, str(HERE / "crash/run_crash.py")] + flag),
        ("node", [sys.executable, str(HERE / "node/run_node.py")] + flag),
        ("two_levels", [sys.executable, str(HERE / "node/run_two_levels.py")] + flag),
        ("overhead", [sys.executable, str(HERE / "overhead/run_overhead.py")] + flag),
        ("latency", [sys.executable, str(HERE / "latency/run_latency.py")] + flag),
        ("survivors", [sys.executable, str(HERE / "survivors/run_survivors.py")] + flag),
        ("respawn", [sys.executable, str(HERE / "respawn/run_respawn.py")] + flag),
        ("footprint", [sys.executable, str(HERE / "footprint/run_footprint.py")] + flag),
        ("accuracy", [sys.executable, str(HERE / "accuracy/run_accuracy.py")] + flag),
        ("false_failures", [sys.executable, str(HERE / "accuracy/run_false_failures.py")] + flag),
        ("repeat", [sys.executable, str(HERE / "repeat/run_repeat.py")] + flag),
        ("tasks", [sys.executable, str(HERE / "tasks/run_bench.py")] + flag),
    ]
    if common.TRANSPORT is None:
        return all_stages
    # the simulator and the emulated nodes (tcp between namespaces) do not
    # depend on BTL=...: only the stages whose jobs it restricts
    return [s for s in all_stages if s[0] not in TRANSPORT_INDEPENDENT]


def merge_previous(info):
    """--only re-runs some stages: the others keep their entry from the last
    full run, and the totals add up, so the report still describes every table."""
    path = common.RESULTS / "run.json"
    if not path.exists():
        return info
    previous = json.loads(path.read_text())
    rerun = {s["name"] for s in info["stages"]}
    kept = [s for s in previous.get("stages", []) if s["name"] not in rerun]
    for s in info["stages"]:
        s["rerun"] = True
    previous["stages"] = kept + info["stages"]
    previous["total_seconds"] = round(sum(s["seconds"] for s in previous["stages"]), 1)
    previous["lock_wait_seconds"] = info["lock_wait_seconds"]
    return previous


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", default=None, help="comma list of stages to run (default all)")
    p.add_argument("--stage-args", default="",
                   help="more arguments for the one stage --only names (e.g. \"--eta 0.01\" for agree)")
    options = p.parse_args(argv)
    if options.stage_args and (not options.only or "," in options.only):
        p.error("--stage-args needs --only with one stage")
    common.RESULTS.mkdir(parents=True, exist_ok=True)
    info = {"mode": "quick" if options.quick else "full", "machine": machine(),
            "ftsim": str(common.ftsim_path()), "stages": [],
            "transport": harness_transport()}
    if not options.only:
        (common.RESULTS / "lock_waits.jsonl").unlink(missing_ok=True)
    start = time.monotonic()
    status = 0
    for name, cmd in stages(options.quick):
        if options.only and name not in options.only.split(","):
            continue
        common.progress(f"=== {name} ===")
        if name == "scale":
            (common.RESULTS / "scale.jsonl").unlink(missing_ok=True)   # run_scale appends
        began = time.monotonic()
        code = subprocess.run(cmd + shlex.split(options.stage_args)).returncode
        info["stages"].append({"name": name, "exit_status": code, "arguments": options.stage_args or None,
                               "seconds": round(time.monotonic() - began, 1), "commit": common.source_commit(),
                               "finished": datetime.datetime.now(datetime.timezone.utc)
                                                            .isoformat(timespec="seconds")})
        status = status or code
        common.progress(f"=== {name}: exit {code}, {time.monotonic() - began:.0f} s ===")
    info["total_seconds"] = round(time.monotonic() - start, 1)
    info["lock_wait_seconds"] = round(sum(r["waited_s"] for r in common.read_jsonl("lock_waits")), 1)
    if options.only:
        info = merge_previous(info)
    (common.RESULTS / "run.json").write_text(json.dumps(info, indent=1) + "\n")
    for script in ("plot.py", "report.py"):
        status = status or subprocess.run([sys.executable, str(HERE / script)]).returncode
    common.progress(f"benchmarks done in {info['total_seconds']:.0f} s; see benchmarks/RESULTS.md")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
