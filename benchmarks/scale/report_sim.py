"""The simulator's sections of RESULTS.md (report.py calls them with its own
table() and fmt()): the faults at scale (run_faults.py, scale_faults.jsonl)
and seed 003's Fig. 4 (fig4_runs.sh, ftsim_fig4.jsonl). Kept apart so
report.py stays a list of sections; every number comes from the results files.
"""
from benchmarks import common


def _size(record):
    return (record.get("ftsim") or {}).get("nodes", 0)


def faults_section(table, fmt):
    rows = common.read_jsonl("scale_faults")
    if not rows:
        return "No results (benchmarks/scale/run_faults.py)."
    latest = {}
    for record in rows:  # a case re-run replaces its earlier line
        latest[record["case"]] = record
    out = []
    for record in sorted(latest.values(), key=lambda r: (_size(r), r["case"])):
        line = record.get("ftsim") or {}
        across = line.get("across_nodes") or {}
        out.append([record["case"], line.get("hierarchy", "flat"), record["exit_status"], f"{record['wall_s']:.1f}",
                    f"{record['max_rss_kib'] / 1024:.0f}", fmt(record["all_known_s"], 2),
                    fmt(record.get("all_stopped_s"), 2),
                    fmt(record["notice_messages_per_process_per_fault"], 1),
                    fmt(line.get("survivor_notice_messages_per_process_per_fault"), 1),
                    fmt(across.get("messages_per_process"), 2), fmt(across.get("heartbeats_per_period"), 0),
                    fmt((line.get("messages_per_process") or {}).get("census_probes"), 2),
                    record["bound_violations"] if record["bound_violations"] is not None else "–",
                    (line.get("bound") or {}).get("max_ratio", "–")])
    return (table(["case", "hierarchy", "exit", "wall s", "peak MiB", "all know s", "cut side stopped s",
                   "notices / process", "… sent by survivors", "messages across nodes / process",
                   "heartbeats across nodes / η", "census PROBEs / process", "bound violations",
                   "time / bound"], out)
            + "\n\n64 processes per node, η 0.1 s, δ 1 s, τ 1 µs, libmpi's defaults (ring order node, "
              "probing width 8, quorum, witnesses); one run each, seed 1. Notices per process per fault: "
              "a node loss is one fault of 64 processes. The bound is T_burst of docs/simulator.md; "
              "a cut side's processes must also stop within T_stop (the census), "
              "checked per process. Census PROBEs: those of the observers of a silent node (and of "
              "the cut side), per process of the job; \"–\" for runs recorded before the census. "
              "Hierarchy node: two levels (seed 000, docs/two-levels.md); messages and heartbeats "
              "across nodes: \"–\" for runs recorded before they were counted.")


def fig3_section(table, fmt):
    rows = common.read_jsonl("fttune_fig3")
    if not rows:
        return "No results (build/core/sim/fttune --figure)."
    sizes = sorted({r["nodes"] for r in rows})
    by_key = {(r["mtbf_years"], r["nodes"]): r for r in rows}
    body = [[f"{years:g} year{'' if years == 1 else 's'}"] + [fmt(by_key[(years, n)]["largest_delta_s"], 3) if (years, n) in by_key else "–"
                                    for n in sizes]
            for years in sorted({r["mtbf_years"] for r in rows})]
    first = rows[0]
    seed = {years: by_key.get((years, 256000)) for years in (20, 45)}
    said = ""
    if all(seed.values()):
        said = (f"\n\nSeed 002 says δ ≤ 22 s at 256,000 nodes and 20 years: here "
                f"{fmt(seed[20]['largest_delta_s'], 3)} s. For 45 years it says 60 s, but its formula gives "
                f"{fmt(seed[45]['largest_delta_s'], 3)} s here: the bound grows in proportion to the MTBF "
                "(docs/tuning.md).")
    return ("Largest safe δ (s): the probability that more than M = ⌊log2 n⌋ − 1 failures strike within "
            f"the detector's T(M) stays under {first['risk']:g}, message delays under "
            f"{first['tau_ns'] / 1e3:g} µs (`fttune --figure`, plot `fig3.png`)\n\n"
            + table(["per-node MTBF"] + [f"n = {size_name(n)}" for n in sizes], body) + said)


def size_name(n):
    """2^K for a power of two, else the number with thousands separators."""
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else f"{n:,}"


def fig4_section(table, fmt):
    rows = common.read_jsonl("ftsim_fig4")
    if not rows:
        return "No results (benchmarks/scale/fig4_runs.sh)."
    by_key = {(r["ring_order"], r["placement"], r["propagator"], r["failures"]): r for r in rows}
    failures = sorted({r["failures"] for r in rows})
    left = []
    for propagator in ("hba", "bmg", "chord"):
        cells = [by_key.get(("shuffle", "random", propagator, f)) for f in failures]
        left.append([propagator] + [f"{fmt(c['all_known_s']['mean'], 2)} s, {c['messages_per_process']['notice']:.1f}"
                                    if c else "–" for c in cells])
    right = []
    for order in ("rank", "shuffle", "node"):
        for placement in ("consecutive-ranks", "random"):
            cells = [by_key.get((order, placement, "hba", f)) for f in failures]
            right.append([order, placement] + [fmt(c["all_known_s"]["mean"], 2) if c else "–" for c in cells])
    header = [f"f = {f}" for f in failures]
    violating = sum(r["violations"]["violating_runs"] for r in rows)
    return ("Overlays (shuffled ring, random failures): time until all know, notice messages per process\n\n"
            + table(["overlay"] + header, left)
            + "\n\nRing order against failures on consecutive ranks (hba): time until all know, s\n\n"
            + table(["ring order", "failures on"] + header, right)
            + f"\n\n48 processes on 3 nodes of 16, η 0.1 s, δ 10 η, 30 runs each (seed 1), "
              f"libmpi's defaults otherwise; {violating} violating runs.")
