"""The two_levels section of RESULTS.md (benchmarks/node/run_two_levels.py)."""
from benchmarks import common


def _mpi_cell(runs, fmt):
    if not runs:
        return "–"
    agreed = [r for r in runs if r["correct"]]
    if agreed:
        text = (f"{fmt(common.median([r['first_agreed_ms'] for r in agreed]))} / "
                f"{fmt(common.median([r['last_agreed_ms'] for r in agreed]))}")
    else:
        text = "no correct agreement"
    if len(agreed) < len(runs):
        text += f" ({len(agreed)} of {len(runs)} correct)"
    ends = sorted({"killed at bound" if r["timed_out"] else f"exit {r['returncode']}" for r in runs})
    text += "; mpirun " + ", ".join(ends)
    if any(r.get("cut_side_running") for r in runs):
        text += "; cut-off ranks still running"
    return text


def _messages(runs, sim, fmt):
    counted = [r["notices_per_process"] for r in runs if r.get("notices_per_process") is not None]
    mpi = fmt(common.median(counted), 2) if counted else "–"
    return f"{mpi} / {fmt(sim['notices_per_process'], 2) if sim else '–'}"


def section(table, fmt):
    records = common.read_jsonl("two_levels")
    skipped = [r for r in records if "skipped" in r]
    if skipped:
        return f"Skipped: {skipped[0]['skipped']}."
    runs = [r for r in records if r.get("source") != "ftsim" and "case" in r]
    if not runs:
        return "No results (benchmarks/node/run_two_levels.py)."
    sims = {(r["case"], r["hierarchy"]): r for r in records if r.get("source") == "ftsim"}
    cases = list(dict.fromkeys(r["case"] for r in runs))
    rows = []
    for case in cases:
        cell = {h: [r for r in runs if (r["case"], r["hierarchy"]) == (case, h)] for h in ("flat", "node")}
        first = (cell["node"] or cell["flat"])[0]
        rows.append([case, f"{first['nodes']} × {first['n'] // first['nodes']}", str(first["victims"]),
                     _mpi_cell(cell["flat"], fmt), _mpi_cell(cell["node"], fmt),
                     _messages(cell["flat"], sims.get((case, "flat")), fmt),
                     _messages(cell["node"], sims.get((case, "node")), fmt)])
    count = common.median([sum(1 for r in runs if (r["case"], r["hierarchy"]) == key)
                           for key in {(r["case"], r["hierarchy"]) for r in runs}])
    return (table(["failure", "nodes × ranks", "victims", "flat: first / last ms", "node: first / last ms",
                   "flat: notices / process, MPI / ftsim", "node: notices / process, MPI / ftsim"], rows)
            + f"\n\nulfm_agree on emulated nodes (tests/netns), η 10 ms, δ 50 ms, "
            "`mpi_ft_detector_hierarchy` flat or node, alternating within each repetition; medians of "
            f"{count:g} repetitions of the time from the injection to the return of `MPIX_Comm_agree` "
            "(first / last survivor), and how mpirun ended. First of a node: its emitter is on the node "
            "before (it observes across the network); last: its observer is on the node after. Notices: "
            "the failure-notice messages the survivors sent (their counters at `MPI_Finalize`), per process "
            "of the job; ftsim: the same job shape, a random victim, mean of 20 runs, with the node watch "
            "and the runtime's reports of a crash (1 and 3 ms) where MPI has them.")
