#!/usr/bin/env python3
"""repeat: the do-no-harm tests whose failures were rare, run again and again.

A failure that shows once in twenty runs is a failure, but CI runs each test
once. This stage runs the tests of the failure paths that once failed rarely
(a rank stranded in MPI_Finalize, survivors stopping themselves as failures
come one at a time, a blocking send on a revoked communicator, a starved
rank kept alive by its witness, the exit status and how a victim died,
the respawn idiom (also across 2 emulated nodes) and failures crossing between spawned or
connected jobs, a child spawned from MPI_COMM_SELF by one parent of several, a peer dying in the middle
of a transfer over btl/ofi, heartbeats by put over libfabric's rxm on a
loaded host, a healthy rank called failed as the others exit after a crash
across nodes, a rank that came up without btl/ofi over libfabric's shm,
the survivor allreduce on a revoked communicator, after an interrupted
MPI_Allreduce, and with failures during its calls, two of 5 emulated nodes
killed at once (mpirun ended the job on a connection reset to a lost
daemon: patch 0055), a row of hung processes across nodes, a rank left
alone on its node and frozen (the node grace), and a crash
under a 0.5 ms heartbeat over btl/uct, with the detector thread kept out of
opal_progress while the application waits in MPI)
R times each through ctest (the respawn idiom's cases 5 R times: it must
work every time, and R is 10 in `make bench`),
round-robin so that drift of the shared machine spreads over all of them,
and counts the failures. The tests come from build/tests (configured here
as `make test` does if it is missing). Output: benchmarks/results/repeat.jsonl,
one line per test, with the last lines of its first failure. --only REGEX
runs the matching tests alone and keeps the other lines of the last run
(each line names its commit).
"""
import argparse
import re
import subprocess
import sys

from benchmarks import common

TESTS = re.compile(r"^mpi\.(finalize_race_.*|one_by_one_.*|.*_revoked_sendrecv_killed|"
                   r"starved_rank|abort_status|failure_summary_np4|ofi_peer_exit|put_path_ofi_tcp_ofi_rxm|"
                   r"ofi_shm_hang_np4|respawn_.*|spawn_(failure|multiple|one_child|self|self_two_spawners|self_at_once)_np4|victim_death_np4|"
                   r"survivors_(revoked_np4|after_allreduce_np8|acked_np8|fast_mixed_np8|(fast_)?during_(crash|hang)_np8)|"
                   r"sm_dead_writer|connect_failure_np4|uct_crash_fast_heartbeat_np4|thread_progress)$"
                   r"|^netns\.(crash_notice_2nodes|respawn_.*_2nodes|spawn_self_(two_spawners_|at_once_)?2nodes|"
                   r"(two_levels_)?two_nodes_killed_5nodes|two_levels_hung_row_.*_3nodes|starved_lone_rank_2nodes)$")
# quick: one test of each family, once
QUICK_TESTS = re.compile(r"^mpi\.(finalize_race_tcp_np9|one_by_one_crash_np4|uct_revoked_sendrecv_killed|"
                         r"starved_rank)$|^netns\.crash_notice_2nodes$")
# the respawn idiom runs this many times as often as the others
MORE_RUNS = re.compile(r"^(mpi|netns)\.respawn_.*$")
MORE_RUNS_FACTOR = 5
TEST_DIR = common.ROOT / "build" / "tests"
TAIL_LINES = 15


def failure_lines(output):
    """What a failure's record keeps: the test's own "FAILED:" block (its
    problems, which come before the job's output) and the output's last
    lines (a starved_rank failure once kept only the job's last lines,
    which did not say which check failed)."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("FAILED")), None)
    problems = lines[start:start + TAIL_LINES] if start is not None else []
    return problems + ["..."] + lines[-TAIL_LINES:] if problems else lines[-TAIL_LINES:]


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="1 run of one test per family")
    p.add_argument("--runs", type=int, default=None, help="runs per test (default 10)")
    p.add_argument("--only", type=re.compile, default=None, metavar="REGEX",
                   help="run only the tests this matches; keep the earlier lines of the others")
    return p.parse_args(argv)


def ensure_tests():
    if (TEST_DIR / "CTestTestfile.cmake").exists():
        return
    subprocess.run(["cmake", "-S", str(common.ROOT / "tests"), "-B", str(TEST_DIR),
                    f"-DOMPI_PREFIX={common.ROOT / 'build' / 'ompi'}",
                    "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"],
                   check=True, stdout=subprocess.DEVNULL)


def listed_tests(quick):
    out = subprocess.run(["ctest", "--test-dir", str(TEST_DIR), "-N"], check=True,
                         capture_output=True, text=True).stdout
    names = re.findall(r"Test\s+#\d+: (\S+)", out)
    return [n for n in names if TESTS.match(n) and (not quick or QUICK_TESTS.match(n))]


def run_once(name):
    """(passed, skipped, output)"""
    done = subprocess.run(["ctest", "--test-dir", str(TEST_DIR), "-R", f"^{re.escape(name)}$",
                           "--output-on-failure", "--timeout", "300"],
                          capture_output=True, text=True)
    skipped = "***Skipped" in done.stdout or "Not Run" in done.stdout
    return done.returncode == 0, skipped, done.stdout + done.stderr


def main(argv=None):
    args = parse(argv)
    runs = args.runs or (1 if args.quick else 10)
    ensure_tests()
    names = [n for n in listed_tests(args.quick) if not args.only or args.only.search(n)]
    if not names:
        print("repeat: no test matched in build/tests", file=sys.stderr)
        return 1
    tally = {n: {"runs": 0, "failures": 0, "skipped": 0, "first_failure": None} for n in names}
    wanted = {n: runs * (MORE_RUNS_FACTOR if MORE_RUNS.match(n) and not args.quick else 1) for n in names}
    rounds = max(wanted.values())
    for round_ in range(rounds):
        for name in names:
            if tally[name]["runs"] >= wanted[name]:
                continue
            passed, skipped, output = run_once(name)
            t = tally[name]
            t["runs"] += 1
            t["skipped"] += skipped
            if not passed:
                t["failures"] += 1
                if t["first_failure"] is None:
                    t["first_failure"] = failure_lines(output)
        print(f"[repeat] round {round_ + 1} of {rounds}: "
              f"{sum(t['failures'] for t in tally.values())} failures so far", flush=True)
    # with --only, the earlier lines stay in their places, the new ones in theirs
    earlier = common.read_jsonl("repeat") if args.only else []
    order = [r["test"] for r in earlier] + [n for n in names if n not in {r["test"] for r in earlier}]
    earlier = {r["test"]: r for r in earlier}
    sink = common.JsonLines("repeat")
    for name in order:
        if name not in tally:
            sink.carry(earlier[name])
            continue
        t = tally[name]
        sink.write({"benchmark": "repeat", "test": name, **t})
        print(f"[repeat] {name}: {t['failures']} of {t['runs']} failed"
              + (f" ({t['skipped']} skipped)" if t["skipped"] else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
