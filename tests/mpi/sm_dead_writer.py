"""A process that dies in the middle of putting a message into a
node-mate's shared-memory FIFO does not leave that node-mate deaf
(patch 0050): `--runs` jobs of sm_dead_writer.c, each with ranks flooding
rank 0 and SIGKILLed at random moments while the last rank sends it a
steady stream, over btl sm with its fast boxes off so that every message
takes the FIFO. Every job's rank 0 must receive the whole stream.

A flooder's death falls between a swap of the FIFO's tail and its link in
about 1 job in 60 here (measured: 1 relink, printed at btl_base_verbose
100, in 60 jobs at 8 ranks and 1 in 60 at 4). Without the patch rank 0
then spins in sm_fifo_read for good: stock 5.0.7 hung in 1 job of 20. So
one run of 40 jobs catches a regression about half the time, and the
bench's repeat stage runs it more.

  sm_dead_writer.py [--np 8] [--runs 40] [--messages 20000]
"""
import argparse
import sys
from mpijobs import checks, launch, mpicmd


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=8)
    p.add_argument("--runs", type=int, default=40)
    p.add_argument("--messages", type=int, default=20000)
    args = p.parse_args()
    exe = mpicmd.compile_test("tests/mpi/sm_dead_writer.c")
    deadline_s = 15
    mca = {"pml": "ob1", "btl": "self,sm", "btl_sm_fbox_max": 0, "btl_base_verbose": 100}
    cases, relinked = [], 0
    for i in range(args.runs):
        run = launch.run(mpicmd.mpirun(args.np, [exe, "--messages", args.messages, "--deadline-s", deadline_s],
                                       mca=mca), deadline_s=deadline_s + 20)
        got = [r.get("received") for r in run.records if r.get("rank") == 0 and "received" in r]
        relinked += run.output.count("its element relinked")
        problems = []
        if got != [args.messages]:
            errors = [r["error"] for r in run.records if "error" in r]
            problems.append(f"job {i + 1}: rank 0 received {got or 'nothing'} of {args.messages} "
                            f"({'; '.join(errors) or run.outcome})")
        if run.timed_out:
            problems.append(f"job {i + 1}: mpirun passed its bound of {deadline_s + 20} s")
        cases.append((f"job {i + 1}", run, problems))
    print(f"  {args.runs} jobs, {args.np - 2} flooders each; a dead writer's element relinked {relinked} times")
    return checks.verdict_of_cases(f"shared-memory FIFO after writers died mid-send, {args.runs} jobs", cases)

if __name__ == "__main__":
    sys.exit(main())
