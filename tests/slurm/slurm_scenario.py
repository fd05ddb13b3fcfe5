#!/usr/bin/env python3
"""ulfm_agree in a Slurm allocation on the emulated nodes (cluster.sh): mpirun
launches its daemons through Slurm (PRRTE's plm/slurm calls srun), not the
ssh agent the netns tests use.

  --launch salloc   salloc -N NODES --no-kill mpirun ... from the head namespace
  --launch sbatch   sbatch --wait -N NODES --no-kill of a script that calls
                    mpirun; the batch step runs on the first node
  --launch srun     srun --mpi=pmix: direct launch without mpirun

--kind none, crash (the last rank SIGKILLs itself), kill-node (everything
on the last node dies, slurmd too) or cut (its link goes down silently).
After a loss the survivors must agree on the lost node's ranks, mpirun must exit 0 (docs/running.md), and Slurm
must mark the node down. The cluster is started for the test and removed
with the test's processes afterwards."""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mpijobs import checks, launch, mpicmd, nodes, paths
from tests.mpi import scenario
from tests.netns import netns_scenario

HERE = Path(__file__).resolve().parent
CONF = "/run/btlft-slurm/slurm.conf"
SKIP = 77


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--launch", choices=["salloc", "sbatch", "srun"], default="salloc")
    p.add_argument("--kind", choices=["none", "crash", "kill-node", "cut"], default="none")
    p.add_argument("--nodes", type=int, default=3)
    p.add_argument("--np", type=int, default=6)
    p.add_argument("--variant", default="ompi", help="build/VARIANT; env BTL_FT_OMPI_PREFIX wins")
    p.add_argument("--deadline-s", type=int, default=20, help="per-rank bound on detection")
    p.add_argument("--slack-s", type=int, default=40, help="the job's bound is deadline + slack")
    p.add_argument("--mca", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--name", default=None)
    p.add_argument("--linger-s", type=float, default=0,
                   help="survivors go on this long after recovering (past Slurm's SlurmdTimeout)")
    p.add_argument("--without-no-kill", action="store_true",
                   help="allocate without --no-kill, to see what Slurm does then")
    p.add_argument("--show-output", action="store_true", help="print the job's output")
    args = p.parse_args()
    args.lost_nodes = 1
    args.detached = False
    return args


def slurm(*cmd):
    """A Slurm client command in the head namespace, where slurmctld is."""
    return nodes.in_namespace(nodes.HEAD, ["env", f"SLURM_CONF={CONF}", *cmd])


def allocation(args):
    sizes = ["-N", args.nodes, "--ntasks-per-node", nodes.ranks_per_node(args.np, args.nodes)]
    # a lost node must not end the allocation (docs/slurm.md)
    return sizes if args.without_no_kill else [*sizes, "--no-kill"]


def application_mca(args):
    return nodes.network_mca(dict(kv.split("=", 1) for kv in args.mca))


def mpirun_line(args, program):
    extra = ["--map-by", f"ppr:{nodes.ranks_per_node(args.np, args.nodes)}:node", *nodes.runtime_network_args()]
    return mpicmd.mpirun(args.np, program, mca=application_mca(args), variant=args.variant, extra=extra)


def job_command(args, program, workdir):
    """The command and, for sbatch, the file its output lands in."""
    if args.launch == "salloc":
        return slurm("salloc", *allocation(args), *mpirun_line(args, program)), None
    if args.launch == "sbatch":
        script = workdir / "job.sh"
        script.write_text("#!/bin/sh\nexec " + " ".join(f"'{a}'" for a in mpirun_line(args, program)) + "\n")
        out = workdir / "job.out"
        return slurm("sbatch", "--wait", "--quiet", *allocation(args), "-o", out, script), out
    # no mpirun: `--with-ft ulfm` and the --mca flags become environment
    # variables; PMIX_MCA_psec=native: Slurm offers munge first, which this
    # PMIx was built without, and every rank would print a warning
    env = [f"OMPI_MCA_{key}={value}" for key, value in application_mca(args).items()]
    return slurm(*env, "OMPI_MCA_mpi_ft_enable=true", "PMIX_MCA_psec=native", "srun", "--mpi=pmix",
                 "-n", args.np, *allocation(args), *map(str, program)), None


def node_state(node):
    r = subprocess.run(slurm("sinfo", "-h", "-n", node, "-o", "%T"), capture_output=True, text=True)
    return r.stdout.strip() or r.stderr.strip()


def wait_node_down(node, bound_s=40):
    """Slurm's state of node once it says down, or after bound_s."""
    end = time.monotonic() + bound_s
    state = node_state(node)
    while not state.startswith("down") and time.monotonic() < end:
        time.sleep(1)
        state = node_state(node)
    return state


def start_cluster(count):
    r = subprocess.run([HERE / "cluster.sh", "start", str(count)], capture_output=True, text=True)
    if r.returncode == SKIP:
        print(f"SKIPPED: {r.stderr.strip()}")
        return False
    if r.returncode != 0:
        raise SystemExit(f"the Slurm cluster did not start:\n{r.stdout}{r.stderr}")
    return True


def main():
    args = parse()
    if not (paths.prefix(args.variant) / "bin" / "mpirun").exists():
        print(f"SKIPPED: no {paths.prefix(args.variant)}/bin/mpirun (make ompi)")
        return SKIP
    lost = [nodes.node_name(args.nodes - 1)] if args.kind in ("kill-node", "cut") else []
    victims = {"none": [], "crash": [args.np - 1]}.get(args.kind) or nodes.ranks_on(args.nodes - 1, args.np, args.nodes)
    paths.RUN_DIR.mkdir(parents=True, exist_ok=True)
    exe = mpicmd.compile_test(str(paths.ROOT / "tests" / "mpi" / "ulfm_agree.c"), args.variant)
    inject = mpicmd.inject_file()
    kind = args.kind if args.kind in ("none", "crash") else "external"
    program = [exe, "--victims", ",".join(map(str, victims)) or "0", "--kind", kind,
               "--inject-after-ms", 400, "--inject-file", inject, "--deadline-s", args.deadline_s,
               "--linger-s", args.linger_s]
    with nodes.taken_for_a_test(args.nodes) as names, tempfile.TemporaryDirectory(dir=paths.RUN_DIR) as tmp:
        if names is None or not start_cluster(args.nodes):
            return SKIP
        try:
            cmd, out_file = job_command(args, program, Path(tmp))
            injector = netns_scenario.Injector(args, lost, exe, victims, inject, names) if lost else None
            if injector:
                injector.start()
            run = launch.run(cmd, deadline_s=args.deadline_s + args.slack_s, on_overrun=lambda: nodes.reap(names))
            if injector:
                injector.job_ended.set()
                injector.join(timeout=args.deadline_s)
            if out_file is not None:
                text = out_file.read_text() if out_file.exists() else ""
                run.output = text + run.output
                run.records = [r for r in map(launch.parse_record, text.splitlines()) if r is not None]
            states = {n: node_state(n) for n in names if n not in lost}
            states.update({n: wait_node_down(n) for n in lost})
        finally:
            nodes.reap(names)
            Path(inject).unlink(missing_ok=True)
    name = args.name or f"slurm-{args.launch}-{args.kind}"
    checks.save_records(name, run.records, variant=args.variant)
    problems = scenario.check(argparse.Namespace(np=args.np, kind="none" if args.kind == "none" else "crash",
                                                 deadline_s=args.deadline_s), run, victims)
    if injector and "error" in injector.notes:
        problems.insert(0, injector.notes["error"])
    problems += netns_scenario.linger_problems(args, run, victims)
    for node, state in states.items():
        if node in lost and not state.startswith("down"):
            problems.append(f"Slurm says {node} is {state!r}, not down, after its loss")
        if node not in lost and state.startswith("down"):
            problems.append(f"Slurm says {node} is {state!r}: it was never lost")
    if args.show_output:
        print(run.output)
    for r in run.records:
        print(json.dumps(r))
    print(json.dumps({"scenario": name, "outcome": netns_scenario.outcome(run, {}), "slurm_states": states,
                      **(injector.notes if injector else {})}))
    return checks.verdict(name, run, problems)


if __name__ == "__main__":
    sys.exit(main())
