# SPDX-License-Identifier: BSD-3-Clause
# Joined datasets (dims: [joined, ...]; docs/runtime.md, "Joined datasets"). xfer-synth's senders
# put rows drawn from --seed every step (tools/synth/joined.c: drawn counts, zero rows on some
# ranks, every row on one rank, no rows at all), each value keyed on its global row; every
# receiving rank checks the step's shape, each sender's rows and its own selection (all, rows,
# user boxes clipped to the step) against what it computed itself, then every byte. A joined
# dataset always travels beside fixed ones. test_joined checks the malformed puts, a step
# nobody put and max_rows. Included after runtime/tests.cmake, whose helpers it uses.
if(NOT TARGET xfer-synth)
  return()
endif()

# The transports that carry joined datasets: every test below runs once for each.
set(RT_JOINED_TRANSPORTS file stream)
# The transports on which a joined step may hold no rows at all (a transport left out of it
# gets one row in such steps: xfer-synth --no-empty-steps, and its tests of empty steps are
# registered disabled).
set(RT_JOINED_EMPTY_STEPS file stream)

set(JN_DIR ${RT_DIR}/joined)
file(MAKE_DIRECTORY ${JN_DIR})

# jn_head(<out> <workflow> <p> <q> <cmd>): a test workflow's lines up to `channels:`, components a
# (p ranks) and b (q ranks) both running cmd; jn_keep(<out> <transport>): the channel key that keeps
# the file transport's step files (for a test to look at), empty for the stream.
function(jn_head out wf p q cmd)
  set(${out} "workflow: ${wf}
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: ${p}, cmd: [${cmd}]}
  - {name: b, nprocs: ${q}, cmd: [${cmd}]}
channels:" PARENT_SCOPE)
endfunction()
function(jn_keep out tp)
  set(${out} "" PARENT_SCOPE)
  if(tp STREQUAL "file")
    set(${out} "\n    file: {keep: true}" PARENT_SCOPE)
  endif()
endfunction()

# jn_workflow(<file> <transport> <p> <q> <half|full> <selection> [MAX_ROWS n] [ARGS text]
# [ONE]): components a (p ranks) and b (q ranks), channel c: two joined datasets (parts: rows of
# 3; ids: 1-D; ONE: parts alone) beside a fixed one (plane); full duplex adds a joined and a
# fixed one from b. parts' max_rows is the most rows xfer-synth ever puts in a step (10 per
# sender) unless MAX_ROWS.
function(jn_workflow file tp p q duplex sel)
  cmake_parse_arguments(W "ONE" "MAX_ROWS;ARGS" "" ${ARGN})
  math(EXPR max "10 * ${p}")
  if(W_MAX_ROWS)
    set(max ${W_MAX_ROWS})
  endif()
  set(back "")
  if(duplex STREQUAL "full")
    set(back "
      - {name: back, type: int16, dims: [joined, 2, 2], from: b}
      - {name: steer, type: float64, dims: [4], from: b}")
  endif()
  set(ids "
      - {name: ids, type: int64, dims: [joined]}")
  if(W_ONE)
    set(ids "")
  endif()
  jn_keep(keep ${tp})
  jn_head(head rt_joined ${p} ${q} "xfer-synth${W_ARGS}")
  file(WRITE ${file} "${head}
  - name: c
    from: a
    to: b
    transport: ${tp}${keep}
    duplex: ${duplex}
    selection: ${sel}
    max_in_flight_steps: 2
    datasets:
      - {name: parts, type: float32, dims: [joined, 3], max_rows: ${max}}
      - {name: plane, type: int32, dims: [13, 9]}${ids}${back}
")
endfunction()

# jn_cmd(<out> <tp> <name> <cfg> NP p q ARGS ... [ENV ...]): rt_mpmd with the step files in a
# directory of the test's own
function(jn_cmd out tp name cfg)
  cmake_parse_arguments(J "" "" "NP;ARGS;ARGS1;ENV" ${ARGN})
  set(a1 "")
  if(J_ARGS1)
    set(a1 ARGS1 ${J_ARGS1})
  endif()
  rt_mpmd(cmd ${cfg} NP ${J_NP} ARGS ${J_ARGS} ${a1}
          ENV XFER_TRANSPORT_DIR=${JN_DIR}/${tp}/${name} ${J_ENV})
  set(${out} ${cmd} PARENT_SCOPE)
endfunction()

add_executable(test_joined ${CMAKE_CURRENT_SOURCE_DIR}/mpi/test_joined.c)
target_link_libraries(test_joined PRIVATE libxfer::xfer xfer_warnings)

foreach(tp IN LISTS RT_JOINED_TRANSPORTS)
  if(tp STREQUAL "file" AND NOT TARGET xfer_hdf5)
    continue()
  endif()
  set(empty "--no-empty-steps")
  set(empty_disabled TRUE)
  if(tp IN_LIST RT_JOINED_EMPTY_STEPS)
    set(empty "")
    set(empty_disabled FALSE)
  endif()

  # P x C, half duplex, each selection, two seeds (the seed is in the name: xfer-synth draws
  # every step's rows from it and prints it)
  foreach(pq "1;1" "2;3" "3;2" "4;2")
    list(GET pq 0 p)
    list(GET pq 1 q)
    set(si 0)
    foreach(sel all rows user)
      math(EXPR si "${si} + 1")
      jn_workflow(${JN_DIR}/${tp}-p${p}q${q}-half-${sel}.yaml ${tp} ${p} ${q} half ${sel})
      math(EXPR s1 "${p} * 100 + ${q} * 10 + ${si}")
      math(EXPR s2 "${s1} + 5000")
      foreach(seed ${s1} ${s2})
        set(name ${sel}.p${p}q${q}.seed${seed})
        jn_cmd(cmd ${tp} ${name} ${JN_DIR}/${tp}-p${p}q${q}-half-${sel}.yaml NP ${p} ${q}
               ARGS --steps 8 --seed ${seed} ${empty})
        rt_test(joined.${tp}.${name} COMMAND ${cmd})
      endforeach()
    endforeach()
  endforeach()

  # selection: block over each step's rows and row width (a grid of q parts: the receiver
  # computes its part from the documented rule)
  foreach(case "2;3;64" "4;2;65")
    list(GET case 0 p)
    list(GET case 1 q)
    list(GET case 2 seed)
    set(f ${JN_DIR}/${tp}-p${p}q${q}-half-block.yaml)
    jn_workflow(${f} ${tp} ${p} ${q} half block)
    set(name block.p${p}q${q}.seed${seed})
    jn_cmd(cmd ${tp} ${name} ${f} NP ${p} ${q} ARGS --steps 8 --seed ${seed} ${empty})
    rt_test(joined.${tp}.${name} COMMAND ${cmd})
  endforeach()

  # user boxes of rows by --select: two slabs each (overlapping, the last ones past a step's
  # rows: clipped), half the rows, nothing, every row on even ranks and slabs on odd ones
  foreach(pq "2;3" "3;2")
    list(GET pq 0 p)
    list(GET pq 1 q)
    foreach(pick overlap corner none mixed)
      set(name user_${pick}.p${p}q${q})
      jn_cmd(cmd ${tp} ${name} ${JN_DIR}/${tp}-p${p}q${q}-half-user.yaml NP ${p} ${q}
             ARGS --steps 8 --seed 41 --select ${pick} ${empty})
      rt_test(joined.${tp}.${name} COMMAND ${cmd})
    endforeach()
  endforeach()

  # full duplex: a joined dataset (and a fixed one) from b back to a
  foreach(case "2;3;all;61" "3;2;rows;62" "2;3;user;63")
    list(GET case 0 p)
    list(GET case 1 q)
    list(GET case 2 sel)
    list(GET case 3 seed)
    set(f ${JN_DIR}/${tp}-p${p}q${q}-full-${sel}.yaml)
    jn_workflow(${f} ${tp} ${p} ${q} full ${sel})
    set(name full.${sel}.p${p}q${q}.seed${seed})
    jn_cmd(cmd ${tp} ${name} ${f} NP ${p} ${q} ARGS --steps 8 --seed ${seed} ${empty})
    rt_test(joined.${tp}.${name} COMMAND ${cmd})
  endforeach()

  # the orders of the steps' calls drawn from the seed, with polling begins and attributes;
  # puts made twice (the first one row longer, with wrong data: the second replaces it)
  jn_cmd(cmd ${tp} random.p4q2 ${JN_DIR}/${tp}-p4q2-half-user.yaml NP 4 2
         ARGS --steps 8 --seed 71 --orders random --begin 0 --attrs ${empty})
  rt_test(joined.${tp}.random.p4q2.seed71 COMMAND ${cmd})
  jn_cmd(cmd ${tp} twice.p3q2 ${JN_DIR}/${tp}-p3q2-half-rows.yaml NP 3 2
         ARGS --steps 8 --seed 72 --put-order twice ${empty})
  rt_test(joined.${tp}.put_twice.p3q2.seed72 COMMAND ${cmd})

  # bound buffers: senders put from theirs (sent or written from there: nothing copied in); a
  # receiver's holds a typical step, so some steps' selections land there (xfer_get copies
  # nothing, which xfer-synth checks with xfer_channel_stats) and larger ones in the library's
  # buffer (xfer_get copies them out): both must happen. --bind-alternate binds a second
  # buffer, wiped, for every other step during the step before it. Over the stream, with two
  # joined datasets from a, the rows go point to point (the trace says why); with one per side
  # (ONE) the allgatherv plan lands them in the bound buffer (and never goes point to point).
  set(both "b: joined or variable: [1-9][0-9]* gets from the bound buffer, [1-9][0-9]* copied \\(larger than it\\)")
  set(copied_in "[ab]: channel c: [0-9]+ steps, [0-9]+ bytes sent, [0-9]+ received, [1-9][0-9]* copied in")
  set(p2p "")
  set(plan "")
  set(trace "")
  if(tp STREQUAL "stream") # (the trace is on stderr, after xfer-synth's lines)
    set(p2p ".*channel c at [ab]: a bound buffer: joined and variable datasets go point to point")
    set(plan "|point to point")
    set(trace XFER_TRACE=1)
  endif()
  jn_cmd(cmd ${tp} bind.p2q3 ${JN_DIR}/${tp}-p2q3-half-all.yaml NP 2 3
         ARGS --steps 8 --seed 81 --bind ${empty} ENV ${trace})
  rt_pass_test(joined.${tp}.bind.all.p2q3.seed81 COMMAND ${cmd} EXPECT "${both}${p2p}"
               REJECT "${copied_in}")
  jn_cmd(cmd ${tp} bind_alt.p3q2 ${JN_DIR}/${tp}-p3q2-full-rows.yaml NP 3 2
         ARGS --steps 8 --seed 82 --bind-alternate ${empty})
  rt_pass_test(joined.${tp}.bind_alternate.full.p3q2.seed82 COMMAND ${cmd}
               EXPECT "b: joined or variable: [1-9][0-9]* gets from the bound buffer"
               REJECT "${copied_in}")
  jn_cmd(cmd ${tp} bind_alt.user.p2q3 ${JN_DIR}/${tp}-p2q3-half-user.yaml NP 2 3
         ARGS --steps 8 --seed 83 --bind-alternate ${empty})
  rt_pass_test(joined.${tp}.bind_alternate.user.p2q3.seed83 COMMAND ${cmd} EXPECT "${both}"
               REJECT "${copied_in}")
  jn_workflow(${JN_DIR}/${tp}-p3q2-half-all-one.yaml ${tp} 3 2 half all ONE)
  jn_cmd(cmd ${tp} bind.one.p3q2 ${JN_DIR}/${tp}-p3q2-half-all-one.yaml NP 3 2
         ARGS --steps 8 --seed 84 --bind ${empty} ENV ${trace})
  rt_pass_test(joined.${tp}.bind.one.all.p3q2.seed84 COMMAND ${cmd} EXPECT "${both}"
               REJECT "${copied_in}${plan}")
  jn_workflow(${JN_DIR}/${tp}-p2q3-full-all-one.yaml ${tp} 2 3 full all ONE)
  jn_cmd(cmd ${tp} bind_alt.one.full.p2q3 ${JN_DIR}/${tp}-p2q3-full-all-one.yaml NP 2 3
         ARGS --steps 8 --seed 85 --bind-alternate ${empty} ENV ${trace})
  rt_pass_test(joined.${tp}.bind_alternate.one.full.all.p2q3.seed85 COMMAND ${cmd}
               EXPECT "${both}" REJECT "${copied_in}${plan}")

  # steps of no rows on every rank: valid, empty steps
  jn_cmd(cmd ${tp} empty.p2q3 ${JN_DIR}/${tp}-p2q3-half-rows.yaml NP 2 3 ARGS --steps 8 --seed 91)
  rt_test(joined.${tp}.empty_steps.p2q3.seed91 COMMAND ${cmd})
  set_tests_properties(${P}.workflow.joined.${tp}.empty_steps.p2q3.seed91 PROPERTIES
                       DISABLED ${empty_disabled})

  # max_rows: a step holding more fails its commit on every sending rank, naming it
  jn_workflow(${JN_DIR}/${tp}-max-rows.yaml ${tp} 2 3 half all MAX_ROWS 3)
  jn_cmd(cmd ${tp} max_rows ${JN_DIR}/${tp}-max-rows.yaml NP 2 3 ARGS --steps 8 --seed 5 ${empty})
  rt_fail_test(joined.${tp}.fail.max_rows COMMAND ${cmd} MAXTIME 60
               EXPECT "xfer-synth: a rank [01]: step [0-9]+: xfer_step_end[^\n]*: XFER_ERR_TOO_LARGE: channel c: dataset parts: step [0-9]+ holds [0-9]+ rows in all, more than its max_rows, 3 \\(the step is not committed: put fewer rows and commit it again\\)")

  # the malformed puts, a step nobody put, max_rows exceeded and then met (test_joined)
  set(f ${JN_DIR}/${tp}-errors.yaml)
  set(keep "")
  if(tp STREQUAL "file")
    set(keep ", file: {keep: true}")
  endif()
  file(WRITE ${f} "workflow: rt_joined
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [test_joined]}
  - {name: b, nprocs: 1, cmd: [test_joined]}
channels:
  - {name: c, from: a, to: b, transport: ${tp}${keep},
     datasets: [{name: p, type: float32, dims: [joined, 3], max_rows: 10},
                {name: x, type: int32, dims: [4]},
                {name: r, type: {a: int32, b: float64}, dims: [joined]}]}
")
  foreach(mode errors empty)
    set(arg "")
    if(mode STREQUAL "empty")
      set(arg empty)
    endif()
    xfer_mpi_envflags(genv ENV XFER_CONFIG=${f} XFER_TRANSPORT_DIR=${JN_DIR}/${tp}/c-${mode})
    xfer_mpi_envflags(lenv LOCAL ENV XFER_CONFIG=${f} XFER_TRANSPORT_DIR=${JN_DIR}/${tp}/c-${mode})
    rt_test(joined.${tp}.put_${mode}
            COMMAND ${MPIEXEC_EXECUTABLE} ${XFER_MPIEXEC_PREFLAGS} ${genv} ${MPIEXEC_NUMPROC_FLAG}
                    2 $<TARGET_FILE:test_joined> ${arg} : ${MPIEXEC_NUMPROC_FLAG} 1 ${lenv}
                    $<TARGET_FILE:test_joined> ${arg})
  endforeach()
  set_tests_properties(${P}.workflow.joined.${tp}.put_empty PROPERTIES DISABLED ${empty_disabled})

  # separate launches through xfer-run, full duplex (files need no MPI connection; the stream
  # only where the MPI connects jobs)
  if(TARGET xfer-run AND (tp STREQUAL "file" OR RT_SEPARATE))
    set(f ${JN_DIR}/${tp}-separate.yaml)
    set(sep_empty "")
    if(empty)
      set(sep_empty ", ${empty}")
    endif()
    jn_workflow(${f} ${tp} 3 2 full rows
                ARGS ", --steps, \"6\", --seed, \"93\"${sep_empty}")
    rt_test(joined.${tp}.separate.full.p3q2.seed93
            COMMAND $<TARGET_FILE:xfer-run> --launch separate ${f}
            ENV ${RT_SEP_ENV} XFER_TRANSPORT_DIR=${JN_DIR}/${tp}/separate)
  endif()
endforeach()

# xfer-synth plays variable shapes and records (tools/synth/variable.c, tools/synth/shape.c):
# every step the senders draw the shape of each variable dataset from --seed (growing, shrinking,
# extents of 0 now and then) and its split into their blocks (uneven slabs along a drawn
# dimension, a grid, every element on one rank; an empty block put with 0 elements or not put);
# every receiving rank checks xfer_get_shape against the shape and the selection it computes from
# the documented rules, then every value and a hyperslab. The seed is in the test's name and in
# every failure. Records fill each field with the pattern and are compared field by field.
set(VR_TRANSPORTS stream)
if(TARGET xfer_hdf5)
  list(APPEND VR_TRANSPORTS file)
endif()

# vr_workflow(<file> <transport> <p> <q> <half|full> <rotation> [ARGS text]): components a (p
# ranks) and b (q ranks), running xfer-synth with ARGS appended to its cmd; channel whole (selection: all, which the stream carries by its allgatherv plan):
# [variable, 4] and [variable] beside a fixed dataset; channel parts (point to point): [variable,
# variable], [variable, 4], [8, variable] and [variable, 2, 3] under rows, block, user and columns,
# rotated by <rotation> so that the runs give each shape each selection. Full duplex adds a
# variable dataset from b to each channel.
set(VR_SELECTIONS rows block user columns)
function(vr_workflow file tp p q duplex rot)
  cmake_parse_arguments(W "" "ARGS" "" ${ARGN})
  foreach(k RANGE 3)
    math(EXPR at "(${k} + ${rot}) % 4")
    list(GET VR_SELECTIONS ${at} sel${k})
  endforeach()
  set(back_w "")
  set(back_p "")
  if(duplex STREQUAL "full")
    set(back_w "
      - {name: back, type: float32, dims: [variable], from: b}")
    set(back_p "
      - {name: back, type: int16, dims: [variable, 3], from: b, selection: ${sel1}}")
  endif()
  jn_keep(keep ${tp})
  jn_head(head rt_variable_synth ${p} ${q} "xfer-synth${W_ARGS}")
  file(WRITE ${file} "${head}
  - name: whole
    from: a
    to: b
    transport: ${tp}${keep}
    duplex: ${duplex}
    selection: all
    max_in_flight_steps: 2
    datasets:
      - {name: g, type: int32, dims: [variable, 4]}
      - {name: plane, type: int32, dims: [13, 9]}
      - {name: y, type: float64, dims: [variable]}${back_w}
  - name: parts
    from: a
    to: b
    transport: ${tp}${keep}
    duplex: ${duplex}
    max_in_flight_steps: 2
    datasets:
      - {name: m, type: uint16, dims: [variable, variable], selection: ${sel0}}
      - {name: g, type: int32, dims: [variable, 4], selection: ${sel1}}
      - {name: w, type: float64, dims: [8, variable], selection: ${sel2}}
      - {name: v, type: uint8, dims: [variable, 2, 3], selection: ${sel3}}${back_p}
")
endfunction()

# rec_workflow(<file> <transport> <p> <q> <half|full> <selection> [ARGS text]): records in a
# joined, a fixed and a variable dataset (padding inside and at the end of each); full duplex adds
# a variable one from b. ARGS: appended to xfer-synth's cmd.
function(rec_workflow file tp p q duplex sel)
  cmake_parse_arguments(W "" "ARGS" "" ${ARGN})
  set(back "")
  if(duplex STREQUAL "full")
    set(back "
      - {name: back, type: {k: int16, t: [float64, 2]}, dims: [variable], from: b}")
  endif()
  jn_keep(keep ${tp})
  jn_head(head rt_records ${p} ${q} "xfer-synth${W_ARGS}")
  file(WRITE ${file} "${head}
  - name: c
    from: a
    to: b
    transport: ${tp}${keep}
    duplex: ${duplex}
    selection: ${sel}
    max_in_flight_steps: 2
    datasets:
      - {name: parts, type: {id: int64, pos: [float64, 3], q: float32, kind: int8}, dims: [joined]}
      - {name: cells, type: {a: int8, b: float64, c: [int16, 3]}, dims: [7, 5]}
      - {name: grid, type: {v: float32, n: [uint8, 5], w: uint64}, dims: [variable, 3]}${back}
")
endfunction()

foreach(tp IN LISTS VR_TRANSPORTS)
  # P x C, half duplex, two seeds each, every selection in each run (xfer-synth prints the seed;
  # a failure names it). Six steps give every kind of shape (a cycle of four) and of blocks (a
  # cycle of three) at least once.
  set(rot 0)
  foreach(pq "1;1" "2;3" "3;2" "4;2")
    list(GET pq 0 p)
    list(GET pq 1 q)
    foreach(si 1 2)
      math(EXPR seed "7000 + ${p} * 100 + ${q} * 10 + ${si}")
      set(f ${JN_DIR}/${tp}-variable-p${p}q${q}-half-${rot}.yaml)
      vr_workflow(${f} ${tp} ${p} ${q} half ${rot})
      set(name p${p}q${q}.seed${seed})
      jn_cmd(cmd ${tp} variable.${name} ${f} NP ${p} ${q} ARGS --steps 6 --seed ${seed})
      rt_test(variable.${tp}.synth.${name} COMMAND ${cmd})
      math(EXPR rot "(${rot} + 1) % 4")
    endforeach()
  endforeach()

  # full duplex: a variable dataset from b back to a on each channel
  foreach(case "2;3;7601;0" "3;2;7602;2")
    list(GET case 0 p)
    list(GET case 1 q)
    list(GET case 2 seed)
    list(GET case 3 rot)
    set(f ${JN_DIR}/${tp}-variable-p${p}q${q}-full-${rot}.yaml)
    vr_workflow(${f} ${tp} ${p} ${q} full ${rot})
    set(name full.p${p}q${q}.seed${seed})
    jn_cmd(cmd ${tp} variable.${name} ${f} NP ${p} ${q} ARGS --steps 6 --seed ${seed})
    rt_test(variable.${tp}.synth.${name} COMMAND ${cmd})
  endforeach()

  # boxes declared by --select against a typical step and clipped to each: two overlapping slabs
  # of the first extent; every element on even ranks and slabs on odd ones
  foreach(pick overlap mixed)
    set(name select_${pick}.p3q2)
    jn_cmd(cmd ${tp} variable.${name} ${JN_DIR}/${tp}-variable-p3q2-half-0.yaml NP 3 2
           ARGS --steps 6 --seed 7701 --select ${pick})
    rt_test(variable.${tp}.synth.${name}.seed7701 COMMAND ${cmd})
  endforeach()

  # the calls' orders drawn from the seed, polling begins and attributes; every put made twice
  # (the first with a shape one longer and wrong data: the second replaces shape and block)
  jn_cmd(cmd ${tp} variable.random.p4q2 ${JN_DIR}/${tp}-variable-p4q2-half-2.yaml NP 4 2
         ARGS --steps 6 --seed 7702 --orders random --begin 1 --attrs)
  rt_test(variable.${tp}.synth.random.p4q2.seed7702 COMMAND ${cmd})
  jn_cmd(cmd ${tp} variable.twice.p2q3 ${JN_DIR}/${tp}-variable-p2q3-half-2.yaml NP 2 3
         ARGS --steps 6 --seed 7703 --put-order twice)
  rt_test(variable.${tp}.synth.put_twice.p2q3.seed7703 COMMAND ${cmd})

  # bound buffers: a receiver's holds a typical step, so some selections land there (nothing
  # copied out) and larger ones are copied; senders put from theirs (nothing copied in); a
  # second buffer, wiped, bound for every other step during the step before it, in full duplex
  set(both "b: joined or variable: [1-9][0-9]* gets from the bound buffer, [1-9][0-9]* copied \\(larger than it\\)")
  jn_cmd(cmd ${tp} variable.bind.p2q3 ${JN_DIR}/${tp}-variable-p2q3-half-3.yaml NP 2 3
         ARGS --steps 6 --seed 7704 --bind)
  rt_pass_test(variable.${tp}.synth.bind.p2q3.seed7704 COMMAND ${cmd} EXPECT "${both}")
  jn_cmd(cmd ${tp} variable.bind_alt.full.p3q2 ${JN_DIR}/${tp}-variable-p3q2-full-2.yaml NP 3 2
         ARGS --steps 6 --seed 7705 --bind-alternate)
  rt_pass_test(variable.${tp}.synth.bind_alternate.full.p3q2.seed7705 COMMAND ${cmd}
               EXPECT "${both}")

  # records: fixed, joined and variable datasets of records, field by field
  foreach(case "2;3;half;all;7801" "4;2;half;user;7802" "1;1;half;block;7803"
          "3;2;full;rows;7804")
    list(GET case 0 p)
    list(GET case 1 q)
    list(GET case 2 duplex)
    list(GET case 3 sel)
    list(GET case 4 seed)
    set(f ${JN_DIR}/${tp}-records-p${p}q${q}-${duplex}-${sel}.yaml)
    rec_workflow(${f} ${tp} ${p} ${q} ${duplex} ${sel})
    set(name ${sel}.p${p}q${q}.seed${seed})
    if(duplex STREQUAL "full")
      set(name full.${name})
    endif()
    jn_cmd(cmd ${tp} records.${name} ${f} NP ${p} ${q} ARGS --steps 6 --seed ${seed})
    rt_test(records.${tp}.${name} COMMAND ${cmd})
  endforeach()

  # separate launches through xfer-run, full duplex, as joined.<tp>.separate above (files need no
  # MPI connection; the stream only where the MPI connects jobs): variable shapes (every
  # selection), and records in joined, fixed and variable datasets
  if(TARGET xfer-run AND (tp STREQUAL "file" OR RT_SEPARATE))
    set(f ${JN_DIR}/${tp}-variable-separate.yaml)
    vr_workflow(${f} ${tp} 3 2 full 1 ARGS ", --steps, \"6\", --seed, \"7901\"")
    rt_test(variable.${tp}.separate.full.p3q2.seed7901
            COMMAND $<TARGET_FILE:xfer-run> --launch separate ${f}
            ENV ${RT_SEP_ENV} XFER_TRANSPORT_DIR=${JN_DIR}/${tp}/variable-separate)
    set(f ${JN_DIR}/${tp}-records-separate.yaml)
    rec_workflow(${f} ${tp} 2 3 full rows ARGS ", --steps, \"6\", --seed, \"7902\"")
    rt_test(records.${tp}.separate.full.rows.p2q3.seed7902
            COMMAND $<TARGET_FILE:xfer-run> --launch separate ${f}
            ENV ${RT_SEP_ENV} XFER_TRANSPORT_DIR=${JN_DIR}/${tp}/records-separate)
  endif()

  # records in bound buffers, rebound every step (joined, fixed and variable datasets)
  jn_cmd(cmd ${tp} records.bind_alt ${JN_DIR}/${tp}-records-p3q2-full-rows.yaml NP 3 2
         ARGS --steps 6 --seed 7805 --bind-alternate)
  rt_test(records.${tp}.bind_alternate.full.rows.p3q2.seed7805 COMMAND ${cmd})
endforeach()

# Variable shapes (dims entries `variable`), both transports: shapes that grow and shrink (0 rows
# included) under block and rows selections (the stream's point-to-point path) or all (its
# allgatherv plan), and the three refusals of a commit (two shapes, overlapping blocks, a hole)
# before the step is put right (test_variable).
add_executable(test_variable ${CMAKE_CURRENT_SOURCE_DIR}/mpi/test_variable.c)
target_link_libraries(test_variable PRIVATE libxfer::xfer xfer_warnings)
set(jn_var_tps stream)
if(TARGET xfer_hdf5)
  list(APPEND jn_var_tps file)
endif()
foreach(tp IN LISTS jn_var_tps)
  foreach(mode split all)
    if(mode STREQUAL "all")
      set(sel_g all)
      set(sel_y all)
      set(arg all)
      set(sfx .all)
    else()
      set(sel_g block)
      set(sel_y rows)
      set(arg "")
      set(sfx "")
    endif()
    set(f ${JN_DIR}/${tp}-variable${sfx}.yaml)
    file(WRITE ${f} "workflow: rt_variable
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [test_variable]}
  - {name: b, nprocs: 3, cmd: [test_variable]}
channels:
  - {name: c, from: a, to: b, transport: ${tp},
     datasets: [{name: g, type: int32, dims: [variable, 4], selection: ${sel_g}},
                {name: y, type: float64, dims: [variable], selection: ${sel_y}}]}
")
    xfer_mpi_envflags(genv ENV XFER_CONFIG=${f} XFER_TRANSPORT_DIR=${JN_DIR}/${tp}/variable${sfx})
    xfer_mpi_envflags(lenv LOCAL ENV XFER_CONFIG=${f}
                      XFER_TRANSPORT_DIR=${JN_DIR}/${tp}/variable${sfx})
    rt_test(variable.${tp}${sfx}.p2q3
            COMMAND ${MPIEXEC_EXECUTABLE} ${XFER_MPIEXEC_PREFLAGS} ${genv} ${MPIEXEC_NUMPROC_FLAG} 2
                    $<TARGET_FILE:test_variable> ${arg} : ${MPIEXEC_NUMPROC_FLAG} 3 ${lenv}
                    $<TARGET_FILE:test_variable> ${arg})
  endforeach()
endforeach()

# The two sides declare a joined dataset's rows differently: xfer_init fails on both, naming the
# dataset and both shapes in the file's words ([joined,3] against [joined,2]).
jn_workflow(${JN_DIR}/stream-p2q3-half-all.yaml stream 2 3 half all)
file(READ ${JN_DIR}/stream-p2q3-half-all.yaml jn_text)
string(REPLACE "dims: [joined, 3]" "dims: [joined, 2]" jn_text "${jn_text}")
file(WRITE ${JN_DIR}/stream-p2q3-half-all-other-rows.yaml "${jn_text}")
rt_mpmd(cmd ${JN_DIR}/stream-p2q3-half-all.yaml NP 2 3 ARGS --steps 2
        ARGS1 --steps 2 --config ${JN_DIR}/stream-p2q3-half-all-other-rows.yaml)
rt_fail_test(joined.stream.fail.rows_mismatch COMMAND ${cmd} MAXTIME 60
             EXPECT "dataset parts: [a-z0-9]+\\[joined,[23]\\] from a, selection all at [ab], [a-z0-9]+\\[joined,[23]\\] from a, selection all at [ab]")

# Node staging of the joined plan (docs/runtime.md, "Joined datasets"): every joined dataset has
# a max_rows, so the plans stage on the virtual nodes of XFER_NODE_SIZE=2 (hierarchical: enabled),
# with the inner algorithm auto picks (hier:direct here), fc_full's, and, for fc_half (which splits
# the groups), flat fc_direct instead (full duplex: fc_half cannot run it at all, the fallback
# stages by hier:direct); half duplex 4 x 4 and full duplex 3 x 5 (nodes of 2 and 1). XFER_TRACE names the plan's algorithm and a plan abandoned for point to point.
foreach(dup half full)
  if(dup STREQUAL "half")
    set(na 4)
    set(nb 4)
    set(back "")
  else()
    set(na 3)
    set(nb 5)
    set(back "
      - {name: back, type: int16, dims: [joined, 2, 2], from: b, max_rows: 100}
      - {name: steer, type: float64, dims: [4], from: b}")
  endif()
  set(f ${JN_DIR}/stream-hier-${dup}.yaml)
  file(WRITE ${f} "workflow: rt_joined_hier
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: ${na}, cmd: [xfer-synth]}
  - {name: b, nprocs: ${nb}, cmd: [xfer-synth]}
channels:
  - name: c
    from: a
    to: b
    duplex: ${dup}
    selection: all
    hierarchical: {enabled: true}
    max_in_flight_steps: 2
    datasets:
      - {name: parts, type: float32, dims: [joined, 3], max_rows: 64}
      - {name: plane, type: int32, dims: [13, 9]}
      - {name: ids, type: int64, dims: [joined], max_rows: 64}${back}
")
  foreach(algo auto fc_full fc_half)
    set(want "by hier:[a-z_]+")
    if(algo STREQUAL "fc_half" AND dup STREQUAL "half")
      set(want "by fc_direct")
    elseif(algo STREQUAL "fc_half") # (half duplex only: the fallback's inner is hier:direct)
      set(want "by hier:direct")
    endif()
    rt_mpmd(cmd ${f} NP ${na} ${nb} ARGS --steps 10 --seed 17
            ENV XFER_NODE_SIZE=2 XFER_TRACE=1 XFER_ALGORITHM=${algo})
    rt_pass_test(joined.stream.hier.${dup}.${algo}.p${na}q${nb} COMMAND ${cmd}
                 EXPECT "channel c at a: joined and variable datasets ${want}"
                 REJECT "point to point from now on")
  endforeach()
endforeach()

# auto chooses again at every step's recount (docs/runtime.md, "Joined datasets"): with the
# emulated cluster's alpha and beta and rows of 32 KiB, skewed steps go by relay and others by
# fc_direct or fc_full, on every rank alike (XFER_TRACE=2 names each change); every byte checked.
set(f ${JN_DIR}/stream-reselect.yaml)
file(WRITE ${f} "workflow: rt_joined_reselect
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: 4, cmd: [xfer-synth]}
  - {name: b, nprocs: 2, cmd: [xfer-synth]}
channels:
  - name: c
    from: a
    to: b
    selection: all
    max_in_flight_steps: 2
    datasets:
      - {name: wide, type: float64, dims: [joined, 4096]}
      - {name: ids, type: int64, dims: [joined]}
")
rt_mpmd(cmd ${f} NP 4 2 ARGS --steps 12 --seed 5
        ENV XFER_TRACE=2 XFER_ALPHA=1.8e-5 XFER_BETA=4e-8)
rt_pass_test(joined.stream.reselect.p4q2 COMMAND ${cmd}
             EXPECT "group 1 rank 0: bytes [0-9]+\\|0 -> relay \\(was [a-z_]+\\).*group 1 rank 0: bytes [0-9]+\\|0 -> [a-z_]+ \\(was relay\\)"
             REJECT "point to point from now on")

# The same plans receiving into bound buffers (one joined dataset per side: the plan's output is
# the rows in rank order, docs/runtime.md, "Zero copy: bound buffers"): staged on virtual nodes
# in full duplex, a second buffer bound for every other step; auto choosing again at every
# recount, relay among its choices. Steps the buffer holds land there (xfer-synth: no copy out),
# the others are copied; never point to point.
set(f ${JN_DIR}/stream-hier-one-full.yaml)
file(WRITE ${f} "workflow: rt_joined_hier_bind
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: 3, cmd: [xfer-synth]}
  - {name: b, nprocs: 5, cmd: [xfer-synth]}
channels:
  - name: c
    from: a
    to: b
    duplex: full
    selection: all
    hierarchical: {enabled: true}
    max_in_flight_steps: 2
    datasets:
      - {name: parts, type: float32, dims: [joined, 3], max_rows: 64}
      - {name: plane, type: int32, dims: [13, 9]}
      - {name: back, type: int16, dims: [joined, 2, 2], from: b, max_rows: 100}
      - {name: steer, type: float64, dims: [4], from: b}
")
rt_mpmd(cmd ${f} NP 3 5 ARGS --steps 10 --seed 18 --bind-alternate
        ENV XFER_NODE_SIZE=2 XFER_TRACE=1)
rt_pass_test(joined.stream.hier.bind_alternate.one.full.p3q5 COMMAND ${cmd}
             EXPECT "b: joined or variable: [1-9][0-9]* gets from the bound buffer, [1-9][0-9]* copied \\(larger than it\\).*channel c at a: joined and variable datasets by hier:[a-z_]+"
             REJECT "point to point")
set(f ${JN_DIR}/stream-reselect-one.yaml)
file(WRITE ${f} "workflow: rt_joined_reselect_bind
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: 4, cmd: [xfer-synth]}
  - {name: b, nprocs: 2, cmd: [xfer-synth]}
channels:
  - name: c
    from: a
    to: b
    selection: all
    max_in_flight_steps: 2
    datasets:
      - {name: wide, type: float64, dims: [joined, 4096]}
")
rt_mpmd(cmd ${f} NP 4 2 ARGS --steps 12 --seed 5 --bind
        ENV XFER_TRACE=2 XFER_ALPHA=1.8e-5 XFER_BETA=4e-8)
rt_pass_test(joined.stream.reselect.bind.one.p4q2 COMMAND ${cmd}
             EXPECT "b: joined or variable: [1-9][0-9]* gets from the bound buffer, [1-9][0-9]* copied \\(larger than it\\).*group 1 rank 0: bytes [0-9]+\\|0 -> relay \\(was [a-z_]+\\)"
             REJECT "point to point")
