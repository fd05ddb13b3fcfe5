"""The bag of tasks (benchmarks/tasks/tasks.c) under one failure, as a test.

  tasks_check.py --np 6 --inject crash|hang|none [--victims 4] [--when time|long]
                 [--at-ms 0] [--long-ms 400] [--long-every 2] [--tasks 30]

With a failure: the answer is correct, no task is lost, exactly the victims
are reported failed, each with a recovery time, and mpirun exits 0. Without
one (--inject none): also nobody was declared failed, though every task
computes without MPI calls for --long-ms.
"""
import argparse
import sys


from benchmarks.tasks import tasks_job
from mpijobs import paths


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=6)
    p.add_argument("--inject", choices=["crash", "hang", "none"], required=True)
    p.add_argument("--victims", default="")
    p.add_argument("--when", choices=["time", "long"], default="time")
    p.add_argument("--at-ms", type=float, default=0)
    p.add_argument("--tasks", type=int, default=30)
    p.add_argument("--short-ms", type=float, default=20)
    p.add_argument("--long-ms", type=float, default=400)
    p.add_argument("--long-every", type=int, default=2)
    p.add_argument("--eta-ms", type=float, default=10)
    p.add_argument("--delta-ms", type=float, default=50)
    p.add_argument("--deadline-s", type=float, default=20)
    return p.parse_args()


def check(args, r, victims):
    problems = []
    if not r["finished"]:
        return [f"no answer within {r['bound_s']:g} s (mpirun exit {r['mpirun_exit']})"] + r.get("errors", [])
    if r["correct"] is not True:
        problems.append(f"wrong answer: total {r['total']}, expected {r['expected']}")
    if r["tasks_lost"] != 0:
        problems.append(f"{r['tasks_lost']} tasks lost")
    if r["mpirun_exit"] != 0:
        problems.append(f"mpirun exit status {r['mpirun_exit']}")
    failed = sorted(f["rank"] for f in r["failures"])
    if failed != victims:
        problems.append(f"failed ranks {failed}, injected {victims}")
    if r["unrecovered_failures"]:
        problems.append(f"{r['unrecovered_failures']} failures known but not recovered from at the end")
    for f in r["failures"]:
        if f["recovery_ms"] is None:
            problems.append(f"rank {f['rank']}: no recovery time (failure or rescheduling not seen)")
    return problems + r.get("errors", [])


def main():
    args = parse()
    victims = sorted(int(v) for v in args.victims.split(",") if v) if args.inject != "none" else []
    workload = {"tasks": args.tasks, "short_ms": args.short_ms, "long_ms": args.long_ms,
                "long_every": args.long_every}
    job = tasks_job.Job(np=args.np, inject=args.inject, victims=victims, eta_ms=args.eta_ms,
                        delta_ms=args.delta_ms, when=args.when, at_ms=args.at_ms, gap_ms=2000,
                        deadline_s=args.deadline_s, workload=workload)
    r = tasks_job.run(job, out_dir=paths.ROOT / "build" / "tests" / "bin")
    print({k: v for k, v in r.items() if k != "tail"})
    problems = check(args, r, victims)
    name = f"tasks {args.inject} {victims}"
    if problems:
        print("FAILED:\n  " + "\n  ".join(problems))
        print("--- output ---\n" + r.get("tail", ""))
        return 1
    print(f"ok: {name} in {r['wall_s']:.1f} s, time to solution {r['time_s']:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
