#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A file-transport workflow whose step files go to a disk that fills up mid-run
# (tests/runtime/tests.cmake):
#   full_disk_test.sh XFER_RUN WORKFLOW.yaml STEPDIR MODE BYTES STEPS
# MODE shim: the disk is the LD_PRELOAD library full_disk.so (the path in FULL_DISK_SHIM), BYTES
# big, no privileges needed (SHIM_NO_FALLOCATE=1: a file system that cannot reserve, so the disk
# fills inside HDF5's collective writes); MODE tmpfs: a tmpfs of BYTES mounted on STEPDIR (exit
# 77, a skip, where mounting is not allowed). The workflow's sender a writes more steps than fit.
# Checks: the run ends (no hang) with a non-zero exit; a's ranks fail with XFER_ERR_IO naming the
# full disk and what to do; the receiver b ends too, with the sender's failure; in shim mode the
# disk fills at step STEPS, exactly: steps 0..STEPS-1 are on disk, complete, and b received each
# of them intact (xfer-synth compares every element and fails at the first difference), failing
# only at step STEPS.
set -u
xr=$1 cfg=$2 dir=$3 mode=$4 bytes=$5 steps=$6
out=$(mktemp)
counter=$(mktemp)
cleanup_more() {
    rm -f "$out" "$counter"
}
# shellcheck source=disk_lib.sh
. "$(dirname "$0")/disk_lib.sh"

rm -rf "$dir"
mkdir -p "$dir"
env=()
if [ "$mode" = tmpfs ]; then
    mount_tmpfs "$dir" "$bytes"
else
    truncate -s 8192 "$counter"
    env=(XFER_TEST_FULL_DIR="$dir" XFER_TEST_FULL_BYTES="$bytes" XFER_TEST_FULL_COUNTER="$counter"
        XFER_TEST_FULL_NO_FALLOCATE="${SHIM_NO_FALLOCATE:-0}"
        LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$FULL_DISK_SHIM")
fi

t0=$(date +%s)
env "${env[@]}" timeout -k 10 120 "$xr" --launch separate "$cfg" >"$out" 2>&1
rc=$?
t1=$(date +%s)
sed 's/^/  out| /' "$out"
echo "exit $rc after $((t1 - t0)) s"
[ "$rc" -ne 0 ] || fail "xfer-run exited 0: the disk did not fill"
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || fail "the run did not end: xfer-run ran into the safety timeout (120 s)"
grep -q "Segmentation fault\|signal 11" "$out" && fail "a process crashed"

# the sender: its ranks fail with XFER_ERR_IO, naming the step, its file and the remedy (the
# launcher may stop the other ranks of a before they print theirs once the first one exits)
pat="^\[a\] xfer-synth: a rank [0-9]+: step ([0-9]+): xfer_step_end\(chs\[i\]\.h\): XFER_ERR_IO: channel c: step [0-9]+: writing [^ ]*/a\.[0-9]{6}\.h5 \(datasets x, y\): .*free space there, or point the channel's file\.dir \(or XFER_TRANSPORT_DIR\) at a file system with room"
nranks=$(grep -cE "$pat" "$out")
[ "$nranks" -ge 1 ] || fail "no rank of a failed with XFER_ERR_IO naming the step's file and the remedy"
grep -E "^\[a\] xfer-synth: a rank" "$out" | grep -vqE "$pat" &&
    fail "a rank of a failed otherwise"
if [ "$mode" = tmpfs ] || [ "${SHIM_NO_FALLOCATE:-0}" != 1 ]; then
    grep -E "$pat" "$out" | grep -q "No space left on device" ||
        fail "a's error does not name the cause (No space left on device)"
fi
failed_at=$(grep -E "$pat" "$out" | head -1 | sed -E "s/$pat.*/\\1/")
# the receiver ends too, with the sender's failure (xferd) or the end of its stream
grep -qE "^\[b\] xfer-synth: b rank [0-9]+: .*(XFER_ERR_PEER_FAILED: channel c: component a failed|XFER_ERR_END_OF_STREAM)" "$out" ||
    fail "b did not end with a's failure"
grep -q "^\[b\] .*differs" "$out" && fail "b received data that differs from what a sent"

if [ -n "$failed_at" ]; then
    echo "the disk filled at step $failed_at"
    if [ "$mode" = shim ]; then
        [ "$failed_at" -eq "$steps" ] || fail "the disk filled at step $failed_at, not $steps: not deterministic"
    fi
    # the steps before the fault are on disk, whole; the failed one left nothing
    steps_dir=$(find "$dir" -name a.run -printf '%h\n' | head -1)
    for ((k = 0; k < failed_at; k++)); do
        f=$(printf '%s/a.%06d.h5' "$steps_dir" "$k")
        [ -s "$f" ] || fail "step $k is missing: $f"
    done
    f=$(printf '%s/a.%06d.h5' "$steps_dir" "$failed_at")
    [ -e "$f" ] || [ -e "$f.tmp" ] && fail "the failed step $failed_at left a file"
    # b got every step before the fault: it failed at the first step not written
    got=$(grep -E "^\[b\] xfer-synth: b rank [0-9]+: step [0-9]+: " "$out" | sed -E 's/.* step ([0-9]+): .*/\1/' | sort -n | head -1)
    [ "$got" = "$failed_at" ] || fail "b failed at step ${got:-?}, not at the first step a did not write ($failed_at)"
fi
[ "$fails" -eq 0 ] && echo "ok" || exit 1
