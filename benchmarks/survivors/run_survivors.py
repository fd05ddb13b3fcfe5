#!/usr/bin/env python3
"""survivors: MPIX_Comm_allreduce_survivors (seed 001, fed by the detector)
against MPI_Allreduce and against ULFM's recovery idiom.

  latency  failure-free, 8 B to 32 KiB of doubles at 4, 8 and 16 ranks on
           this host: each run times MPI_Allreduce and the survivor
           allreduce in interleaved batches, and the ratio of their medians
           is taken within the run (benchmarks/survivors/survivors_bench.c).
           Each size of job runs at the radixes 2, 4, 8 and its own size (a
           flat tree: one level up, one down), in turn: seed 001 chooses the
           radix by measuring (mpi_ft_survivors_radix).
  faults   seed 001's Table 1 columns at 8 and 16 ranks: 1 fault, 2 parallel (in
           different subtrees), 2 serial (a process and its parent), 3 mixed;
           crash and hang; failing just before the call or 2 ms into it. The
           time from the first failure until every survivor holds the
           consistent result, for: the survivor allreduce (btl_ft), the idiom
           (MPI_Allreduce, agree on success, revoke, shrink, again) on btl_ft,
           and the idiom on stock 5.0.7 (its defaults for a crash; its
           heartbeat detector for a hang, which it does not find otherwise).
           η 10 ms, δ 50 ms everywhere. A run whose survivors disagree, or
           that passes its bound, is recorded as such.
Output: benchmarks/results/survivors.jsonl.
"""
import sys

from benchmarks import common

from mpijobs import mpicmd

SOURCE = common.ROOT / "benchmarks" / "survivors" / "survivors_bench.c"
ETA, DELTA = 0.01, 0.05
DEADLINE_S = 30
# seed 001's Table 1 columns; radix 4: 0 is the root, 4 the parent of 5, 6
# and 7, and 1, 2, 3, 5, 6, 7 leaves (at 8 and at 16 ranks)
CASES = (
    ("1 fault", [5], 0),
    ("2 parallel", [3, 6], 0),
    ("2 serial", [4, 5], 0),
    ("3 mixed", [2, 4, 5], 0),
)
RECOVERIES = (  # label, configuration, program's --recovery
    ("survivors (btl_ft)", "btl_ft", "survivors"),
    ("idiom (btl_ft)", "btl_ft", "idiom"),
    ("idiom (stock)", None, "idiom"),
)


def stock_config(kind):
    return "stock-detector" if kind == "hang" else "stock-default"


def radixes(np):
    """2, 4, the default 8, and the job's size: a flat tree."""
    return sorted({2, 4, min(8, np), np})


def latency(sink, ranks, reps):
    variant, mca = common.config_mca("btl_ft")
    exe = common.compile_for(SOURCE, variant)
    for rep in range(reps):
        for np in ranks:
            # rotated, so that no radix always runs first
            order = radixes(np)[rep % len(radixes(np)):] + radixes(np)[:rep % len(radixes(np))]
            for radix in order:
                run = common.run_mpi(mpicmd.mpirun(np, [exe, "latency", "--batches", 9, "--iterations", 100],
                                                   mca={**mca, "mpi_ft_survivors_radix": radix},
                                                   variant=variant), DEADLINE_S * 4)
                for r in run.records:
                    sink.write({"benchmark": "survivors", "part": "latency", "ranks": np, "radix": radix,
                                "rep": rep, "test": r["test"], "mpi_us": r["mpi_us"],
                                "survivors_us": r["survivors_us"], "ratio": r["survivors_us"] / r["mpi_us"],
                                "outcome": run.outcome})
                shown = ", ".join(f"{r['test']} {r['survivors_us'] / r['mpi_us']:.2f}x" for r in run.records)
                common.progress(f"survivors latency {np} ranks radix {radix} rep {rep + 1}: {shown or run.outcome}")


def fault_run(sink, np, case, victims, kind, when, recovery, rep):
    label, config, program_recovery = recovery
    name = config or stock_config(kind)
    variant, mca = common.config_mca(name, ETA, DELTA)
    exe = common.compile_for(SOURCE, variant)
    args = [exe, "fault", "--recovery", program_recovery, "--victims", ",".join(map(str, victims)),
            "--kind", kind, "--when", when]
    if config:  # the cases name ranks of a radix-4 tree (CASES)
        mca = {**mca, "mpi_ft_survivors_radix": 4}
    survivors = [r for r in range(np) if r not in victims]
    run = common.run_mpi(mpicmd.mpirun(np, args, mca=mca, variant=variant), DEADLINE_S,
                         expect_records=len(survivors) + len(victims))
    injected = [r["at_ns"] for r in run.records if "victim" in r]
    done = {r["rank"]: r for r in run.records if "done_ns" in r}
    values = {done[s]["value"] for s in survivors if s in done}
    expected = sum(1 << s for s in survivors)
    complete = len(done) == len(survivors) and len(injected) == len(victims)
    consistent = complete and len(values) == 1
    ms = (max(d["done_ns"] for d in done.values()) - min(injected)) / 1e6 if complete else None
    sink.write({"benchmark": "survivors", "part": "faults", "ranks": np, "case": case, "victims": victims,
                "kind": kind, "when": when, "recovery": label, "config": name, "rep": rep,
                "ms": ms, "complete": complete, "consistent": consistent,
                # the idiom's shrunk result holds exactly the survivors; the survivor
                # allreduce's may hold a victim whose value arrived before it failed
                "survivors_only": consistent and values == {expected},
                "rounds": max((d["rounds"] for d in done.values()), default=None),
                "outcome": run.outcome, "returncode": run.returncode})
    return ms, consistent


def faults(sink, np, reps, cases, kinds, whens):
    total = reps * len(cases) * len(kinds) * len(whens) * len(RECOVERIES)
    done = 0
    for rep in range(reps):
        for case, victims, _ in cases:
            for kind in kinds:
                for when in whens:
                    # interleaved: the three recoveries back to back, rotated
                    shift = rep % len(RECOVERIES)
                    for recovery in RECOVERIES[shift:] + RECOVERIES[:shift]:
                        ms, consistent = fault_run(sink, np, case, victims, kind, when, recovery, rep)
                        done += 1
                        shown = "blocked" if ms is None else f"{ms:.1f} ms" + ("" if consistent else " INCONSISTENT")
                        common.progress(f"survivors {np} ranks {case} {kind} {when} {recovery[0]}: {shown}", done,
                                        total)


def main(argv):
    options = common.runner_arguments(__doc__).parse_args(argv)
    reps = options.reps or (1 if options.quick else 3)
    sink = common.JsonLines("survivors")
    latency(sink, (4, 8) if options.quick else (4, 8, 16), reps)
    cases = CASES[:1] if options.quick else CASES
    for np in (8,) if options.quick else (8, 16):
        faults(sink, np, reps, cases, ("crash", "hang"), ("before", "during"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
