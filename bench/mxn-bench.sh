#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# M x N on the emulated cluster (issue 19): an N x N float64 field from P producer hosts to 4
# consumer hosts that each need a quarter (a 2 x 2 block grid), one rank per host, Open MPI:
#   select  the consumers declare their blocks: each receives its quarter
#   all     the consumers receive the whole field and keep their quarter
#   h5      the producers write a parallel HDF5 file (on the machine's disk, shared by every
#           namespace), the consumers read their quarters back
# One job per way (peak RSS is per process), REPEAT jobs per way interleaved, medians per job
# of STEPS steps. Output: CSV (xfer-mxnbench's columns, plus the repeat) in OUT/mxn.csv.
#
#   sudo bash bench/mxn-bench.sh [--p 2] [--n 4096] [--steps 6] [--repeat 3] [--rate 200mbit]
#                                [--out bench/results/mxn-YYYYMMDD]
set -Eeuo pipefail
cd "$(dirname "$0")/.."
P=2 N=4096 STEPS=6 REPEAT=3 RATE=200mbit OUT=bench/results/mxn-$(date +%Y%m%d)
while [ $# -gt 0 ]; do
    case $1 in
    --p) P=$2; shift 2 ;;
    --n) N=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "usage: $0 [--p P] [--n N] [--steps S] [--repeat R] [--rate RATE] [--out DIR]" >&2
       exit 2 ;;
    esac
done
BIN=$PWD/build/openmpi/adapters/hdf5/xfer-mxnbench
[ -x "$BIN" ] || { echo "build it first: bash scripts/build.sh openmpi" >&2; exit 2; }
mkdir -p "$OUT"
work=$(mktemp -d /tmp/xfer-mxnbench.XXXXXX)
chmod 777 "$work"
trap 'bash bench/emucluster/emucluster.sh down >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
hosts=$((P + 4))
bash bench/emucluster/emucluster.sh up --hosts "$hosts" --rate "$RATE" --ranks-per-host 1
csv=$OUT/mxn.csv
echo "repeat,way,p,q,n,steps,median_ms,min_ms,max_ms,bytes_per_consumer,peak_rss_producer_kib,peak_rss_consumer_kib" >"$csv"
for r in $(seq 1 "$REPEAT"); do
    for way in select all h5; do
        line=$(bash bench/emucluster/emucluster.sh run --mpi openmpi --ppn 1 --np "$hosts" -- \
            "$BIN" --p "$P" --n "$N" --steps "$STEPS" --ways "$way" --dir "$work" | grep "^$way,")
        echo "$r,$line" | tee -a "$csv"
    done
done
echo "results: $csv"
