#!/usr/bin/env python3
"""crash_notice: from a crash to every survivor's interrupted barrier and
first agreement, at 4, 8 and 16 ranks on one host and across 2 emulated nodes.

Runs benchmarks/crash/crash_notice.c: the last rank SIGKILLs itself right
after a barrier, each survivor times its next MPI_Barrier (which must fail
with MPIX_ERR_PROC_FAILED) and its first MPIX_Comm_agree. The worst
survivor is what a job waits for, so each run records the last survivor's
times. Configurations are interleaved inside each cell, repetitions too, so
a slow minute of the shared machine hits them alike. Output:
benchmarks/results/crash.jsonl.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402
import harness  # noqa: E402

sys.path.insert(0, str(common.ROOT / "tests" / "netns"))
import nodes as netns  # noqa: E402

PROGRAM = Path(__file__).resolve().parent / "crash_notice.c"
DEADLINE_S = 15
# Across nodes Open MPI 5.0.7 picks coll/han, whose barrier is not fault
# tolerant: after a participant crashed it returned MPI_SUCCESS at every
# survivor, or hung. Patch 0034 leaves it out of btl_ft's build when ULFM is
# on; stock is measured without it too, so that its numbers are ULFM's.
STOCK_ACROSS_NODES_MCA = {"coll": "^han"}


def extra_mca(config, setup):
    if setup == "1 host" or common.CONFIGS[config][0] != "ompi-stock":
        return None
    return STOCK_ACROSS_NODES_MCA


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer sizes and repetitions")
    p.add_argument("--reps", type=int, default=None)
    p.add_argument("--configs", default=",".join(common.CONFIGS),
                   help="comma list of configurations (default: all of common.CONFIGS)")
    return p.parse_args(argv)


def summarize(run, n):
    survivors = [r for r in run["records"] if "barrier_ms" in r]
    correct = [r for r in survivors if r["barrier_error"] == "proc_failed" and r["failed"] == [n - 1]]
    barrier = sorted(r["barrier_ms"] for r in survivors)
    agree = sorted(r["agree_ms"] for r in survivors)
    return {"survivors_reported": len(survivors), "detected": len(survivors) == n - 1,
            "correct": len(correct) == n - 1,
            "first_barrier_ms": barrier[0] if barrier else None,
            "last_barrier_ms": barrier[-1] if barrier else None,
            "last_agree_ms": agree[-1] if agree else None}


def one_run(config, n, setup, eta_s=None):
    variant, mca = common.config_mca(config, eta_s, None if eta_s is None else 5 * eta_s,
                                     extra=extra_mca(config, setup))
    exe = common.compile_for(PROGRAM, variant)
    inject = harness.inject_file()
    program = [exe, "--victim", n - 1, "--inject-file", inject, "--deadline-s", DEADLINE_S]
    if setup == "1 host":
        run = common.run_mpi(harness.mpirun_command(n, program, mca=mca, variant=variant),
                             DEADLINE_S + 20 + n, expect_records=n - 1)
    else:
        with netns.exclusive():
            names, _ = netns.ensure_nodes(2)
            try:
                run = common.run_mpi(netns.mpirun_command_netns(n, program, mca=mca, variant=variant),
                                     DEADLINE_S + 20 + n, expect_records=n - 1)
            finally:
                netns.reap(names)
    Path(inject).unlink(missing_ok=True)
    record = {"benchmark": "crash", "config": config, "setup": setup, "n": n, "victim": n - 1,
              "eta_s": eta_s, "mca": mca, "outcome": run["outcome"], "returncode": run["returncode"],
              "wall_s": run["wall_s"], **summarize(run, n)}
    if not record["correct"]:
        record["output_tail"] = run["output"][-800:]
    return record


def cells(quick):
    sizes = [4, 8] if quick else [4, 8, 16]
    for n in sizes:
        yield n, "1 host"
    yield 4, "2 nodes"


def main(argv):
    options = parse(argv)
    reps = options.reps or (2 if options.quick else 5)
    configs = options.configs.split(",")
    sink = common.JsonLines("crash")
    try:
        netns.ensure_nodes(2)
        nodes_missing = None
    except netns.Unavailable as e:
        nodes_missing = str(e)
    for n, setup in cells(options.quick):
        if setup != "1 host" and nodes_missing:
            common.progress(f"crash {setup}: skipped, no emulated nodes here ({nodes_missing})")
            continue
        for rep in range(reps):
            for config in configs:
                r = one_run(config, n, setup)
                r["rep"] = rep
                sink.write(r)
                shown = (f"barrier {r['first_barrier_ms']:.1f}..{r['last_barrier_ms']:.1f} ms, "
                         f"agree {r['last_agree_ms']:.1f} ms" if r["detected"] else "not detected")
                common.progress(f"crash {setup} n={n} rep {rep} {config}: {shown}"
                                f"{'' if r['correct'] else ' (INCORRECT)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
