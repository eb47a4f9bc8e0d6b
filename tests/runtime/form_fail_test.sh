#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A component that dies before it forms its channel, under xfer-run with xferd
# (tests/runtime/tests.cmake):
#   form_fail_test.sh XFER_RUN WORKFLOW.yaml VICTIM PEER BOUND_S
# VICTIM exits at once (it never calls xfer_init); PEER waits for it on the channel, in
# MPI_Comm_accept (PEER is the channel's `from`) or for its port (PEER is its `to`). Checks:
# xfer-run exits non-zero; PEER says that VICTIM failed (xferd's verdict) with
# XFER_ERR_PEER_FAILED, and no plain timeout fired; the run ends within BOUND_S seconds, well
# inside the workflow's control.timeout_ms.
set -u
xr=$1 cfg=$2 victim=$3 peer=$4 bound=$5
. "$(dirname "$0")/check_lib.sh"

start=$SECONDS
timeout -k 10 120 "$xr" --launch separate "$cfg" >"$out" 2>&1
rc=$?
took=$((SECONDS - start))
sed 's/^/  out| /' "$out"
[ "$rc" -ne 0 ] || fail "xfer-run exited 0"
[ "$rc" -ne 124 ] || fail "xfer-run ran into the safety timeout (120 s)"
grep -Eq "^\[$peer\] .*(XFER_ERR_PEER_FAILED.*component $victim failed|component $victim failed.*XFER_ERR_PEER_FAILED)" "$out" ||
    fail "$peer did not say that component $victim failed (XFER_ERR_PEER_FAILED, xferd's verdict)"
grep -q "^\[$peer\] .*XFER_ERR_TIMEOUT" "$out" && fail "a plain timeout fired in $peer"
echo "the run ended after $took s (bound $bound s)"
[ "$took" -le "$bound" ] || fail "the run took $took s (bound $bound s)"
[ "$fails" -eq 0 ] && echo "ok" || exit 1
