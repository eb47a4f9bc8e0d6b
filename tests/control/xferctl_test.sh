#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xferctl and xferd-load against a real xferd (tests/control/xferctl.cmake).
#   xferctl_test.sh CASE XFERD XFERCTL XFERD_LOAD
# CASE: status json denied unreachable watch watch_end stop load
# Each case starts its own xferd in a fresh run directory (token: 64 hex digits, mode 0600),
# waits for its ready file (bounded), and stops it at the end.
set -uo pipefail

case_="${1:?usage: xferctl_test.sh CASE XFERD XFERCTL XFERD_LOAD}"
XFERD="${2:?}"
XFERCTL="${3:?}"
LOAD="${4:?}"
READY_WAIT_S=30 # bound on xferd's start (a sanitizer build is slow)
STOP_WAIT_S=30  # bound on xferd's exit after stop

dir=$(mktemp -d "${TMPDIR:-/tmp}/xferctl-test.XXXXXX") || exit 1
daemon_pid=""
failed=0

cleanup() {
    if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
        kill -TERM "$daemon_pid" 2>/dev/null
        wait "$daemon_pid" 2>/dev/null
    fi
    if ((failed)) && [ -f "$dir/xferd.log" ]; then
        echo "---- xferd log (last 40 lines) ----"
        tail -n 40 "$dir/xferd.log"
    fi
    rm -rf "$dir"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*"
    failed=1
    exit 1
}

# expect_in FILE REGEX: fail, showing FILE, unless a line matches
expect_in() {
    grep -Eq -- "$2" "$1" || {
        echo "---- $1 ----"
        cat "$1"
        fail "expected /$2/ in the output above"
    }
}

ms_now() { date +%s%3N; }

new_token() { # new_token FILE
    (umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$1")
    [ "$(wc -c <"$1")" -eq 64 ] || fail "token file $1 is not 64 hex digits"
}

# A workflow of three components and one channel: c0 and c1 register, c2 stays waiting.
write_small_config() {
    cat >"$dir/wf.yaml" <<'EOF'
workflow: ctl_test
control: {heartbeat_ms: 500, heartbeat_timeout_ms: 120000}
components:
  - {name: c0, nprocs: 1, cmd: ["true"]}
  - {name: c1, nprocs: 1, cmd: ["true"]}
  - {name: c2, nprocs: 3, cmd: ["true"]}
channels:
  - name: fields
    from: c0
    to: c1
    datasets:
      - {name: U, type: float64, dims: [16, 16]}
EOF
}

start_daemon() {
    local t0
    new_token "$dir/token"
    "$XFERD" --config "$dir/wf.yaml" --run-dir "$dir" --endpoint "ipc://$dir/xferd.sock" \
        --token-file "$dir/token" --ready-file "$dir/xferd.ready" >"$dir/xferd.log" 2>&1 &
    daemon_pid=$!
    t0=$(ms_now)
    while [ ! -s "$dir/xferd.ready" ]; do
        kill -0 "$daemon_pid" 2>/dev/null || {
            wait "$daemon_pid"
            fail "xferd exited with $? before it was ready"
        }
        (($(ms_now) - t0 < READY_WAIT_S * 1000)) || fail "xferd not ready within ${READY_WAIT_S} s"
        sleep 0.05
    done
    echo "xferd (pid $daemon_pid) ready at $(cat "$dir/xferd.ready") after $(($(ms_now) - t0)) ms"
}

# Wait (bounded) for xferd to exit; sets daemon_rc.
wait_daemon_exit() {
    local t0
    t0=$(ms_now)
    while kill -0 "$daemon_pid" 2>/dev/null; do
        (($(ms_now) - t0 < STOP_WAIT_S * 1000)) || fail "xferd still running ${STOP_WAIT_S} s after stop"
        sleep 0.05
    done
    wait "$daemon_pid"
    daemon_rc=$?
    daemon_pid=""
}

ctl() { "$XFERCTL" --config "$dir/wf.yaml" --run-dir "$dir" "$@"; }

register_two() {
    "$LOAD" --config "$dir/wf.yaml" --endpoint "ipc://$dir/xferd.sock" --token-file "$dir/token" \
        --clients 2 --polls 1 --threads 1 >"$dir/load.out" 2>&1 || {
        cat "$dir/load.out"
        fail "xferd-load --clients 2 failed"
    }
}

stop_daemon() {
    ctl stop >"$dir/stop.out" 2>&1 || {
        cat "$dir/stop.out"
        fail "xferctl stop failed"
    }
    wait_daemon_exit
}

case "$case_" in
status)
    write_small_config
    start_daemon
    register_two
    ctl status >"$dir/out" 2>&1 || fail "xferctl status exited with $?: $(cat "$dir/out")"
    cat "$dir/out"
    expect_in "$dir/out" '^workflow ctl_test +uptime [0-9.]+s +recovered no'
    expect_in "$dir/out" '^components \(3\)'
    expect_in "$dir/out" 'COMPONENT +NPROCS +STATE +PID +HOST +LAST SEEN'
    expect_in "$dir/out" "^  c0 +1 +running +[0-9]+ +$(hostname) +[0-9.]+s ago"
    expect_in "$dir/out" '^  c1 +1 +running '
    expect_in "$dir/out" '^  c2 +3 +waiting +- +- +never'
    expect_in "$dir/out" '^channels \(1\)'
    expect_in "$dir/out" '^  fields +c0 -> c1 +no +- / - +0 / 0 +0 B +0.00 MB/s'
    expect_in "$dir/out" '^failures: none'
    stop_daemon
    ;;
json)
    write_small_config
    start_daemon
    register_two
    ctl status --json >"$dir/out.json" 2>"$dir/err" || fail "status --json exited with $?: $(cat "$dir/err")"
    python3 -m json.tool "$dir/out.json" >/dev/null || fail "status --json is not valid JSON: $(cat "$dir/out.json")"
    python3 - "$dir/out.json" <<'EOF' || fail "unexpected JSON content"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] is True and r["workflow"] == "ctl_test", r
states = {c["name"]: c["state"] for c in r["components"]}
assert states == {"c0": "running", "c1": "running", "c2": "waiting"}, states
assert [c["name"] for c in r["channels"]] == ["fields"], r["channels"]
print("json ok:", states)
EOF
    stop_daemon
    ;;
denied)
    write_small_config
    start_daemon
    new_token "$dir/wrong"
    ctl --token-file "$dir/wrong" status >"$dir/out" 2>&1
    rc=$?
    cat "$dir/out"
    [ "$rc" -eq 4 ] || fail "wrong token: exit $rc, expected 4"
    expect_in "$dir/out" '^xferctl: xferd at ipc://.* refused "status": .*token'
    ctl --workflow other status >"$dir/out" 2>&1
    rc=$?
    cat "$dir/out"
    [ "$rc" -eq 4 ] || fail "wrong workflow: exit $rc, expected 4"
    chmod 644 "$dir/wrong"
    ctl --token-file "$dir/wrong" status >"$dir/out" 2>&1
    rc=$?
    cat "$dir/out"
    [ "$rc" -eq 2 ] || fail "token file readable by others: exit $rc, expected 2"
    expect_in "$dir/out" 'chmod 600'
    stop_daemon
    ;;
unreachable)
    write_small_config
    new_token "$dir/token"
    t0=$(ms_now)
    ctl --timeout 700 status >"$dir/out" 2>&1
    rc=$?
    el=$(($(ms_now) - t0))
    cat "$dir/out"
    echo "exit $rc after $el ms"
    [ "$rc" -eq 3 ] || fail "unreachable: exit $rc, expected 3"
    ((el >= 650 && el < 5000)) || fail "unreachable: took $el ms with --timeout 700"
    expect_in "$dir/out" "^xferctl: no answer from xferd at ipc://$dir/xferd.sock within 700 ms \(is the workflow running\?\)"
    ;;
watch)
    write_small_config
    start_daemon
    register_two
    ctl watch --interval 200 --count 2 >"$dir/out" 2>&1 || fail "watch exited with $?: $(cat "$dir/out")"
    cat "$dir/out"
    [ "$(grep -c '^workflow ctl_test' "$dir/out")" -eq 2 ] || fail "watch --count 2: expected 2 tables"
    [ "$(grep -c '^-----' "$dir/out")" -eq 1 ] || fail "watch: expected one separator line"
    stop_daemon
    ;;
watch_end)
    # watch ends with 0 when the daemon goes away after having answered
    write_small_config
    start_daemon
    ctl --timeout 1000 watch --interval 100 >"$dir/out" 2>&1 &
    watch_pid=$!
    t0=$(ms_now)
    until grep -q '^workflow ctl_test' "$dir/out" 2>/dev/null; do
        (($(ms_now) - t0 < 10000)) || fail "watch printed no table within 10 s"
        sleep 0.05
    done
    stop_daemon
    t0=$(ms_now)
    while kill -0 "$watch_pid" 2>/dev/null; do
        (($(ms_now) - t0 < 10000)) || fail "watch still running 10 s after xferd stopped"
        sleep 0.05
    done
    wait "$watch_pid"
    rc=$?
    tail -n 3 "$dir/out"
    [ "$rc" -eq 0 ] || fail "watch: exit $rc after xferd stopped, expected 0"
    expect_in "$dir/out" 'stopped answering|shutting down'
    ;;
stop)
    write_small_config
    start_daemon
    register_two
    ctl stop >"$dir/out" 2>&1
    rc=$?
    cat "$dir/out"
    [ "$rc" -eq 0 ] || fail "stop: exit $rc"
    expect_in "$dir/out" '^xferd stopped$'
    wait_daemon_exit
    echo "xferd exited with $daemon_rc"
    [ "$daemon_rc" -eq 0 ] || fail "xferd exited with $daemon_rc after stop, expected 0"
    [ ! -e "$dir/xferd.sock" ] || echo "note: xferd left its socket $dir/xferd.sock behind"
    ;;
load)
    n="${XFERD_LOAD_CLIENTS:-500}"
    polls="${XFERD_LOAD_POLLS:-10}"
    "$LOAD" --make-config "$dir/wf.yaml" "$n" || fail "--make-config"
    start_daemon
    cmd=("$LOAD" --config "$dir/wf.yaml" --endpoint "ipc://$dir/xferd.sock"
        --token-file "$dir/token" --clients "$n" --polls "$polls")
    echo "${cmd[*]}"
    "${cmd[@]}" >"$dir/out" 2>&1
    rc=$?
    cat "$dir/out"
    echo "xferd $(grep -E '^(VmHWM|Threads)' "/proc/$daemon_pid/status" | tr -s ' \t' ' ' |
        paste -sd, -)"
    [ "$rc" -eq 0 ] || fail "xferd-load exited with $rc"
    expect_in "$dir/out" '^lost registrations: 0$'
    stop_daemon
    [ "$daemon_rc" -eq 0 ] || fail "xferd exited with $daemon_rc after stop"
    ;;
*)
    fail "unknown case $case_"
    ;;
esac
echo "PASS: $case_"
