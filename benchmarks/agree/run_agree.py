#!/usr/bin/env python3
"""agree_after_failure: injection -> MPIX_Comm_agree returns, then shrink.

Runs tests/mpi/ulfm_agree.c for every (configuration, kind, n, f, placement,
eta) cell; the victims inject their own failure so the injection time is
exact, and each survivor reports agreed_ms from it. One JSON line per run in
benchmarks/results/agree.jsonl with the first and last survivor's times.

Configurations are interleaved inside each cell (not run as three blocks), so
a slow minute of the shared machine hits all three alike.
"""
import argparse
import math
import sys
from pathlib import Path

from benchmarks import common
from mpijobs import mpicmd


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer sizes, eta and repetitions")
    p.add_argument("--reps", type=int, default=None)
    p.add_argument("--eta", type=float, action="append", default=None,
                   help="only these η (seconds; repeatable): a partial re-run, which keeps "
                        "the other η's records as they were")
    return p.parse_args(argv)


def victims_of(n, f, placement):
    """consecutive: ranks 1..f (ring neighbours, the ring must mend f times);
    scattered: spread evenly, so independent observers see them at once."""
    if placement == "consecutive":
        return list(range(1, f + 1))
    return [1 + k * (n // f) for k in range(f)]


def cells(quick, etas=None):
    sizes = [8] if quick else [4, 8, 16]
    counts = [1, 2] if quick else [1, 2, 4]
    etas = etas or ([0.01] if quick else [0.01, 0.1])
    for eta in etas:
        for kind in ("crash", "hang"):
            for n in sizes:
                for f in counts:
                    if f >= n:
                        continue
                    placements = ["consecutive"] if f == 1 else ["consecutive", "scattered"]
                    # quick: each placement once (consecutive at f = 1, scattered at f = 2)
                    for placement in placements[-1:] if quick else placements:
                        yield eta, kind, n, f, placement


def summarize(run, victims, n, not_detected_s):
    survivors = [r for r in run.records if "agreed_ms" in r]
    errors = sorted({r["error"] for r in run.records if "error" in r})
    agreed = sorted(r["agreed_ms"] for r in survivors)
    interrupted = sorted(r["interrupted_ms"] for r in survivors)
    shrink = sorted(r["shrink_ms"] for r in survivors)
    expected = n - len(victims)
    return {
        "survivors_expected": expected, "survivors_reported": len(survivors),
        "detected": len(survivors) == expected,
        "correct": all(sorted(r["failed"]) == victims and r["result_ok"] for r in survivors),
        "first_agreed_ms": agreed[0] if agreed else None,
        "last_agreed_ms": agreed[-1] if agreed else None,
        "first_interrupted_ms": interrupted[0] if interrupted else None,
        "last_interrupted_ms": interrupted[-1] if interrupted else None,
        "median_shrink_ms": common.median(shrink),
        "max_shrink_ms": shrink[-1] if shrink else None,
        "errors": errors,
        "not_detected_within_s": None if len(survivors) == expected else not_detected_s,
    }


def run_cell(sink, config, eta, kind, n, f, placement, rep, deadline_s, startup_s):
    victims = victims_of(n, f, placement)
    variant, mca = common.config_mca(config, eta, 5 * eta)
    exe = common.compile_for(common.ULFM_AGREE, variant)
    inject = mpicmd.inject_file()
    program = [exe, "--victims", ",".join(map(str, victims)), "--kind", kind,
               "--inject-after-ms", 300, "--inject-file", inject, "--deadline-s", deadline_s]
    cmd = mpicmd.mpirun(n, program, mca=mca, variant=variant)
    # the bound covers start-up of n ranks on few cores plus the program's own deadline
    run = common.run_mpi(cmd, deadline_s + startup_s + n, expect_records=n - f)
    Path(inject).unlink(missing_ok=True)
    record = {"benchmark": "agree", "config": config, "kind": kind, "n": n, "f": f,
              "placement": placement, "victims": victims, "eta_s": eta, "delta_s": 5 * eta,
              "rep": rep, "deadline_s": deadline_s, "mca": mca, "outcome": run.outcome,
              "returncode": run.returncode, "wall_s": run.wall_s,
              **summarize(run, victims, n, deadline_s)}
    if not record["detected"] or not record["correct"]:
        record["output_tail"] = run.output[-800:]
    sink.write(record)
    return record


def show(r, done, total, deadline_s):
    shown = (f"{r['first_agreed_ms']:.1f}..{r['last_agreed_ms']:.1f} ms" if r["detected"]
             else f"not detected within {deadline_s} s")
    common.progress(f"agree eta={r['eta_s'] * 1e3:g}ms {r['kind']} n={r['n']} f={r['f']} "
                    f"{r['placement']} {r['config']}: {shown}, mpirun {r['outcome']} ({r['wall_s']:.1f} s)",
                    done, total)


def main(argv):
    options = parse(argv)
    reps = options.reps or (1 if options.quick else 5)
    # stock's detector sometimes never answers, and without a detector a hang
    # is never found: such a run lasts the whole bound, ten timeouts (at least
    # 2 s), far beyond any detection either detector makes (at most 6 δ here)
    startup_s = 8 if options.quick else 20
    # a partial re-run keeps the other η's records, each with its commit
    kept = [r for r in common.read_jsonl("agree") if r.get("eta_s") not in options.eta] if options.eta else []
    sink = common.JsonLines("agree")
    for record in kept:
        sink.carry(record)
    todo = list(cells(options.quick, options.eta))
    done = 0
    # the lock is held for all cells of one (eta, kind, n): few enough hand-overs
    # that a busy machine does not make us queue once per run
    for group in dict.fromkeys(c[:3] for c in todo):   # in order, without repeats
        chosen = [c for c in todo if c[:3] == group]
        for rep in range(reps):
            with common.MpiLock():
                for cell in chosen:
                    for config in common.CONFIGS:
                        deadline_s = max(2, math.ceil(10 * 5 * cell[0]))
                        r = run_cell(sink, config, *cell, rep, deadline_s, startup_s)
                        done += 1
                        show(r, done, len(todo) * reps * len(common.CONFIGS), deadline_s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
