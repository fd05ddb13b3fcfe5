"""Stops the launcher of a job while a crash happens, for crash_notice's
--hold-file: once the ranks wait at the hold file, SIGSTOP the launcher (on
one host also PRRTE's daemon, which reaps the ranks and tells the others),
remove the file so that the crash goes ahead, and SIGCONT the launcher
resume_after_s after the kill. Until then only what the processes see for
themselves can tell them of the crash: the node watch
(mpi_ft_detector_watch_node), or the heartbeat timeout."""
import os
import signal
import threading
import time
from pathlib import Path


class DaemonStopper(threading.Thread):
    def __init__(self, hold, inject, resume_after_s):
        super().__init__(daemon=True)
        self.hold, self.inject, self.resume_after_s = Path(hold), Path(inject), resume_after_s
        self.note = None  # what went wrong, if anything
        self.job_ended = threading.Event()  # set by the caller once mpirun returned

    def finish(self):
        """After mpirun returned: stop waiting for what will not come, resume, join."""
        self.job_ended.set()
        self.join()

    def launcher(self):
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                args = cmdline.read_bytes().split(b"\0")
            except OSError:
                continue
            if Path(args[0].decode()).name in ("mpirun", "prterun") and str(self.hold).encode() in args:
                return int(cmdline.parent.name)
        return None

    def run(self):
        pid = None
        try:
            if not self.wait_for(self.hold.exists, 60) or (pid := self.launcher()) is None:
                self.note = "the ranks never reached the hold, or no launcher found"
                return
            os.kill(pid, signal.SIGSTOP)
            self.hold.unlink()
            if not self.wait_for(self.inject.exists, 30):
                self.note = "no crash while the daemon was stopped"
                return
            self.job_ended.wait(self.resume_after_s)
        finally:
            self.hold.unlink(missing_ok=True)
            if pid is not None:
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass  # the job's bound passed and it was killed

    def wait_for(self, condition, timeout_s):
        """False if timeout_s passed or the job ended first."""
        end = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > end or self.job_ended.is_set():
                return False
            time.sleep(0.005)
        return True
