#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What libxfer_world.so (mpi_world: component) costs per MPI call: one MPMD launch of two
# components of P ranks each, every component timing MPI_Allreduce of 8 bytes and MPI_Sendrecv
# of 1 MiB round a ring on its own processes (tools/xfer-worldbench.c), two ways, interleaved:
#   world  on MPI_COMM_WORLD under the interposer (the component's world)
#   split  on a communicator the program splits by MPI_APPNUM itself, no interposer
# Each job prints each component's median/min/max per call over its repetitions; the table
# gives, per way, the median over jobs and components of those medians.
#   bash bench/world-bench.sh [--flavour mpich|openmpi] [--ranks 2] [--jobs 6] [--calls 2000]
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=mpich ranks=2 jobs=6 calls=2000
while (($#)); do
    case "$1" in
    --flavour) flavour=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    *) echo "world-bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
b=build/$flavour
[ -x "$b/tools/xfer-worldbench" ] && [ -e "$b/libxfer/libxfer_world.so" ] || bash scripts/build.sh "$flavour" >&2
wb=$b/tools/xfer-worldbench lib=$(readlink -f "$b/libxfer/libxfer_world.so")
out=$(mktemp -d /tmp/world-bench.XXXXXX)
ctx() { # ctx INDEX MODE: one application context's flags and command (words)
    local pre="" e
    [ "$2" = world ] && pre=$lib
    if [ "$flavour" = mpich ] && [ -e "$b/tools/libxfer_ucx_yield.so" ]; then
        pre=$(readlink -f "$b/tools/libxfer_ucx_yield.so")${pre:+:$pre}
    fi
    for e in ${pre:+LD_PRELOAD=$pre} XFER_MPI_WORLD=$([ "$2" = world ] && echo component || echo off) \
        XFER_WORLD_COLOR=$1; do
        if [ "$flavour" = openmpi ]; then printf -- '-x %s ' "$e"; else printf -- '-env %s %s ' "${e%%=*}" "${e#*=}"; fi
    done
    printf -- '-n %s %s --comm %s --calls %s' "$ranks" "$wb" "$2" "$calls"
}
if [ "$flavour" = openmpi ]; then
    launcher=(mpiexec --oversubscribe)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
else
    launcher=(mpiexec.mpich)
fi
echo "world-bench: $flavour, 2 components x $ranks ranks, $jobs jobs per way, load $(cut -d' ' -f1-3 /proc/loadavg)"
for j in $(seq 1 "$jobs"); do
    for way in world split; do
        # shellcheck disable=SC2046 # the contexts' words
        "${launcher[@]}" $(ctx 0 $way) : $(ctx 1 $way) >>"$out/$way.txt"
    done
done
/usr/bin/python3 - "$out" <<'PY'
import statistics, sys, re
d = sys.argv[1]
rows = {}
for way in ("split", "world"):
    ar, sr, cr = [], [], []
    for l in open(f"{d}/{way}.txt"):
        m = re.search(r"allreduce8_us median=([0-9.]+).*sendrecv1MiB_us median=([0-9.]+)"
                      r".*comm_rank_ns median=[0-9.]+ min=([0-9.]+)", l)
        if m:
            ar.append(float(m.group(1))); sr.append(float(m.group(2))); cr.append(float(m.group(3)))
    rows[way] = (statistics.median(ar), min(ar), max(ar), statistics.median(sr), min(sr), max(sr),
                 statistics.median(cr), min(cr), max(cr), len(ar))
print("| way | MPI_Allreduce 8 B, us per call: median (min-max) | MPI_Sendrecv 1 MiB, us per call "
      "| MPI_Comm_rank, ns per call (fastest repetition) | samples |")
print("|---|---:|---:|---:|---:|")
for way, r in rows.items():
    print("| %s | %.3f (%.3f-%.3f) | %.1f (%.1f-%.1f) | %.2f (%.2f-%.2f) | %d |" % ((way,) + r))
s, w = rows["split"], rows["world"]
print("interposition: %+.3f us per MPI_Allreduce (%+.1f %%), %+.1f us per MPI_Sendrecv of 1 MiB "
      "(%+.1f %%), %+.2f ns per MPI_Comm_rank"
      % (w[0] - s[0], 100 * (w[0] - s[0]) / s[0], w[3] - s[3], 100 * (w[3] - s[3]) / s[3],
         w[6] - s[6]))
PY
echo "raw: $out"
