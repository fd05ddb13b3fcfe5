"""Instructions per MPI call on rank 0's application thread, counted by
callgrind (call_cost.c): deterministic, so a 1 % difference shows where
wall-clock latency on this VM swings by tens of percent. Only rank 0 runs
under valgrind; rank 1 runs natively and keeps the detector watching a live
peer."""
import shutil
import tempfile
from pathlib import Path

from benchmarks import common
from mpijobs import mpicmd

SOURCE = Path(__file__).resolve().parent / "call_cost.c"
ITERATIONS = 20000
# the loops of call_cost.c, by the name of their callgrind dump
TESTS = {"roundtrip": "self_roundtrip_instructions", "poll": "idle_test_instructions"}
RANK0_UNDER_CALLGRIND = ('if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then '
                         'exec valgrind -q --tool=callgrind --separate-threads=yes '
                         '--callgrind-out-file="$CALLGRIND_OUT" "$@"; fi; exec "$@"')


def available():
    return shutil.which("valgrind") is not None


def read_dump(path):
    """(thread number, trigger name, instructions) of one callgrind dump."""
    thread, trigger, total = None, None, None
    for line in path.read_text().splitlines():
        if line.startswith("thread: "):
            thread = int(line.split()[1])
        elif line.startswith("desc: Trigger: Client Request: "):
            trigger = line.rsplit(": ", 1)[1].strip()
        elif line.startswith("summary: "):
            total = int(line.split()[1])
    return thread, trigger, total


def measure(variant, mca):
    """{test: instructions per call} of the application thread, or {} and
    the run's outcome when the program gave no dumps."""
    exe = common.compile_for(SOURCE, variant)
    with tempfile.TemporaryDirectory(prefix="call_cost.") as tmp:
        out = Path(tmp) / "callgrind.out"
        program = ["sh", "-c", RANK0_UNDER_CALLGRIND, "call_cost", exe, ITERATIONS]
        cmd = mpicmd.mpirun(2, program, mca=mca, variant=variant,
                                     extra=["-x", f"CALLGRIND_OUT={out}"])
        run = common.run_mpi(cmd, 120, expect_records=1)
        values = {}
        for dump in Path(tmp).glob("callgrind.out.*"):
            thread, trigger, total = read_dump(dump)
            # thread 1 is the application's; the detector's has dumps of its own
            if thread == 1 and trigger in TESTS and total is not None:
                values[TESTS[trigger]] = total / ITERATIONS
        return values, run.outcome
