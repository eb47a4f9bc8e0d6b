#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The overhead of the Python binding's get against C's xfer_get (docs/bindings.md): a producer
# (tools/xfer-getbench.c) puts one uint8 dataset of B bytes per step; the consumer, in C
# (xfer-getbench) or Python (bench/getbench.py: into a given array, and into a new one), begins
# each step and times the get alone. One MPMD job of 1 + 1 ranks per way, the ways interleaved,
# --repeat jobs each; prints the medians of each job (min-max over the jobs).
#   bash bench/get-bench.sh [--flavour mpich|openmpi] [--repeat 3] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
FLAVOUR=mpich REPEAT=3 OUT=bench/results/getbench-$(date +%Y%m%d)
while [ $# -gt 0 ]; do
    case $1 in
    --flavour) FLAVOUR=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "usage: $0 [--flavour mpich|openmpi] [--repeat R] [--out DIR]" >&2; exit 2 ;;
    esac
done
B=build/$FLAVOUR
[ -x "$B/tools/xfer-getbench" ] && [ -d "$B/python/xfer" ] ||
    { echo "build it first: bash scripts/build.sh $FLAVOUR" >&2; exit 2; }
PY=$(sed -n 's/^XFER_PYTHON_EXECUTABLE:INTERNAL=//p' "$B/CMakeCache.txt")
export PYTHONPATH=$PWD/$B/python OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT"
work=$(mktemp -d /tmp/xfer-getbench.XXXXXX)
trap 'rm -rf "$work"' EXIT
csv=$OUT/get.csv
echo "repeat,lang,call,bytes,steps,min_us,median_us,max_us" >"$csv"
for r in $(seq 1 "$REPEAT"); do
    for bytes in 1024 67108864; do
        steps=$((bytes > 1048576 ? 21 : 401))
        cat >"$work/wf.yaml" <<YAML
workflow: getbench
launch: mpmd
components:
  - {name: prod, nprocs: 1, cmd: [x]}
  - {name: cons, nprocs: 1, cmd: [x]}
channels:
  - {name: c, from: prod, to: cons, max_in_flight_steps: 2,
     datasets: [{name: x, type: uint8, dims: [$bytes]}]}
YAML
        export XFER_CONFIG=$work/wf.yaml
        for cons in c python; do
            if [ "$cons" = c ]; then
                cmd=("$B/tools/xfer-getbench" --steps "$steps")
            else
                cmd=("$PY" bench/getbench.py --steps "$((steps * 2 - 1))")
            fi
            "mpiexec.$FLAVOUR" -n 1 "$B/tools/xfer-getbench" --steps "${cmd[-1]}" : \
                -n 1 "${cmd[@]}" | sed "s/^/$r,/" | tee -a "$csv"
        done
    done
done
echo "results: $csv"
