#!/usr/bin/env python3
"""false_failures: failure-free jobs that must end without a false failure,
for btl_ft and stock's detector, in three setups:
  - 2 emulated nodes, 4 ranks; 3 emulated nodes, 6 ranks (tests/netns: one
    network namespace and one PRRTE daemon per node, tcp between nodes);
  - 2 emulated nodes whose daemons each start a session of their own, as
    PRRTE's do by default: Linux then schedules each node as one group on
    the shared cores (CFS autogroup), which starves whole processes for
    90-230 ms, as separate machines never would (tests/netns/nodes.py);
  - one host, 8 ranks on the 2 cores while a second job (2 processes
    spinning, launched by its own mpirun in a session of its own) loads it;
  - 3 emulated nodes, 6 ranks, under the same second job: whole nodes then
    wait for the CPU together, which only the witnesses' node grace covers.
Each run is ulfm_agree --kind none: agreements for 0.4 s across nodes, or
2 s of computing without MPI calls then agreements on the loaded host. A
run is clean when every rank reports, mpirun exits 0 and no detector
printed a suspicion. delta is scanned downwards (eta = delta / 5) from
50 ms; the scan of a setup stops at the first delta with a false failure,
so the last clean delta is the smallest one found. At one delta a setup
gets up to RUNS runs (50 in `make bench`), and stops early after 3 false
failures: by then the rate is known to be far from zero.
Output: benchmarks/results/false_failures.jsonl, one line per (config, setup, delta).
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import time

from benchmarks import common
from tests.netns import netns_scenario
from mpijobs import launch, mpicmd, nodes, paths

# btl_ft's and stock's verbose-1 lines when they declare a process failed
SUSPICION = re.compile(r"btl_ft: rank \d+ failed|now suspected dead|declared")
DELTAS = [0.05, 0.03, 0.02, 0.01]
QUICK_DELTAS = [0.05]
# nodes: emulated nodes (0: this host); detached: daemons in sessions of
# their own; loaded: a second job spins beside it
Setup = collections.namedtuple("Setup", "name nodes np detached loaded")
SETUPS = [Setup("2 nodes", 2, 4, False, False), Setup("3 nodes", 3, 6, False, False),
          Setup("2 nodes, daemons detached", 2, 4, True, False), Setup("1 host, loaded", 0, 8, False, True),
          Setup("3 nodes, loaded", 3, 6, False, True)]
CONFIGS = ("btl_ft", "stock-detector")
STOP_AFTER_FALSE = 3
LOADED_COMPUTE_S = 2


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="1 run per setup, delta 50 ms only, stock's "
                                                        "detector on the loaded host only")
    p.add_argument("--runs", type=int, default=None)
    p.add_argument("--delta", type=float, action="append", default=None,
                   help="scan only this delta in seconds (repeatable), e.g. 0.05")
    p.add_argument("--config", action="append", choices=CONFIGS,
                   help="measure only this configuration (repeatable)")
    p.add_argument("--setup", action="append", choices=[s.name for s in SETUPS],
                   help="measure only this setup (repeatable)")
    return p.parse_args(argv)


def keep_others(configs, setups):
    """A partial run replaces only what it measures: the earlier lines of
    the other (configuration, setup) pairs stay, each with its own date."""
    return [r for r in common.read_jsonl("false_failures")
            if r["config"] not in configs or r["setup"] not in setups]


def verdict(records, np_, output, ended, how_it_ended):
    """(clean, what to keep of an unclean run): its first two suspicions, or,
    when no detector suspected anyone, how it ended and its last lines, so
    that a rare failure of another kind can still be diagnosed from the
    results."""
    finished = [r for r in records if "rounds" in r]
    suspicions = [line for line in output.splitlines() if SUSPICION.search(line)]
    clean = ended and len(finished) == np_ and not suspicions
    if clean or suspicions:
        return clean, suspicions[:2]
    return False, [f"no suspicion printed; {how_it_ended}; {len(finished)} of {np_} ranks reported",
                   *output.splitlines()[-12:]]


def run_on_nodes(config, delta, setup, bounds):
    variant, mca = common.config_mca(config, delta / 5, delta, {"mpi_ft_verbose": 1})
    exe = common.compile_for(common.ULFM_AGREE, variant)
    np_ = setup.np
    args = netns_scenario.job_args("none", np=np_, nodes=setup.nodes,
                                   deadline_s=bounds[0], slack_s=bounds[1],
                                   variant=variant, mca=[f"{k}={v}" for k, v in mca.items()],
                                   detached=setup.detached)
    with nodes.exclusive():
        names, _ = nodes.ensure_nodes(setup.nodes)
        load = start_load(variant) if setup.loaded else None
        try:
            run, _, _ = netns_scenario.run_job(args, names, exe, [])
        finally:
            if load:
                stop_load(load)
    how = "killed at its deadline" if run.timed_out else f"mpirun exit {run.returncode}"
    clean, evidence = verdict(run.records, np_, run.output,
                                not run.timed_out and run.returncode == 0, how)
    return clean, evidence, run.wall_s


def start_load(variant):
    """The second job: 2 spinning processes under their own mpirun and session."""
    cmd = [str(paths.prefix(variant) / "bin" / "mpirun"), "-np", "2", "--oversubscribe",
           "--bind-to", "none"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += ["sh", "-c", "while :; do :; done"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def stop_load(load):
    # the whole session: mpirun puts its children in process groups of their
    # own, so killing mpirun's group left them spinning (106 of them, once)
    launch.kill_session(load.pid)
    load.wait()
    # killed processes stay listed until init reaps them: give it a moment
    deadline = time.monotonic() + 5
    while (left := launch.session_pids(load.pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    if left:
        raise RuntimeError(f"the load job left processes behind: {left}")


def run_loaded(config, delta, np_):
    variant, mca = common.config_mca(config, delta / 5, delta, {"mpi_ft_verbose": 1})
    exe = common.compile_for(common.ULFM_AGREE, variant)
    program = [exe, "--victims", 0, "--kind", "none", "--inject-after-ms", 400,
               "--deadline-s", 20, "--compute-s", LOADED_COMPUTE_S]
    load = start_load(variant)
    try:
        run = common.run_mpi(mpicmd.mpirun(np_, program, mca=mca, variant=variant),
                             LOADED_COMPUTE_S + 60, expect_records=np_,
                             stop_when=lambda line: bool(SUSPICION.search(line)))
    finally:
        stop_load(load)
    # every rank reporting is the answer; a mpirun that then fails to return
    # is a defect of its own, not a false failure
    ended = run.returncode == 0 or run.outcome == "hung_after_report"
    clean, evidence = verdict(run.records, np_, run.output, ended,
                                f"outcome {run.outcome}, mpirun exit {run.returncode}")
    return clean, evidence, run.wall_s


def scan_setup(sink, config, setup, runs, deltas, bounds):
    name, n_nodes, np_ = setup.name, setup.nodes, setup.np
    for delta in deltas:
        done, false, examples, wall = 0, 0, [], 0.0
        while done < runs and false < STOP_AFTER_FALSE:
            if n_nodes:
                clean, evidence, wall_s = run_on_nodes(config, delta, setup, bounds)
            else:
                clean, evidence, wall_s = run_loaded(config, delta, np_)
            done += 1
            wall += wall_s
            if not clean:
                false += 1
                examples.append(evidence)
        sink.write({"benchmark": "false_failures", "config": config, "setup": name,
                    "nodes": n_nodes or 1, "np": np_, "loaded": setup.loaded, "detached": setup.detached,
                    "cores": os.cpu_count(), "eta_s": delta / 5, "delta_s": delta,
                    "runs": done, "false_failures": false, "wall_s": round(wall, 1),
                    "examples": examples[:3]})
        common.progress(f"false_failures {config} {name} delta={delta * 1e3:g}ms: "
                        f"{false} of {done} runs with a false failure")
        if false:
            return


def main(argv):
    options = parse(argv)
    # quick: every setup once, at the largest delta
    runs = options.runs or (1 if options.quick else 50)
    deltas = options.delta or (QUICK_DELTAS if options.quick else DELTAS)
    # (per-rank deadline, mpirun's slack) across nodes: a clean run takes 2 s;
    # stock's detector, after a false failure, leaves mpirun to its bound
    bounds = (5, 10) if options.quick else (20, 30)
    configs = options.config or CONFIGS
    setups = [s for s in SETUPS if options.setup is None or s.name in options.setup]
    kept = keep_others(configs, [s.name for s in setups]) if options.config or options.setup else []
    sink = common.JsonLines("false_failures")
    for record in kept:
        sink.carry(record)
    if any(s.nodes for s in setups):
        try:
            nodes.ensure_nodes(3)
        except nodes.Unavailable as e:
            common.progress(f"false_failures: no emulated nodes ({e}); the loaded host only")
            setups = [s for s in setups if s.nodes == 0]
    for config in configs:
        for setup in setups:
            # quick: stock's detector on the loaded host only; across emulated
            # nodes, after its false failure, its daemons took up to 215 s to end
            if options.quick and config != "btl_ft" and setup.nodes:
                continue
            scan_setup(sink, config, setup, runs, deltas, bounds)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
