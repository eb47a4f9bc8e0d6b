#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xfer-synth under a flow policy, through xfer-run (tests/runtime/flow.cmake,
# workflow.flow.synth.*; docs/runtime.md, "Flow policies"):
#   flow_synth_test.sh XFER_RUN WORKDIR P Q latest|stride|latest_stride slow|cycle stream|file
# Component a (P ranks) sends channel c to b (Q ranks) for S steps: a fixed 2-D dataset, joined
# rows and a variable extent, with attributes; b reads 10 times slower than a computes (slow:
# every step as soon as a newer one came) or, with channel d back from b to a (cycle), in its
# own steps 0, N, 2N, ... (docs/testing.md). Each rank of b checks every byte, the shapes and the
# attributes against the sender's step number the step says it is, and the order the policy
# promises (xfer-synth); here, from every rank's result line: every rank of a ended S steps and
# each step was sent, dropped, held or skipped by the stride alike on every rank; every rank of b
# read to the end of the stream, received what a sent (and held at the end: xfer_finalize sends
# it), from step 0 to the last step a sends (the last multiple of the stride below S), and under
# a stride alone each of them. In a cycle neither side waits at its end for the other's end of
# stream (each would wait for the other's xfer_finalize): b's xfer_finalize closes c, so under
# latest the step a still held then may not reach it. The stride (4) comes from the file, or under latest_stride from
# XFER_STRIDE over a file that says latest: the environment's override must be what xfer-synth
# reads too.
set -u
xr=$1 work=$2 p=$3 q=$4 kind=$5 shape=$6 transport=$7
steps=24 stride=1 policy=block keys=""
case $kind in
latest) policy=latest keys="    policy: latest" ;;
stride) stride=4 keys="    stride: 4" ;;
latest_stride) policy=latest stride=4 keys="    policy: latest"; export XFER_STRIDE=4 ;;
*) echo "flow_synth_test: unknown kind $kind" >&2; exit 2 ;;
esac
rm -rf "$work"
mkdir -p "$work"
cfg=$work/flow.yaml
common='--steps, "'$steps'", --seed, "7", --orders, random, --attrs, --report'
back=""
if [ "$shape" = cycle ]; then
    back="  - name: d
    from: b
    to: a
    datasets: [{name: u, type: float32, dims: [5, 3]}]"
fi
cat >"$cfg" <<YAML
workflow: rt_flow_synth
control: {heartbeat_timeout_ms: 10000, timeout_ms: 60000}
components:
  - {name: a, nprocs: $p, cmd: [xfer-synth, $common, --compute-ms, "2"]}
  - {name: b, nprocs: $q, cmd: [xfer-synth, $common, --recv-ms, "20"]}
channels:
  - name: c
    from: a
    to: b
    max_in_flight_steps: 2
$keys
    transport: $transport
    file: {dir: $work/steps}
    datasets:
      - {name: f, type: int32, dims: [9, 7]}
      - {name: j, type: int16, dims: [joined, 2]}
      - {name: v, type: float64, dims: [variable, 3]}
$back
YAML
# (a short run directory: xferd's socket path has a limit)
run=$(mktemp -d /tmp/flow-synth-XXXXXX)
"$xr" --run-dir "$run" "$cfg" >"$work/out.log" 2>&1
rc=$?
rm -rf "$run"
grep -v "xfer-synth-step\|xfer-synth-rows\|xfer-synth-shape" "$work/out.log"
if [ $rc -ne 0 ]; then
    echo "flow_synth_test: FAIL: xfer-run exited $rc"
    exit 1
fi
# the last step a sends: the last multiple of the stride below S
last=$(((steps - 1) / stride * stride))
due=$(((steps + stride - 1) / stride))
awk -v P="$p" -v Q="$q" -v cycle="$([ "$shape" = cycle ] && echo 1 || echo 0)" -v S="$steps" -v N="$stride" -v pol="$policy" -v last="$last" \
    -v due="$due" '
function val(k,   i, a) {
    for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) return a[2] }
    return ""
}
/xfer-synth-result / && val("channel") == "c" {
    r = val("rank")
    if (val("policy") != pol || val("stride") != N) {
        printf "FAIL: %s rank %d reads policy %s stride %s, expected %s %s\n", val("component"),
               r, val("policy"), val("stride"), pol, N; bad++
    }
    if (val("role") == "send") {
        ns++
        if (val("steps") != S || val("end") != "ok" || val("unsent") != 0) {
            print "FAIL: " $0; bad++
        }
        k = val("sent") + val("held")
        if (ns > 1 && (k != out || val("dropped") != dropped)) {
            printf "FAIL: a rank %d sent and held %d, dropped %d; rank 0 %d, %d\n", r, k,
                   val("dropped"), out, dropped; bad++
        }
        out = k; dropped = val("dropped")
    } else if (val("role") == "recv") {
        nr++
        rec[nr] = val("received"); got[nr] = val("got"); fst[nr] = val("first")
        lst[nr] = val("last"); end[nr] = val("ended"); line[nr] = $0
    }
}
END {
    if (ns != P || nr != Q) { printf "FAIL: %d sender and %d receiver results\n", ns, nr; bad++ }
    for (k = 1; k <= nr; k++) {
        if (end[k] != 1 && cycle && pol == "latest") {
            # its sender waits at its end for it (channel d): xfer_finalize closes c, whose
            # last step may still be held
            if (rec[k] != got[k] || got[k] > out || fst[k] != 0) {
                printf "FAIL: expected received=got<=%d first=0: %s\n", out, line[k]; bad++
            }
        } else if ((end[k] != 1 && !cycle) || rec[k] != out || got[k] != out || fst[k] != 0 ||
                   lst[k] != last || (pol == "block" && got[k] != due)) {
            printf "FAIL: expected received=got=%d first=0 last=%d ended=%d: %s\n", out, last,
                   !cycle, line[k]; bad++
        }
    }
    printf "flow_synth_test: %s stride %d, %d steps: a sent %d (dropped %d), b read %d to step %d on each of %d ranks: %s\n",
           pol, N, S, out, dropped, got[1], lst[1], nr, bad ? "FAIL" : "ok"
    exit bad ? 1 : 0
}' "$work/out.log"
