"""Failures handled one at a time until one process is left, as a pass/fail test.

  one_by_one.py --np 4 --kind crash|hang --victims 0,1,2 [--mca KEY=VALUE ...]

Runs ulfm_one_by_one.c: in each round one victim fails, the others revoke
and shrink. Checks: the run ends within its bound, mpirun exits 0, the one
rank that is no victim reports as the last survivor, and no process
stopped itself (neither the quorum rule's "cut off" nor a "declared
failed" message appears).
"""
import argparse
import sys
from mpijobs import checks, launch, mpicmd


STOPPED_ITSELF = ("lost contact with at least half", "was declared failed by the other processes")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, required=True)
    p.add_argument("--kind", choices=["crash", "hang"], required=True)
    p.add_argument("--victims", required=True)
    p.add_argument("--deadline-s", type=int, default=30)
    p.add_argument("--mca", action="append", default=[], metavar="KEY=VALUE")
    args = p.parse_args()
    victims = [int(v) for v in args.victims.split(",")]
    survivors = sorted(set(range(args.np)) - set(victims))
    if len(survivors) != 1:
        p.error("--victims must name every rank but one")
    exe = mpicmd.compile_test("tests/mpi/ulfm_one_by_one.c")
    program = [exe, "--victims", args.victims, "--kind", args.kind, "--deadline-s", args.deadline_s]
    run = launch.run(mpicmd.mpirun(args.np, program, mca=dict(kv.split("=", 1) for kv in args.mca)),
                      deadline_s=args.deadline_s + 30)
    problems = checks.exit_problems(run, args.deadline_s + 30)
    problems += [f"rank {r['rank']}: {r['error']}" for r in run.records if "error" in r]
    last = [r["rank"] for r in run.records if r.get("survivor")]
    if last != survivors:
        problems.append(f"last survivor reported: {last}, expected {survivors}")
    problems += [f"a process stopped itself: '{text}'" for text in STOPPED_ITSELF if text in run.output]
    return checks.verdict(f"{args.kind} one by one, np {args.np}", run, problems)


if __name__ == "__main__":
    sys.exit(main())
