#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A reader that dies while its senders commit together (tests/runtime/flow.cmake,
# workflow.loss.stream.continue.kill.joined; docs/runtime.md, "Readers that fail or leave"):
#   loss_synth_test.sh XFER_RUN WORKDIR [RUNS]
# Component a (3 ranks) sends channel c to b (2 ranks) under on_reader_loss: continue: joined
# rows, a variable shape and blocks: per_step, with attributes, so that every step's commit is
# an exchange among a's ranks (xfer-synth: orders, rows, shapes and blocks drawn from the seed).
# A rank of b kills itself (SIGKILL) at a step and a point of it (its begin or its end: b only
# reads, it commits nothing) drawn from the seed, in each of RUNS runs (default 4) with seeds
# SEED, SEED+1, ... (LOSS_SEED, else random; printed). Each rank of a learns of the death on
# its own (rank 0 from xferd, the others from rank 0); the side must take it at a commit it
# agrees on. Checks, per run: xfer-run says b
# failed and the others go on, exits 3; every rank of a ends all steps and finalizes
# (xfer-synth's result line: end=ok), the three with the same steps sent and unsent (the side
# switched at one step), sent + unsent = the steps; rank 0 of a says the one line; no process of
# the run is left. (Heartbeats time out after 3 s, not 1: a component starting on a loaded
# machine is not taken for a dead reader.)
set -u
xr=$1 work=$2 runs=${3:-4}
steps=16
seed0=${LOSS_SEED:-$((RANDOM % 10000))}
echo "seeds $seed0..$((seed0 + runs - 1)) (LOSS_SEED=$seed0 repeats them)"
rm -rf "$work"
mkdir -p "$work"
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
points=(begin end)
for ((i = 0; i < runs; i++)); do
    seed=$((seed0 + i))
    victim=$((seed % 2)) k=$((seed / 2 % 8)) at=${points[$((seed / 16 % 2))]}
    dir=$work/run.$seed
    mkdir -p "$dir"
    cfg=$dir/wf.yaml
    args="--steps, \"$steps\", --seed, \"$seed\", --orders, random, --attrs, --delay-ms, \"10\""
    cat >"$cfg" <<YAML
workflow: rt_loss_joined
control: {heartbeat_ms: 250, heartbeat_timeout_ms: 3000, timeout_ms: 60000}
components:
  - {name: a, nprocs: 3, cmd: [xfer-synth, $args]}
  - {name: b, nprocs: 2, cmd: [xfer-synth, $args, --fault, "kill:$victim:$k:$at"]}
channels:
  - name: c
    from: a
    to: b
    max_in_flight_steps: 2
    on_reader_loss: continue
    datasets:
      - {name: j, type: float32, dims: [joined, 3]}
      - {name: g, type: int32, dims: [variable, 4]}
      - {name: p, type: int16, dims: [9, 4], blocks: per_step}
YAML
    echo "== seed $seed: rank $victim of b killed at step $k ($at)"
    out=$dir/out
    timeout -k 10 150 "$xr" -v --launch auto "$cfg" >"$out" 2>&1
    rc=$?
    grep -v -e "xfer-synth-step" -e "xfer-synth-rows" -e "xfer-synth-shape" "$out" | sed 's/^/  out| /'
    echo "xfer-run exited with $rc"
    [ "$rc" -ne 124 ] || fail "seed $seed: xfer-run ran into the safety timeout (150 s)"
    [ "$rc" -eq 3 ] || fail "seed $seed: xfer-run exited $rc, not 3 (a reader failed; the senders completed)"
    grep -Eq "^xfer-run: (error: )?component b failed \(.*\); it only reads, on_reader_loss: continue \(channel c\): the others go on$" "$out" ||
        fail "seed $seed: xfer-run did not say that b failed and the others go on"
    n=$(grep -Ec "^\[a\] libxfer: channel c: reader b failed \(xferd: .*\); on_reader_loss: continue: steps from [0-9]+ on are not sent( until a reader attaches)?$" "$out")
    [ "$n" -eq 1 ] || fail "seed $seed: $n lines from a saying that b failed (1 expected)"
    counts=""
    for r in 0 1 2; do
        line=$(grep -E "^\[a\] xfer-synth-result component=a rank=$r channel=c role=send " "$out")
        if [[ "$line" =~ steps=([0-9]+)\ end=ok\ sent=([0-9]+)\ dropped=0\ held=0\ unsent=([0-9]+) ]]; then
            [ "${BASH_REMATCH[1]}" -eq "$steps" ] ||
                fail "seed $seed: rank $r of a ended ${BASH_REMATCH[1]} steps, not $steps"
            [ $((BASH_REMATCH[2] + BASH_REMATCH[3])) -eq "$steps" ] ||
                fail "seed $seed: rank $r of a: ${BASH_REMATCH[2]} sent + ${BASH_REMATCH[3]} unsent is not $steps"
            counts="$counts ${BASH_REMATCH[2]}/${BASH_REMATCH[3]}"
        else
            fail "seed $seed: rank $r of a did not end its steps (${line:-no result line})"
        fi
    done
    set -- $counts
    [ $# -eq 3 ] && { [ "$1" != "$2" ] || [ "$1" != "$3" ]; } &&
        fail "seed $seed: a's ranks sent/unsent $counts: the side did not switch at one step"
    echo "a's ranks sent/unsent:$counts"
    left=""
    for e in /proc/[0-9]*/environ; do
        if tr "\\0" "\\n" 2>/dev/null <"$e" | grep -qx "XFER_CONFIG=$cfg"; then
            p=${e#/proc/}
            left="$left ${p%/environ}"
        fi
    done
    [ -z "$left" ] || fail "seed $seed: processes left behind:$left"
done
[ "$fails" -eq 0 ] && echo "ok" || exit 1
