#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Readers that attach late or come back on the stream (docs/runtime.md, "Readers that attach
# late or come back"), separate launches without xferd, by hand (one mpiexec per component; Open
# MPI meets through its own ompi-server, MPICH ch3 by the announcement files alone):
#   attach_test.sh MPIEXEC ATTACH_PROG openmpi|mpich late|kill|twice|ghost|spill|spill.late|
#                  history|full|disk|latest.late|latest.kill [FULL_DISK_SHIM]
# Component a (2 ranks) sends channel c to b (2 ranks), on_reader_loss: continue, S steps.
#   late   a starts with XFER_ABSENT=b; b is launched once a ended step L (from the seed): b gets
#          strictly increasing steps from its attach step to S-1, byte for byte, and a's rank 0
#          says where it attached;
#   kill   b is there from the start, its rank 1 kills itself with SIGKILL after its K-th step
#          (seed); a second b is launched when the first one's mpiexec returned: it gets the
#          steps from its attach step to S-1; a ends all S steps, exit 0;
#   twice  kill, twice over: two detach/attach cycles in one run;
#   ghost  a starts with XFER_ABSENT=b; a stale announcement (a pid that is gone) is laid down
#          when a ended step L: a says it is gone, attaches nothing, ends all S steps, exit 0;
#   spill  as kill, under on_reader_loss: spill: b1 (killed) and b9 get, together, every step
#          once, in order, byte for byte, but for the steps b1 got whose release had not reached
#          a, which b9 gets again: at most max_in_flight_steps + 1 (2 + 1 here); a's steps all
#          count as sent, once;
#   spill.late  late, under spill: b gets every step from 0;
#   history     late, under continue with history: H (from the seed), start: oldest: b gets the
#          H steps before its attach step, then every later one;
#   full   late, under spill with spill.max_steps M (from the seed): every rank of a gets
#          XFER_ERR_SPILL_FULL at step M and ends it again every 10 ms; b, launched then,
#          attaches at that end and gets every step from 0.
#   disk   a under spill with XFER_ABSENT=b, its spill files on a disk that fills (the
#          LD_PRELOAD shim of workflow.file.full_disk.*): every rank of a gets XFER_ERR_IO at the
#          same step, naming its file, and stops there; a exits 0, no spill file is left.
#   latest.late, latest.kill  late and kill under policy: latest, with readers slower than a
#          (each naps 50 ms a step, a 20): a reader gets strictly increasing steps from its
#          attach step on, byte for byte, the last one (S-1) included; every rank of a ends all
#          S steps, each sent, dropped, held (the last, which xfer_finalize sends) or unsent, the
#          same counts on both ranks (late: the reader got every step a sent and the held one,
#          and the ones before its attach are unsent).
# The kept steps' modes (spill, spill.late, history, full, disk) and twice also send a joined
# dataset whose rows change every step and an attribute (attach_prog --joined 1): b checks them
# every step (twice: the side's agreement on each of two losses, at its joined exchanges).
# Every random choice comes from the printed seed (ATTACH_SEED repeats it). No sleep stands in for
# an event: each launch waits for a line of a's output or for the previous job to end (polled).
set -u
mpiexec=$1 prog=$2 flavour=$3 mode=$4 shim=${5:-}
steps=${ATTACH_STEPS:-150}
# (latest.kill: the sender's loss of b1 is its silence for control.timeout_ms, 3 s, while it
# steps on: 400 steps of 20 ms leave room for b9)
[ "$mode" = latest.kill ] && steps=${ATTACH_STEPS:-400}
seed=${ATTACH_SEED:-$((RANDOM % 10000))}
echo "seed $seed (ATTACH_SEED=$seed repeats it); $mode, $steps steps, $flavour"
dir=$(mktemp -d /tmp/attach-test-XXXXXX)
pids=""
cleanup() {
    for p in $pids; do kill -9 "$p" 2>/dev/null; done
    [ -n "${ATTACH_OUT:-}" ] && cp "$dir"/*.out "$ATTACH_OUT"/ 2>/dev/null # (bench/attach-bench.sh)
    rm -rf "$dir"
}
trap cleanup EXIT
fails=0
fail() {
    echo "FAIL (seed $seed): $*"
    fails=$((fails + 1))
}
loss=continue keys="" rms=0 hist=$((2 + seed % 4)) maxs=$((3 + seed % 5)) jds="" joined=0
case $mode in # (the kept steps' modes and twice: a joined dataset and an attribute, checked by b)
spill | spill.late | history | full | disk | twice) jds=", {name: j, type: int64, dims: [joined]}" joined=1 ;;
esac
case $mode in
spill | spill.late | disk) loss=spill keys="    spill: {max_steps: 1000}" ;;
full) loss=spill keys="    spill: {max_steps: $maxs}" ;;
history) keys="    history: $hist
    start: oldest" ;;
latest.*) keys="    policy: latest" rms=50 ;;
esac
cat >"$dir/w.yaml" <<YAML
workflow: rt_attach
launch: separate
run_dir: $dir/run
control: {timeout_ms: 3000}
components:
  - {name: a, nprocs: 2, cmd: [attach_prog]}
  - {name: b, nprocs: 2, cmd: [attach_prog]}
channels:
  - name: c
    from: a
    to: b
    max_in_flight_steps: 2
    on_reader_loss: $loss
    transport: stream
    datasets: [{name: v, type: int64, dims: [16]}$jds]
$keys
YAML
mx=("$mpiexec" -np 2)
if [ "$flavour" = openmpi ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    ompi-server --no-daemonize -r "$dir/uri" &
    pids="$pids $!"
    disown $! # (its end by the cleanup's kill is no news)
    for _ in $(seq 500); do # (a bounded wait for a file: 20 ms polls)
        [ -s "$dir/uri" ] && break
        sleep 0.02
    done
    [ -s "$dir/uri" ] || { echo "FAIL: ompi-server wrote no URI"; exit 1; }
    mx=("$mpiexec" --oversubscribe --ompi-server "file:$dir/uri" -np 2)
fi
export XFER_CONFIG=$dir/w.yaml XFER_LAUNCH=separate XFER_RUN_DIR=$dir/run
export XFER_TRANSPORT_DIR=$dir/steps # (spill's files)
unset XFER_CONTROL_ENDPOINT XFER_ON_READER_LOSS XFER_POLICY XFER_STRIDE
# wait (bounded) until a's output has line $1, or a ended
wait_line() {
    local i
    for i in $(seq 6000); do
        grep -q "$1" "$dir/a.out" 2>/dev/null && return 0
        kill -0 "$apid" 2>/dev/null || return 1
        sleep 0.01 # (poll interval: a file another job writes)
    done
    return 1
}
# a reader; $1: its name, $2...: attach_prog arguments
reader() {
    local name=$1
    shift
    XFER_COMPONENT=b XFER_TIMEOUT_MS=60000 timeout -k 5 120 "${mx[@]}" "$prog" --joined $joined \
        --recv-ms $rms "$@" \
        >"$dir/$name.out" 2>&1
    echo "$name: exit $?"
    sed "s/^/  $name| /" "$dir/$name.out" | grep -v "got step" | head -40
}
# the steps a reader got from its first to its end: strictly increasing (the reader checks),
# every one from its attach step on, the last one included
check_reader() {
    local name=$1 from
    from=$(sed -nE 's/^attach_prog: b: got step ([0-9]+)$/\1/p' "$dir/$name.out" | head -1)
    [ -n "$from" ] || { fail "$name got no step"; return; }
    n=$(grep -c "^attach_prog: b: got step" "$dir/$name.out")
    grep -q "^attach_prog: b rank 0: $n steps, first $from, last $((steps - 1)), steps_received $n$" \
        "$dir/$name.out" || fail "$name: not every step from $from to $((steps - 1)) ($n got)"
    grep -q "^attach_prog: b rank 1: $n steps, first $from, last $((steps - 1)), steps_received $n$" \
        "$dir/$name.out" || fail "$name: rank 1 did not get what rank 0 got"
    echo "$name got steps $from..$((steps - 1)) ($n)"
}
attached_at() { # the step a's rank 0 says the $1-th attach happened at
    sed -nE 's/^libxfer: channel c: reader b attached at step ([0-9]+) \(start: latest\)$/\1/p' \
        "$dir/a.out" | sed -n "${1}p"
}

attached_oldest() { # "A F L": the step a's rank 0 says the first attach happened at, and the
    # kept steps it replays first (from spill or history; F = A when nothing was kept)
    sed -nE -e 's/^libxfer: channel c: reader b attached at step ([0-9]+) \(start: oldest: steps ([0-9]+)\.\.([0-9]+) from (spill|history) first\)$/\1 \2 \3/p' \
        -e 's/^libxfer: channel c: reader b attached at step ([0-9]+) \(start: oldest: nothing kept before it\)$/\1 \1 -/p' \
        "$dir/a.out" | head -1
}
first_of() { sed -nE 's/^attach_prog: b: got step ([0-9]+)$/\1/p' "$dir/$1.out" | head -1; }

aenv=()
case $mode in late | ghost | spill.late | history | full | disk | latest.late) aenv=(XFER_ABSENT=b) ;; esac
if [ "$mode" = disk ]; then
    [ -n "$shim" ] || {
        echo "SKIP: no full-disk shim"
        exit 77
    }
    truncate -s 8192 "$dir/counter"
    mkdir -p "$dir/steps"
    # a step's spill file holds about 600 bytes on each rank: some 10 steps fit, not 150
    aenv+=(XFER_TEST_FULL_DIR="$dir/steps" XFER_TEST_FULL_BYTES=12000
        XFER_TEST_FULL_COUNTER="$dir/counter" LD_PRELOAD="$shim")
fi
env "${aenv[@]}" XFER_COMPONENT=a XFER_TIMEOUT_MS=3000 timeout -k 5 150 "${mx[@]}" "$prog" \
    --steps "$steps" --send-ms 20 --retry-full 1 --joined $joined >"$dir/a.out" 2>&1 &
apid=$!
pids="$pids $apid"
at=$((5 + seed % 30))
case $mode in
late)
    wait_line "^attach_prog: a: step $at ended" || fail "a did not reach step $at"
    reader b1
    check_reader b1
    [ "$(attached_at 1)" = "$(sed -nE 's/^attach_prog: b: got step ([0-9]+)$/\1/p' "$dir/b1.out" | head -1)" ] ||
        fail "b1's first step is not the one a attached it at ($(attached_at 1))"
    ;;
latest.late) # (its first step: the attach step or a later one, under latest)
    wait_line "^attach_prog: a: step $at ended" || fail "a did not reach step $at"
    reader b1
    check_reader b1
    aat=$(attached_at 1)
    [ -n "$aat" ] && [ "$(first_of b1)" -ge "$aat" ] ||
        fail "b1's first step $(first_of b1) is before the one a attached it at ($aat)"
    ;;
kill | twice | latest.kill)
    cycles=1
    [ "$mode" = twice ] && cycles=2
    for c in $(seq "$cycles"); do
        k=$((2 + (seed / c) % 15))
        echo "reader b$c is killed after its ${k}th step"
        reader "b$c" --kill-at "$k"
        grep -q "SIGKILL after step" "$dir/b$c.out" || fail "b$c was not killed"
    done
    reader b9
    check_reader b9
    aat=$(attached_at "$cycles")
    [ -n "$aat" ] || fail "a did not say b attached $cycles times"
    [ "$mode" = latest.kill ] && { [ "$(first_of b9)" -ge "${aat:-0}" ] ||
        fail "b9's first step $(first_of b9) is before the one a attached it at ($aat)"; }
    ;;
spill)
    k=$((2 + seed % 15))
    echo "reader b1 is killed after its ${k}th step"
    reader b1 --kill-at "$k"
    grep -q "SIGKILL after step" "$dir/b1.out" || fail "b1 was not killed"
    reader b9
    check_reader b9
    # b1 got 0..l1, each once (the reader checks the order and the bytes); b9 from f9
    n1=$(grep -c "^attach_prog: b: got step" "$dir/b1.out")
    l1=$(sed -nE 's/^attach_prog: b: got step ([0-9]+)$/\1/p' "$dir/b1.out" | tail -1)
    f9=$(first_of b9)
    [ "$(first_of b1)" = 0 ] && [ "$n1" -eq $((l1 + 1)) ] || fail "b1 did not get 0..$l1 once each"
    [ "$f9" -le $((l1 + 1)) ] || fail "steps $((l1 + 1))..$((f9 - 1)) reached no reader"
    [ $((l1 + 1 - f9)) -le 3 ] ||
        fail "b9 got $((l1 + 1 - f9)) steps b1 got: more than max_in_flight_steps + 1"
    echo "b1 got steps 0..$l1, b9 $f9..$((steps - 1)): $((l1 + 1 - f9)) again"
    read -r aat afrom _ <<<"$(attached_oldest)"
    [ -n "$aat" ] && [ "$afrom" = "$f9" ] || fail "a did not say it replays from step $f9 ($aat $afrom)"
    ;;
spill.late | history | full)
    if [ "$mode" = full ]; then
        wait_line "^attach_prog: a rank 0: step $maxs: XFER_ERR_SPILL_FULL" ||
            fail "a's rank 0 did not get XFER_ERR_SPILL_FULL at step $maxs"
    else
        wait_line "^attach_prog: a: step $at ended" || fail "a did not reach step $at"
    fi
    reader b1
    check_reader b1
    read -r aat afrom _ <<<"$(attached_oldest)"
    want=0
    [ "$mode" = history ] && want=$((aat > hist ? aat - hist : 0))
    [ -n "$aat" ] && [ "$afrom" = "$want" ] && [ "$(first_of b1)" = "$want" ] ||
        fail "b1 got steps from $(first_of b1), a attached it at $aat replaying from $afrom: not $want"
    ;;
ghost)
    wait_line "^attach_prog: a: step $at ended" || fail "a did not reach step $at"
    sh -c 'exit 0' &
    gone=$!
    wait "$gone"
    mkdir -p "$dir/run"
    printf 'no-such-port\n%s %s\n' "$gone" "$(hostname)" >"$dir/run/c.attach.tmp"
    mv "$dir/run/c.attach.tmp" "$dir/run/c.attach"
    ;;
esac
wait "$apid"
arc=$?
sed 's/^/  a| /' "$dir/a.out" | grep -v "step [0-9]* ended"
[ "$arc" -eq 0 ] || fail "a exited $arc"
for r in 0 1; do
    [ "$mode" = disk ] && break
    grep -q "^attach_prog: a rank $r: $steps steps ended" "$dir/a.out" ||
        fail "rank $r of a did not end all $steps steps"
done
[ -n "$(find "$dir/steps" -name 'spill.*' 2>/dev/null)" ] && fail "a left spill files behind"
case $mode in
spill | spill.late | full) # (every step replayed counts as sent once)
    for r in 0 1; do
        grep -q "^attach_prog: a rank $r: $steps steps ended, $steps sent, 0 unsent$" "$dir/a.out" ||
            fail "rank $r of a did not count all $steps steps sent once"
    done
    ;;&
full)
    for r in 0 1; do
        grep -q "^attach_prog: a rank $r: step $maxs: XFER_ERR_SPILL_FULL: channel c: on_reader_loss: spill: .*spill.max_steps, $maxs steps" "$dir/a.out" ||
            fail "rank $r of a did not get XFER_ERR_SPILL_FULL at step $maxs"
        grep -q "^attach_prog: a rank $r: step $maxs ended after XFER_ERR_SPILL_FULL$" "$dir/a.out" ||
            fail "rank $r of a did not end step $maxs once b attached"
    done
    ;;
disk) # every rank at the same step, its own file named; the steps before it ended
    io=$(sed -nE 's/^attach_prog: a rank 0: step ([0-9]+): XFER_ERR_IO: .*$/\1/p' "$dir/a.out")
    [ -n "$io" ] && [ "$io" -gt 0 ] || fail "a's rank 0 did not get XFER_ERR_IO"
    for r in 0 1; do
        grep -q "^attach_prog: a rank $r: step $io: XFER_ERR_IO: .*cannot write $dir/steps/rt_attach/c/spill\.a\.[01]\.$io: No space left on device" "$dir/a.out" ||
            fail "rank $r of a did not get XFER_ERR_IO naming the file at step $io"
        grep -q "^attach_prog: a rank $r: $io steps ended, 0 sent, $io unsent$" "$dir/a.out" ||
            fail "rank $r of a did not end the $io steps before it"
    done
    echo "XFER_ERR_IO at step $io"
    ;;
history)
    sent=$((steps - want))
    for r in 0 1; do
        grep -q "^attach_prog: a rank $r: $steps steps ended, $sent sent, $want unsent$" "$dir/a.out" ||
            fail "rank $r of a did not count $sent sent, $want unsent"
    done
    ;;
latest.*) # every step sent, dropped, held or unsent (attach_prog checks), alike on both ranks
    c0=$(sed -nE 's/^attach_prog: a rank 0: ([0-9]+ steps ended, .*)$/\1/p' "$dir/a.out")
    d0=$(sed -nE 's/^attach_prog: a rank 0: ([0-9]+ dropped, [0-9]+ held)$/\1/p' "$dir/a.out")
    for r in 0 1; do
        grep -q "^attach_prog: a rank $r: $c0$" "$dir/a.out" &&
            grep -q "^attach_prog: a rank $r: $d0$" "$dir/a.out" ||
            fail "rank $r of a counted otherwise than rank 0 ($c0, $d0)"
    done
    read -r _ _ _ sent _ unsent _ <<<"$c0"
    read -r _ _ held _ <<<"$d0"
    echo "a: $c0, $d0"
    if [ "$mode" = latest.late ]; then
        [ $((sent + held)) = "$(grep -c "^attach_prog: b: got step" "$dir/b1.out")" ] ||
            fail "a sent $sent steps and held $held, b1 got $(grep -c "^attach_prog: b: got step" "$dir/b1.out")"
        [ "$unsent" = "$aat" ] || fail "a counted $unsent unsent, not the $aat before the attach"
    fi
    ;;
ghost)
    grep -q "^libxfer: channel c: reader b announced itself (pid [0-9]*) and is gone: not attached$" \
        "$dir/a.out" || fail "a did not say the announced reader is gone"
    grep -q "attached at step" "$dir/a.out" && fail "a attached a reader that is gone"
    ;;
esac
[ "$fails" -eq 0 ] && echo "ok" || exit 1
