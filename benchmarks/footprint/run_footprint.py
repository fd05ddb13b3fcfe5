#!/usr/bin/env python3
"""footprint: resident memory, file descriptors and threads per process with
the detector over its own UCX context and over the application's BTLs, at
the defaults, as differences to the detector off (footprint.c). Every
repetition runs every configuration once per size, in an order rotated from
one repetition to the next; the report takes medians over repetitions.
Output: benchmarks/results/footprint.jsonl, one line per (run, test).
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402
import harness  # noqa: E402

SOURCE = Path(__file__).resolve().parent / "footprint.c"
SIZES = (2, 16, 64)
QUICK_SIZES = (2, 16)
SETTLE_MS = 1000
DEADLINE_S = 120
CONFIGURATIONS = (  # label, extra MCA on btl_ft's install
    ("detector off", {"mpi_ft_detector": "false"}),
    ("ucx", {"mpi_ft_detector_transport": "ucx"}),
    ("btl", {"mpi_ft_detector_transport": "btl"}),
)


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--reps", type=int, default=None)
    return p.parse_args(argv)


def run_one(sink, np_, label, extra, rep):
    variant, mca = common.config_mca("btl_ft", None, None, extra)
    exe = common.compile_for(SOURCE, variant)
    run = common.run_mpi(harness.mpirun_command(np_, [exe, SETTLE_MS], mca=mca, variant=variant),
                         DEADLINE_S, expect_records=3)
    values = {}
    for r in run["records"]:
        sink.write({"benchmark": "footprint", "label": label, "rep": rep, "ranks": np_, "mca": mca,
                    "test": r["test"], "unit": r["unit"], "median": r["median"], "max": r["max"],
                    "outcome": run["outcome"]})
        values[r["test"]] = r["median"]
    if not values:
        common.progress(f"footprint np {np_} {label}: no result ({run['outcome']})")
    return values


def main(argv):
    options = parse(argv)
    reps = options.reps or (1 if options.quick else 3)
    sizes = QUICK_SIZES if options.quick else SIZES
    sink = common.JsonLines("footprint")
    for rep in range(reps):
        for np_ in sizes:
            shift = rep % len(CONFIGURATIONS)
            rows = CONFIGURATIONS[shift:] + CONFIGURATIONS[:shift]
            with common.MpiLock():
                measured = [(label, run_one(sink, np_, label, extra, rep)) for label, extra in rows]
            shown = "; ".join(f"{label}: " + ", ".join(f"{k} {v}" for k, v in values.items())
                              for label, values in measured)
            common.progress(f"footprint rep {rep + 1}/{reps} np {np_}: {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
