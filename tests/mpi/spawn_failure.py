"""A failure reaches the other jobs it is connected with; a clean parting
is no failure.

  spawn_failure.py [--np 4] [--children 2] [--cases parent-crash,...] [--multiple] [--mca key=value ...]

Runs ulfm_spawn.c: the --np processes of mpirun's job spawn --children
more and merge the intercommunicator; then one process crashes (SIGKILL)
or hangs (SIGSTOP), a parent (merged rank 2) or a child (the last merged
rank), while the others loop on a barrier of the merged communicator. For
each case, every survivor, in both jobs, must see its barrier fail, agree
that exactly the victim failed and shrink to the others; mpirun must exit 0
within its bound. Both jobs are watched by one detector over their union
(patch 0047), so a child spawned alone is observed too; the runtime's word
that the victim ended crosses to the other job as well (patches 0044, 0045).

Cases parent-merge and child-merge kill the victim before the merge (a
parent right after the spawn, a child right after MPI_Init): every
survivor's MPI_Intercomm_merge must end in an error within the bound,
where Open MPI 5.0.7 retried its CID allocation forever (patch 0054), and
an agreement over the intercommunicator must then tell every survivor
that the merge did not work everywhere.

Cases clean-exit and disconnect fail nobody: both sides disconnect, then
the children finalize and exit while the parents go on (clean-exit), or
both jobs go on on their own (disconnect), for 20 timeouts at δ 50 ms;
nobody may see an error, and mpirun must exit 0. --multiple spawns the
children with MPI_Comm_spawn_multiple (two commands, one job).
"""
import argparse
import re
import sys
from mpijobs import checks, launch, mpicmd

CASES = ("parent-crash", "parent-hang", "child-crash", "child-hang", "parent-merge", "child-merge",
         "clean-exit", "disconnect")
PARTINGS = {"clean-exit": "clean", "disconnect": "disconnect"}


def check_parting(args, case, run):
    """Every process of both jobs parted and went on without an error."""
    problems = [f"{case}: {p}" for p in checks.exit_problems(run, args.deadline_s + 30)]
    parted = [r for r in run.records if "parted" in r]
    if len(parted) != args.np + args.children:
        problems.append(f"{case}: {len(parted)} of {args.np + args.children} processes reported")
    for r in parted:
        if r["rc"] != 0:
            problems.append(f"{case}: {r['side']} {r['rank']} saw error {r['rc']} after the parting")
    problems += [f"{case}: {line.strip()}" for line in run.output.splitlines() if "btl_ft: rank" in line]
    return problems


# A survivor that crashes after recovering (in MPI_Finalize's disconnect:
# patch 0046) still lets mpirun exit 0: its own lines and the summary's tell.
CRASHED_AFTER = re.compile(r"Caught signal|without survivors|Error in comm_disconnect")
# ... except the summary of a child job whose only process was the victim
ONLY_CHILD_FAILED = re.compile(r"child job \S+ completed without survivors; 1 of 1 processes failed")


def check_merge(args, case, run):
    """Every survivor's merge failed, nobody was stuck in it, and all agreed
    that it failed."""
    problems = [f"{case}: {p}" for p in checks.exit_problems(run, args.deadline_s + 30)]
    problems += [f"{case}: rank {r['rank']}: {r['error']}" for r in run.records if "error" in r]
    merges = [r for r in run.records if "merge_rc" in r]
    if len(merges) != args.np + args.children - 1:
        problems.append(f"{case}: {len(merges)} of {args.np + args.children - 1} survivors reported")
    problems += [f"{case}: {r['side']} {r['rank']}'s merge succeeded" for r in merges if r["merge_rc"] == 0]
    problems += [f"{case}: {r['side']} {r['rank']} agreed that the merge worked" for r in merges if r["agreed"] != 0]
    return problems


def check_case(args, case, victim, run):
    if case in PARTINGS:
        return check_parting(args, case, run)
    if case.endswith("-merge"):
        return check_merge(args, case, run)
    problems = [f"{case}: {p}" for p in checks.exit_problems(run, args.deadline_s + 30)]
    only_child_victim = case.startswith("child-") and args.children == 1
    problems += [f"{case}: {line.strip()}" for line in run.output.splitlines()
                 if CRASHED_AFTER.search(line) and not (only_child_victim and ONLY_CHILD_FAILED.search(line))][:3]
    if run.timed_out:
        return problems
    size = args.np + args.children
    errors = [r for r in run.records if "error" in r]
    survivors = [r for r in run.records if "shrunk_size" in r]
    problems += [f"{case}: rank {r['rank']}: {r['error']}" for r in errors]
    if len(survivors) != size - 1:
        problems.append(f"{case}: {len(survivors)} of {size - 1} survivors reported")
    for r in survivors:
        if r["failed"] != [victim] or r["shrink_rc"] != 0 or r["shrunk_size"] != size - 1:
            problems.append(f"{case}: {r['side']} {r['rank']} acknowledged {r['failed']}, "
                            f"shrink rc {r['shrink_rc']} to {r['shrunk_size']} (victim {victim})")
    return problems


def chosen_cases(parser, text, known):
    """The --cases list, each one of `known`."""
    cases = text.split(",")
    if set(cases) - set(known):
        parser.error(f"unknown --cases {sorted(set(cases) - set(known))}; known: {', '.join(known)}")
    return cases


def case_mca(case, mca):
    """A parting prints any failure a detector declares."""
    return {**mca, "mpi_ft_verbose": 1} if case in PARTINGS else mca


def print_detections(case, run):
    for r in run.records:
        if "failed_ms" in r:
            print(f"  {case}: {r['side']} {r['rank']} saw the failure after {r['failed_ms']:.0f} ms")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=4)
    p.add_argument("--children", type=int, default=2)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--deadline-s", type=int, default=20)
    p.add_argument("--multiple", action="store_true", help="spawn with MPI_Comm_spawn_multiple")
    p.add_argument("--mca", action="append", default=[], metavar="KEY=VALUE")
    args = p.parse_args()
    cases = chosen_cases(p, args.cases, CASES)
    exe = mpicmd.compile_test("tests/mpi/ulfm_spawn.c")
    mca = dict(kv.split("=", 1) for kv in args.mca)
    results = []
    for case in cases:
        if case in PARTINGS:
            victim, kind = -1, PARTINGS[case]
        else:
            side, kind = case.split("-")
            victim = 2 if side == "parent" else args.np + args.children - 1
        program = [exe, "--children", args.children, "--victim", victim, "--kind", kind,
                   "--deadline-s", args.deadline_s, "--multiple", int(args.multiple), "--linger-ms", 1000]
        run = launch.run(mpicmd.mpirun(args.np, program, mca=case_mca(case, mca)), deadline_s=args.deadline_s + 30)
        print_detections(case, run)
        results.append((case, run, check_case(args, case, victim, run)))
    return checks.verdict_of_cases("spawn failure", results)


if __name__ == "__main__":
    sys.exit(main())
