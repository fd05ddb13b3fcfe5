"""MPIX_Comm_allreduce_survivors under failures, as a pass/fail test.

  survivors.py --np N --when none|before|acked|during [--kind crash|hang]
               [--victims r1,r2] [--iterations K] [--revoke] [--mca k=v ...]
               [--fast-path BYTES [--odd-ranks-fast-path BYTES]]

Runs ulfm_survivors.c (every rank contributes 2^rank, MPI_SUM) and checks,
for every call: every survivor returned success; they all hold the same
value and contributor group; every survivor is a contributor; the value is
the sum of exactly the contributors' values (each once). Then the other
operations (MPI_MAX on doubles, MPI_BOR in place, MPI_MIN) give the result
over the contributors, a derived datatype is refused with MPI_ERR_TYPE and a
non-commutative operation with MPI_ERR_OP; every survivor finalized and
mpirun exited 0. Prints each call's slowest survivor, in microseconds.
With --fast-path, values up to BYTES take the fast path (recursive doubling
while no failure is known), and every survivor must say so at
mpi_ft_verbose 5. With --odd-ranks-fast-path too, odd ranks allow another
bound, as processes on nodes that differ would by default: every survivor
must say the communicator agreed on the smaller.
"""
import argparse
import json
import sys
import tempfile
from pathlib import Path
from mpijobs import checks, launch, mpicmd


def mca_pair(text):
    key, _, value = text.partition("=")
    if not value:
        raise argparse.ArgumentTypeError(f"{text}: expected key=value")
    return key, value


def call_problems(records, survivors, iterations):
    problems, slowest = [], []
    calls = [r for r in records if "iter" in r]
    for i in range(iterations):
        by_rank = {r["rank"]: r for r in calls if r["iter"] == i}
        missing = [s for s in survivors if s not in by_rank]
        if missing:
            problems.append(f"call {i}: ranks {missing} did not return")
            continue
        failed = {s: by_rank[s]["rc"] for s in survivors if by_rank[s]["rc"] != "success"}
        if failed:
            problems.append(f"call {i}: {failed}")
            continue
        first = by_rank[survivors[0]]
        for s in survivors[1:]:
            if (by_rank[s]["value"], by_rank[s]["contributors"]) != (first["value"], first["contributors"]):
                problems.append(f"call {i}: rank {s} holds {by_rank[s]['value']} over "
                                f"{by_rank[s]['contributors']}, rank {survivors[0]} {first['value']} "
                                f"over {first['contributors']}")
        contributors = first["contributors"]
        left_out = sorted(set(survivors) - set(contributors))
        if left_out:
            problems.append(f"call {i}: survivors {left_out} are not contributors")
        if first["value"] != sum(1 << c for c in contributors):
            problems.append(f"call {i}: value {first['value']} is not the sum over {contributors}: "
                            "a value counted twice or missing")
        slowest.append(max(by_rank[s]["us"] for s in survivors))
    return problems, slowest


def other_problems(records, survivors):
    problems = []
    checked = {r["rank"]: r["checks"] for r in records if "checks" in r}
    contributors = next((r["contributors"] for r in records if "iter" in r and r["rank"] == survivors[0]), [])
    for s in survivors:
        got = checked.get(s)
        if got is None:
            problems.append(f"rank {s}: no other checks")
            continue
        if got["derived"] != "err_type" or got["noncommutative"] != "err_op":
            problems.append(f"rank {s}: derived datatype gave {got['derived']}, non-commutative op "
                            f"{got['noncommutative']}")
        # the last call's contributors are those of the checks too, when no failure came in between
        if contributors and got["max"] < max(contributors) + 0.5:
            problems.append(f"rank {s}: MPI_MAX gave {got['max']}, below the largest contributor")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=8)
    p.add_argument("--when", choices=["none", "before", "acked", "during"], default="none")
    p.add_argument("--kind", choices=["crash", "hang"], default="crash")
    p.add_argument("--victims", default="")
    p.add_argument("--iterations", type=int, default=1)
    p.add_argument("--revoke", action="store_true")
    p.add_argument("--allreduce-first", action="store_true")
    p.add_argument("--deadline-s", type=int, default=20)
    p.add_argument("--mca", type=mca_pair, action="append", default=[])
    p.add_argument("--fast-path", type=int, default=None, metavar="BYTES")
    p.add_argument("--odd-ranks-fast-path", type=int, default=None, metavar="BYTES")
    args = p.parse_args()
    if args.odd_ranks_fast_path is not None and args.fast_path is None:
        p.error("--odd-ranks-fast-path needs --fast-path")
    mca = dict(args.mca)
    if args.fast_path is not None:
        mca.update({"mpi_ft_survivors_fast_max_bytes": args.fast_path, "mpi_ft_verbose": 5})
    victims = [int(v) for v in args.victims.split(",") if v]
    exe = mpicmd.compile_test("tests/mpi/ulfm_survivors.c")
    program = [exe, "--when", args.when, "--kind", args.kind, "--iterations", args.iterations,
               "--deadline-s", args.deadline_s]
    if victims:
        program += ["--victims", ",".join(map(str, victims))]
    if args.revoke:
        program.append("--revoke")
    if args.allreduce_first:
        program.append("--allreduce-first")
    agreed = args.fast_path
    if args.odd_ranks_fast_path is not None:
        program += ["--odd-ranks-fast-path", args.odd_ranks_fast_path]
        agreed = min(args.fast_path, args.odd_ranks_fast_path)
    # per-call records in files: through mpirun's output they lost line
    # tails when the runtime fenced a hung process
    with tempfile.TemporaryDirectory(prefix="btl_ft-survivors-") as directory:
        run = launch.run(mpicmd.mpirun(args.np, program + ["--records", directory], mca=mca),
                         deadline_s=args.deadline_s + 20)
        for path in sorted(Path(directory).glob("rank*.jsonl")):
            run.records += [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]

    survivors = [r for r in range(args.np) if r not in victims]
    problems = checks.exit_problems(run, args.deadline_s + 20)
    problems += [f"rank {r['rank']}: {r['error']}" for r in run.records if "error" in r]
    found, slowest = call_problems(run.records, survivors, args.iterations)
    problems += found
    if not args.revoke:
        problems += other_problems(run.records, survivors)
    if args.fast_path is not None:
        said = run.output.count(f"fast path up to {agreed} bytes, agreed")
        if said < len(survivors):
            problems.append(f"{said} processes said they agreed on a fast path up to {agreed} bytes, "
                            f"expected at least {len(survivors)}")
    finalized = {r["rank"] for r in run.records if r.get("finalized")}
    missing = sorted(set(survivors) - finalized)
    if missing:
        problems.append(f"ranks {missing} did not finalize")
    if args.when == "during" and not found:
        # the victims were in the first call or failed inside it, and are out by the last
        calls = [r for r in run.records if "iter" in r and r["rank"] == survivors[0]]
        last = calls[-1]["contributors"]
        if sorted(last) != survivors:
            problems.append(f"last call's contributors {last}, expected the survivors {survivors}")
        for v in victims:
            first_out = next(c["iter"] for c in calls if v not in c["contributors"])
            print(f"  rank {v}: a contributor up to call {first_out - 1}, out from call {first_out}")
    if slowest:
        print(f"  slowest survivor per call (us): first {slowest[0]:.0f}, max {max(slowest):.0f}, "
              f"last {slowest[-1]:.0f}")
    name = f"survivor allreduce, {args.np} ranks, failures {args.when}"
    if victims:
        name += f" ({args.kind} of {victims})"
    return checks.verdict(name, run, problems)


if __name__ == "__main__":
    sys.exit(main())
