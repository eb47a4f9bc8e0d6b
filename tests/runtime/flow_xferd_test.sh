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
# MODE midrun (stride 2, a run of about 5 s): xfer-run's own daemon, killed (-9) once
# the flow shows; xfer-run restarts it from its journal, which must show the flow again
# (recovered) and go on counting; after the run a daemon started on that journal must show the
# final counts as above.
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
midrun) # (steps that flow steadily: under latest a slow reader gets few, see docs/runtime.md)
    keys="    stride: 2"
    args='"--steps", "200", "--send-ms", "25", "--expect", "stride:2"'
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

# the daemon's directory (journal, token, socket): the test's own, or xfer-run's run directory
rd=$work
control="{endpoint: \"ipc://$work/xferd.sock\", token_file: \"$work/token\", timeout_ms: 60000}"
if [ "$mode" = midrun ]; then
    rd=$work/rd
    control="{heartbeat_ms: 500, timeout_ms: 60000}"
else
    (umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$work/token")
fi
cat >"$work/wf.yaml" <<EOF
workflow: rt_flow_xferd
control: $control
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
    "$xferd" --config "$work/wf.yaml" --run-dir "$rd" --endpoint "ipc://$rd/xferd.sock" \
        --token-file "$rd/token" --ready-file "$work/xferd.ready" >>"$work/xferd.log" 2>&1 &
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
xc() { "$ctl" --config "$work/wf.yaml" --run-dir "$rd" --timeout 5000 "$@"; }

# midrun: the channel's step0, app_step0, dropped0 and skipped0 and whether recovered, while
# xfer-run runs
midrun_summary() {
    xc --timeout 2000 status --json 2>/dev/null | python3 -c 'import json,sys
s=json.load(sys.stdin); c=s["channels"][0]
print("recovered=%s step0=%s app_step0=%s dropped0=%s skipped0=%s" % (s["recovered"], c["step0"],
      c.get("app_step0"), c.get("dropped0"), c.get("skipped0")))'
}
midrun_wait() { # midrun_wait PATTERN SECONDS [APP_STEP]: app_step0 beyond APP_STEP as well
    local deadline=$((SECONDS + $2)) s=""
    while [ $SECONDS -lt $deadline ]; do
        s=$(midrun_summary)
        if [[ "$s" =~ $1 ]] && { [ -z "${3:-}" ] || [ "${BASH_REMATCH[1]}" -gt "$3" ]; }; then
            echo "status: $s"
            return 0
        fi
        kill -0 "$xrpid" 2>/dev/null || break
        sleep 0.1 # polling interval of this bounded wait
    done
    fail "status never matched /$1/ (last: $s)"
    return 1
}

[ "$mode" = midrun ] || start_daemon
targs=()
# the step files in the test's own directory, not ./xfer-steps of ctest's working directory,
# which file.latest and file.stride share (same workflow and channel names) under ctest -j
[ "$transport" = file ] && targs=(--transport file) && export XFER_TRANSPORT_DIR="$work/steps"
timeout -k 10 150 "$xr" --launch mpmd "${targs[@]}" --run-dir "$work/rd" "$work/wf.yaml" \
    >"$work/out" 2>&1 &
xrpid=$!
if [ "$mode" = midrun ]; then
    if midrun_wait "recovered=False step0=[0-9]+ app_step0=([0-9]+) " 60 3; then
        pid=$(pgrep -f "xferd --config $work/wf.yaml" | head -1)
        if [ -z "$pid" ]; then
            fail "no xferd process found"
        else
            before=$(midrun_summary)
            kill -9 "$pid"
            echo "killed xferd (pid $pid) at: $before"
            # the new daemon shows the flow from its journal, and it goes on counting
            [[ "$before" =~ app_step0=([0-9]+) ]] && b=${BASH_REMATCH[1]}
            midrun_wait "recovered=True step0=[0-9]+ app_step0=([0-9]+) " 30 "${b:-0}"
        fi
    fi
fi
wait "$xrpid"
rc=$?
sed 's/^/  out| /' "$work/out"
[ "$rc" -eq 0 ] || fail "xfer-run exited $rc"
if [ "$mode" = midrun ]; then
    grep -q "restarting it from its journal" "$work/out" || fail "xfer-run did not restart xferd"
    start_daemon # on xfer-run's journal: the run's final counts
fi

# flow_prog's own counts (the leaders': rank 0 of each side)
aline=$(grep -E "flow_prog: a rank 0: channel 0: [0-9]+ steps in" "$work/out")
bline=$(grep -E "flow_prog: b rank 0: channel 0: received" "$work/out")
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
assert s["recovered"] is recovered or mode == "midrun", s["recovered"]
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
stride | latest_stride | midrun) [ "$skipped" -gt 0 ] || fail "a stride skipped nothing" ;;
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
