"""An agreement after the crash of a process on another node that nobody
had talked to yet completes at every survivor.

  agree_unseen.py [--np 4]

Runs tests/mpi/ulfm_agree_unseen.c on 2 emulated nodes: the last rank
crashes right after MPI_Init; the others wait until they know of it and
agree on MPI_COMM_WORLD. Its parent in the agreement's tree lives on the
other node and never talked to it, so its communicator group still held a
placeholder that read as alive, and the agreement waited for the dead rank
forever (5.0.7 fills the placeholder in only in debug builds; patch 0035).
Checked twice: with the detector at its defaults and with it off (stock
5.0.7's own failure reports). Every survivor must report an agreement that
succeeded and names exactly the victim as failed. Exit 77 (ctest: skipped)
without emulated nodes.
"""
import argparse
import sys

from mpijobs import nodes
from mpijobs import checks, launch, mpicmd

NODES = 2
DEADLINE_S = 20


def run_case(exe, np, names, mca):
    program = [exe, "--victim", np - 1, "--deadline-s", DEADLINE_S]
    try:
        return launch.run(nodes.mpirun_command_netns(np, program, mca=mca, nodes=NODES),
                           deadline_s=DEADLINE_S + 30)
    finally:
        nodes.reap(names)


def check(run, np):
    victim = np - 1
    problems = checks.exit_problems(run, DEADLINE_S + 30)
    problems += [f"rank {r['rank']}: {r['error']}" for r in run.records if "error" in r]
    agreed = {r["rank"]: r for r in run.records if "agree_rc" in r}
    for rank in range(victim):
        r = agreed.get(rank)
        if r is None:
            problems.append(f"rank {rank} never returned from the agreement")
        elif r["agree_rc"] != 0 or r["failed"] != [victim]:
            problems.append(f"rank {rank}: agreement returned {r['agree_rc']}, failed {r['failed']}")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=4)
    args = p.parse_args()
    exe = mpicmd.compile_test("tests/mpi/ulfm_agree_unseen.c")
    with nodes.taken_for_a_test(NODES) as names:
        if names is None:
            return nodes.SKIP

        def cases():
            for label, mca in (("detector at its defaults", {}),
                               ("detector off", {"mpi_ft_detector": "false"})):
                run = run_case(exe, args.np, names, mca)
                yield label, run, check(run, args.np)
        return checks.verdict_of_cases("an agreement after a crash nobody had seen", cases())


if __name__ == "__main__":
    sys.exit(main())
