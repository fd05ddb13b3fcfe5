#!/usr/bin/env bash
# Seed 003, Fig. 4: 48 processes on 3 nodes of 16, 1 to 5 simultaneous
# failures; time until every process knows every failure, and notice
# messages per process, for each overlay (left plot) and for the shuffled
# ring against rank order (right plot), with failures on random ranks or on
# consecutive ranks (seed 003's "sequential" failures). Our `node` order,
# libmpi's default, runs beside them. Everything else is libmpi's defaults
# (probing, quorum, witnesses), eta 0.1 s, delta = 10 eta as in seed 003.
# One JSON line per configuration, all from seed 1, 30 runs each as in the
# paper, into benchmarks/results/ftsim_fig4.jsonl. About a minute.
set -euo pipefail
ftsim=${FTSIM:-build/core/sim/ftsim}
out=${1:-benchmarks/results/ftsim_fig4.jsonl}
mkdir -p "$(dirname "$out")"
: > "$out"
for order in rank shuffle node; do
  for where in random consecutive-ranks; do
    "$ftsim" --seed 1 --runs 30 --nodes 48 --ppn 16 --failures 1,2,3,4,5 --scenario lowlat \
      --propagator hba,bmg,chord --ring-order "$order" --failure-placement "$where" >> "$out"
  done
done
echo "wrote $(wc -l < "$out") configurations to $out"
