# SPDX-License-Identifier: BSD-3-Clause
# Coupled runs of the workflow layer with xfer-synth (tools/xfer-synth.c): every receiving rank
# compares each dataset, whole and as a hyperslab, byte for byte with the pattern the senders
# put. Workflow files are written here, per shape, into the build tree.
if(NOT TARGET xfer-synth)
  return()
endif()
set(SYNTH $<TARGET_FILE:xfer-synth>)
set(RT_DIR ${CMAKE_CURRENT_BINARY_DIR}/runtime)
file(MAKE_DIRECTORY ${RT_DIR})

# Datasets: 1-D, 2-D and 3-D of several types, sizes that divide by nothing in particular.
set(RT_FWD "    datasets:
      - {name: line, type: float64, dims: [37]}
      - {name: plane, type: int32, dims: [13, 9]}
      - {name: cube, type: uint8, dims: [5, 4, 3]}")
set(RT_BWD "
      - {name: back2, type: float32, dims: [11, 7], from: b}
      - {name: back3, type: int64, dims: [3, 5, 2], from: b}")

# rt_workflow(<file> <p> <q> <half|full> [TIMEOUT ms] [PLANE dims] [ARGS text] [TOPOLOGY kind])
function(rt_workflow file p q duplex)
  cmake_parse_arguments(W "" "TIMEOUT;PLANE;ARGS;TOPOLOGY" "" ${ARGN})
  if(NOT W_TIMEOUT)
    set(W_TIMEOUT 60000)
  endif()
  set(fwd "${RT_FWD}")
  if(W_PLANE)
    string(REPLACE "dims: [13, 9]" "dims: [${W_PLANE}]" fwd "${fwd}")
  endif()
  set(bwd "")
  if(duplex STREQUAL "full")
    set(bwd "${RT_BWD}")
  endif()
  set(topology "")
  if(W_TOPOLOGY)
    set(topology "topology: {kind: ${W_TOPOLOGY}}\n")
  endif()
  file(WRITE ${file} "workflow: rt_${p}x${q}_${duplex}
control: {timeout_ms: ${W_TIMEOUT}}
${topology}components:
  - {name: a, nprocs: ${p}, cmd: [xfer-synth${W_ARGS}]}
  - {name: b, nprocs: ${q}, cmd: [xfer-synth${W_ARGS}]}
channels:
  - name: c
    from: a
    to: b
    duplex: ${duplex}
    max_in_flight_steps: 2
${fwd}${bwd}
")
endfunction()

# An MPMD launch of two or three xfer-synth contexts, in file order (component k = MPI_APPNUM k);
# ENV: more NAME=value for every rank.
function(rt_mpmd out cfg)
  cmake_parse_arguments(M "" "" "NP;ARGS;ARGS1;ENV" ${ARGN})
  xfer_mpi_envflags(genv ENV XFER_CONFIG=${cfg} ${M_ENV})
  list(GET M_NP 0 n0)
  set(cmd ${MPIEXEC_EXECUTABLE} ${XFER_MPIEXEC_PREFLAGS} ${genv} ${MPIEXEC_NUMPROC_FLAG} ${n0}
          ${SYNTH} ${M_ARGS})
  list(LENGTH M_NP nctx)
  math(EXPR last "${nctx} - 1")
  foreach(k RANGE 1 ${last})
    list(GET M_NP ${k} nk)
    xfer_mpi_envflags(lenv LOCAL ENV XFER_CONFIG=${cfg} ${M_ENV})
    set(args ${M_ARGS})
    if(k EQUAL 1 AND M_ARGS1)
      set(args ${M_ARGS1})
    endif()
    list(APPEND cmd : ${MPIEXEC_NUMPROC_FLAG} ${nk} ${lenv} ${SYNTH} ${args})
  endforeach()
  set(${out} ${cmd} PARENT_SCOPE)
endfunction()

# Runs through xfer-run: the ranks get the test environment (sanitizer options, preloads) the
# way users pass theirs, through xfer-run's own environment.
set(RT_SEP_ENV ${XFER_TEST_RANK_ENV})
if(XFER_TEST_PRELOAD)
  list(JOIN XFER_TEST_PRELOAD ":" rt_preload)
  list(APPEND RT_SEP_ENV "LD_PRELOAD=${rt_preload}")
endif()

function(rt_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "COMMAND;ENV" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  add_test(NAME ${P}.workflow.${name} COMMAND ${T_COMMAND})
  set_tests_properties(${P}.workflow.${name} PROPERTIES TIMEOUT ${T_TIMEOUT}
                       LABELS "mpi;workflow" ENVIRONMENT "${XFER_MPIEXEC_ENV};${T_ENV}")
endfunction()

# A run that must fail: non-zero exit, within MAXTIME seconds, with output matching EXPECT (and
# none matching REJECT).
function(rt_fail_test name)
  cmake_parse_arguments(T "" "EXPECT;REJECT;MAXTIME" "COMMAND;ENV" ${ARGN})
  add_test(NAME ${P}.workflow.${name}
           COMMAND ${CMAKE_COMMAND} "-DCMD=${T_COMMAND}" "-DEXPECT=${T_EXPECT}"
                   "-DREJECT=${T_REJECT}" -DMAXTIME=${T_MAXTIME}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/support/expect_fail.cmake)
  set_tests_properties(${P}.workflow.${name} PROPERTIES TIMEOUT 300
                       LABELS "mpi;workflow" ENVIRONMENT "${XFER_MPIEXEC_ENV};${T_ENV}")
endfunction()

# A run that must succeed with output matching EXPECT (and none matching REJECT).
function(rt_pass_test name)
  cmake_parse_arguments(T "" "EXPECT;REJECT" "COMMAND;ENV" ${ARGN})
  add_test(NAME ${P}.workflow.${name}
           COMMAND ${CMAKE_COMMAND} "-DCMD=${T_COMMAND}" "-DEXPECT=${T_EXPECT}"
                   "-DREJECT=${T_REJECT}"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/support/expect_pass.cmake)
  set_tests_properties(${P}.workflow.${name} PROPERTIES TIMEOUT 300
                       LABELS "mpi;workflow" ENVIRONMENT "${XFER_MPIEXEC_ENV};${T_ENV}")
endfunction()

# ---- coupled P x C runs, MPMD, half and full duplex, three decompositions -------------------
set(decomp_1x1 even)
set(decomp_2x1 uneven)
set(decomp_1x2 even)
set(decomp_3x5 uneven)
set(decomp_5x3 empty)
# Separate launches through xfer-run: Open MPI connects them through ompi-server, an MPICH built
# with the ch3 device (scripts/build.sh mpich-ch3) by the port files alone; Debian's MPICH
# (ch4:ucx) cannot open ports, see docs/runtime.md.
set(RT_SEPARATE "")
if(TARGET xfer-run AND (XFER_MPI_FLAVOR STREQUAL "openmpi" OR XFER_MPICH_DEVICE MATCHES "^ch3"))
  set(RT_SEPARATE $<TARGET_FILE:xfer-run> --launch separate)
endif()
foreach(shape 1x1 2x1 1x2 3x5 5x3)
  string(REPLACE "x" ";" pq ${shape})
  list(GET pq 0 p)
  list(GET pq 1 q)
  foreach(duplex half full)
    set(cfg ${RT_DIR}/pair-${shape}-${duplex}.yaml)
    rt_workflow(${cfg} ${p} ${q} ${duplex})
    rt_mpmd(cmd ${cfg} NP ${p} ${q} ARGS --steps 5 --decomp ${decomp_${shape}})
    rt_test(mpmd.${duplex}.p${p}q${q} COMMAND ${cmd})
    if(RT_SEPARATE) # the same through xfer-run, one mpiexec per component (below)
      set(cfg ${RT_DIR}/sep-${shape}-${duplex}.yaml)
      rt_workflow(${cfg} ${p} ${q} ${duplex}
                  ARGS ", --steps, \"4\", --decomp, ${decomp_${shape}}")
      rt_test(separate.${duplex}.p${p}q${q} COMMAND ${RT_SEPARATE} ${cfg} ENV ${RT_SEP_ENV})
    endif()
  endforeach()
endforeach()

# ---- pipelines: a three-stage chain (the middle one receives and sends, its second channel
# full duplex), a fan-out (one producer, two consumers of the same datasets), a fan-in ----------
file(WRITE ${RT_DIR}/chain.yaml "workflow: rt_chain
components:
  - {name: a, nprocs: 3, cmd: [xfer-synth]}
  - {name: b, nprocs: 2, cmd: [xfer-synth]}
  - {name: v, nprocs: 1, cmd: [xfer-synth]}
channels:
  - name: c1
    from: a
    to: b
${RT_FWD}
  - name: c2
    from: b
    to: v
    duplex: full
    datasets:
      - {name: summary, type: float64, dims: [6, 5]}
      - {name: steer, type: int16, dims: [4], from: v}
")
file(WRITE ${RT_DIR}/fanout.yaml "workflow: rt_fanout
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth]}
  - {name: b, nprocs: 3, cmd: [xfer-synth]}
  - {name: c, nprocs: 1, cmd: [xfer-synth]}
channels:
  - name: to_b
    from: a
    to: b
${RT_FWD}
  - name: to_c
    from: a
    to: c
${RT_FWD}
")
file(WRITE ${RT_DIR}/fanin.yaml "workflow: rt_fanin
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth]}
  - {name: b, nprocs: 1, cmd: [xfer-synth]}
  - {name: c, nprocs: 2, cmd: [xfer-synth]}
channels:
  - name: from_a
    from: a
    to: c
${RT_FWD}
  - name: from_b
    from: b
    to: c
    datasets:
      - {name: other, type: uint16, dims: [7, 3, 2]}
")
rt_mpmd(cmd ${RT_DIR}/chain.yaml NP 3 2 1 ARGS --steps 6 --decomp uneven)
rt_test(mpmd.chain COMMAND ${cmd})
rt_mpmd(cmd ${RT_DIR}/fanout.yaml NP 2 3 1 ARGS --steps 6 --decomp empty)
rt_test(mpmd.fanout COMMAND ${cmd})
rt_mpmd(cmd ${RT_DIR}/fanin.yaml NP 2 1 2 ARGS --steps 6 --decomp even)
rt_test(mpmd.fanin COMMAND ${cmd})

# ---- a ring topology: an `auto` channel runs the ring algorithm the registry's flags give for
# its duplex mode (ring_half, ring_full), and its data arrive intact ----------------------------
foreach(duplex half full)
  set(cfg ${RT_DIR}/ring-3x2-${duplex}.yaml)
  rt_workflow(${cfg} 3 2 ${duplex} TOPOLOGY ring)
  rt_mpmd(cmd ${cfg} NP 3 2 ARGS --steps 3 --decomp uneven ENV XFER_TRACE=1)
  rt_pass_test(mpmd.ring.${duplex}.p3q2 COMMAND ${cmd} EXPECT "channel c at a: ring_${duplex},")
endforeach()

# ---- the order of puts: step 0's blocks are staged until the contribution is laid out, and
# adopted as the send stage when put in the channel's order. Against that order (copied into
# place), and each block put twice, the second time with wrong data: a put adds a block, so the
# second overlaps the first and is refused (naming both), and the first stays.
rt_mpmd(cmd ${RT_DIR}/pair-2x1-full.yaml NP 2 1 ARGS --steps 3 --decomp uneven --put-order reverse)
rt_test(mpmd.put_order.reverse.p2q1 COMMAND ${cmd})
rt_mpmd(cmd ${RT_DIR}/pair-3x5-half.yaml NP 3 5 ARGS --steps 3 --decomp uneven --put-order twice)
rt_test(mpmd.put_order.twice.p3q5 COMMAND ${cmd})

# ---- failures: each ends with a clear error and a non-zero exit, never a hang ---------------
rt_workflow(${RT_DIR}/fail.yaml 2 3 half TIMEOUT 5000)
rt_workflow(${RT_DIR}/fail-other-shape.yaml 2 3 half TIMEOUT 5000 PLANE "13, 10")
# the consumer asks for a dataset the channel does not have
rt_mpmd(cmd ${RT_DIR}/fail.yaml NP 2 3 ARGS --steps 3 ARGS1 --steps 3 --get nosuch)
rt_fail_test(mpmd.fail.unknown_dataset COMMAND ${cmd} MAXTIME 60
             EXPECT "channel c has no dataset \"nosuch\" \\(datasets: line, plane, cube\\)")
# the producer never puts a dataset the consumer gets
rt_mpmd(cmd ${RT_DIR}/fail.yaml NP 2 3 ARGS --steps 3 --skip plane ARGS1 --steps 3)
rt_fail_test(mpmd.fail.never_sent COMMAND ${cmd} MAXTIME 60
             EXPECT "a did not put dataset plane in step 0")
# the two sides disagree on a shape: both report it (whichever prints first ends the run)
rt_mpmd(cmd ${RT_DIR}/fail.yaml NP 2 3 ARGS --steps 3
        ARGS1 --steps 3 --config ${RT_DIR}/fail-other-shape.yaml)
rt_fail_test(mpmd.fail.shape_mismatch COMMAND ${cmd} MAXTIME 60
             EXPECT "dataset plane: (int32\\[13,9\\] from a, selection all at a, int32\\[13,10\\] from a, selection all at b|int32\\[13,10\\] from a, selection all at b, int32\\[13,9\\] from a, selection all at a)")
# the producer exits without finalizing after two steps
rt_mpmd(cmd ${RT_DIR}/fail.yaml NP 2 3 ARGS --steps 5 --exit-after 2 ARGS1 --steps 5)
rt_fail_test(mpmd.fail.producer_exits COMMAND ${cmd} MAXTIME 60 EXPECT "exiting early after 2 steps")
# A legal dataset no host can hold (8 TiB; xfer-run --check warns and accepts it): xfer-synth
# ends with a message naming the dataset and the size, not a signal. Nothing of that size is
# ever allocated (malloc refuses it; memory is never touched before the check).
if(TARGET xfer-run)
  set(huge_env ${RT_SEP_ENV})
  if(XFER_ENABLE_SANITIZERS) # malloc refuses it there too, instead of ASan ending the process
    list(APPEND huge_env "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0:allocator_may_return_null=1")
  endif()
  foreach(bind "" ", --bind")
    string(REPLACE ", --" "." tag "${bind}")
    file(WRITE ${RT_DIR}/huge${tag}.yaml "workflow: rt_huge
components:
  - {name: sim, nprocs: 1, cmd: [xfer-synth, --steps, \"1\"${bind}]}
  - {name: ana, nprocs: 1, cmd: [xfer-synth, --steps, \"1\"${bind}]}
channels:
  - {name: c, from: sim, to: ana, datasets: [{name: U, type: float64, dims: [1048576, 1048576]}]}
")
    rt_fail_test(huge${tag}.clear_error COMMAND $<TARGET_FILE:xfer-run> ${RT_DIR}/huge${tag}.yaml
                 MAXTIME 120 ENV ${huge_env}
                 EXPECT "xfer-synth: (sim|ana) rank [0-9]+: (step [0-9]+: )?channel c, dataset U: cannot allocate 8\\.0 TiB \\(8796093022208 bytes\\)"
                 REJECT "signal 11|Segmentation|SIGSEGV")
  endforeach()
endif()

# the producer stops answering (one MPMD job, no xferd: nothing tells a stall from a long
# computation, so the wait has no clock); the consumer's own deadline, through the
# step-status API, ends it. With MPI_THREAD_MULTIPLE the progress thread delivers the two
# steps the producer committed before it stalled, whatever the load: step 2 is the first
# that never begins.
rt_mpmd(cmd ${RT_DIR}/fail.yaml NP 2 3 ARGS --steps 5 --stall-after 2 --mpi-thread multiple
        ARGS1 --steps 5 --begin 200 --deadline-ms 3000)
rt_fail_test(mpmd.fail.producer_stalls COMMAND ${cmd} MAXTIME 90
             EXPECT "channel c: step 2 did not begin within 3000 ms")
# without the thread (progress: calls) a committed step moves only inside the producer's
# libxfer calls: a loaded machine may leave step 0 or 1 undelivered (docs/runtime.md, Progress)
rt_mpmd(cmd ${RT_DIR}/fail.yaml NP 2 3 ARGS --steps 5 --stall-after 2 --mpi-thread multiple
        ARGS1 --steps 5 --begin 200 --deadline-ms 3000 ENV XFER_PROGRESS=calls)
rt_fail_test(mpmd.fail.producer_stalls.calls COMMAND ${cmd} MAXTIME 90
             EXPECT "channel c: step [012] did not begin within 3000 ms")
# progress: thread asks for MPI_THREAD_MULTIPLE: said at xfer_init, naming the level MPI gave
rt_mpmd(cmd ${RT_DIR}/fail.yaml NP 2 3 ARGS --steps 1 --mpi-thread single
        ARGS1 --steps 1 --mpi-thread single ENV XFER_PROGRESS=thread)
rt_fail_test(mpmd.fail.progress_thread_single COMMAND ${cmd} MAXTIME 60
             EXPECT "progress: thread needs MPI_THREAD_MULTIPLE, and MPI was initialised with MPI_THREAD_SINGLE")

# ---- separate launches ------------------------------------------------------------------------
# a consumer started alone: no port file from its producer within the timeout
xfer_mpi_launcher(launch3 NP 3 ENV XFER_CONFIG=${RT_DIR}/fail.yaml XFER_COMPONENT=b
                  XFER_LAUNCH=separate XFER_RUN_DIR=${RT_DIR}/alone)
rt_fail_test(separate.fail.no_producer COMMAND ${launch3} ${SYNTH} --steps 1 MAXTIME 60
             EXPECT "channel c: no port file .*/c.port from component a within 5000 ms")
# Debian's MPICH (ch4:ucx) cannot open ports: the error says so and names the MPMD launch.
if(XFER_MPICH_DEVICE STREQUAL "ch4:ucx")
  xfer_mpi_launcher(launch2 NP 2 ENV XFER_CONFIG=${RT_DIR}/fail.yaml XFER_COMPONENT=a
                    XFER_LAUNCH=separate XFER_RUN_DIR=${RT_DIR}/noports)
  rt_fail_test(separate.no_ports COMMAND ${launch2} ${SYNTH} --steps 1 MAXTIME 60
               EXPECT "cannot connect separately launched jobs.*Launch the workflow as one MPMD job")
endif()

# ---- launch: user (the application's own intercommunicator) and flow control ----------------
add_executable(test_workflow_user ${CMAKE_CURRENT_SOURCE_DIR}/mpi/test_workflow_user.c)
target_link_libraries(test_workflow_user PRIVATE libxfer::xfer xfer_warnings)
foreach(pq "2;3" "3;1")
  list(GET pq 0 p)
  list(GET pq 1 q)
  math(EXPR np "${p} + ${q}")
  set(cfg ${RT_DIR}/user-p${p}q${q}.yaml)
  file(WRITE ${cfg} "workflow: rt_user
launch: user
control: {timeout_ms: 20000}
components:
  - {name: prod, nprocs: ${p}, cmd: [none]}
  - {name: cons, nprocs: ${q}, cmd: [none]}
channels:
  - {name: c, from: prod, to: cons, max_in_flight_steps: 2,
     datasets: [{name: x, type: float64, dims: [1001]}]}
")
  xfer_mpi_launcher(launch NP ${np})
  rt_test(user.flow.p${p}q${q} COMMAND ${launch} $<TARGET_FILE:test_workflow_user> ${cfg} ${p})
endforeach()

# Pipelines and an early exit through xfer-run (the pair shapes are registered above): the
# producer's failure ends the run with its exit code, xfer-run stops everything else.
if(RT_SEPARATE)
  foreach(pipe chain fanout fanin)
    file(READ ${RT_DIR}/${pipe}.yaml text)
    string(REPLACE "cmd: [xfer-synth]" "cmd: [xfer-synth, --steps, \"4\"]" text "${text}")
    file(WRITE ${RT_DIR}/sep-${pipe}.yaml "${text}")
    rt_test(separate.${pipe} COMMAND ${RT_SEPARATE} ${RT_DIR}/sep-${pipe}.yaml ENV ${RT_SEP_ENV})
  endforeach()
  file(READ ${RT_DIR}/fail.yaml text)
  string(REPLACE "name: a, nprocs: 2, cmd: [xfer-synth]"
                 "name: a, nprocs: 2, cmd: [xfer-synth, --steps, \"5\", --exit-after, \"2\"]"
                 text "${text}")
  string(REPLACE "name: b, nprocs: 3, cmd: [xfer-synth]"
                 "name: b, nprocs: 3, cmd: [xfer-synth, --steps, \"5\"]" text "${text}")
  file(WRITE ${RT_DIR}/sep-exits.yaml "${text}")
  rt_fail_test(separate.fail.producer_exits COMMAND ${RT_SEPARATE} ${RT_DIR}/sep-exits.yaml MAXTIME 90
               EXPECT "exiting early after 2 steps" ENV ${RT_SEP_ENV})
endif()

# ---- a producer killed right after a commit: its consumer gets every step that arrived and a
# failure naming the first that did not (delivery_test.sh) ----------------------------------
if(RT_SEPARATE AND TARGET xferd)
  file(WRITE ${RT_DIR}/delivery.yaml "workflow: rt_delivery
control: {heartbeat_ms: 250, timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth, --steps, \"30\", --kill-after, \"6\"]}
  - {name: b, nprocs: 2, cmd: [xfer-synth, --steps, \"30\"]}
channels:
  - {name: c, from: a, to: b, max_in_flight_steps: 2,
     datasets: [{name: x, type: float64, dims: [64, 8]}]}
")
  add_test(NAME ${P}.workflow.xferd.delivery
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/delivery_test.sh
                   $<TARGET_FILE:xfer-run> ${RT_DIR}/delivery.yaml 6)
  set_tests_properties(${P}.workflow.xferd.delivery PROPERTIES TIMEOUT 180
                       LABELS "mpi;workflow;control"
                       ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
endif()

# ---- the control plane (xferd, started by xfer-run): kill -9 of one component ----------------
# Its peers learn it from xferd (the launcher's exit report, or missed heartbeats) and fail with
# XFER_ERR_PEER_FAILED naming it within 2 x the heartbeat timeout (250 ms beats, 1000 ms
# timeout), long before the 60 s wait timeout; xfer-run exits non-zero and leaves nothing.
if(RT_SEPARATE AND TARGET xferd)
  foreach(victim a b)
    set(kill_a "")
    set(kill_b "")
    set(kill_${victim} ", --kill-after, \"3\"")
    if(victim STREQUAL "a")
      set(peer b)
    else()
      set(peer a)
    endif()
    file(WRITE ${RT_DIR}/kill-${victim}.yaml "workflow: rt_kill_${victim}
control: {heartbeat_ms: 250, timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth, --steps, \"50\"${kill_a}]}
  - {name: b, nprocs: 2, cmd: [xfer-synth, --steps, \"50\"${kill_b}]}
channels:
  - name: c
    from: a
    to: b
    max_in_flight_steps: 1
    datasets: [{name: x, type: float64, dims: [1000]}]
")
    add_test(NAME ${P}.workflow.control.kill9.${victim}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/kill_test.sh $<TARGET_FILE:xfer-run>
                     ${RT_DIR}/kill-${victim}.yaml ${victim} ${peer} 2000)
    set_tests_properties(${P}.workflow.control.kill9.${victim} PROPERTIES TIMEOUT 180
                         LABELS "mpi;workflow;control"
                         ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
  endforeach()
endif()

# ---- the control plane: a component that dies before forming its channel --------------------
# Its peer, waiting in MPI_Comm_accept (it is the channel's from: the watchdog's path) or for the
# port (it is the to: the lookup's path), ends with XFER_ERR_PEER_FAILED as soon as xferd declares
# the victim failed, not after control.timeout_ms (60 s) (docs/runtime.md, Joining).
if(RT_SEPARATE AND TARGET xferd AND TARGET xferctl)
  foreach(role from to)
    if(role STREQUAL "from")
      set(f a)
      set(t b)
    else()
      set(f b)
      set(t a)
    endif()
    # (b exits once xferd counts a running: form_fail_victim.sh)
    file(GENERATE OUTPUT ${RT_DIR}/form-fail-${role}.yaml CONTENT "workflow: rt_form_fail_${role}
control: {heartbeat_ms: 250, timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth, --steps, \"3\"]}
  - {name: b, nprocs: 1, cmd: [sh, ${CMAKE_CURRENT_SOURCE_DIR}/runtime/form_fail_victim.sh,
                               $<TARGET_FILE:xferctl>, a]}
channels:
  - name: c
    from: ${f}
    to: ${t}
    datasets: [{name: x, type: float64, dims: [100]}]
")
    add_test(NAME ${P}.workflow.control.form_fail.${role}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/form_fail_test.sh
                     $<TARGET_FILE:xfer-run> ${RT_DIR}/form-fail-${role}.yaml b a 30)
    set_tests_properties(${P}.workflow.control.form_fail.${role} PROPERTIES TIMEOUT 180
                         LABELS "mpi;workflow;control"
                         ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
  endforeach()
endif()

# ---- M x N: each receiving rank holds its selection (docs/runtime.md) -------------------------
# xfer-synth gets what its rank holds and checks it (and a hyperslab inside it) against the
# pattern: selections by mode (rows, columns, block), per dataset (all mixed with slabs), and by
# xfer_select (overlapping slabs, a corner, nothing, even ranks all and odd ones slabs), half
# and full duplex; the direct path forced for whole datasets too (XFER_RT_DIRECT).
function(rt_mxn_yaml out p q duplex sel)
  set(f ${RT_DIR}/mxn-${p}x${q}-${duplex}-${sel}.yaml)
  set(dsel "")
  set(chsel "${sel}")
  if(sel STREQUAL "perdataset")
    set(chsel "rows")
    set(dsel ", selection: all")
  endif()
  set(back "")
  if(duplex STREQUAL "full")
    set(back "
      - {name: back2, type: float32, dims: [11, 7], from: b}")
  endif()
  file(WRITE ${f} "workflow: rt_mxn
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: ${p}, cmd: [xfer-synth]}
  - {name: b, nprocs: ${q}, cmd: [xfer-synth]}
channels:
  - name: c
    from: a
    to: b
    duplex: ${duplex}
    selection: ${chsel}
    datasets:
      - {name: line, type: float64, dims: [37]${dsel}}
      - {name: plane, type: int32, dims: [13, 9]}
      - {name: cube, type: uint8, dims: [5, 4, 3], selection: block}${back}
")
  set(${out} ${f} PARENT_SCOPE)
endfunction()
# (2 x 3 and 3 x 2 get every combination; 1 x 1 and 4 x 2 the row slabs and the per-dataset
# modes, which cover the one-rank and the many-rank cases of the same code)
foreach(pq "1;1" "2;3" "3;2" "4;2")
  list(GET pq 0 p)
  list(GET pq 1 q)
  set(sels rows perdataset)
  set(picks "")
  if(p EQUAL 2 OR p EQUAL 3)
    set(sels rows columns block perdataset)
    set(picks overlap mixed corner none)
  endif()
  foreach(sel ${sels})
    foreach(duplex half full)
      rt_mxn_yaml(f ${p} ${q} ${duplex} ${sel})
      rt_mpmd(cmd ${f} NP ${p} ${q} ARGS --steps 3 --attrs)
      rt_test(mpmd.mxn.${sel}.${duplex}.p${p}q${q} COMMAND ${cmd})
    endforeach()
  endforeach()
  rt_mxn_yaml(f ${p} ${q} full user)
  foreach(pick ${picks})
    rt_mpmd(cmd ${f} NP ${p} ${q} ARGS --steps 3 --select ${pick})
    rt_test(mpmd.mxn.user_${pick}.p${p}q${q} COMMAND ${cmd})
  endforeach()
  rt_mxn_yaml(f ${p} ${q} full all)
  rt_mpmd(cmd ${f} NP ${p} ${q} ARGS --steps 3 --attrs ENV XFER_RT_DIRECT=1)
  rt_test(mpmd.mxn.direct_all.p${p}q${q} COMMAND ${cmd})
endforeach()
# The hybrid path (runtime.h): with a dataset every receiving rank takes whole (line) beside
# slabs, the allgatherv plan moves the headers, the attributes and line while the direct
# schedule moves the slabs; both sides say so in the trace. The same runs with the hybrid path
# off (XFER_RT_HYBRID=0) keep the pure direct path's mixed case covered.
foreach(pq "2;3" "3;2")
  list(GET pq 0 p)
  list(GET pq 1 q)
  foreach(duplex half full)
    rt_mxn_yaml(f ${p} ${q} ${duplex} perdataset)
    rt_mpmd(cmd ${f} NP ${p} ${q} ARGS --steps 3 --attrs ENV XFER_TRACE=1)
    rt_pass_test(mpmd.mxn.hybrid.${duplex}.p${p}q${q} COMMAND ${cmd}
                 EXPECT "channel c at a: hybrid: [a-z_:]+ and direct.*channel c at b: hybrid|channel c at b: hybrid: [a-z_:]+ and direct.*channel c at a: hybrid")
    rt_mpmd(cmd ${f} NP ${p} ${q} ARGS --steps 3 --attrs ENV XFER_RT_HYBRID=0)
    rt_test(mpmd.mxn.no_hybrid.${duplex}.p${p}q${q} COMMAND ${cmd})
  endforeach()
endforeach()
# Node staging of the direct schedule (mxn.h): on this one host every receiving rank shares a
# node, so the runs above forward what node mates select in common; the same selections with
# staging off (XFER_RT_NODE_STAGE=0), and on virtual nodes of 2 ranks (XFER_NODE_SIZE=2: some
# mates share a node, some do not). The trace names the staged schedule.
rt_mxn_yaml(f 2 3 full user)
foreach(pick overlap mixed)
  rt_mpmd(cmd ${f} NP 2 3 ARGS --steps 3 --select ${pick} ENV XFER_RT_NODE_STAGE=0)
  rt_test(mpmd.mxn.no_stage.user_${pick}.p2q3 COMMAND ${cmd})
  rt_mpmd(cmd ${f} NP 2 3 ARGS --steps 3 --select ${pick} ENV XFER_NODE_SIZE=2)
  rt_test(mpmd.mxn.vnodes.user_${pick}.p2q3 COMMAND ${cmd})
endforeach()
rt_mpmd(cmd ${f} NP 2 3 ARGS --steps 3 --select overlap ENV XFER_TRACE=1)
rt_pass_test(mpmd.mxn.staged_trace.p2q3 COMMAND ${cmd}
             EXPECT "channel c at b: direct, node-staged \\(M x N\\)")
if(RT_SEPARATE)
  rt_mxn_yaml(f 3 2 full block)
  rt_test(separate.mxn.block.p3q2 COMMAND ${RT_SEPARATE} ${f} ENV ${RT_SEP_ENV})
  rt_mxn_yaml(f 2 3 full perdataset)
  rt_test(separate.mxn.hybrid.p2q3 COMMAND ${RT_SEPARATE} ${f} ENV ${RT_SEP_ENV})
endif()
# Steps beyond MPI's int counts (the direct path cuts messages of 1 GiB): 2 GiB and a half MiB
# (2^28 + 2^16 + 1 float64) per rank (1 x 1), and in all with each consumer holding its half
# (2 x 2, rows): past INT_MAX bytes in every count that 2.5 GiB was past, each message over
# 1 GiB cut (1 x 1: two of 1 GiB and the rest; 2 x 2: each half, 1 GiB and the rest), with a
# fifth fewer bytes to fill, move and check than 2.5 GiB had. Each needs about 7 GiB of memory
# at its peak: they run one at a time, and only where 20 GiB are.
file(STRINGS /proc/meminfo rt_memtotal REGEX "^MemTotal:")
string(REGEX MATCH "[0-9]+" rt_memkb "${rt_memtotal}")
if(XFER_ENABLE_SANITIZERS)
  message(STATUS "runtime: the > 2 GiB step tests run without sanitizers only")
elseif(rt_memkb AND rt_memkb GREATER 20000000)
  foreach(pq "1;1" "2;2")
    list(GET pq 0 p)
    list(GET pq 1 q)
    set(f ${RT_DIR}/large-${p}x${q}.yaml)
    file(WRITE ${f} "workflow: rt_large
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: ${p}, cmd: [xfer-synth]}
  - {name: b, nprocs: ${q}, cmd: [xfer-synth]}
channels:
  - {name: c, from: a, to: b, max_in_flight_steps: 1, selection: rows,
     datasets: [{name: big, type: float64, dims: [268500993]}]}
")
    rt_mpmd(cmd ${f} NP ${p} ${q} ARGS --steps 1)
    rt_pass_test(mpmd.large.p${p}q${q} COMMAND ${cmd}
                 EXPECT "b: 1 steps, [0-9]+ elements checked on rank 0: ok")
    set_tests_properties(${P}.workflow.mpmd.large.p${p}q${q} PROPERTIES TIMEOUT 900
                         RESOURCE_LOCK xfer_large_memory LABELS "mpi;workflow;large")
  endforeach()
else()
  message(STATUS "runtime: the > 2 GiB step tests need 20 GiB of memory; skipped")
endif()

# zero copy (xfer_bind_buffer): nothing copied in by puts, only the hyperslab checks copied out
rt_mxn_yaml(f 2 3 half all)
rt_mpmd(cmd ${f} NP 2 3 ARGS --steps 3 --attrs --bind)
rt_pass_test(mpmd.bind.half.p2q3 COMMAND ${cmd}
             EXPECT "a: channel c: 3 steps, [0-9]+ bytes sent, 0 received, 0 copied in, 0 copied out")
rt_mxn_yaml(f 3 2 full block)
rt_mpmd(cmd ${f} NP 3 2 ARGS --steps 3 --attrs --bind --begin -1)
rt_pass_test(mpmd.bind.full.p3q2 COMMAND ${cmd}
             EXPECT "b: channel c: 3 steps, [0-9]+ bytes sent, [0-9]+ received, 0 copied in")
# a buffer per step: even steps in one buffer, odd ones in another (rebound during the step
# before, wiped first), sent and received in place; every step checked in the buffer it
# landed in
rt_mxn_yaml(f 2 3 full rows)
rt_mpmd(cmd ${f} NP 2 3 ARGS --steps 5 --bind-alternate)
rt_pass_test(mpmd.bind.alternate.full.p2q3 COMMAND ${cmd}
             EXPECT "b: channel c: 5 steps, [0-9]+ bytes sent, [0-9]+ received, 0 copied in")
rt_mxn_yaml(f 3 2 half block)
rt_mpmd(cmd ${f} NP 3 2 ARGS --steps 5 --bind-alternate --begin -1)
rt_pass_test(mpmd.bind.alternate.half.p3q2 COMMAND ${cmd}
             EXPECT "b: channel c: 5 steps, 0 bytes sent, [0-9]+ received, 0 copied in")
# A bound sender's xfer_step_end waits until its part of the step is sent, and step 0 cannot be
# sent before every receiving rank posted its part of the set-up. These receivers wait on
# another channel first (for a step their sender commits after the bound one), which must post
# it: a cycle of channels c (a -> b) and d (b -> a), each side committing before it gets
# (xfer-synth --orders random, seed 5 of xfer-synth's random tester), and two channels a -> b
# that b reads in the other order at step 0 (seed 3). Both hung at step 0.
file(WRITE ${RT_DIR}/bind-cycle.yaml "workflow: bind_cycle
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth]}
  - {name: b, nprocs: 3, cmd: [xfer-synth]}
channels:
  - {name: c, from: a, to: b, max_in_flight_steps: 2,
     datasets: [{name: v, type: int32, dims: [12, 5]}]}
  - {name: d, from: b, to: a, datasets: [{name: w, type: float64, dims: [7]}]}
")
rt_mpmd(cmd ${RT_DIR}/bind-cycle.yaml NP 2 3
        ARGS --steps 17 --seed 5 --orders random --attrs --bind-alternate)
rt_pass_test(mpmd.bind.cycle.p2q3 COMMAND ${cmd}
             EXPECT "b: channel d: 17 steps, [0-9]+ bytes sent, 0 received, 0 copied in")
file(WRITE ${RT_DIR}/bind-two.yaml "workflow: bind_two
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth]}
  - {name: b, nprocs: 2, cmd: [xfer-synth]}
channels:
  - {name: c, from: a, to: b, datasets: [{name: v, type: int32, dims: [12, 5]}]}
  - {name: e, from: a, to: b, datasets: [{name: w, type: float64, dims: [7]}]}
")
rt_mpmd(cmd ${RT_DIR}/bind-two.yaml NP 2 2 ARGS --steps 4 --seed 3 --orders random --bind)
rt_pass_test(mpmd.bind.two_channels.p2q2 COMMAND ${cmd}
             EXPECT "a: channel e: 4 steps, [0-9]+ bytes sent, 0 received, 0 copied in")
set_tests_properties(${P}.workflow.mpmd.bind.cycle.p2q3 ${P}.workflow.mpmd.bind.two_channels.p2q2
                     PROPERTIES TIMEOUT 60)

# per-step attributes on the allgatherv path too (whole datasets), and their bound
rt_mxn_yaml(f 3 2 full all)
rt_mpmd(cmd ${f} NP 3 2 ARGS --steps 3 --attrs)
rt_test(mpmd.attrs.allgatherv.p3q2 COMMAND ${cmd})
file(READ ${f} text)
string(REPLACE "selection: all" "selection: all\n    attributes_bytes: 24" text "${text}")
file(WRITE ${RT_DIR}/attrs-small.yaml "${text}")
rt_mpmd(cmd ${RT_DIR}/attrs-small.yaml NP 3 2 ARGS --steps 3 --attrs)
rt_fail_test(mpmd.attrs.too_large COMMAND ${cmd} MAXTIME 60
             EXPECT "attribute time: the attributes of step 0 would take 48 bytes, the channel's attributes_bytes is 24")

# selection: user without xfer_select: both sides fail, naming the rank and the dataset
rt_mxn_yaml(f 2 3 half user)
rt_mpmd(cmd ${f} NP 2 3 ARGS --steps 2)
rt_fail_test(mpmd.mxn.fail.user_undeclared COMMAND ${cmd} MAXTIME 60
             EXPECT "dataset line has selection: user, but rank [0-9] of b did not call xfer_select")

# ---- liveness, not a clock (docs/runtime.md) and the step-status API ------------------------
# A producer that computes longer than control.timeout_ms between steps is alive: one MPMD job
# without xferd (the job shares its processes' fate), and through xfer-run with xferd (its
# heartbeats say so), the issue's figures: 4000 ms of computing, timeout_ms 2000. Two steps: the
# gap before step 0 (the consumer waits in step 0's set-up) and the one between steps (it waits
# for a step of a channel set up); a third gap would be the second again.
file(WRITE ${RT_DIR}/live.yaml "workflow: rt_live
control: {heartbeat_ms: 200, timeout_ms: 2000}
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth, --steps, \"2\", --compute-ms, \"4000\"]}
  - {name: b, nprocs: 3, cmd: [xfer-synth, --steps, \"2\", --begin, \"-1\"]}
channels:
  - {name: c, from: a, to: b, max_in_flight_steps: 1,
     datasets: [{name: x, type: float64, dims: [1000]}, {name: y, type: int32, dims: [6, 7]}]}
")
rt_mpmd(cmd ${RT_DIR}/live.yaml NP 2 3 ARGS --steps 2 --compute-ms 4000 ARGS1 --steps 2)
rt_pass_test(mpmd.live.compute_gap COMMAND ${cmd} EXPECT "b: 2 steps, [0-9]+ elements checked")
# NOT_READY: the consumer polls (timeout 0) while the producer computes, and still checks
# every byte; the end of the stream is a status
rt_mpmd(cmd ${RT_DIR}/live.yaml NP 2 3 ARGS --steps 4 --compute-ms 300
        ARGS1 --steps 4 --begin 0)
rt_pass_test(mpmd.live.poll COMMAND ${cmd}
             EXPECT "b: xfer_step_begin\\(0 ms\\) said NOT_READY [1-9][0-9]* times")
# a producer that waits with begin on a slow consumer: back-pressure through begin's timeout
rt_mpmd(cmd ${RT_DIR}/live.yaml NP 2 3 ARGS --steps 6 --begin 50
        ARGS1 --steps 6 --compute-ms 200 --begin -1)
rt_pass_test(mpmd.live.sender_begin COMMAND ${cmd}
             EXPECT "a: xfer_step_begin\\(50 ms\\) said NOT_READY [1-9][0-9]* times")
if(TARGET xfer-run AND TARGET xferd)
  # Each leader reports to xferd on a connection of its own, the data goes over MPI: a
  # receiver's ack often reaches xferd before the sender's step report (in 4 of 5 runs of
  # this before xferd held such acks). A legal ordering, never logged as refused.
  file(WRITE ${RT_DIR}/reports.yaml "workflow: rt_reports
components:
  - {name: a, nprocs: 1, cmd: [xfer-synth, --steps, \"300\", --quiet]}
  - {name: b, nprocs: 1, cmd: [xfer-synth, --steps, \"300\"]}
channels:
  - {name: c, from: a, to: b, max_in_flight_steps: 2, datasets: [{name: x, type: float64, dims: [37]}]}
")
  rt_pass_test(xferd.reports_race COMMAND $<TARGET_FILE:xfer-run> --launch mpmd
               ${RT_DIR}/reports.yaml EXPECT "b: 300 steps, [0-9]+ elements checked"
               REJECT " refused: " ENV ${RT_SEP_ENV})
  rt_pass_test(xferd.live.compute_gap COMMAND $<TARGET_FILE:xfer-run> --launch mpmd
               ${RT_DIR}/live.yaml EXPECT "b: 2 steps, [0-9]+ elements checked" ENV ${RT_SEP_ENV})
  # a stall that silences the heartbeats too (SIGSTOP of the producer's rank 0): the consumer
  # fails with XFER_ERR_PEER_FAILED naming it within 2 x the heartbeat timeout (1000 ms)
  file(WRITE ${RT_DIR}/stop-a.yaml "workflow: rt_stop_a
control: {heartbeat_ms: 250, timeout_ms: 2000}
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth, --steps, \"50\", --sigstop-after, \"3\"]}
  - {name: b, nprocs: 2, cmd: [xfer-synth, --steps, \"50\", --begin, \"-1\"]}
channels:
  - {name: c, from: a, to: b, max_in_flight_steps: 1,
     datasets: [{name: x, type: float64, dims: [1000]}]}
")
  add_test(NAME ${P}.workflow.xferd.live.sigstop
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/kill_test.sh $<TARGET_FILE:xfer-run>
                   ${RT_DIR}/stop-a.yaml a b 2000 STOP mpmd)
  set_tests_properties(${P}.workflow.xferd.live.sigstop PROPERTIES TIMEOUT 180
                       LABELS "mpi;workflow;control"
                       ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
  # the same stall met by the consumer's progress thread while the consumer computes: its next
  # call reports the failure in the same words, at once
  file(WRITE ${RT_DIR}/stop-a-thread.yaml "workflow: rt_stop_a_thread
control: {heartbeat_ms: 250, timeout_ms: 2000}
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth, --steps, \"50\", --sigstop-after, \"3\",
                               --mpi-thread, multiple]}
  - {name: b, nprocs: 2, cmd: [xfer-synth, --steps, \"50\", --begin, \"-1\", --compute-ms,
                               \"3000\", --mpi-thread, multiple]}
channels:
  - {name: c, from: a, to: b, max_in_flight_steps: 1,
     datasets: [{name: x, type: float64, dims: [1000]}]}
")
  add_test(NAME ${P}.workflow.xferd.live.sigstop_thread
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/kill_test.sh $<TARGET_FILE:xfer-run>
                   ${RT_DIR}/stop-a-thread.yaml a b 2000 STOP mpmd)
  set_tests_properties(${P}.workflow.xferd.live.sigstop_thread PROPERTIES TIMEOUT 180
                       LABELS "mpi;workflow;control"
                       ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
  # every rank's liveness counts, not only rank 0's: rank 1 of the consumer stops (its rank 0
  # keeps beating), then rank 1 of the producer; the peer fails naming the stopped component
  # within 2 x the heartbeat timeout, and xfer-run names the stopped one as the first failure
  foreach(victim a b)
    if(victim STREQUAL "a")
      set(peer b)
      set(va ", --sigstop-after, \"3\", --fault-rank, \"1\"")
      set(vb "")
    else()
      set(peer a)
      set(va "")
      set(vb ", --sigstop-after, \"3\", --fault-rank, \"1\"")
    endif()
    file(WRITE ${RT_DIR}/stop-rank1-${victim}.yaml "workflow: rt_stop_rank1_${victim}
control: {heartbeat_ms: 250, timeout_ms: 2000}
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth, --steps, \"50\"${va}]}
  - {name: b, nprocs: 2, cmd: [xfer-synth, --steps, \"50\", --begin, \"-1\"${vb}]}
channels:
  - {name: c, from: a, to: b, max_in_flight_steps: 1,
     datasets: [{name: x, type: float64, dims: [1000]}]}
")
    add_test(NAME ${P}.workflow.xferd.live.rank1_stops.${victim}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/kill_test.sh
                     $<TARGET_FILE:xfer-run> ${RT_DIR}/stop-rank1-${victim}.yaml ${victim} ${peer}
                     2000 STOP mpmd)
    set_tests_properties(${P}.workflow.xferd.live.rank1_stops.${victim} PROPERTIES TIMEOUT 180
                         LABELS "mpi;workflow;control"
                         ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
  endforeach()
endif()

# ---- xferd killed mid-run: xfer-run restarts it, the journal restores the workflow's state ----
if(TARGET xfer-run AND TARGET xferd AND TARGET xferctl)
  file(WRITE ${RT_DIR}/restart.yaml "workflow: rt_restart
control: {heartbeat_ms: 200, timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth, --steps, \"60\", --compute-ms, \"100\"]}
  - {name: b, nprocs: 1, cmd: [xfer-synth, --steps, \"60\"]}
channels:
  - {name: c, from: a, to: b, max_in_flight_steps: 2,
     datasets: [{name: x, type: float64, dims: [1000]}]}
")
  add_test(NAME ${P}.workflow.control.xferd_restart
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/xferd_restart_test.sh
                   $<TARGET_FILE:xfer-run> $<TARGET_FILE:xferctl> ${RT_DIR}/restart.yaml
                   ${CMAKE_CURRENT_BINARY_DIR}/runtime/xferd_restart)
  set_tests_properties(${P}.workflow.control.xferd_restart PROPERTIES TIMEOUT 180
                       LABELS "mpi;workflow;control"
                       ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
endif()

# ---- transport: file (docs/runtime.md, "Stream or file"): the same synthetic components, one
# switch (XFER_TRANSPORT=file), every shape of the stream's tests above; the step files of each
# test in a directory of its own. Separate launches need no MPI connection over files: any MPI
# runs them, Debian's ch4:ucx MPICH included.
if(TARGET xfer_hdf5)
  set(FT_DIR ${RT_DIR}/file-steps)
  # ft_mpmd(<name> <cfg> NP ... ARGS ...): rt_mpmd through files
  function(ft_mpmd name cfg)
    cmake_parse_arguments(F "" "" "NP;ARGS;ARGS1" ${ARGN})
    set(a1 "")
    if(F_ARGS1)
      set(a1 ARGS1 ${F_ARGS1})
    endif()
    rt_mpmd(cmd ${cfg} NP ${F_NP} ARGS ${F_ARGS} ${a1}
            ENV XFER_TRANSPORT=file XFER_TRANSPORT_DIR=${FT_DIR}/${name})
    rt_test(file.${name} COMMAND ${cmd})
  endfunction()
  ft_mpmd(mpmd.half.p3q5 ${RT_DIR}/pair-3x5-half.yaml NP 3 5 ARGS --steps 4 --decomp uneven)
  ft_mpmd(mpmd.full.p5q3 ${RT_DIR}/pair-5x3-full.yaml NP 5 3 ARGS --steps 3 --decomp empty)
  ft_mpmd(mpmd.full.attrs.p2q1 ${RT_DIR}/pair-2x1-full.yaml NP 2 1 ARGS --steps 3 --attrs)
  ft_mpmd(mpmd.bind.alternate.full.p3q5 ${RT_DIR}/pair-3x5-full.yaml NP 3 5
          ARGS --steps 4 --bind-alternate --attrs)
  ft_mpmd(mpmd.bind.half.p3q5 ${RT_DIR}/pair-3x5-half.yaml NP 3 5 ARGS --steps 3 --bind)
  ft_mpmd(mpmd.begin.select_mixed.p3q5 ${RT_DIR}/pair-3x5-half.yaml NP 3 5
          ARGS --steps 4 --begin 0 --select mixed)
  ft_mpmd(mpmd.select_corner.p5q3 ${RT_DIR}/pair-5x3-half.yaml NP 5 3
          ARGS --steps 3 --select corner --decomp uneven)
  ft_mpmd(mpmd.chain ${RT_DIR}/chain.yaml NP 3 2 1 ARGS --steps 4 --decomp uneven)
  # keep: true still bounds the sender by max_in_flight_steps (1) once the receiver reads: with
  # the consumer computing 150 ms before each step, the producer's last step waits for the
  # consumer's 8th release, (10 - 2) x 150 ms after the consumer's loop began (it used to run
  # all of them ahead, in a few ms). The producer's own clock starts when its xfer_init returns,
  # which may be 100 ms or more after the consumer's (it writes the manifest; 1087 ms measured
  # once under load): the bound asserted is 900 ms, 6 steps of the consumer's.
  file(WRITE ${RT_DIR}/file-keep.yaml "workflow: rt_file_keep
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth]}
  - {name: b, nprocs: 2, cmd: [xfer-synth]}
channels:
  - {name: c, from: a, to: b, transport: file, max_in_flight_steps: 1,
     file: {dir: ${FT_DIR}/keep, keep: true}, datasets: [{name: x, type: float64, dims: [100]}]}
")
  rt_mpmd(cmd ${RT_DIR}/file-keep.yaml NP 2 2 ARGS --steps 10 --report-time
          ARGS1 --steps 10 --compute-ms 150)
  rt_pass_test(file.keep.flow COMMAND ${cmd}
               EXPECT "a: 10 steps in (9[0-9][0-9]|[1-9][0-9][0-9][0-9]+) ms")
  # separate launches through xfer-run --transport file, with xferd
  if(TARGET xfer-run)
    rt_workflow(${RT_DIR}/file-sep-3x5-full.yaml 3 5 full
                ARGS ", --steps, \"4\", --decomp, uneven")
    rt_test(file.separate.full.p3q5 COMMAND $<TARGET_FILE:xfer-run> --launch separate
            --transport file ${RT_DIR}/file-sep-3x5-full.yaml
            ENV ${RT_SEP_ENV} XFER_TRANSPORT_DIR=${FT_DIR}/separate)
  endif()
  # the two sides disagree on a shape: the receiver names it, from the sender's manifest
  rt_mpmd(cmd ${RT_DIR}/fail.yaml NP 2 3 ARGS --steps 3
          ARGS1 --steps 3 --config ${RT_DIR}/fail-other-shape.yaml
          ENV XFER_TRANSPORT=file XFER_TRANSPORT_DIR=${FT_DIR}/mismatch)
  rt_fail_test(file.fail.shape_mismatch COMMAND ${cmd} MAXTIME 60
               EXPECT "XFER_ERR_MISMATCH: .*channel c: dataset plane: int32\\[13,10\\] at b, int32\\[13,9\\] at a")
  # no HDF5 adapter to load: a clear error, at xfer_init
  rt_mpmd(cmd ${RT_DIR}/fail.yaml NP 2 3 ARGS --steps 3
          ENV XFER_TRANSPORT=file XFER_TRANSPORT_DIR=${FT_DIR}/noadapter
              XFER_HDF5_ADAPTER=${FT_DIR}/no-such-libxfer_hdf5.so)
  rt_fail_test(file.fail.no_adapter COMMAND ${cmd} MAXTIME 60
               EXPECT "channel c: transport: file needs libxfer's HDF5 adapter .*no-such-libxfer_hdf5.so")
  # XFER_TRANSPORT with a word that is neither
  rt_mpmd(cmd ${RT_DIR}/fail.yaml NP 2 3 ARGS --steps 3 ENV XFER_TRANSPORT=files)
  rt_fail_test(file.fail.bad_env COMMAND ${cmd} MAXTIME 60
               EXPECT "XFER_TRANSPORT=files: stream or file")
  # A disk that fills up mid-run (docs/runtime.md, "Stream or file": a full disk): the run ends,
  # the sender's ranks fail with XFER_ERR_IO naming the cause, the receiver with the sender's
  # failure, and every step written before the fault reached it intact. shim: a disk of BYTES
  # modelled by an LD_PRELOAD library (no privileges, deterministic: it fills at step 7 of 20);
  # nofallocate: the same on a file system that cannot reserve, so the disk fills inside HDF5's
  # collective writes; tmpfs: a real one of 1 MiB (skipped where mounts are not allowed).
  if(TARGET xfer-run AND TARGET xferd)
    add_library(xfer_test_full_disk MODULE support/full_disk.c)
    target_compile_options(xfer_test_full_disk PRIVATE -Wall -Wextra -Werror)
    target_link_libraries(xfer_test_full_disk PRIVATE ${CMAKE_DL_LIBS})
    file(WRITE ${RT_DIR}/file-full-disk.yaml "workflow: rt_file_full_disk
control: {heartbeat_ms: 250, heartbeat_timeout_ms: 1000, timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth, --steps, \"40\"]}
  - {name: b, nprocs: 2, cmd: [xfer-synth, --steps, \"40\", --decomp, even]}
channels:
  - {name: c, from: a, to: b, transport: file, file: {dir: ${FT_DIR}/full-disk, keep: true},
     datasets: [{name: x, type: float64, dims: [4096]}, {name: y, type: int32, dims: [64, 33]}]}
")
    # a step's file is 45672 bytes: 7 fit in 349704 with 30000 to spare, too few for the 8th
    foreach(mode shim nofallocate tmpfs)
      set(tmode ${mode})
      set(bytes 349704)
      set(tenv FULL_DISK_SHIM=$<TARGET_FILE:xfer_test_full_disk>)
      if(mode STREQUAL "nofallocate")
        set(tmode shim)
        list(APPEND tenv SHIM_NO_FALLOCATE=1)
      elseif(mode STREQUAL "tmpfs")
        set(bytes 1m)
      endif()
      add_test(NAME ${P}.workflow.file.full_disk.${mode}
               COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/full_disk_test.sh
                       $<TARGET_FILE:xfer-run> ${RT_DIR}/file-full-disk.yaml ${FT_DIR}/full-disk
                       ${tmode} ${bytes} 7)
      set_tests_properties(${P}.workflow.file.full_disk.${mode} PROPERTIES TIMEOUT 180
                           LABELS "mpi;workflow;control" SKIP_RETURN_CODE 77 RUN_SERIAL TRUE
                           ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV};${tenv}")
    endforeach()
    # The disk fills after the last step, before the end marker (end_marker_test.sh): the end
    # is still written (its room was taken at the start), nobody waits for it for ever.
    file(WRITE ${RT_DIR}/file-end-full.yaml "workflow: rt_file_end_full
control: {heartbeat_ms: 250, heartbeat_timeout_ms: 60000, timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth, --steps, \"3\", --report, --fault, \"stop:0:2:end\"]}
  - {name: b, nprocs: 2, cmd: [xfer-synth, --steps, \"3\", --report, --decomp, even]}
channels:
  - {name: c, from: a, to: b, transport: file, file: {dir: ${FT_DIR}/end-full, keep: true},
     datasets: [{name: x, type: float64, dims: [64]}]}
  - {name: s, from: a, to: b, datasets: [{name: y, type: int32, dims: [8, 3]}]}
")
    add_test(NAME ${P}.workflow.file.full_disk.end_marker
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/end_marker_test.sh
                     $<TARGET_FILE:xfer-run> ${RT_DIR}/file-end-full.yaml ${FT_DIR}/end-full)
    set_tests_properties(${P}.workflow.file.full_disk.end_marker PROPERTIES TIMEOUT 180
                         LABELS "mpi;workflow;control" SKIP_RETURN_CODE 77 RUN_SERIAL TRUE
                         ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
  endif()
  # kill -9 under xferd: the receiver waiting for the next step's file learns the sender died
  # (PEER_FAILED within 2 x the heartbeat timeout), and the sender waiting for the receiver to
  # catch up learns it likewise. keep: false, one step in flight: the sender cannot run ahead,
  # so whichever dies, the other is running and waits for it.
  if(TARGET xfer-run AND TARGET xferd)
    foreach(victim a b)
      set(kill_a "")
      set(kill_b "")
      set(kill_${victim} ", --kill-after, \"3\"")
      set(peer b)
      if(victim STREQUAL "b")
        set(peer a)
      endif()
      file(WRITE ${RT_DIR}/file-kill-${victim}.yaml "workflow: rt_file_kill_${victim}
control: {heartbeat_ms: 250, heartbeat_timeout_ms: 1000, timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth, --steps, \"50\"${kill_a}]}
  - {name: b, nprocs: 2, cmd: [xfer-synth, --steps, \"50\", --compute-ms, \"100\"${kill_b}]}
channels:
  - {name: c, from: a, to: b, transport: file, file: {dir: ${FT_DIR}/kill-${victim}, keep: false},
     max_in_flight_steps: 1, datasets: [{name: x, type: float64, dims: [1000]}]}
")
      add_test(NAME ${P}.workflow.file.kill9.${victim}
               COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/kill_test.sh
                       $<TARGET_FILE:xfer-run> ${RT_DIR}/file-kill-${victim}.yaml ${victim} ${peer}
                       2000)
      set_tests_properties(${P}.workflow.file.kill9.${victim} PROPERTIES TIMEOUT 180
                           LABELS "mpi;workflow;control"
                           ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
    endforeach()
  endif()
endif()
include(${CMAKE_CURRENT_SOURCE_DIR}/runtime/channels.cmake)
include(${CMAKE_CURRENT_SOURCE_DIR}/runtime/blocks.cmake)
include(${CMAKE_CURRENT_SOURCE_DIR}/runtime/flow.cmake)
include(${CMAKE_CURRENT_SOURCE_DIR}/runtime/close.cmake)
include(${CMAKE_CURRENT_SOURCE_DIR}/runtime/chaos.cmake)
include(${CMAKE_CURRENT_SOURCE_DIR}/runtime/zip.cmake)
