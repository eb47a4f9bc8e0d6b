# SPDX-License-Identifier: BSD-3-Clause
# The Fortran module (bindings/fortran, docs/bindings.md): fsynth (tests/fortran/fsynth.f90)
# coupled with xfer-synth (C) and synth.py (Python) in both directions; each side compares
# every element it receives with xfer-synth's pattern at the element's global position, so
# the column-major mapping (a Fortran array of shape (n1, ..., nr) is the dataset of dims
# [nr, ..., n1]) is checked element by element.
if(NOT TARGET xfer_fortran OR NOT TARGET xfer-synth)
  return()
endif()
add_executable(fsynth fortran/fsynth.f90 fortran/pattern.c)
add_executable(fjoined fortran/fjoined.f90)
add_executable(fvariable fortran/fvariable.f90)
add_executable(fclose fortran/fclose.f90)
target_include_directories(fsynth PRIVATE ${PROJECT_SOURCE_DIR}/tools)
foreach(t fsynth fjoined fvariable fclose)
  target_link_libraries(${t} PRIVATE libxfer::xfer_fortran)
  target_compile_options(${t} PRIVATE $<$<COMPILE_LANGUAGE:Fortran>:-Wall -Werror
                                      -Wno-maybe-uninitialized>)
  if(XFER_ENABLE_SANITIZERS)
    target_compile_options(${t} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
  endif()
endforeach()
set(F_DIR ${CMAKE_CURRENT_BINARY_DIR}/fortran)
file(MAKE_DIRECTORY ${F_DIR})

# f_workflow(<file> <p> <q> <half|full>): fsynth's datasets, ranks 1 to 4, block selections.
function(f_workflow file p q duplex)
  set(ds "      - {name: line, type: float64, dims: [37]}
      - {name: plane, type: int32, dims: [13, 9]}
      - {name: cube, type: uint8, dims: [5, 4, 3]}
      - {name: hyper, type: float64, dims: [3, 2, 4, 5]}
      - {name: short, type: uint16, dims: [23]}")
  if(duplex STREQUAL "full")
    string(APPEND ds "
      - {name: back2, type: float32, dims: [11, 7], from: b}
      - {name: back3, type: int64, dims: [3, 5, 2], from: b}")
  endif()
  xfer_ab_workflow(${file} ${p} ${q} ${duplex} block "${ds}")
endfunction()

# f_test(<name> <cfg> <p> <q> A <cmd...> B <cmd...> [ENV VAR=value ...])
function(f_test name cfg p q)
  cmake_parse_arguments(T "" "" "A;B;ENV" ${ARGN})
  set(env XFER_CONFIG=${cfg})
  if(TARGET xfer_python)
    list(APPEND env "PYTHONPATH=${XFER_PYTHON_BUILD_DIR}:${CMAKE_CURRENT_SOURCE_DIR}/python")
  endif()
  xfer_mpi_envflags(genv ENV ${env})
  xfer_mpi_envflags(lenv LOCAL ENV ${env})
  add_test(NAME ${P}.fortran.${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${XFER_MPIEXEC_PREFLAGS} ${genv} ${MPIEXEC_NUMPROC_FLAG}
                   ${p} ${T_A} : ${MPIEXEC_NUMPROC_FLAG} ${q} ${lenv} ${T_B})
  set_tests_properties(${P}.fortran.${name} PROPERTIES TIMEOUT 120 LABELS "fortran;mpi"
                       ENVIRONMENT "${XFER_MPIEXEC_ENV};${T_ENV}")
endfunction()

set(F $<TARGET_FILE:fsynth>)
set(XS $<TARGET_FILE:xfer-synth>)
foreach(duplex half full)
  f_workflow(${F_DIR}/f-${duplex}.yaml 2 3 ${duplex})
  f_workflow(${F_DIR}/f-${duplex}-p3q2.yaml 3 2 ${duplex})
  f_test(f_to_c.${duplex}.p2q3 ${F_DIR}/f-${duplex}.yaml 2 3 A ${F} a 4 attrs B ${XS} --attrs)
  f_test(c_to_f.${duplex}.p3q2 ${F_DIR}/f-${duplex}-p3q2.yaml 3 2 A ${XS} --attrs
         B ${F} b 4 attrs strided)
  f_test(f_to_f.${duplex}.p2q3 ${F_DIR}/f-${duplex}.yaml 2 3 A ${F} a 3 strided B ${F} b 3)
  # Negative control: a producer that fills its arrays as if Fortran were row-major is caught.
  f_test(negative.rowmajor_to_c.${duplex} ${F_DIR}/f-${duplex}.yaml 2 3 A ${F} a 2 rowmajor
         B ${XS})
  set_tests_properties(${P}.fortran.negative.rowmajor_to_c.${duplex} PROPERTIES
                       PASS_REGULAR_EXPRESSION "dataset plane step 0: data differs")
  if(TARGET xfer_python AND NOT XFER_ENABLE_SANITIZERS)
    f_test(f_to_py.${duplex}.p2q3 ${F_DIR}/f-${duplex}.yaml 2 3 A ${F} a 4 attrs strided
           B ${XFER_PYTHON_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/python/synth.py --attrs)
    f_test(py_to_f.${duplex}.p3q2 ${F_DIR}/f-${duplex}-p3q2.yaml 3 2
           A ${XFER_PYTHON_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/python/synth.py --attrs
           B ${F} b 4 attrs)
  endif()
endforeach()

# Several blocks per rank and step (docs/runtime.md): Fortran puts each block as three slabs,
# one xfer_put each, over both transports; C checks every element it receives.
f_workflow(${F_DIR}/f-blocks-p3q2.yaml 3 2 half)
foreach(tr stream file)
  if(tr STREQUAL "file" AND NOT TARGET xfer_hdf5)
    continue()
  endif()
  f_test(blocks.${tr}.f_to_c.p3q2 ${F_DIR}/f-blocks-p3q2.yaml 3 2 A ${F} a 4 blocks B ${XS}
         ENV XFER_TRANSPORT=${tr} XFER_TRANSPORT_DIR=${F_DIR}/blocks-${tr})
endforeach()

# Joined and record datasets (fjoined.f90, the twin of tests/python/joined.py): rows that change
# every step as the Fortran array's last dimension, bind(c) derived types as records; Fortran to
# Fortran, C (support/joined_send.c) to Fortran, Fortran to C (support/joined_recv.c), Fortran
# to and from Python, over the stream; Fortran to Fortran and to C over the file transport too.
set(FJ $<TARGET_FILE:fjoined>)
xfer_joined_workflow(${F_DIR}/joined-stream-all-p2q3.yaml 2 3 all stream)
xfer_joined_workflow(${F_DIR}/joined-stream-rows-p3q2.yaml 3 2 rows stream)
f_test(joined.f_to_f.stream.rows.p3q2 ${F_DIR}/joined-stream-rows-p3q2.yaml 3 2 A ${FJ} a
       B ${FJ} b rows)
f_test(joined.c_to_f.stream.all.p2q3 ${F_DIR}/joined-stream-all-p2q3.yaml 2 3
       A $<TARGET_FILE:joined_send> B ${FJ} b all)
f_test(joined.f_to_c.stream.all.p2q3 ${F_DIR}/joined-stream-all-p2q3.yaml 2 3 A ${FJ} a
       B $<TARGET_FILE:joined_recv>)
f_test(joined.f_to_c.stream.rows.p3q2 ${F_DIR}/joined-stream-rows-p3q2.yaml 3 2 A ${FJ} a
       B $<TARGET_FILE:joined_recv>)
if(TARGET xfer_hdf5)
  xfer_joined_workflow(${F_DIR}/joined-file-all-p2q3.yaml 2 3 all file)
  f_test(joined.f_to_f.file.all.p2q3 ${F_DIR}/joined-file-all-p2q3.yaml 2 3 A ${FJ} a
         B ${FJ} b all)
  set_tests_properties(${P}.fortran.joined.f_to_f.file.all.p2q3 PROPERTIES ENVIRONMENT
                       "${XFER_MPIEXEC_ENV};XFER_TRANSPORT_DIR=${F_DIR}/steps-joined-file")
  xfer_joined_workflow(${F_DIR}/joined-file-rows-p3q2.yaml 3 2 rows file)
  f_test(joined.f_to_c.file.rows.p3q2 ${F_DIR}/joined-file-rows-p3q2.yaml 3 2 A ${FJ} a
         B $<TARGET_FILE:joined_recv>
         ENV XFER_TRANSPORT_DIR=${F_DIR}/steps-joined-file-f_to_c)
endif()
if(TARGET xfer_python AND NOT XFER_ENABLE_SANITIZERS)
  set(PJ ${XFER_PYTHON_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/python/joined.py)
  f_test(joined.f_to_py.stream.all.p2q3 ${F_DIR}/joined-stream-all-p2q3.yaml 2 3 A ${FJ} a
         B ${PJ})
  f_test(joined.py_to_f.stream.rows.p3q2 ${F_DIR}/joined-stream-rows-p3q2.yaml 3 2 A ${PJ}
         B ${FJ} b rows)
endif()

# Datasets of variable shape (fvariable.f90, the twin of tests/python/variable.py): shapes that
# grow and shrink put with dims= in Fortran order, the three refused commits; Fortran to Fortran
# and to and from Python, over each of XFER_VARIABLE_TRANSPORTS (tests/CMakeLists.txt).
set(FV $<TARGET_FILE:fvariable>)
foreach(tr IN LISTS XFER_VARIABLE_TRANSPORTS)
  if(tr STREQUAL "file" AND NOT TARGET xfer_hdf5)
    continue()
  endif()
  set(v23 ${F_DIR}/variable-${tr}-p2q3.yaml)
  set(v32 ${F_DIR}/variable-${tr}-p3q2.yaml)
  xfer_variable_workflow(${v23} 2 3 ${tr})
  xfer_variable_workflow(${v32} 3 2 ${tr})
  f_test(variable.f_to_f.${tr}.p2q3 ${v23} 2 3 A ${FV} a B ${FV} b
         ENV XFER_TRANSPORT_DIR=${F_DIR}/steps-variable-f_to_f-${tr})
  if(TARGET xfer_python AND NOT XFER_ENABLE_SANITIZERS)
    set(PV ${XFER_PYTHON_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/python/variable.py)
    f_test(variable.f_to_py.${tr}.p2q3 ${v23} 2 3 A ${FV} a B ${PV}
           ENV XFER_TRANSPORT_DIR=${F_DIR}/steps-variable-f_to_py-${tr})
    f_test(variable.py_to_f.${tr}.p3q2 ${v32} 3 2 A ${PV} B ${FV} b
           ENV XFER_TRANSPORT_DIR=${F_DIR}/steps-variable-py_to_f-${tr})
  endif()
  # Negative control: one value of g changed in step 3 is caught.
  f_test(negative.variable_corrupt.${tr} ${v23} 2 3 A ${FV} a corrupt B ${FV} b
         ENV XFER_TRANSPORT_DIR=${F_DIR}/steps-variable-corrupt-${tr})
  set_tests_properties(${P}.fortran.negative.variable_corrupt.${tr} PROPERTIES
                       PASS_REGULAR_EXPRESSION "g step 3: data differs")
endforeach()

# A reader that closes one channel early (fclose.f90, xfer_channel_close) and reads the other to
# its end, close_prog (tests/runtime/close_prog.c) sending both; its stream on the closed one ends.
if(TARGET close_prog)
  file(WRITE ${F_DIR}/close-p2q3.yaml "workflow: f_close
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [x]}
  - {name: b, nprocs: 3, cmd: [x]}
channels:
  - {name: c1, from: a, to: b, max_in_flight_steps: 2, datasets: [{name: v, type: int64, dims: [16]}]}
  - {name: c2, from: a, to: b, max_in_flight_steps: 2, datasets: [{name: v, type: int64, dims: [16]}]}
")
  f_test(close.c_to_f.p2q3 ${F_DIR}/close-p2q3.yaml 2 3
         A $<TARGET_FILE:close_prog> --closer reader --loss fail B $<TARGET_FILE:fclose>)
endif()
