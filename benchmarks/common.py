"""What every benchmark runner shares: configurations, bounded MPI runs, JSON lines.

The three configurations compared are named here once, so every runner and
the report agree on what "btl_ft", "stock-detector" and "stock-default" mean.

MPI runs go through `run_mpi`, which holds a machine-wide lock (other people
run MPI jobs on this machine; overlapping runs would measure each other) and
bounds every run by a deadline. It streams the output, so a run whose
survivors have all reported but whose mpirun never returns (stock leaves a
stopped process unfenced) is recorded as such after a short grace period
instead of costing the whole deadline. On overrun it kills the processes of
the run's own session by id (launch.kill_session, as launch.run does).
"""
import argparse
import datetime
import fcntl
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

from mpijobs import launch, mpicmd, paths

ROOT = paths.ROOT

# BTL=sm|tcp|uct[:domains]|ofi[:provider] (mpicmd.transport_mca) runs every job
# over one transport; its results go beside the default ones instead of
# replacing them, under a name with the variant's punctuation made plain.
TRANSPORT = mpicmd.selected_transport()
TRANSPORT_NAME = None if TRANSPORT is None else re.sub(r"[^A-Za-z0-9_,.-]+", "-", TRANSPORT)
RESULTS_NAME = "results" if TRANSPORT is None else f"results-{TRANSPORT_NAME}"
RESULTS = ROOT / "benchmarks" / RESULTS_NAME
BIN = ROOT / "build" / "bench" / "bin"
RUN_DIR = ROOT / "build" / "bench" / "run"
LOCK_PATH = "/tmp/btlft-mpi.lock"
ULFM_AGREE = ROOT / "tests" / "mpi" / "ulfm_agree.c"

# name -> (install under build/, extra MCA, does it take eta/delta)
CONFIGS = {
    "btl_ft": ("ompi", {}, True),
    # the fallback path: the detector over the application's BTLs
    "btl_ft-btl": ("ompi", {"mpi_ft_detector_transport": "btl"}, True),
    "stock-detector": ("ompi-stock", {"mpi_ft_detector": "true",
                                      "mpi_ft_detector_thread": "true"}, True),
    "stock-default": ("ompi-stock", {}, False),
}


# The emulated nodes (tests/netns) share this machine's 2 cores, so a job
# spread over them oversubscribes it, which the runtime cannot know: ranks
# spinning in MPI would keep a woken thread off the CPU until the next tick
# (4 ms here). A user of an oversubscribed node sets what Open MPI sets
# itself when it knows, for every configuration alike.
ACROSS_NODES_MCA = {"mpi_yield_when_idle": "1"}
# Across nodes Open MPI 5.0.7 picks coll/han, whose collectives are not fault
# tolerant: after a participant crashed its barrier returned MPI_SUCCESS at
# every survivor, or hung. Patch 0034 leaves it out of btl_ft's build when
# ULFM is on; stock is measured without it too, so that its numbers are ULFM's.
STOCK_ACROSS_NODES_MCA = {"coll": "^han"}


def across_nodes_mca(variant):
    """What every job spread over the emulated nodes adds, by build."""
    return {**ACROSS_NODES_MCA, **(STOCK_ACROSS_NODES_MCA if variant == "ompi-stock" else {})}


def runner_arguments(doc):
    """The options every stage's runner takes: --quick (make bench-quick's
    short version) and --reps (repetitions, else the runner's default)."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--reps", type=int, default=None)
    return p


def config_mca(name, eta_s=None, delta_s=None, extra=None):
    """MCA parameters of one configuration at (eta, delta)."""
    variant, mca, timed = CONFIGS[name]
    mca = dict(mca)
    if timed and eta_s is not None:
        mca["mpi_ft_detector_period"] = f"{eta_s:g}"
        mca["mpi_ft_detector_timeout"] = f"{delta_s:g}"
    mca.update(extra or {})
    return variant, mca


def compile_for(source, variant):
    return mpicmd.compile_program(source, BIN, variant)


_STAGE_STARTED = time.monotonic()   # each stage runs in a process of its own


def progress(message, done=None, total=None):
    """One line of a stage's progress; with done and total, also how far it
    is and about how long is left, at the pace so far."""
    stamp = time.strftime("%H:%M:%S")
    if done and total:
        left_s = (time.monotonic() - _STAGE_STARTED) / done * (total - done)
        left = f"{left_s / 60:.0f} min" if left_s >= 90 else f"{left_s:.0f} s"
        message = f"{done}/{total} {message} (about {left} left)"
    print(f"[{stamp}] {message}", flush=True)


class MpiLock:
    """flock on LOCK_PATH, held for one run or for a small group of runs
    (the configurations of one cell): short holds, so other users' runs
    interleave with ours, but not so short that every run queues behind
    theirs. Re-entrant within this process: run_mpi takes it too."""
    _depth = 0
    _handle = None

    def __enter__(self):
        if MpiLock._depth == 0:
            handle = open(LOCK_PATH, "a")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                progress(f"waiting for {LOCK_PATH} (another MPI run is on)")
                began = time.monotonic()
                fcntl.flock(handle, fcntl.LOCK_EX)
                _note_lock_wait(time.monotonic() - began)
            MpiLock._handle = handle
        MpiLock._depth += 1
        return self

    def __exit__(self, *exc):
        MpiLock._depth -= 1
        if MpiLock._depth == 0:
            fcntl.flock(MpiLock._handle, fcntl.LOCK_UN)
            MpiLock._handle.close()
            MpiLock._handle = None


def _note_lock_wait(seconds):
    """Time spent waiting for other people's runs, so the report can tell a
    slow suite from a busy machine."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "lock_waits.jsonl", "a") as out:
        out.write(json.dumps({"script": Path(sys.argv[0]).name, "waited_s": round(seconds, 2)}) + "\n")


def run_mpi(cmd, deadline_s, **options):
    """mpijobs.launch.run under the machine-wide lock, in build/bench/run
    (options: expect_records, grace_s, stop_when, on_overrun, env). Stock
    Open MPI's runs overrun by design: they are not described."""
    options.setdefault("describe_overrun", False)
    with MpiLock():
        return launch.run(cmd, deadline_s, cwd=RUN_DIR, **options)


def source_commit():
    """The commit the benchmarks ran from, '+' when the tree differed from it
    (results aside), or None outside a git checkout."""
    def git(*args):
        run = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
        return run.stdout.strip() if run.returncode == 0 else None
    commit = git("rev-parse", "--short=12", "HEAD")
    if commit is None:
        return None
    changed = git("status", "--porcelain", "--", ".", ":!benchmarks/results*", ":!benchmarks/RESULTS*.md")
    return commit + ("+" if changed else "")


class JsonLines:
    """One results file per benchmark, rewritten by each run of it, so the
    report only ever shows numbers from the same run. Each line says when
    and from which commit it was measured (taken once, at the start: a
    commit made while the stage runs is not the one it measured)."""

    def __init__(self, name):
        RESULTS.mkdir(parents=True, exist_ok=True)
        self.path = RESULTS / f"{name}.jsonl"
        self.commit = source_commit()
        self.handle = open(self.path, "w")

    def write(self, record):
        record = {"when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "commit": self.commit, **record}
        self.handle.write(json.dumps(record) + "\n")
        self.handle.flush()

    def carry(self, record):
        """A line of an earlier run kept as it was, its date included."""
        self.handle.write(json.dumps(record) + "\n")


def read_jsonl(name):
    path = RESULTS / f"{name}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.open() if line.strip()]


def median(values):
    values = sorted(values)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def median_ratio_interval(numerators, denominators, draws=2000, level=0.95):
    """A bootstrap interval of median(numerators) / median(denominators):
    both resampled with replacement, `draws` times, seeded so that a
    report made twice from one file says the same."""
    rng = random.Random(0)
    ratios = sorted(median(rng.choices(numerators, k=len(numerators)))
                    / median(rng.choices(denominators, k=len(denominators))) for _ in range(draws))
    cut = int((1 - level) / 2 * draws)
    return ratios[cut], ratios[draws - 1 - cut]


def sim_tool(name):
    """build/core/sim/<name> if `make ftsim` built it (release), else the
    test build's (sanitized, slower), else None: the record says which ran."""
    for candidate in (ROOT / "build/core/sim" / name, ROOT / "build/tests/btl_ft/sim" / name):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def ftsim_path():
    return sim_tool("ftsim")


def fttune_path():
    """The advisor for eta and delta."""
    return sim_tool("fttune")
