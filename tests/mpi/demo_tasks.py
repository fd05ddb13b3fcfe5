"""`make demo`, last part: the bag of tasks (benchmarks/tasks/tasks.c) on 8
ranks, once without failures and once with a worker hung (SIGSTOP) halfway
through a long task, then the coordinator, rank 0, crashed (SIGKILL). Both
runs do the same work (the second reuses the first's measured speed), so
their times to solution compare."""


from benchmarks.tasks import tasks_job
from mpijobs import paths

NP = 8
HUNG, CRASHED = 4, 0   # rank 4 starts with task 3, a long one
WORKLOAD = {"tasks": 48, "short_ms": 20, "long_ms": 1000, "long_every": 2}


def job(inject, victims, kinds=None):
    return tasks_job.Job(np=NP, inject=inject, victims=victims, kinds=kinds, eta_ms=10, delta_ms=50,
                         when="long", at_ms=0, gap_ms=2500, deadline_s=40, workload=WORKLOAD)


def show_run(label, r):
    if not r["finished"]:
        print(f"  {label}: no answer within {r['bound_s']:g} s (mpirun exit {r['mpirun_exit']})")
        for e in r.get("errors", []):
            print(f"    {e}")
        return False
    print(f"  {label}: answer {r['total']}, correct: {str(r['correct']).lower()}, "
          f"{r['tasks_done']} of {r['tasks']} tasks done, {r['tasks_lost']} lost, "
          f"{r['tasks_redone']} delegated again; time to solution {r['time_s']:.2f} s; "
          f"mpirun exit status {r['mpirun_exit']}")
    return r["correct"] and r["tasks_lost"] == 0


def show_failures(r):
    for f in sorted(r["failures"], key=lambda f: f["failed_at_s"] or 0):
        role = "the coordinator" if f["rank"] == 0 else "a worker"
        print(f"    rank {f['rank']} ({role}) failed at {f['failed_at_s']} s; "
              f"first task delegated after the recovery {f['recovery_ms']} ms later")


def main():
    print(f"\n--- bag of tasks (benchmarks/tasks/tasks.c): {NP} ranks, {WORKLOAD['tasks']} tasks, "
          f"every {WORKLOAD['long_every']}nd computes {WORKLOAD['long_ms']:g} to "
          f"{1.5 * WORKLOAD['long_ms']:g} ms without MPI calls")
    print(f"  rank {HUNG} stopped (SIGSTOP) halfway through a long task, then rank {CRASHED} "
          f"(the coordinator) killed (SIGKILL) 2.5 s after the start; eta 10 ms, delta 50 ms")
    clean = tasks_job.run(job("none", []), out_dir=paths.ROOT / "build" / "demo")
    ok = show_run("failure-free", clean)
    speed = clean.get("iters_per_ms")
    failing = tasks_job.run(job("hang", [HUNG, CRASHED], ["hang", "crash"]), iters_per_ms=speed, out_dir=paths.ROOT / "build" / "demo")
    ok &= show_run("with failures", failing)
    if failing["finished"]:
        show_failures(failing)
    if clean["finished"] and failing["finished"]:
        print(f"  time to solution: {failing['time_s']:.2f} s against {clean['time_s']:.2f} s "
              f"without failures ({failing['time_s'] / clean['time_s']:.2f} x)")
    return ok
