#!/usr/bin/env bash
# `make demo`: see tests/mpi/demo.py.
source "$(dirname "$0")/common.sh"
PYTHONPATH=$BTL_FT_ROOT${PYTHONPATH:+:$PYTHONPATH} exec python3 "$BTL_FT_ROOT/tests/mpi/demo.py" "$@"
