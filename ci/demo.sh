#!/usr/bin/env bash
# `make demo`: see tests/mpi/demo.py.
source "$(dirname "$0")/common.sh"
exec python3 "$BTL_FT_ROOT/tests/mpi/demo.py" "$@"
