"""`make demo`: a ULFM program on 8 ranks, one crash and one hang injected,
with what every survivor saw and how long it took; last, a bag of tasks
that loses a worker and its coordinator and still gets the right answer
(demo_tasks.py)."""
import statistics
import sys
from pathlib import Path

from tests.mpi import demo_tasks
from mpijobs import launch, mpicmd, paths

NP = 8
VICTIM = 3
DEADLINE_S = 10
DETECTOR = {"mpi_ft_detector_period": 0.01, "mpi_ft_detector_timeout": 0.05}


def describe(kind, run):
    print(f"\n--- {kind}: rank {VICTIM} {'killed (SIGKILL)' if kind == 'crash' else 'stopped (SIGSTOP)'}"
          f" while all ranks loop on MPIX_Comm_agree")
    survivors = [r for r in run.records if "agreed_ms" in r]
    errors = [r for r in run.records if "error" in r]
    if survivors:
        agreed = [r["agreed_ms"] for r in survivors]
        failed_sets = {tuple(r["failed"]) for r in survivors}
        agreed_on = " / ".join("{" + ", ".join(map(str, s)) + "}" for s in sorted(failed_sets))
        print(f"  {len(survivors)}/{NP - 1} survivors agreed that rank set {agreed_on} failed")
        print(f"  agreement returned after: first {min(agreed):.1f} ms, median "
              f"{statistics.median(agreed):.1f} ms, last {max(agreed):.1f} ms (from the injection)")
        print(f"  shrink took: median {statistics.median(r['shrink_ms'] for r in survivors):.2f} ms;"
              f" result on the shrunk communicator correct at all: "
              f"{all(r['result_ok'] for r in survivors)}")
    for r in errors:
        print(f"  rank {r['rank']}: {r['error']}")
    if run.timed_out:
        print("  mpirun did not return within its deadline and was killed")
    else:
        print(f"  mpirun exit status {run.returncode}, wall time {run.wall_s:.1f} s")
    return len(survivors) == NP - 1


def main():
    exe = mpicmd.compile_program(paths.ROOT / "tests" / "mpi" / "ulfm_agree.c",
                                  paths.ROOT / "build" / "demo")
    print(f"btl_ft demo: {NP} ranks of {exe.name} under "
          f"{paths.prefix() / 'bin' / 'mpirun'} --with-ft ulfm")
    print("  detector: " + ", ".join(f"{k}={v}" for k, v in DETECTOR.items()))
    ok = True
    for kind in ("crash", "hang"):
        inject = mpicmd.inject_file()
        cmd = mpicmd.mpirun(NP, [exe, "--victims", VICTIM, "--kind", kind,
                                          "--inject-after-ms", 500, "--inject-file", inject,
                                          "--deadline-s", DEADLINE_S],
                                     mca=DETECTOR)
        run = launch.run(cmd, deadline_s=DEADLINE_S + 20)
        Path(inject).unlink(missing_ok=True)
        ok &= describe(kind, run)
    ok &= demo_tasks.main()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
