"""Emulated nodes for node-loss tests: network namespaces on this machine.

tests/netns/setup.sh makes btlft-n0..n3 and btlft-head, joined through a bridge that
lives in btlft-switch, on 10.77.0.0/24 (see common.sh). This module starts
mpirun in btlft-head, with PRRTE's ssh launcher pointed at agent.sh so that
each prted starts inside its node's namespace, and injects node losses:
a silent link cut, every rank of a node killed, or every process of a node
killed. Tests call reap() afterwards: prted runs in its own process group,
out of reach of mpijobs.job's session kill, and a cut node's prted never
hears that the job ended.

The alternative rejected: containers or VMs per node. They need images and
a runtime this machine does not have; namespaces need only iproute2.
"""
import contextlib
import fcntl
import math
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from mpijobs import launch, mpicmd, paths

# setup.sh, agent.sh, teardown.sh and common.sh: the namespaces themselves
NETNS = paths.ROOT / "tests" / "netns"

SKIP = 77                      # setup.sh's and the tests' "cannot run here"
HEAD = "btlft-head"
SWITCH = "btlft-switch"
SUBNET = "10.77.0.0/24"
MAX_NODES = 5
STATE_DIR = Path("/run/btlft-netns")
# One job on the emulated nodes at a time, machine-wide: reap() kills
# everything in them. teardown.sh takes the same lock.
RUN_LOCK = Path("/run/lock/btlft-netns.lock")


@contextlib.contextmanager
def exclusive(timeout_s=300):
    """Holds RUN_LOCK; raises TimeoutError if another run keeps it."""
    RUN_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(RUN_LOCK, "a") as f:
        end = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > end:
                    raise TimeoutError(f"another run held {RUN_LOCK} for {timeout_s} s") from None
                time.sleep(0.5)
        yield


@contextlib.contextmanager
def taken_for_a_test(count):
    """exclusive() with `count` nodes made: yields their names, or None
    after printing the test's SKIPPED line when this machine cannot make
    them (the caller then returns SKIP)."""
    with exclusive():
        try:
            names, _ = ensure_nodes(count)
        except Unavailable as e:
            print(f"SKIPPED: cannot create emulated nodes: {e}")
            names = None
        yield names


@contextlib.contextmanager
def made_for_a_run(count):
    """exclusive() with `count` nodes made, and reaped afterwards: yields
    their names, or None when this machine cannot make them (a benchmark
    then goes on without that setup)."""
    with exclusive():
        try:
            names, _ = ensure_nodes(count)
        except Unavailable:
            yield None
            return
        try:
            yield names
        finally:
            reap(names)


class Unavailable(RuntimeError):
    """The machine cannot create the namespaces; str() says why."""


def node_name(index):
    return f"btlft-n{index}"


def ensure_nodes(n=2):
    """Creates (or keeps) n nodes; returns their names and the hostfile."""
    try:
        r = subprocess.run([str(NETNS / "setup.sh"), str(n)], capture_output=True, text=True,
                           timeout=120)
    except FileNotFoundError as e:
        raise Unavailable(str(e)) from e
    if r.returncode == SKIP:
        raise Unavailable(r.stderr.strip())
    if r.returncode != 0:
        raise RuntimeError(f"setup.sh {n} failed ({r.returncode}): {r.stderr.strip()}")
    return [node_name(k) for k in range(n)], Path(r.stdout.split()[-1])


def in_namespace(ns, cmd):
    """cmd inside ns, under ns's name as hostname (PRRTE compares names)."""
    return ["ip", "netns", "exec", ns, "unshare", "--uts", "sh", "-c",
            'hostname "$0" && exec "$@"', ns] + [str(c) for c in cmd]


def ranks_per_node(np, nodes):
    return math.ceil(np / nodes)


def ranks_on(index, np, nodes):
    """World ranks the ppr mapping of mpirun_command_netns puts on node index."""
    per = ranks_per_node(np, nodes)
    return list(range(index * per, min(np, (index + 1) * per)))


def network_mca(mca=None):
    """The application's MCA settings with its BTL on 10.77.0.0/24 (tcp)."""
    return {"btl": "tcp,self", "btl_tcp_if_include": SUBNET, **(mca or {})}


def runtime_network_args():
    """PRRTE's OOB on 10.77.0.0/24. A daemon cut off silently is given up
    after 1 + 1 * 3 s (patch 0013 bounds data in flight the same way), so
    mpirun ends once the survivors have finished."""
    return ["--prtemca", "oob_tcp_if_include", SUBNET,
            "--prtemca", "oob_tcp_keepalive_time", "1",
            "--prtemca", "oob_tcp_keepalive_intvl", "1",
            "--prtemca", "oob_tcp_keepalive_probes", "3"]


def mpirun_command_netns(np, program_args, mca=None, variant="ompi", nodes=2, extra=(), detached=False):
    """mpirun.command spread over the emulated nodes, block by block
    (ranks_on), every byte on 10.77.0.0/24: PRRTE's OOB and the TCP BTL.
    detached: each node's daemon in a session of its own, as PRRTE does by
    default (benchmarks/accuracy compares both)."""
    hostfile = STATE_DIR / f"hostfile-{nodes}"
    spread = ["--hostfile", hostfile, "--map-by", f"ppr:{ranks_per_node(np, nodes)}:node",
              "--prtemca", "plm_ssh_agent", NETNS / "agent.sh",
              # every prted a child of mpirun: a lost node takes no other with it
              "--prtemca", "plm_ssh_no_tree_spawn", "1", *runtime_network_args()]
    if not detached:
        # prted would start a session of its own (it daemonizes), and Linux
        # schedules each session as one group (CFS autogroup): emulated
        # nodes sharing these cores would then compete as groups, and the
        # group weights' lag left whole processes without CPU for 90 to 230
        # ms, which separate machines never do to each other. In mpirun's
        # session every process competes on its own.
        spread.append("--leave-session-attached")
    cmd = mpicmd.mpirun(np, program_args, mca=network_mca(mca), variant=variant,
                                 extra=[str(a) for a in spread] + list(extra))
    return in_namespace(HEAD, cmd)


def pids_in(ns):
    r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


def _rank_of(pid, program):
    try:
        if program not in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
            return None
        # mpirun sets OMPI_COMM_WORLD_RANK; srun --mpi=pmix only PMIX_RANK
        for entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
            if entry.startswith((b"OMPI_COMM_WORLD_RANK=", b"PMIX_RANK=")):
                return int(entry.split(b"=", 1)[1])
    except (OSError, ValueError):
        pass
    return None


def rank_processes(node, program):
    """{pid: world rank} of program's processes inside node."""
    found = {}
    for pid in pids_in(node):
        rank = _rank_of(pid, str(program))
        if rank is not None:
            found[pid] = rank
    return found


def _has_cross_node_connection(pid, own_address_hex):
    """An ESTABLISHED TCP socket of pid to another 10.77.0.x address."""
    try:
        inodes = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        table = Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return False
    for line in table:
        f = line.split()
        remote, state, inode = f[2], f[3], f[9]
        peer = remote.split(":")[0]
        # /proc/net/tcp holds the address little-endian: 10.77.0.x is "xx004D0A"
        if state == "01" and peer.endswith("004D0A") and peer != own_address_hex \
                and f"socket:[{inode}]" in inodes:
            return True
    return False


def wait_started(node, program, ranks, timeout_s, alone=False):
    """True once node runs len(ranks) ranks of program and one of them talks
    to another node over the TCP BTL: every rank is then past MPI_Init's
    fence, so an injected loss hits the computation, not the start-up. A
    job `alone` on its node has no such sign: its ranks running must do."""
    own = f"{10 + int(node.rsplit('n', 1)[1]):02X}004D0A"
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        procs = rank_processes(node, program)
        if sorted(procs.values()) == sorted(ranks) and \
                (alone or any(_has_cross_node_connection(pid, own) for pid in procs)):
            return True
        time.sleep(0.1)
    return False


def ranks_of_nodes(names, program):
    """{pid: world rank} of program's processes on the nodes `names`."""
    return {pid: rank for node in names for pid, rank in rank_processes(node, program).items()}


def processes_of_nodes(names):
    return [pid for node in names for pid in pids_in(node)]


def signal_all(pids, sig):
    """sig to every pid in one loop: processes found beforehand, so that
    those of several nodes are hit within microseconds of each other. The
    loop runs at real-time priority where allowed: at normal priority, on 2
    busy cores, the first victims' exits preempted it and the last were hit
    24 ms after the first, long enough for them to see the others fail."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        raised = True
    except (PermissionError, AttributeError):
        raised = False
    try:
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
    finally:
        if raised:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def kill_node(names, program=None):
    """SIGKILL every process inside the nodes `names` (prted too), all in one
    round: nodes that crashed at once while their network stays up, so
    peers get resets. Returns the ranks of program that were there."""
    ranks = sorted(ranks_of_nodes(names, program).values()) if program else []
    launch.kill_until_gone(lambda: processes_of_nodes(names))
    return ranks


def _switch_port(node):
    return "p-" + node.split("-", 1)[1]


def cut_link(node, how="down"):
    """Silently isolates node: nothing it sends arrives, nothing reaches it,
    and no one is told (no reset, no ICMP, no ARP failure: setup.sh made the
    neighbour entries permanent). how="down" takes the switch port down (the
    node sees its carrier go); how="blackhole" disables the bridge port and
    every link stays up, like netem loss 100%, which this kernel lacks."""
    port = _switch_port(node)
    if how == "down":
        _run("ip", "-n", SWITCH, "link", "set", port, "down")
    elif how == "blackhole":
        _run("bridge", "-n", SWITCH, "link", "set", "dev", port, "state", "0")
    else:
        raise ValueError(f"cut how={how}: down or blackhole")


def restore_link(node):
    port = _switch_port(node)
    _run("ip", "-n", SWITCH, "link", "set", port, "up")
    _run("bridge", "-n", SWITCH, "link", "set", "dev", port, "state", "3")   # forwarding


def _run(*cmd):
    subprocess.run(cmd, check=True, capture_output=True)


def reap(nodes):
    """Kills every process in head and nodes and heals every link: the
    namespaces are ready for the next test."""
    for ns in [HEAD, *nodes]:
        launch.kill_until_gone(lambda ns=ns: pids_in(ns))
    for node in nodes:
        restore_link(node)
    _remove_stale_session_dirs()


def _remove_stale_session_dirs():
    """A killed prted or mpirun leaves its session directory behind
    (TMPDIR/prted.btlft-n1.PID.UID): removed once PID is gone. Only our node
    names are touched, so other jobs' directories stay."""
    for d in Path(tempfile.gettempdir()).glob("prte*.btlft-*.*.*"):
        pid = d.name.split(".")[-2]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(d, ignore_errors=True)


COUNTERS = {"Tcp": ("OutRsts", "EstabResets", "AttemptFails"),
            "Icmp": ("InDestUnreachs", "OutDestUnreachs")}


def net_counters(ns):
    """The counters that would show a cut that is not silent."""
    text = subprocess.run(["ip", "netns", "exec", ns, "cat", "/proc/net/snmp"],
                          capture_output=True, text=True, check=True).stdout.splitlines()
    values = {}
    for names, numbers in zip(text[::2], text[1::2]):
        proto, keys = names.split(":")[0], names.split()[1:]
        for key, value in zip(keys, numbers.split()[1:]):
            if key in COUNTERS.get(proto, ()):
                values[f"{proto}{key}"] = int(value)
    return values
