"""A peer dies in the middle of a large transfer, as a pass/fail test.

  peer_exit.py --transport sm|tcp|uct[:domains]|ofi[:provider] [--mib 256]

Runs ulfm_rdma_peer_exit.c on 2 ranks restricted to one transport: rank 1
starts sending --mib MiB to rank 0 and kills itself. Checks that the
transport reported the failure instead of aborting: rank 0's receive failed
with MPIX_ERR_PROC_FAILED (a receive that completed did not exercise the
path and fails the test too), rank 0 finalized, and mpirun exited 0.
"""
import argparse
import sys
from mpijobs import checks, launch, mpicmd


NP = 2


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--transport", required=True, type=mpicmd.transport_arg)
    p.add_argument("--mib", type=int, default=256)
    p.add_argument("--deadline-s", type=int, default=20)
    args = p.parse_args()
    exe = mpicmd.compile_test("tests/mpi/ulfm_rdma_peer_exit.c")
    run = launch.run(mpicmd.mpirun(NP, [exe, "--mib", args.mib, "--deadline-s", args.deadline_s],
                                             mca=mpicmd.transport_mca(args.transport)),
                      deadline_s=args.deadline_s + 30)
    problems = checks.exit_problems(run, args.deadline_s + 30)
    survivor = [r for r in run.records if r.get("rank") == 0]
    if not survivor:
        problems.append("rank 0 did not report: it died with its peer")
    for r in survivor:
        print(f"  rank 0: {r}")
        if r.get("recv") != "proc_failed":
            problems.append(f"expected the receive to fail with MPIX_ERR_PROC_FAILED, got {r}")
    return checks.verdict(f"peer exit over {args.transport}", run, problems)


if __name__ == "__main__":
    sys.exit(main())
