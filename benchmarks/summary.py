"""Turns raw result lines into the medians and ratios that plots and the
report show. One place for the arithmetic, so a figure and the table beside
it always say the same thing.
"""
from collections import defaultdict

from benchmarks.common import median


def _group(records, key):
    groups = defaultdict(list)
    for r in records:
        groups[key(r)].append(r)
    return groups


def agree_cells(records):
    """One row per (eta, kind, n, f, placement, config): medians over repetitions."""
    rows = []
    key = lambda r: (r["eta_s"], r["kind"], r["n"], r["f"], r["placement"], r["config"])
    for (eta, kind, n, f, placement, config), runs in sorted(_group(records, key).items()):
        detected = [r for r in runs if r["detected"]]
        pick = lambda field: median([r[field] for r in detected if r[field] is not None])
        rows.append({"eta_s": eta, "kind": kind, "n": n, "f": f, "placement": placement,
                     "config": config, "runs": len(runs), "detected_runs": len(detected),
                     "correct_runs": sum(1 for r in detected if r["correct"]),
                     "first_agreed_ms": pick("first_agreed_ms"), "last_agreed_ms": pick("last_agreed_ms"),
                     "median_shrink_ms": pick("median_shrink_ms"), "max_shrink_ms": pick("max_shrink_ms"),
                     "deadline_s": runs[0]["deadline_s"],
                     "outcomes": sorted({r["outcome"] for r in runs})})
    return rows


def propagate_rows(records):
    rows = []
    sim = [r for r in records if r["source"] == "ftsim"]
    for r in sim:
        rows.append({"source": "ftsim", "n": r["n"], "f": 1, "propagator": r["propagator"],
                     "first_ms": r["first_known_ms"], "last_ms": r["last_known_ms"],
                     "msgs": r["notice_msgs_per_process_per_notice"], "runs": r["runs"],
                     "eta_s": r["eta_s"], "delta_s": r["delta_s"], "detected_runs": r["runs"],
                     "outcomes": []})
    real = [r for r in records if r["source"] == "mpirun"]
    for (n, f, prop), runs in sorted(_group(real, lambda r: (r["n"], r["f"], r["propagator"])).items()):
        detected = [r for r in runs if r["detected"]]
        rows.append({"source": "mpirun", "n": n, "f": f, "propagator": prop,
                     "config": runs[0]["config"],
                     "first_ms": median([r["first_known_ms"] for r in detected]),
                     "last_ms": median([r["last_known_ms"] for r in detected]),
                     "msgs": median([r["notice_msgs_per_process_per_notice"] for r in runs
                                     if r["notice_msgs_per_process_per_notice"] is not None]),
                     "runs": len(runs), "detected_runs": len(detected),
                     "eta_s": runs[0]["eta_s"], "delta_s": runs[0]["delta_s"],
                     "outcomes": sorted({r["outcome"] for r in runs})})
    return rows


def overhead_rows(records):
    """Median per (label, test), and the ratio to the detector-off run of the
    same install in the same repetition: median and spread of those ratios."""
    by_key = _group(records, lambda r: (r["label"], r["test"]))
    rows = []
    for (label, test), runs in sorted(by_key.items()):
        values = [r["value"] for r in runs]
        baseline = runs[0]["baseline"]
        ratios = []
        if baseline:
            base_by_rep = {r["rep"]: r["value"] for r in by_key.get((baseline, test), [])}
            ratios = [r["value"] / base_by_rep[r["rep"]] for r in runs
                      if base_by_rep.get(r["rep"])]
        rows.append({"label": label, "config": runs[0]["config"], "eta_s": runs[0]["eta_s"],
                     "test": test, "unit": runs[0]["unit"], "reps": len(runs),
                     "median": median(values), "min": min(values), "max": max(values),
                     "baseline": baseline, "ratio": median(ratios),
                     "ratio_min": min(ratios) if ratios else None,
                     "ratio_max": max(ratios) if ratios else None,
                     "ratio_quartiles": quartiles(ratios)})
    return rows


def quartiles(values):
    """(first, third) quartile, halves' medians; None under 4 values."""
    if len(values) < 4:
        return None
    ordered = sorted(values)
    half = len(ordered) // 2
    return median(ordered[:half]), median(ordered[-half:])


def footprint_rows(records):
    """Per (setup, ranks, label, test): the median over repetitions of the
    ranks' median, and of its difference to the detector-off run of the
    same setup and size in the same repetition (with the largest difference)."""
    def setup(r):
        return r.get("setup", "1 host")
    off = {(setup(r), r["ranks"], r["test"], r["rep"]): r["median"] for r in records
           if r["label"] == "detector off"}
    by_key = _group(records, lambda r: (setup(r), r["ranks"], r["label"], r["test"]))
    rows = []
    for (where, ranks, label, test), runs in sorted(by_key.items()):
        same = [(where, ranks, test, r["rep"]) for r in runs]
        added = [r["median"] - off[key] for r, key in zip(runs, same) if key in off]
        rows.append({"setup": where, "ranks": ranks, "label": label, "test": test, "unit": runs[0]["unit"],
                     "reps": len(runs), "median": median([r["median"] for r in runs]),
                     "max": max(r["max"] for r in runs),
                     "added": median(added) if added and label != "detector off" else None,
                     "added_max": max(added) if added and label != "detector off" else None})
    return rows


IDLE_TESTS = ("compute_rate", "thread_wakeups", "app_preemptions", "thread_cpu", "app_wait", "rate_per_cpu")


def _differences(records, label, test):
    """Per repetition, value minus the baseline run's of the same repetition:
    (median, min, max), or Nones without a baseline."""
    runs = [r for r in records if r["label"] == label and r["test"] == test]
    if not runs or not runs[0]["baseline"]:
        return None, None, None
    base = {r["rep"]: r["value"] for r in records if r["label"] == runs[0]["baseline"] and r["test"] == test}
    diffs = [r["value"] - base[r["rep"]] for r in runs if r["rep"] in base]
    return (median(diffs), min(diffs), max(diffs)) if diffs else (None, None, None)


def idle_cost_rows(records):
    """One row per configuration of the computation without MPI calls
    (idle_cost.c): the throughput ratio to detector off, and the medians of
    the wakeups, preemptions and CPU time of the threads beside the
    application, per second and per heartbeat period."""
    idle = [r for r in records if r["test"] in IDLE_TESTS]
    measured = overhead_rows(idle)
    by_label = {r["label"]: r for r in measured if r["test"] == "compute_rate"}
    medians = {(r["label"], r["test"]): r["median"] for r in measured}
    per_cpu = {r["label"]: r for r in measured if r["test"] == "rate_per_cpu"}
    rows = []
    for label, rate in by_label.items():
        wakeups = medians.get((label, "thread_wakeups"))
        eta = rate["eta_s"]
        wait, wait_min, wait_max = _differences(idle, label, "app_wait")
        rows.append({"label": label, "config": rate["config"], "eta_s": eta, "reps": rate["reps"],
                     "rate_ratio": rate["ratio"], "rate_ratio_min": rate["ratio_min"],
                     "rate_ratio_max": rate["ratio_max"], "wakeups_per_s": wakeups,
                     "wakeups_per_eta": None if wakeups is None or eta is None else wakeups * eta,
                     "preemptions_per_s": medians.get((label, "app_preemptions")),
                     "thread_cpu_percent": medians.get((label, "thread_cpu")),
                     "app_wait_percent": medians.get((label, "app_wait")),
                     "added_wait_points": wait, "added_wait_min": wait_min, "added_wait_max": wait_max,
                     "per_cpu_ratio": per_cpu[label]["ratio"] if label in per_cpu else None})
    return rows


def _without_suspicion(record):
    """Failed runs in which no detector suspected anyone (a rank missing, or
    mpirun not exiting 0): a scan stops after 3 failures and keeps 3 examples,
    so the examples are every failed run."""
    return sum(1 for e in record["examples"] if e and e[0].startswith("no suspicion printed"))


def false_failure_rows(records):
    """Per (config, setup): every delta tried, and the smallest one whose runs were all clean."""
    rows = []
    for (config, setup), runs in _group(records, lambda r: (r["config"], r["setup"])).items():
        clean = sorted(r["delta_s"] for r in runs if r["false_failures"] == 0)
        rows.append({"config": config, "setup": setup, "np": runs[0]["np"], "cores": runs[0]["cores"],
                     "smallest_clean_delta_s": clean[0] if clean else None,
                     "tried": [(r["delta_s"], r["runs"], r["false_failures"], _without_suspicion(r))
                               for r in runs],
                     "measured": runs[0]["when"][:10]})
    return rows


def accuracy_rows(records):
    rows = []
    for config, runs in _group(records, lambda r: r["config"]).items():
        clean = sorted(r["eta_s"] for r in runs if not r["false_failure"])
        rows.append({"config": config, "smallest_clean_eta_s": clean[0] if clean else None,
                     "tried": [(r["eta_s"], r["false_failure"], r["outcome"]) for r in runs],
                     "largest_tried_eta_s": max(r["eta_s"] for r in runs),
                     "np": runs[0]["np"], "cores": runs[0]["cores"], "compute_s": runs[0]["compute_s"]})
    return rows
