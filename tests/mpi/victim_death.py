"""How a victim dies sets how mpirun reports it, and a recovered job exits 0.

  victim_death.py [--np 4] [--deaths term,kill,segv,abrt,exit3] [--mca key=value ...]

Runs ulfm_agree.c with one crashing victim (rank 1) once per way of dying
(--death): SIGTERM, SIGKILL, a segmentation fault, abort() and exit(3).
For each, the survivors must agree on rank 1 and finish, mpirun's summary
line must name rank 1 as "crashed: signal N" (or "crashed: exit status 3"),
and mpirun must exit 0 after a death by signal but 3 after exit(3): the
application's own non-zero status still counts, a signal never does, even
when a library's handler (libinfinipath's exit(1), patch 0043) was on the
victim's way out. Each run goes in a directory of its own, which must stay
empty: libinfinipath's handler would write a .btr file there.
"""
import argparse
import os
import signal
import sys
import tempfile
from mpijobs import checks, launch, mpicmd
from failure_summary import check_summary

VICTIM = 1
# death -> (the summary's reason, mpirun's exit status)
EXPECTED = {
    "term": (f"crashed: signal {int(signal.SIGTERM)}", 0),
    "kill": (f"crashed: signal {int(signal.SIGKILL)}", 0),
    "segv": (f"crashed: signal {int(signal.SIGSEGV)}", 0),
    "abrt": (f"crashed: signal {int(signal.SIGABRT)}", 0),
    "exit3": ("crashed: exit status 3", 3),
}


def check_death(args, death, run, cwd):
    reason, status = EXPECTED[death]
    problems = [f"{death}: {p}" for p in checks.exit_problems(run, args.deadline_s + 30, status)]
    if run.timed_out:
        return problems
    survivors = [r for r in run.records if "agreed_ms" in r]
    if len(survivors) != args.np - 1:
        problems.append(f"{death}: {len(survivors)} of {args.np - 1} survivors reported")
    for r in survivors:
        if r["failed"] != [VICTIM] or not r.get("result_ok", True):
            problems.append(f"{death}: rank {r['rank']} agreed on {r['failed']}, result_ok {r.get('result_ok')}")
    problems += [f"{death}: {p}" for p in check_summary(run.output, args.np, {VICTIM: reason})]
    left = os.listdir(cwd)
    if left:
        problems.append(f"{death}: the victim left files in its working directory: {left}")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=4)
    p.add_argument("--deaths", default=",".join(EXPECTED))
    p.add_argument("--deadline-s", type=int, default=20)
    p.add_argument("--mca", action="append", default=[], metavar="KEY=VALUE")
    args = p.parse_args()
    deaths = args.deaths.split(",")
    unknown = set(deaths) - set(EXPECTED)
    if unknown:
        p.error(f"unknown --deaths {sorted(unknown)}; known: {', '.join(EXPECTED)}")
    exe = mpicmd.compile_test("tests/mpi/ulfm_agree.c")
    mca = dict(kv.split("=", 1) for kv in args.mca)
    cases = []
    for death in deaths:
        program = [exe, "--victims", VICTIM, "--kind", "crash", "--death", death,
                   "--inject-after-ms", 300, "--deadline-s", args.deadline_s]
        with tempfile.TemporaryDirectory(prefix=f"btl_ft-death-{death}-") as cwd:
            run = launch.run(mpicmd.mpirun(args.np, program, mca=mca),
                             deadline_s=args.deadline_s + 30, cwd=cwd)
            cases.append((death, run, check_death(args, death, run, cwd)))
    return checks.verdict_of_cases("victim death", cases)


if __name__ == "__main__":
    sys.exit(main())
