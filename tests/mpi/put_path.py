"""Shows which path carried the heartbeats over one BTL, as a pass/fail test.

  put_path.py --btl sm|tcp|uct[:domains]|ofi[:provider] [--am]

Runs a failure-free job restricted to `--btl` (harness.transport_mca) with the detector
at η = 10 ms and reads each rank's finalize report (mpi_ft_verbose 5):
  btl_ft: heartbeats: N by BTL put (M completed), K by active message (B before the
  observer's flag handle came); W new words ...
With puts (the default) every rank must have put through BTL, had its puts
complete, read new words from its own flag, and sent heartbeats as messages
only before its observer's flag handle came (B == K; how long that takes
depends on how far apart the ranks start, which a loaded host stretches).
With --am (mpi_ft_detector_rdma_heartbeat false) no put may happen at all.
"""
import argparse
import re
import sys

import harness

REPORT = re.compile(r"btl_ft: heartbeats: (\d+) by (\S+) put \((\d+) completed\), (\d+) by active "
                    r"message \((\d+) before the observer's flag handle came\); (\d+) new words read")
NP = 4


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--btl", required=True, type=harness.transport_arg,
                   help="sm, tcp, uct[:domains], ofi[:provider]")
    p.add_argument("--am", action="store_true", help="RDMA heartbeats off: expect messages only")
    args = p.parse_args()
    exe = harness.compile_program(harness.ROOT / "tests" / "mpi" / "ulfm_agree.c",
                                  harness.ROOT / "build" / "tests" / "bin")
    mca = {**harness.transport_mca(args.btl), "mpi_ft_verbose": 5,
           "mpi_ft_detector_period": 0.01, "mpi_ft_detector_timeout": 0.2,
           "mpi_ft_detector_rdma_heartbeat": "false" if args.am else "true"}
    run = harness.run(harness.mpirun_command(NP, [exe, "--kind", "none", "--inject-after-ms", 1500],
                                             mca=mca), deadline_s=60, program_name=str(exe))
    reports = [tuple(int(g) if g.isdigit() else g for g in m.groups()) for m in REPORT.finditer(run.output)]
    problems = []
    if run.returncode != 0:
        problems.append(f"mpirun exit status {run.returncode}")
    if len(reports) != NP:
        problems.append(f"{len(reports)} of {NP} ranks reported their heartbeat counters")
    for put, btl, completed, messages, before_handle, words in reports:
        print(f"  put {put} by {btl}, completed {completed}, as messages {messages} "
              f"({before_handle} before the handle), flag words read {words}")
        if args.am:
            if put or messages == 0:
                problems.append("with RDMA heartbeats off, expected messages only")
        elif btl != args.btl.partition(":")[0] or put == 0 or completed == 0 or words == 0:
            problems.append(f"expected heartbeats by {args.btl} put, got {put} by {btl}, {messages} as messages")
        elif messages != before_handle:
            problems.append(f"{messages - before_handle} heartbeats went as messages after the observer's "
                            f"flag handle came (a put failed or had no path)")
    if problems:
        print("FAILED:\n  " + "\n  ".join(problems) + "\n--- output ---\n" + run.output[-3000:])
        return 1
    print(f"ok: heartbeats over {args.btl} {'as active messages' if args.am else 'by put'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
