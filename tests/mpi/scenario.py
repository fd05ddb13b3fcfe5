"""One fault-injection scenario on the real build, as a pass/fail test.

  scenario.py --np 8 --kind crash|hang|none --victims 3[,5] [--mca key=value ...]

Checks: the run ends within its bound; every survivor reports; every
survivor's agreed failed set equals the injected set; the computation on the
shrunk communicator is right; with --kind none, nobody reports a failure and
mpirun exits 0; no process that is gone left its shm provider's region
file in /dev/shm (ofi:shm). Prints the per-survivor records as JSON lines under
build/results/ for the benchmarks to reuse.
"""
import argparse
import json
import sys
from pathlib import Path
from mpijobs import checks, launch, mpicmd



def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=8)
    p.add_argument("--kind", choices=["crash", "hang", "none"], default="crash")
    p.add_argument("--victims", default="3")
    p.add_argument("--deadline-s", type=int, default=20, help="per-rank bound on detection")
    p.add_argument("--mca", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--name", default=None, help="label for the results file")
    p.add_argument("--compute-s", type=float, default=0, help="compute without MPI calls first")
    p.add_argument("--transport", type=mpicmd.transport_arg, default=None,
                   help="restrict the job to this BTL: sm, tcp, uct[:domains], ofi[:provider] "
                        "(default: $BTL, else Open MPI's choice)")
    return p.parse_args()


def check(args, run, victims):
    problems = []
    if run.timed_out:
        problems.append(f"mpirun overran its bound of {args.deadline_s + 30} s")
    if args.kind == "none":
        reported = [r for r in run.records if r.get("failed")]
        if reported:
            problems.append(f"false failure reported: {reported}")
        if len([r for r in run.records if "rounds" in r]) != args.np:
            problems.append("not every rank finished")
        if run.returncode != 0:
            problems.append(f"mpirun exit status {run.returncode}")
        return problems
    if run.returncode not in (0, None):
        problems.append(f"mpirun exit status {run.returncode} after surviving the failure")
    survivors = [r for r in run.records if "agreed_ms" in r]
    for r in run.records:
        if "error" in r:
            problems.append(f"rank {r['rank']}: {r['error']}")
    if len(survivors) != args.np - len(victims):
        problems.append(f"{len(survivors)} of {args.np - len(victims)} survivors reported")
    for r in survivors:
        if sorted(r["failed"]) != sorted(victims):
            problems.append(f"rank {r['rank']} agreed on {r['failed']}, injected {victims}")
        if not r["result_ok"]:
            problems.append(f"rank {r['rank']}: wrong result after shrink")
    return problems


def main():
    args = parse()
    victims = [int(v) for v in args.victims.split(",")] if args.kind != "none" else []
    mca = dict(kv.split("=", 1) for kv in args.mca)
    if args.transport:
        mca = {**mpicmd.transport_mca(args.transport), **mca}
    exe = mpicmd.compile_test("tests/mpi/ulfm_agree.c")
    inject = mpicmd.inject_file()
    program = [exe, "--victims", args.victims if victims else "0", "--kind", args.kind,
               "--inject-after-ms", 400, "--inject-file", inject, "--deadline-s", args.deadline_s,
               "--compute-s", args.compute_s]
    regions = checks.shm_regions()
    run = launch.run(mpicmd.mpirun(args.np, program, mca=mca),
                      deadline_s=args.deadline_s + args.compute_s + 30)
    Path(inject).unlink(missing_ok=True)
    name = args.name or f"{args.kind}-np{args.np}"
    checks.save_records(f"scenario-{name}", run.records)
    for r in run.records:
        print(json.dumps(r))
    return checks.verdict(name, run, check(args, run, victims) + checks.leaked_shm_regions(regions))


if __name__ == "__main__":
    sys.exit(main())
