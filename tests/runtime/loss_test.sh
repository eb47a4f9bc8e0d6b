#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A reader that dies or leaves mid-stream under xfer-run (tests/runtime/flow.cmake,
# workflow.loss.*; docs/runtime.md, "Readers that fail or leave"):
#   loss_test.sh XFER_RUN LOSS_PROG continue|fail kill|finalize|stop stream|file [LAUNCH]
# Component a (2 ranks) sends channel c to b (2 ranks) for S steps; b leaves at a step drawn
# from a seed (LOSS_SEED, else random; printed): rank 1 of b kills itself with SIGKILL, or b
# calls xfer_finalize. Checks:
#   continue, kill: every rank of a ends all S steps and finalizes; rank 0 of a says the one line
#     naming the channel, b and why; xfer-run says b failed and the others go on, exits 3; the
#     time from b's death to a's first unsent step is printed (ms);
#   fail, kill: a fails with XFER_ERR_PEER_FAILED naming b; xfer-run exits non-zero (not 3);
#   continue, stop: rank 1 of b stops itself (SIGSTOP, its heartbeats too): as kill, xferd's
#     verdict says it sent no heartbeat, and xfer-run stops it once the rest completed;
#   continue, finalize: a ends all S steps, rank 0 says b closed the channel; exit 0;
#   fail, finalize: a's stream ends (the reader closed it), cleanly; exit 0.
# No process of the run is left once xfer-run has returned.
set -u
xr=$1 prog=$2 mode=$3 leave=$4 transport=$5 launch=${6:-auto}
steps=40
seed=${LOSS_SEED:-$((RANDOM % 10000))}
echo "seed $seed (LOSS_SEED=$seed repeats it)"
dir=$(mktemp -d /tmp/loss-test-XXXXXX)
trap 'rm -rf "$dir"' EXIT
cfg=$dir/loss.yaml
args="--steps, \"$steps\", --send-ms, \"15\", --seed, \"$seed\", --rank, \"1\", --leave, $leave"
# Under XFER_POLICY=latest the reader gets fewer steps than the sender ends (step 0 and the last
# one at least): it leaves at the first or second step it gets, from the seed.
if [ "${XFER_POLICY:-}" = latest ]; then
    at=$((1 + seed % 2))
    echo "policy latest: b leaves at step $at"
    args="--steps, \"$steps\", --send-ms, \"15\", --at, \"$at\", --rank, \"1\", --leave, $leave"
fi
cat >"$cfg" <<YAML
workflow: rt_loss
control: {heartbeat_ms: 250, timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [$prog, $args]}
  - {name: b, nprocs: 2, cmd: [$prog, $args]}
channels:
  - name: c
    from: a
    to: b
    max_in_flight_steps: 2
    on_reader_loss: $mode
    transport: $transport
    file: {dir: $dir/steps}
    datasets: [{name: v, type: int64, dims: [16]}]
YAML
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
out=$dir/out
timeout -k 10 150 "$xr" -v --launch "$launch" "$cfg" >"$out" 2>&1
rc=$?
sed 's/^/  out| /' "$out"
echo "xfer-run exited with $rc"
[ "$rc" -ne 124 ] || fail "xfer-run ran into the safety timeout (150 s)"
all_steps() {
    for r in 0 1; do
        grep -q "^\[a\] loss_prog: a rank $r: $steps steps ended" "$out" ||
            fail "rank $r of a did not end all $steps steps"
        grep -q "^\[a\] loss_prog: a rank $r: finalized" "$out" ||
            fail "rank $r of a did not finalize"
    done
}
line_re="^\[a\] libxfer: channel c: reader b"
case "$mode.$leave" in
continue.kill | continue.stop)
    # (stop: xferd's verdict is the silence of the stopped rank's heartbeats)
    sig=SIGKILL why=".*" xr_why=".*"
    if [ "$leave" = stop ]; then
        sig=SIGSTOP why="rank 1 \(pid [0-9]+\) sent no heartbeat for [0-9]+ ms .*"
        xr_why="xferd: $why"
    fi
    all_steps
    n=$(grep -Ec "$line_re failed \(xferd: $why\); on_reader_loss: continue: steps from [0-9]+ on are not sent( until a reader attaches)?$" "$out")
    [ "$n" -eq 1 ] || fail "$n lines from a saying that b failed (1 expected)"
    grep -Eq "^xfer-run: (error: )?component b failed \($xr_why\); it only reads, on_reader_loss: continue \(channel c\): the others go on$" "$out" ||
        fail "xfer-run did not say that b failed and the others go on"
    [ "$rc" -eq 3 ] || fail "xfer-run exited $rc, not 3 (a reader failed; the senders completed)"
    died=$(sed -nE "s/^\[b\] loss_prog: b rank 1: $sig at step [0-9]+ at ([0-9]+) ms$/\1/p" "$out")
    on=$(sed -nE 's/^\[a\] loss_prog: a rank 0: unsent from step [0-9]+ at ([0-9]+) ms$/\1/p' "$out")
    if [ -n "$died" ] && [ -n "$on" ]; then
        echo "the sender went on $((on - died)) ms after the reader's $sig ($transport)"
    else
        fail "no $sig time of b or no first unsent step of a"
    fi
    ;;
fail.kill)
    grep -Eq "^\[a\] loss_prog: a: .*XFER_ERR_PEER_FAILED: channel c: component b failed \(xferd: " "$out" ||
        fail "a did not fail with XFER_ERR_PEER_FAILED naming b"
    [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ] || fail "xfer-run exited $rc (a failure expected)"
    ;;
continue.finalize)
    all_steps
    n=$(grep -Ec "$line_re closed the channel; on_reader_loss: continue: steps from [0-9]+ on are not sent( until a reader attaches)?$" "$out")
    [ "$n" -eq 1 ] || fail "$n lines from a saying that b closed the channel (1 expected)"
    [ "$rc" -eq 0 ] || fail "xfer-run exited $rc, not 0"
    ;;
fail.finalize)
    grep -q "^\[a\] loss_prog: a rank 0: the reader closed the channel at step" "$out" ||
        fail "a did not see its stream end"
    grep -q "^\[a\] loss_prog: a rank 0: finalized" "$out" || fail "a did not finalize"
    [ "$rc" -eq 0 ] || fail "xfer-run exited $rc, not 0"
    ;;
esac
grep -q "UCX  WARN  unexpected tag-receive" "$out" && fail "a message was left unmatched"
left=""
for e in /proc/[0-9]*/environ; do
    if tr "\\0" "\\n" 2>/dev/null <"$e" | grep -qx "XFER_CONFIG=$cfg"; then
        p=${e#/proc/}
        left="$left ${p%/environ}"
    fi
done
[ -z "$left" ] || fail "processes left behind:$left"
[ "$fails" -eq 0 ] && echo "ok" || exit 1
