#!/usr/bin/env python3
"""respawn: the respawn idiom against shrink-only recovery (issue #35), with
the program the tests run (tests/mpi/ulfm_respawn.c).

  recovery  rank 1 crashes (SIGKILL) or hangs (SIGSTOP) while every rank
            loops on an allreduce, at 4, 8 and 16 ranks on this host. The
            time from the failure to the first result computed by the
            recovered job (its first allreduce, at the last survivor), with
            the respawn idiom (acknowledge, shrink, spawn a replacement,
            merge, split back to the original ranks) and with shrink-only
            (acknowledge, shrink, go on with one rank fewer), interleaved
            run by run. The respawn runs once more without btl/ofi: here,
            with no fabric, libfabric's discovery costs every MPI_Init about
            1 s, the replacement's too (stock 5.0.7 the same). The time
            until every survivor's allreduce failed (all know) and until
            the first one's did (the first to know, about when the
            observer declared it) are recorded beside it.
  replacement  after the respawn, the replacement hangs in turn: the time
            until the first and until every other rank's allreduce fails,
            beside the original rank's hang in the same run. A process spawned after launch must
            be found within δ + 5 ms, as an original one.
η 10 ms, δ 50 ms. A run that passes its bound, or whose sums or ranks are
wrong, is recorded as such and has no time.
Output: benchmarks/results/respawn.jsonl.
"""
import sys

from benchmarks import common

from mpijobs import mpicmd

SOURCE = common.ROOT / "tests" / "mpi" / "ulfm_respawn.c"
ETA, DELTA = 0.01, 0.05
VICTIM = 1
ROUNDS = 20
DEADLINE_S = 60
# (recovery, btl): each (size, kind) runs all three, rotated from one repetition to the next
RECOVERIES = (("respawn", None), ("respawn", "^ofi"), ("shrink", None))


def run_job(np, kind, recovery, btl, then):
    variant, mca = common.config_mca("btl_ft", ETA, DELTA, {"btl": btl} if btl else None)
    exe = common.compile_for(SOURCE, variant)
    args = [exe, "--victims", VICTIM, "--kind", kind, "--recovery", recovery, "--rounds", ROUNDS,
            "--deadline-s", DEADLINE_S - 10]
    if then:
        args += ["--then", then]
    return common.run_mpi(mpicmd.mpirun(np, args, mca=mca, variant=variant), DEADLINE_S)


def measure(run, np, recovery, then):
    """The run's times in ms from each failure, or None where it went wrong."""
    victims = sorted(r["at_ns"] for r in run.records if r.get("victim"))
    reports = [r for r in run.records if "first_result_ns" in r]
    survivors = [r for r in reports if not r["replacement"]]
    size = np if recovery == "respawn" else np - 1
    right = (run.outcome == "exited" and run.returncode == 0 and len(reports) == size
             and len(survivors) == np - 1 and len(victims) == (2 if then else 1)
             and all(r["result_ok"] and r["replaced"] == [VICTIM] for r in reports))
    values = {"right": right, "detected_ms": None, "first_knew_ms": None, "first_result_ms": None,
              "replacement_detected_ms": None, "replacement_first_knew_ms": None}
    if then:  # the replacement stops after the first results, and the others shrink without it
        seconds = [r for r in run.records if "second_failed_ns" in r]
        values["right"] = right = right and len(seconds) == np - 1 and all(
            r["second_failed"] == [VICTIM] and r["second_size"] == np - 1 for r in seconds)
    if not right:
        return values
    values["detected_ms"] = (max(r["failed_ns"] for r in survivors) - victims[0]) / 1e6
    values["first_knew_ms"] = (min(r["failed_ns"] for r in survivors) - victims[0]) / 1e6
    values["first_result_ms"] = (max(r["first_result_ns"] for r in survivors) - victims[0]) / 1e6
    if then:
        values["replacement_detected_ms"] = (max(r["second_failed_ns"] for r in seconds) - victims[1]) / 1e6
        values["replacement_first_knew_ms"] = (min(r["second_failed_ns"] for r in seconds) - victims[1]) / 1e6
    return values


def one(sink, rep, np, kind, recovery, btl, then=None):
    run = run_job(np, kind, recovery, btl, then)
    values = measure(run, np, recovery, then)
    sink.write({"benchmark": "respawn", "rep": rep, "ranks": np, "kind": kind, "recovery": recovery,
                "btl": btl, "then": then, "eta_ms": ETA * 1e3, "delta_ms": DELTA * 1e3, **values,
                "outcome": run.outcome, "returncode": run.returncode})
    return values


def main(argv):
    options = common.runner_arguments(__doc__).parse_args(argv)
    reps = options.reps or (1 if options.quick else 3)
    sizes = (4, 8) if options.quick else (4, 8, 16)
    sink = common.JsonLines("respawn")
    total = reps * len(sizes) * (2 * len(RECOVERIES) + 1)
    done = 0
    for rep in range(reps):
        shift = rep % len(RECOVERIES)  # no recovery always first
        jobs = [(np, kind, recovery, btl, None) for np in sizes for kind in ("crash", "hang")
                for recovery, btl in RECOVERIES[shift:] + RECOVERIES[:shift]]
        jobs += [(np, "hang", "respawn", None, "hang") for np in sizes]
        for np, kind, recovery, btl, then in jobs:
            values = one(sink, rep, np, kind, recovery, btl, then)
            done += 1
            shown = (f"first result {values['first_result_ms']:.1f} ms" if values["first_result_ms"] is not None
                     else "WRONG or blocked")
            if values["replacement_detected_ms"] is not None:
                shown += f", replacement's hang found in {values['replacement_detected_ms']:.1f} ms"
            common.progress(f"respawn {np} ranks {kind} {recovery}{' btl ' + btl if btl else ''}"
                            f"{' then ' + then if then else ''}: {shown}", done, total)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
