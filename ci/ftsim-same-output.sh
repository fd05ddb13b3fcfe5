#!/usr/bin/env bash
# Proves that a change to the core left behaviour alone: builds ftsim at
# BASE (default: main's merge base with HEAD) in a temporary worktree and at
# the working tree, runs both on one fixed set of seeds (the paper tables at
# reduced sizes, seed 003's Fig. 4, crash, hang, node-loss and partition
# runs, a resumed hang, runtime confirmations, the node watch, stalls and
# dropped messages), and compares the outputs byte for byte. About 3
# minutes with a warm ccache. Exit 0 when identical; otherwise the first
# differing lines are printed. --ignore KEY leaves a top-level key of the
# JSON lines out of the comparison: one that the change adds to every
# line (a new measure), so that the rest can still be compared byte for byte.
#
#   ci/ftsim-same-output.sh [--ignore KEY]... [BASE]
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ignored=()
while [[ ${1:-} == --ignore ]]; do
    ignored+=("$2")
    shift 2
done
base=${1:-$(git -C "$BTL_FT_ROOT" merge-base HEAD main)}
work=$(mktemp -d)
trap 'git -C "$BTL_FT_ROOT" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

build_ftsim() {  # source dir, build dir
    cmake -S "$1/btl_ft" -B "$2" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache > /dev/null
    cmake --build "$2" --target ftsim -j "$(nproc)" > /dev/null
}

# Every configuration prints one JSON line; a violation (expected for some:
# quorum off, stalls, drops) adds lines on stderr and an exit status, all kept.
run_set() {  # ftsim, output
    local ftsim=$1 out=$2
    : > "$out"
    run() { "$ftsim" --seed 1 "$@" >> "$out" 2>&1 || echo "exit $?" >> "$out"; }
    run --nodes 2^10 --failures 1 --scenario lownoise,lowlat --runs 50
    run --nodes 2^12 --failures 1 --scenario lownoise,lowlat --runs 10
    run --nodes 2^10 --failures 1 --scenario lowlat --propagator hba,bmg,chord --runs 3
    run --nodes 2^10 --failures max --scenario lownoise,lowlat --runs 20
    run --nodes 2^12 --failures max --scenario lownoise,lowlat --runs 5
    run --nodes 2^10 --failures max --failure-placement consecutive --scenario lownoise,lowlat --runs 10
    run --nodes 2^10 --failures max --window 30s --scenario lownoise --runs 20
    run --nodes 2^10,2^12 --failures 1 --scenario lowlat --one-port --runs 3
    run --nodes 2^14 --failures 20 --mtbf 1y --scenario lownoise --runs 2
    run --swim --nodes 20000 --runs 1000
    local order where fault
    for order in rank shuffle node; do
        for where in random consecutive-ranks; do
            run --runs 30 --nodes 48 --ppn 16 --failures 1,2,3,4,5 --scenario lowlat \
                --propagator hba,bmg,chord --ring-order "$order" --failure-placement "$where"
        done
    done
    for fault in crash hang node-loss partition; do
        run --nodes 2^14 --ppn 64 --scenario lowlat --runs 1 --fault "$fault"
        run --nodes 2^10 --ppn 16 --scenario lowlat --runs 5 --fault "$fault" --failures 1,3
        run --nodes 2^10 --ppn 16 --scenario lowlat --runs 5 --fault "$fault" --quorum off --witness off --probe-width 1
    done
    run --nodes 2^10 --ppn 16 --scenario lowlat --runs 5 --fault hang --resume-after 3s
    run --nodes 2^10 --ppn 16 --scenario lowlat --runs 5 --fault crash --runtime-confirms-ms 5 --failures 3
    run --nodes 2^10 --ppn 16 --scenario lowlat --runs 5 --fault crash --node-watch-ms 2 --failures 3
    run --nodes 256 --ppn 16 --scenario lowlat --runs 5 --stall 2s --failures 1
    run --nodes 256 --scenario lowlat --runs 5 --stall 1.5s --failures 1
    run --nodes 256 --scenario lowlat --runs 5 --drop-messages 0.01 --failures 2
}

step "ftsim at $(git -C "$BTL_FT_ROOT" rev-parse --short "$base") and at the working tree"
git -C "$BTL_FT_ROOT" worktree add --detach "$work/base" "$base" > /dev/null 2>&1
build_ftsim "$work/base" "$work/build-base"
build_ftsim "$BTL_FT_ROOT" "$work/build-here"
run_set "$work/build-base/sim/ftsim" "$work/base.out" &
run_set "$work/build-here/sim/ftsim" "$work/here.out"
wait $!
if (( ${#ignored[@]} )); then
    for out in "$work/base.out" "$work/here.out"; do
        python3 - "$out" "${ignored[@]}" <<'PY'
import json, sys
path, keys = sys.argv[1], sys.argv[2:]
lines = []
for line in open(path):
    if line.startswith("{"):
        record = json.loads(line)
        for key in keys:
            record.pop(key, None)
        line = json.dumps(record, separators=(",", ":")) + "\n"
    lines.append(line)
open(path, "w").writelines(lines)
PY
    done
fi
if cmp -s "$work/base.out" "$work/here.out"; then
    echo "identical: $(grep -c '^{' "$work/here.out") configurations, $(wc -c < "$work/here.out") bytes"
    exit 0
fi
echo "ftsim output differs from $base:" >&2
diff "$work/base.out" "$work/here.out" | head -20 >&2
exit 1
