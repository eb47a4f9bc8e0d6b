#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What a receiver gets when its sender dies (docs/runtime.md): the producer's rank 0 kills
# itself right after committing step K-1 (xfer-synth --kill-after K); every consumer rank must
# have received steps 0 .. K-2 intact (xfer-synth checks them) and fail on the first step that
# did not arrive, K-1 or K, with XFER_ERR_PEER_FAILED naming the producer and that step, in a
# call that waits for a step, not in the release of a step it had (it used to: the previous
# step's xfer_step_end failed, 11 of 12 runs on Open MPI).
#   delivery_test.sh XFER_RUN WORKFLOW.yaml K
set -u
xr=$1 cfg=$2 k=$3
. "$(dirname "$0")/check_lib.sh"
timeout -k 10 120 "$xr" --launch separate "$cfg" >"$out" 2>&1
rc=$?
sed 's/^/  out| /' "$out"
[ "$rc" -ne 0 ] || fail "xfer-run exited 0"
[ "$rc" -ne 124 ] || fail "xfer-run ran into the safety timeout (120 s)"
n=0
while read -r line; do
    n=$((n + 1))
    call=$(sed -E 's/.*: step [0-9]+: (xfer_[a-z_]+)\(.*/\1/' <<<"$line")
    step=$(sed -E 's/.*: step ([0-9]+) did not reach b rank [0-9]+.*/\1/' <<<"$line")
    [ "$call" != xfer_step_end ] || fail "a release failed: $line"
    { [ "$step" -eq $((k - 1)) ] || [ "$step" -eq "$k" ]; } ||
        fail "step $step is not the first the producer may have lost ($((k - 1)) or $k): $line"
done < <(grep -E "^\[b\] xfer-synth: b rank [0-9]+: .*XFER_ERR_PEER_FAILED: channel c: component a failed \(xferd: [^)]*\): step [0-9]+ did not reach b rank" "$out")
[ "$n" -ge 1 ] || fail "no consumer rank reported the step it did not get"
grep -q "^\[b\] .*data differs\|^\[b\] .*hyperslab differs" "$out" && fail "wrong data"
[ "$fails" -eq 0 ] && echo "ok ($n consumer ranks named the step)" || exit 1
