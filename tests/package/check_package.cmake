# SPDX-License-Identifier: BSD-3-Clause
# Install the build tree into a scratch prefix, then build a consumer with find_package(xfer)
# and another with pkg-config, and run both.
#   -DBUILD=<libxfer build dir> -DSRC=<tests/package> -DWORK=<scratch> -DCC=<mpi wrapper>
#   [-DPY=<python3> -DPYDIR=<its install dir, relative to the prefix>] [-DFC=<mpi Fortran wrapper>]
# With PY, the installed Python package must import (from the prefix, not the build tree) and
# the installed gray-scott-analysis-py start; with FC, a program using the installed Fortran
# module must build and run.
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
macro(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${ARGV}\nfailed (${rc}):\n${out}\n${err}")
  endif()
endmacro()
run(${CMAKE_COMMAND} --install "${BUILD}" --prefix "${WORK}/prefix")
run(${CMAKE_COMMAND} -S "${SRC}" -B "${WORK}/consumer" "-DCMAKE_PREFIX_PATH=${WORK}/prefix"
    "-DMPI_C_COMPILER=${CC}")
run(${CMAKE_COMMAND} --build "${WORK}/consumer")
set(ENV{LD_LIBRARY_PATH} "${WORK}/prefix/lib:$ENV{LD_LIBRARY_PATH}")
run("${WORK}/consumer/consumer")
message(STATUS "find_package: ${out}")
file(GLOB pcdir "${WORK}/prefix/lib*/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "${pcdir}")
run(pkg-config --cflags --libs xfer)
string(STRIP "${out}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(${CC} "${SRC}/consumer.c" -o "${WORK}/consumer-pc" ${flags})
run("${WORK}/consumer-pc")
message(STATUS "pkg-config: ${out}")
if(PY)
  set(ENV{PYTHONPATH} "${WORK}/prefix/${PYDIR}")
  run(${PY} ${SRC}/pyconsumer.py)
  if(NOT out MATCHES "^${WORK}/prefix/")
    message(FATAL_ERROR "xfer was imported from ${out}, not from the prefix")
  endif()
  message(STATUS "python: ${out}")
  run("${WORK}/prefix/bin/gray-scott-analysis-py" --help)
  message(STATUS "gray-scott-analysis-py --help: ok")
endif()
if(FC)
  file(GLOB libdir "${WORK}/prefix/lib*/libxfer_fortran.so")
  get_filename_component(libdir "${libdir}" DIRECTORY)
  run(${FC} -I${WORK}/prefix/include/xfer/fortran ${SRC}/fconsumer.f90 -o ${WORK}/fconsumer
      -L${libdir} -lxfer_fortran -lxfer)
  run(${WORK}/fconsumer)
  message(STATUS "fortran: ${out}")
endif()
