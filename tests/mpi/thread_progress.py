"""The detector thread stays out of opal_progress while the application waits in MPI.

  thread_progress.py [--np 4] [--btl uct]

On the BTL path the detector thread runs opal_progress itself only when the
application has run none for half a heartbeat period (it computes outside
MPI); two threads progressing the same BTLs contend for their locks and,
oversubscribed, yield, which held heartbeats back for tens of milliseconds.
This job waits in MPI the whole time (ulfm_agree agrees in a loop for 5 s)
at η 0.5 ms, 4 ranks on this host's 2 cores, and each rank's finalize
counters (mpi_ft_detector_counters) must show at most one opal_progress of
the thread per RATIO heartbeats. The application leaves opal_progress alone
in the runtime's fences of MPI_Init and MPI_Finalize, where a rank that
starts early waits for the others (about 400 calls of the thread, 100 ms,
at 2 of 4 ranks in a first run), and whenever it is preempted: the count is
not 0. When the thread took a time stamp of the application's progress
every 512 calls for the signal, each of those calls yielding the CPU, it
progressed beside the application about once per heartbeat (4226 times in
2 s at one rank).
"""
import argparse
import re
import sys
from mpijobs import checks, launch, mpicmd


COUNTERS = re.compile(r"btl_ft: heartbeats sent (\d+) .* thread progress calls (\d+)")
RATIO = 5


def problems_of(args, run):
    problems = checks.exit_problems(run, 60)
    counters = [(int(m.group(1)), int(m.group(2))) for m in COUNTERS.finditer(run.output)]
    if len(counters) != args.np:
        problems.append(f"{len(counters)} of {args.np} ranks reported their counters")
    for heartbeats, progress_calls in counters:
        print(f"  a rank: {heartbeats} heartbeats sent, {progress_calls} opal_progress calls of its detector thread")
        if heartbeats == 0 or RATIO * progress_calls > heartbeats:
            problems.append(f"{progress_calls} opal_progress calls of the detector thread for {heartbeats} "
                            f"heartbeats: more than one per {RATIO}")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=4)
    p.add_argument("--btl", type=mpicmd.transport_arg, default="uct")
    args = p.parse_args()
    exe = mpicmd.compile_test("tests/mpi/ulfm_agree.c")
    mca = {**mpicmd.transport_mca(args.btl), "mpi_ft_detector_transport": "btl",
           "mpi_ft_detector_period": 0.0005, "mpi_ft_detector_timeout": 0.05,
           "mpi_ft_detector_counters": "true"}
    run = launch.run(mpicmd.mpirun(args.np, [exe, "--kind", "none", "--inject-after-ms", 5000], mca=mca),
                     deadline_s=60)
    return checks.verdict("detector thread progress", run, problems_of(args, run))


if __name__ == "__main__":
    sys.exit(main())
