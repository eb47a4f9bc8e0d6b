# SPDX-License-Identifier: BSD-3-Clause
# Flow policies (docs/runtime.md, "Flow policies"): `stride` and `policy: latest` on a channel's
# sending side, over both transports, checked end to end by runtime/flow_prog.c (every byte
# against the sender's step number the step says it is; the order each policy promises; both
# sides' counters). Included by runtime/tests.cmake.
add_executable(flow_prog runtime/flow_prog.c)
target_link_libraries(flow_prog PRIVATE xfer MPI::MPI_C xfer_warnings)

# fl_workflow(<file> <p> <q> <channel keys> [<channels>]): channels c, c1, ... (default 1)
function(fl_workflow file p q keys)
  math(EXPR n "${p} * 8")
  set(last 0)
  if(ARGC GREATER 4)
    math(EXPR last "${ARGV4} - 1")
  endif()
  set(chans "")
  foreach(i RANGE ${last})
    set(name c)
    if(i GREATER 0)
      set(name c${i})
    endif()
    string(APPEND chans "  - name: ${name}
    from: a
    to: b
    max_in_flight_steps: 2
${keys}    datasets:
      - {name: v, type: int64, dims: [${n}]}
")
  endforeach()
  file(WRITE ${file} "workflow: rt_flow
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: ${p}, cmd: [flow_prog]}
  - {name: b, nprocs: ${q}, cmd: [flow_prog]}
channels:
${chans}")
endfunction()

# fl_test(<name> <cfg> <p> <q> ARGS ... [ENV ...]): on the stream and through files,
# workflow.flow.<stream|file>.<name>
function(fl_test name cfg p q)
  cmake_parse_arguments(F "" "" "ARGS;ENV" ${ARGN})
  foreach(tr stream file)
    if(tr STREQUAL "file" AND NOT TARGET xfer_hdf5)
      continue()
    endif()
    xfer_mpi_envflags(genv ENV XFER_CONFIG=${cfg} XFER_TRANSPORT=${tr}
                      XFER_TRANSPORT_DIR=${RT_DIR}/file-steps/flow.${name} ${F_ENV})
    xfer_mpi_envflags(lenv LOCAL ENV XFER_CONFIG=${cfg} XFER_TRANSPORT=${tr}
                      XFER_TRANSPORT_DIR=${RT_DIR}/file-steps/flow.${name} ${F_ENV})
    rt_test(flow.${tr}.${name}
            COMMAND ${MPIEXEC_EXECUTABLE} ${XFER_MPIEXEC_PREFLAGS} ${genv} ${MPIEXEC_NUMPROC_FLAG}
                    ${p} $<TARGET_FILE:flow_prog> ${F_ARGS} : ${MPIEXEC_NUMPROC_FLAG} ${q} ${lenv}
                    $<TARGET_FILE:flow_prog> ${F_ARGS}
            TIMEOUT 120)
  endforeach()
endfunction()

fl_workflow(${RT_DIR}/flow-stride-2x3.yaml 2 3 "    stride: 3\n")
fl_workflow(${RT_DIR}/flow-latest-3x2.yaml 3 2 "    policy: latest\n")
fl_workflow(${RT_DIR}/flow-latest-stride-2x2.yaml 2 2 "    policy: latest\n    stride: 2\n")
fl_workflow(${RT_DIR}/flow-block-2x2.yaml 2 2 "")
fl_workflow(${RT_DIR}/flow-latest-2x3.yaml 2 3 "    policy: latest\n")
fl_workflow(${RT_DIR}/flow-latest-2ch-2x2.yaml 2 2 "    policy: latest\n" 2)

# stride: steps 0, 3, 6, ... of 11, every one of them (the sender with and without
# xfer_step_begin); the same through XFER_STRIDE over a file that says nothing
fl_test(stride.p2q3 ${RT_DIR}/flow-stride-2x3.yaml 2 3 ARGS --steps 11 --expect stride:3)
fl_test(stride.begin.p2q3 ${RT_DIR}/flow-stride-2x3.yaml 2 3
        ARGS --steps 10 --begin --expect stride:3)
fl_test(stride.env.p2q2 ${RT_DIR}/flow-block-2x2.yaml 2 2 ARGS --steps 9 --expect stride:4
        ENV XFER_STRIDE=4)
# latest: a reader slower than its sender (steps strictly increasing, the last one there); a
# reader that reads nothing until the sender ended every step (the sender never waits for it);
# latest with stride; XFER_POLICY over a file that says block
fl_test(latest.slow.p3q2 ${RT_DIR}/flow-latest-3x2.yaml 3 2
        ARGS --steps 30 --send-ms 2 --recv-ms 20 --expect latest)
fl_test(latest.waits.p3q2 ${RT_DIR}/flow-latest-3x2.yaml 3 2
        ARGS --steps 25 --reader-waits --begin --expect latest)
fl_test(latest.stride.p2q2 ${RT_DIR}/flow-latest-stride-2x2.yaml 2 2
        ARGS --steps 21 --send-ms 1 --recv-ms 10 --expect latest --stride 2)
fl_test(latest.env.p2q2 ${RT_DIR}/flow-block-2x2.yaml 2 2
        ARGS --steps 15 --reader-waits --expect latest ENV XFER_POLICY=latest)
# latest with a stride whose held steps a sending rank other than 0 first sends in
# xfer_finalize (it never had to wait for a verdict): its blocks are step 0's decomposition
fl_test(latest.stride_late.p2q3 ${RT_DIR}/flow-latest-2x3.yaml 2 3
        ARGS --steps 12 --recv-ms 10 --expect latest --stride 4 ENV XFER_STRIDE=4)
# a simulation's own collective between its steps while rank 0 sends a held step whose commit
# is collective over the side (the file's every step, the stream's first): every rank meets it
fl_test(latest.app_collective.p2q2 ${RT_DIR}/flow-latest-stride-2x2.yaml 2 2
        ARGS --steps 16 --recv-ms 5 --app-collective --expect latest --stride 2)
fl_test(latest.app_collective.p3q2 ${RT_DIR}/flow-latest-3x2.yaml 3 2
        ARGS --steps 16 --recv-ms 5 --app-collective --expect latest)
# two latest channels read in the order the sender's finish does not take them: each one's
# last step goes as soon as its own receivers have room, whichever they read first
fl_test(latest.channels.reverse.p2q2 ${RT_DIR}/flow-latest-2ch-2x2.yaml 2 2
        ARGS --steps 20 --recv-ms 10 --channels 2 --reverse --expect latest)
fl_test(latest.channels.p2q2 ${RT_DIR}/flow-latest-2ch-2x2.yaml 2 2
        ARGS --steps 20 --send-ms 1 --recv-ms 5 --channels 2 --expect latest)
# ... and each to its end before the other: the channel read first ends while the other still
# holds its last step for receivers that read nothing of it yet
fl_test(latest.channels.sequential.p2q2 ${RT_DIR}/flow-latest-2ch-2x2.yaml 2 2
        ARGS --steps 20 --recv-ms 5 --channels 2 --reverse --sequential --expect latest)
# a step's end refused 150 times over (a hole in the blocks) before it goes through whole: the
# library's step number labels it once (under a flow policy each end labels the step). (Under
# policy latest a step's blocks are checked when it is sent, not at its end: docs/runtime.md)
fl_test(stride.refused.p2q3 ${RT_DIR}/flow-stride-2x3.yaml 2 3
        ARGS --steps 7 --refuse 150 --expect stride:3)
# policy block, no stride: every step, the counters
fl_test(block.p2q2 ${RT_DIR}/flow-block-2x2.yaml 2 2 ARGS --steps 6 --recv-ms 5 --expect block)

# xfer-synth under a flow policy through xfer-run (runtime/flow_synth_test.sh): fixed, joined and
# variable datasets with attributes, every byte checked against the sender's step number, the
# order each policy promises and both sides' counters; a reader 10 times slower than its sender
# (slow) and one in a cycle of channels (cycle), on the stream and through files.
if(TARGET xfer-run AND TARGET xferd)
  set(fs_transports stream)
  if(TARGET xfer_hdf5)
    list(APPEND fs_transports file)
  endif()
  foreach(tr ${fs_transports})
    foreach(case latest:slow:2:3 latest:slow:3:2 latest:slow:1:1 stride:slow:2:3 stride:slow:3:2
                 stride:slow:1:1 latest_stride:slow:2:3 latest:cycle:2:3 stride:cycle:3:2)
      string(REPLACE ":" ";" f "${case}")
      list(GET f 0 kind)
      list(GET f 1 shape)
      list(GET f 2 p)
      list(GET f 3 q)
      set(name ${P}.workflow.flow.synth.${tr}.${kind}.${shape}.p${p}q${q})
      add_test(NAME ${name}
               COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/flow_synth_test.sh
                       $<TARGET_FILE:xfer-run> ${RT_DIR}/flow-synth.${tr}.${kind}.${shape}.p${p}q${q}
                       ${p} ${q} ${kind} ${shape} ${tr})
      set_tests_properties(${name} PROPERTIES TIMEOUT 180 LABELS "mpi;workflow"
                           ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
    endforeach()
  endforeach()
endif()

# What xferd shows of a flow policy (op "flow"; docs/xferctl.md): flow_prog through xfer-run
# with a daemon of the test's own, status --json, status and watch against flow_prog's counts,
# and again after two restarts of xferd from its journal; nothing of it under policy block;
# midrun: xfer-run's own daemon killed mid-run, restarted by xfer-run from its journal.
if(TARGET xfer-run AND TARGET xferd AND TARGET xferctl)
  foreach(m latest stride latest_stride block midrun file.latest file.stride)
    set(tr stream)
    set(mode ${m})
    if(m MATCHES "^file\\.(.*)$")
      if(NOT TARGET xfer_hdf5)
        continue()
      endif()
      set(tr file)
      set(mode ${CMAKE_MATCH_1})
    endif()
    add_test(NAME ${P}.workflow.flow.xferd.${m}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/flow_xferd_test.sh
                     $<TARGET_FILE:xfer-run> $<TARGET_FILE:xferd> $<TARGET_FILE:xferctl>
                     $<TARGET_FILE:flow_prog> ${CMAKE_CURRENT_BINARY_DIR}/runtime/flow-xferd.${m}
                     ${mode} ${tr})
    set_tests_properties(${P}.workflow.flow.xferd.${m} PROPERTIES TIMEOUT 180
                         LABELS "mpi;workflow;control"
                         ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
  endforeach()
endif()

# Readers that fail or leave (docs/runtime.md, "Readers that fail or leave"): runtime/loss_prog.c
# under xfer-run, checked by runtime/loss_test.sh (tests.cmake: workflow.loss.*).
add_executable(loss_prog runtime/loss_prog.c)
target_link_libraries(loss_prog PRIVATE xfer MPI::MPI_C xfer_warnings)
# kill -9 of one reader rank at a random step (the seed is printed; LOSS_SEED repeats it) and a
# reader that leaves cleanly mid-stream (xfer_finalize), under on_reader_loss continue and fail:
# through files on any MPI (separate launches connect nothing), on the stream where the MPI
# connects separately launched jobs (RT_SEPARATE: Open MPI with ompi-server, MPICH ch3). Under
# continue xfer-run's --launch auto must pick separate by itself; under fail the test asks for
# it (one MPMD job would end whole).
if(TARGET xfer-run AND TARGET xferd)
  set(loss_transports "")
  if(TARGET xfer_hdf5)
    list(APPEND loss_transports file)
  endif()
  if(RT_SEPARATE)
    list(APPEND loss_transports stream)
  endif()
  foreach(tr ${loss_transports})
    foreach(mode continue fail)
      foreach(leave kill finalize)
        set(launch auto)
        if(mode STREQUAL "fail")
          set(launch separate)
        endif()
        add_test(NAME ${P}.workflow.loss.${tr}.${mode}.${leave}
                 COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/loss_test.sh
                         $<TARGET_FILE:xfer-run> $<TARGET_FILE:loss_prog> ${mode} ${leave} ${tr}
                         ${launch})
        set_tests_properties(${P}.workflow.loss.${tr}.${mode}.${leave} PROPERTIES TIMEOUT 200
                             LABELS "mpi;workflow;control;loss"
                             ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
        # the same under policy latest: a sender that holds its steps for want of room meets
        # the reader's loss all the same (rank 0 asks xferd at each round), every rank of it at
        # the same round; a held step the loss leaves unsent is forgotten
        add_test(NAME ${P}.workflow.loss.${tr}.${mode}.${leave}.latest
                 COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/loss_test.sh
                         $<TARGET_FILE:xfer-run> $<TARGET_FILE:loss_prog> ${mode} ${leave} ${tr}
                         ${launch})
        set_tests_properties(${P}.workflow.loss.${tr}.${mode}.${leave}.latest PROPERTIES
                             TIMEOUT 200 LABELS "mpi;workflow;control;loss"
                             ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV};XFER_POLICY=latest")
      endforeach()
    endforeach()
    # a reader rank that stalls (SIGSTOP: its heartbeats stop too) under continue: xferd
    # declares it failed, the sender goes on, xfer-run stops the stalled reader once the rest
    # completed and exits 3
    add_test(NAME ${P}.workflow.loss.${tr}.continue.stop
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/loss_test.sh
                     $<TARGET_FILE:xfer-run> $<TARGET_FILE:loss_prog> continue stop ${tr} auto)
    set_tests_properties(${P}.workflow.loss.${tr}.continue.stop PROPERTIES TIMEOUT 200 RUN_SERIAL TRUE
                         LABELS "mpi;workflow;control;loss"
                         ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
  endforeach()
  # the death of a reader while three sender ranks commit together (joined, variable and
  # per_step datasets: each commit an exchange among them), four seeds: the side switches at one
  # commit it agrees on, every rank sends the same steps, none crashes on what another left
  if(RT_SEPARATE)
    add_test(NAME ${P}.workflow.loss.stream.continue.kill.joined
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/loss_synth_test.sh
                     $<TARGET_FILE:xfer-run> ${RT_DIR}/loss-joined 4)
    set_tests_properties(${P}.workflow.loss.stream.continue.kill.joined PROPERTIES TIMEOUT 600
                         LABELS "mpi;workflow;control;loss"
                         ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
  endif()
endif()

# Readers that attach late or come back on the stream (docs/runtime.md, "Readers that attach late
# or come back"): runtime/attach_prog.c launched by hand, one mpiexec per component, without
# xferd, checked by runtime/attach_test.sh (the seed is printed; ATTACH_SEED repeats it).
# The LD_PRELOAD library under which a disk fills, for mode disk ("" for the others; "none" when
# this build has no such library).
function(fl_disk_shim mode out)
  set(shim "")
  if(mode STREQUAL "disk")
    set(shim none)
    if(TARGET xfer_test_full_disk)
      set(shim $<TARGET_FILE:xfer_test_full_disk>)
    endif()
  endif()
  set(${out} "${shim}" PARENT_SCOPE)
endfunction()
add_executable(attach_prog runtime/attach_prog.c)
target_link_libraries(attach_prog PRIVATE xfer MPI::MPI_C xfer_warnings)
if(RT_SEPARATE)
  # spill, spill.late, history, full, disk: the steps the sender keeps (ch_keep.c); disk: its
  # spill files on a disk that fills (the LD_PRELOAD shim of workflow.file.full_disk.*);
  # latest.late, latest.kill: under policy: latest (ch_flow.c's rounds across the attach)
  foreach(mode late kill twice ghost spill spill.late history full disk latest.late latest.kill)
    fl_disk_shim(${mode} shim)
    if(shim STREQUAL "none")
      continue()
    endif()
    add_test(NAME ${P}.workflow.attach.stream.${mode}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/attach_test.sh ${MPIEXEC_EXECUTABLE}
                     $<TARGET_FILE:attach_prog> ${XFER_MPI_FLAVOR} ${mode} ${shim})
    set_tests_properties(${P}.workflow.attach.stream.${mode} PROPERTIES TIMEOUT 200 RUN_SERIAL TRUE
                         LABELS "mpi;workflow;loss;attach" SKIP_RETURN_CODE 77)
  endforeach()
  # the same through xfer-run and its xferd (--without b, then --attach b; runtime/
  # attach_xferd_test.sh): the reader's offer goes through xferd, its loss is xferd's verdict
  if(TARGET xfer-run AND TARGET xferd)
    foreach(mode late kill)
      add_test(NAME ${P}.workflow.attach.stream.xferd.${mode}
               COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/attach_xferd_test.sh
                       $<TARGET_FILE:xfer-run> $<TARGET_FILE:attach_prog> ${XFER_MPI_FLAVOR} ${mode})
      set_tests_properties(${P}.workflow.attach.stream.xferd.${mode} PROPERTIES TIMEOUT 260
                           RUN_SERIAL TRUE LABELS "mpi;workflow;loss;attach")
    endforeach()
  endif()
endif()

# Readers that attach late or come back, on the file transport (docs/runtime.md, "Readers that
# attach late or come back"): runtime/file_attach_prog.c checked by runtime/file_attach_test.sh,
# on any MPI (the file transport connects nothing). kill/close: a reader that dies (SIGKILL, under
# xfer-run and xferd, spill, keep: true) or closes the channel (keep: false) and a second one
# started by hand: every step released once across both, in order; latest/oldest: a late reader
# (XFER_ABSENT) with start: latest, or history: 4 and start: oldest; full: spill.max_steps reached,
# XFER_ERR_SPILL_FULL and the step committed again once a reader attached; disk: the spill's disk
# fills (the LD_PRELOAD shim of workflow.file.full_disk.*). The seed is printed (ATTACH_SEED).
add_executable(file_attach_prog runtime/file_attach_prog.c)
target_link_libraries(file_attach_prog PRIVATE xfer MPI::MPI_C xfer_warnings)
if(TARGET xfer-run AND TARGET xferd AND TARGET xfer_hdf5)
  foreach(mode kill close latest oldest full disk)
    fl_disk_shim(${mode} shim)
    if(shim STREQUAL "none")
      continue()
    endif()
    add_test(NAME ${P}.workflow.attach.file.${mode}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/file_attach_test.sh ${mode}
                     $<TARGET_FILE:xfer-run> $<TARGET_FILE:file_attach_prog> ${XFER_MPIEXEC} ${shim})
    set_tests_properties(${P}.workflow.attach.file.${mode} PROPERTIES TIMEOUT 200
                         LABELS "mpi;workflow;control;loss" SKIP_RETURN_CODE 77
                         ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
  endforeach()
endif()
