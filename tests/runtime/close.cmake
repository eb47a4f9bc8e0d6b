# SPDX-License-Identifier: BSD-3-Clause
# One channel closed early while another goes on (docs/runtime.md, "Closing a channel"):
# runtime/close_prog.c over both transports, in one MPMD launch, and through xfer-run's separate
# launches over files. Component a sends c1 and c2 to b; at step 4 of 12 the reader or the sender
# closes c1 (xfer_channel_close) and both read or send c2 to its end, every byte checked; the
# closing side checks the handle's errors (second close, NULL, another copy, open again).
# Included by runtime/tests.cmake.
add_executable(close_prog runtime/close_prog.c)
target_link_libraries(close_prog PRIVATE xfer MPI::MPI_C xfer_warnings)

# cl_workflow(<file> <p> <q> <channel keys> [<dataset keys>]): channels c1 and c2 from a to b
function(cl_workflow file p q keys)
  math(EXPR n "${p} * 8")
  set(dkeys "")
  if(ARGC GREATER 4)
    set(dkeys ", ${ARGV4}")
  endif()
  set(chans "")
  foreach(name c1 c2)
    string(APPEND chans "  - name: ${name}
    from: a
    to: b
    max_in_flight_steps: 2
${keys}    datasets:
      - {name: v, type: int64, dims: [${n}]${dkeys}}
")
  endforeach()
  file(WRITE ${file} "workflow: rt_close
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: ${p}, cmd: [close_prog]}
  - {name: b, nprocs: ${q}, cmd: [close_prog]}
channels:
${chans}")
endfunction()

# cl_test(<name> <cfg> <p> <q> ARGS ... [ENV ...] [EXPECT regex]): one MPMD launch on the stream
# and through files, workflow.close.<stream|file>.<name>
function(cl_test name cfg p q)
  cmake_parse_arguments(C "" "EXPECT" "ARGS;ENV" ${ARGN})
  foreach(tr stream file)
    if(tr STREQUAL "file" AND NOT TARGET xfer_hdf5)
      continue()
    endif()
    set(env XFER_CONFIG=${cfg} XFER_TRANSPORT=${tr}
            XFER_TRANSPORT_DIR=${RT_DIR}/file-steps/close.${name} ${C_ENV})
    xfer_mpi_envflags(genv ENV ${env})
    xfer_mpi_envflags(lenv LOCAL ENV ${env})
    set(cmd ${MPIEXEC_EXECUTABLE} ${XFER_MPIEXEC_PREFLAGS} ${genv} ${MPIEXEC_NUMPROC_FLAG} ${p}
            $<TARGET_FILE:close_prog> ${C_ARGS} : ${MPIEXEC_NUMPROC_FLAG} ${q} ${lenv}
            $<TARGET_FILE:close_prog> ${C_ARGS})
    if(C_EXPECT)
      rt_pass_test(close.${tr}.${name} COMMAND ${cmd} EXPECT "${C_EXPECT}")
    else()
      rt_test(close.${tr}.${name} COMMAND ${cmd} TIMEOUT 120)
    endif()
  endforeach()
endfunction()

cl_workflow(${RT_DIR}/close-2x3.yaml 2 3 "")
cl_workflow(${RT_DIR}/close-3x2.yaml 3 2 "")
cl_workflow(${RT_DIR}/close-continue-3x2.yaml 3 2 "    on_reader_loss: continue\n")
cl_workflow(${RT_DIR}/close-latest-3x2.yaml 3 2 "    policy: latest\n")
cl_workflow(${RT_DIR}/close-per_step-3x2.yaml 3 2 "" "blocks: per_step")

set(cl_line "reader b closed the channel; on_reader_loss: continue: steps from [0-9]+ on are not sent")
# The reader closes c1 at step 4: under fail a's stream ends (END_OF_STREAM), under continue a
# goes on (its counters: every step ended, some unsent; rank 0's one line), from the file's key
# and from XFER_ON_READER_LOSS
cl_test(reader.fail.p2q3 ${RT_DIR}/close-2x3.yaml 2 3 ARGS --closer reader --loss fail --recv-ms 5)
# ... before its first step: the sender (through files: its closed marker) still learns it
cl_test(reader.first.fail.p3q2 ${RT_DIR}/close-3x2.yaml 3 2 ARGS --closer reader --loss fail --at 0)
# ... with blocks: per_step, whose every commit gathers the sender's blocks: its ranks agree on
# the end there (a rank that saw it first would leave the others in the gather)
cl_test(reader.per_step.fail.p3q2 ${RT_DIR}/close-per_step-3x2.yaml 3 2
        ARGS --closer reader --loss fail --recv-ms 2)
cl_test(reader.per_step.continue.p3q2 ${RT_DIR}/close-per_step-3x2.yaml 3 2
        ARGS --closer reader --loss continue ENV XFER_ON_READER_LOSS=continue EXPECT "${cl_line}")
cl_test(reader.continue.p3q2 ${RT_DIR}/close-continue-3x2.yaml 3 2
        ARGS --closer reader --loss continue EXPECT "${cl_line}")
cl_test(reader.continue.env.p2q3 ${RT_DIR}/close-2x3.yaml 2 3
        ARGS --closer reader --loss continue --recv-ms 5 ENV XFER_ON_READER_LOSS=continue
        EXPECT "${cl_line}")
# The sender closes c1 after step 3: b gets steps 0 .. 3 of it, then its end; under policy
# latest, with b reading nothing until a ended 6 steps (held step 5, some dropped), the held last
# step is sent by the close
cl_test(sender.p3q2 ${RT_DIR}/close-3x2.yaml 3 2 ARGS --closer sender)
cl_test(sender.per_step.p3q2 ${RT_DIR}/close-per_step-3x2.yaml 3 2 ARGS --closer sender)
cl_test(sender.latest.p3q2 ${RT_DIR}/close-latest-3x2.yaml 3 2
        ARGS --closer sender --latest --at 6 --reader-waits --recv-ms 5)

# Separate launches through xfer-run, with xferd: the reader closes c1 under continue and under
# fail; over files (any MPI), and on the stream where the MPI connects separate jobs
# (RT_SEPARATE: the closed channel's MPI_Comm_disconnect waits for both sides' xfer_finalize)
set(cl_sep_transports "")
if(TARGET xfer_hdf5)
  list(APPEND cl_sep_transports file)
endif()
if(RT_SEPARATE)
  list(APPEND cl_sep_transports stream)
endif()
if(TARGET xfer-run AND TARGET xferd)
  foreach(mode fail continue)
    file(GENERATE OUTPUT ${RT_DIR}/close-sep-${mode}.yaml CONTENT "workflow: rt_close_sep
control: {heartbeat_ms: 250, timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [$<TARGET_FILE:close_prog>, --closer, reader, --loss, ${mode}]}
  - {name: b, nprocs: 2, cmd: [$<TARGET_FILE:close_prog>, --closer, reader, --loss, ${mode}]}
channels:
  - {name: c1, from: a, to: b, max_in_flight_steps: 2, on_reader_loss: ${mode},
     datasets: [{name: v, type: int64, dims: [16]}]}
  - {name: c2, from: a, to: b, max_in_flight_steps: 2,
     datasets: [{name: v, type: int64, dims: [16]}]}
")
    set(expect "b rank 1: c1: 4 steps, c2: 12 steps")
    if(mode STREQUAL "continue")
      set(expect "${cl_line}")
    endif()
    foreach(tr IN LISTS cl_sep_transports)
      rt_pass_test(close.${tr}.separate.reader.${mode} COMMAND $<TARGET_FILE:xfer-run>
                   --launch separate --transport ${tr} ${RT_DIR}/close-sep-${mode}.yaml
                   EXPECT "${expect}"
                   ENV ${RT_SEP_ENV}
                       XFER_TRANSPORT_DIR=${RT_DIR}/file-steps/close.separate.${mode})
    endforeach()
  endforeach()
endif()
