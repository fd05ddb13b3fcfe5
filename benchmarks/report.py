#!/usr/bin/env python3
"""Writes benchmarks/RESULTS.md from benchmarks/results/: the machine, then
one section per benchmark with its table of medians and ratios and its plot.

Every number comes from the results files of the last run; nothing is typed
in. A benchmark with no results gets a line saying so rather than a stale
table.
"""
import json
import re
import sys

from benchmarks import common
from benchmarks import summary

from benchmarks.node import report_two_levels
from benchmarks.respawn import report_respawn
from benchmarks.scale import report_sim
from benchmarks.survivors import report_survivors

OUT = common.ROOT / "benchmarks" / ("RESULTS.md" if common.TRANSPORT is None
                                    else f"RESULTS-{common.TRANSPORT_NAME}.md")


def fmt(value, digits=1):
    return "–" if value is None else f"{value:.{digits}f}"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def machine_section(info):
    m = info.get("machine", {})
    return (f"The last `{info.get('mode', '?')}` run started on {m.get('date', '?')}: {m.get('nproc', '?')} "
            f"cores ({m.get('cpu_model', '?')}), {m.get('memory_gib', '?')} GiB, Linux "
            f"{m.get('kernel', '?')}, host {m.get('hostname', '?')}; stages were re-run alone since, on "
            f"the dates below. {info.get('lock_wait_seconds', 0):.0f} s of the last run went waiting for "
            f"other users' MPI runs. Simulator: `{info.get('ftsim')}`.\n\n" + transport_line(info)
            + "\n\n" + provenance_table(info))


# The results files each stage of run_all.py writes.
STAGE_RESULTS = {"scale": "scale", "sim_faults": "scale_faults", "fig4": "ftsim_fig4", "fig3": "fttune_fig3",
                 "propagate": "propagate", "agree": "agree", "crash": "crash", "node": "node",
                 "two_levels": "two_levels",
                 "overhead": "overhead", "latency": "latency", "survivors": "survivors", "respawn": "respawn", "footprint": "footprint",
                 "accuracy": "accuracy", "false_failures": "false_failures", "repeat": "repeat",
                 "tasks": "tasks"}
ISO_DATE = re.compile(r"\d{4}-\d\d-\d\dT")


def measured_on(name):
    """The days a results file's records were written (their `when`), or None."""
    days = sorted({r["when"][:10] for r in common.read_jsonl(name)
                   if isinstance(r.get("when"), str) and ISO_DATE.match(r["when"])})
    if not days:
        return None
    return days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"


def provenance_table(info):
    """Where each table's numbers come from: the days its records were
    written, the commit its stage ran from ('+': with uncommitted changes;
    not recorded before run_all.py kept it; commits_of), and how long the stage took
    (stages run by their own script, not by run_all.py, have no entry)."""
    ran = {s["name"]: s for s in info.get("stages", [])}
    rows = []
    for name, results in STAGE_RESULTS.items():
        records = common.read_jsonl(results)
        if not records:
            continue
        stage = ran.get(name, {})
        when = measured_on(results) or (stage.get("finished") or "")[:10] or "not recorded"
        took = "–" if not stage else f"{stage['seconds']:.0f} s" + (
            "" if stage["exit_status"] == 0 else f", exit {stage['exit_status']}")
        rows.append([name, f"{results}.jsonl ({len(records)} records)", when,
                     commits_of(records, stage), stage_repetitions(records), took])
    return table(["stage", "results", "measured", "commit", "repetitions", "took (run_all.py)"], rows)


def commits_of(records, stage):
    """The commit a stage ran from; where its records name their own (a
    partial re-run kept the others), each of those, with how many records."""
    named = [r["commit"] for r in records if r.get("commit")]
    if not named:
        return stage.get("commit") or "not recorded"
    counts = {c: named.count(c) for c in dict.fromkeys(named)}
    unnamed = len(records) - len(named)
    parts = [f"{c} ({k} records)" for c, k in counts.items()]
    if unnamed:
        parts.append(f"not recorded ({unnamed} records)")
    if len(parts) == 1:
        return named[0]
    return ", ".join(parts)


def stage_repetitions(records):
    """How many repetitions a stage's records hold: their distinct "rep"
    values, with the range when a re-run added some; stages that count
    their runs otherwise (runs per row, seeds) say so in their table."""
    reps = {r.get("rep") for r in records if isinstance(r.get("rep"), int)}
    if not reps:
        return "in its table"
    return str(len(reps)) if len(reps) == max(reps) + 1 else f"{len(reps)} ({min(reps)}–{max(reps)})"


def transport_line(info):
    t = info.get("transport")
    if not t:
        return "Transport: Open MPI's own choice (sm between ranks of one host, tcp between emulated nodes)."
    settings = " ".join(f"`--mca {k} {v}`" for k, v in t["mca"].items())
    return f"Transport: `BTL={t['name']}`, every job run with {settings}."


def cell_text(c):
    if c is None:
        return "–"
    if c["detected_runs"] == 0:
        return f"not detected within {c['deadline_s']} s"
    text = f"{fmt(c['first_agreed_ms'])} / {fmt(c['last_agreed_ms'])}"
    if c["correct_runs"] < c["detected_runs"]:
        text += " (wrong set)"
    if "hung_after_report" in c["outcomes"] or "overran" in c["outcomes"]:
        text += " †"
    return text


def repetitions(counts):
    """What a table's medians are over, from the runs in each of its cells."""
    counts = [c for c in counts if c]
    if not counts or max(counts) == 1:
        return "one run per cell (no median)"
    if min(counts) == max(counts):
        return f"median over {max(counts)} repetitions"
    return f"median over {min(counts)} to {max(counts)} repetitions per cell"


def agree_section():
    cells = summary.agree_cells(common.read_jsonl("agree"))
    if not cells:
        return "No results (benchmarks/agree/run_agree.py)."
    configs = list(common.CONFIGS)
    keys = sorted({(c["eta_s"], c["kind"], c["n"], c["f"], c["placement"]) for c in cells})
    rows = []
    for key in keys:
        found = {c["config"]: c for c in cells if (c["eta_s"], c["kind"], c["n"], c["f"], c["placement"]) == key}
        bt, sd = found.get("btl_ft"), found.get("stock-detector")
        ratio = (f"{bt['last_agreed_ms'] / sd['last_agreed_ms']:.2f}"
                 if bt and sd and bt["last_agreed_ms"] and sd["last_agreed_ms"] else "–")
        shrink = fmt(bt["median_shrink_ms"], 2) if bt else "–"
        eta, kind, n, f, placement = key
        rows.append([f"{eta * 1e3:g}", kind, n, f, placement] + [cell_text(found.get(c)) for c in configs]
                    + [ratio, shrink])
    header = ["η ms", "kind", "n", "f", "victims"] + [f"{c}: first / last ms" for c in configs] + \
             ["btl_ft / stock-detector (last)", "btl_ft shrink ms"]
    return (table(header, rows) + "\n\nTimes from the injection to the return of `MPIX_Comm_agree` "
            f"(failure acknowledged) at the first and last survivor, {repetitions(c['runs'] for c in cells)}; "
            "δ = 5η. "
            "† mpirun did not return after the survivors reported (a stopped process was never fenced) "
            "or overran its bound: killed at the bound. With f > 1 the clock starts when the first "
            "listed victim injects (ulfm_agree records only that one); a fellow victim may have gone "
            "first, when its own timer fired or when the first one's failure interrupted it, so "
            f"times for f > 1 can be early-biased, even negative.\n\n![agree]({common.RESULTS_NAME}/agree.png)")


def crash_section():
    runs = common.read_jsonl("crash")
    if not runs:
        return "No results (benchmarks/crash/run_crash.py)."
    configs = list(dict.fromkeys(r["config"] for r in runs))  # in the order they ran
    rows = []
    for setup, n in sorted({(r["setup"], r["n"]) for r in runs}):
        row = [setup, n]
        for config in configs:
            cell = [r for r in runs if (r["setup"], r["n"], r["config"]) == (setup, n, config)]
            if not cell:
                row.append("–")
                continue
            done = [r for r in cell if r["correct"]]
            barrier = common.median([r["last_barrier_ms"] for r in done])
            agree = common.median([r["last_agree_ms"] for r in done if r["last_agree_ms"] is not None])
            spread = (f" ({fmt(min(r['last_barrier_ms'] for r in done))}–"
                      f"{fmt(max(r['last_barrier_ms'] for r in done))})" if done else "")
            row.append(f"{fmt(barrier)}{spread} / {fmt(agree)}"
                       + ("" if len(done) == len(cell) else f", {len(cell) - len(done)} of {len(cell)} wrong"))
        rows.append(row)
    header = ["setup", "n"] + [f"{c}: barrier (min–max) / agree ms" for c in configs]
    return (table(header, rows) + "\n\nThe last rank SIGKILLs itself right after a barrier; each "
            "survivor times its next `MPI_Barrier` (which must fail with `MPIX_ERR_PROC_FAILED`) and its "
            "first `MPIX_Comm_agree`, from the kill. The worst survivor, "
            + repetitions(sum(1 for r in runs if (r["setup"], r["n"], r["config"]) == key)
                          for key in {(r["setup"], r["n"], r["config"]) for r in runs})
            + " "
            "(min–max of the worst survivor in brackets); configurations interleaved. \"wrong\": a "
            "survivor's barrier did not fail, or the agreement named another set. Across nodes stock "
            "runs with `--mca coll ^han`: its coll/han is not fault tolerant (btl_ft's build leaves it "
            "out when ULFM is on, patch 0034). Across nodes every configuration runs with "
            "`--mca mpi_yield_when_idle 1`: the emulated nodes share this machine's 2 cores, which "
            "the runtime cannot know. `btl_ft-no-lifeline`: btl_ft without "
            "`mpi_ft_detector_watch_lifeline`, whose watcher learns of a death by a signal when the "
            "victim's thread that initialized MPI exits, before the kernel frees its memory (\"victim of "
            "1 GiB\": 8 ranks, the victim having written 1 GiB first). `floor`: "
            "`benchmarks/crash/crash_floor.c`, the same crash "
            "without MPI (survivors spin with `sched_yield` and learn from a pidfd), the time the "
            "kernel and the scheduler alone take; it has no agreement.")


def propagate_section():
    rows = summary.propagate_rows(common.read_jsonl("propagate"))
    if not rows:
        return "No results (benchmarks/propagate/run_propagate.py)."
    sim = [[r["n"], r["propagator"], fmt(r["first_ms"]), fmt(r["last_ms"]), fmt(r["msgs"], 2), r["runs"]]
           for r in rows if r["source"] == "ftsim"]
    real = [[r["n"], r["f"], r["propagator"], f"{r['detected_runs']}/{r['runs']}", fmt(r["first_ms"]),
             fmt(r["last_ms"]), fmt(r["msgs"], 2), ", ".join(r["outcomes"])]
            for r in rows if r["source"] == "mpirun"]
    eta = next((r for r in rows if r["source"] == "mpirun"), None)
    sim_eta = next((r for r in rows if r["source"] == "ftsim"), None)
    text = ""
    if sim:
        text += (f"Simulator (lowlat: η = {sim_eta['eta_s'] * 1e3:g} ms, δ = {sim_eta['delta_s'] * 1e3:g} ms, "
                 "one failure, mean over runs):\n\n"
                 + table(["n", "propagator", "first knows ms", "last knows ms",
                          "notice msgs / process / notice", "runs"], sim) + "\n\n")
    if real:
        text += (f"Real runs (hung victims, η = {eta['eta_s'] * 1e3:g} ms, δ = {eta['delta_s'] * 1e3:g} ms, "
                 "medians; `stock` is stock's own detector, which counts no messages; f = 2 times share the "
                 "caveat noted under agreement):\n\n"
                 + table(["n", "f", "propagator", "detected", "first knows ms", "last knows ms",
                          "notice msgs / process / notice", "mpirun"], real) + "\n\n")
    return text + f"![propagate]({common.RESULTS_NAME}/propagate.png)"


def overhead_section():
    rows = summary.overhead_rows([r for r in common.read_jsonl("overhead") if r["test"] not in summary.IDLE_TESTS])
    if not rows:
        return "No results (benchmarks/overhead/run_overhead.py)."
    out = [[r["test"], r["label"], r["reps"], f"{r['median']:.3f} {r['unit']}",
            f"{r['min']:.3f}–{r['max']:.3f}",
            "1 (baseline)" if not r["baseline"] else fmt(r["ratio"], 3),
            "" if not r["baseline"] else f"{fmt(r['ratio_min'], 3)}–{fmt(r['ratio_max'], 3)}"]
           for r in sorted(rows, key=lambda r: (r["test"], r["config"] != "btl_ft", r["eta_s"] is not None,
                                                r["eta_s"] or 0))]
    present = {(r["label"], r["test"]) for r in rows}
    missing = sorted({(label, test) for label, _ in present for _, test in present} - present)
    out += [[test, label, 0, "no result in any repetition", "", "", ""] for label, test in missing]
    return (table(["test", "configuration", "runs with a result", "median", "spread (min–max)",
                   "ratio to detector off", "ratio spread"], out)
            + "\n\nRatio: per repetition, the value divided by the detector-off run of the same install "
              "in the same repetition (configurations interleaved, order rotated); median and min–max "
              "of those ratios. δ = 5η. Ping-pong (0 B, 8 B, 1 KiB), bandwidth and allreduce (8 B, 1 KiB) on 2 ranks "
              "and the agreement on 8 (oversubscribed on 2 cores). The `*_instructions` rows count, "
              "under callgrind, the instructions of rank 0's application thread per call "
              "(benchmarks/overhead/call_cost.c, 2 ranks): an idle `MPI_Test` (one `opal_progress` "
              "call) and a self round trip (`MPI_Irecv`, `MPI_Isend`, `MPI_Waitall`). They do not "
              "depend on wall-clock noise. At η 1 ms (δ 5 ms) the process under valgrind runs slow "
              "enough that silences pass δ: the detector's messages that follow make sm check its "
              "fast boxes on every call, so the idle `MPI_Test` row at η 1 ms measures that, not a "
              "healthy job.\n\n![overhead]({common.RESULTS_NAME}/overhead.png)")


def latency_section():
    rows = [r for r in summary.overhead_rows(common.read_jsonl("latency")) if r["baseline"]]
    if not rows:
        return "No results (benchmarks/latency/run_latency.py)."
    out = []
    for r in sorted(rows, key=lambda r: (r["label"].split("(")[1], r["test"], r["label"])):
        q = r["ratio_quartiles"]
        out.append([r["label"].split(" (")[1].rstrip(")"), r["test"], r["label"].split(" (")[0], r["reps"],
                    f"{r['median']:.3f} {r['unit']}", fmt(r["ratio"], 3),
                    "" if q is None else f"{fmt(q[0], 3)}–{fmt(q[1], 3)}",
                    f"{fmt(r['ratio_min'], 3)}–{fmt(r['ratio_max'], 3)}"])
    return (table(["setup", "test", "detector", "runs", "median", "ratio to off (median)",
                   "ratio, middle half", "ratio, all runs"], out)
            + "\n\nbenchmarks/latency/run_latency.py: 2 ranks, on one host (sm) and across 2 emulated "
              "nodes (tcp between network namespaces of this host); `defaults` is the detector at its "
              "defaults, `eta=10ms` at η 10 ms, δ 50 ms. Each repetition runs the three configurations "
              "back to back in a rotated order; the ratio is each run's value over the detector-off run "
              "of the same repetition and setup, and the table gives the median ratio, the middle half "
              "(first to third quartile) and the range of those ratios.")


IDLE_ORDER = {"btl_ft": 0, "bare-thread": 1}


def idle_cost_section():
    rows = summary.idle_cost_rows(common.read_jsonl("overhead"))
    if not rows:
        return "No results (benchmarks/overhead/idle_cost.c through run_overhead.py)."
    out = [[r["label"], r["reps"],
            "1 (baseline)" if r["rate_ratio"] is None else
            f"{r['rate_ratio']:.4f} ({fmt(r['rate_ratio_min'], 4)}–{fmt(r['rate_ratio_max'], 4)})",
            fmt(r["wakeups_per_s"]), fmt(r["wakeups_per_eta"], 2), fmt(r["preemptions_per_s"]),
            fmt(r["thread_cpu_percent"], 3), fmt(r["app_wait_percent"], 3),
            "–" if r["added_wait_points"] is None else
            f"{r['added_wait_points']:+.3f} ({r['added_wait_min']:+.3f}–{r['added_wait_max']:+.3f})",
            fmt(r["per_cpu_ratio"], 4)]
           for r in sorted(rows, key=lambda r: (IDLE_ORDER.get(r["config"], len(IDLE_ORDER)), r["eta_s"] is not None,
                                                r["eta_s"] or 0))]
    return (table(["configuration", "runs", "compute throughput / detector off (min–max)",
                   "wakeups of other threads / s", "… per η", "application preemptions / s",
                   "CPU of other threads %", "application waiting for a CPU %",
                   "… added, points (min–max)", "iterations per CPU second / detector off"], out)
            + "\n\n2 ranks on 2 cores (one per core), each computing without MPI calls "
              "(benchmarks/overhead/idle_cost.c). Throughput: iterations per second, per repetition "
              "divided by the detector-off run of the same install in the same repetition; median "
              "and min–max of those ratios. Wakeups, preemptions and CPU time come from "
              "/proc/self/task/*/status and schedstat: voluntary context switches (wakeups) of every "
              "thread but the application's (the detector's, PMIx's, Open MPI's), involuntary switches of the "
              "application thread, and the other threads' CPU time in percent of the wall time; "
              "medians per process. The application's wait for a CPU is schedstat's run delay "
              "(time runnable, not running) in percent of the wall time, and what the detector adds "
              "to it is its difference to the detector-off run of the same repetition, in "
              "percentage points: the throughput it takes by scheduling, which a hypervisor's steal "
              "and frequency changes do not blur as they blur the wall-clock ratio. Iterations per "
              "CPU second divide out the waits: what remains is the cost of caches refilled after "
              "another thread ran. The bare thread rows are a floor: detector off, and a thread "
              "beside the application that wakes twice per η and does nothing else, as often as "
              "the detector thread wakes while the application computes; what a wakeup alone "
              "costs on this machine.")


def footprint_section():
    rows = summary.footprint_rows(common.read_jsonl("footprint"))
    if not rows:
        return "_not run_"
    out = [[r["setup"], r["ranks"], r["label"], r["test"], r["reps"], f"{r['median']:g} {r['unit']}",
            f"{r['max']:g}", "" if r["added"] is None else f"{r['added']:+g} (max {r['added_max']:+g})"]
           for r in rows]
    return (table(["setup", "ranks", "configuration", "measure", "runs", "median over ranks", "largest rank",
                   "added to detector off (median over runs)"], out)
            + "\n\nbenchmarks/footprint/footprint.c: each rank reads its resident set (VmRSS), open "
              "descriptors and threads from /proc/self after MPI_Init and 1 s of waiting; rank 0 reports "
              "the median and the largest over the ranks. The detector at its defaults; `ucx` is its own "
              "transport, `btl` the application's BTLs. On one host the `ucx` context has sysv shared "
              "memory only and one worker; across 2 emulated nodes (tcp between them) it adds UCX's tcp, "
              "its heartbeat worker and an endpoint to each process of the other node. Configurations "
              "interleaved per repetition.")


def accuracy_section():
    rows = summary.accuracy_rows(common.read_jsonl("accuracy"))
    if not rows:
        return "No results (benchmarks/accuracy/run_accuracy.py)."
    out = []
    for r in rows:
        smallest = (f"{r['smallest_clean_eta_s'] * 1e3:g} ms" if r["smallest_clean_eta_s"] is not None
                    else f"none up to {r['largest_tried_eta_s'] * 1e3:g} ms")
        tried = "; ".join(f"{eta * 1e3:g} ms: {'false failure' if bad else 'clean'} ({outcome})"
                          for eta, bad, outcome in r["tried"])
        out.append([r["config"], smallest, tried, f"{r['np']} ranks / {r['cores']} cores",
                    f"{r['compute_s']:g} s"])
    return (table(["configuration", "smallest η without false failure (δ = 5η)", "runs",
                   "load", "compute"], out)
            + "\n\nη is scanned upwards and the scan stops at the first clean run.")


def false_failures_section():
    rows = summary.false_failure_rows(common.read_jsonl("false_failures"))
    if not rows:
        return "No results (benchmarks/accuracy/run_false_failures.py)."
    out = []
    for r in rows:
        smallest = (f"{r['smallest_clean_delta_s'] * 1e3:g} ms" if r["smallest_clean_delta_s"] is not None
                    else "none")
        tried = "; ".join(f"δ {delta * 1e3:g} ms: {false} of {runs}"
                          + (f" ({other} without a suspicion)" if other else "")
                          for delta, runs, false, other in r["tried"])
        out.append([r["config"], r["setup"], f"{r['np']} ranks / {r['cores']} cores", tried, smallest,
                    r["measured"]])
    return (table(["configuration", "setup", "ranks", "failed runs, per δ (η = δ/5)",
                   "smallest clean δ", "measured"], out)
            + "\n\nFailure-free ulfm_agree jobs (benchmarks/accuracy/run_false_failures.py): across "
              "emulated nodes (network namespaces, one PRRTE daemon each, tcp), and on one host or 3 "
              "emulated nodes while a second job of 2 spinning processes loads both cores "
              "(\"loaded\"). btl_ft runs at its default node grace (0.25 s). A run fails when a detector "
              "suspects a live process, or, without a suspicion, when a rank does not report or "
              "mpirun does not exit 0 (counted apart; their last lines are in "
              "false_failures.jsonl: for stock's detector, mpirun never returned after every rank "
              "reported). δ is scanned downwards from 50 ms "
              "and stops at the first δ with a false failure; a δ stops early after 3 false failures. "
              "A row's date is the day its runs were made (`--config`, `--setup` re-measure some rows "
              "and keep the others).")


def repeat_section():
    rows = common.read_jsonl("repeat")
    if not rows:
        return "No results (benchmarks/repeat/run_repeat.py)."
    out = [[r["test"], r["runs"], r["failures"], r["skipped"], r["when"][:10], r["commit"][:12]] for r in rows]
    return (table(["test", "runs", "failed", "skipped", "measured", "commit"], out)
            + "\n\nThe do-no-harm tests whose failures were rare (benchmarks/repeat/run_repeat.py), "
              "each run R times through ctest, round-robin; CI runs each once. A test's first "
              "failure is in repeat.jsonl: the test's FAILED lines and the output's last lines.")


def scale_section():
    rows = [r for r in common.read_jsonl("scale")]
    if not rows:
        return "No results (benchmarks/scale/run_scale.py)."
    out = [[r["nodes"], r["scenario"], r["propagator"], r["exit_status"], f"{r['wall_s']:.2f}",
            f"{r['max_rss_kib'] / 1024:.0f}",
            fmt(r["ftsim"]["all_known_s"]["mean"] * 1e3 if r.get("ftsim") else None)]
           for r in sorted(rows, key=lambda r: (r["scenario"], r["nodes"]))]
    return (table(["n", "scenario", "propagator", "exit", "wall s", "peak MiB", "last knows ms"], out)
            + f"\n\n![scale]({common.RESULTS_NAME}/scale.png)")


def node_cell(runs):
    if not runs:
        return "–"
    detected = [r for r in runs if r["detected"]]
    partial = [r for r in runs if not r["detected"] and r["survivors_reported"]]
    if not detected and partial:
        worst = min(partial, key=lambda r: r["survivors_reported"])
        text = (f"{worst['survivors_reported']} of {worst['survivors_expected']} survivors agreed"
                + ("" if all(r["correct"] for r in partial) else " (wrong set)"))
    elif not detected:
        text = f"not detected within {runs[0]['deadline_s']} s"
    else:
        text = (f"{fmt(common.median([r['first_agreed_ms'] for r in detected]))} / "
                f"{fmt(common.median([r['last_agreed_ms'] for r in detected]))}")
        if len(detected) < len(runs):
            text += f" ({len(detected)} of {len(runs)} runs)"
        if not all(r["correct"] for r in detected):
            text += " (wrong set)"
    ends = sorted({"aborted" if "aborted the job" in r["outcome"] else
                   "killed at bound" if r["timed_out"] else f"exit {r['returncode']}" for r in runs})
    text += "; mpirun " + ", ".join(ends)
    if any(r.get("cut_side_running") for r in runs):
        text += "; cut-off ranks still running"
    return text


def node_section():
    records = common.read_jsonl("node")
    skipped = [r for r in records if "skipped" in r]
    if skipped:
        return f"Skipped: {skipped[0]['skipped']}."
    if not records:
        return "No results (benchmarks/node/run_node.py)."
    configs = list(common.CONFIGS)
    keys = sorted({(r["eta_s"], r["loss"]) for r in records})
    rows = [[f"{eta * 1e3:g}", loss] +
            [node_cell([r for r in records if (r["eta_s"], r["loss"], r["config"]) == (eta, loss, c)])
             for c in configs] for eta, loss in keys]
    n = records[0]
    return (table(["η ms", "node lost by"] + [f"{c}: first / last ms" for c in configs], rows)
            + f"\n\n{n['n']} ranks on {n['nodes']} emulated nodes (network namespaces, tests/netns); "
            "node 1 (ranks 2, 3) lost once the ranks compute: `kill-node` kills everything on it, "
            "its PRRTE daemon too; `cut` takes its link down silently. "
            + repetitions(sum(1 for r in records if (r["eta_s"], r["loss"], r["config"]) == key)
                          for key in {(r["eta_s"], r["loss"], r["config"]) for r in records}).capitalize()
            + " of the time from the loss to the return of `MPIX_Comm_agree`, first / last survivor, and "
            "how mpirun ended (`aborted`: PRRTE took the job down on losing the daemon). δ = 5η; "
            "PRRTE's TCP keepalive gives up on a silent daemon after 4 s in these runs.")


def tasks_cell(runs):
    if not runs:
        return "–"
    skipped = [r for r in runs if "skipped" in r]
    if skipped:
        return f"skipped: {skipped[0]['skipped']}"
    finished = [r for r in runs if r["finished"]]
    if not finished:
        ended = [r for r in runs if r["mpirun_exit"] is not None and r["wall_s"] < r["deadline_s"]]
        if not ended:
            return f"did not finish within {runs[0]['deadline_s']:g} s"
        why = ("PRRTE aborted the job (lost a daemon)"
               if any("lost communication with a remote daemon" in r.get("tail", "") for r in ended)
               else "the job ended")
        return f"no answer: {why}, mpirun exit {ended[0]['mpirun_exit']}"
    text = f"{common.median([r['time_s'] for r in finished]):.2f} s"
    if len(finished) < len(runs):
        text += f" ({len(finished)} of {len(runs)} finished within {runs[0]['deadline_s']:g} s)"
    wrong = [r for r in finished if not r["correct"] or r["tasks_lost"]]
    if wrong:
        text += f" (wrong answer in {len(wrong)}: {wrong[0]['tasks_lost']} tasks lost)"
    recovery = [f["recovery_ms"] for r in finished for f in r["failures"] if f["recovery_ms"] is not None]
    if recovery:
        text += f"; recovery {common.median(recovery):.0f} ms"
    early = [f["rank"] for r in finished for f in r["failures"]
             if f["rank"] not in r.get("killed_ranks", r["victims"]) or (f["recovery_ms"] or 0) < 0]
    if early:
        text += f"; declared failed while alive: ranks {sorted(set(early))}"
    stuck = [r for r in finished if r["mpirun_exit"] is None]
    if stuck:
        text += f"; mpirun killed at the bound after the answer ({len(stuck)} of {len(finished)})"
    return text


def tasks_section():
    records = [r for r in common.read_jsonl("tasks") if r.get("benchmark") == "tasks"]
    if not records:
        return "No results (benchmarks/tasks/run_bench.py)."
    configs = list(common.CONFIGS)
    keys = sorted({(r["inject"], len(r["victims"])) for r in records}, key=lambda k: (k[0] != "none", k))
    rows = [[kind, n] + [tasks_cell([r for r in records if (r["inject"], len(r["victims"]), r["config"])
                                     == (kind, n, c)]) for c in configs] for kind, n in keys]
    first = next((r for r in records if "workload" in r), None)
    if first is None:
        return table(["failure", "count"] + configs, rows)
    w = first["workload"]
    return (table(["failure", "count"] + [f"{c}: time to solution" for c in configs], rows)
            + f"\n\nThe bag of tasks (benchmarks/tasks/tasks.c): {first['np']} ranks, {w['tasks']} tasks, "
            f"every {w['long_every']}th computing {w['long_ms']:g} to {1.5 * w['long_ms']:g} ms without "
            f"MPI calls, the others up to {w['short_ms']:g} ms; the same iterations in every run. "
            "Median time from the start to the agreed end, over repetitions, with the median recovery "
            "time (from a failure to the first task delegated after the recovery). Failures: worker 4 "
            "halfway through its first task (a long one), then rank 0 (the coordinator) 1.5 s after "
            "the start; a lost node is "
            "every process of the node of rank 4, then of rank 2 (3 emulated nodes). "
            f"η {first['eta_ms']:g} ms, δ {first['delta_ms']:g} ms where the detector takes them.")


def main():
    run_file = common.RESULTS / "run.json"
    info = json.loads(run_file.read_text()) if run_file.exists() else {}
    sections = [
        ("Machine and run", machine_section(info)),
        ("Agreement after a failure (agree_after_failure)", agree_section()),
        ("Agreement after a node loss (agree_after_failure, kind node)", node_section()),
        ("Two levels against flat, every failure kind (two_levels)", report_two_levels.section(table, fmt)),
        ("A crash reaching every survivor (crash)", crash_section()),
        ("Detection and propagation (detect_propagate)", propagate_section()),
        ("Overhead without failures", overhead_section()),
        ("Latency, many repetitions (latency)", latency_section()),
        ("The survivor allreduce, seed 001 (survivors)", report_survivors.section(table, fmt)),
        ("The respawn idiom against shrink-only (respawn)",
         report_respawn.section(table, fmt) + f"\n\n![respawn]({common.RESULTS_NAME}/respawn.png)"),
        ("Idle cost: a computing application", idle_cost_section()),
        ("Memory, descriptors and threads per process (footprint)", footprint_section()),
        ("Accuracy under oversubscription", accuracy_section()),
        ("False failures across nodes and under load", false_failures_section()),
        ("Rare failures, repeated", repeat_section()),
        ("Simulator scale (ftsim)", scale_section()),
        ("Simulator: node loss and cuts at scale (ftsim)", report_sim.faults_section(table, fmt)),
        ("Simulator: seed 003, Fig. 4 (ftsim)", report_sim.fig4_section(table, fmt)),
        ("Choosing δ: seed 002, Fig. 3 (fttune)", report_sim.fig3_section(table, fmt)),
        ("A bag of tasks under failures (tasks)", tasks_section()),
    ]
    text = ["# btl_ft benchmarks\n",
            "Generated by `make bench` / `make bench-quick` (benchmarks/report.py) from "
            f"benchmarks/{common.RESULTS_NAME}/*.jsonl. Configurations: **btl_ft** = patched Open MPI "
            "(build/ompi) at its defaults plus the η/δ under test; **stock-detector** = stock "
            "Open MPI 5.0.7 (build/ompi-stock) with `mpi_ft_detector true`, "
            "`mpi_ft_detector_thread true` and the same η/δ; **stock-default** = stock with its "
            "defaults (no heartbeat detector). All in the same run on the same machine.\n"]
    for title, body in sections:
        text.append(f"## {title}\n\n{body}\n")
    OUT.write_text("\n".join(text))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
