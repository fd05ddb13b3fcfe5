"""The README's survivor allreduce example, compiled and run as a reader
would: the C block under "## An allreduce that completes despite failures",
mpicc with no flags, 4 ranks. Each prints the sum 1+2+3+4 over 4 processes;
with rank 2 killed before the call (--victim), the 3 others print 1+2+4
over 3 processes. So the README cannot drift from what the build offers."""
import argparse
import re
import sys
from mpijobs import checks, launch, mpicmd, paths

HEADING = "## An allreduce that completes despite failures"


def example_source():
    readme = (paths.ROOT / "README.md").read_text()
    section = readme.split(HEADING, 1)[1]
    return re.search(r"```c\n(.*?)```", section, re.S).group(1)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--victim", action="store_true", help="rank 2 kills itself before the call")
    args = p.parse_args()
    source = example_source()
    if args.victim:
        # the only change: rank 2 dies before the call, the others do not wait
        source = source.replace("    mine = 1.0 + rank;", "    if (rank == 2) raise(SIGKILL);\n    mine = 1.0 + rank;")
        source = "#include <signal.h>\n" + source
    out = paths.ROOT / "build" / "tests" / "bin" / ("readme_survivors_victim.c" if args.victim else "readme_survivors.c")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(source)
    exe = mpicmd.compile_program(out, out.parent)
    run = launch.run(mpicmd.mpirun(4, [exe]), deadline_s=30)
    problems = checks.exit_problems(run, 30)
    expected = {r: "7 from 3 processes" if args.victim else "10 from 4 processes"
                for r in ((0, 1, 3) if args.victim else range(4))}
    for rank, text in expected.items():
        if f"rank {rank}: {text}" not in run.output:
            problems.append(f"rank {rank} did not print '{text}'")
    return checks.verdict("the README's survivor allreduce example" + (" with a victim" if args.victim else ""),
                          run, problems)


if __name__ == "__main__":
    sys.exit(main())
