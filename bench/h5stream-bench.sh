#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# xfer-h5stream against h5copy on one file (issue 7, docs/PERFORMANCE.md).
#
# A file of MIB MiB (h5gen big: four contiguous datasets of four types under /data) is copied
#   - by h5copy -s /data -d /data (one process, HDF5's object copy), and by h5copy followed by
#     an fsync of the copy (xfer-h5stream's receiver flushes its file to disk at each step end);
#   - by xfer-h5stream: an MPMD launch of `send` on P ranks and `recv` on Q ranks, for each
#     shape PxQ; the output layout is "same" (the input's paths) for one step, "group" (one
#     group per step) for several (--steps: the streaming rate once the buffers are warm).
# Each run of each method is one whole command, timed wall-clock by GNU time, which also gives
# the peak RSS of the largest process of the command. The methods take turns within a round, so
# that slow spells of the machine hit all of them; the tables give the median over the rounds,
# the fastest and slowest round, and the median of xfer-h5stream's own phase timings. `sync`
# runs (untimed) before every command so that none pays for another's dirty pages; the input
# stays in the page cache for all. The first round's outputs are compared with h5diff.
#
#   bash bench/h5stream-bench.sh [--flavour mpich|openmpi] [--mib N] [--rounds N]
#                                [--shapes "1x1 2x2"] [--steps N] [--dir DIR] [--out FILE]
#
# Defaults: mpich, 1024 MiB, 7 rounds, shapes 1x1 and 2x2, 1 step, DIR ${TMPDIR:-/tmp}/xfer-h5bench
# (needs about 3 x MIB of free space, 2 + steps x 1 with --steps), tables to stdout and FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

flavour=mpich
mib=1024
rounds=7
shapes="1x1 2x2"
steps=1
dir="${TMPDIR:-/tmp}/xfer-h5bench"
out=""
usage() {
    sed -n '/^#   bash/,/^# Defaults/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
while (($#)); do
    case "$1" in
    --flavour) flavour="$2"; shift ;;
    --mib) mib="$2"; shift ;;
    --rounds) rounds="$2"; shift ;;
    --shapes) shapes="$2"; shift ;;
    --steps) steps="$2"; shift ;;
    --dir) dir="$2"; shift ;;
    --out) out="$2"; shift ;;
    *) usage ;;
    esac
    shift
done
[[ "$flavour" == mpich || "$flavour" == openmpi ]] || usage
[[ -z "$out" || "$out" == /* ]] || out="$root/$out"
[[ "$mib" =~ ^[1-9][0-9]*$ && "$rounds" =~ ^[1-9][0-9]*$ && "$steps" =~ ^[1-9][0-9]*$ ]] || usage
for t in h5copy h5diff; do
    command -v "$t" >/dev/null || { echo "h5stream-bench: $t not found (apt-get install hdf5-tools)" >&2; exit 1; }
done
[[ -x /usr/bin/time ]] || { echo "h5stream-bench: GNU time not found (apt-get install time)" >&2; exit 1; }

tree="build/$flavour"
h5s="$root/$tree/adapters/hdf5/xfer-h5stream"
gen="$root/$tree/tests/h5gen"
if [[ ! -x "$h5s" || ! -x "$gen" ]]; then
    bash scripts/build.sh "$flavour" >/dev/null
fi
if [[ "$flavour" == openmpi ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpiexec=(mpiexec.openmpi --oversubscribe)
else
    mpiexec=(mpiexec.mpich)
fi
cores=$(nproc)

mkdir -p "$dir"
cd "$dir"
need=$(( (3 + steps) * mib ))
avail=$(df -Pm . | awk 'NR == 2 {print $4}')
((avail > need)) || { echo "h5stream-bench: $dir has $avail MiB free, needs about $need" >&2; exit 1; }
if [[ ! -e in.h5 || $(cat in.mib 2>/dev/null) != "$mib" ]]; then
    echo "h5stream-bench: writing a $mib MiB input file in $dir" >&2
    rm -f in.h5 && "$gen" big in.h5 "$mib" && echo "$mib" >in.mib
fi
bytes=$(( mib * 1048576 ))

# one timed command: its log in LOG, "<seconds> <peak RSS KiB>" appended to RES
timed() { # timed LOG RES CMD...
    local log="$1" res="$2"
    shift 2
    sync
    /usr/bin/time -o time.out -f "%e %M" "$@" >"$log" 2>&1 || {
        echo "h5stream-bench: failed: $* (log: $dir/$log)" >&2
        cat "$log" >&2
        exit 1
    }
    cat time.out >>"$res"
}

# one step: the input's own paths (h5diff compares the files); more: one group per step
layout=same
((steps == 1)) || layout=group
last=$(printf "/step_%06d" $((steps - 1)))
for shape in $shapes; do
    p="${shape%x*}"
    q="${shape#*x}"
    "$h5s" config in.h5 -o "wf-$shape.yaml" --producers "$p" --consumers "$q" --layout "$layout" \
        --steps "$steps" --output "out-$shape.h5" --timeout-ms 600000 >config.log 2>&1 ||
        { cat config.log >&2; exit 1; }
done
rm -f res-* phases-*
for ((r = 1; r <= rounds; r++)); do
    echo "h5stream-bench: round $r of $rounds" >&2
    rm -f copy.h5
    timed h5copy.log res-h5copy h5copy -i in.h5 -o copy.h5 -s /data -d /data
    rm -f copy.h5
    timed h5copy-sync.log res-h5copy-sync sh -c 'h5copy -i in.h5 -o copy.h5 -s /data -d /data && sync copy.h5'
    for shape in $shapes; do
        p="${shape%x*}"
        q="${shape#*x}"
        pre=()
        if [[ "$flavour" == mpich ]] && ((p + q > cores)); then
            # MPICH/UCX busy-polls without yielding (tools/ucx_yield.c)
            pre=(-genv LD_PRELOAD "$root/$tree/tools/libxfer_ucx_yield.so")
        fi
        rm -f "out-$shape.h5"
        timed "h5stream-$shape.log" "res-h5stream-$shape" "${mpiexec[@]}" "${pre[@]}" \
            -n "$p" "$h5s" send in.h5 --steps "$steps" --config "wf-$shape.yaml" \
            : -n "$q" "$h5s" recv "out-$shape.h5" --layout "$layout" --config "wf-$shape.yaml"
        # send: read X MiB in A s, put N step(s) in B s; recv: first step after C s, then
        # getting D s, writing E s
        sed -n 's/.*read [0-9.]* MiB in \([0-9.]*\) s, put [0-9]* step(s) in \([0-9.]*\) s.*/\1 \2/p' \
            "h5stream-$shape.log" | tr '\n' ' ' >>"phases-$shape"
        sed -n 's/.*first step after \([0-9.]*\) s, then getting \([0-9.]*\) s, writing \([0-9.]*\) s (\([0-9.]*\) MiB.*/\1 \2 \3 \4/p' \
            "h5stream-$shape.log" >>"phases-$shape"
        if ((r == 1)); then
            if ((steps == 1)); then
                h5diff -q in.h5 "out-$shape.h5"
            else
                h5diff -q in.h5 "out-$shape.h5" /data "$last/data"
            fi || { echo "h5stream-bench: out-$shape.h5 differs from in.h5" >&2; exit 1; }
        fi
    done
    if ((r == 1)); then
        h5diff -q in.h5 copy.h5 /data /data || { echo "h5stream-bench: copy.h5 differs from in.h5" >&2; exit 1; }
    fi
done

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
row() { # row NAME RESFILE STEPS
    local med lo hi rss
    med=$(awk '{print $1}' "$2" | median)
    lo=$(awk '{print $1}' "$2" | sort -g | head -1)
    hi=$(awk '{print $1}' "$2" | sort -g | tail -1)
    rss=$(awk '{print $2}' "$2" | sort -g | tail -1)
    awk -v n="$1" -v m="$med" -v lo="$lo" -v hi="$hi" -v rss="$rss" -v b="$bytes" -v s="$3" \
        'BEGIN {printf "| %s | %.2f | %.2f | %.2f | %.0f | %.0f |\n", n, m, lo, hi, b * s / 1048576 / m, rss / 1024}'
}
{
    echo "### xfer-h5stream against h5copy: $mib MiB, $flavour, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "$rounds rounds, $(nproc) cores; xfer-h5stream: $steps step(s), output layout \"$layout\"."
    echo
    echo "| method | median s | min s | max s | MiB/s (median) | peak RSS MiB |"
    echo "|---|---:|---:|---:|---:|---:|"
    row "h5copy" res-h5copy 1
    row "h5copy + fsync" res-h5copy-sync 1
    for shape in $shapes; do
        row "xfer-h5stream $shape" "res-h5stream-$shape" "$steps"
    done
    echo
    echo "xfer-h5stream's phases (median s; max over the ranks of a side): the sender reads its"
    echo "slabs, then puts the steps; the receiver waits for the first step, then gets and writes"
    echo "(the first step included); the rate is the data over get + write."
    echo
    echo "| shape | send: read | send: put | recv: first step | recv: get | recv: write | recv: MiB/s |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for shape in $shapes; do
        printf "| %s |" "$shape"
        for c in 1 2 3 4 5; do
            printf " %.2f |" "$(awk -v c="$c" '{print $c}' "phases-$shape" | median)"
        done
        printf " %.0f |\n" "$(awk '{print $6}' "phases-$shape" | median)"
    done
} | tee ${out:+"$out"}
