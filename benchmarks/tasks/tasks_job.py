"""One run of the bag-of-tasks program (tasks.c): its command, its failures,
and the record of how it ended. Shared by run_tasks.py (the driver, the
benchmark stage) and the tests in tests/mpi/.

Crashes and hangs are injected by the victims themselves (tasks.c --fail,
inject.h): a worker halfway through a long task, or any rank at a time
after the start. A lost node is injected from outside: every process of one
emulated node (tests/netns) killed, its daemon included.
"""
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
from benchmarks import common
from mpijobs import launch, mpicmd, paths

SOURCE = HERE / "tasks.c"
NODES = 3          # so that one lost node is a third of the job, never the quorum's half


@dataclass
class Job:
    np: int = 8
    inject: str = "none"            # none | crash | hang | node
    victims: list = field(default_factory=list)
    config: str = "btl_ft"          # a key of common.CONFIGS
    eta_ms: float = 10
    delta_ms: float = 50
    when: str = "time"              # time: at at_ms (+ gap_ms each); long: mid long task after that
    at_ms: float = 1000
    gap_ms: float = 2500
    deadline_s: float = 60          # the program's own bound
    slack_s: float = 20             # mpirun's bound is this much more
    workload: dict = field(default_factory=dict)   # tasks.c options without dashes
    kinds: list = None              # crash or hang per victim, where they differ (else inject)

    def failure_specs(self):
        if self.inject not in ("crash", "hang"):
            return []
        specs = []
        for i, rank in enumerate(self.victims):
            at = self.at_ms + i * self.gap_ms
            when = f"long+{at:g}" if self.when == "long" and rank != 0 else f"{at:g}"
            kind = self.kinds[i] if self.kinds else self.inject
            specs += ["--fail", f"{kind}:{rank}:{when}"]
        return specs

    def mca(self):
        eta, delta = self.eta_ms / 1e3, self.delta_ms / 1e3
        return common.config_mca(self.config, eta, delta)


def program_args(job, exe, inject_dir, iters_per_ms=None):
    args = [exe, "--inject-dir", inject_dir, "--deadline-s", f"{job.deadline_s:g}"]
    for key, value in job.workload.items():
        args += [f"--{key.replace('_', '-')}", value]
    if iters_per_ms:
        args += ["--iters-per-ms", iters_per_ms]
    return args + job.failure_specs()


def result_of(job, records, returncode, wall_s, output):
    """The program's line with the run's configuration and mpirun's exit status."""
    answers = [r for r in records if "correct" in r]
    errors = [r for r in records if "error" in r]
    record = dict(answers[-1]) if answers else {"correct": False, "tasks_done": None, "tasks_lost": None,
                                                "tasks_redone": None, "time_s": None, "failures": []}
    record.update({"finished": bool(answers), "config": job.config, "np": job.np, "inject": job.inject,
                   "victims": job.victims, "kinds": job.kinds, "when": job.when, "eta_ms": job.eta_ms, "delta_ms": job.delta_ms,
                   "workload": job.workload, "mpirun_exit": returncode, "wall_s": round(wall_s, 2),
                   "deadline_s": job.deadline_s, "bound_s": job.deadline_s + job.slack_s})
    if errors:
        record["errors"] = [f"rank {e.get('rank')}: {e['error']}" for e in errors]
    # node losses keep it always: who was declared failed, and when, is
    # the evidence against a false failure among the survivors
    if not (answers and record["correct"] and returncode == 0) or job.inject == "node":
        record["tail"] = output[-3000:]
    return record


def run(job, lock=False, iters_per_ms=None, out_dir=None):
    """Runs job once; lock: hold the machine-wide MPI lock (benchmarks/common)
    around it, for runs not already under `flock`."""
    variant, mca = job.mca()
    if not (paths.prefix(variant) / "bin" / "mpicc").exists():
        return {"skipped": f"no {paths.prefix(variant)} (make {'stock' if 'stock' in variant else 'ompi'})",
                "config": job.config, "inject": job.inject, "victims": job.victims, "np": job.np}
    exe = mpicmd.compile_program(SOURCE, Path(out_dir or common.BIN), variant)
    inject_dir = tempfile.mkdtemp(prefix="btl_ft-tasks-")
    try:
        if job.inject == "node":
            return _run_on_nodes(job, exe, variant, mca, inject_dir, lock, iters_per_ms)
        cmd = mpicmd.mpirun(job.np, program_args(job, exe, inject_dir, iters_per_ms),
                                     mca=mca, variant=variant)
        return _launch(job, cmd, exe, lock)
    finally:
        shutil.rmtree(inject_dir, ignore_errors=True)


def _launch(job, cmd, exe, lock, on_overrun=None):
    bound = job.deadline_s + job.slack_s
    if lock:
        r = common.run_mpi(cmd, bound, on_overrun=on_overrun)
    else:
        r = launch.run(cmd, deadline_s=bound, on_overrun=on_overrun)
    return result_of(job, r.records, r.returncode, r.wall_s, r.output)


def _run_on_nodes(job, exe, variant, mca, inject_dir, lock, iters_per_ms):
    from mpijobs import nodes
    with nodes.exclusive():
        try:
            names, _ = nodes.ensure_nodes(NODES)
        except nodes.Unavailable as e:
            return {"skipped": f"cannot create emulated nodes: {e}", "config": job.config,
                    "inject": "node", "victims": job.victims, "np": job.np}
        # in the victims' order, each node once: the first victim's node is lost first
        victim_nodes = list(dict.fromkeys(next(i for i in range(NODES) if v in nodes.ranks_on(i, job.np, NODES))
                                          for v in job.victims))
        cmd = nodes.mpirun_command_netns(job.np, program_args(job, exe, inject_dir, iters_per_ms), mca=mca,
                                         variant=variant, nodes=NODES)
        killer = NodeKiller(job, nodes, [names[i] for i in victim_nodes], victim_nodes, exe, inject_dir)
        killer.start()
        try:
            record = _launch(job, cmd, exe, lock, on_overrun=lambda: nodes.reap(names))
        finally:
            nodes.reap(names)
        killer.join(timeout=5)
        record.update({"nodes": NODES, "lost_nodes": [names[i] for i in victim_nodes], **killer.notes})
        return record


class NodeKiller(threading.Thread):
    """Kills every process of each victim node (its daemon too) in turn,
    at_ms after the work began (DIR/start, written by tasks.c) and gap_ms
    apart, writing the time first to the files tasks.c reads for each rank
    lost. A loss during MPI_Init or the set-up's collectives, which are not
    fault tolerant, would test nothing of the application."""

    def __init__(self, job, nodes, names, indexes, exe, inject_dir):
        super().__init__(daemon=True)
        self.job, self.nodes, self.names, self.indexes = job, nodes, names, indexes
        self.exe, self.inject_dir, self.notes = str(exe), Path(inject_dir), {}

    def run(self):
        try:
            start_ns = self._wait_start()
            if start_ns is None:
                self.notes["error"] = "the work never began"
                return
            for i, (name, index) in enumerate(zip(self.names, self.indexes)):
                ranks = self.nodes.ranks_on(index, self.job.np, NODES)
                at_ns = start_ns + int((self.job.at_ms + i * self.job.gap_ms) * 1e6)
                time.sleep(max(0, at_ns - time.monotonic_ns()) / 1e9)
                for rank in ranks:
                    (self.inject_dir / str(rank)).write_text(f"{time.monotonic_ns()}\n")
                self.notes.setdefault("killed_ranks", []).extend(self.nodes.kill_node([name], self.exe))
        except Exception as e:      # reported in the record, not lost on stderr
            self.notes["error"] = f"node injection failed: {e!r}"

    def _wait_start(self):
        start = self.inject_dir / "start"
        end = time.monotonic() + self.job.deadline_s
        while time.monotonic() < end:
            if start.exists():
                return int(start.read_text())
            time.sleep(0.01)
        return None
