# SPDX-License-Identifier: BSD-3-Clause
# Several channels between the same components (docs/runtime.md, "Several channels"): both
# directions, full and half duplex, a side that computes between steps. Each run must end, with
# every dataset checked byte for byte by xfer-synth. Included by runtime/tests.cmake.

# rt_channels(<file> <p> <q> <channel lines>): components a (p ranks) and b (q ranks)
function(rt_channels file p q channels)
  file(WRITE ${file} "workflow: rt_channels
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: ${p}, cmd: [xfer-synth]}
  - {name: b, nprocs: ${q}, cmd: [xfer-synth]}
channels:
${channels}")
endfunction()

# two half-duplex channels of four doubles (both sides used to wait on each other in
# xfer_finalize: one for the goodbye of the first channel, the other for the end of the second)
rt_channels(${RT_DIR}/ch-two-half.yaml 1 1
"  - {name: c1, from: a, to: b, datasets: [{name: x, type: float64, dims: [4]}]}
  - {name: c2, from: a, to: b, datasets: [{name: y, type: float64, dims: [4]}]}
")
rt_mpmd(cmd ${RT_DIR}/ch-two-half.yaml NP 1 1 ARGS --steps 2 --quiet)
rt_test(mpmd.channels.two_half.p1q1 COMMAND ${cmd} TIMEOUT 120)

# steering back (full duplex) beside fields and particles (half duplex), the consumer computing
# before every step: the producer sets up one channel's first step while the consumer waits for
# another's data, so every wait keeps the other channels moving
set(ch_steer "  - name: steer
    from: a
    to: b
    duplex: full
    datasets: [{name: knob, type: float64, dims: [4]}, {name: cmd, type: int32, dims: [3], from: b}]
  - {name: fields, from: a, to: b, datasets: [{name: u, type: float64, dims: [40, 7]}]}
  - {name: parts, from: a, to: b, datasets: [{name: p, type: int64, dims: [33]}]}
")
rt_channels(${RT_DIR}/ch-steer.yaml 2 2 "${ch_steer}")
rt_mpmd(cmd ${RT_DIR}/ch-steer.yaml NP 2 2 ARGS --steps 5 --quiet
        ARGS1 --steps 5 --quiet --compute-ms 100)
rt_test(mpmd.channels.steer_fields.p2q2 COMMAND ${cmd} TIMEOUT 120)

# both directions at once: a -> b, b -> a and a full-duplex channel, uneven ranks
rt_channels(${RT_DIR}/ch-both-ways.yaml 3 2
"  - {name: down, from: a, to: b, datasets: [{name: d, type: int32, dims: [9, 5]}]}
  - {name: up, from: b, to: a, datasets: [{name: e, type: float32, dims: [7]}]}
  - name: both
    from: a
    to: b
    duplex: full
    datasets: [{name: f, type: uint8, dims: [5, 4, 3]}, {name: g, type: int16, dims: [6], from: b}]
")
rt_mpmd(cmd ${RT_DIR}/ch-both-ways.yaml NP 3 2 ARGS --steps 4 --quiet --decomp uneven)
rt_test(mpmd.channels.both_ways.p3q2 COMMAND ${cmd} TIMEOUT 120)

# a component name unknown to the workflow on some ranks: every rank says so (those ranks used
# to wait in an agreement while the others waited in the launch's component exchange)
rt_mpmd(cmd ${RT_DIR}/ch-two-half.yaml NP 1 1 ARGS --steps 1 ARGS1 --steps 1 --component bb)
rt_fail_test(mpmd.fail.component_unknown COMMAND ${cmd} MAXTIME 60
             EXPECT "component \"bb\" is not in workflow rt_channels \\(components: a, b\\)")

# A component that aborts right after an error, printing nothing: its error reaches the user
# anyway (each rank reports the errors its calls return to xferd, waiting for the reply;
# xfer-run prints the component's first error once).
if(TARGET xfer-run AND TARGET xferd)
  add_executable(abort_after_error ${CMAKE_CURRENT_SOURCE_DIR}/mpi/abort_after_error.c)
  target_link_libraries(abort_after_error PRIVATE libxfer::xfer xfer_warnings)
  file(GENERATE OUTPUT ${RT_DIR}/abort.yaml CONTENT "workflow: rt_abort
control: {heartbeat_ms: 250, timeout_ms: 5000}
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth, --steps, \"3\"]}
  - {name: b, nprocs: 2, cmd: [$<TARGET_FILE:abort_after_error>]}
channels:
  - {name: c, from: a, to: b, datasets: [{name: x, type: float64, dims: [10]}]}
")
  rt_fail_test(abort_after_error COMMAND $<TARGET_FILE:xfer-run> --launch mpmd
               ${RT_DIR}/abort.yaml MAXTIME 60
               EXPECT "xfer-run: component b failed[^\\n]*: its first error: rank [01]: XFER_ERR_NOT_FOUND: channel c has no dataset \"nosuch\""
               ENV ${RT_SEP_ENV})
endif()
