#!/usr/bin/env python3
"""accuracy: the smallest eta (delta = 5 eta) at which a fully oversubscribed
machine produces no false failure, for btl_ft and for stock's detector.

2 x nproc ranks of ulfm_agree --kind none compute without any MPI call for
S seconds (60 in `make bench`), so every core is contended and only a
detector thread can keep heartbeats going; then they agree and exit. A run
is clean when every rank reports, mpirun exits 0 and no detector printed a
suspicion. eta is scanned upwards and stops at the first clean run: runs are
long, and a detector that is accurate at eta is assumed accurate above it.
A run stops as soon as a false suspicion is printed (its answer is known).
Output: benchmarks/results/accuracy.jsonl, one line per run.
"""
import argparse
import os
import re
import sys

from benchmarks import common
from mpijobs import mpicmd

# btl_ft's and stock's verbose-1 lines when they declare a process failed
SUSPICION = re.compile(r"btl_ft: rank \d+ failed|now suspected dead|declared")


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--compute-s", type=float, default=None)
    return p.parse_args(argv)


def run_one(config, eta, np_, compute_s):
    variant, mca = common.config_mca(config, eta, 5 * eta, {"mpi_ft_verbose": 1})
    exe = common.compile_for(common.ULFM_AGREE, variant)
    program = [exe, "--victims", 0, "--kind", "none", "--inject-after-ms", 300,
               "--deadline-s", 20, "--compute-s", compute_s]
    # every rank reporting is the answer: a mpirun that then fails to return
    # (stock's detector can hang in MPI_Finalize) is a defect, not a false failure
    run = common.run_mpi(mpicmd.mpirun(np_, program, mca=mca, variant=variant),
                         compute_s + 60, expect_records=np_,
                         stop_when=lambda line: bool(SUSPICION.search(line)))
    finished = [r for r in run.records if "rounds" in r]
    suspicions = [l for l in run.output.splitlines() if SUSPICION.search(l)]
    ended = run.returncode == 0 or run.outcome == "hung_after_report"
    clean = ended and len(finished) == np_ and not suspicions
    return {"benchmark": "accuracy", "config": config, "eta_s": eta, "delta_s": 5 * eta,
            "np": np_, "cores": os.cpu_count(), "compute_s": compute_s, "mca": mca,
            "outcome": run.outcome, "returncode": run.returncode, "wall_s": run.wall_s,
            "ranks_finished": len(finished), "false_failure": not clean,
            "suspicion_lines": suspicions[:5]}


def main(argv):
    options = parse(argv)
    compute_s = options.compute_s or (5 if options.quick else 60)
    etas = [0.001, 0.01, 0.1] if options.quick else [0.001, 0.003, 0.01, 0.03, 0.1]
    np_ = 2 * os.cpu_count()
    sink = common.JsonLines("accuracy")
    for config in ("btl_ft", "stock-detector"):
        for eta in etas:
            common.progress(f"accuracy {config} eta={eta * 1e3:g}ms: {np_} ranks computing "
                            f"{compute_s:g} s on {os.cpu_count()} cores ...")
            record = run_one(config, eta, np_, compute_s)
            sink.write(record)
            common.progress(f"accuracy {config} eta={eta * 1e3:g}ms: "
                            f"{'false failure' if record['false_failure'] else 'clean'} "
                            f"({record['outcome']}, {record['wall_s']:.0f} s)")
            if not record["false_failure"]:
                break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
