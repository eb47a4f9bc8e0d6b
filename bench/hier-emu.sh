#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Node-hierarchical staging on the emulated cluster: 4 hosts, links of 200 Mbit/s each way, the
# producer group on hosts 1-2 and the consumer group on hosts 3-4, 2 or 4 ranks per host.
#   1. the link itself (one rank per host, one way and both ways);
#   2. hier against the flat algorithms and native, 1, 4 and 8 MiB per node, half and full duplex;
#   3. arrival imbalance: random delays of the producers, of the consumers, of everybody; latency
#      after the last arrival with the imbalance-aware protocol (flags) and with node barriers.
# auto runs with XFER_ALPHA / XFER_BETA measured on the link (xfer-sched measure).
# Needs root and a build of the Open MPI flavour (scripts/build.sh openmpi). Output: stdout, and
# the tables in bench/results/hier-emu-<date>.md.
#
#   bash bench/hier-emu.sh [--iters N] [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."

iters=10
quick=0
while [ $# -gt 0 ]; do
    case $1 in
    --iters) iters=$2; shift 2 ;;
    --quick) quick=1; iters=5; shift ;;
    *) echo "usage: hier-emu.sh [--iters N] [--quick]" >&2; exit 2 ;;
    esac
done

demo=build/openmpi/tools/xfer-demo
[ -x "$demo" ] || { echo "hier-emu: build first: scripts/build.sh openmpi" >&2; exit 1; }
emu=bench/emucluster/emucluster.sh
mkdir -p bench/results
out=bench/results/hier-emu-$(date +%Y%m%d-%H%M).md
trap '"$emu" down' EXIT

# a deep enough queue that the links' tbf does not drop (drops cost TCP 200 ms timeouts)
XFER_EMU_QUEUE=500ms "$emu" up --hosts 4 --rate 200mbit

{
    echo "# hier on the emulated cluster ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores)"
    echo
    echo "## Link: one rank per host"
    echo
    # the model's parameters for this network, so that auto decides as it would on it
    ab=$("$emu" run --ppn 1 --np 2 build/openmpi/tools/xfer-sched measure 2>/dev/null |
        grep -- '--alpha')
    echo "xfer-sched measure: $ab"
    XFER_ALPHA=$(echo "$ab" | awk '{print $2}')
    XFER_BETA=$(echo "$ab" | awk '{print $4}')
    export XFER_ALPHA XFER_BETA
    echo
    "$emu" run --ppn 1 --np 2 "$demo" --p 1 --sizes 4M --iters "$iters" --warmup 1 \
        --algos native,fc_full,root_gather
    half=native,root_gather,fc_half,ring_half,auto,hier:auto,hier:fc_half,hier:ring_half,hier:direct
    full=native,root_gather,fc_full,ring_full,auto,hier:auto,hier:fc_full,hier:direct
    for ppn in 2 4; do
        if [ "$ppn" = 2 ]; then sizes=512K,2M,4M; else sizes=256K,1M,2M; fi
        [ "$quick" = 1 ] && sizes=${sizes%%,*}
        echo
        echo "## $ppn ranks per host (per node: 1, 4, 8 MiB)"
        echo
        "$emu" run --ppn "$ppn" "$demo" --p $((2 * ppn)) --sizes "$sizes" --iters "$iters" \
            --warmup 2 --duplex half --algos "$half" --link-mbit 200
        "$emu" run --ppn "$ppn" "$demo" --p $((2 * ppn)) --sizes "$sizes" --iters "$iters" \
            --warmup 2 --duplex full --algos "$full" --link-mbit 200
    done
    # arrival imbalance: the same pseudo-random delays (seed 7) for every algorithm; late
    # producers, late consumers, then everybody late in both directions
    imb_half=native,hier:direct,hier:direct+barrier,hier:fc_half,hier:fc_half+barrier
    imb_full=native,hier:direct,hier:direct+barrier,hier:fc_full,hier:fc_full+barrier
    for case in "A half $imb_half" "B half $imb_half" "both full $imb_full"; do
        set -- $case
        echo
        echo "## Arrival imbalance: 4 ranks per host, 1 MiB per node, delays 0..400 ms ($1 late, $2 duplex)"
        echo
        "$emu" run --ppn 4 "$demo" --p 8 --sizes 256K --iters "$iters" --warmup 2 --duplex "$2" \
            --delay-us 400000 --delay-group "$1" --seed 7 --algos "$3"
    done
} 2>&1 | grep --line-buffered -v "plm:rsh: Warning: setpgid" | tee "$out"
echo "hier-emu: tables in $out"
