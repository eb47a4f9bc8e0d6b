# SPDX-License-Identifier: BSD-3-Clause
# The quickstart's programs (examples/quickstart, docs/quickstart.md), run the way the page runs
# them: `xfer-run wf.yaml` in their directory, with the build tree's Python package on
# PYTHONPATH and the package's interpreter first in PATH as `python3`. The C producer (3 ranks)
# and the Fortran one put a 64 x 128 float64 field in rows; the Python consumer (2 ranks) checks
# every element of its rows, 3 steps. `xfer-run --check` must accept the file (and ana's
# interpreter: so not without the Python package, nor under the sanitizers), and a negative
# control (xfer-synth's pattern instead of the producer's) must make the consumer fail.
if(NOT TARGET quickstart_my_sim OR NOT TARGET xfer-run)
  return()
endif()
set(QS_DIR ${CMAKE_BINARY_DIR}/examples/quickstart)
set(QS_RUN ${CMAKE_COMMAND} -DXFER_RUN=$<TARGET_FILE:xfer-run>)
set(QS_SCRIPT -P ${CMAKE_CURRENT_SOURCE_DIR}/example/run_quickstart.cmake) # after the -D

# Python: not under the sanitizers (python3 is not instrumented).
if(NOT TARGET xfer_python OR XFER_ENABLE_SANITIZERS)
  return()
endif()
get_filename_component(_qs_pydir ${XFER_PYTHON_EXECUTABLE} DIRECTORY)
set(qs_env ${XFER_MPIEXEC_ENV} ${XFER_TEST_RANK_ENV} "PYTHONPATH=${XFER_PYTHON_BUILD_DIR}"
    "PATH=${_qs_pydir}:$ENV{PATH}")
if(XFER_TEST_PRELOAD) # 5 ranks on a small machine: MPICH's waiting ranks yield
  list(JOIN XFER_TEST_PRELOAD ":" _qs_preload)
  list(APPEND qs_env "LD_PRELOAD=${_qs_preload}")
endif()
# --check also starts ana's python3 (the package's, first in PATH) to import numpy and xfer
add_test(NAME ${P}.example.quickstart.check
         COMMAND ${QS_RUN} -DFILE=wf.yaml -DCHECK=1
                 "-DEXPECT=wf.yaml: ok \\(workflow my_coupling: 2 components, 1 channels\\).*component ana: .* imports numpy .* and xfer" ${QS_SCRIPT})
set_tests_properties(${P}.example.quickstart.check PROPERTIES WORKING_DIRECTORY ${QS_DIR}
                     TIMEOUT 30 LABELS "example" ENVIRONMENT "${qs_env}")
# the negative control: the field comes from xfer-synth, not from my_sim. One MPMD launch: in
# separate launches (Open MPI) xfer-run gives the producer 2 x heartbeat_timeout_ms + 2 s to end
# on its own once the consumer failed, 11 s in all.
file(READ ${PROJECT_SOURCE_DIR}/examples/quickstart/wf.yaml _qs)
string(REPLACE "cmd: [./my_sim, --steps, \"3\"]" "cmd: [xfer-synth, --steps, \"3\"]" _qs "${_qs}")
file(WRITE ${QS_DIR}/wf-negative.yaml "${_qs}launch: mpmd\n")

# qs_test(<name> <file> <expected output> [FAIL])
function(qs_test name file expect)
  set(fail "")
  if(ARGN STREQUAL "FAIL")
    set(fail -DWILL_FAIL=1)
  endif()
  add_test(NAME ${P}.example.quickstart.${name}
           COMMAND ${QS_RUN} -DFILE=${file} ${fail} "-DEXPECT=${expect}" ${QS_SCRIPT})
  set_tests_properties(${P}.example.quickstart.${name} PROPERTIES WORKING_DIRECTORY ${QS_DIR}
                       TIMEOUT 60 LABELS "example;mpi" ENVIRONMENT "${qs_env}")
endfunction()
set(_qs_ok "\\[ana\\] ana rank 0: rows 0-31, 3 steps checked.*\\[ana\\] ana rank 1: rows 32-63, 3 steps checked|\\[ana\\] ana rank 1: rows 32-63, 3 steps checked.*\\[ana\\] ana rank 0: rows 0-31, 3 steps checked")
qs_test(c_to_py wf.yaml "${_qs_ok}")
if(TARGET quickstart_my_sim_f)
  qs_test(f_to_py wf-fortran.yaml "${_qs_ok}")
endif()
qs_test(negative wf-negative.yaml "ana rank [01]: step 0: T is not as put" FAIL)
