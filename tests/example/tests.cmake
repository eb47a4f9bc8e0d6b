# SPDX-License-Identifier: BSD-3-Clause
# The coupled Gray-Scott example (examples/coupled_sim_analysis, docs/example.md), small: a
# 64 x 64 grid, 6 coupled steps. Each run must exit 0 with the analysis' statistics equal to
# those the simulation computed on its own data (check_example.py), valid PNGs and, with the
# HDF5 adapter, fields.h5. Launches: one MPMD mpiexec (4 + 3 ranks: 2 x 2 blocks to 3 row
# slabs) and xfer-run with the flavour's automatic launch (MPICH: MPMD; Open MPI: separate jobs
# through ompi-server), 3 + 2 ranks. The two simulations' statistics must agree too (2 x 2 and
# 3 x 1 blocks). The simulation's halo exchange as libxfer's isomorphic all-to-all (--halo
# vonneumann on 2 x 2 blocks, --halo moore on 3 x 1; p + 2 ranks) must give statistics
# identical to the MPI_Sendrecv runs on the same blocks. A negative control shows the
# comparison catches a wrong histogram count, a max one ulp off, a mean off by 1e-9 and a
# missing step.
if(NOT TARGET gray-scott-sim OR NOT TARGET gray-scott-analysis OR NOT TARGET xfer-run)
  return()
endif()
# the bindings' interpreter when there is one: it has numpy (and, with deps.sh, h5py and
# xarray for the checks of fields.h5)
if(XFER_PYTHON_EXECUTABLE)
  set(XFER_PYTHON3 ${XFER_PYTHON_EXECUTABLE})
else()
  find_program(XFER_PYTHON3 python3)
endif()
if(NOT XFER_PYTHON3)
  message(STATUS "libxfer: no python3: the example's tests are skipped")
  return()
endif()
set(EX_DIR ${CMAKE_CURRENT_BINARY_DIR}/example)
file(MAKE_DIRECTORY ${EX_DIR})
set(EX_CHECK ${XFER_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/example/check_example.py)
set(EX_HDF5 "")
if(TARGET xfer_hdf5)
  set(EX_HDF5 --hdf5)
endif()
set(EX_STEPS 60)
set(EX_EVERY 10)
math(EXPR EX_ROWS "${EX_STEPS} / ${EX_EVERY}")

# ex_workflow(<file> <p> <q> <output dir>)
function(ex_workflow file p q out)
  file(WRITE ${file} "workflow: example_${p}x${q}
control: {timeout_ms: 60000}
components:
  - {name: simulation, nprocs: ${p},
     cmd: [gray-scott-sim, --steps, \"${EX_STEPS}\", --every, \"${EX_EVERY}\", --output, ${out}]}
  - {name: analysis, nprocs: ${q}, cmd: [gray-scott-analysis, --output, ${out}]}
channels:
  - name: fields
    from: simulation
    to: analysis
    max_in_flight_steps: 2
    datasets:
      - {name: U, type: float64, dims: [64, 64]}
      - {name: V, type: float64, dims: [64, 64]}
      - {name: time, type: float64, dims: [1]}
")
endfunction()

function(ex_test name)
  cmake_parse_arguments(T "PYTHON" "OUT;SAME_AS" "COMMAND;ENV" ${ARGN})
  set(same "")
  if(T_SAME_AS)
    set(same --same-as ${T_SAME_AS})
  endif()
  set(extra "")
  if(NOT T_PYTHON) # the Python analysis writes no HDF5 (and the same figures)
    set(extra ${EX_HDF5})
  endif()
  add_test(NAME ${P}.example.${name}
           COMMAND ${EX_CHECK} run --out ${T_OUT} --rows ${EX_ROWS} ${extra} ${same} --
                   ${T_COMMAND})
  set_tests_properties(${P}.example.${name} PROPERTIES TIMEOUT 300 LABELS "example;mpi"
                       ENVIRONMENT "${XFER_MPIEXEC_ENV};${T_ENV}")
endfunction()

# ---- one MPMD mpiexec: context 0 the simulation, context 1 the analysis ---------------------
set(out ${EX_DIR}/mpmd-p4q3)
ex_workflow(${EX_DIR}/mpmd-p4q3.yaml 4 3 ${out})
xfer_mpi_envflags(genv ENV XFER_CONFIG=${EX_DIR}/mpmd-p4q3.yaml)
xfer_mpi_envflags(lenv LOCAL ENV XFER_CONFIG=${EX_DIR}/mpmd-p4q3.yaml)
ex_test(mpmd.p4q3 OUT ${out}
        COMMAND ${MPIEXEC_EXECUTABLE} ${XFER_MPIEXEC_PREFLAGS} ${genv} ${MPIEXEC_NUMPROC_FLAG} 4
                $<TARGET_FILE:gray-scott-sim> --steps ${EX_STEPS} --every ${EX_EVERY}
                --output ${out} : ${MPIEXEC_NUMPROC_FLAG} 3 ${lenv}
                $<TARGET_FILE:gray-scott-analysis> --output ${out})
set_tests_properties(${P}.example.mpmd.p4q3 PROPERTIES FIXTURES_SETUP ${P}.example.outputs)

# ---- xfer-run, the way the README runs the example --------------------------------------------
# The ranks get the test environment (sanitizer options, preloads) through xfer-run's own.
set(ex_env ${XFER_TEST_RANK_ENV})
if(XFER_TEST_PRELOAD)
  list(JOIN XFER_TEST_PRELOAD ":" ex_preload)
  list(APPEND ex_env "LD_PRELOAD=${ex_preload}")
endif()
set(out ${EX_DIR}/xfer-run-p3q2)
ex_workflow(${EX_DIR}/xfer-run-p3q2.yaml 3 2 ${out})
ex_test(xfer_run.p3q2 OUT ${out} COMMAND $<TARGET_FILE:xfer-run> ${EX_DIR}/xfer-run-p3q2.yaml
        ENV ${ex_env})
set_tests_properties(${P}.example.xfer_run.p3q2 PROPERTIES FIXTURES_SETUP ${P}.example.outputs)

# ---- the simulation does not depend on its decomposition: 2 x 2 blocks and 3 x 1 blocks give
# the same statistics (the halo exchange is right) ------------------------------------------
add_test(NAME ${P}.example.decomposition
         COMMAND ${EX_CHECK} compare ${EX_DIR}/mpmd-p4q3/.check/reference_stats.csv
                 ${EX_DIR}/xfer-run-p3q2/.check/reference_stats.csv)
set_tests_properties(${P}.example.decomposition PROPERTIES TIMEOUT 60 LABELS "example"
                     FIXTURES_REQUIRED ${P}.example.outputs)

# ---- the halo exchange as an isomorphic neighbourhood all-to-all (xfer/iso.h) gives the same
# fields as MPI_Sendrecv: one MPMD mpiexec of gray-scott-sim --halo <mode> on p ranks and the
# analysis on 2; .check/reference_stats.csv must be byte-identical to that of the sendrecv run
# <base> on the same blocks, stats.csv equal to its stats.csv. vonneumann on 2 x 2 blocks (up = down,
# left = right); moore on 3 x 1 (rows 21, 21, 22: blocks padded to the longest side; left and
# right the rank itself, the corners from the ranks above and below).
# ex_halo_test(<mode> <p> <base run>)
function(ex_halo_test mode p base)
  set(out ${EX_DIR}/halo-${mode}-p${p}q2)
  ex_workflow(${out}.yaml ${p} 2 ${out})
  xfer_mpi_envflags(genv ENV XFER_CONFIG=${out}.yaml)
  xfer_mpi_envflags(lenv LOCAL ENV XFER_CONFIG=${out}.yaml)
  ex_test(halo.${mode} OUT ${out} SAME_AS ${EX_DIR}/${base}
          COMMAND ${MPIEXEC_EXECUTABLE} ${XFER_MPIEXEC_PREFLAGS} ${genv} ${MPIEXEC_NUMPROC_FLAG} ${p}
                  $<TARGET_FILE:gray-scott-sim> --steps ${EX_STEPS} --every ${EX_EVERY}
                  --output ${out} --halo ${mode} : ${MPIEXEC_NUMPROC_FLAG} 2 ${lenv}
                  $<TARGET_FILE:gray-scott-analysis> --output ${out})
  set_tests_properties(${P}.example.halo.${mode} PROPERTIES FIXTURES_REQUIRED
                       ${P}.example.outputs)
endfunction()
ex_halo_test(vonneumann 4 mpmd-p4q3)
ex_halo_test(moore 3 xfer-run-p3q2)

# ---- the analysis in Python (analysis.py through gray-scott-analysis-py, docs/bindings.md):
# its statistics must equal the simulation's, and the simulation's reference must be identical
# to that of the C analysis' run on the same blocks (and its statistics equal to the C
# analysis'): one MPMD mpiexec (4 + 3), and xfer-run as the README runs config/coupled-python.yaml
if(TARGET xfer_python AND NOT XFER_ENABLE_SANITIZERS)
  set(out ${EX_DIR}/python-p4q3)
  ex_workflow(${out}.yaml 4 3 ${out})
  xfer_mpi_envflags(genv ENV XFER_CONFIG=${out}.yaml)
  xfer_mpi_envflags(lenv LOCAL ENV XFER_CONFIG=${out}.yaml)
  ex_test(python.mpmd.p4q3 PYTHON OUT ${out} SAME_AS ${EX_DIR}/mpmd-p4q3
          COMMAND ${MPIEXEC_EXECUTABLE} ${XFER_MPIEXEC_PREFLAGS} ${genv} ${MPIEXEC_NUMPROC_FLAG} 4
                  $<TARGET_FILE:gray-scott-sim> --steps ${EX_STEPS} --every ${EX_EVERY}
                  --output ${out} : ${MPIEXEC_NUMPROC_FLAG} 3 ${lenv}
                  ${CMAKE_BINARY_DIR}/tools/gray-scott-analysis-py --output ${out})
  set_tests_properties(${P}.example.python.mpmd.p4q3 PROPERTIES FIXTURES_REQUIRED
                       ${P}.example.outputs)
  set(out ${EX_DIR}/python-xfer-run-p3q2)
  ex_workflow(${out}.yaml 3 2 ${out})
  file(READ ${out}.yaml text)
  string(REPLACE "cmd: [gray-scott-analysis," "cmd: [gray-scott-analysis-py," text "${text}")
  file(WRITE ${out}.yaml "${text}")
  ex_test(python.xfer_run.p3q2 PYTHON OUT ${out} SAME_AS ${EX_DIR}/xfer-run-p3q2
          COMMAND $<TARGET_FILE:xfer-run> ${out}.yaml ENV ${ex_env})
  set_tests_properties(${P}.example.python.xfer_run.p3q2 PROPERTIES FIXTURES_REQUIRED
                       ${P}.example.outputs)
endif()

# ---- negative control: the comparison must fail on perturbed statistics ----------------------
add_test(NAME ${P}.example.compare_negative COMMAND ${EX_CHECK} negative --out ${EX_DIR}/mpmd-p4q3)
set_tests_properties(${P}.example.compare_negative PROPERTIES TIMEOUT 60 LABELS "example"
                     FIXTURES_REQUIRED ${P}.example.outputs)

# ---- stream or file, one switch: the same components through HDF5 step files (xfer-run
# --transport file) give statistics identical to the stream's run on the same blocks, in one
# launch and in separate launches (which need no MPI connection over files: any MPI does)
if(TARGET xfer_hdf5)
  set(out ${EX_DIR}/file-xfer-run-p3q2)
  ex_workflow(${out}.yaml 3 2 ${out})
  ex_test(file.xfer_run.p3q2 OUT ${out} SAME_AS ${EX_DIR}/xfer-run-p3q2
          COMMAND $<TARGET_FILE:xfer-run> --transport file ${out}.yaml
          ENV ${ex_env} XFER_TRANSPORT_DIR=${out}-steps)
  set_tests_properties(${P}.example.file.xfer_run.p3q2 PROPERTIES FIXTURES_REQUIRED
                       ${P}.example.outputs)
  set(out ${EX_DIR}/file-separate-p4q3)
  ex_workflow(${out}.yaml 4 3 ${out})
  ex_test(file.separate.p4q3 OUT ${out} SAME_AS ${EX_DIR}/mpmd-p4q3
          COMMAND $<TARGET_FILE:xfer-run> --transport file --launch separate ${out}.yaml
          ENV ${ex_env} XFER_TRANSPORT_DIR=${out}-steps)
  set_tests_properties(${P}.example.file.separate.p4q3 PROPERTIES FIXTURES_REQUIRED
                       ${P}.example.outputs)
  if(TARGET xfer_python AND NOT XFER_ENABLE_SANITIZERS)
    set(out ${EX_DIR}/file-python-p3q2)
    ex_workflow(${out}.yaml 3 2 ${out})
    file(READ ${out}.yaml text)
    string(REPLACE "cmd: [gray-scott-analysis," "cmd: [gray-scott-analysis-py," text "${text}")
    file(WRITE ${out}.yaml "${text}")
    ex_test(file.python.p3q2 PYTHON OUT ${out} SAME_AS ${EX_DIR}/xfer-run-p3q2
            COMMAND $<TARGET_FILE:xfer-run> --transport file ${out}.yaml
            ENV ${ex_env} XFER_TRANSPORT_DIR=${out}-steps)
    set_tests_properties(${P}.example.file.python.p3q2 PROPERTIES FIXTURES_REQUIRED
                         ${P}.example.outputs)
  endif()
endif()
