#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# How time grows with p + q (docs/PERFORMANCE.md, "Scale"): bench/learn-sweep.sh on emulated
# clusters of 8, 16 and 32 hosts (one rank per host; a link rate low enough that the two cores
# are not the bound: 50 Mbit/s by default, where the best algorithm reaches the floor at 32
# hosts), two shapes per size (p = q, and p = 3q), allgather in both duplex modes: native, the
# flat algorithms, `auto` untuned and the authors' program (--peer DIR, Algorithm 1, -t 2).
# Then the schedule simulator and the cost model at the same link (alpha and beta measured on
# the largest cluster) and bytes per rank from p + q = 8 to 65,536 (bench/scale-sim).
# bench/scale-summary reads both.
#
#   sudo bash bench/scale-sweep.sh [--hosts "8 16 32"] [--rate 50mbit] [--sizes 256K]
#                                  [--iters 9] [--mpi openmpi[,mpich]] [--peer DIR] [--out DIR]
#                                  [--sim-only DIR]   the simulator's part alone, on the link
#                                                     measured in DIR (a sweep's folder)
set -euo pipefail
cd "$(dirname "$0")/.."

hosts="8 16 32"
rate=50mbit
sizes=256K
iters=9
mpis=openmpi
peer=""
out=""
sim_only=""
die() { echo "scale-sweep: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case $1 in
    --hosts) hosts=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --mpi) mpis=$2; shift 2 ;;
    --peer) peer=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --sim-only) sim_only=$2; shift 2 ;;
    -h | --help) sed -n '3,17p' "$0"; exit 0 ;;
    *) die "unknown option $1 (--help)" ;;
    esac
done
[[ $sizes =~ ^[0-9]+[KkMm]?$ ]] || die "--sizes: one size (e.g. 256K)"

sim() { # the simulator and the model on the link measured in $1/h<largest> (or any h*)
    local dir=$1 link="" h f
    h=$(printf '%s\n' $hosts | sort -n | tail -1)
    for f in "$dir"/h*/link-*.txt "$dir"/h"$h"/link-*.txt; do
        [ -f "$f" ] && link=$f
    done
    [ -n "$link" ] || die "no link calibration (h*/link-*.txt) in $dir"
    bench/scale-sim --link "$link" --sizes "$sizes" >"$dir/sim.csv"
    bench/scale-summary "$dir" | tee "$dir/tables.md"
}
if [ -n "$sim_only" ]; then
    sim "$sim_only"
    exit 0
fi

[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
out=${out:-bench/results/scale-$(date +%Y%m%d-%H%M)}
mkdir -p "$out"
for h in $hosts; do
    [ $((h % 4)) = 0 ] || die "--hosts: multiples of 4 (shapes h/2 x h/2 and 3h/4 x h/4)"
    shapes="$((h / 2))x$((h / 2)) $((3 * h / 4))x$((h / 4))"
    echo "== $h hosts: shapes $shapes" | tee -a "$out/scale.log"
    bash bench/learn-sweep.sh --mpi "$mpis" --rate "$rate" --iters "$iters" --sizes "$sizes" \
        --shapes "$shapes" --no-v --hosts "$h" ${peer:+--peer "$peer"} --out "$out/h$h" |
        tee -a "$out/scale.log"
done
sim "$out"
