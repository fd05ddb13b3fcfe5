"""The installed libmpi offers applications nothing of the detector core:
no btl_ft_* function and no C++ symbol (the core is C++ linked into a C
library; a C++ application that bound to our std:: template instances or
our C ABI would break with the next build). The shim calls the core inside
libmpi, so the core must still be linked in: libmpi needs libstdc++."""
import subprocess
import sys
from mpijobs import paths



def symbols(library, *flags):
    out = subprocess.run(["nm", *flags, str(library)], capture_output=True, text=True, check=True)
    return [line.split()[-1] for line in out.stdout.splitlines() if len(line.split()) >= 2]


def main():
    library = paths.prefix() / "lib" / "libmpi.so"
    exported = symbols(library, "-D", "--defined-only")
    leaked = [name for name in exported if name.startswith("_Z") or "btl_ft" in name]
    needed = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True,
                            check=True).stdout
    problems = []
    if "MPI_Init" not in exported:
        problems.append("MPI_Init is not exported: the symbol table was not read")
    if leaked:
        problems.append(f"{len(leaked)} symbols of the core are exported, e.g. {leaked[:5]}")
    if "libstdc++" not in needed:
        problems.append("libmpi does not need libstdc++: the core is not linked in")
    print(f"{library}: {len(exported)} exported symbols, {len(leaked)} of the core")
    for problem in problems:
        print("FAIL", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
