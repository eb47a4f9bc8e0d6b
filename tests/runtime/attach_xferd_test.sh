#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Readers that attach late or come back on the stream WITH xferd (docs/runtime.md, "Readers that
# attach late or come back"), through xfer-run as a user runs it:
#   attach_xferd_test.sh XFER_RUN ATTACH_PROG openmpi|mpich late|kill
# Component a (2 ranks) sends channel c to b (2 ranks), on_reader_loss: continue, S steps; the run
# is launched with `xfer-run --without b` (its own xferd).
#   late   once a ended step L (seed), `xfer-run --attach b` starts b: it gets strictly
#          increasing steps from its attach step to S-1, byte for byte, and a's rank 0 says where
#          it attached (xferd offered b's port: the attach request);
#   kill   b attached as in late has its rank 1 killed with SIGKILL after its K-th step (seed);
#          xferd declares it failed (its xfer-run reports the exit), a goes on detached within
#          the heartbeat timeout (no rank waits out control.timeout_ms: it is 60 s here); then
#          `xfer-run --attach b` again: the new incarnation is alive in xferd's eyes and gets
#          every step from its attach step to S-1. a ends all S steps, the run exits 0.
# The seed is printed (ATTACH_SEED repeats it). No sleep stands in for an event: each launch
# waits (polled, bounded) for a line of the run's output or for the previous launch to end.
set -u
xrun=$1 prog=$2 flavour=$3 mode=$4
steps=${ATTACH_STEPS:-150}
seed=${ATTACH_SEED:-$((RANDOM % 10000))}
echo "seed $seed (ATTACH_SEED=$seed repeats it); $mode, $steps steps, $flavour, with xferd"
dir=$(mktemp -d /tmp/attach-xferd-XXXXXX)
runpid=""
cleanup() {
    [ -n "$runpid" ] && kill -TERM "$runpid" 2>/dev/null
    [ -n "${ATTACH_OUT:-}" ] && cp "$dir"/*.out "$ATTACH_OUT"/ 2>/dev/null # (bench/attach-bench.sh)
    rm -rf "$dir"
}
trap cleanup EXIT
fails=0
fail() {
    echo "FAIL (seed $seed): $*"
    fails=$((fails + 1))
}
# control.timeout_ms is long: a loss that needed it would show in the time a takes
cat >"$dir/w.yaml" <<YAML
workflow: rt_attach_xferd
control: {timeout_ms: 60000, heartbeat_ms: 250, heartbeat_timeout_ms: 2000}
components:
  - {name: a, nprocs: 2, cmd: [$prog, --steps, $steps, --send-ms, 20]}
  - {name: b, nprocs: 2, cmd: [$prog, --kill-file, $dir/kill]}
channels:
  - name: c
    from: a
    to: b
    max_in_flight_steps: 2
    on_reader_loss: continue
    transport: stream
    datasets: [{name: v, type: int64, dims: [16]}]
YAML
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
unset XFER_CONTROL_ENDPOINT XFER_ON_READER_LOSS XFER_POLICY XFER_STRIDE XFER_CONFIG XFER_RUN_DIR
t0=$(date +%s%N)
timeout -k 5 240 "$xrun" -q --without b --run-dir "$dir/run" "$dir/w.yaml" >"$dir/a.out" 2>&1 &
runpid=$!
# wait (bounded) until the run's output has line $1, or the run ended
wait_line() {
    local i
    for i in $(seq 12000); do
        grep -q "$1" "$dir/a.out" 2>/dev/null && return 0
        kill -0 "$runpid" 2>/dev/null || { grep -q "$1" "$dir/a.out"; return; }
        sleep 0.01 # (poll interval: a file another process writes)
    done
    return 1
}
reader() { # $1: its name
    timeout -k 5 200 "$xrun" -q --attach b --run-dir "$dir/run" "$dir/w.yaml" >"$dir/$1.out" 2>&1
    local rc=$?
    echo "$1: exit $rc"
    sed "s/^/  $1| /" "$dir/$1.out" | grep -v "got step" | head -40
    return $rc
}
check_reader() {
    local name=$1 from n
    from=$(sed -nE 's/^attach_prog: b: got step ([0-9]+)$/\1/p' "$dir/$name.out" | head -1)
    [ -n "$from" ] || { fail "$name got no step"; return; }
    n=$(grep -c "^attach_prog: b: got step" "$dir/$name.out")
    grep -q "^attach_prog: b rank 0: $n steps, first $from, last $((steps - 1)), steps_received $n$" \
        "$dir/$name.out" || fail "$name: not every step from $from to $((steps - 1)) ($n got)"
    grep -q "^attach_prog: b rank 1: $n steps, first $from, last $((steps - 1)), steps_received $n$" \
        "$dir/$name.out" || fail "$name: rank 1 did not get what rank 0 got"
    [ "$(attached_at "$2")" = "$from" ] ||
        fail "$name's first step $from is not the one a attached it at ($(attached_at "$2"))"
    echo "$name got steps $from..$((steps - 1)) ($n)"
}
attached_at() { # the step a's rank 0 says the $1-th attach happened at
    sed -nE 's/^libxfer: channel c: reader b attached at step ([0-9]+) \(start: latest\)$/\1/p' \
        "$dir/a.out" | sed -n "${1}p"
}
at=$((5 + seed % 30))
wait_line "^attach_prog: a: step $at ended" || fail "a did not reach step $at"
case $mode in
late)
    reader b1 || fail "b1 failed"
    check_reader b1 1
    ;;
kill)
    k=$((2 + seed % 15))
    echo "$k" >"$dir/kill"
    echo "reader b1 is killed after its ${k}th step"
    reader b1 && fail "b1 exited 0"
    rm -f "$dir/kill"
    grep -q "SIGKILL after step" "$dir/b1.out" || fail "b1 was not killed"
    wait_line "^libxfer: channel c: reader b failed (xferd: " ||
        fail "a did not say that b failed (xferd's verdict)"
    reader b2 || fail "b2 failed"
    check_reader b2 2
    ;;
esac
wait "$runpid"
arc=$?
runpid=""
t1=$(date +%s%N)
sed 's/^/  run| /' "$dir/a.out" | grep -v "step [0-9]* ended"
[ "$arc" -eq 0 ] || fail "the run (xfer-run --without b) exited $arc"
for r in 0 1; do
    grep -q "^attach_prog: a rank $r: $steps steps ended" "$dir/a.out" ||
        fail "rank $r of a did not end all $steps steps"
done
# a's steps take steps * 20 ms; a wait of control.timeout_ms (60 s) would show
[ $(((t1 - t0) / 1000000)) -lt 50000 ] || fail "the run took $(((t1 - t0) / 1000000)) ms"
[ "$fails" -eq 0 ] && echo "ok" || exit 1
