#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Flow policies against a slow reader (issue 32; docs/runtime.md, "Flow policies"): a sender
# computing 20 ms per step for 40 steps feeds a reader 10 times slower (200 ms per step it
# reads), under policy block, policy latest and stride 10, on the stream and through files, on
# both MPI flavours. Two ranks each (xfer-synth through xfer-run, one MPMD job), a float64
# dataset of 256 x 256 (512 KiB a step). Reports, per case, min / median / max over the runs of
# the sender's loop time (rank 0's, xfer-synth --report-time: its 40 steps, not xfer_finalize,
# which under latest still sends the last step) and the peak RSS of each rank (/usr/bin/time
# %M, the largest over the runs), with what the reader got (rank 0: steps read, sent, dropped).
# Output: stdout and bench/results/flow-<date>/ (tables.md, runs.csv, logs/).
#
#   bash bench/flow-bench.sh [--reps N] [--flavours "mpich openmpi"] [--transports "stream file"]
#                            [--steps S] [--compute-ms A] [--read-ms B]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

reps=5
flavours="mpich openmpi"
transports="stream file"
steps=40
compute=20
read=200
while [ $# -gt 0 ]; do
    case $1 in
    --reps) reps=$2; shift 2 ;;
    --flavours) flavours=$2; shift 2 ;;
    --transports) transports=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --compute-ms) compute=$2; shift 2 ;;
    --read-ms) read=$2; shift 2 ;;
    *) echo "usage: flow-bench.sh [--reps N] [--flavours \"mpich openmpi\"]" \
        "[--transports \"stream file\"] [--steps S] [--compute-ms A] [--read-ms B]" >&2; exit 2 ;;
    esac
done
[ -x /usr/bin/time ] || { echo "flow-bench: needs /usr/bin/time (GNU time) for the peak RSS" >&2; exit 2; }

stamp=$(date +%Y%m%d-%H%M)
out=bench/results/flow-$stamp
mkdir -p "$out/logs"
csv=$out/runs.csv
echo "flavour,transport,policy,rep,loop_ms,read,sent,dropped,rss_a0_kib,rss_a1_kib,rss_b0_kib,rss_b1_kib" >"$csv"
work=$(mktemp -d /tmp/flow-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT

keys_of() {
    case $1 in
    block) echo "" ;;
    latest) echo "    policy: latest" ;;
    stride10) echo "    stride: 10" ;;
    esac
}

for fl in $flavours; do
    bin=$root/build/$fl/tools
    if [ ! -x "$bin/xfer-run" ]; then
        echo "flow-bench: no $bin/xfer-run (bash scripts/build.sh $fl): $fl skipped" >&2
        continue
    fi
    pre=""
    [ -f "$bin/libxfer_ucx_yield.so" ] && pre=$bin/libxfer_ucx_yield.so
    for tr in $transports; do
        if [ "$tr" = file ] && [ ! -e "$root/build/$fl/adapters/hdf5/libxfer_hdf5.so" ]; then
            echo "flow-bench: $fl has no file transport: skipped" >&2
            continue
        fi
        for pol in block latest stride10; do
            for rep in $(seq 1 "$reps"); do
                cfg=$work/flow.yaml
                rss='[/usr/bin/time, -f, "flow-bench-rss %M", xfer-synth, --steps, "'$steps'"'
                cat >"$cfg" <<YAML
workflow: flow_bench
components:
  - {name: a, nprocs: 2, cmd: $rss, --report-time, --compute-ms, "$compute"]}
  - {name: b, nprocs: 2, cmd: $rss, --recv-ms, "$read"]}
channels:
  - name: c
    from: a
    to: b
    max_in_flight_steps: 2
$(keys_of $pol)
    transport: $tr
    file: {dir: $work/steps}
    datasets:
      - {name: f, type: float64, dims: [256, 256]}
YAML
                log=$out/logs/$fl-$tr-$pol-$rep.log
                PATH=$bin:$PATH LD_PRELOAD=$pre "$bin/xfer-run" --run-dir "$work/run" \
                    "$cfg" >"$log" 2>&1 || { echo "flow-bench: $fl $tr $pol run $rep failed (see $log)" >&2; continue; }
                rm -rf "$work/run" "$work/steps"
                loop=$(sed -n 's/.*xfer-synth: a: [0-9]* steps in \([0-9]*\) ms.*/\1/p' "$log" | head -1)
                # the ranks' RSS lines in component order (a's two, then b's two)
                ra=$(grep -E '^\[a\].*flow-bench-rss' "$log" | awk '{print $NF}' | sort -n | tr '\n' ' ')
                rb=$(grep -E '^\[b\].*flow-bench-rss' "$log" | awk '{print $NF}' | sort -n | tr '\n' ' ')
                read -r a0 a1 _ <<<"$ra $ra"
                read -r b0 b1 _ <<<"$rb $rb"
                res=$(grep -E 'xfer-synth-result component=b rank=0 ' "$log" || true)
                got=$(sed -n 's/.* got=\([0-9]*\).*/\1/p' <<<"$res")
                res=$(grep -E 'xfer-synth-result component=a rank=0 ' "$log" || true)
                sent=$(sed -n 's/.* sent=\([0-9]*\).* held=\([0-9]*\).*/\1+\2/p' <<<"$res")
                drop=$(sed -n 's/.* dropped=\([0-9]*\).*/\1/p' <<<"$res")
                [ -n "$sent" ] && sent=$((sent))
                echo "$fl,$tr,$pol,$rep,$loop,${got:-?},${sent:-$steps},${drop:-0},$a0,$a1,$b0,$b1" >>"$csv"
                echo "flow-bench: $fl $tr $pol run $rep: loop $loop ms; b read ${got:-?} of ${sent:-$steps} sent (${drop:-0} dropped); RSS a $ra, b $rb KiB"
            done
        done
    done
done

python3 - "$csv" "$out/tables.md" "$steps" "$compute" "$read" "$reps" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
steps, compute, read, reps = sys.argv[3:7]
out = ["# Flow policies against a reader 10 times slower (bench/flow-bench.sh)", "",
       "Sender: 2 ranks, %s steps of %s ms compute; reader: 2 ranks, %s ms per step read; "
       "float64 256 x 256 (512 KiB a step), max_in_flight_steps 2; %s runs each. Loop: rank 0 "
       "of the sender, its %s steps (min / median / max, ms). Read: steps the reader got "
       "(median), of those sent. RSS: peak per rank, the largest over the runs (MiB)." %
       (steps, compute, read, reps, steps), "",
       "| MPI | transport | policy | sender loop min / median / max (ms) | read / sent (dropped) "
       "| RSS sender ranks | RSS reader ranks |", "|---|---|---|---|---|---|---|"]
keys = []
for r in rows:
    k = (r["flavour"], r["transport"], r["policy"])
    if k not in keys:
        keys.append(k)
mib = lambda v: "%.1f" % (int(v) / 1024.0) if v and v.isdigit() else "?"
for k in keys:
    rs = [r for r in rows if (r["flavour"], r["transport"], r["policy"]) == k and r["loop_ms"]]
    if not rs:
        continue
    t = [int(r["loop_ms"]) for r in rs]
    med = lambda f: statistics.median(int(r[f]) for r in rs if r[f].isdigit()) \
        if any(r[f].isdigit() for r in rs) else "?"
    big = lambda f: max((int(r[f]) for r in rs if r[f].isdigit()), default=0)
    out.append("| %s | %s | %s | %d / %d / %d | %s / %s (%s) | %s, %s | %s, %s |" % (
        k[0], k[1], k[2].replace("stride10", "stride 10"), min(t), statistics.median(t), max(t),
        med("read"), med("sent"), med("dropped"),
        mib(str(big("rss_a0_kib"))), mib(str(big("rss_a1_kib"))),
        mib(str(big("rss_b0_kib"))), mib(str(big("rss_b1_kib")))))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out))
EOF
echo "flow-bench: results in $out"
