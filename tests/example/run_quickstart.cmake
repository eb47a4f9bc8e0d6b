# SPDX-License-Identifier: BSD-3-Clause
# Runs `xfer-run [--check] FILE` in the working directory (tests/example/quickstart.cmake) and
# checks both its exit status (0, or non-zero with WILL_FAIL) and its output against the regular
# expression EXPECT.
#   cmake -DXFER_RUN=... -DFILE=wf.yaml [-DCHECK=1] [-DWILL_FAIL=1] -DEXPECT=regex -P this
set(args ${FILE})
if(CHECK)
  set(args --check ${FILE})
endif()
execute_process(COMMAND ${XFER_RUN} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 50)
message("${out}${err}")
if(WILL_FAIL AND rc EQUAL 0)
  message(FATAL_ERROR "xfer-run ${args} exited 0; it should have failed")
elseif(NOT WILL_FAIL AND NOT rc EQUAL 0)
  message(FATAL_ERROR "xfer-run ${args} exited with ${rc}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output of xfer-run ${args} does not match: ${EXPECT}")
endif()
