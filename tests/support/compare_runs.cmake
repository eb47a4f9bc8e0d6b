# SPDX-License-Identifier: BSD-3-Clause
# Runs an unmodified MPI program twice -- plainly and under LD_PRELOAD=libxfer_pmpi.so -- and
# requires byte-identical stdout, exit code 0 for both, and evidence (XFER_TRACE lines) that
# the interposer actually ran the intercommunicator calls in the second run.
#   -DPLAIN=<launcher;args>  -DPRELOADED=<launcher;args>  -DPROGRAM=<exe;args>  -DWORK=<dir>
cmake_minimum_required(VERSION 3.20)
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND ${PLAIN} ${PROGRAM} OUTPUT_FILE "${WORK}/plain.out"
                ERROR_FILE "${WORK}/plain.err" RESULT_VARIABLE rc1 TIMEOUT 240)
execute_process(COMMAND ${PRELOADED} ${PROGRAM} OUTPUT_FILE "${WORK}/pmpi.out"
                ERROR_FILE "${WORK}/pmpi.err" RESULT_VARIABLE rc2 TIMEOUT 240)
file(READ "${WORK}/plain.out" a)
file(READ "${WORK}/pmpi.out" b)
file(READ "${WORK}/pmpi.err" err2)
file(READ "${WORK}/plain.err" err1)
if(NOT rc1 EQUAL 0)
  message(FATAL_ERROR "plain run failed (${rc1}):\n${a}\n${err1}")
endif()
if(NOT rc2 EQUAL 0)
  message(FATAL_ERROR "run under libxfer_pmpi.so failed (${rc2}):\n${b}\n${err2}")
endif()
if(NOT a STREQUAL b)
  message(FATAL_ERROR "outputs differ:\n--- plain\n${a}\n--- libxfer_pmpi.so\n${b}")
endif()
string(REGEX MATCHALL "libxfer trace[^\n]*allgatherv? group" hits "${err2}")
list(LENGTH hits n)
if(n LESS 2)
  message(FATAL_ERROR "no sign of interception under LD_PRELOAD:\n${err2}")
endif()
if(err1 MATCHES "libxfer")
  message(FATAL_ERROR "libxfer output in the plain run:\n${err1}")
endif()
string(REGEX MATCH "wrong elements: 0" ok "${a}")
if(NOT ok)
  message(FATAL_ERROR "program reported wrong data:\n${a}")
endif()
message(STATUS "identical output with and without libxfer_pmpi.so; ${n} traced interceptions")
