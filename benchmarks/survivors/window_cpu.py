#!/usr/bin/env python3
"""Where the CPU goes while the survivors recover: 1 crash against 2 serial
crashes (the survivors stage's cases: rank 5, then ranks 4 and 5), the
survivor allreduce at 8 ranks on this host, runs interleaved in a shuffled
order. Each run is traced with the kernel's scheduler events (sched_switch
and sched_process_exit, on the CLOCK_MONOTONIC the program's records use),
and the CPU time of every thread inside the run's window, from the kill to
the last survivor's return, is summed by thread name, a victim's threads
apart (those that exited before the window ended).

Not a stage of make bench: it needs root and tracefs, and it shows why a
time is what it is rather than measuring it. Output: one JSON line per run
(--out, default benchmarks/results/survivors_window_cpu_<when>.jsonl), then per
case the median time of the runs in which the victims' threads took at
least --heavy-ms of CPU in the window and of the others.

  sudo PYTHONPATH=. python3 benchmarks/survivors/window_cpu.py --runs 30
"""
import argparse
import collections
import contextlib
import json
import random
import re
import sys
from pathlib import Path

from benchmarks import common
from benchmarks.survivors import run_survivors

TRACING = Path("/sys/kernel/tracing")
EVENTS = ("sched/sched_switch", "sched/sched_process_exit")
CASES = (("1 fault", [5]), ("2 serial", [4, 5]))
SWITCH = re.compile(r"\[(\d+)\].*?\s(\d+\.\d+): sched_switch: prev_comm=.*? prev_pid=\d+ .*?"
                    r"==> next_comm=(.*?) next_pid=(\d+)")
EXIT = re.compile(r"\s(\d+\.\d+): sched_process_exit: comm=.*? pid=(\d+)")


@contextlib.contextmanager
def scheduler_trace():
    """The two events on, on the monotonic clock, with a buffer large
    enough for a run; the settings found are put back."""
    if not (TRACING / "trace_clock").exists():
        raise SystemExit(f"{TRACING} is not mounted (mount -t tracefs nodev {TRACING}), or this is not root")
    names = ["trace_clock", "buffer_size_kb", "tracing_on"] + [f"events/{e}/enable" for e in EVENTS]
    before = {}
    for name in names:
        text = (TRACING / name).read_text().strip()
        # the clock in use is bracketed in a list; a fresh buffer's size
        # reads "7 (expanded: 1408)"
        before[name] = text[text.index("[") + 1:text.index("]")] if name == "trace_clock" else text.split()[0]
    try:
        (TRACING / "tracing_on").write_text("0")
        (TRACING / "trace_clock").write_text("mono")
        (TRACING / "buffer_size_kb").write_text("65536")
        for event in EVENTS:
            (TRACING / f"events/{event}/enable").write_text("1")
        yield
    finally:
        for name, value in before.items():
            (TRACING / name).write_text(value)


def cpu_in_window(trace, start_s, end_s):
    """Thread name -> CPU seconds within [start_s, end_s]; 'victim ' before
    the names of threads that exited before end_s."""
    exited = {int(m.group(2)) for m in map(EXIT.search, trace.splitlines()) if m and float(m.group(1)) < end_s}
    on_cpu, total = {}, collections.Counter()  # cpu -> (name, tid, since)

    def count(name, tid, since, until):
        overlap = min(until, end_s) - max(since, start_s)
        if overlap > 0:
            total[("victim " if tid in exited else "") + name] += overlap

    for m in map(SWITCH.search, trace.splitlines()):
        if not m:
            continue
        cpu, at = int(m.group(1)), float(m.group(2))
        if cpu in on_cpu:
            count(*on_cpu[cpu], at)
        on_cpu[cpu] = (m.group(3), int(m.group(4)), at)
    for name, tid, since in on_cpu.values():
        count(name, tid, since, end_s)
    return total


@contextlib.contextmanager
def tracing():
    """The trace emptied, then on for as long as the job runs."""
    (TRACING / "trace").write_text("")
    (TRACING / "tracing_on").write_text("1")
    try:
        yield
    finally:
        (TRACING / "tracing_on").write_text("0")


def traced_run(case, victims, when):
    survivors = next(r for r in run_survivors.RECOVERIES if r[2] == "survivors")
    run = run_survivors.fault_job(run_survivors.ONE_HOST, run_survivors.NODE_RANKS, victims, "crash", when,
                                  survivors, around_launch=tracing)
    trace = (TRACING / "trace").read_text()
    killed = [r["at_ns"] for r in run.records if "victim" in r]
    done = [r["done_ns"] for r in run.records if "done_ns" in r]
    if len(killed) != len(victims) or len(done) != run_survivors.NODE_RANKS - len(victims):
        return {"case": case, "when": when, "ms": None, "outcome": run.outcome}
    start_s, end_s = min(killed) / 1e9, max(done) / 1e9
    cpu = cpu_in_window(trace, start_s, end_s)
    return {"case": case, "when": when, "ms": (end_s - start_s) * 1e3,
            "cpu_ms": {name: round(s * 1e3, 3) for name, s in cpu.most_common()}, "outcome": run.outcome}


def victims_ms(record):
    return sum(ms for name, ms in record["cpu_ms"].items() if name.startswith("victim "))


def summary(records, heavy_ms):
    lines = []
    for case, _ in CASES:
        timed = [r for r in records if r["case"] == case and r["ms"] is not None]
        heavy = [r["ms"] for r in timed if victims_ms(r) >= heavy_ms]
        light = [r["ms"] for r in timed if victims_ms(r) < heavy_ms]

        def shown(times):
            return f"{common.median(times):.2f} ms in {len(times)}" if times else f"none of {len(timed)}"
        lines.append(f"{case}: median {common.median([r['ms'] for r in timed]):.2f} ms over {len(timed)} runs; "
                     f"victims' threads >= {heavy_ms} ms of CPU in the window: {shown(heavy)}; "
                     f"the others: {shown(light)}")
    return "\n".join(lines)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=30, help="runs per case (default 30)")
    p.add_argument("--when", choices=("before", "during"), default="before")
    p.add_argument("--heavy-ms", type=float, default=0.9,
                   help="victims' CPU in the window that sorts a run apart (default 0.9 ms)")
    p.add_argument("--out", type=Path, default=None,
                   help="default benchmarks/results/survivors_window_cpu_<when>.jsonl")
    options = p.parse_args(argv)
    options.out = options.out or common.RESULTS / f"survivors_window_cpu_{options.when}.jsonl"
    rng, cases, records, commit = random.Random(0), list(CASES), [], common.source_commit()
    options.out.parent.mkdir(parents=True, exist_ok=True)
    with scheduler_trace(), options.out.open("w") as out:
        for i in range(options.runs):
            rng.shuffle(cases)
            for case, victims in cases:
                record = {"commit": commit, **traced_run(case, victims, options.when)}
                records.append(record)
                out.write(json.dumps(record) + "\n")
                out.flush()
                top = ", ".join(f"{k} {v:.2f}" for k, v in list(record.get("cpu_ms", {}).items())[:5])
                shown = "blocked" if record["ms"] is None else f"{record['ms']:.2f} ms: {top}"
                common.progress(f"window cpu {case} {options.when}: {shown}", len(records), 2 * options.runs)
    print(summary(records, options.heavy_ms))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
