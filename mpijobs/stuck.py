"""What a stuck process is doing: thread states from /proc, and stacks from gdb.

A run that overran its bound is killed; what its processes were waiting for
is then the only clue to a hang seen once in a hundred runs, so it is taken
first (launch.run, tests/netns).
"""
import shutil
import subprocess
from pathlib import Path

# gdb stops each process for about a second: a bound on the whole snapshot
MAX_PROCESSES = 12


def thread_states(pid):
    """{thread name/tid: "state wchan | kernel stack"} of every thread of pid,
    from /proc (no ptrace, so the process runs on undisturbed)."""
    states = {}
    for task in sorted(Path(f"/proc/{pid}/task").glob("*")):  # none once pid is gone
        try:
            comm = (task / "comm").read_text().strip()
            state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
            wchan = (task / "wchan").read_text().strip()
            stack = (task / "stack").read_text().split()
        except OSError:
            continue
        frames = [f.split("+")[0] for f in stack if "+" in f][:6]
        states[f"{comm}/{task.name}"] = f"{state} {wchan or '-'} | {' < '.join(frames)}"
    return states


def user_stacks(pid):
    """Every thread's backtrace from gdb (installed by ci/deps.sh), or None
    without gdb. It stops the process while it reads: only for a process
    already stuck."""
    if shutil.which("gdb") is None:
        return None
    r = subprocess.run(["timeout", "20", "gdb", "-batch", "-p", str(pid), "-ex", "thread apply all bt 30"],
                       capture_output=True, text=True)
    return "\n".join(line for line in r.stdout.splitlines() if line.startswith(("#", "Thread ")))


def describe(pids):
    """A text report of each process in pids: command line, thread states,
    then every stack (states first: gdb's stops do not disturb them)."""
    pids = sorted(pids)[:MAX_PROCESSES]
    parts = []
    for pid in pids:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        threads = "\n".join(f"  {name}: {state}" for name, state in thread_states(pid).items())
        parts.append((pid, f"process {pid}: {cmdline.strip()[:160]}\n{threads}"))
    return "\n".join(f"{text}\n{user_stacks(pid) or '  (no gdb)'}" for pid, text in parts)
