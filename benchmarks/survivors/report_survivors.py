"""The survivors section of RESULTS.md (benchmarks/survivors/run_survivors.py)."""
from benchmarks import common

# seed 001, Table 1: its FTCO allreduce at 64 processes, seconds, with
# ULFM's 2 s keep-alive timeout (no fault: 0.0005 s)
SEED_TABLE_1 = {"1 fault": 2.0095, "2 parallel": 2.0094, "2 serial": 4.0194, "3 mixed": 4.0194}


def _latency(records, table, fmt):
    # records from before mpi_ft_survivors_radix ran at its default, 4
    rows = []
    for ranks in sorted({r["ranks"] for r in records}):
        for radix in sorted({r.get("radix", 4) for r in records if r["ranks"] == ranks}):
            for test in sorted({r["test"] for r in records}, key=lambda t: int(t.split("_")[1][:-1])):
                runs = [r for r in records if (r["ranks"], r.get("radix", 4), r["test"]) == (ranks, radix, test)]
                if runs:
                    rows.append([ranks, "flat" if radix >= ranks else radix, test.split("_")[1],
                                 fmt(common.median([r["mpi_us"] for r in runs]), 2),
                                 fmt(common.median([r["survivors_us"] for r in runs]), 2),
                                 fmt(common.median([r["ratio"] for r in runs]), 2), len(runs)])
    return table(["ranks", "radix", "bytes", "MPI_Allreduce µs", "survivor allreduce µs", "ratio (median)",
                  "runs"], rows)


def _cell(runs, fmt):
    if not runs:
        return "–"
    timed = [r["ms"] for r in runs if r["ms"] is not None and r["consistent"]]
    text = fmt(common.median(timed)) if timed else "–"
    bad = len(runs) - len(timed)
    return text + (f" ({bad} of {len(runs)} blocked or inconsistent)" if bad else "")


def _faults(records, table, fmt):
    cases = [c for c in SEED_TABLE_1 if any(r["case"] == c for r in records)]
    rows = []
    for ranks in sorted({r["ranks"] for r in records}):
        for recovery in ("survivors (btl_ft)", "idiom (btl_ft)", "idiom (stock)"):
            for kind in ("crash", "hang"):
                for when in ("before", "during"):
                    runs = [r for r in records
                            if (r["ranks"], r["recovery"], r["kind"], r["when"]) == (ranks, recovery, kind, when)]
                    if runs:
                        rows.append([ranks, recovery, kind, when]
                                    + [_cell([r for r in runs if r["case"] == c], fmt) for c in cases])
    rows.append([64, "seed 001, Table 1 (s)", "crash", "before"] + [f"{SEED_TABLE_1[c]:.4f} s" for c in cases])
    return table(["ranks", "recovery", "kind", "fails", *[f"{c}, ms" for c in cases]], rows)


def section(table, fmt):
    records = common.read_jsonl("survivors")
    if not records:
        return "No results (benchmarks/survivors/run_survivors.py)."
    latency = [r for r in records if r["part"] == "latency"]
    faults = [r for r in records if r["part"] == "faults"]
    measured = sorted({r["commit"] or "?" for r in records})
    return ("Failure-free: MPI_Allreduce against MPIX_Comm_allreduce_survivors, doubles, MPI_SUM, "
            "batches interleaved in each run, the ratio of the medians taken within a run.\n\n"
            + _latency(latency, table, fmt)
            + "\n\nUnder failures, radix 4, η 10 ms, δ 50 ms: from the first failure until every "
              "survivor holds the consistent result (median over the runs). The idiom is "
              "MPI_Allreduce, an agreement on its success, revoke, shrink and MPI_Allreduce again; "
              "stock runs it with its defaults for a crash and its heartbeat detector for a hang. "
              "Seed 001's own numbers come from 2 s keep-alive timeouts.\n\n"
            + _faults(faults, table, fmt)
            + f"\n\nMeasured on {', '.join(measured)}.")
