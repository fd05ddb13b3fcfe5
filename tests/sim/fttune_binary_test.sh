#!/usr/bin/env bash
# The fttune binary end to end: the seed's 22 s at 256,000 nodes and a
# 20-year MTBF with a command line to start from, a bad value exiting 2 and
# naming its option, no safe and accurate delta exiting 1, and --figure
# printing one JSON line per point of Figure 3.
set -u
fttune=$1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

out=$("$fttune" --nodes 256000 --mtbf 20y) || fail "the seed's case exited $?"
echo "$out" | grep -q "largest safe delta: 21.9[0-9] s" || fail "not the seed's 22 s: $out"
echo "$out" | grep -q -- "--mca mpi_ft_detector_timeout 1 --mca mpi_ft_detector_period 0.1" \
  || fail "no command line to start from: $out"

# processes beside nodes: the bound still counts the nodes
out=$("$fttune" --nodes 256000 --processes 16384000 --mtbf 20y) || fail "64 processes a node exited $?"
echo "$out" | grep -q "largest safe delta: 21.9[0-9] s" || fail "processes changed the nodes' bound: $out"
echo "$out" | grep -q "16384000 processes (64 a node)" || fail "processes per node not said: $out"

check_rejects() {
  local name=$1; shift
  local err status
  err=$("$fttune" "$@" 2>&1 >/dev/null); status=$?
  [ "$status" -eq 2 ] || fail "'$*' exited $status, not 2"
  echo "$err" | grep -q -- "$name" || fail "'$*' message does not name $name"
}
check_rejects --mtbf --nodes 1024 --mtbf soon
check_rejects --risk --nodes 1024 --mtbf 1y --risk 2
check_rejects --nodes --nodes 1 --mtbf 1y
check_rejects --processes --nodes 1024 --processes 512 --mtbf 1y
check_rejects --bogus --nodes 1024 --mtbf 1y --bogus 3

# a tiny MTBF at scale: nothing is both safe and as slow as 5 s
"$fttune" --nodes 2^20 --mtbf 1h --accurate-from 5s > /dev/null; status=$?
[ "$status" -eq 1 ] || fail "an impossible platform exited $status, not 1"

lines=$("$fttune" --figure | grep -c '"largest_delta_s"')
[ "$lines" -eq 50 ] || fail "--figure printed $lines points, not 50"

[ "$failures" -eq 0 ] && echo "ok: fttune" || exit 1
