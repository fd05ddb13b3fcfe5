"""Two jobs started apart in one PRRTE DVM join with MPI_Comm_connect and
MPI_Comm_accept: a failure in either reaches the other; a clean parting
is no failure.

  connect_failure.py [--np 4] [--peers 2] [--cases accept-crash,...] [--mca key=value ...]

Runs ulfm_spawn.c --connect: `prun -n NP` accepts, `prun -n PEERS`
connects (the port name goes through a file), and both merge the
intercommunicator, the accepting job first. Then, as spawn_failure.py
does with a spawned job, one process crashes (SIGKILL) or hangs
(SIGSTOP): rank 2 of the merged communicator (accepting side) or its last
rank (connecting side). Every survivor of both jobs must see its barrier
fail, acknowledge exactly the victim and shrink to the others, and both
prun commands must end within their bound. The join makes one detector
watch both jobs (patch 0047), as after a spawn.

Cases clean-exit and disconnect fail nobody: both sides disconnect, then
the connecting job finalizes and exits while the other goes on
(clean-exit), or both go on on their own (disconnect).
"""
import argparse
import os
import sys
import threading

from mpijobs import checks, launch, mpicmd
from mpijobs.dvm import Dvm
from tests.mpi.spawn_failure import PARTINGS, case_mca, check_case, chosen_cases, print_detections

SIDES = {"accept": "parent", "connect": "child"}
CASES = ("accept-crash", "accept-hang", "connect-crash", "connect-hang", "clean-exit", "disconnect")


def run_both(dvm, args, program, mca):
    """Both jobs at once, each bounded; one Run holding both outputs."""
    port_file = mpicmd.inject_file()   # a path no file has yet
    jobs = {"accept": args.np, "connect": args.peers}
    runs = {}

    def one(side):
        cmd = dvm.prun(jobs[side], program + ["--connect", side, "--port-file", port_file], mca=mca)
        runs[side] = launch.run(cmd, deadline_s=args.deadline_s + 30)

    threads = [threading.Thread(target=one, args=(side,)) for side in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for written in (port_file, port_file + ".part"):   # .part: an accept that failed mid-write
        if os.path.exists(written):
            os.unlink(written)
    first_bad = next((r for r in runs.values() if r.outcome != "exited" or r.returncode != 0), runs["accept"])
    return launch.Run(first_bad.outcome, first_bad.returncode, max(r.wall_s for r in runs.values()),
                      runs["accept"].records + runs["connect"].records,
                      "".join(f"--- prun {side} ---\n{r.output}" for side, r in runs.items()))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=4, help="ranks of the accepting job")
    p.add_argument("--peers", type=int, default=2, help="ranks of the connecting job")
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--deadline-s", type=int, default=20)
    p.add_argument("--mca", action="append", default=[], metavar="KEY=VALUE")
    args = p.parse_args()
    cases = chosen_cases(p, args.cases, CASES)
    exe = mpicmd.compile_test("tests/mpi/ulfm_spawn.c")
    mca = dict(kv.split("=", 1) for kv in args.mca)
    # check_case reads the jobs' sizes under spawn_failure's names
    shape = argparse.Namespace(np=args.np, children=args.peers, deadline_s=args.deadline_s)
    results = []
    for case in cases:
        if case in PARTINGS:
            victim, kind, label = -1, PARTINGS[case], case
        else:
            side, kind = case.split("-")
            victim = 2 if side == "accept" else args.np + args.peers - 1
            label = f"{SIDES[side]}-{kind}"
        program = [exe, "--children", args.peers, "--victim", victim, "--kind", kind,
                   "--deadline-s", args.deadline_s, "--linger-ms", 1000]
        with Dvm() as dvm:
            run = run_both(dvm, args, program, case_mca(case, mca))
        print_detections(case, run)
        results.append((case, run, check_case(shape, label, victim, run)))
    return checks.verdict_of_cases("connect failure", results)


if __name__ == "__main__":
    sys.exit(main())
