"""A failure during a chosen kind of operation, as a pass/fail test.

  phases.py --phase idle|ring|allreduce|agree|shrink|revoke --np 8
            --kind crash|hang|none --victims 3[,5] [--stagger-ms 25] [--mca key=value ...]
  phases.py --phase allreduce --kind none --compute-s 5 --duration-s 60   (accuracy)

Runs tests/mpi/ulfm_phases.c (its header says what each phase does). Checks:
mpirun exits 0 within its bound; every survivor reports; no survivor ever
saw a process that was not injected (neither when interrupted nor after
agreement); nobody learns of a hang before δ - η; every survivor's agreed failed set equals the injected set; the
computation on the shrunk communicator is right; with revoke, only a rank
exchanging with a victim sees the failure itself and every other survivor
sees MPIX_ERR_REVOKED. With --kind none: nobody reports a failure or an
error for the whole --duration-s. Per-survivor records go to build/results/.
"""
import argparse
import json
import sys
from pathlib import Path
from mpijobs import checks, launch, mpicmd


FAILED = {"PROC_FAILED", "PROC_FAILED_PENDING"}
# how a survivor may leave each phase (allreduce: first to fail revokes)
EXPECTED_INTERRUPTION = {"idle": FAILED, "ring": FAILED, "agree": FAILED, "shrink": {"shrunk"},
                         "allreduce": FAILED | {"REVOKED"}, "revoke": FAILED | {"REVOKED"}}


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--phase", choices=sorted(EXPECTED_INTERRUPTION), required=True)
    p.add_argument("--np", type=int, default=8)
    p.add_argument("--kind", choices=["crash", "hang", "none"], default="hang")
    p.add_argument("--victims", default="3")
    p.add_argument("--stagger-ms", type=int, default=0, help="victim i injects i * this later")
    p.add_argument("--deadline-s", type=int, default=20, help="per-rank bound on detection")
    p.add_argument("--compute-s", type=float, default=0, help="--kind none: compute per step")
    p.add_argument("--duration-s", type=float, default=1, help="--kind none: how long to run")
    p.add_argument("--mca", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--name", default=None, help="label for the results file")
    return p.parse_args()


def ring_partners(victims, np):
    """Ranks that exchange with a victim in the named ring (send to +1, receive from -1)."""
    return {(v + d) % np for v in victims for d in (-1, 1)} - set(victims)


def check_no_failure(args, run):
    problems = [f"rank {r['rank']}: {r['error']}" for r in run.records if "error" in r]
    ranks = [r for r in run.records if "rounds" in r]
    if len(ranks) != args.np:
        problems.append(f"{len(ranks)} of {args.np} ranks finished")
    for r in ranks:
        if r["failed"] or r["error_class"] or not r["result_ok"]:
            problems.append(f"rank {r['rank']} suspected {r['failed']}, error class {r['error_class']}")
        if r["elapsed_s"] < args.duration_s:
            problems.append(f"rank {r['rank']} stopped after {r['elapsed_s']} s")
    return problems


def check_survivors(args, run, victims, mca):
    problems = [f"rank {r['rank']}: {r['error']}" for r in run.records if "error" in r]
    survivors = [r for r in run.records if "agreed_ms" in r]
    if len(survivors) != args.np - len(victims):
        problems.append(f"{len(survivors)} of {args.np - len(victims)} survivors reported")
    for r in survivors:
        if not set(r["seen"]) <= set(victims):
            problems.append(f"rank {r['rank']} saw {r['seen']} failed, injected {victims}")
        if sorted(r["failed"]) != sorted(victims):
            problems.append(f"rank {r['rank']} agreed on {r['failed']}, injected {victims}")
        if r["interrupted_by"] not in EXPECTED_INTERRUPTION[args.phase]:
            problems.append(f"rank {r['rank']} left the {args.phase} phase by {r['interrupted_by']}")
        if not r["result_ok"]:
            problems.append(f"rank {r['rank']}: wrong result after shrink")
    # A hung victim stays silent; its observer cannot see that before δ - η.
    # Faster means the victim exited instead (a crash, which the runtime reports).
    eta_ms = 1000 * float(mca.get("mpi_ft_detector_period", 0.1))
    delta_ms = 1000 * float(mca.get("mpi_ft_detector_timeout", 1.0))
    for r in survivors:
        if args.kind == "hang" and 0 <= r["interrupted_ms"] < delta_ms - eta_ms:
            problems.append(f"rank {r['rank']} learnt of a hang after {r['interrupted_ms']} ms, "
                            f"before δ - η: the victim did not hang")
    if mca.get("mpi_ft_verbose", "0") != "0":
        problems += kind_problems(args.kind, victims, mpicmd.FAILURE_KIND.findall(run.output))
    if args.phase in ("allreduce", "revoke") and not any(r["revoked_by_me"] for r in survivors):
        problems.append("nobody revoked")
    if args.phase == "revoke":
        partners = ring_partners(victims, args.np)
        for r in survivors:
            if r["interrupted_by"] != "REVOKED" and r["rank"] not in partners:
                problems.append(f"rank {r['rank']} exchanges with no victim, yet left by "
                                f"{r['interrupted_by']} instead of REVOKED")
    return problems


def kind_problems(kind, victims, lines):
    """What the detector called each failure (verbose lines): a hang's
    observer declares it hung, and others may hear of it first from the
    runtime once the fence ended it (crashed); a crash is never called hung."""
    said = {}
    for rank, what in lines:
        said.setdefault(int(rank), set()).add(what)
    problems = []
    for victim in victims:
        if kind == "hang" and "hung" not in said.get(victim, set()):
            problems.append(f"nobody called hung rank {victim} hung (said {sorted(said.get(victim, []))})")
        if kind == "crash" and "hung" in said.get(victim, set()):
            problems.append(f"crashed rank {victim} was called hung")
    return problems


def main():
    args = parse()
    victims = [int(v) for v in args.victims.split(",")] if args.kind != "none" else []
    mca = dict(kv.split("=", 1) for kv in args.mca)
    exe = mpicmd.compile_test("tests/mpi/ulfm_phases.c")
    inject = mpicmd.inject_file()
    program = [exe, "--phase", args.phase, "--kind", args.kind, "--inject-after-ms", 400,
               "--inject-file", inject, "--deadline-s", args.deadline_s, "--stagger-ms", args.stagger_ms,
               "--compute-s", args.compute_s, "--duration-s", args.duration_s]
    if victims:
        program += ["--victims", args.victims]
    bound_s = args.deadline_s + 30 + (args.duration_s + 2 * args.compute_s if not victims else 0)
    run = launch.run(mpicmd.mpirun(args.np, program, mca=mca),
                      deadline_s=bound_s)
    Path(inject).unlink(missing_ok=True)
    name = args.name or f"{args.phase}-{args.kind}-np{args.np}"
    checks.save_records(f"phases-{name}", run.records, np=args.np, injected=victims,
                         kind=args.kind, stagger_ms=args.stagger_ms, mca=mca)
    for r in run.records:
        print(json.dumps(r))
    problems = check_no_failure(args, run) if not victims else check_survivors(args, run, victims, mca)
    if run.timed_out:
        problems.append(f"mpirun overran its bound of {bound_s} s")
    elif run.returncode != 0:
        problems.append(f"mpirun exit status {run.returncode}")
    return checks.verdict(name, run, problems)


if __name__ == "__main__":
    sys.exit(main())
