#!/usr/bin/env bash
# Reproduces the ftsim numbers quoted against seed 002 (Section 4): first
# failure known by all at about delta - eta/2, stabilisation with the most
# failures Theorem 1 allows (random, ring-consecutive, spread over 30 s),
# notice messages per process per notice for each overlay, one-port,
# exponential failures, and SWIM probing (Figures 6 and 7). One JSON line per
# configuration, all from seed 1, into benchmarks/results/ftsim_paper.jsonl.
# Everything else is libmpi's defaults (ring order node, probing width 8,
# quorum, witnesses: btl_ft.h), one process per node as in seed 002; each
# line carries the flags. Then seed 003's Fig. 4 (fig4_runs.sh).
# About 10 minutes on one core; sizes above 2^16 are left to run_scale.py.
set -euo pipefail
ftsim=${FTSIM:-build/core/sim/ftsim}
out=${1:-benchmarks/results/ftsim_paper.jsonl}
mkdir -p "$(dirname "$out")"
: > "$out"
run() { "$ftsim" --seed 1 "$@" >> "$out"; }

run --nodes 2^10 --failures 1 --scenario lownoise,lowlat --runs 200
run --nodes 2^12 --failures 1 --scenario lownoise,lowlat --runs 100
run --nodes 2^14 --failures 1 --scenario lownoise,lowlat --runs 20
run --nodes 2^16 --failures 1 --scenario lownoise,lowlat --runs 5
run --nodes 2^10,2^16 --failures 1 --scenario lowlat --propagator hba,bmg,chord --runs 3
run --nodes 2^10 --failures max --scenario lownoise,lowlat --runs 50
run --nodes 2^12 --failures max --scenario lownoise,lowlat --runs 20
run --nodes 2^14 --failures max --scenario lownoise,lowlat --runs 3
run --nodes 2^16 --failures max --scenario lowlat --runs 1
run --nodes 2^10 --failures max --failure-placement consecutive --scenario lownoise,lowlat --runs 20
run --nodes 2^10 --failures max --window 30s --scenario lownoise --runs 50
run --nodes 2^10,2^12,2^14,2^16 --failures 1 --scenario lowlat --one-port --runs 3
run --nodes 2^14,2^16 --failures 20 --mtbf 1y --scenario lownoise --runs 5
run --swim --nodes 20000,100000 --runs 10000
echo "wrote $(wc -l < "$out") configurations to $out"
FTSIM=$ftsim "$(dirname "$0")/fig4_runs.sh" "$(dirname "$out")/ftsim_fig4.jsonl"
