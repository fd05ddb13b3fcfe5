#!/usr/bin/env python3
"""survivors: MPIX_Comm_allreduce_survivors (seed 001, fed by the detector)
against MPI_Allreduce and against ULFM's recovery idiom.

  latency  failure-free, 8 B to 32 KiB of doubles at 4, 8 and 16 ranks on
           this host: each run times MPI_Allreduce and the survivor
           allreduce in interleaved batches, and the ratio of their medians
           is taken within the run (benchmarks/survivors/survivors_bench.c).
           Each size of job, 2 (one per core) to 16 ranks, runs with the
           defaults (the tree's radix chosen as seed 001 does, the lowest
           latency in a LogP model; the fast path, recursive doubling up to
           512 B, only where processes do not yield the CPU: at 2 ranks
           here), with the fast path forced on, then the tree alone
           (mpi_ft_survivors_fast_max_bytes 0) at the radixes 2, 4, 8 and
           its own size (a flat tree: one level up, one down), in turn.
  faults   seed 001's Table 1 columns at 8 and 16 ranks: 1 fault, 2 parallel (in
           different subtrees), 2 serial (a process and its parent), 3 mixed;
           crash and hang; failing just before the call or 2 ms into it,
           every victim at one instant (the first signals the others). The
           time from the failure until every survivor holds the
           consistent result, for: the detection alone (btl_ft: no
           collective, each survivor polls MPIX_Comm_get_failed until it
           names every victim: the time until every survivor knows, which
           the idiom's agreement waits for and the survivor allreduce does
           not, as only a victim's neighbours in the tree must know), the
           survivor allreduce (btl_ft), the idiom
           (MPI_Allreduce, agree on success, revoke, shrink, again) on btl_ft,
           and the idiom on stock 5.0.7 (its defaults for a crash; its
           heartbeat detector for a hang, which it does not find otherwise).
           η 10 ms, δ 50 ms everywhere. A run whose survivors disagree, or
           that passes its bound, is recorded as such.
  instructions  instructions per failure-free call of MPI_Allreduce and of
           the survivor allreduce, 8 B and 512 B, on rank 0 of 2 run under
           callgrind (rank 1 native), one rank per core and neither
           yielding while it waits: a count the clock does not enter. It
           holds the turns rank 0 spends waiting for rank 1: 1 to 4 %
           between runs, up to a third until the detector thread stopped
           spinning under valgrind, which refuses epoll_pwait2 (034a0cc).
           Each rep is a job of its own and the report takes medians.
  nodes    both parts again with 8 ranks spread over 2 and over 3 emulated
           nodes (tests/netns: blocks of 4, or of 3, 3 and 2, joined by
           tcp), with the defaults, the fast path, and the tree alone at the
           radixes 4 and 8 failure-free, and every fault case.
           Every configuration runs with mpi_yield_when_idle, stock without
           coll/han (common.across_nodes_mca).
  serial   the target of 2 serial crashes at most 1.2 times 1 crash, for
           the survivor allreduce at 8 ranks: the 3 runs per cell of the
           faults part cannot resolve it (one slow draw of the scheduler
           moves a median by a third), so 1 crash and 2 serial, before and
           during the call, on this host and across 2 and 3 nodes, each
           run SERIAL_REPS times in a shuffled order per round; the report
           gives the ratio of the medians with a bootstrap 95 % interval.
  table1   seed 001's Table 1 in the simulator, at its sizes (64 to 512
           processes): ftsim allreduce, the same state machines, processes
           failed before the call and found by the detector after it starts
           (a crash in 2 ms, a hang in δ = 50 ms), placed as the table's
           columns (ftsim --shape), in the seed's LogP setting with a step
           of 1 µs (L 10 µs, o 1 µs); TABLE1_RUNS runs per cell. What the
           tree costs a second serial fault when detection is parallel, with
           no scheduler in it.
--parts runs some of the six, --setups some of the nodes part's setups;
the others' records from the last run are kept, each with its commit.
Output: benchmarks/results/survivors.jsonl.
"""
import contextlib
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import common
from benchmarks.overhead import call_cost

from mpijobs import mpicmd
from mpijobs import nodes as netns

SOURCE = common.ROOT / "benchmarks" / "survivors" / "survivors_bench.c"
ETA, DELTA = 0.01, 0.05
DEADLINE_S = 30
# Across the emulated nodes stock's idiom blocked after a crash in the runs
# first tried (the crash stage's stock rows across nodes are wrong too):
# such a run is cut at 5 s, 100 times its time on one host, rather than
# holding the stage for 30 s.
STOCK_ACROSS_NODES_DEADLINE_S = 5
ONE_HOST = "1 host"
PARTS = ("latency", "instructions", "faults", "nodes", "serial", "table1")
SERIAL_REPS = 40  # per cell (20 left intervals of ±0.3); quick: 3
INSTRUCTION_ITERATIONS = 20000
NODE_SETUPS = {"2 nodes": 2, "3 nodes": 3}
TABLE1_NODES = (64, 128, 256, 384, 512)
TABLE1_RUNS = 20
TABLE1_CASES = (("1 fault", 1, "parallel"), ("2 parallel", 2, "parallel"), ("2 serial", 2, "serial"),
                ("3 mixed", 3, "mixed"))
TABLE1_DETECT = {"crash": "2ms", "hang": "50ms"}
NODE_RANKS = 8
NODE_RADIXES = (4, 8)
# seed 001's Table 1 columns; radix 4: 0 is the root, 4 the parent of 5, 6
# and 7, and 1, 2, 3, 5, 6, 7 leaves (at 8 and at 16 ranks)
CASES = (
    ("1 fault", [5], 0),
    ("2 parallel", [3, 6], 0),
    ("2 serial", [4, 5], 0),
    ("3 mixed", [2, 4, 5], 0),
)
RECOVERIES = (  # label, configuration, program's --recovery
    ("detection only (btl_ft)", "btl_ft", "detect"),
    ("survivors (btl_ft)", "btl_ft", "survivors"),
    ("idiom (btl_ft)", "btl_ft", "idiom"),
    ("idiom (stock)", None, "idiom"),
)


def stock_config(kind):
    return "stock-detector" if kind == "hang" else "stock-default"


AUTO = 0  # mpi_ft_survivors_radix's default: chosen by the LogP model
FAST_BYTES = 512  # the fast path's default bound, where it is on
PATHS = {  # mpi_ft_survivors_fast_max_bytes of each path
    "default": {},  # the fast path only where it pays and processes do not yield
    "fast path": {"mpi_ft_survivors_fast_max_bytes": FAST_BYTES},
    "tree": {"mpi_ft_survivors_fast_max_bytes": 0},
}


def configurations(radixes):
    """The defaults, the fast path forced on, then the tree alone at each
    other radix: (path, radix)."""
    return [("default", AUTO), ("fast path", AUTO)] + [("tree", radix) for radix in radixes if radix != AUTO]


def radixes(np):
    """2, 4 and 8 where they are below the job's size, and its size: a flat tree."""
    return sorted({radix for radix in (2, 4, 8) if radix < np} | {np})


def chosen_radix(np):
    """What the default chooses for np processes: ftsim's search, which a sim
    test (AllreduceModel) holds equal to the model the shim asks."""
    tool = common.ftsim_path()
    if tool is None:
        return None
    out = subprocess.run([str(tool), "allreduce", "--nodes", str(np), "--runs", "1",
                          "--latency", "10", "--overhead", "1"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[0])["radix"]


def launch(np, args, mca, variant, setup, deadline_s, **options):
    """One job on this host, or spread over the setup's emulated nodes
    (nodes_available has checked that this machine can make them)."""
    if setup == ONE_HOST:
        return common.run_mpi(mpicmd.mpirun(np, args, mca=mca, variant=variant), deadline_s, **options)
    with netns.made_for_a_run(NODE_SETUPS[setup]) as names:
        if names is None:
            raise RuntimeError(f"the emulated nodes of {setup} could not be made")
        mca = {**mca, **common.across_nodes_mca(variant)}
        return common.run_mpi(netns.mpirun_command_netns(np, args, mca=mca, variant=variant,
                                                         nodes=NODE_SETUPS[setup]), deadline_s, **options)


def latency(sink, jobs, reps):
    """jobs: (setup, ranks, configurations) in the order they run in each repetition."""
    variant, mca = common.config_mca("btl_ft")
    exe = common.compile_for(SOURCE, variant)
    chosen = {np: chosen_radix(np) for _, np, _ in jobs}
    for rep in range(reps):
        for setup, np, job_configurations in jobs:
            # rotated, so that no configuration always runs first
            shift = rep % len(job_configurations)
            for path, radix in job_configurations[shift:] + job_configurations[:shift]:
                run = launch(np, [exe, "latency", "--batches", 9, "--iterations", 100],
                             {**mca, "mpi_ft_survivors_radix": radix, **PATHS[path]}, variant, setup,
                             DEADLINE_S * 4)
                for r in run.records:
                    sink.write({"benchmark": "survivors", "part": "latency", "setup": setup, "ranks": np,
                                "path": path, "radix": radix, "chosen": chosen[np] if radix == AUTO else radix,
                                "rep": rep, "test": r["test"], "mpi_us": r["mpi_us"],
                                "survivors_us": r["survivors_us"], "ratio": r["survivors_us"] / r["mpi_us"],
                                "outcome": run.outcome})
                shown = ", ".join(f"{r['test']} {r['survivors_us'] / r['mpi_us']:.2f}x" for r in run.records)
                common.progress(f"survivors latency {setup} {np} ranks {path} radix {radix} rep {rep + 1}: "
                                f"{shown or run.outcome}")


def instructions(sink, reps):
    """Instructions per call on rank 0 of 2 under callgrind, each rep a job."""
    if not call_cost.available():
        sink.write({"benchmark": "survivors", "part": "instructions", "skipped": "valgrind is not installed"})
        common.progress("survivors instructions: skipped, valgrind is not installed")
        return
    variant, mca = common.config_mca("btl_ft")
    exe = common.compile_for(SOURCE, variant)
    for rep in range(reps):
        with tempfile.TemporaryDirectory(prefix="survivors_instructions.") as tmp:
            out = Path(tmp) / "callgrind.out"
            program = ["sh", "-c", call_cost.RANK0_UNDER_CALLGRIND, "survivors_bench", exe, "instructions",
                       "--iterations", INSTRUCTION_ITERATIONS]
            cmd = mpicmd.mpirun(2, program, mca=mca, variant=variant, extra=["-x", f"CALLGRIND_OUT={out}"])
            # one rank per core, and not marked oversubscribed (which makes a
            # waiting process yield): rank 1 answers at once, and the count
            # holds few of the turns rank 0 spends waiting for it
            cmd[cmd.index("--bind-to") + 1] = "core"
            cmd.remove("--oversubscribe")
            run = common.run_mpi(cmd, 300, expect_records=1)
            counts = {}
            for dump in Path(tmp).glob("callgrind.out.*"):
                thread, trigger, total = call_cost.read_dump(dump)
                if thread == 1 and trigger and total is not None:  # the application's thread
                    counts[trigger] = total / INSTRUCTION_ITERATIONS
        for size in (8, 512):
            mpi, survivors = counts.get(f"mpi_allreduce_{size}B"), counts.get(f"survivors_{size}B")
            sink.write({"benchmark": "survivors", "part": "instructions", "setup": ONE_HOST, "ranks": 2,
                        "rep": rep, "test": f"allreduce_{size}B", "mpi_instructions": mpi,
                        "survivors_instructions": survivors,
                        "ratio": survivors / mpi if mpi and survivors else None, "outcome": run.outcome})
            shown = f"{survivors:.0f} against {mpi:.0f}" if mpi and survivors else run.outcome
            common.progress(f"survivors instructions {size} B rep {rep + 1}: {shown}")


def fault_job(setup, np, victims, kind, when, recovery, around_launch=contextlib.nullcontext):
    """One job of the program's fault mode; its records come from the file
    its ranks append to. around_launch() is entered just around the job."""
    _, config, program_recovery = recovery
    name = config or stock_config(kind)
    variant, mca = common.config_mca(name, ETA, DELTA)
    exe = common.compile_for(SOURCE, variant)
    args = [exe, "fault", "--recovery", program_recovery, "--victims", ",".join(map(str, victims)),
            "--kind", kind, "--when", when]
    if config:  # the cases name ranks of a radix-4 tree (CASES)
        mca = {**mca, "mpi_ft_survivors_radix": 4}
    deadline_s = STOCK_ACROSS_NODES_DEADLINE_S if setup != ONE_HOST and not config else DEADLINE_S
    with tempfile.TemporaryDirectory(prefix="survivors_fault.") as tmp:
        records = Path(tmp) / "records.jsonl"
        with around_launch():
            return launch(np, args + ["--records", records], mca, variant, setup, deadline_s,
                          expect_records=np, records_file=records)


def fault_run(sink, setup, np, case, victims, kind, when, recovery, rep, part="faults"):
    label, config, _ = recovery
    name = config or stock_config(kind)
    run = fault_job(setup, np, victims, kind, when, recovery)
    survivors = [r for r in range(np) if r not in victims]
    injected = [r["at_ns"] for r in run.records if "victim" in r]
    done = {r["rank"]: r for r in run.records if "done_ns" in r}
    values = {done[s]["value"] for s in survivors if s in done}
    expected = sum(1 << s for s in survivors)
    complete = len(done) == len(survivors) and len(injected) == len(victims)
    consistent = complete and len(values) == 1
    ms = (max(d["done_ns"] for d in done.values()) - min(injected)) / 1e6 if complete else None
    sink.write({"benchmark": "survivors", "part": part, "setup": setup, "ranks": np, "case": case,
                "victims": victims, "kind": kind, "when": when, "recovery": label, "config": name, "rep": rep,
                "ms": ms, "complete": complete, "consistent": consistent,
                # the idiom's shrunk result holds exactly the survivors; the survivor
                # allreduce's may hold a victim whose value arrived before it failed
                "survivors_only": consistent and values == {expected},
                "rounds": max((d["rounds"] for d in done.values()), default=None),
                "outcome": run.outcome, "returncode": run.returncode})
    return ms, consistent


def faults(sink, setup, np, reps, cases, kinds, whens):
    total = reps * len(cases) * len(kinds) * len(whens) * len(RECOVERIES)
    done = 0
    for rep in range(reps):
        for case, victims, _ in cases:
            for kind in kinds:
                for when in whens:
                    # interleaved: the recoveries back to back, rotated
                    shift = rep % len(RECOVERIES)
                    for recovery in RECOVERIES[shift:] + RECOVERIES[:shift]:
                        ms, consistent = fault_run(sink, setup, np, case, victims, kind, when, recovery, rep)
                        done += 1
                        shown = "blocked" if ms is None else f"{ms:.1f} ms" + ("" if consistent else " INCONSISTENT")
                        common.progress(f"survivors {setup} {np} ranks {case} {kind} {when} {recovery[0]}: {shown}",
                                        done, total)


def serial(sink, setups, reps):
    """1 crash and 2 serial crashes, survivor allreduce, before and during
    the call, every cell once per round in a shuffled (seeded) order."""
    survivors = next(r for r in RECOVERIES if r[2] == "survivors")
    victims = {case: v for case, v, _ in CASES}
    cells = [(setup, case, when) for setup in setups for case in ("1 fault", "2 serial")
             for when in ("before", "during")]
    rng = random.Random(0)
    for rep in range(reps):
        rng.shuffle(cells)
        for done, (setup, case, when) in enumerate(cells, start=rep * len(cells) + 1):
            ms, consistent = fault_run(sink, setup, NODE_RANKS, case, victims[case], "crash", when, survivors,
                                       rep, part="serial")
            shown = "blocked" if ms is None else f"{ms:.1f} ms" + ("" if consistent else " INCONSISTENT")
            common.progress(f"survivors serial {setup} {case} {when}: {shown}", done, reps * len(cells))


def table1(sink):
    """Seed 001's Table 1 columns in ftsim, at its sizes."""
    tool = common.ftsim_path()
    if tool is None:
        sink.write({"benchmark": "survivors", "part": "table1", "skipped": "ftsim is not built"})
        common.progress("survivors table1: skipped, ftsim is not built")
        return
    for kind, detect in TABLE1_DETECT.items():
        for case, failing, shape in TABLE1_CASES:
            out = subprocess.run([str(tool), "allreduce", "--nodes", ",".join(map(str, TABLE1_NODES)),
                                  "--inactive", str(failing), "--inactive-unknown", "--shape", shape,
                                  "--latency", "10us", "--overhead", "1us", "--detect", detect,
                                  "--runs", str(TABLE1_RUNS)], capture_output=True, text=True)
            if out.returncode != 0:
                raise RuntimeError(f"ftsim allreduce failed ({case}, {kind}): {out.stderr.strip()}")
            for line in out.stdout.splitlines():
                sim = json.loads(line)
                sink.write({"benchmark": "survivors", "part": "table1", "kind": kind, "case": case,
                            "nodes": sim["nodes"], "radix": sim["radix"],
                            "fault_free_ms": sim["fault_free_latency"] / 1e6,
                            "ms": sim["latency_mean"] / 1e6, "max_ms": sim["latency_max"] / 1e6,
                            "runs": sim["runs"], "violating_runs": sim["violating_runs"], "ftsim": sim})
            common.progress(f"survivors table1 {kind} {case}: {len(out.stdout.splitlines())} sizes")


def nodes_available(sink, nodes_part):
    """Whether the emulated nodes can be made; when not, the nodes part, if
    it runs, records why (the serial part then runs on this host alone)."""
    try:
        netns.ensure_nodes(max(NODE_SETUPS.values()))
        return True
    except netns.Unavailable as e:
        if nodes_part:
            sink.write({"benchmark": "survivors", "part": "nodes", "skipped": f"cannot create emulated nodes: {e}"})
        common.progress(f"survivors across nodes: skipped, cannot create emulated nodes: {e}")
        return False


def main(argv):
    p = common.runner_arguments(__doc__)
    p.add_argument("--parts", default=",".join(PARTS), help=f"comma list of {', '.join(PARTS)}")
    p.add_argument("--setups", default=",".join(NODE_SETUPS),
                   help=f"the nodes part's setups, comma list of {', '.join(NODE_SETUPS)}")
    options = p.parse_args(argv)
    parts = options.parts.split(",")
    setups = options.setups.split(",")
    unknown = [x for x in parts if x not in PARTS] + [x for x in setups if x not in NODE_SETUPS]
    if unknown:
        raise SystemExit(f"unknown parts or setups {unknown}; known: {list(PARTS)}, {list(NODE_SETUPS)}")
    reps = options.reps or (1 if options.quick else 3)
    kept = [r for r in common.read_jsonl("survivors") if not measured_again(r, parts, setups)]
    sink = common.JsonLines("survivors")
    for record in kept:
        sink.carry(record)
    cases = CASES[:1] if options.quick else CASES
    if "latency" in parts:
        latency(sink, [(ONE_HOST, np, configurations(radixes(np)))
                       for np in ((2, 4, 8) if options.quick else (2, 4, 8, 16))], reps)
    if "instructions" in parts:
        instructions(sink, reps)
    if "faults" in parts:
        for np in (8,) if options.quick else (8, 16):
            faults(sink, ONE_HOST, np, reps, cases, ("crash", "hang"), ("before", "during"))
    across = ("nodes" in parts or "serial" in parts) and nodes_available(sink, "nodes" in parts)
    if "nodes" in parts and across:
        latency(sink, [(setup, NODE_RANKS, configurations(NODE_RADIXES)) for setup in setups], reps)
        for setup in setups:
            faults(sink, setup, NODE_RANKS, reps, cases, ("crash", "hang"), ("before", "during"))
    if "serial" in parts:
        serial(sink, [ONE_HOST] + (setups if across else []),
               options.reps or (3 if options.quick else SERIAL_REPS))
    if "table1" in parts:
        table1(sink)
    return 0


def measured_again(record, parts, setups):
    """Whether this run measures what `record` holds."""
    part = part_of(record)
    return part in parts and (part != "nodes" or record.get("setup") in setups or "skipped" in record)


def part_of(record):
    """Which of PARTS measured a record (those from before setups: one host)."""
    if record["part"] in ("serial", "table1"):
        return record["part"]
    if record.get("setup", ONE_HOST) != ONE_HOST or record["part"] == "nodes":
        return "nodes"
    return record["part"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
