#!/usr/bin/env bash
# Removes every emulated node whatever N setup.sh was given, and everything
# setup.sh made on the host (see remove_cluster in common.sh). Idempotent.
set -uo pipefail
source "$(dirname "$0")/common.sh"
((EUID == 0)) || die_unavailable "teardown needs root"
lock_cluster
# wait for a test run on the nodes to end (nodes.py RUN_LOCK)
mkdir -p /run/lock
exec 8>> /run/lock/btlft-netns.lock
flock -w 300 8 || { echo "btlft netns: a test run held the nodes for 300 s" >&2; exit 1; }
remove_cluster
status=$?
# the lock file goes too: a run waiting on it still gets its lock, then runs setup
rm -f /run/lock/btlft-netns.lock
exit $status
