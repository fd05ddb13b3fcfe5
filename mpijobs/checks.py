"""Runs ULFM programs under the built mpirun, bounded in time.

One job of this module: start `mpirun --with-ft ulfm` in its own session,
wait at most a deadline, kill the whole session if it overruns (a hang is a
failure, reported, never a stuck run), and return what the ranks printed as
JSON lines. Used by `make demo`, the MPI tests and the benchmarks.
"""
import json
import os
import re
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the detector's line at mpi_ft_verbose 1: who failed, and how it became
# known (crashed, hung, unreachable)
FAILURE_KIND = re.compile(r"btl_ft: rank (\d+) failed: (\w+)")


@dataclass
class Run:
    returncode: int | None       # None when the run overran its deadline
    wall_s: float
    records: list = field(default_factory=list)   # JSON objects printed by ranks
    output: str = ""

    @property
    def timed_out(self):
        return self.returncode is None


def prefix(variant="ompi"):
    return Path(os.environ.get("BTL_FT_OMPI_PREFIX", ROOT / "build" / variant))


def compile_program(source, out_dir, variant="ompi"):
    """mpicc with no extra flags: what a user would type. One binary per
    install: mpicc links with an rpath to its own libmpi, so a binary built
    by one install and launched by another's mpirun would run the first."""
    mpicc = prefix(variant) / "bin" / "mpicc"
    out_dir = Path(out_dir) / prefix(variant).name
    out_dir.mkdir(parents=True, exist_ok=True)
    exe = out_dir / Path(source).stem
    # the program, the headers beside it, and the install it links against
    inputs = [Path(source), mpicc, *Path(source).parent.glob("*.h")]
    if not exe.exists() or exe.stat().st_mtime < max(p.stat().st_mtime for p in inputs):
        subprocess.run([str(mpicc), "-O2", "-Wall", "-o", str(exe), str(source)], check=True)
    return exe


# The transports a job can be restricted to (docs/transports.md): the MCA
# settings a user needs for each. `BTL=uct make test` (or bench) runs every
# job that does not choose its BTL itself over that transport. uct and ofi
# take a variant after a colon: UCX memory domains (uct:tcp) or libfabric
# providers (ofi:shm; ofi:tcp+ofi_rxm for "tcp;ofi_rxm", as a ';' splits
# CMake lists and shell commands).
TRANSPORTS = ("sm", "tcp", "uct", "ofi")


def transport_mca(spec):
    name, _, variant = spec.partition(":")
    if name in ("sm", "tcp") and not variant:
        return {"btl": f"{name},self"}
    if name == "uct":
        # default: UCX's shared memory, sysv for messages, cma for puts (no
        # InfiniBand here)
        return {"btl": "uct,self", "btl_uct_memory_domains": variant or "sysv,cma"}
    if name == "ofi":
        # two-sided as well (ob1 needs send), one named provider
        return {"btl": "ofi,self", "btl_ofi_mode": 2,
                "btl_ofi_provider_include": variant.replace("+", ";")
                                            or os.environ.get("OFI_PROVIDER") or "sockets"}
    raise ValueError(f"unknown transport '{spec}' (expected one of {', '.join(TRANSPORTS)}, "
                     "uct and ofi optionally with :domains or :provider)")


def transport_arg(spec):
    """argparse type of a --transport option: a spec transport_mca accepts."""
    transport_mca(spec)
    return spec


def selected_transport():
    """The transport named by the BTL environment variable, or None."""
    return os.environ.get("BTL") or None


def mpirun_command(np, program_args, mca=None, variant="ompi", extra=()):
    cmd = [str(prefix(variant) / "bin" / "mpirun"), "--with-ft", "ulfm", "-np", str(np),
           "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    mca = dict(mca or {})
    if "btl" not in mca and selected_transport():
        mca = {**transport_mca(selected_transport()), **mca}
    for key, value in mca.items():
        cmd += ["--mca", key, str(value)]
    return cmd + list(extra) + [str(a) for a in program_args]


def session_pids(sid):
    """Every process still in session `sid`: ranks re-parented to init after
    mpirun died keep the session of the launcher we started."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid:   # fields after "(comm)": state ppid pgrp session
                pids.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return pids


def kill_until_gone(select, rounds=50, pause_s=0.0):
    """SIGKILL to every process select() lists, again until it lists none
    that was not killed yet (new ones may appear while we kill: a daemon's
    children), pause_s apart. Returns the pids killed."""
    killed = set()
    for _ in range(rounds):
        pids = [p for p in select() if p not in killed]
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        killed.update(pids)
        time.sleep(pause_s)
    return killed


def kill_session(sid):
    """SIGKILL to what is left of a job started in session `sid` (a stopped
    rank outlives its launcher). Only that session: another user's run of
    the same program is not touched. Processes of emulated nodes run in
    sessions of their own; tests/netns reaps them by namespace."""
    kill_until_gone(lambda: session_pids(sid), rounds=3, pause_s=0.1)


def run(cmd, deadline_s, on_overrun=None):
    """Runs cmd in a session of its own for at most deadline_s; whatever of
    it is left afterwards is killed. on_overrun(), if given, is called first
    when the deadline passes: for processes the session kill cannot reach
    (PRRTE's remote daemons run in sessions of their own and may hold the
    output pipe open)."""
    start = time.monotonic()
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, text=True)
    try:
        output, _ = proc.communicate(timeout=deadline_s)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        if on_overrun:
            on_overrun()
        kill_session(proc.pid)
        output, _ = proc.communicate()
        code = None
    finally:
        kill_session(proc.pid)
    records = []
    # A help message forwarded by PRRTE ends with its string's NUL, which
    # then stands before the next line of output: drop it, or that line's
    # record is lost.
    for line in output.replace("\0", "").splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return Run(code, time.monotonic() - start, records, output)


def inject_file():
    handle, path = tempfile.mkstemp(prefix="btl_ft-inject-")
    os.close(handle)
    os.unlink(path)
    return path


def save_records(name, records, **extra):
    """Per-survivor records as JSON lines under build/results/, for the benchmarks."""
    results = ROOT / "build" / "results"
    results.mkdir(parents=True, exist_ok=True)
    with open(results / f"{name}.jsonl", "w") as out:
        for r in records:
            out.write(json.dumps({"scenario": name, **extra, **r}) + "\n")


def exit_problems(run, bound_s):
    """What is wrong with how mpirun ended: overran its bound, or a non-zero status."""
    if run.timed_out:
        return [f"mpirun overran its bound of {bound_s} s"]
    if run.returncode != 0:
        return [f"mpirun exit status {run.returncode}"]
    return []


def verdict_of_cases(name, cases):
    """verdict() over several runs, given as (label, run, problems) in turn;
    on failure it shows the output of the runs that failed."""
    problems, shown, run = [], "", None
    for label, run, found in cases:
        if found:
            shown += f"--- {label} ---\n{run.output[-2000:]}\n"
        problems += found
    run.output = shown or run.output
    return verdict(name, run, problems)


def verdict(name, run, problems):
    """Prints the outcome of a test; returns its exit status."""
    if problems:
        print("FAILED:\n  " + "\n  ".join(problems))
        print("--- output ---\n" + run.output[-4000:])
        return 1
    print(f"ok: {name} in {run.wall_s:.1f} s")
    return 0
