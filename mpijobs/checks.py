"""How a test judges a run: how mpirun ended, the verdict it prints, and the
records it saves for the benchmarks."""
import json
import os
import re

from mpijobs import paths

# libfabric's shm provider keeps each endpoint's region in /dev/shm, in a
# file named "<pid>:<uid>:<index>" after its process
SHM_REGION = re.compile(r"(\d+):\d+:\d+")

def save_records(name, records, **extra):
    """Per-survivor records as JSON lines under build/results/, for the benchmarks."""
    results = paths.ROOT / "build" / "results"
    results.mkdir(parents=True, exist_ok=True)
    with open(results / f"{name}.jsonl", "w") as out:
        for r in records:
            out.write(json.dumps({"scenario": name, **extra, **r}) + "\n")


def exit_problems(run, bound_s, status=0):
    """What is wrong with how mpirun ended: overran its bound, or an exit
    status other than `status`."""
    if run.timed_out:
        return [f"mpirun overran its bound of {bound_s} s"]
    if run.returncode != status:
        return [f"mpirun exit status {run.returncode}" + (f", expected {status}" if status else "")]
    return []


def shm_regions():
    """The names of the shm provider's region files now in /dev/shm."""
    try:
        return {n for n in os.listdir("/dev/shm") if SHM_REGION.fullmatch(n)}
    except FileNotFoundError:
        return set()


def leaked_shm_regions(before):
    """What is wrong if region files appeared since `before` (a
    shm_regions()) whose process is gone: a process killed by a signal
    cannot remove its own, the runtime must (patch 0056), or a later process
    given the same pid cannot start."""
    leaked = sorted(n for n in shm_regions() - before
                    if not os.path.exists(f"/proc/{SHM_REGION.fullmatch(n).group(1)}"))
    return [f"left the shm provider's region /dev/shm/{n} of a process that is gone"
            for n in leaked]


def verdict_of_cases(name, cases):
    """verdict() over several runs, given as (label, run, problems) in turn;
    on failure it shows the output of the runs that failed."""
    problems, shown, run = [], "", None
    for label, run, found in cases:
        if found:
            shown += f"--- {label} ---\n{run.output[-2000:]}\n"
        problems += found
    run.output = shown or run.output
    return verdict(name, run, problems)


def listed_verdict(problems, passed):
    """For a check without a run of its own: each problem on a FAIL line,
    then `passed` or their count; returns the exit status."""
    for problem in problems:
        print(f"FAIL: {problem}")
    print(passed if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


def verdict(name, run, problems):
    """Prints the outcome of a test; returns its exit status."""
    if problems:
        print("FAILED:\n  " + "\n  ".join(problems))
        print("--- output ---\n" + run.output[-4000:])
        if run.stuck:
            print("--- the run's processes when it overran ---\n" + run.stuck)
        return 1
    print(f"ok: {name} in {run.wall_s:.1f} s")
    return 0
