"""One run type for every MPI job of the tests and the benchmarks.

run() starts a command in a session of its own, streams what it prints,
and ends it at the first of: it exited; its deadline passed ('overran');
every expected JSON record was printed and the run did not end within a
grace ('hung_after_report': stock Open MPI leaves a stopped rank unfenced);
stop_when(line) was true ('stopped'). Records may also come as lines
appended to a file (records_file): a program measuring a window its own
output would fall into (the runtime forwards each line, and this process
reads it) writes there instead, looked at every 50 ms or line. Whatever is left of the session is
then killed by session id, never by name (another user's run of the same
program is not touched), also when the caller is interrupted or sent
SIGTERM. A hang is a failure, reported, never a stuck run.
"""
import json
import os
import queue
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

from mpijobs import paths, stuck


@dataclass
class Run:
    outcome: str                  # exited | overran | hung_after_report | stopped
    returncode: int | None        # None unless it exited
    wall_s: float
    records: list = field(default_factory=list)   # JSON objects printed by ranks
    output: str = ""
    stuck: str = ""               # if it overran: what its processes were doing

    @property
    def timed_out(self):
        return self.outcome == "overran"


def run(cmd, deadline_s, expect_records=None, grace_s=5.0, stop_when=None, on_overrun=None,
        env=None, cwd=None, describe_overrun=True, records_file=None):
    """Runs cmd for at most deadline_s (see the module's docstring).
    on_overrun(), if given, is called when the deadline passes, before the
    session is killed: for processes the session kill cannot reach (PRRTE's
    remote daemons run in sessions of their own and may hold the output
    pipe open). An overrun's processes are first described (Run.stuck),
    unless describe_overrun is false (a run expected to hang: gdb stops
    each process for about a second)."""
    _unwind_on_sigterm()
    cwd = cwd or paths.RUN_DIR
    os.makedirs(cwd, exist_ok=True)
    start = time.monotonic()
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, text=True, env=env, cwd=cwd)
    lines, output, records = queue.Queue(), [], []
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    outcome, ended, snapshot = None, False, ""
    written = _RecordsFile(records_file)
    try:
        outcome, ended = _follow(proc, lines, output, records, deadline_s, expect_records, grace_s,
                                 stop_when, start, written)
        if outcome == "overran" and describe_overrun:
            snapshot = stuck.describe(session_pids(proc.pid))
        if outcome == "overran" and on_overrun:
            on_overrun()
    finally:   # also on Ctrl-C or SIGTERM: never leave a run behind
        kill_session(proc.pid)
    proc.wait()
    if not ended:
        _drain(lines, output, records)
    written.update()
    records += written.records
    return Run(outcome, proc.returncode if outcome == "exited" else None,
               round(time.monotonic() - start, 3), records, "".join(output), snapshot)


def _reader(stream, lines):
    for line in stream:
        lines.put(line)
    lines.put(None)


def _take(line, output, records):
    output.append(line)
    record = parse_record(line)
    if record is not None:
        records.append(record)


class _RecordsFile:
    """The records a run's processes append to a file (none without one)."""

    def __init__(self, path):
        self.path, self.offset, self.records = path, 0, []

    def update(self):
        """Reads the whole lines written since the last look."""
        if self.path is None:
            return
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                text = f.read()
        except FileNotFoundError:
            return
        whole = text[:text.rfind(b"\n") + 1]
        self.offset += len(whole)
        self.records += [r for r in map(parse_record, whole.decode().splitlines()) if r is not None]


def _follow(proc, lines, output, records, deadline_s, expect_records, grace_s, stop_when, start, written):
    """Reads the run's output until it ends or its answer is known; returns
    the outcome, and whether the output ended (the pipe closed)."""
    outcome, reported_at, eof = None, None, False
    while outcome is None:
        now = time.monotonic()
        if eof and proc.poll() is not None:
            outcome = "exited"
        elif now - start > deadline_s:
            outcome = "overran"
        elif reported_at is not None and now - reported_at > grace_s:
            outcome = "hung_after_report"
        try:
            line = lines.get(timeout=0.05)
        except queue.Empty:
            line = ""
        if line is None:
            eof = True
        elif line:
            _take(line, output, records)
            if stop_when and stop_when(line):
                outcome = "stopped"
        if expect_records and reported_at is None:
            written.update()
            if len(records) + len(written.records) >= expect_records:
                reported_at = time.monotonic()
    return outcome, eof


def _drain(lines, output, records, wait_s=1.0):
    """What the killed session printed on its way out, until the pipe closes
    (bounded: a remote daemon may hold it open)."""
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        try:
            line = lines.get(timeout=0.05)
        except queue.Empty:
            continue
        if line is None:
            return
        _take(line, output, records)


def parse_record(line):
    """A JSON object that ends its line, or None. mpirun interleaves the
    output of its ranks in the chunks it reads, not in lines, so a record
    may follow another rank's unfinished line ('mm_s{"rank":0,...}': seen
    with UCX's error lines): the object is the first '{' from which the
    rest of the line parses. A help message forwarded by PRRTE ends with
    its string's NUL, which is dropped too."""
    line = line.replace("\0", "").strip()
    if not line.endswith("}"):
        return None
    start = line.find("{")
    while start != -1:
        try:
            record = json.loads(line[start:])
            return record if isinstance(record, dict) else None
        except json.JSONDecodeError:
            start = line.find("{", start + 1)
    return None


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
    rank outlives its launcher). Processes of emulated nodes run in sessions
    of their own; mpijobs.nodes reaps them by namespace."""
    kill_until_gone(lambda: session_pids(sid), rounds=3, pause_s=0.1)


def _exit_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)   # unwinds through run()'s clean-up


def _unwind_on_sigterm():
    """A script stopped with SIGTERM (ctest's or CI's timeout, make's) still
    kills its run: installed by the first run, never at import, in the main
    thread, unless the script chose its own handler."""
    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL):
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
