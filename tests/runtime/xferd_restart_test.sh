#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xferd killed (SIGKILL) in the middle of a coupled run (tests/runtime/tests.cmake):
#   xferd_restart_test.sh XFER_RUN XFERCTL WORKFLOW.yaml WORKDIR
# xfer-run restarts the daemon from its journal; the new daemon knows both components and the
# channel's progress (status says recovered), the components keep their sessions (their
# heartbeats and reports are accepted: nobody is declared failed) and the run ends with 0.
set -u
xr=$1 ctl=$2 cfg=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
rd=$work/rd
out=$work/out
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
# status JSON -> "name=state ..." and the channel's steps, via python (no jq on the machine)
summary() {
    "$ctl" --config "$cfg" --run-dir "$rd" --timeout 2000 status --json 2>/dev/null |
        python3 -c 'import json,sys
s=json.load(sys.stdin)
print(" ".join("%s=%s" % (c["name"], c["state"]) for c in s["components"]),
      "recovered=%s" % s["recovered"], "step0=%s" % s["channels"][0]["step0"])'
}
# wait_for PATTERN SECONDS: until the status summary matches
wait_for() {
    local deadline=$((SECONDS + $2)) s=""
    while [ $SECONDS -lt $deadline ]; do
        s=$(summary)
        if [[ "$s" =~ $1 ]]; then
            echo "status: $s"
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2 # polling interval of this bounded wait
    done
    fail "status never matched /$1/ (last: $s)"
    return 1
}

timeout -k 10 120 "$xr" --run-dir "$rd" "$cfg" >"$out" 2>&1 &
pid=$!
if wait_for "a=running b=running recovered=False step0=([3-9]|[1-9][0-9])" 60; then
    daemon=$(pgrep -f "xferd --config $cfg" | head -1)
    if [ -z "$daemon" ]; then
        fail "no xferd process found"
    else
        kill -9 "$daemon"
        echo "killed xferd (pid $daemon)"
        wait_for "a=running b=running recovered=True step0=([3-9]|[1-9][0-9])" 30
    fi
fi
wait "$pid"
rc=$?
sed 's/^/  out| /' "$out"
[ "$rc" -eq 0 ] || fail "xfer-run exited $rc"
grep -q "xferd exited early (exit code 137); restarting it from its journal" "$out" ||
    fail "xfer-run did not restart xferd"
grep -q "recovered from" "$out" || fail "the new xferd did not read the journal"
grep -Eq "failed|PEER_FAILED" "$out" && fail "something was declared failed"
[ "$fails" -eq 0 ] && echo "ok" || exit 1
