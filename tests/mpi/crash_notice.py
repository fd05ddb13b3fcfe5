"""A crash reaches every survivor as a crash: after the last rank SIGKILLs
itself, each survivor's next MPI_Barrier fails with MPIX_ERR_PROC_FAILED,
the agreement that follows names exactly that rank, and the detector's
verbose line calls it crashed (the runtime saw it end), never hung.

  crash_notice.py [--np 8]

How fast is benchmarks/crash's question (make bench, stage crash); this
test checks what a survivor learns, with no assertion on time.
"""
import argparse
import re
import sys
from pathlib import Path

import harness

PROGRAM = harness.ROOT / "benchmarks" / "crash" / "crash_notice.c"
BOUND_S = 60
KIND = re.compile(r"btl_ft: rank (\d+) failed: (\w+)")


def check(run, np):
    victim = np - 1
    problems = harness.exit_problems(run, BOUND_S)
    survivors = [r for r in run.records if "barrier_ms" in r]
    if len(survivors) != np - 1:
        problems.append(f"{len(survivors)} of {np - 1} survivors reported")
    for r in survivors:
        if r["barrier_error"] != "proc_failed" or r["failed"] != [victim]:
            problems.append(f"rank {r['rank']}: barrier {r['barrier_error']}, failed {r['failed']}")
    kinds = {(int(rank), kind) for rank, kind in KIND.findall(run.output)}
    if (victim, "crashed") not in kinds:
        problems.append(f"no survivor called rank {victim} crashed (saw {sorted(kinds) or 'nothing'})")
    if any(kind == "hung" for _, kind in kinds):
        problems.append(f"a crash was called a hang: {sorted(kinds)}")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--np", type=int, default=8)
    args = p.parse_args()
    exe = harness.compile_program(PROGRAM, harness.ROOT / "build" / "tests" / "bin")
    inject = harness.inject_file()
    cmd = harness.mpirun_command(args.np, [exe, "--victim", args.np - 1, "--inject-file", inject,
                                           "--deadline-s", 30],
                                 mca={"mpi_ft_verbose": 1})
    run = harness.run(cmd, BOUND_S, program_name=str(exe))
    Path(inject).unlink(missing_ok=True)
    return harness.verdict("crash_notice", run, check(run, args.np))


if __name__ == "__main__":
    sys.exit(main())
