"""An idle detector wakes its process at most 3 times per heartbeat period.

  idle_wakeups.py [--np 2] [--compute-s 2] [--eta-ms 10 --eta-ms 100 ...]
                  [--without-syscalls NR,NR]

Runs benchmarks/overhead/idle_cost.c (every rank computes without MPI calls,
one rank per core) at each period, with the timeout 5 periods, and reads the
wakeups of the threads beside the application from /proc (a count, not a
time: it does not depend on how fast this machine is). The floor is one
wakeup per period for the heartbeat; the driver adds one more to progress
messages (comm_ft_detector_driver_loop.c). It used to progress every millisecond
whatever the period: about 900 wakeups per second. The threads beside the
application must also take at most 10 % of the wall time between them: a
thread that spins never sleeps, so its wakeups do not show it.

--without-syscalls runs every rank as on an older kernel, the system calls
named failing with ENOSYS (tests/mpi/without_syscalls.c): CMakeLists.txt
refuses 449, 441 and 434, futex_waitv (Linux 5.16: no lifeline thread),
epoll_pwait2 (5.11) and pidfd_open (5.3). Where epoll_pwait2 was refused
the detector thread used to spin on a core.
"""
import argparse
import platform
import sys
from mpijobs import checks, launch, mpicmd


MAX_WAKEUPS_PER_PERIOD = 3
MAX_THREAD_CPU_PERCENT = 10


def check(eta_ms, run):
    if run.timed_out or run.returncode != 0:
        return checks.exit_problems(run, 60)
    measured = {r["test"]: r["value"] for r in run.records if "test" in r}
    if "thread_wakeups" not in measured:
        return [f"eta {eta_ms} ms: no thread_wakeups record"]
    per_period = measured["thread_wakeups"] * eta_ms / 1000
    thread_cpu = measured.get("thread_cpu")
    print(f"  eta {eta_ms} ms: {measured['thread_wakeups']:.1f} wakeups/s, {per_period:.2f} per period, "
          f"application preempted {measured.get('app_preemptions', 0):.1f}/s, other threads' CPU {thread_cpu} %")
    problems = []
    if per_period > MAX_WAKEUPS_PER_PERIOD:
        problems.append(f"eta {eta_ms} ms: {per_period:.2f} wakeups per period, at most {MAX_WAKEUPS_PER_PERIOD}")
    if thread_cpu is None or thread_cpu > MAX_THREAD_CPU_PERCENT:
        problems.append(f"eta {eta_ms} ms: the other threads took {thread_cpu} % of the wall time, "
                        f"at most {MAX_THREAD_CPU_PERCENT}")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=2)
    p.add_argument("--compute-s", type=float, default=2)
    p.add_argument("--eta-ms", type=float, action="append", default=None)
    p.add_argument("--without-syscalls", help="comma list of x86-64 system call numbers to refuse")
    args = p.parse_args()
    program = [mpicmd.compile_test("benchmarks/overhead/idle_cost.c"), args.compute_s]
    if args.without_syscalls:
        if platform.machine() != "x86_64":
            print("SKIP: --without-syscalls filters x86-64 system calls only")
            return 77
        program = [mpicmd.compile_test("tests/mpi/without_syscalls.c"), args.without_syscalls, *program]

    def cases():
        for eta_ms in args.eta_ms or [10, 100]:
            mca = {"mpi_ft_detector_period": eta_ms / 1000, "mpi_ft_detector_timeout": 5 * eta_ms / 1000}
            run = launch.run(mpicmd.mpirun(args.np, program, mca=mca), deadline_s=60)
            yield f"eta {eta_ms} ms", run, check(eta_ms, run)
    return checks.verdict_of_cases("idle detector wakeups", cases())


if __name__ == "__main__":
    sys.exit(main())
