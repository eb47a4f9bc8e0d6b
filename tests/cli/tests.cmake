# SPDX-License-Identifier: BSD-3-Clause
# The command-line contract of every program (tools/common/cli.h, docs/tools.md): --help and
# --version exit 0, usage errors exit 2 with the option named. No MPI launcher: MPI programs
# parse their options before MPI_Init.
find_program(XFER_CLI_PYTHON3 NAMES python3)
if(NOT XFER_CLI_PYTHON3)
  return()
endif()
set(_cli_check ${XFER_CLI_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_cli.py)
foreach(t xfer-run xfer-info xfer-demo xfer-bench xfer-synth xfer-isobench xfer-getbench xferd
          xferctl xferd-load xfer-h5stream xfer-mxnbench xfer-joinbench xfer-ncstream gray-scott-sim
          gray-scott-analysis)
  if(TARGET ${t})
    add_test(NAME ${P}.cli.${t} COMMAND ${_cli_check} ${t} $<TARGET_FILE:${t}>)
  endif()
endforeach()
# programs whose first word is a command
if(TARGET xfer-sched)
  add_test(NAME ${P}.cli.xfer-sched COMMAND ${_cli_check} --command verify xfer-sched
                                            $<TARGET_FILE:xfer-sched>)
endif()
if(TARGET xfer_python AND NOT XFER_ENABLE_SANITIZERS) # python3 is not instrumented
  add_test(NAME ${P}.cli.gray-scott-analysis-py
           COMMAND ${_cli_check} gray-scott-analysis-py ${CMAKE_BINARY_DIR}/tools/gray-scott-analysis-py)
  add_test(NAME ${P}.cli.python-m-xfer
           COMMAND ${_cli_check} "python3 -m xfer" ${XFER_PYTHON_EXECUTABLE} -m xfer)
  set_tests_properties(${P}.cli.python-m-xfer PROPERTIES
                       ENVIRONMENT "PYTHONPATH=${XFER_PYTHON_BUILD_DIR}")
endif()
get_property(_cli_tests DIRECTORY PROPERTY TESTS)
list(FILTER _cli_tests INCLUDE REGEX "\\.cli\\.")
set_tests_properties(${_cli_tests} PROPERTIES LABELS "cli" TIMEOUT 120)
