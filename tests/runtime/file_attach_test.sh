#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Readers that attach late or come back, on the file transport (tests/runtime/flow.cmake,
# workflow.attach.file.*; docs/runtime.md, "Readers that attach late or come back"):
#   file_attach_test.sh MODE XFER_RUN ATTACH_PROG MPIEXEC [SHIM]
# Component a (2 ranks) sends channel c to b (2 ranks) through files; every byte b gets is
# checked (file_attach_prog.c), and the steps b's runs released, in their order, are compared with
# what MODE promises. Random choices come from a printed seed (ATTACH_SEED repeats it).
#   kill    on_reader_loss: spill, keep: true, under xfer-run and xferd: rank 0 of b kills itself
#           with SIGKILL after K steps (K from the seed); a goes on once xferd declares b failed
#           (checked: no step call of a lasts over 3 x heartbeat_timeout_ms, xferd's 2 x and a
#           loaded machine's slack), spills, and waits at step G for a b started again by hand, which
#           attaches at a's next commit (G at the latest): the two runs of b released every step
#           exactly once, in order; a ends all its steps and exits 0 (xfer-run: 3)
#   close   the same with keep: false, b closing the channel (xfer_channel_close) after K steps
#   latest  a late reader (a launched with XFER_ABSENT=b), start: latest: it gets steps G..S-1
#   oldest  the same with history: H (keep: false), start: oldest: steps G-H..S-1, the older
#           step files removed
#   full    spill.max_steps M with no reader: the commit of step M fails with XFER_ERR_SPILL_FULL
#           (its words checked), a commits it again until a late reader attached: it gets 0..S-1
#   disk    spill into a disk that fills at step N (the LD_PRELOAD shim SHIM): a's commit fails
#           with XFER_ERR_IO (one line, no hang); a reader started afterwards gets 0..N-1 and the
#           end of the stream
# No process of the run is left behind.
set -u
mode=$1 xr=$2 prog=$3 mpiexec=$4 shim=${5:-}
seed=${ATTACH_SEED:-$((RANDOM % 10000))}
echo "seed $seed (ATTACH_SEED=$seed repeats it)"
dir=$(mktemp -d /tmp/attach-test-XXXXXX)
pids=""
cleanup() {
    local p
    for p in $pids; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$dir"
}
trap cleanup EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
steps=40 gate=35 hist=4 max=3
k=$((1 + seed % 20)) # b leaves after k steps
mpx=("$mpiexec")
"$mpiexec" --version 2>&1 | grep -qi "open mpi\|open-rte\|openrte" && mpx+=(--oversubscribe)
cfg=$dir/attach.yaml
sdir=$dir/steps/rt_attach/c
case $mode in
kill | close) loss=spill keep=$([ "$mode" = kill ] && echo true || echo false) extra="" ;;
latest) loss=continue keep=false extra="start: latest" ;;
oldest) loss=continue keep=false extra="history: $hist" ;;
full) loss=spill keep=true extra="spill: {max_steps: $max}" steps=12 ;;
disk) loss=spill keep=true extra="" steps=20 ;;
*)
    echo "unknown mode $mode"
    exit 2
    ;;
esac
leave=$([ "$mode" = close ] && echo close || echo kill)
a_args="--steps, \"$steps\", --send-ms, \"20\", --gate, $dir/gate, --gate-step, \"$gate\""
# (rank 0 is the one that dies: it writes both the `released` marker and the log, so the two
# agree; a rank 1 that died would let the launcher kill rank 0 between the two)
b_args="--steps, \"$steps\", --leave-at, \"$k\", --leave, $leave, --rank, \"0\", --log, $dir/log1"
cat >"$cfg" <<YAML
workflow: rt_attach
control: {heartbeat_ms: 250, heartbeat_timeout_ms: 1000, timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [$prog, $a_args]}
  - {name: b, nprocs: 2, cmd: [$prog, $b_args]}
channels:
  - name: c
    from: a
    to: b
    max_in_flight_steps: 2
    on_reader_loss: $loss
    transport: file
    file: {dir: $dir/steps, keep: $keep}
    $extra
    datasets: [{name: v, type: int64, dims: [16]}]
YAML

# wait_for FILE PATTERN [SECONDS]: until grep finds it (the event the test waits for)
wait_for() {
    local t=0 limit=$((${3:-120} * 50))
    until grep -q -- "$2" "$1" 2>/dev/null; do
        t=$((t + 1))
        if [ "$t" -gt "$limit" ]; then
            fail "waited ${3:-120} s for \"$2\" in $1"
            return 1
        fi
        sleep 0.02 # (polling for an event, not a delay)
    done
}
# by_hand COMPONENT OUT [ENV...] -- ARGS: one component launched on its own, in the background
by_hand() {
    local comp=$1 out=$2
    shift 2
    local env=()
    while [ "$1" != "--" ]; do
        env+=("$1")
        shift
    done
    shift
    env XFER_CONFIG="$cfg" XFER_COMPONENT="$comp" XFER_LAUNCH=separate XFER_RUN_ID="$rid" \
        XFER_RUN_DIR="$dir/run-$comp" "${env[@]}" \
        timeout -k 10 150 "${mpx[@]}" -n 2 "$prog" "$@" >"$out" 2>&1 &
    pids="$pids $!"
    last_pid=$!
}
seq_check() { # seq_check FROM TO FILE...: the files' lines are FROM..TO, once each, in order
    local from=$1 to=$2
    shift 2
    if ! diff <(seq "$from" "$to") <(cat "$@" 2>/dev/null) >"$dir/diff"; then
        fail "the steps released are not $from..$to once each in order: $(tr '\n' ' ' <"$dir/diff" | cut -c1-300)"
    fi
}
show() { sed "s/^/  $1| /" "$2"; }

case $mode in
kill | close)
    out=$dir/out
    timeout -k 10 150 "$xr" -v --launch separate "$cfg" >"$out" 2>&1 &
    xr_pid=$!
    pids="$pids $xr_pid"
    why=$([ "$mode" = kill ] && echo "failed (xferd: " || echo "closed the channel")
    wait_for "$out" "libxfer: channel c: reader b $why" &&
        wait_for "$sdir/a.run" "^run "
    rid=$(sed -n 's/^run //p' "$sdir/a.run")
    by_hand b "$dir/out2" -- --steps "$steps" --log "$dir/log2"
    b2=$last_pid
    # the new b announced itself (its rank 0's marker): a may pass the gate and meet it there
    wait_for "$sdir/b.attach" "^first 0" && touch "$dir/gate"
    wait "$xr_pid"
    rc=$?
    wait "$b2"
    rc2=$?
    show out "$out"
    show out2 "$dir/out2"
    echo "xfer-run exited with $rc, the second b with $rc2"
    seq_check 0 $((steps - 1)) "$dir/log1" "$dir/log2"
    [ "$(wc -l <"$dir/log1")" -eq "$k" ] || fail "the first b released $(wc -l <"$dir/log1") steps, not $k"
    if [ "$mode" = kill ]; then
        [ "$rc" -eq 3 ] || fail "xfer-run exited $rc, not 3 (a reader failed; the sender completed)"
        # the sender's longest step call bounds how long it waited for the dead reader (its
        # other calls do not wait for anybody: spill); its end, the death's time after it
        died=$(sed -nE 's/^\[b\] attach_prog: b rank 0: SIGKILL after [0-9]+ steps at ([0-9]+) ms$/\1/p' "$out")
        long=$(sed -nE 's/^\[a\] attach_prog: a rank 0: longest step call ([0-9]+) ms \(step [0-9]+\), ended at ([0-9]+) ms$/\1 \2/p' "$out")
        if [ -n "$died" ] && [ -n "$long" ]; then
            echo "the sender's longest step call: ${long% *} ms, ending $((${long#* } - died)) ms after the reader's death"
            [ "${long% *}" -le 3000 ] || fail "the sender waited ${long% *} ms in one call (bound: 3 x heartbeat_timeout_ms, 3000 ms: xferd's detection, 2 x, and a loaded machine's slack)"
        else
            fail "no death time of b or no longest step call of a"
        fi
    else
        [ "$rc" -eq 0 ] || fail "xfer-run exited $rc, not 0"
    fi
    [ "$rc2" -eq 0 ] || fail "the second b exited $rc2"
    n=$(grep -c "libxfer: channel c: reader b $why.*on_reader_loss: spill: steps from [0-9]* on are spilled to .* until a reader attaches (spill.max_steps 1000)$" "$out")
    [ "$n" -eq 1 ] || fail "$n lines from a saying that b left and the steps are spilled (1 expected)"
    # (at a's first commit after the announcement: at the gate at the latest)
    at=$(sed -nE "s/^\[a\] libxfer: channel c: reader b attached at step ([0-9]+) \(start: oldest: steps $k\.\.([0-9]+) from spill first\)$/\1 \2/p" "$out")
    if [ -z "$at" ] || [ "${at% *}" -gt "$gate" ] || [ "${at#* }" -ne $((${at% *} - 1)) ]; then
        fail "a did not say that b attached at a step up to $gate beginning with step $k"
    else
        echo "the second b attached at step ${at% *}"
    fi
    for r in 0 1; do
        grep -q "^\[a\] attach_prog: a rank $r: $steps steps ended, $steps sent, 0 unsent$" "$out" ||
            fail "rank $r of a did not end and write all $steps steps"
        grep -q "^\[a\] attach_prog: a rank $r: finalized$" "$out" || fail "rank $r of a did not finalize"
    done
    t=$(sed -nE 's/.*init at ([0-9]+) ms, first step [0-9]+ at ([0-9]+) ms$/\2 - \1/p' "$dir/out2")
    [ -n "$t" ] && echo "the second b got its first step $((t)) ms after its xfer_init began"
    ;;
latest | oldest | full | disk)
    rid="attach-test-$seed-$$"
    env=(XFER_ABSENT=b)
    if [ "$mode" = disk ]; then
        [ -n "$shim" ] || {
            echo "SKIP: no full-disk shim"
            exit 77
        }
        truncate -s 8192 "$dir/counter"
        # a step file of this channel holds 2.5 KiB once written, ~21 KiB while it is written
        # (its reservation): a handful fit beside the end marker's room, not 20
        env+=(XFER_TEST_FULL_DIR="$dir/steps" XFER_TEST_FULL_BYTES=40000
            XFER_TEST_FULL_COUNTER="$dir/counter" LD_PRELOAD="$shim")
        mkdir -p "$dir/steps"
    fi
    by_hand a "$dir/outa" "${env[@]}" -- --steps "$steps" --send-ms 5 --gate "$dir/gate" \
        --gate-step $([ "$mode" = full ] || [ "$mode" = disk ] && echo 1000 || echo "$gate")
    apid=$last_pid
    case $mode in
    latest | oldest) wait_for "$dir/outa" "at the gate, step $gate" ;;
    full) wait_for "$dir/outa" "XFER_ERR_SPILL_FULL" ;;
    disk)
        wait "$apid"
        rca=$?
        ;;
    esac
    by_hand b "$dir/outb" -- --steps "$steps" --log "$dir/log2"
    bpid=$last_pid
    [ "$mode" = disk ] || { wait_for "$sdir/b.attach" "^first 1" && touch "$dir/gate"; }
    [ "$mode" = disk ] || {
        wait "$apid"
        rca=$?
    }
    wait "$bpid"
    rcb=$?
    show a "$dir/outa"
    show b "$dir/outb"
    echo "a exited with $rca, b with $rcb"
    [ "$rcb" -eq 0 ] || fail "b exited $rcb"
    case $mode in
    latest)
        [ "$rca" -eq 0 ] || fail "a exited $rca"
        seq_check "$gate" $((steps - 1)) "$dir/log2"
        grep -q "libxfer: channel c: reader b attached at step $gate (start: latest)$" "$dir/outa" ||
            fail "a did not say that b attached at step $gate (start: latest)"
        grep -q "a rank 0: $steps steps ended, $((steps - gate)) sent, $gate unsent$" "$dir/outa" ||
            fail "a's counters: not $((steps - gate)) sent, $gate unsent"
        ;;
    oldest)
        [ "$rca" -eq 0 ] || fail "a exited $rca"
        seq_check $((gate - hist)) $((steps - 1)) "$dir/log2"
        grep -q "libxfer: channel c: reader b attached at step $gate (start: oldest: steps $((gate - hist))..$((gate - 1)) from history first)$" "$dir/outa" ||
            fail "a did not say that b attached at step $gate with steps $((gate - hist)).. from history"
        grep -q "a rank 0: $steps steps ended, $((steps - gate + hist)) sent, $((gate - hist)) unsent$" "$dir/outa" ||
            fail "a's counters: not $((steps - gate + hist)) sent, $((gate - hist)) unsent"
        ;;
    full)
        [ "$rca" -eq 0 ] || fail "a exited $rca"
        seq_check 0 $((steps - 1)) "$dir/log2"
        grep -q "a rank 0: step $max: XFER_ERR_SPILL_FULL: channel c: on_reader_loss: spill: reader b is not attached and spill.max_steps, $max steps, were spilled since step 0: step $max is not committed (nothing is lost: end it again once a reader attached, or raise spill.max_steps)$" "$dir/outa" ||
            fail "a's commit of step $max did not fail with XFER_ERR_SPILL_FULL in its words"
        grep -q "libxfer: channel c: reader b attached at step $max (start: oldest: steps 0..$((max - 1)) from spill first)$" "$dir/outa" ||
            fail "a did not say that b attached at step $max beginning with step 0"
        ;;
    disk)
        [ "$rca" -ne 0 ] || fail "a exited 0: the disk did not fill"
        pat="attach_prog: a rank [01]: step ([0-9]+): XFER_ERR_IO: channel c: step [0-9]+: writing .*/a\.[0-9]{6}\.h5 \(datasets v\): .*No space left on device; free space there"
        grep -qE "$pat" "$dir/outa" || fail "a did not fail with XFER_ERR_IO naming the full disk"
        at=$(grep -E "$pat" "$dir/outa" | head -1 | sed -E "s/.*step ([0-9]+): XFER_ERR_IO.*/\\1/")
        if [ -n "$at" ]; then
            echo "the disk filled at step $at"
            seq_check 0 $((at - 1)) "$dir/log2"
        fi
        ;;
    esac
    ;;
esac
grep -qE "^\[.\] .*(Segmentation fault|signal 11)|differs" "$dir"/out* && fail "a process crashed, or b got data that differs"
left=""
for e in /proc/[0-9]*/environ; do
    if tr "\\0" "\\n" 2>/dev/null <"$e" | grep -qx "XFER_CONFIG=$cfg"; then
        p=${e#/proc/}
        left="$left ${p%/environ}"
    fi
done
[ -z "$left" ] || fail "processes left behind:$left"
[ "$fails" -eq 0 ] && echo "ok" || exit 1
