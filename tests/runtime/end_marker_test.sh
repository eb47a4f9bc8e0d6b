#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The disk fills between a file channel's last step and its end (tests/runtime/tests.cmake):
#   end_marker_test.sh XFER_RUN WORKFLOW.yaml STEPDIR
# The sender a stops itself (SIGSTOP, xfer-synth --fault) at the end of its last step; a tmpfs
# mounted on STEPDIR is then filled to the last byte and a is continued. Its end marker must
# still be written (the room was taken when the side started): the run ends with exit 0, b gets
# every step of both channels and the end of the file channel. Before the room was taken, a's
# end marker failed with ENOSPC, b waited for it for ever on the file channel while a waited for
# b on the stream channel (xfer-chaos seed 19, Open MPI). Exit 77 (skip) where mounting a tmpfs
# is not allowed.
set -u
xr=$1 cfg=$2 dir=$3
out=$(mktemp)
cleanup_more() {
    [ -n "${run_pid:-}" ] && kill -- "$run_pid" 2>/dev/null
    rm -f "$out"
}
# shellcheck source=disk_lib.sh
. "$(dirname "$0")/disk_lib.sh"
rm -rf "$dir"
mkdir -p "$dir"
mount_tmpfs "$dir" 1m

timeout -k 10 120 "$xr" --launch mpmd "$cfg" >"$out" 2>&1 &
run_pid=$!
# a's rank 0 stops at the end of its last step (it says so first)
for _ in $(seq 600); do
    grep -q "xfer-synth-fault component=a rank=0 signal=STOP" "$out" && break
    kill -0 "$run_pid" 2>/dev/null || break
    sleep 0.1
done
grep -q "xfer-synth-fault component=a rank=0 signal=STOP" "$out" || fail "a never stopped itself"
stopped=$(pgrep -f -- "--fault stop:0:2:end" | while read -r p; do
    [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = T ] && echo "$p"; done)
[ -n "$stopped" ] || fail "no stopped rank of a found"
# fill the disk to the last byte (dd ends with ENOSPC), then let a go on
dd if=/dev/zero of="$dir/filler" bs=4096 2>/dev/null
avail=$(df --output=avail -B1 "$dir" | tail -1 | tr -d ' ')
echo "disk filled: $avail bytes left"
[ "$avail" -eq 0 ] || fail "the disk is not full ($avail bytes left)"
for p in $stopped; do kill -CONT "$p"; done
wait "$run_pid"
rc=$?
run_pid=
sed 's/^/  out| /' "$out"
echo "exit $rc"
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || fail "the run did not end: xfer-run ran into the safety timeout (120 s)"
[ "$rc" -eq 0 ] || fail "xfer-run exited $rc"
grep -q "No space left" "$out" && fail "a write met the full disk"
for ch in c s; do
    for r in 0 1; do
        grep -qE "^\[b\] xfer-synth-result component=b rank=$r channel=$ch role=recv steps=3 got=3 end=(ok|eos)" "$out" ||
            fail "b rank $r did not get the 3 steps and the end of channel $ch"
    done
done
ls "$dir"/*/c/a.end >/dev/null 2>&1 || fail "a's end marker is not on the disk"
[ "$fails" -eq 0 ] && echo "PASS" || echo "$fails check(s) failed"
[ "$fails" -eq 0 ]
