# SPDX-License-Identifier: BSD-3-Clause
# The HDF5 adapter and xfer-h5stream (adapters/hdf5, docs/adapters.md): round trips P x Q
# compared with h5diff (MPMD launches and xfer-run), several steps in both layouts read back,
# clear failures (missing file or dataset, unsupported type, unwritable output) and a disk
# that fills up mid-run (completed steps kept). Scenarios: h5stream_test.sh.
if(NOT TARGET xfer_hdf5 OR NOT TARGET xfer-h5stream)
  return()
endif()
find_program(XFER_H5DIFF h5diff)
find_program(XFER_H5DUMP h5dump)
if(NOT XFER_H5DIFF OR NOT XFER_H5DUMP)
  message(STATUS "libxfer: h5diff/h5dump not found (hdf5-tools): HDF5 adapter tests skipped")
  return()
endif()

# Input files and the read-back checker: serial HDF5 calls of the flavour's parallel library.
add_executable(h5gen ${CMAKE_CURRENT_SOURCE_DIR}/adapters/h5gen.c)
target_link_libraries(h5gen PRIVATE xfer_hdf5_parallel MPI::MPI_C xfer_warnings)

xfer_mpi_envflags(h5_genv)
xfer_mpi_envflags(h5_lenv LOCAL)
list(JOIN h5_genv " " h5_genv)
list(JOIN h5_lenv " " h5_lenv)
set(h5_pre "${XFER_MPIEXEC_PREFLAGS}")
list(JOIN h5_pre " " h5_pre)
set(h5_sep ${XFER_TEST_RANK_ENV})
if(XFER_TEST_PRELOAD)
  list(JOIN XFER_TEST_PRELOAD ":" h5_preload)
  list(APPEND h5_sep "LD_PRELOAD=${h5_preload}")
endif()
list(JOIN h5_sep " " h5_sep)

function(h5_test scenario p q)
  set(name ${P}.adapters.hdf5.${scenario}.p${p}q${q})
  add_test(NAME ${name}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/adapters/h5stream_test.sh ${scenario} ${p} ${q})
  set_tests_properties(${name} PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77 LABELS "adapters;hdf5"
    ENVIRONMENT
    "${XFER_MPIEXEC_ENV};H5S=$<TARGET_FILE:xfer-h5stream>;GEN=$<TARGET_FILE:h5gen>;XFER_RUN=$<TARGET_FILE:xfer-run>;H5DIFF=${XFER_H5DIFF};WORK=${CMAKE_CURRENT_BINARY_DIR}/h5stream/${scenario}-p${p}q${q};MPIEXEC=${MPIEXEC_EXECUTABLE};MPI_PRE=${h5_pre} ${h5_genv};MPI_LENV=${h5_lenv};SEP_ENV=${h5_sep}")
endfunction()

h5_test(mpmd-same 3 2)
h5_test(mpmd-same 1 3)
h5_test(xfer-run-same 2 2)
h5_test(group-steps 3 2)
h5_test(stepdim 2 3)
h5_test(errors 2 2)
h5_test(stream-records 2 3)
h5_test(stream-records 1 1)
h5_test(diskfull-group 2 1)
h5_test(diskfull-stepdim 2 1)
h5_test(tmpfs-group 2 1) # skipped (77) where a tmpfs cannot be mounted
h5_test(tmpfs-stepdim 3 1)
h5_test(tmpfs-group 2 2) # several writers: the free-space check refuses the step
h5_test(tmpfs-stepdim 2 3)

# The M x N benchmark checks every consumer's block each step: run it small as a test of the
# three ways (its figures come from bench/mxn-bench.sh, never from here).
if(TARGET xfer-mxnbench)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/mxnbench)
  xfer_mpi_launcher(mxn_launch NP 5)
  add_test(NAME ${P}.adapters.mxnbench.p2q3
           COMMAND ${mxn_launch} $<TARGET_FILE:xfer-mxnbench> --p 2 --n 97 --steps 2
                   --ways select,all,bind,h5 --dir ${CMAKE_CURRENT_BINARY_DIR}/mxnbench)
  set_tests_properties(${P}.adapters.mxnbench.p2q3 PROPERTIES TIMEOUT 120
                       LABELS "adapters;hdf5;mpi" ENVIRONMENT "${XFER_MPIEXEC_ENV}"
                       PASS_REGULAR_EXPRESSION "h5,2,3,97,2,")
endif()

# Records (XFER_TYPE_RECORD) as HDF5 compounds through the adapter's API, on 1 and 2 ranks:
# every layout written and read back field by field, another member order read by name, the
# refusals, the XDMF side-car; then h5dump shows the compound of the written file.
add_executable(h5records ${CMAKE_CURRENT_SOURCE_DIR}/adapters/h5records.c)
target_link_libraries(h5records PRIVATE xfer_hdf5 xfer_adapter_common xfer_hdf5_parallel
                      MPI::MPI_C xfer_warnings)
foreach(np 1 2)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/h5records-files/p${np})
  file(MAKE_DIRECTORY ${dir})
  xfer_mpi_launcher(rec_launch NP ${np})
  add_test(NAME ${P}.adapters.hdf5.records.p${np}
           COMMAND ${rec_launch} $<TARGET_FILE:h5records> ${dir})
  set_tests_properties(${P}.adapters.hdf5.records.p${np} PROPERTIES TIMEOUT 60
    LABELS "adapters;hdf5;mpi" ENVIRONMENT "${XFER_MPIEXEC_ENV}"
    PASS_REGULAR_EXPRESSION "h5records: [0-9]+ checks passed on ${np} rank" FIXTURES_SETUP h5rec_${np}_${P})
  # the file as any HDF5 tool sees it: a compound of the fields, in order, at the C offsets
  add_test(NAME ${P}.adapters.hdf5.records.h5dump.p${np}
           COMMAND sh -c "${XFER_H5DUMP} -H -d /swarm/particles ${dir}/same.h5 | tr -s ' \\n' ' '")
  set_tests_properties(${P}.adapters.hdf5.records.h5dump.p${np} PROPERTIES TIMEOUT 30
    LABELS "adapters;hdf5" FIXTURES_REQUIRED h5rec_${np}_${P}
    PASS_REGULAR_EXPRESSION "DATATYPE H5T_COMPOUND { H5T_STD_I64LE \"id\"; H5T_ARRAY { \\[3\\] H5T_IEEE_F64LE } \"pos\"; H5T_IEEE_F32LE \"q\"; H5T_STD_I8LE \"kind\"; } DATASPACE SIMPLE { \\( 13 \\) / \\( 13 \\) }")
endforeach()

# Joined datasets through the adapter's API in the group-per-step layout, on 1 and 3 ranks
# (h5points.c: rows that change every step, a step without rows, a rank without rows, records
# with and without geometry, numeric points and their attributes, the step dimension's refusal),
# then their XDMF description checked against the file and the values written (xdmf_points.py,
# with h5py; skipped, 77, without it).
if(XFER_PYTHON_EXECUTABLE)
  set(h5_python ${XFER_PYTHON_EXECUTABLE})
else()
  find_program(h5_python python3)
endif()
add_executable(h5points ${CMAKE_CURRENT_SOURCE_DIR}/adapters/h5points.c)
target_link_libraries(h5points PRIVATE xfer_hdf5 xfer_adapter_common MPI::MPI_C xfer_warnings)
foreach(np 1 3)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/h5points-files/p${np})
  file(MAKE_DIRECTORY ${dir})
  xfer_mpi_launcher(pts_launch NP ${np})
  add_test(NAME ${P}.adapters.hdf5.points.p${np}
           COMMAND ${pts_launch} $<TARGET_FILE:h5points> ${dir})
  set_tests_properties(${P}.adapters.hdf5.points.p${np} PROPERTIES TIMEOUT 60
    LABELS "adapters;hdf5;mpi" ENVIRONMENT "${XFER_MPIEXEC_ENV}"
    PASS_REGULAR_EXPRESSION "h5points: [0-9]+ checks passed on ${np} rank"
    FIXTURES_SETUP h5pts_${np}_${P})
  if(h5_python)
    add_test(NAME ${P}.adapters.hdf5.points.xdmf.p${np}
             COMMAND ${h5_python} ${CMAKE_CURRENT_SOURCE_DIR}/adapters/xdmf_points.py h5points
                     ${dir} ${np})
    set_tests_properties(${P}.adapters.hdf5.points.xdmf.p${np} PROPERTIES TIMEOUT 60
      LABELS "adapters;hdf5" FIXTURES_REQUIRED h5pts_${np}_${P} SKIP_RETURN_CODE 77)
  endif()
endforeach()
