"""MPI_Abort's error code is mpirun's exit status, as a pass/fail test.

  abort_status.py [--np 4] [--code 14] [--case plain|refused-spawn|others-exit ...]

Runs abort_status.c under mpirun --with-ft ulfm, where rank 0 calls
MPI_Abort(MPI_COMM_WORLD, code), once per case (default: all three):
  plain          nothing else happens;
  refused-spawn  after an MPI_Comm_spawn the launcher refuses (map_by with
                 an unknown qualifier): PRRTE shut itself down, and mpirun
                 exited 0;
  others-exit    the other ranks, which a job that survives failures lets
                 go on, then exit with status 3: the last non-zero exit
                 won, and mpirun exited 3.
Checks that mpirun exits with the code, within its bound, and that the
spawn, where asked for, was refused rather than accepted.
"""
import argparse
import sys
from mpijobs import checks, launch, mpicmd


CASES = {
    "plain": [],
    "refused-spawn": ["--spawn-map-by", "ppr:1:node:BOGUS"],
    "others-exit": ["--others-exit", 3],
}


def check(args, case, run):
    problems = []
    if run.timed_out:
        problems.append(f"{case}: mpirun overran its bound of {args.deadline_s} s")
    elif run.returncode != args.code:
        problems.append(f"{case}: mpirun exit status {run.returncode}, MPI_Abort's code was {args.code}")
    if case == "refused-spawn":
        # rank 0's line may be lost in its abort; the others' may not
        spawn = {r["rank"]: r["spawn"] for r in run.records if "spawn" in r}
        if set(spawn.values()) != {"refused"} or not set(range(1, args.np)) <= set(spawn):
            problems.append(f"{case}: expected ranks 1 to {args.np - 1} to report the spawn "
                            f"refused, got {spawn or 'nothing'}")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=4)
    p.add_argument("--code", type=int, default=14)
    p.add_argument("--case", action="append", choices=sorted(CASES), default=None)
    p.add_argument("--deadline-s", type=int, default=30)
    args = p.parse_args()
    exe = mpicmd.compile_test("tests/mpi/abort_status.c")

    def cases():
        for case in args.case or list(CASES):
            program = [exe, "--code", args.code, *CASES[case]]
            run = launch.run(mpicmd.mpirun(args.np, program), deadline_s=args.deadline_s)
            print(f"  {case}: mpirun exit status {run.returncode} in {run.wall_s:.1f} s")
            yield case, run, check(args, case, run)
    return checks.verdict_of_cases("MPI_Abort's code as the exit status", cases())


if __name__ == "__main__":
    sys.exit(main())
