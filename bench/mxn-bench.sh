#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# M x N on the emulated cluster (issue 19): an N x N float64 field from P producer hosts to Q
# consumer hosts that each need one block of a grid over it (Q = 4: a quarter), one rank per
# host unless --ppn says otherwise, Open MPI (xfer-mxnbench). The ways:
#   select  the consumers declare their blocks: each receives its own
#   all     the consumers receive the whole field and keep their block
#   h5      the producers write a parallel HDF5 file (on the machine's disk, shared by every
#           namespace), the consumers read their blocks back
#   mixed   select, plus a second field (N/2 x N) every consumer takes whole: the hybrid path
#   mixed_direct  the same, everything through the direct schedule (XFER_RT_HYBRID=0)
#   pairs   consumers 2i and 2i+1 select the same row slab; with --ppn 2 they share a host and
#           the direct schedule is node-staged
#   pairs_nostage  the same with node staging off (XFER_RT_NODE_STAGE=0)
# --ppn K places K ranks on each host (block placement: producers first).
# With --compute-ms C, each stream way also runs twice with producers that compute C ms after
# each step's puts (docs/runtime.md, Progress): MPI_THREAD_SINGLE (the step moves inside their
# libxfer calls only: WAY-cC-calls) and MPI_THREAD_MULTIPLE (libxfer's progress thread moves it:
# WAY-cC-thread). The floor of such a step is max(C, the way's transfer alone).
# One job per run (peak RSS is per process), REPEAT rounds of every run interleaved, medians
# per job of STEPS steps. Output: CSV (xfer-mxnbench's columns, plus the repeat) in
# OUT/mxn.csv.
#
#   sudo bash bench/mxn-bench.sh [--p 2] [--q 4] [--n 4096] [--steps 6] [--ways select,all,h5,mixed,mixed_direct]
#                                [--compute-ms C] [--repeat 3] [--rate 200mbit] [--ppn 1]
#                                [--out bench/results/mxn-YYYYMMDD]
set -Eeuo pipefail
cd "$(dirname "$0")/.."
P=2 Q=4 N=4096 STEPS=6 WAYS=select,all,h5 C=0 REPEAT=3 RATE=200mbit PPN=1
OUT=bench/results/mxn-$(date +%Y%m%d)
while [ $# -gt 0 ]; do
    case $1 in
    --p) P=$2; shift 2 ;;
    --q) Q=$2; shift 2 ;;
    --n) N=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    --ways) WAYS=$2; shift 2 ;;
    --compute-ms) C=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --ppn) PPN=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "usage: $0 [--p P] [--q Q] [--n N] [--steps S] [--ways LIST] [--compute-ms C]" \
            "[--repeat R] [--rate RATE] [--ppn K] [--out DIR]" >&2
       exit 2 ;;
    esac
done
BIN=$PWD/build/openmpi/adapters/hdf5/xfer-mxnbench
[ -x "$BIN" ] || { echo "build it first: bash scripts/build.sh openmpi" >&2; exit 2; }
mkdir -p "$OUT"
work=$(mktemp -d /tmp/xfer-mxnbench.XXXXXX)
chmod 777 "$work"
trap 'bash bench/emucluster/emucluster.sh down >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
np=$((P + Q))
hosts=$(((np + PPN - 1) / PPN))
bash bench/emucluster/emucluster.sh up --hosts "$hosts" --rate "$RATE" --ranks-per-host "$PPN"
csv=$OUT/mxn.csv
echo "repeat,way,p,q,n,steps,median_ms,min_ms,max_ms,bytes_per_consumer,peak_rss_producer_kib,peak_rss_consumer_kib,copied_per_byte_producer,copied_per_byte_consumer" >"$csv"
run() { # $1: repeat, $2: way, rest: more xfer-mxnbench options
    local r=$1 way=$2 line
    shift 2
    line=$(bash bench/emucluster/emucluster.sh run --mpi openmpi --ppn "$PPN" --np "$np" -- \
        "$BIN" --p "$P" --n "$N" --steps "$STEPS" --ways "$way" --dir "$work" "$@" |
        grep "^$way[,-]")
    echo "$r,$line" | tee -a "$csv"
}
for r in $(seq 1 "$REPEAT"); do
    for way in ${WAYS//,/ }; do
        run "$r" "$way"
        if [ "$C" -gt 0 ] && [ "$way" != h5 ]; then
            run "$r" "$way" --compute-ms "$C" --mpi-thread single
            run "$r" "$way" --compute-ms "$C" --mpi-thread multiple
        fi
    done
done
echo "results: $csv"
