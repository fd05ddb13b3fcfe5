#!/usr/bin/env python3
"""latency: small-message ping-pong (0, 8, 1024 B) and allreduce (8 B,
1 KiB) between 2 ranks, on one host and across 2 emulated nodes, with the
detector off, at its defaults and at η 10 ms (benchmarks/overhead/overhead.c).

The overhead stage runs many configurations a few times each; wall-clock
latency on this VM moves by tens of percent from one run to the next (the
2 virtual CPUs land on other physical ones), so a few ratios cannot show
a 2 % effect. Here only these three configurations run, many times, each
repetition running all three back to back in a rotated order; the ratio
of each run to the detector-off run of the same repetition and setup is
what the report takes the median and quartiles of.
Output: benchmarks/results/latency.jsonl, one line per (run, test).
"""
import sys

from benchmarks import common

from mpijobs import nodes as netns
from mpijobs import mpicmd

SOURCE = common.ROOT / "benchmarks" / "overhead" / "overhead.c"
ONE_HOST, TWO_NODES = "1 host", "2 nodes"
DEADLINE_S = 60
CONFIGURATIONS = (  # label, eta (None: the defaults), extra MCA
    ("off", None, {"mpi_ft_detector": "false"}),
    ("defaults", None, {}),
    ("eta=10ms", 0.01, {}),
)
# ping-pong iterations per batch, allreduce iterations per batch (9 batches each)
PROGRAMS = ((["p2p", 20000], 4), (["allreduce", 5000], 2))
IGNORED = ("bandwidth_4MiB",)  # the overhead stage measures it


def parse(argv):
    return common.runner_arguments(__doc__).parse_args(argv)


def run_one(sink, setup, label, eta, extra, rep):
    variant, mca = common.config_mca("btl_ft", eta, eta and 5 * eta, extra)
    exe = common.compile_for(SOURCE, variant)
    baseline = f"off ({setup})"
    values = {}
    for args, lines in PROGRAMS:
        if setup == ONE_HOST:
            command = mpicmd.mpirun(2, [exe] + args, mca=mca, variant=variant)
        else:
            command = netns.mpirun_command_netns(2, [exe] + args, mca=mca, variant=variant, nodes=2)
        run = common.run_mpi(command, DEADLINE_S, expect_records=lines)
        if not run.records:
            common.progress(f"latency {setup} {label}: {args[0]} gave no result ({run.outcome})")
        for r in run.records:
            if r["test"] in IGNORED:
                continue
            sink.write({"benchmark": "latency", "setup": setup, "label": f"{label} ({setup})",
                        "config": "btl_ft", "eta_s": eta, "delta_s": eta and 5 * eta,
                        "baseline": None if label == "off" else baseline, "rep": rep, "mca": mca,
                        "test": r["test"], "value": r["value"], "unit": r["unit"], "ranks": r["ranks"],
                        "outcome": run.outcome})
            values[r["test"]] = r["value"]
    return values


def one_repetition(sink, setup, rep):
    shift = rep % len(CONFIGURATIONS)
    rows = CONFIGURATIONS[shift:] + CONFIGURATIONS[:shift]
    if setup == ONE_HOST:
        with common.MpiLock():
            return [(label, run_one(sink, setup, label, eta, extra, rep)) for label, eta, extra in rows]
    with netns.made_for_a_run(2) as names:
        if names is None:
            common.progress(f"latency {setup}: skipped, no emulated nodes on this machine")
            return []
        return [(label, run_one(sink, setup, label, eta, extra, rep)) for label, eta, extra in rows]


def main(argv):
    options = parse(argv)
    reps = options.reps or (2 if options.quick else 10)
    sink = common.JsonLines("latency")
    for rep in range(reps):
        for index, setup in enumerate((ONE_HOST, TWO_NODES)):
            for label, values in one_repetition(sink, setup, rep):
                shown = ", ".join(f"{k} {v:.3f}" for k, v in values.items())
                common.progress(f"latency rep {rep + 1} {setup} {label}: {shown}", 2 * rep + index + 1, 2 * reps)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
