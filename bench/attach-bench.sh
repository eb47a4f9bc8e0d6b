#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The cost of a reader's re-attach on the stream (docs/runtime.md, "Readers that attach late or
# come back"), not a unit test: tests/runtime/attach_test.sh kill, N times, on one MPI:
#   re-attach   from the second reader's entry into xfer_init (its announcement is made there,
#               right after it reads the workflow file) to its first step, ms;
#   going on    from the first reader's SIGKILL to the sender's first step not sent, ms (without
#               xferd: bounded by control.timeout_ms, 3000 ms in the test, when the MPI says
#               nothing; MPICH ch3 reports the dead peer at once).
# min / median / max of each, into bench/results/attach-<date>/<flavour>[-<mode>].txt.
#   bash bench/attach-bench.sh openmpi|mpich BUILD_DIR MPIEXEC [N [kill|spill]]
# spill: the same under on_reader_loss: spill, where the second reader's first step is the
# first one the sender replays (the steps since the loss come first).
set -euo pipefail
flavour=$1 build=$2 mpiexec=$3 n=${4:-10} mode=${5:-kill}
here=$(cd "$(dirname "$0")" && pwd)
out=$here/results/attach-$(date +%Y%m%d)
mkdir -p "$out"
tmp=$(mktemp -d /tmp/attach-bench-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/attach" && : >"$tmp/going"
for i in $(seq "$n"); do
    mkdir -p "$tmp/$i"
    ATTACH_SEED=$((1000 + i)) ATTACH_STEPS=120 ATTACH_OUT=$tmp/$i \
        bash "$here/../tests/runtime/attach_test.sh" "$mpiexec" "$build/tests/attach_prog" \
        "$flavour" "$mode" >"$tmp/$i/log" 2>&1 || { echo "run $i failed:"; tail -5 "$tmp/$i/log"; continue; }
    t0=$(sed -nE 's/^attach_prog: b: init at ([0-9]+) ms$/\1/p' "$tmp/$i/b9.out")
    t1=$(sed -nE 's/^attach_prog: b: first step at ([0-9]+) ms$/\1/p' "$tmp/$i/b9.out")
    k=$(sed -nE 's/^attach_prog: b rank 1: SIGKILL after step [0-9]+ at ([0-9]+) ms$/\1/p' "$tmp/$i/b1.out")
    g=$(sed -nE 's/^attach_prog: a: unsent from step [0-9]+ at ([0-9]+) ms$/\1/p' "$tmp/$i/a.out")
    echo $((t1 - t0)) >>"$tmp/attach"
    if [ -n "$g" ] && [ -n "$k" ]; then # (spill: a counts no step unsent before the replay)
        echo $((g - k)) >>"$tmp/going"
        echo "run $i: re-attach $((t1 - t0)) ms, going on $((g - k)) ms"
    else
        echo "run $i: re-attach $((t1 - t0)) ms"
    fi
done
stats() { sort -n "$1" | awk '{v[NR]=$1} END {if (NR) printf "min %d median %d max %d (n=%d)\n", v[1], v[int((NR+1)/2)], v[NR], NR}'; }
{
    echo "attach-bench $flavour $mode, $(date -u +%FT%TZ), $("$mpiexec" --version 2>&1 | head -1)"
    echo "command: bash bench/attach-bench.sh $flavour $build $mpiexec $n $mode"
    echo "re-attach (reader's xfer_init entry to its first step, ms): $(stats "$tmp/attach")"
    echo "going on (reader's SIGKILL to the sender's first unsent step, ms): $(stats "$tmp/going")"
} | tee "$out/$flavour$([ "$mode" = kill ] || echo "-$mode").txt"
