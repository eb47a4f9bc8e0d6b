#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Joined datasets with skewed rows on the emulated cluster (issue 30), Open MPI, one rank per
# host: P producer hosts, C consumer hosts, every consumer taking every row. Each step one
# producer, drawn from the seed and never the previous step's, holds twice the mean rows, the
# others share the rest (tools/xfer-joinbench.c). The ways, interleaved in one job per cell:
#   joined  dims: [joined, W] through the runtime, XFER_ALGORITHM unset (auto)
#   padded  a fixed dataset of dims [P * 2 * mean, W], every producer putting the most rows
#           (its own, then padding): what a code does today, through the runtime (auto)
#   native  MPI_Allgatherv on the intercommunicator, consumers sending 0 bytes
#   coll    the joined path's collective alone: xfer_allgatherv_inter with --coll-algo (fc_direct,
#           what the joined plan runs today) on the same counts, without the runtime around it
# and the measured floor: the link's one-way rate R measured first on the same cluster (as
# bench/run-sweep does: xfer-bench --calibrate, three hosts), then per step
#   floor = max(T, max_r S_r) * 8 / R = T * 8 / R
# (T the step's bytes, all producers' rows: every consumer takes them in through its own link;
# S_r producer r's bytes, which it must send at least once). The algorithm each runtime way ran
# comes from XFER_TRACE=1 (channel j: the joined plan's, channel f: the padded dataset's). Then
# one job per way (--solo-steps steps) for each way's peak RSS per rank (getrusage: whole
# processes, so one way each). Output in OUT: joined.csv (every job's line per way, per-step
# samples), tables.md (the table against the floor, peak RSS per rank, the steps' rows, the
# link), link-openmpi.txt; the cluster is taken down at the end (and on any exit).
#
#   sudo bash bench/joined-bench.sh [--cells "4x4 6x2 2x6 5x3"] [--mib 4] [--width 8]
#                                   [--steps 8] [--warmup 1] [--runs 1] [--seed 30]
#                                   [--solo-steps 3] [--coll-algo fc_direct] [--rate 200mbit]
#                                   [--out DIR]
set -Eeuo pipefail
cd "$(dirname "$0")/.."

cells="4x4 6x2 2x6 5x3" mib=4 width=8 steps=8 warmup=1 runs=1 seed=30 solo_steps=3 calgo=fc_direct
rate=200mbit out=bench/results/joined-$(date +%Y%m%d)
die() { echo "joined-bench: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case $1 in
    --cells) cells=$2; shift 2 ;;
    --mib) mib=$2; shift 2 ;;
    --width) width=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --solo-steps) solo_steps=$2; shift 2 ;;
    --coll-algo) calgo=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) sed -n '3,30p' "$0"; exit 0 ;;
    *) die "unknown option $1 (--help)" ;;
    esac
done
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
bench=build/openmpi/tools/xfer-joinbench
xbench=build/openmpi/tools/xfer-bench
[ -x "$bench" ] && [ -x "$xbench" ] || bash scripts/build.sh openmpi >&2
hosts=0
for c in $cells; do
    [[ $c =~ ^[0-9]+x[0-9]+$ ]] || die "--cells: PxC, e.g. 4x4"
    n=$((${c%x*} + ${c#*x}))
    [ "$n" -le "$hosts" ] || hosts=$n
done
[ "$hosts" -ge 3 ] || hosts=3 # the link's measurement needs three

emu=bench/emucluster/emucluster.sh
export XFER_EMU_QUEUE=${XFER_EMU_QUEUE:-500ms} # as run-sweep: deep enough that nothing drops
unset XFER_ALGORITHM XFER_TUNING XFER_TRACE    # auto, with nothing measured for it
work=$(mktemp -d /tmp/xfer-joinbench.XXXXXX)
chmod 777 "$work"
trap '"$emu" down >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mkdir -p "$out"
csv=$out/joined.csv md=$out/tables.md
rm -f "$csv"
run() { "$emu" run "$@" 2>&1 | grep --line-buffered -v "plm:rsh: Warning: setpgid"; }

t0=$SECONDS
load0=$(cut -d' ' -f1-3 /proc/loadavg)
"$emu" up --hosts "$hosts" --rate "$rate" --ranks-per-host 1
run --ppn 1 --np 3 -- "$xbench" --p 1 --sizes 4M --iters 3 --warmup 1 --duplex half \
    --algos fc_full --calibrate "$out/link-openmpi.txt" >"$work/link.log"
mbit=$(awk '$1 == "beta" && $2 > 0 { printf "%.2f", 8e-6 / $2 }' "$out/link-openmpi.txt")
[ -n "$mbit" ] || die "the link's measurement failed (see $out/link-openmpi.txt)"
echo "joined-bench: measured floor rate $mbit Mbit/s one way (links $rate)"

for c in $cells; do
    p=${c%x*} q=${c#*x}
    for r in $(seq 1 "$runs"); do
        s=$((seed + r - 1))
        echo "== $c, run $r (seed $s)"
        XFER_TRACE=1 run --ppn 1 --np $((p + q)) -- "$bench" --p "$p" --mib "$mib" \
            --width "$width" --steps "$steps" --warmup "$warmup" --seed "$s" \
            --ways joined,padded,native,coll --coll-algo "$calgo" --link-mbit "$mbit" \
            --dir "$work" --csv "$csv" --label "interleaved" |
            tee "$work/$c-$r.log" | grep -v "^libxfer trace"
    done
    for way in joined padded native; do
        echo "== $c, $way alone (peak RSS)"
        XFER_TRACE=1 run --ppn 1 --np $((p + q)) -- "$bench" --p "$p" --mib "$mib" \
            --width "$width" --steps "$solo_steps" --warmup 1 --seed "$seed" --ways "$way" \
            --link-mbit "$mbit" --dir "$work" --csv "$csv" --label solo |
            tee "$work/$c-solo-$way.log" | grep "^solo," || true
    done
done
"$emu" down
secs=$((SECONDS - t0))
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# The algorithm each runtime way ran, from the trace of the cell's first interleaved job.
algos=$work/algos.txt
: >"$algos"
for c in $cells; do
    log=$work/$c-1.log
    j=$(sed -n 's/.*channel j at cons: joined rows by \([^ ]*\).*/\1/p' "$log" | head -1)
    ! grep -q "channel j at .*point to point from now on" "$log" || j="$j, then point to point"
    f=$(sed -n 's/.*channel f at cons: \([^,]*\),.*/\1/p' "$log" | head -1)
    echo "$c ${j:-?}|${f:-?}" >>"$algos"
done

{
    echo "# Joined datasets with skewed rows on the emulated cluster ($(date -u +%Y-%m-%dT%H:%MZ))"
    echo
    echo "\`sudo bash bench/joined-bench.sh --cells \"$cells\" --mib $mib --width $width" \
        "--steps $steps --warmup $warmup --runs $runs --seed $seed --solo-steps $solo_steps" \
        "--coll-algo $calgo --rate $rate\` ($secs s)"
    echo
    echo "$(nproc) cores, $(uname -r), Open MPI $(mpirun.openmpi --version 2>&1 |
        sed -n '1s/.* //p'); host links $rate each way (queue $XFER_EMU_QUEUE)," \
        "one rank per host; measured one-way rate $mbit Mbit/s ($(grep '^calibration' \
        "$work/link.log" | head -1 | sed 's/^calibration: //')). The machine is shared: load" \
        "average $load0 at the start, $load1 at the end."
    echo
    python3 - "$csv" "$algos" "$mbit" "$calgo" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
algos = dict(l.split(" ", 1) for l in open(sys.argv[2]).read().splitlines())
mbit = float(sys.argv[3])
calgo = sys.argv[4]
cells = []
for r in rows:
    c = (int(r["p"]), int(r["q"]))
    if c not in cells:
        cells.append(c)
def samples(c, way, label):
    return [float(x) for r in rows if (int(r["p"]), int(r["q"])) == c and r["way"] == way
            and r["label"] == label for x in r["samples_ms"].split()]
def solo(c, way):
    return next((r for r in rows if (int(r["p"]), int(r["q"])) == c and r["way"] == way
                 and r["label"] == "solo"), None)
mib = lambda kib: "%.0f" % (int(kib) / 1024)
first = rows[0]
T = int(first["step_bytes"])
print("Floor per step: every consumer takes in the step's T bytes (all producers' rows) through "
      "its own link, every producer sends its rows at least once: floor = max(T, max_r S_r) * 8 / "
      "R = T * 8 / R, R = %.2f Mbit/s measured. Rows of %s float64, %.2f MiB per producer on "
      "average, the heaviest 2x that, a different producer every step (seeded; the steps' rows "
      "below). The joined path's collective alone is the call its plan makes (%s), on the same "
      "counts, from and into the benchmark's buffers: no puts, gets, counts' exchange or "
      "second phase. Times: ms per step, median (min-max) over the interleaved jobs' timed steps; "
      "x floor = median / floor; vs joined = the way's median / joined's. Peak RSS: the largest "
      "rank of each side in the job running that way alone (MiB)." %
      (mbit, first["width"], int(first["mean_bytes"]) / 1048576, calgo))
for c, a in algos.items():
    if a.split("|")[0] != calgo:
        print()
        print("Note: at %s the joined plan ran %s, the collective alone %s." %
              (c, a.split("|")[0], calgo))
print()
print("| P x C | T per step | floor (ms) | way | algorithm | ms per step | x floor | vs joined "
      "| peak RSS producer / consumer |")
print("|---|---:|---:|---|---|---:|---:|---:|---:|")
for c in cells:
    a = algos.get("%dx%d" % c, "?|?").split("|")
    j = statistics.median(samples(c, "joined", "interleaved") or [float("nan")])
    for way, alg in (("joined", a[0] + " (auto)"), ("padded", a[1] + " (auto)"),
                     ("native", "MPI_Allgatherv"), ("coll:" + calgo, calgo + " (named)")):
        t = samples(c, way, "interleaved")
        if not t:
            continue
        r = next(r for r in rows if (int(r["p"]), int(r["q"])) == c and r["way"] == way)
        fl = float(r["floor_ms"])
        med = statistics.median(t)
        s = solo(c, way)
        rss = "%s / %s MiB" % (mib(s["peak_rss_producer_kib"]), mib(s["peak_rss_consumer_kib"])) \
            if s else "-"
        name = {"joined": "joined", "padded": "padded to the most rows (moves 2T)",
                "native": "native"}.get(way, "the joined path's collective alone")
        bold = "**" if way == "joined" else ""
        print("| %d x %d | %.0f MiB | %.0f | %s | %s | %s%.0f%s (%.0f-%.0f) | %s%.2f%s | %.2f | %s |" %
              (c[0], c[1], int(r["step_bytes"]) / 1048576, fl, name, alg, bold, med, bold, min(t),
               max(t), bold, med / fl, bold, med / j, rss))
print()
print("### Peak RSS per rank (MiB, each way alone; producers, then consumers)")
print()
print("| P x C | way | producers | consumers |")
print("|---|---|---|---|")
for c in cells:
    for way in ("joined", "padded", "native"):
        s = solo(c, way)
        if not s:
            continue
        kib = s["rss_kib_by_rank"].split()
        print("| %d x %d | %s | %s | %s |" % (c[0], c[1], way, " ".join(mib(k) for k in kib[:c[0]]),
                                             " ".join(mib(k) for k in kib[c[0]:])))
PY
    echo
    echo "### The steps' rows (interleaved jobs; producer ranks in order)"
    echo
    echo '```'
    for c in $cells; do
        for r in $(seq 1 "$runs"); do
            echo "$c, run $r:"
            grep -E "^(xfer-joinbench:|step )" "$work/$c-$r.log" || true
        done
    done
    echo '```'
    echo
    echo "### Trace: the algorithms (XFER_TRACE=1, first interleaved job of each cell)"
    echo
    echo '```'
    for c in $cells; do
        echo "$c:"
        grep -E "channel [jf] at cons" "$work/$c-1.log" | sed 's/^libxfer trace \[pid [0-9]*\]: /  /'
    done
    echo '```'
} >"$md"
cat "$md"
echo "joined-bench: $csv, $md (${secs} s on the cluster)"
