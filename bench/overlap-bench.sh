#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Who moves a step while the producer computes (docs/runtime.md, Progress), on the emulated
# cluster: an N x N float64 field from P producer hosts to Q consumer hosts that each select
# their block, one rank per host, Open MPI. Per repeat, three jobs:
#   select              the transfer alone, steps framed by barriers (its median is T)
#   select-cC-calls     the producers compute C ms after each step's puts (MPI_THREAD_SINGLE:
#                       the step moves inside their libxfer calls only)
#   select-cC-thread    the same with MPI_THREAD_MULTIPLE: libxfer's progress thread moves it
# The floor of a computing step is max(C, T); without overlap a step costs about C + T.
# Output: CSV (xfer-mxnbench's columns, plus the repeat) in OUT/overlap.csv.
#
#   sudo bash bench/overlap-bench.sh [--p 2] [--q 2] [--n 2048] [--steps 5] [--compute-ms 700]
#                                    [--repeat 3] [--rate 200mbit] [--out DIR]
set -Eeuo pipefail
cd "$(dirname "$0")/.."
P=2 Q=2 N=2048 STEPS=5 C=700 REPEAT=3 RATE=200mbit OUT=bench/results/overlap-$(date +%Y%m%d)
while [ $# -gt 0 ]; do
    case $1 in
    --p) P=$2; shift 2 ;;
    --q) Q=$2; shift 2 ;;
    --n) N=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    --compute-ms) C=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "usage: $0 [--p P] [--q Q] [--n N] [--steps S] [--compute-ms C] [--repeat R]" \
            "[--rate RATE] [--out DIR]" >&2
       exit 2 ;;
    esac
done
BIN=$PWD/build/openmpi/adapters/hdf5/xfer-mxnbench
[ -x "$BIN" ] || { echo "build it first: bash scripts/build.sh openmpi" >&2; exit 2; }
mkdir -p "$OUT"
work=$(mktemp -d /tmp/xfer-overlap.XXXXXX)
chmod 777 "$work"
trap 'bash bench/emucluster/emucluster.sh down >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
hosts=$((P + Q))
bash bench/emucluster/emucluster.sh up --hosts "$hosts" --rate "$RATE" --ranks-per-host 1
csv=$OUT/overlap.csv
echo "repeat,way,p,q,n,steps,median_ms,min_ms,max_ms,bytes_per_consumer,peak_rss_producer_kib,peak_rss_consumer_kib" >"$csv"
run() { # $1: repeat, rest: xfer-mxnbench options
    local r=$1 line
    shift
    line=$(bash bench/emucluster/emucluster.sh run --mpi openmpi --ppn 1 --np "$hosts" -- \
        "$BIN" --p "$P" --n "$N" --steps "$STEPS" --ways select --dir "$work" "$@" |
        grep "^select")
    echo "$r,$line" | tee -a "$csv"
}
for r in $(seq 1 "$REPEAT"); do
    run "$r"
    run "$r" --compute-ms "$C" --mpi-thread single
    run "$r" --compute-ms "$C" --mpi-thread multiple
done
echo "results: $csv"
