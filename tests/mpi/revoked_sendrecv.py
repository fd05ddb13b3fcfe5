"""A blocking send on a revoked communicator to a peer that left, as a pass/fail test.

  revoked_sendrecv.py --transport sm|tcp|uct[:domains]|ofi[:provider] --peer freed|killed
                      [--np 10] [--pairs P] [--bytes 1048576]

Runs ulfm_revoked_sendrecv.c restricted to one transport: rank 0 revokes a
communicator; in each of the first P pairs (2k, 2k+1) the odd rank leaves
it (frees it and goes on to MPI_Finalize, or is killed) and the even rank
then calls MPI_Sendrecv on it with its partner. Checks that every even
rank's MPI_Sendrecv returned MPIX_ERR_REVOKED (or MPIX_ERR_PROC_FAILED for
a killed partner) instead of blocking (patch 0021), that every rank still
alive finalized, that the survivors of the kills agree on their number, and
that mpirun exited 0.

P defaults to np/2 with freed partners, and to 2 with killed ones: fewer
than half of the job dies at once (the detector's quorum rule stops a
process that loses half of the job).
"""
import argparse
import sys
from mpijobs import checks, launch, mpicmd



def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--transport", required=True, type=mpicmd.transport_arg)
    p.add_argument("--peer", required=True, choices=["freed", "killed"])
    p.add_argument("--np", type=int, default=10)
    p.add_argument("--pairs", type=int, default=None)
    p.add_argument("--bytes", type=int, default=1 << 20)
    p.add_argument("--deadline-s", type=int, default=10)
    args = p.parse_args()
    if args.pairs is None:
        args.pairs = args.np // 2 if args.peer == "freed" else 2
    exe = mpicmd.compile_test("tests/mpi/ulfm_revoked_sendrecv.c")
    program = [exe, "--peer", args.peer, "--pairs", args.pairs, "--bytes", args.bytes,
               "--deadline-s", args.deadline_s]
    run = launch.run(mpicmd.mpirun(args.np, program, mca=mpicmd.transport_mca(args.transport)),
                      deadline_s=args.deadline_s + 20)

    problems = checks.exit_problems(run, args.deadline_s + 20)
    problems += [f"rank {r['rank']}: {r['error']}" for r in run.records if "error" in r]
    senders = range(0, 2 * args.pairs, 2)
    killed = range(1, 2 * args.pairs, 2) if args.peer == "killed" else range(0)
    alive = sorted(set(range(args.np)) - set(killed))
    allowed = {"revoked", "proc_failed"} if args.peer == "killed" else {"revoked"}
    sendrecv = {r["rank"]: r for r in run.records if "sendrecv" in r}
    for rank in senders:
        if rank not in sendrecv:
            problems.append(f"rank {rank}: MPI_Sendrecv did not return")
        elif sendrecv[rank]["sendrecv"] not in allowed:
            problems.append(f"rank {rank}: MPI_Sendrecv returned {sendrecv[rank]['sendrecv']}, "
                            f"expected {' or '.join(sorted(allowed))}")
    if args.peer == "killed":
        counts = {r["rank"]: r["survivors"] for r in run.records if "survivors" in r}
        for rank in alive:
            if counts.get(rank) != len(alive):
                problems.append(f"rank {rank}: shrink gave {counts.get(rank)} survivors, "
                                f"expected {len(alive)}")
    finalized = {r["rank"] for r in run.records if r.get("finalized")}
    missing = sorted(set(alive) - finalized)
    if missing:
        problems.append(f"ranks {missing} did not finalize")
    times = ", ".join(f"{sendrecv[r]['ms']:.2f}" for r in senders if r in sendrecv)
    print(f"  MPI_Sendrecv returned in (ms): {times}")
    return checks.verdict(f"revoked sendrecv, peer {args.peer}, over {args.transport}", run, problems)


if __name__ == "__main__":
    sys.exit(main())
