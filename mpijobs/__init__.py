"""Running MPI jobs of this repository, for its tests and its benchmarks alike.

    paths   where the repository and the Open MPI builds are
    launch  one run type: launch a command in a session of its own, bound it
            in time, read the JSON lines its ranks print, reap its session
    mpicmd  the mpirun command line (transports, MCA), compiling a program
    nodes   emulated nodes (network namespaces) and the jobs that span them
    daemon_stopper  stops a runtime daemon (SIGSTOP) while its ranks run
    checks  a test's verdict on a run, and the records it keeps

Import it with the repository's root on PYTHONPATH, as ctest, `make` and
benchmarks/run_all.py do: `PYTHONPATH=. python3 benchmarks/crash/run_crash.py`.
"""
