"""A process that dies between its swap of an empty shared-memory FIFO's
tail and its store of the head does not leave the FIFO's reader deaf
(patch 0050): `--runs` jobs of sm_dead_writer_gap.c over btl sm with its
fast boxes off. In each, gdb holds rank 1 on a breakpoint right after each
of btl sm's swaps of a FIFO tail (an `xchg` that objdump finds in Open
MPI's library) until one swaps rank 0's tail and gets back "empty", and
rank 1 is killed there, before it stores the head. Rank 0 must still
receive every message of rank 2, and say that it made the dead writer's
element the head (btl_base_verbose 100).

A breakpoint, not a hardware watchpoint on the tail: on some VMs (an AMD
EPYC guest here) gdb sets a hardware watchpoint that never fires.

Before the fix, rank 0 saw nothing more from any node-mate: a survivor
allreduce blocked until its deadline in about 1 run of 200
(survivors_during_crash_radix2_np8), every survivor waiting for a rank
whose FIFO a dying parent had left so.

  sm_dead_writer_gap.py [--runs 3]
"""
import argparse
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from mpijobs import checks, launch, mpicmd

# gdb stops every thread of rank 1 while it attaches: a detector timeout
# far above that keeps the detector from declaring rank 1 hung meanwhile
# (the runtime reports its kill)
MCA = {"pml": "ob1", "btl": "self,sm", "btl_sm_fbox_max": 0, "btl_base_verbose": 100,
       "mpi_ft_detector_period": 1, "mpi_ft_detector_timeout": 10}
MESSAGES = 10000
DEADLINE_S = 30
EMPTY = -2  # SM_FIFO_FREE: what the swap of an empty FIFO's tail returns
# objdump's lines: a function's start, and any instruction
FUNCTION = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
INSTRUCTION = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")
# `xchg %rax,0x8(%rdx)`: the old tail comes back in the first register
SWAP = re.compile(r"^xchg\s+%(r\w+),(0x[0-9a-f]+)?\(%(r\w+)\)")
ON_SWAP = """break *{address:#x}
commands
  silent
  if ${old} == {empty} && ${base} + {offset} == {tail:#x}
    printf "stopped after a swap of the empty FIFO\\n"
    shell kill -9 {pid}
  else
    continue
  end
end
"""


def swap_sites(library):
    """Where btl sm swaps a FIFO's tail in `library`: for each, the
    address of the instruction after the swap, the register that holds
    the old tail there, and the tail's address as base register and
    offset."""
    listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(library)], capture_output=True,
                             text=True, check=True).stdout
    sites, function, swap = [], "", None
    for line in listing.splitlines():
        if m := FUNCTION.match(line):
            function, swap = m.group(1), None
            continue
        if not (m := INSTRUCTION.match(line)):
            continue
        if swap:
            sites.append({"address": int(m.group(1), 16), **swap})
        swap = None
        if "btl_sm" in function and (s := SWAP.match(m.group(2))):
            swap = {"old": s.group(1), "offset": int(s.group(2) or "0", 16), "base": s.group(3)}
    return sites


def file_mappings(pid):
    """(start address, file offset, path) of each file that `pid` maps."""
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split()
        if len(fields) == 6:
            yield int(fields[0].split("-")[0], 16), int(fields[2], 16), fields[5]


def loaded_at(pid, name):
    """The file of the library `name` mapped in `pid`, and where."""
    for start, offset, path in file_mappings(pid):
        if Path(path).name.startswith(name) and offset == 0:
            return path, start
    return None, None


def wait_for_pid(pid_file, seconds):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        text = Path(pid_file).read_text() if Path(pid_file).exists() else ""
        if text.endswith("\n"):
            return int(text)
        time.sleep(0.05)
    return None


def rank0_fifo(pid):
    """The address, in `pid`, of rank 0's FIFO: the start of its segment,
    whose file ends in its node rank."""
    for start, _, path in file_mappings(pid):
        if re.search(r"/sm_segment\.[^ ]*\.0$", path):
            return start
    return None


def gdb_script(pid, tail):
    """Breakpoints after each of btl sm's swaps in rank `pid`, the one
    that returns rank 0's empty tail killing it; None when there are none."""
    library, base = loaded_at(pid, "mca_btl_sm.so")
    if not library:
        library, base = loaded_at(pid, "libopen-pal.so")
    sites = swap_sites(library) if library else []
    if not sites:
        return None
    return "set pagination off\n" + "".join(
        ON_SWAP.format(address=base + site["address"], old=site["old"], base=site["base"], offset=site["offset"],
                       empty=EMPTY, tail=tail, pid=pid) for site in sites) + "continue\n"


def stop_and_kill(pid_file, said):
    pid = wait_for_pid(pid_file, DEADLINE_S)
    fifo = pid and rank0_fifo(pid)
    if not fifo:
        said.append(f"no rank 1 pid or rank 0 segment (pid {pid})")
        return
    text = gdb_script(pid, tail=fifo + 8)
    if not text:
        said.append("no swap of a FIFO tail found in btl sm's library")
        return
    script = Path(pid_file + ".gdb")
    script.write_text(text)
    # no symbols needed: the breakpoints are addresses
    gdb = subprocess.Popen(["gdb", "-nx", "-batch", "-iex", "set auto-solib-add off", "-p", str(pid),
                            "-x", str(script)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        said.append(gdb.communicate(timeout=DEADLINE_S)[0])
    except subprocess.TimeoutExpired:
        gdb.kill()
        said.append(gdb.communicate()[0] + f" (gdb still ran after {DEADLINE_S} s)")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    exe = mpicmd.compile_test("tests/mpi/sm_dead_writer_gap.c")
    cases = []
    for i in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="btl_ft-gap-") as directory:
            pid_file = str(Path(directory) / "rank1.pid")
            said = []
            debugger = threading.Thread(target=stop_and_kill, args=(pid_file, said), daemon=True)
            debugger.start()
            run = launch.run(mpicmd.mpirun(3, [exe, "--pid-file", pid_file, "--messages", MESSAGES,
                                               "--deadline-s", DEADLINE_S], mca=MCA),
                             deadline_s=DEADLINE_S + 20)
            debugger.join(timeout=5)
        problems = []
        if not any("stopped after a swap of the empty FIFO" in text for text in said):
            problems.append(f"job {i + 1}: rank 1 was not stopped after a swap ({' '.join(said)[-300:]})")
        got = [r.get("received") for r in run.records if r.get("rank") == 0 and "received" in r]
        if got != [MESSAGES]:
            errors = [r["error"] for r in run.records if "error" in r]
            problems.append(f"job {i + 1}: rank 0 received {got or 'nothing'} of {MESSAGES} "
                            f"({'; '.join(errors) or run.outcome})")
        if "its element made the head" not in run.output:
            problems.append(f"job {i + 1}: rank 0 did not say it made the dead writer's element the head")
        if run.timed_out:
            problems.append(f"job {i + 1}: mpirun passed its bound of {DEADLINE_S + 20} s")
        cases.append((f"job {i + 1}", run, problems))
    return checks.verdict_of_cases(f"shared-memory FIFO after a writer died before storing its head, "
                                   f"{args.runs} jobs", cases)


if __name__ == "__main__":
    sys.exit(main())
