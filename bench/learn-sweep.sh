#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# `auto` that learns, against the algorithms it chooses among (docs/PERFORMANCE.md, "auto that
# learns"), on the emulated cluster (bench/emucluster; root), one rank per host:
#   0. the link on three hosts (xfer-bench --calibrate): the measured floor's rates;
#   1. per MPI, shape and case (allgather; allgatherv with skew 1, --v): native, the flat
#      algorithms auto chooses among, `auto` (learning, no tuning file: what a user runs) and
#      `auto+model` (learning off: the cost model's first choice, what auto explores from), the
#      calls interleaved in an order shuffled every round, every call verified;
#   2. the same `auto` and `auto+model` with a tuning file (--tuning FILE, Open MPI only unless
#      given per MPI as --tuning-mpich);
#   3. with --peer DIR, the papers' authors' program (Algorithm 1, -t 2) in full duplex.
# bench/learn-summary reads the CSV: best, auto after its first 5 calls, the worst exploring
# call against the model's choice, all against the measured floor.
#
#   sudo bash bench/learn-sweep.sh [--mpi openmpi[,mpich]] [--rate 200mbit] [--iters 9]
#                                  [--shapes "4x4 6x2 2x6 5x3"] [--no-v] [--only-v]
#                                  [--tuning FILE] [--tuning-mpich FILE] [--peer DIR]
#                                  [--hosts 8] [--sizes 4M] [--out DIR]
#                                  [--only-auto]    auto and auto+model alone, steps 1 and 2
#                                                   (into the same CSV: a later row of a case
#                                                   replaces an earlier one)
set -euo pipefail
cd "$(dirname "$0")/.."

mpis=openmpi
rate=200mbit
iters=9
sizes=4M
shapes="4x4 6x2 2x6 5x3"
cases="0 1"
tuning=""
tuning_mpich=""
peer=""
hosts=8
out=""
only_auto=0
die() { echo "learn-sweep: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case $1 in
    --mpi) mpis=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --shapes) shapes=$2; shift 2 ;;
    --no-v) cases="0"; shift ;;
    --only-v) cases="1"; shift ;;
    --tuning) tuning=$(realpath "$2"); shift 2 ;;
    --tuning-mpich) tuning_mpich=$(realpath "$2"); shift 2 ;;
    --peer) peer=$2; shift 2 ;;
    --hosts) hosts=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --only-auto) only_auto=1; shift ;;
    -h | --help) sed -n '3,24p' "$0"; exit 0 ;;
    *) die "unknown option $1 (--help)" ;;
    esac
done
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
[ "$iters" -ge 6 ] || die "--iters: at least 6 (auto's first 5 calls explore)"
[ -z "$peer" ] || [ -x "$peer/allgather_test" ] || die "--peer: no $peer/allgather_test"

emu=bench/emucluster/emucluster.sh
export XFER_EMU_QUEUE=${XFER_EMU_QUEUE:-500ms}
trap '"$emu" down' EXIT
run() { "$emu" run "$@" 2>&1 | grep --line-buffered -v "plm:rsh: Warning: setpgid"; }
bin_of() {
    case $1 in
    openmpi) echo build/openmpi/tools/xfer-bench ;;
    mpich) echo build/mpich-ch3/tools/xfer-bench ;;
    *) die "--mpi: openmpi and/or mpich" ;;
    esac
}
rate_of() { awk -v k="$1" '$1 == k && $2 > 0 { printf "%.2f", 8e-6 / $2 }' "$2"; }

out=${out:-bench/results/learn-$(date +%Y%m%d-%H%M)}
mkdir -p "$out"
csv=$out/learn.csv
log=$out/runs.log
[ "$only_auto" = 1 ] || rm -f "$csv" "$log"
for m in ${mpis//,/ }; do [ -x "$(bin_of "$m")" ] || die "build $(bin_of "$m") first"; done
echo "# learn-sweep $(date -u +%Y-%m-%dT%H:%MZ): $hosts hosts at $rate, $iters calls after 1" \
    "warm-up, sizes $sizes, shapes $shapes" | tee -a "$log"
"$emu" up --hosts "$hosts" --rate "$rate" --ranks-per-host 1

for m in ${mpis//,/ }; do
    bench=$(bin_of "$m")
    run --mpi "$m" --ppn 1 --np 3 -- "$bench" --p 1 --sizes 4M --iters 3 --warmup 1 \
        --duplex half --algos fc_full --calibrate "$out/link-$m.txt" >>"$log"
    r1=$(rate_of beta "$out/link-$m.txt")
    r2=$(rate_of beta_two_way "$out/link-$m.txt")
    [ -n "$r1" ] && [ -n "$r2" ] || die "$m: link calibration failed"
    echo "$m: measured $r1 Mbit/s one way, $r2 Mbit/s each way both ways at once" | tee -a "$log"
    tun=$tuning
    [ "$m" = openmpi ] || tun=$tuning_mpich
    for shape in $shapes; do
        p=${shape%x*} q=${shape#*x}
        for v in $cases; do
            vargs=""
            [ "$v" = 0 ] || vargs="--v 1"
            common=(--p "$p" --sizes "$sizes" --warmup 1 --iters "$iters" --duplex both
                --link-mbit "$r1" --link-mbit-two-way "$r2" --csv "$csv" $vargs)
            algos=native,fc_half,fc_full,fc_full_v,fc_direct,relay,relay_full,auto,auto+model
            [ "$only_auto" = 0 ] || algos=auto,auto+model
            echo "== $m $shape v=$v untuned ($algos)" | tee -a "$log"
            run --mpi "$m" --ppn 1 --np $((p + q)) -- env XFER_TUNING= "$bench" "${common[@]}" \
                --label learn-untuned --algos "$algos" >>"$log"
            if [ -n "$tun" ]; then
                echo "== $m $shape v=$v tuned (${tun#"$PWD"/})" | tee -a "$log"
                run --mpi "$m" --ppn 1 --np $((p + q)) -- env XFER_TUNING="$tun" "$bench" \
                    "${common[@]}" --label learn-tuned --algos auto,auto+model >>"$log"
            fi
        done
        if [ -n "$peer" ] && [ "$m" = openmpi ] && [ "$cases" != 1 ] && [ "$only_auto" = 0 ]; then
            for s in ${sizes//,/ }; do
                n=$(awk -v s="$s" 'BEGIN { k = s ~ /[Kk]$/ ? 1024 : s ~ /[Mm]$/ ? 1048576 : 1
                    sub(/[KkMm]$/, "", s); print s * k / 4 }')
                echo "== peer Alg. 1 $shape full $s" | tee -a "$log"
                run --mpi "$m" --ppn 1 --np $((p + q)) -- "$peer/allgather_test" -s"$p" -r"$q" \
                    -t2 "$n" "$n" >"$out/peer.log" || true
                cat "$out/peer.log" >>"$log"
                bench/summary --peer-row "peer:alg1,full,-1,$p,$q,$((n * 4)),$m,learn-untuned" \
                    "$out/peer.log" >>"$csv" || echo "peer $shape: no times" | tee -a "$log"
            done
            rm -f "$out/peer.log"
        fi
    done
done
"$emu" down
trap - EXIT
bench/learn-summary "$csv" | tee "$out/tables.md"
