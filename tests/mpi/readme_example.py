"""The README's examples, compiled and run as a reader would: mpicc with no
flags, 4 ranks, the C block under its heading. So the README cannot drift
from what the build offers.

  readme_example.py [--victim]    the survivor allreduce ("## An allreduce
      that completes despite failures"): each rank prints the sum 1+2+3+4
      over 4 processes; with rank 2 killed before the call (--victim), the
      3 others print 1+2+4 over 3 processes.
  readme_example.py --respawn     the respawn idiom ("## Recover by
      respawning..."): rank 1 hangs, then its replacement hangs; each of
      the 4 ranks prints its 10 steps' sum after 2 recoveries, and mpirun
      exits 0."""
import argparse
import re
import sys
from mpijobs import checks, launch, mpicmd, paths

SURVIVORS = "## An allreduce that completes despite failures"
RESPAWN = "## Recover by respawning, and keep the process count"


def example_source(heading):
    readme = (paths.ROOT / "README.md").read_text()
    section = readme.split(heading, 1)[1]
    return re.search(r"```c\n(.*?)```", section, re.S).group(1)


def compiled(source, name):
    out = paths.ROOT / "build" / "tests" / "bin" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(source)
    return mpicmd.compile_program(out, out.parent)


def survivors(victim):
    source = example_source(SURVIVORS)
    if victim:
        # the only change: rank 2 dies before the call, the others do not wait
        source = source.replace("    mine = 1.0 + rank;", "    if (rank == 2) raise(SIGKILL);\n    mine = 1.0 + rank;")
        source = "#include <signal.h>\n" + source
    exe = compiled(source, "readme_survivors_victim.c" if victim else "readme_survivors.c")
    run = launch.run(mpicmd.mpirun(4, [exe]), deadline_s=30)
    problems = checks.exit_problems(run, 30)
    expected = {r: "7 from 3 processes" if victim else "10 from 4 processes"
                for r in ((0, 1, 3) if victim else range(4))}
    for rank, text in expected.items():
        if f"rank {rank}: {text}" not in run.output:
            problems.append(f"rank {rank} did not print '{text}'")
    return checks.verdict("the README's survivor allreduce example" + (" with a victim" if victim else ""),
                          run, problems)


def respawn():
    exe = compiled(example_source(RESPAWN), "readme_respawn.c")
    run = launch.run(mpicmd.mpirun(4, [exe]), deadline_s=60)
    problems = checks.exit_problems(run, 60)
    for rank in range(4):
        text = f"rank {rank}: 10 steps, last sum 10, after 2 recoveries"
        if text not in run.output:
            problems.append(f"rank {rank} did not print '{text}'")
    return checks.verdict("the README's respawn example", run, problems)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--victim", action="store_true", help="survivor allreduce: rank 2 kills itself before the call")
    p.add_argument("--respawn", action="store_true", help="the respawn example instead")
    args = p.parse_args()
    return respawn() if args.respawn else survivors(args.victim)


if __name__ == "__main__":
    sys.exit(main())
