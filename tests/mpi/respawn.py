"""The respawn idiom, end to end: shrink, spawn replacements, merge, split back.

  respawn.py [--np 4] [--victims 1] [--kind crash|hang] [--then crash|hang] [--transport sm|tcp|...]
             [--nodes N] [--mca key=value ...]

Runs ulfm_respawn.c under mpirun --with-ft ulfm: the victims crash or hang,
the survivors shrink, spawn one replacement per failed process, merge,
split back to the original rank order and check 20 allreduces on the
restored communicator. Checks that mpirun exits 0 within its bound, that
every rank of the original size reports exactly once, the victims' ranks
as replacements, and that every process agrees on which ranks were
replaced and got every sum right. A spawn after a failure must never hang
(the deadline inside the program, mpirun's bound outside).

With --then, the replacements then crash or hang in turn: every other
process must see its allreduce fail, acknowledge exactly the replacements'
ranks and shrink to the others. A replacement spawned alone, or all of
them hanging at once, is observed only when the detector watches the union
of the connected jobs (patch 0047).

With --nodes N, the job runs across N emulated nodes (tests/netns, tcp
between them; skipped with exit 77 where namespaces cannot be made).
"""
import argparse
import sys
from mpijobs import checks, launch, mpicmd, nodes


def check(args, victims, run):
    problems = checks.exit_problems(run, args.deadline_s + 30)
    if run.timed_out:
        return problems
    problems += [f"rank {r['rank']}: {r['error']}" for r in run.records if "error" in r]
    reports = [r for r in run.records if "replaced" in r]
    ranks = sorted(r["rank"] for r in reports)
    if ranks != list(range(args.np)):
        problems.append(f"the restored communicator reported ranks {ranks}, expected 0..{args.np - 1}")
    for r in reports:
        if r["replacement"] != (r["rank"] in victims):
            problems.append(f"rank {r['rank']}: replacement {r['replacement']}")
        if sorted(r["replaced"]) != victims or not r["result_ok"]:
            problems.append(f"rank {r['rank']}: replaced {r['replaced']}, result_ok {r['result_ok']}")
    return problems + (then_problems(args, victims, run) if args.then else [])


def then_problems(args, victims, run):
    """After the replacements failed in turn, every other rank shrank to the others."""
    problems = []
    seconds = [r for r in run.records if "second_failed" in r]
    expected = [rank for rank in range(args.np) if rank not in victims]
    if sorted(r["rank"] for r in seconds) != expected:
        problems.append(f"ranks {sorted(r['rank'] for r in seconds)} saw the replacements fail, "
                        f"expected {expected}")
    for r in seconds:
        if (sorted(r["second_failed"]) != victims or r["second_shrink_rc"] != 0
                or r["second_size"] != len(expected)):
            problems.append(f"rank {r['rank']}: acknowledged {r['second_failed']}, shrink rc "
                            f"{r['second_shrink_rc']} to {r['second_size']} (replacements {victims})")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=4)
    p.add_argument("--victims", default="1")
    p.add_argument("--kind", choices=("crash", "hang"), default="crash")
    p.add_argument("--then", choices=("crash", "hang"), default=None,
                   help="the replacements then fail this way")
    p.add_argument("--transport", type=mpicmd.transport_arg, default=None)
    p.add_argument("--nodes", type=int, default=0, help="run across this many emulated nodes")
    p.add_argument("--deadline-s", type=int, default=30)
    p.add_argument("--mca", action="append", default=[], metavar="KEY=VALUE")
    args = p.parse_args()
    victims = sorted(int(v) for v in args.victims.split(","))
    exe = mpicmd.compile_test("tests/mpi/ulfm_respawn.c")
    mca = dict(kv.split("=", 1) for kv in args.mca)
    if args.transport:
        mca = {**mpicmd.transport_mca(args.transport), **mca}
    program = [exe, "--victims", args.victims, "--kind", args.kind, "--deadline-s", args.deadline_s]
    if args.then:
        program += ["--then", args.then]
    if args.nodes:
        with nodes.taken_for_a_test(args.nodes) as names:
            if names is None:
                return nodes.SKIP
            cmd = nodes.mpirun_command_netns(args.np, program, mca=mca, nodes=args.nodes)
            run = launch.run(cmd, deadline_s=args.deadline_s + 30)
    else:
        run = launch.run(mpicmd.mpirun(args.np, program, mca=mca), deadline_s=args.deadline_s + 30)
    for r in run.records:
        if r.get("recovery_ms"):
            print(f"  rank {r['rank']} recovered in {r['recovery_ms']:.0f} ms")
        if "second_ms" in r:
            print(f"  rank {r['rank']} saw the replacements fail after {r['second_ms']:.0f} ms")
    return checks.verdict(f"respawn ({args.kind})", run, check(args, victims, run))


if __name__ == "__main__":
    sys.exit(main())
