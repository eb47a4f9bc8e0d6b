# SPDX-License-Identifier: BSD-3-Clause
# A run that must succeed with output (stdout + stderr) matching EXPECT (a regular expression)
# and, when REJECT is given, no output matching REJECT: ctest's PASS_REGULAR_EXPRESSION alone
# would ignore the exit status.
#   -DCMD=<command;args>  -DEXPECT=<regex>  [-DREJECT=<regex>]
cmake_minimum_required(VERSION 3.20)
execute_process(COMMAND ${CMD} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(all "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the run failed (exit ${rc}):\n${all}")
endif()
if(NOT all MATCHES "${EXPECT}")
  message(FATAL_ERROR "the run succeeded but its output lacks \"${EXPECT}\":\n${all}")
endif()
if(REJECT AND all MATCHES "${REJECT}")
  message(FATAL_ERROR "the run succeeded but its output has \"${CMAKE_MATCH_0}\":\n${all}")
endif()
message(STATUS "succeeded with the expected output")
