"""A parent that dies during MPI_Comm_spawn, holding a forked process, leaves
the other parent no longer waiting for it.

  spawn_lost_parent.py [--runs 1] [--hold-s 8] [--mca key=value ...]

Runs ulfm_spawn_lost_parent.c with 2 parents: rank 1 forks a process that
sleeps --hold-s, holding its descriptors (its socket to the runtime's PMIx
server, its output), and dies (SIGKILL) while rank 0 is in MPI_Comm_spawn
and the child has not yet called MPI_Init. Rank 0's spawn must return
(its outcome is printed, not asserted: ULFM lets a spawn that meets a
failure succeed or fail; here it fails), and mpirun must end within its
bound. Before PRRTE patch 0059 and OpenPMIx patch 0058, rank 0 and the
child waited in PMIx_Connect until their deadlines: the server counted
the dead parent in the connect, as nothing told it of the death.

The child's MPI_Init must end too, long before its own deadline (15 s),
with the message naming why: its connect succeeds, and it then waits for
rank 0's half of the new communicator's ID, which rank 0, its spawn
failed, never gives. Open MPI waited 600 s for it
(ompi_comm_allreduce_pmix_reduce_complete); since Open MPI patch 0060 the
wait ends once the runtime's process table shows rank 1 ended. The run's
line says how the child ended.
"""
import argparse
import sys

from mpijobs import checks, launch, mpicmd

MCA = {"mpi_ft_detector_period": 0.01, "mpi_ft_detector_timeout": 0.05}
DEADLINE_S = 15
CHILD_GAVE_UP = "a process of the other side ended during the connect"


def check(run):
    if run.timed_out:
        return [f"mpirun overran its bound of {DEADLINE_S + 30} s"]
    if not any("spawn" in r for r in run.records):
        return ["rank 0's MPI_Comm_spawn never returned: "
                + "; ".join(r["error"] for r in run.records if r.get("rank") == 0 and "error" in r)]
    stuck = [r["error"] for r in run.records if r.get("rank") == -1 and "error" in r]
    if stuck:
        return [f"the child did not leave MPI_Init: {stuck[0]}"]
    if not any(r.get("child") for r in run.records) and CHILD_GAVE_UP not in run.output:
        return ["the child's MPI_Init neither returned nor said why it failed"]
    return []


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--hold-s", type=int, default=8)
    p.add_argument("--mca", action="append", default=[])
    args = p.parse_args()
    mca = {**MCA, **dict(kv.split("=", 1) for kv in args.mca)}
    exe = mpicmd.compile_test("tests/mpi/ulfm_spawn_lost_parent.c")
    program = [exe, "--hold-s", args.hold_s, "--deadline-s", DEADLINE_S]

    def cases():
        for i in range(args.runs):
            run = launch.run(mpicmd.mpirun(2, program, mca=mca), deadline_s=DEADLINE_S + 30)
            outcomes = [f"rank 0's spawn: {r['spawn']} after {r['ms']:.0f} ms" for r in run.records if "spawn" in r]
            outcomes += [f"the child's MPI_Init: {r['init']}" for r in run.records if r.get("child")]
            outcomes += [f"the child: {r['error']}" for r in run.records if r.get("rank") == -1]
            if CHILD_GAVE_UP in run.output:
                outcomes.append(f"the child's MPI_Init: failed, saying {CHILD_GAVE_UP}")
            print(f"run {i + 1}: {'; '.join(outcomes) or 'nothing returned'}", flush=True)
            yield f"run {i + 1}", run, check(run)
    return checks.verdict_of_cases("a parent lost during a spawn no longer holds up the other", cases())


if __name__ == "__main__":
    sys.exit(main())
