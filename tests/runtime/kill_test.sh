#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# kill -9 of one component under xfer-run with xferd (tests/runtime/tests.cmake):
#   kill_test.sh XFER_RUN WORKFLOW.yaml VICTIM PEER BOUND_MS [SIGNAL [LAUNCH]]
# The workflow's VICTIM sends itself SIGNAL (KILL, the default: xfer-synth --kill-after; or
# STOP: --sigstop-after, a stall that silences its heartbeats too). Checks: xfer-run exits
# non-zero; PEER's pending call fails with XFER_ERR_PEER_FAILED naming VICTIM, within BOUND_MS
# of waiting (2 x the heartbeat timeout), not by the plain timeout; no process of the run is
# left once xfer-run has returned.
set -u
xr=$1 cfg=$2 victim=$3 peer=$4 bound=$5 sig=${6:-KILL} launch=${7:-separate}
. "$(dirname "$0")/check_lib.sh"

timeout -k 10 120 "$xr" --launch "$launch" "$cfg" >"$out" 2>&1
rc=$?
sed 's/^/  out| /' "$out"
[ "$rc" -ne 0 ] || fail "xfer-run exited 0"
[ "$rc" -ne 124 ] || fail "xfer-run ran into the safety timeout (120 s)"
grep -q "SIG$sig to myself" "$out" || fail "the victim did not send itself SIG$sig"
line=$(grep -E "^\[$peer\] .*XFER_ERR_PEER_FAILED: channel [a-z0-9_]+: component $victim failed \(xferd: .*\(after [0-9]+ ms\)$" "$out" | head -1)
if [ -z "$line" ]; then
    fail "no XFER_ERR_PEER_FAILED naming component $victim from $peer"
else
    ms=$(sed -E 's/.*\(after ([0-9]+) ms\)$/\1/' <<<"$line")
    echo "peer failure noticed after $ms ms of waiting (bound $bound ms)"
    [ "$ms" -le "$bound" ] || fail "the failure took $ms ms to reach $peer (bound $bound)"
fi
# xfer-run names the victim as the component that failed first (the peer's exit follows from it)
grep -Eq "^xfer-run: (error: )?component $victim failed" "$out" ||
    fail "xfer-run did not name $victim as the first failure"
# (the victim's own words do not count: a stopped victim resumed by the launcher's teardown,
# SIGCONT before SIGTERM, may report the control plane it lost while stopped)
grep -q "^\[$peer\] .*XFER_ERR_TIMEOUT" "$out" && fail "a plain timeout fired in $peer"
# nothing of this run may outlive xfer-run: look for its workflow file in every environment
left=""
for e in /proc/[0-9]*/environ; do
    if tr "\\0" "\\n" 2>/dev/null <"$e" | grep -qx "XFER_CONFIG=$cfg"; then
        p=${e#/proc/}
        left="$left ${p%/environ}"
    fi
done
[ -z "$left" ] || fail "processes left behind:$left"
[ "$fails" -eq 0 ] && echo "ok" || exit 1
