"""The mpirun command line of a job: ULFM on, a transport if one was
chosen, MCA settings; and compiling a program against an install."""
import os
import re
import subprocess
import tempfile
from pathlib import Path

from mpijobs import paths

# the detector's line at mpi_ft_verbose 1: who failed, and how it became
# known (crashed, hung, unreachable)
FAILURE_KIND = re.compile(r"btl_ft: rank (\d+) failed: (\w+)")

# The transports a job can be restricted to (docs/transports.md): the MCA
# settings a user needs for each. `BTL=uct make test` (or bench) runs every
# job that does not choose its BTL itself over that transport. uct and ofi
# take a variant after a colon: UCX memory domains (uct:tcp) or libfabric
# providers (ofi:shm; ofi:tcp+ofi_rxm for "tcp;ofi_rxm", as a ';' splits
# CMake lists and shell commands).
TRANSPORTS = ("sm", "tcp", "uct", "ofi")


def compile_program(source, out_dir, variant="ompi"):
    """mpicc with no extra flags: what a user would type. One binary per
    install: mpicc links with an rpath to its own libmpi, so a binary built
    by one install and launched by another's mpirun would run the first."""
    mpicc = paths.prefix(variant) / "bin" / "mpicc"
    out_dir = Path(out_dir) / paths.prefix(variant).name
    out_dir.mkdir(parents=True, exist_ok=True)
    exe = out_dir / Path(source).stem
    # the program, the headers beside it, and the install it links against
    inputs = [Path(source), mpicc, *Path(source).parent.glob("*.h")]
    if not exe.exists() or exe.stat().st_mtime < max(p.stat().st_mtime for p in inputs):
        # built beside it and renamed over it: a test running at the same
        # time (ctest -j, two stress loops) runs the old binary or the new,
        # never one half written
        partial = exe.with_name(f"{exe.name}.{os.getpid()}.partial")
        subprocess.run([str(mpicc), "-O2", "-Wall", "-o", str(partial), str(source)], check=True)
        os.replace(partial, exe)
    return exe


def compile_test(source, variant="ompi"):
    """A program of the tests (`source`: from the repository's root, or an
    absolute path), built into build/tests/bin."""
    return compile_program(paths.ROOT / source, paths.ROOT / "build" / "tests" / "bin", variant)


def transport_mca(spec):
    name, _, variant = spec.partition(":")
    if name in ("sm", "tcp") and not variant:
        return {"btl": f"{name},self"}
    if name == "uct":
        # default: UCX's shared memory, sysv for messages, cma for puts (no
        # InfiniBand here)
        return {"btl": "uct,self", "btl_uct_memory_domains": variant or "sysv,cma"}
    if name == "ofi":
        # two-sided as well (ob1 needs send), one named provider
        return {"btl": "ofi,self", "btl_ofi_mode": 2,
                "btl_ofi_provider_include": variant.replace("+", ";")
                                            or os.environ.get("OFI_PROVIDER") or "sockets"}
    raise ValueError(f"unknown transport '{spec}' (expected one of {', '.join(TRANSPORTS)}, "
                     "uct and ofi optionally with :domains or :provider)")


def transport_arg(spec):
    """argparse type of a --transport option: a spec transport_mca accepts."""
    transport_mca(spec)
    return spec


def selected_transport():
    """The transport named by the BTL environment variable, or None."""
    return os.environ.get("BTL") or None


def with_transport(mca):
    """`mca` plus the selected transport's settings, unless it names a btl."""
    mca = dict(mca or {})
    if "btl" not in mca and selected_transport():
        mca = {**transport_mca(selected_transport()), **mca}
    return mca


def mpirun(np, program_args, mca=None, variant="ompi", extra=()):
    """mpirun --with-ft ulfm on this host, oversubscribed and unbound (the
    machines here have 2 cores), over the selected transport unless `mca`
    names a btl."""
    cmd = [str(paths.prefix(variant) / "bin" / "mpirun"), "--with-ft", "ulfm", "-np", str(np),
           "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    for key, value in with_transport(mca).items():
        cmd += ["--mca", key, str(value)]
    return cmd + list(extra) + [str(a) for a in program_args]


def inject_file():
    """A path no file has yet: a test creates it to tell its victims to fail."""
    handle, path = tempfile.mkstemp(prefix="btl_ft-inject-")
    os.close(handle)
    os.unlink(path)
    return path
