#!/usr/bin/env python3
"""two_levels: every failure kind of seed 000's targets, on emulated nodes,
with both hierarchies, and the detector's messages counted as ftsim counts them.

3 nodes of 3 ranks (5 nodes of 2 for two nodes lost at once), eta 10 ms,
delta 50 ms, ulfm_agree looping on MPIX_Comm_agree. Each cell: an ordinary
process, the first of its node (it observes the node before, across the
network) and the last (observed from the node after), crashed or stopped;
a node killed or cut; two nodes killed at once; 4 ranks in a row stopped
at once, on one host (8 ranks), on one of two nodes, and spanning two
nodes. The hierarchies alternate
within every repetition. Recorded per run: whether every survivor agreed on
the right set, the time from the injection to the agreement, how mpirun
ended, and the failure-notice messages the survivors sent (their counters
at MPI_Finalize, mpi_ft_detector_counters) per process of the job. Each cell
also runs ftsim on the same job shape (a random victim, 20 runs, the
runtime's and the node watch's reports where MPI has them), so the two
counts can be compared. Output: benchmarks/results/two_levels.jsonl.
"""
import argparse
import json
import re
import subprocess
import sys

from benchmarks import common
from tests.netns import netns_scenario
from mpijobs import nodes

ETA, DELTA = 0.01, 0.05
HIERARCHIES = ("flat", "node")
# name -> (netns kind, nodes, ranks, victims or None for the lost nodes, lost nodes, ftsim fault)
CASES = {
    "crash of an ordinary rank": ("crash", 3, 9, [4], 1, "crash"),
    "crash of the first of a node": ("crash", 3, 9, [3], 1, "crash"),
    "crash of the last of a node": ("crash", 3, 9, [5], 1, "crash"),
    "hang of an ordinary rank": ("hang", 3, 9, [4], 1, "hang"),
    "hang of the first of a node": ("hang", 3, 9, [3], 1, "hang"),
    "hang of the last of a node": ("hang", 3, 9, [5], 1, "hang"),
    "node killed": ("kill-node", 3, 9, None, 1, "node-loss"),
    "node cut": ("cut", 3, 9, None, 1, "partition"),
    "two nodes killed": ("kill-node", 5, 10, None, 2, "node-loss"),
    # seed 000's consecutive failures: a row of hung ranks, stopped from
    # outside at one instant (self-stopping victims stop as each leaves
    # MPIX_Comm_agree, up to delta apart); the last spans two nodes,
    # neither of them whole
    "4 of 8 stopped in a row, one host": ("stop-victims", 1, 8, [2, 3, 4, 5], 1, "hang"),
    "4 of 12 stopped in a row, 2 nodes": ("stop-victims", 2, 12, [1, 2, 3, 4], 1, "hang"),
    "4 stopped in a row across 2 of 3 nodes": ("stop-victims", 3, 9, [1, 2, 3, 4], 1, "hang"),
}
# What the runtime tells in MPI, as ftsim models it: a killed rank's node
# watch (its node-mate's pidfd) and PRRTE's report to the other nodes, both
# within a few milliseconds; nothing for a hang or a cut.
RUNTIME_MS = {"crash": ["--node-watch-ms", "1", "--runtime-confirms-ms", "3"],
              "node-loss": ["--runtime-confirms-ms", "3"]}
SENT = re.compile(r"btl_ft: heartbeats sent \d+ missed \d+ suspicions \d+ notices started \d+ sent (\d+)")


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="one repetition")
    p.add_argument("--reps", type=int, default=None)
    p.add_argument("--only", default=None, help="comma-separated case names")
    return p.parse_args(argv)


def notices_sent(output):
    """Summed over the processes that reached MPI_Finalize, and how many did."""
    counts = [int(m.group(1)) for m in SENT.finditer(output)]
    return sum(counts), len(counts)


def run_cell(sink, case, hierarchy, rep):
    kind, node_count, np, victims, lost, _ = CASES[case]
    # yield when idle: the emulated nodes share 2 cores, which the runtime cannot know
    extra = {"mpi_ft_detector_hierarchy": hierarchy, "mpi_ft_detector_counters": "true",
             "async_mpi_finalize": "1", "mpi_yield_when_idle": "1"}
    variant, mca = common.config_mca("btl_ft", ETA, DELTA, extra)
    exe = common.compile_for(common.ULFM_AGREE, variant)
    args = netns_scenario.job_args(kind, np=np, nodes=node_count, lost_nodes=lost, deadline_s=10, slack_s=15,
                                   variant=variant, mca=[f"{k}={v}" for k, v in mca.items()],
                                   victims=",".join(map(str, victims or [])) or None)
    victims = netns_scenario.victims_of(args)
    with nodes.exclusive():
        names, _ = nodes.ensure_nodes(node_count)
        run, notes, overrun = netns_scenario.run_job(args, names[:node_count], exe, victims)
    survivors = [r for r in run.records if "agreed_ms" in r]
    agreed = sorted(r["agreed_ms"] for r in survivors)
    sent, reporting = notices_sent(run.output)
    record = {"benchmark": "two_levels", "case": case, "hierarchy": hierarchy, "rep": rep, "kind": kind,
              "n": np, "nodes": node_count, "victims": victims, "eta_s": ETA, "delta_s": DELTA, "mca": mca,
              "returncode": run.returncode, "timed_out": run.timed_out, "wall_s": run.wall_s,
              "survivors_expected": np - len(victims), "survivors_reported": len(survivors),
              "correct": len(survivors) == np - len(victims)
              and all(sorted(r["failed"]) == victims and r["result_ok"] for r in survivors),
              "first_agreed_ms": agreed[0] if agreed else None,
              "last_agreed_ms": agreed[-1] if agreed else None,
              "notices_sent": sent, "processes_counted": reporting,
              "notices_per_process": sent / np if reporting else None,
              "outcome": netns_scenario.outcome(run, overrun),
              "cut_side_running": notes.get("cut_side_running"), "error": notes.get("error")}
    if not record["correct"]:  # what mpirun printed, to find out why
        record["output_tail"] = run.output.splitlines()[-60:]
    sink.write(record)
    return record


def run_ftsim(sink, case, hierarchy):
    """The same job shape in the simulator: notices sent by survivors per process."""
    ftsim = common.ftsim_path()
    if ftsim is None:
        return None
    _, node_count, np, victims, lost, fault = CASES[case]
    failures = len(victims) if victims else lost
    row = ["--failure-placement", "consecutive-ranks"] if failures > 1 and victims else []
    args = ["--nodes", str(np), "--ppn", str(np // node_count), "--fault", fault, "--failures", str(failures), *row,
            "--scenario", "lowlat", "--eta", f"{ETA * 1e3:g}ms", "--delta", f"{DELTA * 1e3:g}ms",
            "--hierarchy", hierarchy, "--runs", "20", "--seed", "1", *RUNTIME_MS.get(fault, [])]
    out = subprocess.run([str(ftsim), *args], capture_output=True, text=True, timeout=300)
    line = next((json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")), None)
    if line is None:
        common.progress(f"two_levels ftsim {case} {hierarchy}: no result ({out.stderr[-200:]})")
        return None
    # per fault: a node loss of two nodes is two faults in ftsim, one event here
    per_process = line["survivor_notice_messages_per_process_per_fault"] * line["failures_struck"]["mean"]
    record = {"benchmark": "two_levels", "source": "ftsim", "case": case, "hierarchy": hierarchy,
              "args": args, "notices_per_process": per_process,
              "all_known_ms": line["all_known_s"]["mean"] * 1e3,
              "violations": line["bound_violations"]}
    sink.write(record)
    return record


def main(argv):
    options = parse(argv)
    reps = options.reps or (1 if options.quick else 3)
    cases = options.only.split(",") if options.only else list(CASES)
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        raise SystemExit(f"unknown cases {unknown}; known: {list(CASES)}")
    sink = common.JsonLines("two_levels")
    try:
        nodes.ensure_nodes(max(CASES[c][1] for c in cases))
    except nodes.Unavailable as e:
        sink.write({"benchmark": "two_levels", "skipped": f"cannot create emulated nodes: {e}"})
        common.progress(f"two_levels: skipped, cannot create emulated nodes: {e}")
        return 0
    for case in cases:
        for hierarchy in HIERARCHIES:
            sim = run_ftsim(sink, case, hierarchy)
            if sim:
                common.progress(f"two_levels ftsim {case} {hierarchy}: "
                                f"{sim['notices_per_process']:.2f} notices/process")
    total, done = len(cases) * reps * len(HIERARCHIES), 0
    for rep in range(reps):
        for case in cases:
            with common.MpiLock():
                for hierarchy in HIERARCHIES:
                    r = run_cell(sink, case, hierarchy, rep)
                    done += 1
                    shown = (f"{r['first_agreed_ms']:.1f}..{r['last_agreed_ms']:.1f} ms" if r["correct"]
                             else "not agreed correctly")
                    common.progress(f"two_levels {case}, {hierarchy}: {shown}; "
                                    f"{r['notices_per_process']} notices/process; {r['outcome']}", done, total)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
