# SPDX-License-Identifier: BSD-3-Clause
# Build programs against libxfer as a user outside its tree does, and run them:
#   MODE=build   : against the build tree as it is (-Dxfer_DIR=<build>, PKG_CONFIG_PATH=<build>);
#   MODE=install : against `cmake --install` into a scratch prefix (CMAKE_PREFIX_PATH, and
#                  PKG_CONFIG_PATH=<prefix>/lib/pkgconfig with the rpath the docs say to add).
# Each way: the C consumer with find_package(xfer) and with pkg-config xfer, and with FC the
# Fortran one with libxfer::xfer_fortran and pkg-config xfer-fortran; each runs on 2 ranks and
# must report the libxfer of the build tree or of the prefix, found through its own rpath.
#   -DMODE=build|install -DBUILD=<libxfer build dir> -DSRC=<tests/package> -DWORK=<scratch>
#   -DCC=<MPI C wrapper> -DMPIEXEC=<its launcher> [-DMPIEXEC_PREFLAGS=a|b|c] [-DFC=<MPI Fortran
#   wrapper>] [-DPY=<python3> -DPYDIR=<its install dir, relative to the prefix>]
# With PY (install), the installed Python package must import from the prefix and the installed
# gray-scott-analysis-py start.
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
macro(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${ARGV}\nfailed (${rc}):\n${out}\n${err}")
  endif()
endmacro()
string(REPLACE "|" ";" MPIEXEC_PREFLAGS "${MPIEXEC_PREFLAGS}")

if(MODE STREQUAL "install")
  run(${CMAKE_COMMAND} --install "${BUILD}" --prefix "${WORK}/prefix")
  file(GLOB lib "${WORK}/prefix/lib*/libxfer.so")
  file(GLOB pcdir "${WORK}/prefix/lib*/pkgconfig")
  set(find_args "-DCMAKE_PREFIX_PATH=${WORK}/prefix")
elseif(MODE STREQUAL "build")
  file(GLOB_RECURSE lib "${BUILD}/libxfer/libxfer.so")
  set(pcdir "${BUILD}")
  set(find_args "-Dxfer_DIR=${BUILD}")
else()
  message(FATAL_ERROR "MODE must be build or install, not '${MODE}'")
endif()
if(NOT EXISTS "${lib}")
  message(FATAL_ERROR "no libxfer.so to build against (${MODE}: '${lib}')")
endif()
file(REAL_PATH "${lib}" want)

# Run <exe> on 2 ranks; its output must hold <regex> and, for the C consumer, name the libxfer
# expected (compared as real paths: the rpath may say lib/pkgconfig/../../lib).
function(check what exe regex)
  run(${MPIEXEC} ${MPIEXEC_PREFLAGS} -n 2 ${exe})
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "${what}: expected '${regex}' in:\n${out}\n${err}")
  endif()
  if(out MATCHES "libxfer [^ ]+ \\([a-z]+\\) from ([^\n]+)\n")
    file(REAL_PATH "${CMAKE_MATCH_1}" got)
    if(NOT got STREQUAL want)
      message(FATAL_ERROR "${what} loaded ${CMAKE_MATCH_1}, not ${lib} (LD_LIBRARY_PATH: "
                          "$ENV{LD_LIBRARY_PATH})")
    endif()
  endif()
  string(STRIP "${out}" out)
  message(STATUS "${MODE}, ${what}:\n${out}")
endfunction()
set(c_ok "xfer_allgather_inter on 2 ranks: ok")
set(f_ok "the Fortran module xfer on 2 ranks: ok")

# ---- CMake: find_package(xfer)
set(cm_args "-DMPI_C_COMPILER=${CC}")
if(FC)
  list(APPEND cm_args -DFORTRAN=ON "-DCMAKE_Fortran_COMPILER=${FC}")
endif()
run(${CMAKE_COMMAND} -S "${SRC}" -B "${WORK}/cmake" ${find_args} ${cm_args})
run(${CMAKE_COMMAND} --build "${WORK}/cmake")
check("find_package, C" "${WORK}/cmake/consumer" "${c_ok}")
if(FC)
  check("find_package, Fortran" "${WORK}/cmake/fconsumer" "${f_ok}")
endif()

# ---- pkg-config: the build tree's files carry the rpath; an install's do not, so its users add
# -Wl,-rpath,$(pkg-config --variable=libdir xfer) (or set LD_LIBRARY_PATH).
set(ENV{PKG_CONFIG_PATH} "${pcdir}")
set(rpath "")
if(MODE STREQUAL "install")
  run(pkg-config --variable=libdir xfer)
  string(STRIP "${out}" libdir)
  set(rpath "-Wl,-rpath,${libdir}")
endif()
run(pkg-config --cflags --libs xfer)
separate_arguments(flags UNIX_COMMAND "${out}")
run(${CC} "${SRC}/consumer.c" -o "${WORK}/consumer-pc" ${flags} ${rpath})
check("pkg-config, C" "${WORK}/consumer-pc" "${c_ok}")
if(FC)
  run(pkg-config --cflags --libs xfer-fortran)
  separate_arguments(flags UNIX_COMMAND "${out}")
  run(${FC} "${SRC}/fconsumer.f90" -o "${WORK}/fconsumer-pc" ${flags} ${rpath})
  check("pkg-config, Fortran" "${WORK}/fconsumer-pc" "${f_ok}")
endif()

# ---- the Python package installed by CMake (pip: tests/package/check_pip.cmake)
if(PY AND MODE STREQUAL "install")
  set(ENV{PYTHONPATH} "${WORK}/prefix/${PYDIR}")
  run(${PY} ${SRC}/pyconsumer.py)
  if(NOT out MATCHES "^${WORK}/prefix/")
    message(FATAL_ERROR "xfer was imported from ${out}, not from the prefix")
  endif()
  message(STATUS "python: ${out}")
  run("${WORK}/prefix/bin/gray-scott-analysis-py" --help)
  message(STATUS "gray-scott-analysis-py --help: ok")
endif()
