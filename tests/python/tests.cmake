# SPDX-License-Identifier: BSD-3-Clause
# The Python package (bindings/python, docs/bindings.md): unit tests in one process, the
# workflow API's behaviour (cases.py), Ctrl-C (interrupt.py), reference and memory leaks over
# 1000 steps (refleak.py), the collectives with and without mpi4py (colls.py), couplings
# across languages with xfer-synth (C) and synth.py (Python) in both directions, byte for byte,
# and joined and record datasets (joined.py) to and from C.
#
# Not under the sanitizers: an instrumented libxfer inside the uninstrumented python3 would need
# the ASan runtime preloaded, and LeakSanitizer reports the interpreter's own allocations.
if(NOT TARGET xfer_python OR XFER_ENABLE_SANITIZERS OR NOT TARGET xfer-synth)
  return()
endif()
set(PY_SRC ${CMAKE_CURRENT_SOURCE_DIR}/python)
set(PY_DIR ${CMAKE_CURRENT_BINARY_DIR}/python)
file(MAKE_DIRECTORY ${PY_DIR})
set(PY ${XFER_PYTHON_EXECUTABLE})
set(PY_ENV "PYTHONPATH=${XFER_PYTHON_BUILD_DIR}:${PY_SRC}")

# Is mpi4py there, and built for this flavour? (Debian's python3-mpi4py is built for Open MPI.)
execute_process(COMMAND ${PY} -c "import mpi4py; print(mpi4py.get_config().get('mpicc', ''))"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_QUIET)
set(PY_MPI4PY OFF)
if(_rc EQUAL 0)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env OMPI_ALLOW_RUN_AS_ROOT=1
                          OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ${PY} -c
                          "from mpi4py import MPI; print(MPI.Get_library_version())"
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _lib ERROR_QUIET)
  if(_rc EQUAL 0 AND ((_lib MATCHES "Open MPI" AND XFER_MPI_FLAVOR STREQUAL "openmpi") OR
                      (_lib MATCHES "MPICH" AND XFER_MPI_FLAVOR STREQUAL "mpich")))
    set(PY_MPI4PY ON)
  endif()
endif()

function(py_test name)
  cmake_parse_arguments(T "WILL_FAIL" "TIMEOUT" "COMMAND;ENV" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_test(NAME ${P}.python.${name} COMMAND ${T_COMMAND})
  set_tests_properties(${P}.python.${name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "python;mpi"
                       ENVIRONMENT "${XFER_MPIEXEC_ENV};${PY_ENV};${T_ENV}")
  if(T_WILL_FAIL)
    set_tests_properties(${P}.python.${name} PROPERTIES WILL_FAIL TRUE)
  endif()
endfunction()

# A workflow file a -> b with xfer-synth's datasets (1-D to 3-D, three types; full duplex adds
# two going back) and a channel selection mode.
function(py_workflow file p q duplex selection)
  set(ds "      - {name: line, type: float64, dims: [37]}
      - {name: plane, type: int32, dims: [13, 9]}
      - {name: cube, type: uint8, dims: [5, 4, 3]}")
  if(duplex STREQUAL "full")
    string(APPEND ds "
      - {name: back2, type: float32, dims: [11, 7], from: b}
      - {name: back3, type: int64, dims: [3, 5, 2], from: b}")
  endif()
  xfer_ab_workflow(${file} ${p} ${q} ${duplex} ${selection} "${ds}")
endfunction()

# One MPMD launch: <p> ranks run <cmd_a...>, <q> ranks <cmd_b...> (separated by ":" in ARGS).
function(py_mpmd out cfg p q)
  cmake_parse_arguments(M "" "" "A;B" ${ARGN})
  xfer_mpi_envflags(genv ENV XFER_CONFIG=${cfg} ${PY_ENV})
  xfer_mpi_envflags(lenv LOCAL ENV XFER_CONFIG=${cfg} ${PY_ENV})
  set(${out} ${MPIEXEC_EXECUTABLE} ${XFER_MPIEXEC_PREFLAGS} ${genv} ${MPIEXEC_NUMPROC_FLAG} ${p}
      ${M_A} : ${MPIEXEC_NUMPROC_FLAG} ${q} ${lenv} ${M_B} PARENT_SCOPE)
endfunction()

set(PY_SYNTH ${PY} ${PY_SRC}/synth.py)

# ---- one process --------------------------------------------------------------------------
py_test(local COMMAND ${PY} ${PY_SRC}/test_local.py)

# ---- the workflow API, Python to Python ----------------------------------------------------
file(WRITE ${PY_DIR}/cases.yaml "workflow: cases
launch: mpmd
control: {timeout_ms: 60000}
components:
  - {name: prod, nprocs: 2, cmd: [x]}
  - {name: cons, nprocs: 3, cmd: [x]}
channels:
  - name: c
    from: prod
    to: cons
    max_in_flight_steps: 2
    datasets:
      - {name: f64_2d, type: float64, dims: [7, 5], selection: rows}
      - {name: u8_2d, type: uint8, dims: [6, 6], selection: user}
      - {name: u16_2d, type: uint16, dims: [4, 9], selection: columns}
      - {name: i8, type: int8, dims: [11]}
      - {name: i16, type: int16, dims: [3, 3]}
      - {name: u32, type: uint32, dims: [5, 2]}
      - {name: i64, type: int64, dims: [2, 3]}
      - {name: u64, type: uint64, dims: [9]}
      - {name: i32_1d, type: int32, dims: [10], selection: block}
      - {name: f32_3d, type: float32, dims: [4, 3, 5]}
      - {name: f64_4d, type: float64, dims: [3, 2, 4, 2], selection: block}
")
py_mpmd(cmd ${PY_DIR}/cases.yaml 2 3 A ${PY} ${PY_SRC}/cases.py B ${PY} ${PY_SRC}/cases.py)
py_test(cases.p2q3 COMMAND ${cmd})

foreach(duplex half full)
  py_workflow(${PY_DIR}/py-${duplex}.yaml 2 2 ${duplex} all)
  py_mpmd(cmd ${PY_DIR}/py-${duplex}.yaml 2 2 A ${PY_SYNTH} --attrs B ${PY_SYNTH} --attrs)
  py_test(py_to_py.${duplex}.p2q2 COMMAND ${cmd})
endforeach()
py_mpmd(cmd ${PY_DIR}/py-full.yaml 2 2 A ${PY_SYNTH} --strided B ${PY_SYNTH} --bind)
py_test(py_to_py.full.strided_bind.p2q2 COMMAND ${cmd})

# ---- across languages: C (xfer-synth) and Python (synth.py), each checks what it receives ---
set(XS $<TARGET_FILE:xfer-synth>)
foreach(duplex half full)
  py_workflow(${PY_DIR}/mix-${duplex}-p2q3.yaml 2 3 ${duplex} all)
  py_workflow(${PY_DIR}/mix-${duplex}-p3q2.yaml 3 2 ${duplex} rows)
  py_mpmd(cmd ${PY_DIR}/mix-${duplex}-p2q3.yaml 2 3 A ${XS} --attrs B ${PY_SYNTH} --attrs)
  py_test(c_to_py.${duplex}.p2q3 COMMAND ${cmd})
  py_mpmd(cmd ${PY_DIR}/mix-${duplex}-p2q3.yaml 2 3 A ${PY_SYNTH} --attrs B ${XS} --attrs)
  py_test(py_to_c.${duplex}.p2q3 COMMAND ${cmd})
  py_mpmd(cmd ${PY_DIR}/mix-${duplex}-p3q2.yaml 3 2 A ${XS} B ${PY_SYNTH} --strided)
  py_test(c_to_py.${duplex}.rows.p3q2 COMMAND ${cmd})
  py_mpmd(cmd ${PY_DIR}/mix-${duplex}-p3q2.yaml 3 2 A ${PY_SYNTH} --bind B ${XS} --bind)
  py_test(py_to_c.${duplex}.rows_bind.p3q2 COMMAND ${cmd})
endforeach()
# Negative controls: the comparisons catch one wrong element.
py_mpmd(cmd ${PY_DIR}/mix-half-p2q3.yaml 2 3 A ${PY_SYNTH} --corrupt B ${XS})
py_test(negative.corrupt_to_c COMMAND ${PY} ${PY_SRC}/expect_fail.py --within 100
        --contains "data differs from the pattern" -- ${cmd})
py_mpmd(cmd ${PY_DIR}/mix-half-p2q3.yaml 2 3 A ${PY_SYNTH} --corrupt B ${PY_SYNTH})
py_test(negative.corrupt_to_py COMMAND ${PY} ${PY_SRC}/expect_fail.py --within 100
        --contains "line step 1: differs" -- ${cmd})

# ---- several blocks per rank and step (docs/runtime.md): each put adds a block; Python puts
# each block as three slabs and C as a 2 x 2 grid, line and cube's blocks moving between ranks
# every step (blocks: per_step), each side checking what it receives byte for byte, over both
# transports ----
set(ds "      - {name: line, type: float64, dims: [37], blocks: per_step}
      - {name: plane, type: int32, dims: [13, 9]}
      - {name: cube, type: uint8, dims: [5, 4, 3], blocks: per_step}")
xfer_ab_workflow(${PY_DIR}/blocks-p3q2.yaml 3 2 half rows "${ds}")
foreach(tr stream file)
  if(tr STREQUAL "file" AND NOT TARGET xfer_hdf5)
    continue()
  endif()
  py_mpmd(cmd ${PY_DIR}/blocks-p3q2.yaml 3 2 A ${PY_SYNTH} --blocks 3 --move B ${XS})
  py_test(blocks.${tr}.py_to_c.p3q2 COMMAND ${cmd}
          ENV XFER_TRANSPORT=${tr} XFER_TRANSPORT_DIR=${PY_DIR}/blocks-${tr}-py)
  py_mpmd(cmd ${PY_DIR}/blocks-p3q2.yaml 3 2 A ${XS} --blocks 2x2 --move B ${PY_SYNTH})
  py_test(blocks.${tr}.c_to_py.p3q2 COMMAND ${cmd}
          ENV XFER_TRANSPORT=${tr} XFER_TRANSPORT_DIR=${PY_DIR}/blocks-${tr}-c)
endforeach()

# ---- joined and record datasets (joined.py; support/joined_send.c and joined_recv.c, its
# sending and receiving sides in C) ----
# A joined dataset's rows change every step (zeros, one rank holding every row, none), under
# selection all and rows, P x Q 2x3 and 3x2, and user (joined.py's BOXES: boxes past the step's
# rows, overlapping, empty, of some columns, every row) in both; records joined and fixed,
# Python -> Python (the receivers with a bound array), C -> Python and (all and rows) Python -> C;
# over both transports.
set(PJ ${PY} ${PY_SRC}/joined.py)
set(CJ $<TARGET_FILE:joined_send>)
set(CJR $<TARGET_FILE:joined_recv>)
set(_joined_transports stream)
if(TARGET xfer_hdf5)
  list(APPEND _joined_transports file)
endif()
foreach(tr IN LISTS _joined_transports)
  foreach(shape "2;3;all" "3;2;rows" "2;3;user" "3;2;user")
    list(GET shape 0 p)
    list(GET shape 1 q)
    list(GET shape 2 sel)
    set(yaml ${PY_DIR}/joined-${tr}-${sel}-p${p}q${q}.yaml)
    xfer_joined_workflow(${yaml} ${p} ${q} ${sel} ${tr})
    set(name joined.py_to_py.${tr}.${sel}.p${p}q${q})
    py_mpmd(cmd ${yaml} ${p} ${q} A ${PJ} B ${PJ} --bind)
    py_test(${name} COMMAND ${cmd} ENV XFER_TRANSPORT_DIR=${PY_DIR}/steps-${name})
    set(name joined.c_to_py.${tr}.${sel}.p${p}q${q})
    py_mpmd(cmd ${yaml} ${p} ${q} A ${CJ} B ${PJ})
    py_test(${name} COMMAND ${cmd} ENV XFER_TRANSPORT_DIR=${PY_DIR}/steps-${name})
    if(NOT sel STREQUAL "user") # (joined_recv takes all or rows)
      set(name joined.py_to_c.${tr}.${sel}.p${p}q${q})
      py_mpmd(cmd ${yaml} ${p} ${q} A ${PJ} B ${CJR})
      py_test(${name} COMMAND ${cmd} ENV XFER_TRANSPORT_DIR=${PY_DIR}/steps-${name})
    endif()
  endforeach()
endforeach()
# Negative controls: one value of p changed in step 3 is caught (by Python, by C).
py_mpmd(cmd ${PY_DIR}/joined-stream-all-p2q3.yaml 2 3 A ${PJ} --corrupt B ${PJ})
py_test(negative.joined_corrupt COMMAND ${PY} ${PY_SRC}/expect_fail.py --within 100
        --contains "p step 3: data differs from the pattern" -- ${cmd})
py_mpmd(cmd ${PY_DIR}/joined-stream-all-p2q3.yaml 2 3 A ${PJ} --corrupt B ${CJR})
py_test(negative.joined_corrupt_to_c COMMAND ${PY} ${PY_SRC}/expect_fail.py --within 100
        --contains "p step 3: data differs from the pattern" -- ${cmd})

# ---- datasets of variable shape (variable.py; XFER_VARIABLE_TRANSPORTS, tests/CMakeLists.txt) -
# Shapes that grow and shrink (0 rows, 0 columns) under selection block and rows, 2x3 and 3x2,
# records among them; the bad puts and the three refused commits surfacing as exceptions.
set(PV ${PY} ${PY_SRC}/variable.py)
foreach(tr IN LISTS XFER_VARIABLE_TRANSPORTS)
  if(tr STREQUAL "file" AND NOT TARGET xfer_hdf5)
    continue()
  endif()
  foreach(pq "2;3" "3;2")
    list(GET pq 0 p)
    list(GET pq 1 q)
    set(yaml ${PY_DIR}/variable-${tr}-p${p}q${q}.yaml)
    xfer_variable_workflow(${yaml} ${p} ${q} ${tr})
    set(name variable.py_to_py.${tr}.p${p}q${q})
    py_mpmd(cmd ${yaml} ${p} ${q} A ${PV} B ${PV} --bind)
    py_test(${name} COMMAND ${cmd} ENV XFER_TRANSPORT_DIR=${PY_DIR}/steps-${name})
  endforeach()
  # Negative control: one value of g changed in step 3 is caught.
  py_mpmd(cmd ${PY_DIR}/variable-${tr}-p2q3.yaml 2 3 A ${PV} --corrupt B ${PV})
  py_test(negative.variable_corrupt.${tr} COMMAND ${PY} ${PY_SRC}/expect_fail.py --within 100
          --contains "g step 3: data differs from what was put" -- ${cmd}
          ENV XFER_TRANSPORT_DIR=${PY_DIR}/steps-variable-corrupt-${tr})
endforeach()

# ---- one channel closed early (close.py with runtime/close_prog.c; docs/bindings.md) -----------
# Python leaves c1's loop after 4 of 12 steps (by a channel's with block, or break and close())
# and reads c2 to its end, close_prog's sender seeing c1 end (on_reader_loss: fail) or going on
# (continue); Python's sender closes c1 after 4 steps for close_prog's reader. Stream and files.
if(TARGET close_prog)
  file(WRITE ${PY_DIR}/close.yaml "workflow: py_close
launch: mpmd
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [x]}
  - {name: b, nprocs: 3, cmd: [x]}
channels:
  - {name: c1, from: a, to: b, max_in_flight_steps: 2, datasets: [{name: v, type: int64, dims: [16]}]}
  - {name: c2, from: a, to: b, max_in_flight_steps: 2, datasets: [{name: v, type: int64, dims: [16]}]}
")
  set(CP $<TARGET_FILE:close_prog>)
  set(PC ${PY} ${PY_SRC}/close.py)
  foreach(tr stream file)
    if(tr STREQUAL "file" AND NOT TARGET xfer_hdf5)
      continue()
    endif()
    set(env XFER_TRANSPORT=${tr} XFER_TRANSPORT_DIR=${PY_DIR}/close-${tr})
    py_mpmd(cmd ${PY_DIR}/close.yaml 2 3 A ${CP} --closer reader --loss fail --send-ms 2
            B ${PC} --how with)
    py_test(close.${tr}.with.fail.c_to_py COMMAND ${cmd} ENV ${env}-with)
    py_mpmd(cmd ${PY_DIR}/close.yaml 2 3 A ${CP} --closer reader --loss continue
            B ${PC} --how close)
    py_test(close.${tr}.close.continue.c_to_py COMMAND ${cmd}
            ENV ${env}-close XFER_ON_READER_LOSS=continue)
    py_mpmd(cmd ${PY_DIR}/close.yaml 2 3 A ${PC} --sender B ${CP} --closer sender)
    py_test(close.${tr}.sender.py_to_c COMMAND ${cmd} ENV ${env}-sender)
  endforeach()
endif()

# ---- Ctrl-C, leaks ---------------------------------------------------------------------------
file(WRITE ${PY_DIR}/one.yaml "workflow: one
launch: mpmd
control: {timeout_ms: 60000}
components:
  - {name: prod, nprocs: 1, cmd: [x]}
  - {name: cons, nprocs: 1, cmd: [x]}
channels:
  - {name: c, from: prod, to: cons, datasets: [{name: x, type: float64, dims: [1000]}]}
")
py_mpmd(cmd ${PY_DIR}/one.yaml 1 1 A ${PY} ${PY_SRC}/interrupt.py B ${PY} ${PY_SRC}/interrupt.py)
py_test(interrupt COMMAND ${cmd})
py_mpmd(cmd ${PY_DIR}/one.yaml 1 1 A ${PY} ${PY_SRC}/interrupt.py --uncaught
        B ${PY} ${PY_SRC}/interrupt.py --uncaught)
py_test(interrupt.uncaught COMMAND ${PY} ${PY_SRC}/expect_fail.py --within 60
        --contains KeyboardInterrupt -- ${cmd})
py_mpmd(cmd ${PY_DIR}/one.yaml 1 1 A ${PY} ${PY_SRC}/refleak.py B ${PY} ${PY_SRC}/refleak.py)
py_test(refleak COMMAND ${cmd} TIMEOUT 300)

# ---- the collectives -------------------------------------------------------------------------
xfer_mpi_launcher(launch NP 5 ENV ${PY_ENV})
py_test(colls.p2q3 COMMAND ${launch} ${PY} ${PY_SRC}/colls.py --p 2)
if(PY_MPI4PY)
  py_test(colls.mpi4py.p3q2 COMMAND ${launch} ${PY} ${PY_SRC}/colls.py --p 3 --mpi4py)
else()
  message(STATUS "libxfer: no mpi4py for ${XFER_MPI_FLAVOR}: its Python tests are skipped")
endif()

# ---- transport: file (docs/runtime.md, "Stream or file"): what xfer-synth does not reach ----
if(TARGET xfer_hdf5)
  set(ft_yaml "workflow: file_transport
launch: mpmd
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [x]}
  - {name: b, nprocs: 3, cmd: [x]}
channels:
  - name: c
    from: a
    to: b
    transport: file
    file: {keep: KEEP}
    max_in_flight_steps: 1
    selection: rows
    datasets:
      - {name: f, type: float64, dims: [12, 5]}
")
  string(REPLACE "KEEP" "false" text "${ft_yaml}")
  file(WRITE ${PY_DIR}/file-nokeep.yaml "${text}")
  string(REPLACE "KEEP" "true" text "${ft_yaml}")
  file(WRITE ${PY_DIR}/file-keep.yaml "${text}")
  set(FT ${PY} ${PY_SRC}/file_transport.py)
  # the receiver stops after 2 of 8 steps: the sender's next commit says EndOfStream;
  # keep: false bounds the files waiting and leaves none
  foreach(sc close keep)
    py_mpmd(cmd ${PY_DIR}/file-nokeep.yaml 2 3 A ${FT} ${sc} B ${FT} ${sc})
    py_test(file.${sc}.p2q3 COMMAND ${cmd} ENV XFER_TRANSPORT_DIR=${PY_DIR}/file-${sc})
  endforeach()
  # a sender alone, its receiver later (separate launches, no xferd): the data, the attributes
  # and the end; after the sender ran again, the second run's data only (and the first run's
  # values no longer match: the negative control)
  set(ft_env XFER_CONFIG=${PY_DIR}/file-keep.yaml XFER_TRANSPORT_DIR=${PY_DIR}/file-later
             XFER_LAUNCH=separate ${PY_ENV})
  xfer_mpi_launcher(la NP 2 ENV ${ft_env} XFER_COMPONENT=a)
  xfer_mpi_launcher(lb NP 3 ENV ${ft_env} XFER_COMPONENT=b)
  list(APPEND la ${FT})
  list(APPEND lb ${FT})
  list(JOIN la "|" la)
  list(JOIN lb "|" lb)
  py_test(file.later.p2q3
          COMMAND ${CMAKE_COMMAND} -DN=5 "-DCMD1=${la}|write" "-DCMD2=${lb}|read"
                  "-DCMD3=${la}|write|--second" "-DCMD4=${lb}|rerun|--second"
                  "-DCMD5=${lb}|rerun" -DLAST_FAILS=ON
                  "-DEXPECT=step 0: data differs from what was sent"
                  -P ${CMAKE_CURRENT_SOURCE_DIR}/support/run_sequence.cmake)
endif()
