#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Isomorphic neighbourhood collectives against MPI_Neighbor_* (issue 8): xfer-isobench on both
# MPI flavours, shared memory, 2-D Moore on 4 processes (2x2) and 3-D Moore on 8 (2x2x2),
# all-to-all and allgather, blocks of 8 B to 64 KiB. With --emu (root, Open MPI): the same on the
# emulated cluster, 8 hosts of one rank each (4x2 and 2x2x2), links of 1 Gbit/s, over
# TCP between network namespaces (no added delay: this kernel has no netem).
# Output: stdout and bench/results/iso-<date>.md (tables) plus .csv.
#
#   bash bench/iso-bench.sh [--reps N] [--flavours "mpich openmpi"] [--emu]
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

reps=200
flavours="mpich openmpi"
emu=0
sizes=8,64,512,4096,65536
while [ $# -gt 0 ]; do
    case $1 in
    --reps) reps=$2; shift 2 ;;
    --flavours) flavours=$2; shift 2 ;;
    --emu) emu=1; shift ;;
    --sizes) sizes=$2; shift 2 ;;
    *) echo "usage: iso-bench.sh [--reps N] [--flavours \"mpich openmpi\"] [--emu] [--sizes a,b]" >&2; exit 2 ;;
    esac
done

stamp=$(date +%Y%m%d-%H%M)
mkdir -p bench/results
out=bench/results/iso-$stamp.md
csv=bench/results/iso-$stamp.csv
: > "$csv"

# XFER_ALPHA and XFER_BETA from a ping-pong under the same launcher, so that auto decides as
# it would on this transport.
measure() { # flavour launcher...
    local fl=$1 ab
    shift
    ab=$("$@" "build/$fl/tools/xfer-sched" measure 2>/dev/null | grep -- '--alpha' || true)
    XFER_ALPHA=$(echo "$ab" | awk '{print $2}')
    XFER_BETA=$(echo "$ab" | awk '{print $4}')
    export XFER_ALPHA XFER_BETA
    echo
    echo "xfer-sched measure ($fl${EMU_NOTE:-}): ${ab:-failed, auto uses the defaults}"
}

run() { # flavour np d dims op [launcher...]
    local fl=$1 np=$2 d=$3 dims=$4 op=$5
    shift 5
    local bin=build/$fl/tools/xfer-isobench tmp
    [ -x "$bin" ] || { echo "iso-bench: build first: scripts/build.sh $fl" >&2; exit 1; }
    tmp=$(mktemp)
    echo
    echo "### $fl, $np processes, $d-D Moore r=1 ($dims), $op${EMU_NOTE:-}"
    echo
    echo '```'
    "$@" "$bin" --d "$d" --dims "$dims" --op "$op" --sizes "$sizes" --reps "$reps" --csv "$tmp"
    echo '```'
    if [ ! -s "$csv" ]; then head -1 "$tmp" | sed 's/^/flavour,where,/' > "$csv"; fi
    tail -n +2 "$tmp" | sed "s/^/$fl,${WHERE:-shm},/" >> "$csv"
    rm -f "$tmp"
}

{
    echo "# Isomorphic collectives, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $reps repetitions"
    echo
    echo "Median over repetitions of the slowest process's time; methods interleaved in each"
    echo "repetition. vs_MPI = MPI_Neighbor time / method time (> 1: faster than MPI). auto uses"
    echo "XFER_ALPHA and XFER_BETA measured with xfer-sched measure under the same launcher."
    for fl in $flavours; do
        if [ "$fl" = mpich ]; then
            yield=$(ls build/mpich/tools/libxfer_ucx_yield.so 2>/dev/null || true)
            launch=(mpiexec.mpich -genv LD_PRELOAD "$PWD/$yield")
        else
            launch=(mpiexec.openmpi --oversubscribe --mca btl self,vader)
        fi
        measure "$fl" "${launch[@]}" -n 2
        for op in alltoall allgather; do
            run "$fl" 4 2 2,2 "$op" "${launch[@]}" -n 4
            run "$fl" 8 3 2,2,2 "$op" "${launch[@]}" -n 8
        done
    done
    if [ "$emu" = 1 ]; then
        e=bench/emucluster/emucluster.sh
        trap '"$e" down' EXIT
        XFER_EMU_QUEUE=500ms "$e" up --hosts 8 --rate 1gbit >/dev/null
        export WHERE=emu EMU_NOTE=", emulated cluster: 8 hosts, 1 Gbit/s links"
        measure openmpi "$e" run --ppn 1 --np 2 --
        for op in alltoall allgather; do
            run openmpi 8 2 4,2 "$op" "$e" run --ppn 1 --np 8 --
            run openmpi 8 3 2,2,2 "$op" "$e" run --ppn 1 --np 8 --
        done
    fi
} | tee "$out"
echo "iso-bench: tables in $out, data in $csv" >&2
