#!/usr/bin/env python3
"""footprint: resident memory, file descriptors and threads per process with
the detector over its own UCX context and over the application's BTLs, at
the defaults, as differences to the detector off (footprint.c), on one host
and across 2 emulated nodes (tests/netns), where the detector's context
also opens UCX's tcp and its heartbeat worker. Every repetition runs every
configuration once per size, in an order rotated from one repetition to
the next; the report takes medians over repetitions.
Output: benchmarks/results/footprint.jsonl, one line per (run, test).
"""
import sys
from pathlib import Path

from benchmarks import common

from mpijobs import nodes as netns
from mpijobs import mpicmd

SOURCE = Path(__file__).resolve().parent / "footprint.c"
ONE_HOST, TWO_NODES = "1 host", "2 nodes"
SIZES = ((ONE_HOST, 2), (ONE_HOST, 16), (ONE_HOST, 64), (TWO_NODES, 16))
QUICK_SIZES = ((ONE_HOST, 2), (ONE_HOST, 16), (TWO_NODES, 4))
SETTLE_MS = 1000
DEADLINE_S = 120
CONFIGURATIONS = (  # label, extra MCA on btl_ft's install
    ("detector off", {"mpi_ft_detector": "false"}),
    ("ucx", {"mpi_ft_detector_transport": "ucx"}),
    ("btl", {"mpi_ft_detector_transport": "btl"}),
)


def parse(argv):
    return common.runner_arguments(__doc__).parse_args(argv)


def run_one(sink, setup, np_, label, extra, rep):
    variant, mca = common.config_mca("btl_ft", None, None, extra)
    exe = common.compile_for(SOURCE, variant)
    if setup == ONE_HOST:
        command = mpicmd.mpirun(np_, [exe, SETTLE_MS], mca=mca, variant=variant)
    else:
        command = netns.mpirun_command_netns(np_, [exe, SETTLE_MS], mca=mca, variant=variant, nodes=2)
    run = common.run_mpi(command, DEADLINE_S, expect_records=3)
    values = {}
    for r in run.records:
        sink.write({"benchmark": "footprint", "label": label, "rep": rep, "setup": setup, "ranks": np_,
                    "mca": mca,
                    "test": r["test"], "unit": r["unit"], "median": r["median"], "max": r["max"],
                    "outcome": run.outcome})
        values[r["test"]] = r["median"]
    if not values:
        common.progress(f"footprint {setup} np {np_} {label}: no result ({run.outcome})")
    return values


def run_setup(sink, setup, np_, rows, rep):
    """Every configuration once, on this host or on 2 emulated nodes (none
    measured when the nodes cannot be made)."""
    if setup == ONE_HOST:
        with common.MpiLock():
            return [(label, run_one(sink, setup, np_, label, extra, rep)) for label, extra in rows]
    with netns.made_for_a_run(2) as names:
        if names is None:
            common.progress(f"footprint {setup}: skipped, no emulated nodes on this machine")
            return []
        return [(label, run_one(sink, setup, np_, label, extra, rep)) for label, extra in rows]


def main(argv):
    options = parse(argv)
    reps = options.reps or (1 if options.quick else 3)
    sizes = QUICK_SIZES if options.quick else SIZES
    sink = common.JsonLines("footprint")
    for rep in range(reps):
        for index, (setup, np_) in enumerate(sizes):
            shift = rep % len(CONFIGURATIONS)
            rows = CONFIGURATIONS[shift:] + CONFIGURATIONS[:shift]
            measured = run_setup(sink, setup, np_, rows, rep)
            shown = "; ".join(f"{label}: " + ", ".join(f"{k} {v}" for k, v in values.items())
                              for label, values in measured)
            common.progress(f"footprint rep {rep + 1} {setup} np {np_}: {shown}",
                            rep * len(sizes) + index + 1, reps * len(sizes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
