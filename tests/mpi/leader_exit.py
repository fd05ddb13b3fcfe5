"""A rank whose leading thread has left by pthread_exit() is not a crash.

  leader_exit.py [--np 4] [--mca key=value ...]

Runs leader_exit.c: every rank's main() starts a thread that runs MPI and
leaves through pthread_exit() at once, so each rank's leader is a zombie
('Z' in /proc) while the job runs. Checks that nobody logged a failure
(the witness and the node watch took such a rank for ended, and so for
crashed), that every rank reported the right allreduce, and that mpirun
exited 0.
"""
import argparse
import re
import sys
from mpijobs import checks, launch, mpicmd

FAILURE = re.compile(r"btl_ft: rank \d+ .*(failed|ended outside MPI_Finalize)")
DEADLINE_S = 60


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=4)
    p.add_argument("--mca", action="append", default=[], metavar="KEY=VALUE")
    args = p.parse_args()
    exe = mpicmd.compile_test("tests/mpi/leader_exit.c")
    mca = {**dict(kv.split("=", 1) for kv in args.mca), "mpi_ft_verbose": 1}
    run = launch.run(mpicmd.mpirun(args.np, [exe, "--seconds", 1], mca=mca), deadline_s=DEADLINE_S)
    problems = checks.exit_problems(run, DEADLINE_S)
    problems += [f"a failure was logged: {line}" for line in run.output.splitlines() if FAILURE.search(line)]
    sums = sorted((r.get("rank"), r.get("sum")) for r in run.records if "sum" in r)
    if sums != [(rank, args.np) for rank in range(args.np)]:
        problems.append(f"expected every rank to report the sum {args.np}: {sums}")
    return checks.verdict("a rank whose leading thread exited", run, problems)


if __name__ == "__main__":
    sys.exit(main())
