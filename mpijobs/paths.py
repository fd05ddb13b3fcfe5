"""Where things are: the repository, and the Open MPI installs it builds."""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Ranks that die write crash droppings (libinfinipath's *.btr) into their
# working directory: jobs run here, never in the source tree.
RUN_DIR = ROOT / "build" / "run"


def prefix(variant="ompi"):
    """The install under test: BTL_FT_OMPI_PREFIX (ctest sets it), else
    build/<variant> (ompi: patched, ompi-stock: unpatched)."""
    return Path(os.environ.get("BTL_FT_OMPI_PREFIX", ROOT / "build" / variant))
