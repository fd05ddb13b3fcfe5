#!/usr/bin/env bash
# The ftsim binary end to end: --help exits 0 and documents the flags, a bad
# flag or value exits non-zero naming it, a small run prints one JSON object
# per configuration carrying the seed (the same again when re-run), and a run
# with a fault exits 1 and prints the seed that replays it.
set -u
ftsim=$1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$ftsim" --help > /tmp/ftsim_help.$$ 2>&1 || fail "--help exited $?"
grep -q -- "--propagator" /tmp/ftsim_help.$$ || fail "--help does not document --propagator"
rm -f /tmp/ftsim_help.$$

check_rejects() {
  local name=$1; shift
  local err status
  err=$("$ftsim" "$@" 2>&1 >/dev/null); status=$?
  [ "$status" -ne 0 ] || fail "'$*' exited 0"
  [ "$status" -eq 2 ] || fail "'$*' exited $status, not 2"
  echo "$err" | grep -q -- "$name" || fail "'$*' message does not name $name: $err"
}
check_rejects --bogus --nodes 64 --bogus
check_rejects --nodes --nodes zero
check_rejects --scenario --nodes 64 --scenario fast
check_rejects --propagator --nodes 64 --propagator flood
check_rejects --runs --nodes 64 --runs
check_rejects --failures --nodes 8 --failures 9
check_rejects --fault --nodes 64 --fault meteor
check_rejects --probe-width --nodes 64 --probe-width 9
check_rejects --quorum --nodes 64 --quorum maybe
check_rejects --runtime-confirms-ms --nodes 64 --runtime-confirms-ms x
check_rejects --resume-after --nodes 64 --fault crash --resume-after 10min
check_rejects --hierarchy --nodes 64 --hierarchy tree
for flag in --fault --resume-after --probe-width --quorum --runtime-confirms-ms --ppn --hierarchy; do
  "$ftsim" --help | grep -q -- "$flag " || fail "--help does not document $flag"
done

out=$("$ftsim" --nodes 32,64 --failures 1 --scenario lowlat --propagator hba --runs 2 --seed 12345)
[ $? -eq 0 ] || fail "clean run exited non-zero"
[ "$(echo "$out" | wc -l)" -eq 2 ] || fail "expected 2 JSON lines, got: $out"
[ "$(echo "$out" | grep -c '"seed":12345')" -eq 2 ] || fail "seed missing from a JSON line"
again=$("$ftsim" --nodes 32,64 --failures 1 --scenario lowlat --propagator hba --runs 2 --seed 12345)
[ "$out" = "$again" ] || fail "the same seed gave different output"

err=$("$ftsim" --nodes 32 --failures 0 --scenario lowlat --runs 1 --seed 5 --stall 2s 2>&1 >/dev/null)
status=$?
[ "$status" -eq 1 ] || fail "a run with a stalled process exited $status, not 1"
echo "$err" | grep -q "replay: --seed 5 --runs 1" || fail "violation without its seed: $err"

part=$("$ftsim" --nodes 64 --ppn 8 --fault partition --scenario lowlat --runs 1 --seed 3)
[ $? -eq 0 ] || fail "a partition with the quorum rule exited non-zero"
echo "$part" | grep -q '"fault":"partition".*"bound_violations":0' || fail "partition output: $part"
"$ftsim" --nodes 64 --ppn 8 --fault partition --quorum off --scenario lowlat --runs 1 --seed 3 >/dev/null 2>&1
[ $? -eq 1 ] || fail "a partition without the quorum rule did not exit 1"

two=$("$ftsim" --nodes 64 --ppn 8 --fault node-loss --hierarchy node --scenario lowlat --runs 1 --seed 3)
[ $? -eq 0 ] || fail "a node loss with two levels exited non-zero"
echo "$two" | grep -q '"hierarchy":"node".*"across_nodes":{"heartbeats_per_period":' || fail "two levels output: $two"

swim=$("$ftsim" --swim --nodes 1000 --runs 3 --seed 9)
echo "$swim" | grep -q '"mode":"swim".*"seed":9' || fail "swim output: $swim"

"$ftsim" --help | grep -q "ftsim allreduce" || fail "--help does not name the allreduce mode"
"$ftsim" allreduce --help | grep -q -- "--inactive-unknown" || fail "allreduce --help does not document --inactive-unknown"
check_rejects --radix allreduce --nodes 64 --radix one
check_rejects --nodes allreduce --runs 2
ar=$("$ftsim" allreduce --nodes 64,128 --inactive 2 --inactive-unknown --faults 0,3 --runs 3 --seed 7)
[ $? -eq 0 ] || fail "allreduce run exited non-zero"
[ "$(echo "$ar" | grep -c '"mode":"allreduce".*"violating_runs":0')" -eq 4 ] || fail "allreduce output: $ar"

[ "$failures" -eq 0 ] && echo "ftsim binary: all checks passed"
exit "$failures"
