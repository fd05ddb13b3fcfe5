"""A spawn from MPI_COMM_SELF in a job of several processes: the parents
left out of it follow the union by a JOIN, and every process of it is
watched.

  spawn_self.py [--np 4] [--spawners 1] [--at-once] [--cases child-hang,parent-hang,clean]
                [--nodes N] [--mca key=value ...]

Runs ulfm_spawn_self.c: rank 0 alone spawns one child and merges with it,
while the other parents compute outside MPI (only their detector threads
can follow the JOIN that rank 0 sends them). Then:
- child-hang: the child stops. Rank 0's allreduce on the merged
  communicator must fail, and every parent, those left out of the spawn
  too, must log the child's failure: a child spawned alone from one
  process is watched by the ring over the union, where it used to be
  watched by nobody.
- parent-hang: a parent left out of the spawn stops. The other parents
  left out see their allreduce fail, and every process, the child too, logs
  that parent's failure: the child watches its parents' whole job.
- clean: nobody fails, nobody logs a failure.
With --spawners 2, ranks 0 and 1 each spawn a child from MPI_COMM_SELF, each
left out of the other's spawn: rank 1 first, a child that starts 1.5 s
late, then rank 0. So the runtime numbers rank 1's child's job below rank
0's, while rank 0's connect ends first: the union must list its jobs in
the order they joined for the processes left out to follow. In
child-hang, rank 1's child stops. With --at-once as well, both spawn at
the same moment, children that start at once: the two connects may each
make a union of their own at one epoch, and every process must end on
the merge of both all the same (the run says how many processes merged).
In every case each parent left out must say that a JOIN moved it, nobody
may log a failure of any other process (no false failure), and mpirun
must exit 0 within its bound. Every survivor must end up watching one
union of all the jobs (its last "now watching the union" line: K + 1
jobs). And every survivor's heartbeats must go one-sided (its finalize
report, mpi_ft_verbose 5): none as a message of the core, a child's to a
parent on its node included, since each process publishes its flag
file's path with its addresses.

With --nodes N, the job runs across N emulated nodes (tests/netns, tcp
between them; skipped with exit 77 where namespaces cannot be made).
"""
import argparse
import re
import sys
from mpijobs import checks, launch, mpicmd, nodes

CASES = ("child-hang", "parent-hang", "clean")
VICTIM_PARENT = 2
# "[host:pid] [[family,job],vpid] btl_ft: <who> failed: <how>"
FAILED_LINE = re.compile(r"\[\[\d+,(\d+)\],(\d+)\] btl_ft: (rank \d+(?: of job \S+)?) failed: ")
JOINED_LINE = re.compile(r"\[\[\d+,(\d+)\],(\d+)\] btl_ft: now watching the union .* "
                         r"(?:told by a JOIN|merged from unions made at once)")
MERGED_LINE = re.compile(r"btl_ft: now watching the union .* merged from unions made at once")
UNION_LINE = re.compile(r"\[\[\d+,(\d+)\],(\d+)\] btl_ft: now watching the union of (\d+) jobs, (\d+) processes")
JOB_OF = re.compile(r"rank (\d+)(?: of job \[\d+,(\d+)\])?")
HEARTBEATS = re.compile(r"\[\[\d+,(\d+)\],(\d+)\] btl_ft: heartbeats over ucx: (\d+) stored into a "
                        r"mapped flag, (\d+) sent to the heartbeat worker .*?\), (\d+) by active message "
                        r"\((\d+) of them to an observer found unreachable\)")


def who_learnt(output):
    """{(job, vpid) of the process that logged: {(job, vpid) of the failed}}."""
    learnt = {}
    for line in output.splitlines():
        found = FAILED_LINE.search(line)
        if not found:
            continue
        job, vpid = int(found.group(1)), int(found.group(2))
        named = JOB_OF.match(found.group(3))
        failed_job = int(named.group(2)) if named.group(2) else job
        learnt.setdefault((job, vpid), set()).add((failed_job, int(named.group(1))))
    return learnt


def joined_by_message(output):
    return {(int(m.group(1)), int(m.group(2))) for m in map(JOINED_LINE.search, output.splitlines()) if m}


def heartbeat_reports(output):
    """{(job, vpid): (stored, sent, as messages where a path existed)} of
    every process that finalized (a heartbeat to an observer found
    unreachable, one that left in MPI_Finalize, has no path left)."""
    return {(int(m.group(1)), int(m.group(2))): (int(m.group(3)), int(m.group(4)), int(m.group(5)) - int(m.group(6)))
            for m in map(HEARTBEATS.search, output.splitlines()) if m}


def heartbeat_problems(case, reports):
    """Each survivor's heartbeats went one-sided, none as a message."""
    problems = []
    for process, (stored, sent, messages) in sorted(reports.items()):
        print(f"  {case}: process {process}: heartbeats {stored} stored, {sent} sent, {messages} as messages")
        if messages:
            problems.append(f"{case}: process {process} sent {messages} heartbeats as messages where "
                            f"a one-sided path exists")
    return problems


def last_unions(output):
    """{(job, vpid): (jobs, processes) of the last union it said it watches}."""
    unions = {}
    for m in map(UNION_LINE.search, output.splitlines()):
        if m:
            unions[(int(m.group(1)), int(m.group(2)))] = (int(m.group(3)), int(m.group(4)))
    return unions


def victim_of(case, learnt):
    """The one process every survivor logged failed (None in clean), and a
    problem if it is not the one the case stops."""
    failed = set().union(*learnt.values()) if learnt else set()
    if case == "clean":
        return None, [f"{case}: failures logged: {sorted(failed)}"] if failed else []
    if len(failed) != 1:
        return None, [f"{case}: expected one failed process, logged: {sorted(failed)}"]
    victim = next(iter(failed))
    if (case == "parent-hang") != (victim == (1, VICTIM_PARENT)) or (case == "child-hang" and victim[0] == 1):
        return victim, [f"{case}: the process logged failed, {victim} (job, rank), is not the one stopped"]
    return victim, []


def loop_problems(args, case, records):
    problems = []
    for r in records:
        left_out_of_spawns = r["side"] == "parent" and r["rank"] >= args.spawners
        must_fail = (case == "child-hang" and r["side"] == "parent" and r["rank"] == args.spawners - 1) or \
                    (case == "parent-hang" and left_out_of_spawns)
        if must_fail != (r["loop"] != "success"):
            problems.append(f"{case}: {r['side']} {r['rank']}'s loop ended in {r['loop']}")
        if must_fail and r["loop"] != "proc_failed":
            problems.append(f"{case}: {r['side']} {r['rank']}'s loop failed with {r['loop']}")
    return problems


def check_case(args, case, run):
    problems = [f"{case}: {p}" for p in checks.exit_problems(run, args.deadline_s + 30)]
    if run.timed_out:
        return problems
    problems += [f"{case}: rank {r['rank']}: {r['error']}" for r in run.records if "error" in r]
    expected_survivors = args.np + args.spawners - (0 if case == "clean" else 1)
    records = [r for r in run.records if "loop" in r]
    reports = heartbeat_reports(run.output)
    if len(records) != expected_survivors or len(reports) != expected_survivors:
        problems.append(f"{case}: {len(records)} loop records and {len(reports)} finalize reports, "
                        f"expected {expected_survivors} survivors")
    problems += loop_problems(args, case, records)
    learnt = who_learnt(run.output)
    victim, found = victim_of(case, learnt)
    problems += found
    for process in reports:
        expected = {victim} if victim else set()
        if learnt.get(process, set()) != expected:
            problems.append(f"{case}: process {process} (job, rank) logged failures "
                            f"{sorted(learnt.get(process, set()))}, expected {sorted(expected)}")
    moved = joined_by_message(run.output)
    for rank in range(args.spawners, args.np):
        if (1, rank) not in moved:
            problems.append(f"{case}: parent {rank}, left out of the spawns, was not moved by a JOIN")
    whole = (1 + args.spawners, args.np + args.spawners)
    unions = last_unions(run.output)
    for process in reports:
        if unions.get(process) != whole:
            problems.append(f"{case}: process {process} (job, rank) last watched a union of "
                            f"(jobs, processes) {unions.get(process)}, expected {whole}")
    return problems + heartbeat_problems(case, reports)


def say_join_order(case, output):
    """Which child's job joined first, and whether its number is the higher
    one (the case the order of joining exists for)."""
    firsts = {}
    for m in map(UNION_LINE.search, output.splitlines()):
        if m and int(m.group(1)) != 1:
            firsts.setdefault(int(m.group(1)), int(m.group(3)))
    joined_first = [job for job, jobs in firsts.items() if jobs == 2]
    if joined_first:
        print(f"  {case}: job {joined_first[0]} joined first, of jobs {sorted(firsts)}")


def run_cases(args, cases, exe, mca, command_for):
    results = []
    for case in cases:
        # with two spawners the parents left out compute until both joins are done
        program = [exe, "--kind", case, "--victim", VICTIM_PARENT, "--spawners", args.spawners,
                   "--at-once", int(args.at_once),
                   "--compute-ms", 1500 if args.spawners == 1 else 3000, "--deadline-s", args.deadline_s]
        run = launch.run(command_for(program), deadline_s=args.deadline_s + 30)
        if args.spawners == 2:
            say_join_order(case, run.output)
            merges = sum(1 for line in run.output.splitlines() if MERGED_LINE.search(line))
            print(f"  {case}: {merges} processes moved to a union merged from two made at once")
        for r in run.records:
            if r.get("failed_ms", -1) >= 0:
                print(f"  {case}: {r['side']} {r['rank']} saw the failure after {r['failed_ms']:.0f} ms")
        results.append((case, run, check_case(args, case, run)))
    return checks.verdict_of_cases("spawn from MPI_COMM_SELF", results)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=4)
    p.add_argument("--spawners", type=int, choices=(1, 2), default=1, help="parents that each spawn a child")
    p.add_argument("--at-once", action="store_true", help="with --spawners 2: both spawn at the same moment")
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--deadline-s", type=int, default=20)
    p.add_argument("--nodes", type=int, default=0, help="run across this many emulated nodes")
    p.add_argument("--mca", action="append", default=[], metavar="KEY=VALUE")
    args = p.parse_args()
    cases = args.cases.split(",")
    if args.np < 4:
        p.error(f"--np must leave rank {VICTIM_PARENT} and another parent out of the spawns")
    if set(cases) - set(CASES):
        p.error(f"unknown --cases {sorted(set(cases) - set(CASES))}; known: {', '.join(CASES)}")
    exe = mpicmd.compile_test("tests/mpi/ulfm_spawn_self.c")
    mca = {**dict(kv.split("=", 1) for kv in args.mca), "mpi_ft_verbose": 5}
    if not args.nodes:
        return run_cases(args, cases, exe, mca, lambda program: mpicmd.mpirun(args.np, program, mca=mca))
    with nodes.taken_for_a_test(args.nodes) as names:
        if names is None:
            return nodes.SKIP
        return run_cases(args, cases, exe, mca,
                         lambda program: nodes.mpirun_command_netns(args.np, program, mca=mca, nodes=args.nodes))


if __name__ == "__main__":
    sys.exit(main())
