"""The respawn section of RESULTS.md (benchmarks/respawn/run_respawn.py)."""
from benchmarks import common


def cells(records):
    """One summary per (ranks, kind, recovery, then): medians over the runs
    that were right, and how many were not. The plot draws the same. A
    respawn without btl/ofi is the recovery "respawn, btl ^ofi"."""
    def recovery(r):
        return r["recovery"] + (f", btl {r['btl']}" if r.get("btl") else "")
    out = []
    for key in sorted({(r["ranks"], r["kind"], recovery(r), r["then"] or "") for r in records}):
        runs = [r for r in records if (r["ranks"], r["kind"], recovery(r), r["then"] or "") == key]
        right = [r for r in runs if r["right"]]
        def med(field):
            values = [r[field] for r in right if r[field] is not None]
            return common.median(values) if values else None
        out.append({"ranks": key[0], "kind": key[1], "recovery": key[2], "then": key[3], "runs": len(runs),
                    "wrong": len(runs) - len(right), "detected_ms": med("detected_ms"),
                    "first_knew_ms": med("first_knew_ms"), "first_result_ms": med("first_result_ms"),
                    "replacement_detected_ms": med("replacement_detected_ms"),
                    "replacement_first_knew_ms": med("replacement_first_knew_ms")})
    return out


def _recovery_table(summaries, table, fmt):
    rows = []
    for ranks in sorted({c["ranks"] for c in summaries}):
        for kind in ("crash", "hang"):
            by = {c["recovery"]: c for c in summaries if (c["ranks"], c["kind"], c["then"]) == (ranks, kind, "")}
            if not by:
                continue
            chosen = [by.get(name) for name in ("respawn", "respawn, btl ^ofi", "shrink")]
            rows.append([ranks, kind]
                        + [fmt(c["detected_ms"]) if c else "–" for c in chosen]
                        + [fmt(c["first_result_ms"]) if c else "–" for c in chosen]
                        + [sum(c["runs"] for c in by.values()), sum(c["wrong"] for c in by.values())])
    return table(["ranks", "fails", "detected: respawn (ms)", "respawn, btl ^ofi", "shrink-only",
                  "first result: respawn (ms)", "respawn, btl ^ofi", "shrink-only", "runs", "wrong or blocked"],
                 rows)


def _replacement_table(summaries, table, fmt, delta_ms):
    rows = []
    for c in summaries:
        if c["then"] != "hang":
            continue
        first = c["replacement_first_knew_ms"]
        rows.append([c["ranks"], fmt(c["first_knew_ms"]), fmt(first), fmt(c["detected_ms"]),
                     fmt(c["replacement_detected_ms"]),
                     "–" if first is None else ("yes" if first <= delta_ms + 5 else "no"), c["runs"], c["wrong"]])
    return table(["ranks", "original hangs: first to know (ms)", "replacement hangs: first to know (ms)",
                  "original: all know (ms)", "replacement: all know (ms)",
                  f"replacement known within δ + 5 ms ({delta_ms + 5:g})", "runs", "wrong or blocked"], rows)


def section(table, fmt):
    records = common.read_jsonl("respawn")
    if not records:
        return "No results (benchmarks/respawn/run_respawn.py)."
    summaries = cells(records)
    first = records[0]
    measured = sorted({r["commit"] or "?" for r in records})
    return (f"tests/mpi/ulfm_respawn.c on this host, η {first['eta_ms']:g} ms, δ {first['delta_ms']:g} ms: "
            "rank 1 crashes (SIGKILL) or hangs (SIGSTOP) while every rank loops on an allreduce. "
            "Respawn: acknowledge, shrink, spawn a replacement, merge, split back to the original ranks; "
            "shrink-only: acknowledge, shrink, go on with one rank fewer; interleaved run by run. "
            "The respawn runs at Open MPI's defaults and without btl/ofi: on this host, with no "
            "fabric, libfabric's discovery costs every MPI_Init about 1 s, the replacement's too, "
            "in stock 5.0.7 as well. "
            "Detected: until every survivor's allreduce failed; first result: until the recovered "
            "communicator's first allreduce returned at the last survivor; both from the failure, "
            "medians over the runs that were right (every sum and rank checked, mpirun exit 0).\n\n"
            + _recovery_table(summaries, table, fmt)
            + "\n\nA process spawned after launch is watched like an original one: after the respawn, "
              "the replacement hangs in turn, in the same run. First to know: until the first "
              "survivor's allreduce failed (about when the hung process's observer declared it); all "
              "know: until the last one's.\n\n"
            + _replacement_table(summaries, table, fmt, first["delta_ms"])
            + f"\n\nMeasured on {', '.join(measured)}.")
