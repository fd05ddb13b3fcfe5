"""An invalid detector (or survivor allreduce) parameter stops MPI_Init with a message naming the
parameter, the value and what is accepted; nothing is silently adjusted."""
import sys
from mpijobs import launch, mpicmd


CASES = [  # (parameter, value, a word of what is accepted)
    ("mpi_ft_detector_period", "abc", "positive"),
    ("mpi_ft_detector_period", "0", "positive"),
    ("mpi_ft_detector_period", "-1", "positive"),
    ("mpi_ft_detector_timeout", "0.05", "larger"),   # not larger than the period below
    ("mpi_ft_detector_probe_width", "9", "[1, 8]"),   # the core's range, under the MCA name
    ("mpi_ft_detector_probe_width", "2x", "whole number"),  # Open MPI alone would read 2
    ("mpi_ft_detector_seed", "abc", "whole number"),
    ("mpi_ft_detector_node_grace", "-0.1", "[0, 2^52]"),
    ("mpi_ft_detector_witness_patience", "-1", "[0, 2^52]"),
    ("mpi_ft_detector_ring_order", "spiral", "rank|node|shuffle"),
    ("mpi_ft_propagator", "gossip", "hba|bmg|chord"),
    ("mpi_ft_detector_watch_node", "maybe", "true|enabled"),
    ("mpi_ft_detector_transport", "verbs", "ucx|btl"),
    ("mpi_ft_survivors_radix", "1", "between 2 and 65536"),
    ("mpi_ft_survivors_radix", "abc", "whole number"),  # Open MPI alone would read 0, the default
    ("mpi_ft_survivors_latency_ratio", "0", "from 0.01 to 10000"),
    ("mpi_ft_survivors_latency_ratio", "ten", "a number"),
    ("mpi_ft_survivors_fast_max_bytes", "512 bytes", "whole number"),
    ("mpi_ft_survivors_preconnect", "maybe", "true|enabled"),
]


def main():
    exe = mpicmd.compile_test("tests/mpi/ulfm_agree.c")
    failures = []
    for name, value, accepted in CASES:
        mca = {"mpi_ft_detector_period": 0.1, name: value}
        # After every rank aborted in MPI_Init, the bundled PRRTE under
        # --with-ft ulfm sometimes never returns (its cleanup deadlocks;
        # stock 5.0.7 too) and sometimes exits 0: the harness kills the
        # former, and neither is ours to check. What is checked is that
        # MPI_Init refused to go on, with the message.
        run = launch.run(mpicmd.mpirun(2, [exe, "--kind", "none", "--inject-after-ms", 100],
                                                 mca=mca), deadline_s=20)
        text = run.output
        ok = (name in text and value in text
              and accepted.lower() in text.lower() and '"rounds"' not in text)
        status = "killed after 20 s (PRRTE did not return)" if run.timed_out else f"exit {run.returncode}"
        print(f"{'ok  ' if ok else 'FAIL'} {name}={value}: {status}")
        if not ok:
            failures.append(f"{name}={value}\n{text[-2000:]}")
    if failures:
        print("FAILED:\n" + "\n".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
