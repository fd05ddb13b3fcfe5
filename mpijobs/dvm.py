"""A PRRTE DVM on this host (`prte`), for jobs started apart with `prun`
that then join with MPI_Comm_connect/accept, as two applications of one
allocation do. With ULFM on, as `mpirun --with-ft ulfm` has it: the jobs
are recoverable and told of failures, and mpi_ft_enable is set.

    with Dvm() as dvm:
        cmd = dvm.prun(4, [exe, ...], mca={...})

The ranks are children of the DVM's daemon, not of prun: leaving the
block ends the DVM (pterm) and kills its session, ranks included."""
import os
import subprocess
import tempfile
import time

from mpijobs import launch, mpicmd, paths


class Dvm:
    def __init__(self, variant="ompi", start_deadline_s=30):
        self.bin = paths.prefix(variant) / "bin"
        self.start_deadline_s = start_deadline_s
        self.proc = None
        self.uri_file = None

    def _root(self):
        return ["--allow-run-as-root"] if os.geteuid() == 0 else []

    def __enter__(self):
        handle, self.uri_file = tempfile.mkstemp(prefix="btl_ft-dvm-", suffix=".uri")
        os.close(handle)
        os.unlink(self.uri_file)
        self.proc = subprocess.Popen([str(self.bin / "prte"), *self._root(), "--report-uri", self.uri_file],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True, cwd=paths.RUN_DIR)
        end = time.monotonic() + self.start_deadline_s
        while not (os.path.exists(self.uri_file) and os.path.getsize(self.uri_file) > 0):
            if self.proc.poll() is not None or time.monotonic() > end:
                self.__exit__(None, None, None)
                raise RuntimeError(f"prte did not start within {self.start_deadline_s} s")
            time.sleep(0.05)
        return self

    def prun(self, np, program_args, mca=None):
        """A job of np ranks in this DVM, over the selected transport unless
        `mca` names a btl. prun takes no MCA options for the application:
        they go through its environment, set by env(1)."""
        settings = [f"OMPI_MCA_{k}={v}" for k, v in {"mpi_ft_enable": 1, **mpicmd.with_transport(mca)}.items()]
        return [str(self.bin / "prun"), *self._root(), "--dvm-uri", f"file:{self.uri_file}",
                "--runtime-options", "recoverable,notifyerrors", "--map-by", ":OVERSUBSCRIBE",
                "--bind-to", "none", "-n", str(np), "env", *settings, *[str(a) for a in program_args]]

    def __exit__(self, *exc):
        if self.proc is not None:
            if self.proc.poll() is None and os.path.exists(self.uri_file):
                try:
                    subprocess.run([str(self.bin / "pterm"), *self._root(), "--dvm-uri", f"file:{self.uri_file}"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20, check=False)
                except subprocess.TimeoutExpired:
                    pass   # the session kill below ends it
            launch.kill_session(self.proc.pid)
            self.proc.wait()
        if self.uri_file and os.path.exists(self.uri_file):
            os.unlink(self.uri_file)
        return False
