"""A node starved of CPU as a whole is not declared failed: the node grace.

  starved_node.py [--starve-s 1.5]

4 ranks of ulfm_agree --kind none on 2 emulated nodes compute for 3 s
without MPI calls. While they do, both ranks of node 1 go together into one
cpu cgroup (v1) allowed 5 ms of CPU per 200 ms: every thread of them, the
detectors' too, is kept off the CPU for up to about 195 ms at a time, 4
timeouts (eta 10 ms, delta 50 ms). The witness an observer on node 0 asks
is the other rank of node 1, starved as well, so it cannot answer either.
  - with mpi_ft_detector_node_grace 0 (the control: half a timeout, so a
    silent node is declared at 75 ms) an observer must declare one of them
    failed: otherwise the starvation was too mild to show anything;
  - at the default grace (0.25 s: declared at 300 ms) nobody may be
    declared failed, and every rank must report.
Exit 77 (ctest: skipped) without emulated nodes or a writable cgroup v1 cpu
hierarchy with CFS bandwidth control.
"""
import argparse
import sys

import nodes
from nodes import harness
import starved_rank  # tests/mpi, on the path through nodes

NP, NODES = 4, 2
PERIOD_US, QUOTA_US = 200_000, 5_000


def run_case(exe, args, names, grace):
    mca = {**starved_rank.MCA, "async_mpi_finalize": 1}
    if grace is not None:
        mca["mpi_ft_detector_node_grace"] = grace
    program = [exe, "--victims", "0", "--kind", "none", "--inject-after-ms", 400,
               "--deadline-s", 20, "--compute-s", 3]
    starver = starved_rank.Starver(exe, nodes.ranks_on(NODES - 1, NP, NODES), args.starve_s,
                                   PERIOD_US, QUOTA_US)
    starver.start()
    try:
        run = harness.run(nodes.mpirun_command_netns(NP, program, mca=mca, nodes=NODES),
                          deadline_s=60, program_name=str(exe))
    finally:
        starver.join(timeout=10)
        nodes.reap(names)
    return run, starver


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--starve-s", type=float, default=1.5)
    args = p.parse_args()
    if not starved_rank.cgroup_usable():
        print(f"SKIPPED: no cgroup v1 cpu hierarchy with CFS bandwidth control at {starved_rank.CPU_ROOT}")
        return nodes.SKIP
    exe = harness.compile_program(harness.ROOT / "tests" / "mpi" / "ulfm_agree.c",
                                  harness.ROOT / "build" / "tests" / "bin")
    with nodes.exclusive():
        try:
            names, _ = nodes.ensure_nodes(NODES)
        except nodes.Unavailable as e:
            print(f"SKIPPED: cannot create emulated nodes: {e}")
            return nodes.SKIP

        def cases():
            run, starver = run_case(exe, args, names, grace=0)
            yield "node grace 0 (control)", run, starved_rank.check_control(run, starver)
            run, starver = run_case(exe, args, names, grace=None)
            yield "default node grace", run, check_kept(run, starver)
        return harness.verdict_of_cases("a starved node is kept by the node grace", cases())


def check_kept(run, starver):
    if starver.problem or not starver.starved:
        return [starver.problem or "the node was never starved"]
    problems = harness.exit_problems(run, 60)
    suspicions = [line for line in run.output.splitlines() if starved_rank.SUSPICION.search(line)]
    if suspicions:
        problems.append(f"a rank of the starved node was declared failed: {suspicions[0]}")
    finished = [r for r in run.records if "rounds" in r and not r.get("failed")]
    if len(finished) != NP:
        problems.append(f"{len(finished)} of {NP} ranks finished without a failure")
    return problems


if __name__ == "__main__":
    sys.exit(main())
