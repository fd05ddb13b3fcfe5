"""Ranks of a running job moved into a cgroup (v1) of their own for a while:
what starved_rank.py (a cpu quota) and tests/netns/starved_node.py (the
freezer) do to them."""
import os
import re
import threading
import time
from pathlib import Path
from mpijobs import checks


SUSPICION = re.compile(r"btl_ft: rank \d+ failed")


def rank_pid(exe, rank):
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if str(exe) not in (entry / "cmdline").read_bytes().decode(errors="replace"):
                continue
            if f"PMIX_RANK={rank}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                return int(entry.name)
        except OSError:
            continue
    return None


def detector_running(pid):
    try:
        return any((task / "comm").read_text().strip() == "btl_ft"
                   for task in Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return False


def kept_problems(run, np_, who):
    """What shows that `who` was not kept: mpirun's exit, a suspicion, a rank
    that did not report or reported a failure."""
    problems = checks.exit_problems(run, 60)
    suspicions = [line for line in run.output.splitlines() if SUSPICION.search(line)]
    if suspicions:
        problems.append(f"{who} was declared failed: {suspicions[0]}")
    finished = [r for r in run.records if "rounds" in r and not r.get("failed")]
    if len(finished) != np_:
        problems.append(f"{len(finished)} of {np_} ranks finished without a failure")
    return problems


class RankCgroup(threading.Thread):
    """Once every rank of `ranks` runs its detector thread, and 0.3 s into
    its computation, moves them into a new cgroup under `root`, calls act(),
    then moves them back. A problem is kept in .problem, never raised."""

    def __init__(self, exe, ranks, root):
        super().__init__(daemon=True)
        self.exe, self.ranks, self.root = exe, ranks, root
        self.group = root / f"btl_ft-{type(self).__name__.lower()}-{os.getpid()}-{id(self)}"
        self.problem = None

    def act(self):
        raise NotImplementedError

    def before_release(self):
        """What the group needs before its processes can leave it."""

    def run(self):
        try:
            pids = self._wait_for_detectors()
            if pids:
                time.sleep(0.3)  # into the computation, past MPI_Init
                self.group.mkdir()
                for pid in pids:
                    (self.group / "cgroup.procs").write_text(str(pid))  # every thread of it
                self.act()
        except OSError as e:
            self.problem = f"{type(self).__name__} on ranks {self.ranks} failed: {e}"
        finally:
            self._release()

    def _wait_for_detectors(self):
        pids = {}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            for rank in self.ranks:
                pids[rank] = pids.get(rank) or rank_pid(self.exe, rank)
            if all(pids.values()) and all(detector_running(pid) for pid in pids.values()):
                return list(pids.values())
            time.sleep(0.02)
        self.problem = f"ranks {self.ranks} never all started their detector threads"
        return []

    def _release(self):
        if not self.group.exists():
            return
        self.before_release()
        for pid in (self.group / "cgroup.procs").read_text().split():
            try:
                (self.root / "cgroup.procs").write_text(pid)
            except OSError:
                pass  # it ended meanwhile
        self.group.rmdir()
