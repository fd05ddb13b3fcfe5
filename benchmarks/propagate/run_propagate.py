#!/usr/bin/env python3
"""detect_propagate: when the first and last survivor learn a failure, and
how many failure-notice messages each process handles, per propagator.

Two sources, one per scale. Large n: ftsim, which drives the same state
machines (first_known_s / all_known_s, notice_messages_per_process_per_notice).
Small n: real runs of ulfm_agree with a hung victim (a hang reaches ULFM only
through the detector, so the timing is the detector's and not PRRTE's), each
with -mca mpi_ft_propagator X; the message count comes from the statistics
each survivor prints at MPI_Finalize under mpi_ft_verbose 10. Stock's detector
runs the same scenario as a reference for the times (it has no counter).
Output: benchmarks/results/propagate.jsonl.
"""
import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from benchmarks import common
from mpijobs import mpicmd

PROPAGATORS = ("hba", "bmg", "chord")
STATS = re.compile(r"btl_ft: heartbeats sent \d+ missed \d+ suspicions \d+ "
                   r"notices started (\d+) sent \d+ received (\d+)")


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    return p.parse_args(argv)


def run_ftsim(sink, quick):
    ftsim = common.ftsim_path()
    if ftsim is None:
        common.progress("propagate: no ftsim binary (make ftsim); simulator rows skipped")
        return
    sizes = ["2^10", "2^12", "2^14"] if quick else ["2^10", "2^12", "2^14", "2^16"]
    runs = 2 if quick else 5
    for size in sizes:
        for prop in PROPAGATORS:
            args = ["--nodes", size, "--failures", "1", "--scenario", "lowlat",
                    "--propagator", prop, "--runs", str(runs), "--seed", "1"]
            out = subprocess.run([str(ftsim)] + args, capture_output=True, text=True, timeout=900)
            line = next((json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")), None)
            if line is None:
                common.progress(f"propagate ftsim {size} {prop}: no result ({out.stderr[-200:]})")
                continue
            sink.write({"benchmark": "propagate", "source": "ftsim", "ftsim": str(ftsim), "args": args,
                        "n": line["nodes"], "propagator": prop, "eta_s": line["eta_s"],
                        "delta_s": line["delta_s"], "runs": runs, "seed": line["seed"],
                        "first_known_ms": line["first_known_s"]["mean"] * 1e3,
                        "last_known_ms": line["all_known_s"]["mean"] * 1e3,
                        "notice_msgs_per_process_per_notice": line["notice_messages_per_process_per_notice"],
                        "violations": line["violations"]})
            common.progress(f"propagate ftsim n={line['nodes']} {prop}: "
                            f"{line['notice_messages_per_process_per_notice']:.2f} msgs/process/notice")


def notice_counts(output, survivors):
    """Messages per surviving process per notice started, over the run."""
    started = received = 0
    for match in STATS.finditer(output):
        started += int(match.group(1))
        received += int(match.group(2))
    if not started or not survivors:
        return None, started, received
    return received / survivors / started, started, received


def run_real(sink, config, prop, n, f, eta, rep, deadline_s):
    victims = [1 + k * (n // f) for k in range(f)]
    extra = {"mpi_ft_propagator": prop, "mpi_ft_verbose": 10} if prop else {}
    variant, mca = common.config_mca(config, eta, 5 * eta, extra)
    exe = common.compile_for(common.ULFM_AGREE, variant)
    inject = mpicmd.inject_file()
    program = [exe, "--victims", ",".join(map(str, victims)), "--kind", "hang",
               "--inject-after-ms", 300, "--inject-file", inject, "--deadline-s", deadline_s]
    # the statistics come at MPI_Finalize: wait for mpirun to return, not just the reports
    run = common.run_mpi(mpicmd.mpirun(n, program, mca=mca, variant=variant),
                         deadline_s + 20 + n, expect_records=n - f, grace_s=5.0)
    Path(inject).unlink(missing_ok=True)
    survivors = [r for r in run.records if "interrupted_ms" in r]
    learnt = sorted(r["interrupted_ms"] for r in survivors)
    per_notice, started, received = notice_counts(run.output, n - f)
    record = {"benchmark": "propagate", "source": "mpirun", "config": config,
              "propagator": prop or "stock", "n": n, "f": f, "victims": victims, "eta_s": eta,
              "delta_s": 5 * eta, "rep": rep, "outcome": run.outcome, "wall_s": run.wall_s,
              "survivors_reported": len(survivors), "detected": len(survivors) == n - f,
              "first_known_ms": learnt[0] if learnt else None,
              "last_known_ms": learnt[-1] if learnt else None,
              "notices_started": started, "notices_received": received,
              "notice_msgs_per_process_per_notice": per_notice}
    sink.write(record)
    return record


def main(argv):
    options = parse(argv)
    sink = common.JsonLines("propagate")
    run_ftsim(sink, options.quick)
    sizes = [8] if options.quick else [8, 16]
    reps = 1 if options.quick else 3
    eta = 0.01
    for n in sizes:
        for f in (1, 2):
            for rep in range(reps):
                # interleaved, so the propagators share the machine's moods
                group = [("btl_ft", p) for p in PROPAGATORS] + [("stock-detector", None)]
                with common.MpiLock():
                    results = [run_real(sink, config, prop, n, f, eta, rep, 5) for config, prop in group]
                for r in results:
                    msgs = r["notice_msgs_per_process_per_notice"]
                    common.progress(
                        f"propagate mpirun n={n} f={f} rep={rep} {r['propagator']}: "
                        + (f"{r['first_known_ms']:.1f}..{r['last_known_ms']:.1f} ms" if r["detected"]
                           else "not detected within 5 s")
                        + (f", {msgs:.2f} msgs/process/notice" if msgs is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
