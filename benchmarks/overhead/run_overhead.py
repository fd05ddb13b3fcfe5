#!/usr/bin/env python3
"""overhead: latency, bandwidth, allreduce, agreement (before and after a
crash, agree_cost.c) and pure computation with the
detector on, as ratios to the detector off, for btl_ft and for stock's own
detector; for the computation also the wakeups and CPU time of the threads
beside the application (idle_cost.c), and instructions per MPI call counted by
callgrind (call_cost.c), which do not depend on wall-clock noise.

Every repetition runs every configuration once, in an order rotated from one
repetition to the next, so drift of the shared machine (other jobs, thermal,
frequency) spreads over all configurations instead of biasing the one that
happened to run last. The report takes the median over repetitions and the
ratio of medians; the spread (min, max) is kept. Output:
benchmarks/results/overhead.jsonl, one line per (run, test).
"""
import sys
from pathlib import Path

from benchmarks import common
from benchmarks.overhead import call_cost
from mpijobs import mpicmd

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "overhead.c"
IDLE_SOURCE = HERE / "idle_cost.c"
AGREE_SOURCE = HERE / "agree_cost.c"
ETAS = (0.001, 0.01, 0.1)
QUICK_ETAS = (0.01,)
# every program ends in seconds; stock's detector sometimes hangs in the
# agreement, and that run's bound is lost time
DEADLINE_S = 30
# a floor, not a detector: a thread that only wakes twice per eta (idle_cost.c)
BARE = "bare-thread"


def parse(argv):
    return common.runner_arguments(__doc__).parse_args(argv)


def configurations(quick):
    """(label, config, eta, baseline label, extra MCA): each detector setting
    and the 'off' run of the same install it is divided by. The detector
    without its thread (stepped from the application's progress) separates
    what the thread costs from the rest; the BTL path's rows show what its
    thread cost the application (OPAL's locks made real), its own UCX
    context's what is left.
    Quick: every kind of row once, at eta 10 ms (100 ms without the thread)."""
    etas = QUICK_ETAS if quick else ETAS
    rows = [("btl_ft off", "btl_ft", None, None, {"mpi_ft_detector": "false"})]
    rows += [(f"btl_ft eta={e * 1e3:g}ms", "btl_ft", e, "btl_ft off", {}) for e in etas]
    # the fallback path, whose thread shares the application's BTLs
    rows += [(f"btl_ft eta={e * 1e3:g}ms btl path", "btl_ft-btl", e, "btl_ft off", {}) for e in etas]
    rows += [("btl_ft eta=100ms no thread", "btl_ft", 0.1, "btl_ft off",
              {"mpi_ft_detector_thread": "false"})]
    rows += [(f"bare thread, 2 wakeups per eta={e * 1e3:g}ms", BARE, e, "btl_ft off",
              {"mpi_ft_detector": "false"}) for e in etas]
    rows += [("stock off", "stock-default", None, None, {})]
    rows += [(f"stock-detector eta={e * 1e3:g}ms", "stock-detector", e, "stock off", {})
             for e in etas]
    return rows


def programs(quick, config, eta):
    """(source, ranks, arguments, JSON lines rank 0 prints). The computation runs
    one rank per core (fully subscribed): a wakeup then takes a core from the
    application, which is the cost an HPC job pays. The bare thread is a floor
    for the computation only: it wakes twice per eta, as the detector thread
    does while the application computes."""
    compute_s = 2 if quick else 4
    if config == BARE:
        return ((IDLE_SOURCE, 2, [compute_s, eta / 2], 6),)
    return ((SOURCE, 2, ["p2p", 20000], 4), (SOURCE, 2, ["allreduce", 2000], 2),
            (AGREE_SOURCE, 8, [200], 2), (IDLE_SOURCE, 2, [compute_s], 6))


def run_one(sink, quick, label, config, eta, baseline, extra, rep):
    # the bare thread runs on btl_ft's install, its detector off
    variant, mca = common.config_mca("btl_ft" if config == BARE else config, eta, eta and 5 * eta, extra)
    values = {}
    # stock's detector may leave MPI_Finalize hanging, so the run ends a grace
    # period after the results
    for source, np_, args, lines in programs(quick, config, eta):
        exe = common.compile_for(source, variant)
        run = common.run_mpi(mpicmd.mpirun(np_, [exe] + args, mca=mca, variant=variant), DEADLINE_S,
                             expect_records=lines)
        if not run.records:
            common.progress(f"overhead {label}: {args[0]} gave no result ({run.outcome})")
        for r in run.records:
            sink.write({"benchmark": "overhead", "label": label, "config": config, "eta_s": eta,
                        "delta_s": eta and 5 * eta, "baseline": baseline, "rep": rep, "mca": mca,
                        "test": r["test"], "value": r["value"], "unit": r["unit"], "ranks": r["ranks"],
                        "outcome": run.outcome})
            values[r["test"]] = r["value"]
    if call_cost.available() and config != BARE:
        counted, outcome = call_cost.measure(variant, mca)
        if not counted:
            common.progress(f"overhead {label}: call_cost gave no result ({outcome})")
        for test, value in counted.items():
            sink.write({"benchmark": "overhead", "label": label, "config": config, "eta_s": eta,
                        "delta_s": eta and 5 * eta, "baseline": baseline, "rep": rep, "mca": mca,
                        "test": test, "value": value, "unit": "instructions/call", "ranks": 2,
                        "outcome": outcome})
            values[test] = value
    return values


def main(argv):
    options = parse(argv)
    # quick: one repetition of fewer rows keeps `make bench-quick` within its 10 minutes
    reps = options.reps or (1 if options.quick else 6)
    sink = common.JsonLines("overhead")
    rows = configurations(options.quick)
    for rep in range(reps):
        shift = rep % len(rows)
        # one repetition under one hold of the lock: its configurations then share
        # the same machine state, which is what makes their ratios meaningful
        with common.MpiLock():
            measured = [(row[0], run_one(sink, options.quick, *row, rep)) for row in rows[shift:] + rows[:shift]]
        for label, values in measured:
            shown = ", ".join(f"{k} {v:.2f}" for k, v in values.items())
            common.progress(f"overhead repetitions, {label}: {shown}", rep + 1, reps)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
