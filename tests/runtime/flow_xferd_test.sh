#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What xferd shows of a flow policy (tests/runtime/flow.cmake; docs/xferctl.md, "status"):
#   flow_xferd_test.sh XFER_RUN XFERD XFERCTL FLOW_PROG WORKDIR MODE [stream|file]
# MODE: latest (a reader that reads nothing until the sender ended every step: drops), stride,
# latest_stride, block. A daemon of the test's own (the workflow names its
# endpoint, so xfer-run leaves it running) serves one xfer-run of flow_prog (2 x 2 ranks, one
# MPMD launch). Then `xferctl status --json` must agree with what flow_prog printed: the last
# wire step is the steps a sent (with the one rank 0 held at its end, which xfer_finalize sends)
# less one, app_step0 the last step b received, dropped0 a's dropped, skipped0 the rest of a's
# steps, received1 b's received; the text status and `watch` show the same line; xferd killed
# (-9) and restarted from its journal shows the same, twice (the second replays the compacted
# snapshot). Under block none of it shows: neither the keys nor the text's section.
set -u
xr=$1 xferd=$2 ctl=$3 prog=$4 work=$5 mode=$6 transport=${7:-stream}
rm -rf "$work"
mkdir -p "$work"
fails=0
daemon=""
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
cleanup() {
    [ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
}
trap cleanup EXIT

case "$mode" in
latest)
    keys="    policy: latest"
    # (b reads nothing until a ended every step: a must drop)
    args='"--steps", "30", "--reader-waits", "--send-ms", "1", "--expect", "latest"'
    ;;
stride)
    keys="    stride: 3"
    args='"--steps", "11", "--expect", "stride:3"'
    ;;
latest_stride)
    keys=$'    policy: latest\n    stride: 2'
    args='"--steps", "21", "--send-ms", "1", "--recv-ms", "10", "--expect", "latest", "--stride", "2"'
    ;;
block)
    keys=""
    args='"--steps", "6", "--recv-ms", "5", "--expect", "block"'
    ;;
*)
    echo "unknown mode $mode"
    exit 2
    ;;
esac

(umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$work/token")
cat >"$work/wf.yaml" <<EOF
workflow: rt_flow_xferd
control: {endpoint: "ipc://$work/xferd.sock", token_file: "$work/token", timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, mpi_world: job, cmd: ["$prog", $args]}
  - {name: b, nprocs: 2, mpi_world: job, cmd: ["$prog", $args]}
channels:
  - name: c
    from: a
    to: b
    max_in_flight_steps: 2
${keys:+$keys
}    datasets:
      - {name: v, type: int64, dims: [16]}
EOF

start_daemon() {
    local deadline=$((SECONDS + 30))
    rm -f "$work/xferd.ready"
    "$xferd" --config "$work/wf.yaml" --run-dir "$work" --endpoint "ipc://$work/xferd.sock" \
        --token-file "$work/token" --ready-file "$work/xferd.ready" >>"$work/xferd.log" 2>&1 &
    daemon=$!
    until [ -s "$work/xferd.ready" ]; do
        if ! kill -0 "$daemon" 2>/dev/null || [ $SECONDS -ge $deadline ]; then
            cat "$work/xferd.log"
            fail "xferd not ready"
            exit 1
        fi
        sleep 0.05 # polling interval of this bounded wait
    done
}
xc() { "$ctl" --config "$work/wf.yaml" --timeout 5000 "$@"; }

start_daemon
targs=()
[ "$transport" = file ] && targs=(--transport file)
timeout -k 10 150 "$xr" --launch mpmd "${targs[@]}" --run-dir "$work/rd" "$work/wf.yaml" \
    >"$work/out" 2>&1
rc=$?
sed 's/^/  out| /' "$work/out"
[ "$rc" -eq 0 ] || fail "xfer-run exited $rc"

# flow_prog's own counts (the leaders': rank 0 of each side)
aline=$(grep -E "flow_prog: a rank 0: [0-9]+ steps in" "$work/out")
bline=$(grep -E "flow_prog: b rank 0: received" "$work/out")
[[ "$aline" =~ :\ ([0-9]+)\ steps\ in\ .*sent\ ([0-9]+),\ dropped\ ([0-9]+),\ held\ ([0-9]+) ]] ||
    { fail "no counts of a: $aline"; exit 1; }
n=${BASH_REMATCH[1]} sent=$((BASH_REMATCH[2] + BASH_REMATCH[4])) dropped=${BASH_REMATCH[3]}
[[ "$bline" =~ received\ ([0-9]+)\ steps,\ the\ last\ (-?[0-9]+) ]] ||
    { fail "no counts of b: $bline"; exit 1; }
received=${BASH_REMATCH[1]} last=${BASH_REMATCH[2]}
skipped=$((n - sent - dropped))
echo "flow_prog: a: $n steps, $sent sent, $dropped dropped, $skipped skipped; b: $received received, the last $last"

# status --json against those counts (python: no jq on the machine)
check_json() { # check_json WHAT RECOVERED
    xc status --json >"$work/status.json" 2>&1 || { fail "$1: status --json: $(cat "$work/status.json")"; return; }
    python3 - "$work/status.json" "$mode" "$sent" "$last" "$dropped" "$skipped" "$received" "$2" <<'EOF' ||
import json, sys
path, mode = sys.argv[1], sys.argv[2]
sent, last, dropped, skipped, received = map(int, sys.argv[3:8])
recovered = sys.argv[8] == "yes"
s = json.load(open(path))
c = s["channels"][0]
print("status:", {k: v for k, v in c.items() if k not in ("name", "from", "to")},
      "recovered", s["recovered"])
states = {x["name"]: x["state"] for x in s["components"]}
assert states == {"a": "done", "b": "done"}, states
assert s["recovered"] is recovered, s["recovered"]
assert c["step0"] == sent - 1 and c["released1"] == received, c
flow = ("app_step0", "dropped0", "skipped0", "received1")
if mode == "block":
    assert not any(k in c for k in flow), c
else:
    got = tuple(c.get(k) for k in flow)
    assert got == (last, dropped, skipped, received), (got, (last, dropped, skipped, received))
assert not any(k in c for k in ("app_step1", "dropped1", "skipped1", "received0")), c
EOF
        fail "$1: status --json disagrees with flow_prog"
}
check_text() { # check_text WHAT COMMAND...
    local what=$1
    shift
    xc "$@" >"$work/status.txt" 2>&1 || fail "$what: xferctl $*: exit $?"
    sed 's/^/  | /' "$work/status.txt"
    if [ "$mode" = block ]; then
        ! grep -q "flow policies" "$work/status.txt" || fail "$what: a flow section without a policy"
    else
        grep -q "^flow policies (1)$" "$work/status.txt" || fail "$what: no flow section"
        grep -qx "  c  a: step $((sent - 1)) (sender's $last), $dropped dropped, $skipped skipped; b: $received received" \
            "$work/status.txt" || fail "$what: the flow line is not the one expected"
    fi
}

check_json "after the run" no
check_text "status" status
check_text "watch" watch --count 1
[ "$mode" = block ] || [ "$sent" -eq "$received" ] || fail "a sent $sent, b received $received"
case "$mode" in
latest) [ "$dropped" -gt 0 ] || fail "nothing dropped although b read nothing until a ended" ;;
latest_stride) [ "$dropped" -gt 0 ] || echo "note: nothing dropped in this run" ;;
*) [ "$dropped" -eq 0 ] || fail "$dropped steps dropped without policy latest" ;;
esac
case "$mode" in
stride | latest_stride) [ "$skipped" -gt 0 ] || fail "a stride skipped nothing" ;;
*) [ "$skipped" -eq 0 ] || fail "$skipped steps skipped without a stride" ;;
esac

# kill -9 and a restart from the journal, twice (records, then the compacted snapshot)
for k in 1 2; do
    kill -9 "$daemon"
    wait "$daemon" 2>/dev/null
    start_daemon
    check_json "restart $k" yes
done
check_text "status after the restarts" status
xc stop >/dev/null 2>&1 || fail "xferctl stop"
wait "$daemon"
daemon=""
grep -E "refused" "$work/xferd.log" && fail "xferd refused a report"
[ "$fails" -eq 0 ] && echo "ok" || exit 1
