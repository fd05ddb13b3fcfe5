"""A rank whose detector thread the kernel leaves unrun is kept past the
witness patience; one whose detector thread alone is stopped is declared.

  starved_detector.py [--np 4] [--hold-s 0.7]

4 ranks of ulfm_agree --kind none compute for 3 s without MPI calls (eta
10 ms, delta 50 ms, mpi_ft_detector_witness_patience 0: 4 delta, 200 ms).
Once they compute, the last rank's detector thread alone is held for
--hold-s, over 3 times the patience, while the rest of its process runs:
  - starved: the thread is pinned to CPU 0, where a SCHED_FIFO process of
    this test spins. It is runnable and never runs (the default real-time
    limit, 950 ms in each second, is longer than the hold), as the kernel
    left one in 3 of about 3,000 double-load respawn runs. Its witness must
    see it starved: nobody may be declared failed, every rank must finish,
    and some process must count emitters seen starved;
  - wedged (the control): the thread is stopped by ptrace (PTRACE_SEIZE,
    PTRACE_INTERRUPT: 't', its process's other threads run on). Its witness
    sees the process running, not starved, so the patience ends it: its
    observer must declare it failed. Without that the hold would be too
    short for the starved case to show anything.
Exit 77 (ctest: skipped) with fewer than 2 CPUs, or without the right to
real-time scheduling or ptrace.
"""
import argparse
import ctypes
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.mpi import rank_cgroup
from mpijobs import checks, launch, mpicmd

MCA = {"mpi_ft_detector_period": 0.01, "mpi_ft_detector_timeout": 0.05,
       "mpi_ft_detector_witness_patience": 0, "mpi_ft_verbose": 1}
STARVED = re.compile(r"that a witness saw running \((\d+) of them starved\)")
PTRACE_DETACH, PTRACE_SEIZE, PTRACE_INTERRUPT = 17, 0x4206, 0x4207
WALL = 0x40000000  # waitpid's __WALL: a thread that is not a child's leader
HOG = ("import os, sys, time\n"
       "os.sched_setaffinity(0, {0})\n"
       "os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))\n"
       "print('holding', flush=True)\n"
       "until = time.monotonic() + float(sys.argv[1])\n"
       "while time.monotonic() < until:\n"
       "    pass\n")


def detector_tid(pid):
    for task in Path(f"/proc/{pid}/task").iterdir():
        if (task / "comm").read_text().strip() == "btl_ft":
            return int(task.name)
    raise OSError(f"no btl_ft thread in process {pid}")


def thread_state(pid, tid):
    text = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
    return text[text.rindex(")") + 2]


def run_time_ns(pid, tid):
    return int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])


class Hold(threading.Thread):
    """Holds the detector thread of `rank` for hold_s, 0.3 s into its
    computation: `starve` or `stop` it. What it saw is kept in .seen; a
    problem in .problem, never raised."""

    def __init__(self, exe, rank, hold_s, how):
        super().__init__(daemon=True)
        self.exe, self.rank, self.hold_s, self.how = exe, rank, hold_s, how
        self.problem, self.seen, self.unsupported = None, "", None

    def run(self):
        try:
            pid = self._wait_for_detector()
            if pid:
                time.sleep(0.3)
                getattr(self, self.how)(pid, detector_tid(pid))
        except OSError as e:
            self.problem = f"holding rank {self.rank}'s detector ({self.how}) failed: {e}"

    def _wait_for_detector(self):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            pid = rank_cgroup.rank_pid(self.exe, self.rank)
            if pid and rank_cgroup.detector_running(pid):
                return pid
            time.sleep(0.02)
        self.problem = f"rank {self.rank} never started its detector thread"
        return None

    def starve(self, pid, tid):
        everywhere = os.sched_getaffinity(tid)
        hog = subprocess.Popen([sys.executable, "-c", HOG, str(self.hold_s)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        try:
            if hog.stdout.readline().strip() != "holding":
                self.unsupported = f"no real-time scheduling here: {hog.stderr.read().strip()}"
                return
            os.sched_setaffinity(tid, {0})
            time.sleep(0.05)
            before = run_time_ns(pid, tid)
            states = set()
            while hog.poll() is None:
                states.add(thread_state(pid, tid))
                time.sleep(0.05)
            self.seen = (f"its detector thread ran {(run_time_ns(pid, tid) - before) / 1e6:.1f} ms "
                         f"while held, in states {''.join(sorted(states))}")
        finally:
            hog.kill()
            hog.wait()
            try:
                os.sched_setaffinity(tid, everywhere)
            except OSError:
                pass  # it ended meanwhile

    def stop(self, pid, tid):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        if libc.ptrace(PTRACE_SEIZE, tid, None, None) != 0:
            self.unsupported = f"no ptrace here: {os.strerror(ctypes.get_errno())}"
            return
        try:
            libc.ptrace(PTRACE_INTERRUPT, tid, None, None)
            os.waitpid(tid, WALL)  # stopped
            self.seen = f"its detector thread stopped, in state {thread_state(pid, tid)}"
            time.sleep(self.hold_s)
        finally:
            libc.ptrace(PTRACE_DETACH, tid, None, None)  # fails harmlessly if it was killed


def run_case(exe, args, how):
    program = [exe, "--victims", "0", "--kind", "none", "--inject-after-ms", 400,
               "--deadline-s", 20, "--compute-s", 3]
    hold = Hold(exe, args.np - 1, args.hold_s, how)
    hold.start()
    run = launch.run(mpicmd.mpirun(args.np, program, mca=MCA), deadline_s=60)
    hold.join(timeout=10)
    return run, hold


def hold_problems(hold):
    if hold.problem:
        return [hold.problem]
    return [] if hold.seen else [f"the {hold.how} hold never began"]


def check_starved(run, hold, np_):
    problems = hold_problems(hold)
    if problems:
        return problems
    problems = rank_cgroup.kept_problems(run, np_, f"a rank whose detector was starved ({hold.seen})")
    if not any(int(n) > 0 for n in STARVED.findall(run.output)):
        problems.append(f"no process counted an emitter that a witness saw starved ({hold.seen})")
    return problems


def check_wedged(run, hold, np_):
    problems = hold_problems(hold)
    if problems:
        return problems
    if not re.search(rf"btl_ft: rank {np_ - 1} failed", run.output):
        problems.append(f"a rank whose detector was wedged ({hold.seen}) was never declared failed: "
                        "the patience did not end it, or the hold was too short to show anything")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=4)
    p.add_argument("--hold-s", type=float, default=0.7)
    args = p.parse_args()
    if len(os.sched_getaffinity(0)) < 2:
        print("SKIPPED: fewer than 2 CPUs")
        return 77
    exe = mpicmd.compile_test("tests/mpi/ulfm_agree.c")
    outcome = {}

    def cases():
        for how, label, check in (("starve", "starved", check_starved), ("stop", "wedged (control)", check_wedged)):
            run, hold = run_case(exe, args, how)
            if hold.unsupported:
                outcome["skip"] = hold.unsupported
                return
            counts = [line.split("btl_ft: ", 1)[-1] for line in run.output.splitlines() if STARVED.search(line)]
            print(f"{label}: {hold.seen}; {'; '.join(counts) or 'no witness saw it'}", flush=True)
            yield label, run, check(run, hold, args.np)

    verdict = checks.verdict_of_cases("a starved detector is kept, a wedged one declared", cases())
    if "skip" in outcome:
        print(f"SKIPPED: {outcome['skip']}")
        return 77
    return verdict


if __name__ == "__main__":
    sys.exit(main())
