"""A rank starved of CPU is not declared failed: its node's witness saw it running.

  starved_rank.py [--np 4] [--starve-s 1.5]

4 ranks of ulfm_agree --kind none compute for 3 s without MPI calls. While
they do, the last rank is moved into a cpu cgroup (v1) allowed 10 ms of CPU
per 200 ms, which its computing thread uses up: the kernel's CFS bandwidth
control then keeps every thread of it, the detector's too, off the CPU for
the rest of each period. The kernel hands the quota out in slices of 5 ms
(sched_cfs_bandwidth_slice_us), which may run apart in one period, so the
longest gap is at least (200 - 10) / 2 = 95 ms, almost twice the timeout
(eta 10 ms, delta 50 ms). With 100 ms periods that bound was 45 ms: 3 runs
in about 110 saw no deadline pass at all. It is released after --starve-s.
  - with mpi_ft_detector_witness false (the control) its observer must
    declare it failed: otherwise the starvation was too mild and the test
    would prove nothing;
  - with witnesses on, nobody may be declared failed, every rank must
    report, and some process must count an emitter "a witness saw running".
Exit 77 (ctest: skipped) without a writable cgroup v1 cpu hierarchy with
CFS bandwidth control.
"""
import argparse
import re
import sys
import time
from pathlib import Path

from tests.mpi import rank_cgroup
from mpijobs import checks, launch, mpicmd

CPU_ROOT = Path("/sys/fs/cgroup/cpu")
PERIOD_US, QUOTA_US = 200_000, 10_000
WITNESSED = re.compile(r"(\d+) that a witness saw running")
MCA = {"mpi_ft_detector_period": 0.01, "mpi_ft_detector_timeout": 0.05, "mpi_ft_verbose": 1}


def cgroup_usable():
    return (CPU_ROOT / "cpu.cfs_quota_us").exists() and (CPU_ROOT / "cgroup.procs").exists()


class Starver(rank_cgroup.RankCgroup):
    """Starves one rank with a cpu quota, then releases it."""

    def __init__(self, exe, rank, starve_s):
        super().__init__(exe, [rank], CPU_ROOT)
        self.starve_s = starve_s
        self.starved = False
        self.throttling = ""  # the group's cpu.stat when released

    def act(self):
        (self.group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (self.group / "cpu.cfs_quota_us").write_text(str(QUOTA_US))
        self.starved = True
        time.sleep(self.starve_s)

    def before_release(self):
        # how often the quota held the rank off, and for how long: a run
        # that proves nothing (no deadline passed) shows here whether the
        # kernel throttled it at all
        try:
            self.throttling = " ".join((self.group / "cpu.stat").read_text().split())
        except OSError as e:
            self.throttling = f"cpu.stat unreadable: {e}"


def run_case(exe, args, witness):
    mca = {**MCA, "mpi_ft_detector_witness": "true" if witness else "false"}
    program = [exe, "--victims", "0", "--kind", "none", "--inject-after-ms", 400,
               "--deadline-s", 20, "--compute-s", 3]
    starver = Starver(exe, args.np - 1, args.starve_s)
    starver.start()
    run = launch.run(mpicmd.mpirun(args.np, program, mca=mca), deadline_s=60)
    starver.join(timeout=10)
    return run, starver


def check_control(run, starver):
    if starver.problem or not starver.starved:
        return [starver.problem or "the rank was never starved"]
    if not rank_cgroup.SUSPICION.search(run.output):
        return ["witnesses off: nobody declared the starved rank failed, so the starvation "
                f"was too mild for this test to show anything (its cgroup: {starver.throttling})"]
    return []


def check_witnessed(run, starver, np_):
    if starver.problem or not starver.starved:
        return [starver.problem or "the rank was never starved"]
    problems = rank_cgroup.kept_problems(run, np_, "a starved rank")
    if not any(int(n) > 0 for n in WITNESSED.findall(run.output)):
        problems.append("no process counted an emitter that a witness saw running "
                        f"(the starved rank's cgroup: {starver.throttling})")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=4)
    p.add_argument("--starve-s", type=float, default=1.5)
    args = p.parse_args()
    if not cgroup_usable():
        print(f"SKIPPED: no cgroup v1 cpu hierarchy with CFS bandwidth control at {CPU_ROOT}")
        return 77
    exe = mpicmd.compile_test("tests/mpi/ulfm_agree.c")

    def cases():
        run, starver = run_case(exe, args, witness=False)
        yield "witnesses off (control)", run, check_control(run, starver)
        run, starver = run_case(exe, args, witness=True)
        yield "witnesses on", run, check_witnessed(run, starver, args.np)
    return checks.verdict_of_cases("a starved rank is witnessed running", cases())


if __name__ == "__main__":
    sys.exit(main())
