#!/usr/bin/env python3
"""teardown: how long the kernel takes to end a killed MPI process, seen
from outside the job, next to when the survivors learn of it, per detector
transport. A diagnosis, not a stage of make bench.

crash_notice's victim writes its kill time (CLOCK_MONOTONIC) and SIGKILLs
itself; this script holds a pidfd on the victim from outside the job and
notes when it becomes readable (the process has ended, as its node-mates'
pidfds and its daemon's SIGCHLD see it). Printed per run: that teardown,
and the first and last survivor's failed barrier, all from the kill.

  teardown.py [--np 16] [--reps 4] [--transports ucx,btl] [-- MPIRUN_ARGS...]

Measured with it (2026-11-26, 16 ranks on 2 cores, 5 runs each): the
victim ended 1.54 to 1.84 ms after the kill over the detector's own
transport and 1.36 to 1.66 ms over the BTL path, while the last survivor's
barrier failed at 3.88 to 4.14 and 3.03 to 3.48 ms: most of the gap is
after the end. The victim is looked for among the job's session only: a
first version that read every /proc/*/environ until it found it measured
3.2 to 3.55 ms over the own transport, its own load.
"""
import argparse
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import common
from mpijobs import launch, mpicmd

PROGRAM = Path(__file__).resolve().parent / "crash_notice.c"
FIND_VICTIM_S = 30
DEADLINE_S = 60


def victim_pid(exe, rank, proc):
    """The pid of `rank` of the job running `exe` (its environment names its rank)."""
    end = time.monotonic() + FIND_VICTIM_S
    wanted = f"OMPI_COMM_WORLD_RANK={rank}".encode()
    while time.monotonic() < end and proc.poll() is None:
        for sid_pid in launch.session_pids(proc.pid):
            try:
                cmdline = Path(f"/proc/{sid_pid}/cmdline").read_bytes()
                environ = Path(f"/proc/{sid_pid}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if cmdline.startswith(str(exe).encode()) and wanted in environ:
                return sid_pid
        time.sleep(0.02)
    return None


def one_run(transport, np_, extra):
    inject = mpicmd.inject_file()
    exe = common.compile_for(PROGRAM, "ompi")
    # a long warm-up leaves time to find the victim before it dies
    program = [exe, "--victim", np_ - 1, "--inject-file", inject, "--deadline-s", 10, "--warmup", 300]
    cmd = mpicmd.mpirun(np_, program, mca={"mpi_ft_detector_transport": transport},
                                 extra=extra)
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, text=True)
    try:
        pid = victim_pid(exe, np_ - 1, proc)
        if pid is None:
            return None
        pidfd = os.pidfd_open(pid)
        select.select([pidfd], [], [])
        ended_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        os.close(pidfd)
        output, _ = proc.communicate(timeout=DEADLINE_S)
    finally:
        launch.kill_session(proc.pid)
    killed_ns = int(Path(inject).read_text().split()[0])
    Path(inject).unlink(missing_ok=True)
    records = [json.loads(line) for line in output.splitlines()
               if line.startswith("{") and "barrier_ms" in line]
    barriers = sorted(r["barrier_ms"] for r in records if r["barrier_ms"] is not None)
    return (ended_ns - killed_ns) / 1e6, barriers


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--np", type=int, default=16)
    p.add_argument("--reps", type=int, default=4)
    p.add_argument("--transports", default="ucx,btl")
    p.add_argument("mpirun_args", nargs="*", help="after --: more mpirun arguments (-x VAR=VALUE)")
    args = p.parse_args(argv)
    for rep in range(args.reps):
        for transport in args.transports.split(","):
            result = one_run(transport, args.np, args.mpirun_args)
            if result is None or not result[1]:
                print(f"np {args.np} {transport}: no result", flush=True)
                continue
            teardown_ms, barriers = result
            print(f"np {args.np} {transport}: victim ended {teardown_ms:.2f} ms after the kill; "
                  f"survivors' barrier failed {barriers[0]:.2f} to {barriers[-1]:.2f} ms", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
