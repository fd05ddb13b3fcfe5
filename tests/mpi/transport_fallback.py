"""Where the detector's own UCX context cannot start, every process takes
the BTL path, says so once at mpi_ft_verbose 1, and a crash is survived.

UCX is made to fail by naming a transport it does not have in the
detector's own configuration (BTL_FT_UCX_TLS), which leaves the
application's UCX untouched. Checks: every rank printed the fallback line,
none reported heartbeats over ucx, every rank reported them over the BTLs,
and scenario.py's checks of the crash hold.
"""
import argparse
import sys

from tests.mpi import scenario
from mpijobs import checks, launch, mpicmd

NP = 4
VICTIM = 2
FALLBACK = "the detector's own UCX transport cannot start"


def main():
    exe = mpicmd.compile_test("tests/mpi/ulfm_agree.c")
    args = argparse.Namespace(kind="crash", np=NP, deadline_s=20)
    inject = mpicmd.inject_file()
    program = [exe, "--victims", VICTIM, "--kind", "crash", "--inject-after-ms", 400,
               "--inject-file", inject, "--deadline-s", args.deadline_s]
    mca = {"mpi_ft_verbose": 5, "mpi_ft_detector_period": 0.01, "mpi_ft_detector_timeout": 0.2}
    run = launch.run(mpicmd.mpirun(NP, program, mca=mca, extra=["-x", "BTL_FT_UCX_TLS=nosuch"]),
                      deadline_s=args.deadline_s + 30)
    problems = scenario.check(args, run, [VICTIM])
    said = run.output.count(FALLBACK)
    if said != NP:
        problems.append(f"{said} of {NP} ranks said they fell back to the BTL path")
    if "heartbeats over ucx" in run.output:
        problems.append("a rank reported heartbeats over ucx")
    over_btl = run.output.count("btl_ft: heartbeats: ")
    if over_btl != NP - 1:
        problems.append(f"{over_btl} of {NP - 1} survivors reported heartbeats over the BTLs")
    return checks.verdict("transport_fallback", run, problems)


if __name__ == "__main__":
    sys.exit(main())
