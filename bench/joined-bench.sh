#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Joined datasets with skewed rows on the emulated cluster (issue 30), Open MPI, one rank per
# host: P producer hosts, C consumer hosts, every consumer taking every row. Each step one
# producer, drawn from the seed and never the previous step's, holds twice the mean rows, the
# others share the rest (tools/xfer-joinbench.c). The ways, interleaved in each job of a cell:
#   joined  dims: [joined, W] through the runtime, XFER_ALGORITHM unset (auto)
#   padded  a fixed dataset of dims [P * 2 * mean, W], every producer putting the most rows
#           (its own, then padding): what a code does today, through the runtime (auto)
#   native  MPI_Allgatherv on the intercommunicator, consumers sending 0 bytes
#   coll    the joined path's collective alone: xfer_allgatherv_inter with --coll-algo (auto,
#           as the joined plan chooses for each step's counts) on the same counts, without the
#           runtime around it
# and the measured floor: the link's one-way rate R measured first on the same cluster (as
# bench/run-sweep does: xfer-bench --calibrate, three hosts), then per step
#   floor = max(T, max_r S_r) * 8 / R = T * 8 / R
# (T the step's bytes, all producers' rows: every consumer takes them in through its own link;
# S_r producer r's bytes, which it must send at least once). The algorithm each runtime way ran
# comes from XFER_TRACE=1 (channel j: the joined plan's, channel f: the padded dataset's). Then
# one job per way (--solo-steps steps) for each way's peak RSS per rank (getrusage: whole
# processes, so one way each). The collective's schedule is also simulated on every timed
# step's counts with the measured alpha and beta (xfer-sched cost): what that schedule costs on
# an ideal network, against what it and the runtime measured.
# Output in OUT: joined.csv (every job's line per way, per-step samples), tables.md (the table
# against the floor, where the time goes, peak RSS per rank, the steps' rows, the trace),
# link-openmpi.txt, logs/ (every job's output, which --summary reads again); the cluster is taken
# down at the end (and on any exit).
#
#   sudo bash bench/joined-bench.sh [--cells "4x4 6x2 2x6 5x3"] [--mib 4] [--width 8]
#                                   [--steps 8] [--warmup 1] [--runs 1] [--seed 30]
#                                   [--solo-steps 3] [--coll-algo auto] [--rate 200mbit]
#                                   [--out DIR]
#   bash bench/joined-bench.sh --summary DIR    tables.md again from DIR (no cluster, no root)
set -Eeuo pipefail
cd "$(dirname "$0")/.."

cells="4x4 6x2 2x6 5x3" mib=4 width=8 steps=8 warmup=1 runs=1 seed=30 solo_steps=3
calgo=auto rate=200mbit out=bench/results/joined-$(date +%Y%m%d) summary_only=0
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
    --summary) out=$2; summary_only=1; shift 2 ;;
    -h | --help) sed -n '3,35p' "$0"; exit 0 ;;
    *) die "unknown option $1 (--help)" ;;
    esac
done
sched=build/openmpi/tools/xfer-sched

# tables.md from OUT: joined.csv, link-openmpi.txt, logs/ (meta.txt, CELL-RUN.log, solo logs).
summarize() {
    local dir=$1
    [ -f "$dir/joined.csv" ] && [ -f "$dir/logs/meta.txt" ] || die "$dir: no joined.csv or logs/meta.txt"
    [ -x "$sched" ] || bash scripts/build.sh openmpi >&2
    python3 - "$dir" "$sched" <<'PY' >"$dir/tables.md"
import csv, glob, os, re, statistics, subprocess, sys, tempfile
d, sched = sys.argv[1], sys.argv[2]
meta = dict(l.split("=", 1) for l in open(os.path.join(d, "logs/meta.txt")).read().splitlines())
rows = list(csv.DictReader(open(os.path.join(d, "joined.csv"))))
link = dict(l.split()[:2] for l in open(os.path.join(d, "link-openmpi.txt"))
            if l.split() and l.split()[0] in ("alpha", "beta"))
mbit, calgo = float(meta["mbit"]), meta["calgo"]
cells = []
for r in rows:
    c = (int(r["p"]), int(r["q"]))
    if c not in cells:
        cells.append(c)
cname = lambda c: "%dx%d" % c
def of(c, way, label):
    return [r for r in rows if (int(r["p"]), int(r["q"])) == c and r["way"] == way
            and r["label"] == label]
def samples(c, way):
    return [float(x) for r in of(c, way, "interleaved") for x in r["samples_ms"].split()]
def logs(c):
    return sorted(glob.glob(os.path.join(d, "logs", cname(c) + "-[0-9]*.log")))
def trace(c):
    """The joined plan's algorithms (auto's choice at each step's recount, one group's rank 0,
    in order of first use; the plan's first algorithm when no recount was traced) and the padded
    dataset's, first interleaved job of the cell."""
    j = f = "?"
    steps, grp = [], None
    p2p = False
    for path in logs(c)[:1]:
        for l in open(path):
            m = re.search(r"channel j at cons: joined and variable datasets by (\S+)", l)
            j = m.group(1) if m else j
            m = re.search(r"channel f at cons: ([^,]+),", l)
            f = m.group(1) if m else f
            m = re.search(r"recount group (\d) rank 0: bytes \d+\|\d+ -> (\S+)", l)
            if m and grp in (None, m.group(1)):
                grp = m.group(1)
                if m.group(2) not in steps:
                    steps.append(m.group(2))
            p2p |= "point to point from now on" in l
    j = "/".join(steps) if steps else j
    return (j + (", then point to point" if p2p else "")), f
def timed_steps(c):  # every timed step's rows, from every interleaved job
    out = []
    for path in logs(c):
        for l in open(path):
            m = re.match(r"step \d+: heavy rank \d+, rows ([0-9,]+)$", l.strip())
            if m:
                out.append([int(x) for x in m.group(1).split(",")])
    return out
def model(c):
    """Every registered schedule on an ideal network (xfer-sched cost --algo all, the measured
    alpha and beta), each timed step's counts: {algorithm: median s over the steps}."""
    width = int(rows[0]["width"])
    t = {}
    for st in timed_steps(c):
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
            f.write("".join("%d\n" % (n * width * 8) for n in st) + "0\n" * c[1])
            f.flush()
            res = subprocess.run([sched, "cost", "--algo", "all", "--p", str(c[0]), "--q",
                                  str(c[1]), "--counts-file", f.name, "--alpha", link["alpha"],
                                  "--beta", link["beta"], "--duplex", "half"],
                                 capture_output=True, text=True)
        lines = [l.split() for l in res.stdout.splitlines() if l.strip()]
        if res.returncode == 0 and len(lines) >= 2 and "predicted_s" in lines[0]:
            k = lines[0].index("predicted_s")
            for l in lines[1:]:
                t.setdefault(l[0], []).append(float(l[k]))
    return {a: statistics.median(v) for a, v in t.items()}
mib = lambda kib: "%.0f" % (int(kib) / 1024)
first = rows[0]
P = print
P("# Joined datasets with skewed rows on the emulated cluster (%s)" % meta["date"])
P()
P("`%s` (%s s)" % (meta["command"], meta["secs"]))
P()
P("%s cores, %s, Open MPI %s; host links %s each way (queue %s), one rank per host; measured "
  "one-way rate %.2f Mbit/s (%s). The machine is shared: load average %s at the start, %s at "
  "the end." % (meta["cores"], meta["kernel"], meta["ompi"], meta["rate"], meta["queue"], mbit,
                meta["calibration"], meta["load0"], meta["load1"]))
P()
P("Floor per step: every consumer takes in the step's T bytes (all producers' rows) through its "
  "own link, every producer sends its rows at least once: floor = max(T, max_r S_r) * 8 / R = "
  "T * 8 / R, R = %.2f Mbit/s measured. Rows of %s float64, %.2f MiB per producer on average, "
  "the heaviest 2x that, a different producer every step (seeded; the steps' rows below). The "
  "joined path's collective alone is the call its plan makes (%s), on the same counts, from and "
  "into the benchmark's buffers: no puts, gets, counts' exchange or second phase. Times: ms per "
  "step, median (min-max) over the interleaved jobs' timed steps; x floor = median / floor; vs "
  "joined = the way's median / joined's. Peak RSS: the largest rank of each side in the job "
  "running that way alone (MiB)." % (mbit, first["width"], int(first["mean_bytes"]) / 1048576,
                                     calgo))
for c in cells:
    if calgo != "auto" and trace(c)[0].split(",")[0] != calgo:
        P()
        P("Note: at %s the joined plan ran %s, the collective alone %s." %
          (cname(c), trace(c)[0], calgo))
P()
P("| P x C | T per step | floor (ms) | way | algorithm | ms per step | x floor | vs joined "
  "| peak RSS producer / consumer |")
P("|---|---:|---:|---|---|---:|---:|---:|---:|")
for c in cells:
    ja, fa = trace(c)
    j = statistics.median(samples(c, "joined") or [float("nan")])
    for way, name, alg in (("joined", "joined", ja + " (auto)"),
                           ("padded", "padded to the most rows (moves 2T)", fa + " (auto)"),
                           ("native", "native", "MPI_Allgatherv"),
                           ("coll:" + calgo, "the joined path's collective alone",
                            calgo + ("" if calgo == "auto" else " (named)"))):
        t = samples(c, way)
        if not t:
            continue
        r = of(c, way, "interleaved")[0]
        fl, med = float(r["floor_ms"]), statistics.median(t)
        s = (of(c, way, "solo") or [None])[0]
        rss = "%s / %s MiB" % (mib(s["peak_rss_producer_kib"]), mib(s["peak_rss_consumer_kib"])) \
            if s else "-"
        b = "**" if way == "joined" else ""
        P("| %d x %d | %.0f MiB | %.0f | %s | %s | %s%.0f%s (%.0f-%.0f) | %s%.2f%s | %.2f | %s |" %
          (c[0], c[1], int(r["step_bytes"]) / 1048576, fl, name, alg, b, med, b, min(t), max(t),
           b, med / fl, b, med / j, rss))
P()
P("### Where the joined way's time goes (medians, ms, and x floor)")
P()
P("The schedule: %s's schedule for each timed step's counts (auto: the algorithm the joined plan "
  "ran, the first when it ran several), simulated with the measured alpha "
  "and beta (`xfer-sched cost`: a network that runs it exactly, every link at R); the best "
  "registered schedule likewise (any algorithm, those the joined plan may not run included). The "
  "collective alone: the call measured. The runtime's share: joined less the collective alone, "
  "of the medians and of the fastest steps." % calgo)
P()
P("| P x C | floor | the schedule, simulated | the best schedule, simulated | the collective "
  "alone, measured | joined | the runtime's share: medians, fastest |")
P("|---|---:|---:|---:|---:|---:|---:|")
for c in cells:
    fl = float(of(c, "joined", "interleaved")[0]["floor_ms"])
    ms = model(c)
    salgo = trace(c)[0].split(",")[0].split("/")[0] if calgo == "auto" else calgo
    m = 1e3 * ms.get(salgo, float("nan"))
    best = min(ms, key=ms.get) if ms else "?"
    bm = 1e3 * ms.get(best, float("nan"))
    ta, tj = samples(c, "coll:" + calgo), samples(c, "joined")
    a = statistics.median(ta or [float("nan")])
    j = statistics.median(tj or [float("nan")])
    P("| %d x %d | %.0f | %.0f (%.2f) | %s %.0f (%.2f) | %.0f (%.2f) | %.0f (%.2f) | %+.0f, %+.0f |"
      % (c[0], c[1], fl, m, m / fl, best, bm, bm / fl, a, a / fl, j, j / fl, j - a,
         min(tj) - min(ta)))
P()
P("### Peak RSS per rank (MiB, each way alone; producers, then consumers)")
P()
P("| P x C | way | producers | consumers |")
P("|---|---|---|---|")
for c in cells:
    for way in ("joined", "padded", "native"):
        for s in of(c, way, "solo")[:1]:
            kib = s["rss_kib_by_rank"].split()
            P("| %d x %d | %s | %s | %s |" % (c[0], c[1], way, " ".join(mib(k) for k in kib[:c[0]]),
                                             " ".join(mib(k) for k in kib[c[0]:])))
P()
P("### The steps' rows (interleaved jobs; producer ranks in order)")
P()
P("```")
for c in cells:
    for path in logs(c):
        P("%s:" % os.path.basename(path)[:-4])
        for l in open(path):
            if l.startswith("xfer-joinbench:") or l.startswith("step "):
                P(l.rstrip())
P("```")
P()
P("### Trace: the algorithms (XFER_TRACE=1, first interleaved job of each cell)")
P()
P("```")
for c in cells:
    P("%s:" % cname(c))
    for path in logs(c)[:1]:
        for l in open(path):
            if re.search(r"channel [jf] at cons|recount group \d rank 0", l):
                l = re.sub(r" \[auto: .*\]$", "", l.rstrip())
                P("  " + re.sub(r"^libxfer trace \[pid \d+\]: ", "", l))
P("```")
PY
}

if [ "$summary_only" = 1 ]; then
    summarize "$out"
    cat "$out/tables.md"
    exit 0
fi

[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
bench=build/openmpi/tools/xfer-joinbench
xbench=build/openmpi/tools/xfer-bench
[ -x "$bench" ] && [ -x "$xbench" ] && [ -x "$sched" ] || bash scripts/build.sh openmpi >&2
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
rm -rf "$out/logs" "$out/joined.csv"
mkdir -p "$out/logs"
csv=$out/joined.csv
run() { "$emu" run "$@" 2>&1 | grep --line-buffered -v "plm:rsh: Warning: setpgid"; }

t0=$SECONDS
load0=$(cut -d' ' -f1-3 /proc/loadavg)
"$emu" up --hosts "$hosts" --rate "$rate" --ranks-per-host 1
run --ppn 1 --np 3 -- "$xbench" --p 1 --sizes 4M --iters 3 --warmup 1 --duplex half \
    --algos fc_full --calibrate "$out/link-openmpi.txt" >"$out/logs/link.log"
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
            tee "$out/logs/$c-$r.log" | grep -v "^libxfer trace"
    done
    for way in joined padded native; do
        echo "== $c, $way alone (peak RSS)"
        XFER_TRACE=1 run --ppn 1 --np $((p + q)) -- "$bench" --p "$p" --mib "$mib" \
            --width "$width" --steps "$solo_steps" --warmup 1 --seed "$seed" --ways "$way" \
            --link-mbit "$mbit" --dir "$work" --csv "$csv" --label solo |
            tee "$out/logs/$c-solo-$way.log" | grep "^solo," || true
    done
done
"$emu" down
{
    echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
    echo "command=sudo bash bench/joined-bench.sh --cells \"$cells\" --mib $mib --width $width" \
        "--steps $steps --warmup $warmup --runs $runs --seed $seed --solo-steps $solo_steps" \
        "--coll-algo $calgo --rate $rate"
    echo "secs=$((SECONDS - t0))"
    echo "cores=$(nproc)"
    echo "kernel=$(uname -r)"
    echo "ompi=$(mpirun.openmpi --version 2>&1 | sed -n '1s/.* //p')"
    echo "rate=$rate"
    echo "queue=$XFER_EMU_QUEUE"
    echo "mbit=$mbit"
    echo "calgo=$calgo"
    echo "calibration=$(sed -n 's/^calibration: //p' "$out/logs/link.log" | head -1)"
    echo "load0=$load0"
    echo "load1=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/logs/meta.txt"
summarize "$out"
cat "$out/tables.md"
echo "joined-bench: $csv, $out/tables.md ($((SECONDS - t0)) s)"
