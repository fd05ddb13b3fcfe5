"""The shim's files call each other only as comm_ft_detector.h's rule says:
comm_ft_detector.c, comm_ft_detector_join.c and comm_ft_detector_join_plan.c
wire the others together;
they call none of each other,
except the driver its queues (and its two files each other), the UCX
transport its flag (and its three files each other), the witness its lifelines, the conclusions the union,
and anyone the log; the
survivor allreduce's two files call none of them but the parameters' text,
which the detector's parameters read too. Read from the undefined
ompi_comm_ft_* symbols of each file's object in the patched build tree, so a
call the rule forbids fails here whatever the code looks like."""
import subprocess
import sys
from mpijobs import paths


OBJECTS = paths.ROOT / "build" / "openmpi-patched" / "ompi" / "communicator" / "ft" / ".libs"
ENTRIES = ("comm_ft_detector", "comm_ft_detector_join", "comm_ft_detector_join_plan")
# file -> prefixes of the shim's functions it may call (its own are defined, not undefined)
ALLOWED = {
    # the driver's two files call each other (comm_ft_detector_driver_internal.h)
    "comm_ft_detector_driver": ("ompi_comm_ft_driver_loop_", "ompi_comm_ft_queues_",
                                "ompi_comm_ft_log"),
    "comm_ft_detector_driver_loop": ("ompi_comm_ft_driver_step_locked", "ompi_comm_ft_driver_state",
                                     "ompi_comm_ft_queues_"),
    "comm_ft_detector_queues": ("ompi_comm_ft_log",),
    "comm_ft_detector_params": ("ompi_comm_ft_log", "ompi_comm_ft_param_text"),
    # plain C: the text a user wrote for a numeric MCA variable
    "comm_ft_param_text": (),
    # the transport's three files call each other (comm_ft_detector_ucx_internal.h)
    "comm_ft_detector_ucx": ("ompi_comm_ft_ucx_", "ompi_comm_ft_flag_", "ompi_comm_ft_log"),
    "comm_ft_detector_ucx_addresses": ("ompi_comm_ft_ucx_",),
    "comm_ft_detector_ucx_path": ("ompi_comm_ft_ucx_", "ompi_comm_ft_flag_", "ompi_comm_ft_log"),
    "comm_ft_detector_flag": (),
    "comm_ft_detector_btl": ("ompi_comm_ft_log",),
    "comm_ft_detector_witness": ("ompi_comm_ft_lifeline_", "ompi_comm_ft_proc_stat_",
                                 "ompi_comm_ft_log"),
    # plain C and Linux, built alone by their unit tests
    "comm_ft_detector_lifeline": ("ompi_comm_ft_proc_stat_",),
    "comm_ft_detector_proc_stat": (),
    "comm_ft_detector_log": (),
    "comm_ft_detector_union": (),
    # names a union rank as users know the process
    "comm_ft_detector_conclusions": ("ompi_comm_ft_union_", "ompi_comm_ft_log"),
    # the survivor allreduce learns failures from ULFM, not from the detector
    "comm_ft_survivors": (),
    "comm_ft_survivors_params": ("ompi_comm_ft_param_text",),
}


def undefined_shim_calls(obj):
    out = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True, check=True).stdout
    return sorted({line.split()[-1] for line in out.splitlines()
                   if line.split() and line.split()[-1].startswith("ompi_comm_ft_")})


def object_of(name):
    found = sorted(OBJECTS.glob(f"*{name}.o"))
    return found[0] if found else None


def main():
    problems = []
    for name, allowed in ALLOWED.items():
        obj = object_of(name)
        if obj is None:
            problems.append(f"no object file for {name}.c under {OBJECTS} (build with: make ompi)")
            continue
        calls = undefined_shim_calls(obj)
        forbidden = [c for c in calls if not c.startswith(allowed)]
        print(f"{name}.c calls {', '.join(calls) or 'no other file'}")
        if forbidden:
            problems.append(f"{name}.c calls {', '.join(forbidden)}: only "
                            f"{', '.join(e + '.c' for e in ENTRIES)} may wire the files together")
    for name in ENTRIES:
        entry = object_of(name)
        if entry is None or not undefined_shim_calls(entry):
            problems.append(f"{name}.c calls no other file of the shim: the symbols were not read")
    for problem in problems:
        print("FAIL", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
