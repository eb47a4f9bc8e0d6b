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
# missing step. Every run carries EX_PARTICLES tracer particles (the joined record dataset
# particles, selection: rows): its analysis must report its particle check passed, and its
# particles.csv must equal the simulation's reference, with EX_PARTICLES particles in every step
# and the simulation ranks' counts changing between steps; the particles' statistics must not
# depend on the decomposition either; and runs whose simulation damages one step's particles
# (--fault-particles) must fail with the analysis' particle check, C and Python.
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
set(EX_PARTICLES 1000)
math(EXPR EX_ROWS "${EX_STEPS} / ${EX_EVERY}")

# ex_workflow(<file> <p> <q> <output dir>)
function(ex_workflow file p q out)
  file(WRITE ${file} "workflow: example_${p}x${q}
control: {timeout_ms: 60000}
components:
  - {name: simulation, nprocs: ${p},
     cmd: [gray-scott-sim, --steps, \"${EX_STEPS}\", --every, \"${EX_EVERY}\",
           --particles, \"${EX_PARTICLES}\", --output, ${out}]}
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
      - {name: particles, type: {id: int64, pos: [float64, 2], v: float64}, dims: [joined],
         selection: rows}
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
           COMMAND ${EX_CHECK} run --out ${T_OUT} --rows ${EX_ROWS} --particles ${EX_PARTICLES}
                   ${extra} ${same} -- ${T_COMMAND})
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
                --particles ${EX_PARTICLES} --output ${out} : ${MPIEXEC_NUMPROC_FLAG} 3 ${lenv}
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

# ---- MPI_COMM_WORLD per component (mpi_world: component, the default): the simulation with
# --world communicates on MPI_COMM_WORLD, as an uncoupled code does, never on xfer_comm's
# communicator; in one MPMD launch by xfer-run its results equal the run above -----------------
if(TARGET xfer_world)
  set(out ${EX_DIR}/world-p3q2)
  ex_workflow(${out}.yaml 3 2 ${out})
  file(READ ${out}.yaml text)
  string(REPLACE "cmd: [gray-scott-sim," "cmd: [gray-scott-sim, --world," text "${text}")
  file(WRITE ${out}.yaml "${text}")
  ex_test(world.xfer_run.p3q2 OUT ${out} SAME_AS ${EX_DIR}/xfer-run-p3q2
          COMMAND $<TARGET_FILE:xfer-run> --launch mpmd ${out}.yaml ENV ${ex_env})
  set_tests_properties(${P}.example.world.xfer_run.p3q2 PROPERTIES FIXTURES_REQUIRED
                       ${P}.example.outputs)
endif()

# ---- the simulation does not depend on its decomposition: 2 x 2 blocks and 3 x 1 blocks give
# the same statistics (the halo exchange is right) ------------------------------------------
add_test(NAME ${P}.example.decomposition
         COMMAND ${EX_CHECK} compare ${EX_DIR}/mpmd-p4q3/.check/reference_stats.csv
                 ${EX_DIR}/xfer-run-p3q2/.check/reference_stats.csv)
set_tests_properties(${P}.example.decomposition PROPERTIES TIMEOUT 60 LABELS "example"
                     FIXTURES_REQUIRED ${P}.example.outputs)
# ... and the particles too: their paths do not depend on which rank holds them (each rank's
# count, rows_*, differs with the decomposition: left out)
add_test(NAME ${P}.example.decomposition.particles
         COMMAND ${EX_CHECK} compare --skip rows_
                 ${EX_DIR}/mpmd-p4q3/.check/reference_particles.csv
                 ${EX_DIR}/xfer-run-p3q2/.check/reference_particles.csv)
set_tests_properties(${P}.example.decomposition.particles PROPERTIES TIMEOUT 60 LABELS "example"
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
                  --particles ${EX_PARTICLES} --output ${out} --halo ${mode} :
                  ${MPIEXEC_NUMPROC_FLAG} 2 ${lenv} $<TARGET_FILE:gray-scott-analysis>
                  --output ${out})
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
                  --particles ${EX_PARTICLES} --output ${out} : ${MPIEXEC_NUMPROC_FLAG} 3 ${lenv}
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

# ---- the particle check fails loudly: the simulation damages rank 0's particles of the second
# coupled step (--fault-particles: one lost; one with another's id, so that the count is right
# and only the ids tell), and the analysis, C or Python, must end the run with a status other
# than 0 and say why. One MPMD mpiexec of p 4 + q 3 ranks each.
# ex_fault_test(<name> <fault> <analysis program> <expected words>)
function(ex_fault_test name fault analysis expect)
  set(out ${EX_DIR}/fault-${name})
  ex_workflow(${out}.yaml 4 3 ${out})
  xfer_mpi_envflags(genv ENV XFER_CONFIG=${out}.yaml)
  xfer_mpi_envflags(lenv LOCAL ENV XFER_CONFIG=${out}.yaml)
  add_test(NAME ${P}.example.particles_fault.${name}
           COMMAND ${EX_CHECK} fails --out ${out} --expect ${expect} --
                   ${MPIEXEC_EXECUTABLE} ${XFER_MPIEXEC_PREFLAGS} ${genv} ${MPIEXEC_NUMPROC_FLAG} 4
                   $<TARGET_FILE:gray-scott-sim> --steps ${EX_STEPS} --every ${EX_EVERY}
                   --particles ${EX_PARTICLES} --output ${out} --fault-particles ${fault} :
                   ${MPIEXEC_NUMPROC_FLAG} 3 ${lenv} ${analysis} --output ${out})
  set_tests_properties(${P}.example.particles_fault.${name} PROPERTIES TIMEOUT 300
                       LABELS "example;mpi" ENVIRONMENT "${XFER_MPIEXEC_ENV}")
endfunction()
math(EXPR lost "${EX_PARTICLES} - 1")
set(said_lost "particle check failed in step 1: the step holds ${lost} particles")
set(said_relabel "particle check failed in step 1: id 0 arrived 2 times (ids more than once: 1")
ex_fault_test(drop drop $<TARGET_FILE:gray-scott-analysis> "${said_lost}")
ex_fault_test(relabel relabel $<TARGET_FILE:gray-scott-analysis> "${said_relabel}")
if(TARGET xfer_python AND NOT XFER_ENABLE_SANITIZERS)
  ex_fault_test(python.relabel relabel ${CMAKE_BINARY_DIR}/tools/gray-scott-analysis-py
                "${said_relabel}")
endif()

# ---- negative control: the comparison must fail on perturbed statistics ----------------------
# The analysis killed with SIGKILL mid-run and started again into the running workflow (xfer-run
# --attach) under on_reader_loss: spill over step files: scripts/restart-example.sh checks that
# the two runs' stats.csv hold every one of the 20 steps, in order, none twice but the one the
# killed run may have written and not finished, and that xfer-run exits 3 (docs/example.md).
if(TARGET xfer_hdf5)
  # (xfer-run hands its environment to the ranks: ex_env carries the sanitizers' options and
  # preloads, as for example.xfer_run above)
  add_test(NAME ${P}.example.restart
           COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/restart-example.sh)
  set_tests_properties(${P}.example.restart PROPERTIES TIMEOUT 600 LABELS "example;mpi;loss"
                       ENVIRONMENT "XFER_EXAMPLE_NO_BUILD=1;XFER_EXAMPLE_BUILD=${PROJECT_BINARY_DIR};XFER_EXAMPLE_FLAVOR=${XFER_MPI_FLAVOR};WORK=${EX_DIR}/restart;${XFER_MPIEXEC_ENV};${ex_env}")
endif()

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
