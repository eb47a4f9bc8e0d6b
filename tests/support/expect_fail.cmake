# SPDX-License-Identifier: BSD-3-Clause
# A run that must fail cleanly: non-zero exit status, output (stdout + stderr) matching EXPECT
# (a regular expression) and, when REJECT is given, none matching REJECT, and done within
# MAXTIME seconds (never a hang); when STATUS is given, exactly that exit status.
#   -DCMD=<command;args>  -DEXPECT=<regex>  -DMAXTIME=<s>  [-DREJECT=<regex>]  [-DSTATUS=<n>]
cmake_minimum_required(VERSION 3.20)
string(TIMESTAMP t0 "%s")
execute_process(COMMAND ${CMD} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc
                TIMEOUT ${MAXTIME})
string(TIMESTAMP t1 "%s")
math(EXPR dt "${t1} - ${t0}")
set(all "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "expected a failure, the run succeeded:\n${all}")
endif()
if(rc MATCHES "timeout" OR dt GREATER MAXTIME)
  message(FATAL_ERROR "the run did not end within ${MAXTIME} s (${rc}):\n${all}")
endif()
if(NOT "${STATUS}" STREQUAL "" AND NOT rc STREQUAL "${STATUS}")
  message(FATAL_ERROR "expected exit status ${STATUS}, got ${rc}:\n${all}")
endif()
if(NOT all MATCHES "${EXPECT}")
  message(FATAL_ERROR "exit ${rc} but the output lacks \"${EXPECT}\":\n${all}")
endif()
if(REJECT AND all MATCHES "${REJECT}")
  message(FATAL_ERROR "exit ${rc} but the output has \"${CMAKE_MATCH_0}\":\n${all}")
endif()
message(STATUS "failed as expected (exit ${rc}, ${dt} s)")
