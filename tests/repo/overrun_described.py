"""mpijobs.launch.run describes a run that overran before it kills it:
every process of its session, its threads' states and (with gdb) their
stacks, so that a hang seen once in hundreds of runs can be read after
the fact. on_overrun is called whether or not the run is described. Exit
0 when every check holds."""
import shutil
import sys

from mpijobs import checks, launch

# a shell and a child of its, both waiting: the two processes of the session
WAITING = ["sh", "-c", "sleep 30 & exec sleep 31"]


def main():
    problems, called = [], []
    run = launch.run(WAITING, deadline_s=0.5, on_overrun=lambda: called.append("described"))
    if run.outcome != "overran":
        problems.append(f"outcome {run.outcome}, expected overran")
    for command in ("sleep 30", "sleep 31"):
        if command not in run.stuck:
            problems.append(f"the description lacks the process {command!r}")
    if "nanosleep" not in run.stuck:
        problems.append("the description lacks the threads' wait (nanosleep)")
    if shutil.which("gdb") and "#0" not in run.stuck:
        problems.append("gdb is installed but the description has no stack frame")
    quiet = launch.run(WAITING, deadline_s=0.5, describe_overrun=False,
                       on_overrun=lambda: called.append("not described"))
    if quiet.stuck:
        problems.append("describe_overrun=False still described the run")
    if called != ["described", "not described"]:
        problems.append(f"on_overrun calls {called}, expected one per run")
    if launch.run(["true"], deadline_s=10).stuck:
        problems.append("a run that exited was described")
    return checks.listed_verdict(problems, "overrun described")


if __name__ == "__main__":
    sys.exit(main())
