# SPDX-License-Identifier: BSD-3-Clause
# Commands run one after the other, each to its end: CMD1 .. CMDn must succeed; with
# -DLAST_FAILS=ON the last one must fail (a negative control), its output matching EXPECT.
#   -DN=<n> -DCMD1=<command|args> ... [-DLAST_FAILS=ON -DEXPECT=<regex>] [-DMAXTIME=<s>]
# (words separated by "|": add_test would split a ";" list into arguments of its own)
cmake_minimum_required(VERSION 3.20)
if(NOT MAXTIME)
  set(MAXTIME 120)
endif()
foreach(k RANGE 1 ${N})
  string(REPLACE "|" ";" cmd "${CMD${k}}")
  execute_process(COMMAND ${cmd} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc
                  TIMEOUT ${MAXTIME})
  message("---- ${k}: exit ${rc}\n${out}${err}")
  if(k EQUAL N AND LAST_FAILS)
    if(rc EQUAL 0 OR rc MATCHES "timeout")
      message(FATAL_ERROR "command ${k} was to fail (a negative control), exit ${rc}")
    endif()
    if(NOT "${out}${err}" MATCHES "${EXPECT}")
      message(FATAL_ERROR "command ${k} failed, but its output lacks \"${EXPECT}\"")
    endif()
  elseif(NOT rc EQUAL 0)
    message(FATAL_ERROR "command ${k} failed (exit ${rc})")
  endif()
endforeach()
