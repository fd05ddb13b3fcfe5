"""An idle detector wakes its process at most 3 times per heartbeat period.

  idle_wakeups.py [--np 2] [--compute-s 2] [--eta-ms 10 --eta-ms 100 ...]

Runs benchmarks/overhead/idle_cost.c (every rank computes without MPI calls,
one rank per core) at each period, with the timeout 5 periods, and reads the
wakeups of the threads beside the application from /proc (a count, not a
time: it does not depend on how fast this machine is). The floor is one
wakeup per period for the heartbeat; the driver adds one more to progress
messages (comm_ft_detector_driver.c). It used to progress every millisecond
whatever the period: about 900 wakeups per second.
"""
import argparse
import sys
from mpijobs import checks, launch, mpicmd


MAX_WAKEUPS_PER_PERIOD = 3


def check(eta_ms, run):
    if run.timed_out or run.returncode != 0:
        return checks.exit_problems(run, 60)
    measured = {r["test"]: r["value"] for r in run.records if "test" in r}
    if "thread_wakeups" not in measured:
        return [f"eta {eta_ms} ms: no thread_wakeups record"]
    per_period = measured["thread_wakeups"] * eta_ms / 1000
    print(f"  eta {eta_ms} ms: {measured['thread_wakeups']:.1f} wakeups/s, {per_period:.2f} per period, "
          f"application preempted {measured.get('app_preemptions', 0):.1f}/s")
    if per_period > MAX_WAKEUPS_PER_PERIOD:
        return [f"eta {eta_ms} ms: {per_period:.2f} wakeups per period, at most {MAX_WAKEUPS_PER_PERIOD}"]
    return []


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=2)
    p.add_argument("--compute-s", type=float, default=2)
    p.add_argument("--eta-ms", type=float, action="append", default=None)
    args = p.parse_args()
    exe = mpicmd.compile_test("benchmarks/overhead/idle_cost.c")

    def cases():
        for eta_ms in args.eta_ms or [10, 100]:
            mca = {"mpi_ft_detector_period": eta_ms / 1000, "mpi_ft_detector_timeout": 5 * eta_ms / 1000}
            run = launch.run(mpicmd.mpirun(args.np, [exe, args.compute_s], mca=mca),
                              deadline_s=60)
            yield f"eta {eta_ms} ms", run, check(eta_ms, run)
    return checks.verdict_of_cases("idle detector wakeups", cases())


if __name__ == "__main__":
    sys.exit(main())
