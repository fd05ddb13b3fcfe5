"""A rank fails just before the others finalize, as a pass/fail test.

  finalize_race.py --np 9 --transport tcp [--runs 3] [--victim 4]

Runs ulfm_finalize_race.c --runs times: every survivor must return from
MPI_Finalize having finalized (no error inside it), mpirun must end within
its bound, exiting 0, and its summary must name the victim alone. (Without
a fence after failures, a survivor that left finalize first was taken for
failed by the others still in its barrier, which then exited without
finalizing: "crashed: exited without finalizing" in 9 of 30 runs.)
"""
import argparse
import sys

from tests.mpi import failure_summary
from mpijobs import checks, launch, mpicmd


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, required=True)
    p.add_argument("--transport", type=mpicmd.transport_arg, default=None)
    p.add_argument("--victim", type=int, default=None, help="default: the middle rank")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--deadline-s", type=int, default=20)
    p.add_argument("--mca", action="append", default=[], metavar="KEY=VALUE")
    args = p.parse_args()
    victim = args.np // 2 if args.victim is None else args.victim
    mca = dict(kv.split("=", 1) for kv in args.mca)
    if args.transport:
        mca = {**mpicmd.transport_mca(args.transport), **mca}
    exe = mpicmd.compile_test("tests/mpi/ulfm_finalize_race.c")
    status = 0
    for attempt in range(args.runs):
        run = launch.run(mpicmd.mpirun(args.np, [exe, "--victim", victim, "--deadline-s", args.deadline_s],
                                                 mca=mca),
                          deadline_s=args.deadline_s + 30)
        problems = checks.exit_problems(run, args.deadline_s + 30)
        problems += [f"rank {r['rank']}: {r['error']}" for r in run.records if "error" in r]
        finalized = sorted(r["rank"] for r in run.records if r.get("finalized"))
        expected = [r for r in range(args.np) if r != victim]
        if finalized != expected:
            problems.append(f"ranks that left MPI_Finalize: {finalized}, expected {expected}")
        if "OPAL ERROR" in run.output:
            problems.append("an error inside MPI_Finalize (OPAL ERROR)")
        problems += failure_summary.check_summary(run.output, args.np, {victim: failure_summary.CRASHED})
        status |= checks.verdict(f"finalize race {attempt + 1} of {args.runs}, np {args.np}", run, problems)
    return status


if __name__ == "__main__":
    sys.exit(main())
