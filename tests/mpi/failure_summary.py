"""mpirun's one-line summary of the processes a job went on without.

  failure_summary.py [--np 8] [--victims 2,5] [--mca key=value ...]

Runs ulfm_agree.c with --kind mixed: the first victim crashes (SIGKILL),
the others hang (SIGSTOP) until the detector declares them failed and has
the runtime fence them. The survivors shrink and finish. Checks that mpirun
exits 0 and prints exactly one summary line, which names every victim with
its kind: the crashed one "crashed: signal 9", the hung ones "hung: fenced
at another process's request". Then runs the same program without failures,
with the detector's default settings, and checks that no summary line
appears. check_summary() is also used by
the emulated-node tests (tests/netns).
"""
import argparse
import re
import sys
from mpijobs import checks, launch, mpicmd


SUMMARY = re.compile(r"^\S+: job completed with(out)? survivors; (\d+) of (\d+) processes failed: (.*)$")
ENTRY = re.compile(r"rank (\d+) \(([^)]*)\)")
CRASHED = "crashed: signal 9"
FENCED = "hung: fenced at another process's request"


def check_summary(output, np, expected):
    """Problems with the summary lines of mpirun's output: there must be
    exactly one, naming exactly the ranks of expected (rank -> reason), or
    none when expected is empty."""
    lines = [line.strip() for line in output.splitlines() if "completed with" in line]
    if not expected:
        return [f"summary printed for a job without failures: {lines}"] if lines else []
    if len(lines) != 1:
        return [f"expected one summary line, got {len(lines)}: {lines}"]
    print(f"  {lines[0]}")
    match = SUMMARY.match(lines[0])
    if not match:
        return [f"summary line not in the expected form: {lines[0]}"]
    problems = []
    if match.group(1) or (int(match.group(2)), int(match.group(3))) != (len(expected), np):
        problems.append(f"expected survivors and {len(expected)} of {np} failed: {lines[0]}")
    named = {int(rank): why for rank, why in ENTRY.findall(match.group(4))}
    if named != expected:
        problems.append(f"summary names {named}, expected {expected}")
    return problems


def run_agree(args, exe, kind, victims, mca):
    program = [exe, "--victims", ",".join(map(str, victims)) or "0", "--kind", kind,
               "--inject-after-ms", 400, "--deadline-s", args.deadline_s]
    return launch.run(mpicmd.mpirun(args.np, program, mca=mca),
                       deadline_s=args.deadline_s + 30)


def check_survived(args, run, victims):
    if run.timed_out:
        return [f"mpirun overran its bound of {args.deadline_s + 30} s"]
    problems = []
    if run.returncode != 0:
        problems.append(f"mpirun exit status {run.returncode}")
    survivors = [r for r in run.records if "rounds" in r or "agreed_ms" in r]
    if len(survivors) != args.np - len(victims):
        problems.append(f"{len(survivors)} of {args.np - len(victims)} survivors reported")
    for r in survivors:
        if sorted(r["failed"]) != sorted(victims) or not r.get("result_ok", True):
            problems.append(f"rank {r['rank']}: agreed on {r['failed']}, result_ok {r.get('result_ok')}")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=8)
    p.add_argument("--victims", default="2,5")
    p.add_argument("--deadline-s", type=int, default=20)
    p.add_argument("--mca", action="append", default=[], metavar="KEY=VALUE")
    args = p.parse_args()
    victims = [int(v) for v in args.victims.split(",")]
    exe = mpicmd.compile_test("tests/mpi/ulfm_agree.c")
    expected = {victims[0]: CRASHED, **{v: FENCED for v in victims[1:]}}
    run = run_agree(args, exe, "mixed", victims, dict(kv.split("=", 1) for kv in args.mca))
    problems = check_survived(args, run, victims) + check_summary(run.output, args.np, expected)
    if problems:
        return checks.verdict("failure summary", run, problems)
    # the detector's defaults: nothing to detect quickly here
    clean = run_agree(args, exe, "none", [], {})
    problems = check_survived(args, clean, []) + check_summary(clean.output, args.np, {})
    return checks.verdict("failure summary", clean, problems)


if __name__ == "__main__":
    sys.exit(main())
