#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Compression per dataset (issue 33; docs/runtime.md, "Compression"): the coupled example's
# fields, U and V of an L x L Gray-Scott grid, from the simulation (4 ranks, one per host) to
# the analysis (2 ranks, one per host; --no-hdf5 --no-plots: it computes its statistics only),
# every N simulation steps, with compression none, lz4, zstd, zfp (--tolerance) and auto on U
# and V, over the emulated cluster at each --nets rate and on one node ("local": no emulation,
# shared memory). Open MPI (the emulated cluster's default launcher). Per case, min / median /
# max over --reps runs of the simulation's loop time per coupled step (rank 0's: compute, halo
# exchange and xfer_put/xfer_step_end, the channel at most 2 steps ahead of the analysis), the
# compute part of it, the bytes on the wire over the payload (gray-scott-sim's channel line),
# the raw link bound (each analysis rank takes its rows of U and V, as the example's analysis
# declares: L^2 8 bytes in through its link per coupled step) and the peak RSS of the simulation's and the analysis' ranks (the
# largest over the runs, /usr/bin/time %M).
# --transport file: through step files instead (one node: --nets local), each compressed
# dataset deflated by HDF5 whatever the codec; "wire / payload" is then the step files' bytes
# over the payload's.
# Output: stdout and bench/results/zip-<date>/ (tables.md, runs.csv, logs/).
#
#   sudo bash bench/zip-bench.sh [--reps N] [--size L] [--steps S] [--every N]
#                                [--nets "200mbit 1gbit local"] [--codecs "none lz4 zstd zfp auto"]
#                                [--tolerance T] [--transport stream|file]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export XFER_EMU_QUEUE=${XFER_EMU_QUEUE:-500ms}
reps=3
size=1024
steps=200
every=10
nets="200mbit 1gbit local"
codecs="none lz4 zstd zfp auto"
tol=1e-6
transport=stream
while [ $# -gt 0 ]; do
    case $1 in
    --reps) reps=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --every) every=$2; shift 2 ;;
    --nets) nets=$2; shift 2 ;;
    --codecs) codecs=$2; shift 2 ;;
    --tolerance) tol=$2; shift 2 ;;
    --transport) transport=$2; shift 2 ;;
    *) echo "usage: zip-bench.sh [--reps N] [--size L] [--steps S] [--every N] [--nets \"...\"]" \
        "[--codecs \"...\"] [--tolerance T] [--transport stream|file]" >&2; exit 2 ;;
    esac
done
case $transport in
stream) ;;
file) [ "$nets" = local ] || { echo "zip-bench: --transport file runs on one node: --nets local" >&2; exit 2; } ;;
*) echo "zip-bench: --transport stream or file" >&2; exit 2 ;;
esac
bin=$root/build/openmpi/tools
emu=$root/bench/emucluster/emucluster.sh
[ -x "$bin/gray-scott-sim" ] || { echo "zip-bench: build Open MPI first: bash scripts/build.sh openmpi" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "zip-bench: needs /usr/bin/time (GNU time) for the peak RSS" >&2; exit 2; }
stamp=$(date +%Y%m%d-%H%M)
out=$root/bench/results/zip-$stamp
mkdir -p "$out/logs"
csv=$out/runs.csv
echo "net,codec,rep,steps,loop_s,compute_s,per_step_ms,compute_ms,payload_mib,wire_mib,wire_ratio,rss_sim_kib,rss_ana_kib" >"$csv"
work=$(mktemp -d /tmp/zip-bench-XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"; bash "$emu" down >/dev/null 2>&1 || true' EXIT

config() { # codec -> the example's workflow with U and V compressed by it
    local c=$1 extra="" files=""
    [ "$transport" = stream ] || files=$'\n'"    file: {dir: $work/steps, keep: true}"
    case $c in
    none) extra="" ;;
    zfp) extra=", compression: zfp, tolerance: $tol" ;;
    *) extra=", compression: $c" ;;
    esac
    cat >"$work/zip-$c.yaml" <<YAML
workflow: zip_bench
components:
  - {name: simulation, nprocs: 4, cmd: [gray-scott-sim]}
  - {name: analysis, nprocs: 2, cmd: [gray-scott-analysis]}
channels:
  - name: fields
    from: simulation
    to: analysis
    max_in_flight_steps: 2
    transport: $transport$files
    datasets:
      - {name: U, type: float64, dims: [$size, $size]$extra}
      - {name: V, type: float64, dims: [$size, $size]$extra}
      - {name: time, type: float64, dims: [1]}
YAML
}

run_one() { # net codec rep
    local net=$1 c=$2 rep=$3 log=$out/logs/$1-$2-$3.log files=0
    rm -f "$work/rss.log"
    rm -rf "$work/steps"
    local sim=(/usr/bin/time -a -o "$work/rss.log" -f "rss_kib sim %M" "$bin/gray-scott-sim" --config "$work/zip-$c.yaml"
        --steps "$steps" --every "$every" --size "$size" --output "$work/out-sim")
    local ana=(/usr/bin/time -a -o "$work/rss.log" -f "rss_kib ana %M" "$bin/gray-scott-analysis" --config
        "$work/zip-$c.yaml" --no-hdf5 --no-plots --output "$work/out-ana")
    if [ "$net" = local ]; then
        mpirun.openmpi --oversubscribe --mca mpi_yield_when_idle 1 -np 4 "${sim[@]}" : \
            -np 2 "${ana[@]}" >"$log" 2>&1
    else
        bash "$emu" run --mpi openmpi --ppn 1 --np 4 -- "${sim[@]}" : -np 2 "${ana[@]}" \
            >"$log" 2>&1
    fi
    if [ "$transport" = file ]; then # the step files' bytes stand for the wire's
        files=$(find "$work/steps" -name '*.h5' -printf '%s\n' | awk '{ s += $1 } END { print s / 1048576 }')
    fi
    awk -v net="$net" -v c="$c" -v rep="$rep" -v files="$files" '
        /coupled steps in/ { for (i = 1; i <= NF; i++) { if ($i == "coupled") n = $(i - 1);
                                                          if ($i == "in" && $(i+2) == "s") t = $(i+1);
                                                          if ($i == "(compute") cp = $(i+1) } }
        /MiB of payload/ { for (i = 1; i <= NF; i++) { if ($i == "MiB" && $(i+1) == "of") pl = $(i-1);
                                                       if ($i == "MiB" && $(i+1) == "on") w = $(i-1) } }
        /rss_kib sim/ { if ($3 > rs) rs = $3 }
        /rss_kib ana/ { if ($3 > ra) ra = $3 }
        END { if (!n) exit 1; if (files > 0) w = files;
              printf "%s,%s,%s,%d,%.3f,%.3f,%.1f,%.1f,%.2f,%.2f,%.3f,%d,%d\n", net, c, rep, n, t, cp,
                     1e3 * t / n, 1e3 * cp / n, pl, w, (pl > 0 ? w / pl : 0), rs, ra }' \
        "$log" "$work/rss.log" >>"$csv" ||
        { echo "zip-bench: $net $c rep $rep failed: $log" >&2; tail -5 "$log" >&2; }
}

for c in $codecs; do config "$c"; done
for net in $nets; do
    if [ "$net" != local ]; then
        bash "$emu" up --hosts 6 --rate "$net" --ranks-per-host 1 >/dev/null
    fi
    for ((rep = 1; rep <= reps; rep++)); do
        for c in $codecs; do # (interleaved: a drift of the machine spreads over every codec)
            run_one "$net" "$c" "$rep"
            echo "zip-bench: $net $c rep $rep: $(tail -1 "$csv")"
        done
    done
    [ "$net" = local ] || bash "$emu" down >/dev/null
done

python3 - "$csv" "$size" "$every" >"$out/tables.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
L, every = int(sys.argv[2]), int(sys.argv[3])
def rate(net):
    u = {"gbit": 1e9, "mbit": 1e6, "kbit": 1e3}
    for k, m in u.items():
        if net.endswith(k):
            return float(net[:-len(k)]) * m / 8
    return None
print("Per coupled step (every %d simulation steps), %d x %d float64 U and V: ms, min / median / max;"
      " wire/payload: the bytes that crossed over the raw bytes; bound: L^2 8 bytes (its rows of U"
      " and V) into each analysis rank at the link rate." % (every, L, L))
print()
print("| link | compression | per step | compute | wire / payload | bound | per step / bound | RSS sim / analysis (MiB) |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for net in dict.fromkeys(r["net"] for r in rows):
    for c in dict.fromkeys(r["codec"] for r in rows):
        rs = [r for r in rows if r["net"] == net and r["codec"] == c]
        if not rs:
            continue
        t = sorted(float(r["per_step_ms"]) for r in rs)
        cp = statistics.median(float(r["compute_ms"]) for r in rs)
        w = statistics.median(float(r["wire_ratio"]) for r in rs)
        rt = rate(net)
        bound = L * L * 8 / rt * 1e3 if rt else None
        print("| %s | %s | %.0f / %.0f / %.0f | %.0f | %.3f | %s | %s | %.0f / %.0f |" % (
            net, c, t[0], statistics.median(t), t[-1], cp, w,
            "%.0f" % bound if bound else "-",
            "%.2f" % (statistics.median(t) / bound) if bound else "-",
            max(int(r["rss_sim_kib"]) for r in rs) / 1024, max(int(r["rss_ana_kib"]) for r in rs) / 1024))
PY
cat "$out/tables.md"
echo "zip-bench: results in $out"
