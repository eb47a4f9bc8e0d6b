# SPDX-License-Identifier: BSD-3-Clause
# The Fortran module xfer (bindings/fortran, docs/bindings.md), compiled with the flavour's MPI
# Fortran wrapper: mpif90 beside the C wrapper (mpicc.mpich -> mpif90.mpich, .../bin/mpicc ->
# .../bin/mpif90), or CMAKE_Fortran_COMPILER when given. XFER_FORTRAN: AUTO builds it when that
# compiler works, ON requires it, OFF skips it. Sets XFER_HAVE_FORTRAN.
set(XFER_FORTRAN "AUTO" CACHE STRING "Build the Fortran module: AUTO, ON or OFF")
set_property(CACHE XFER_FORTRAN PROPERTY STRINGS AUTO ON OFF)
set(XFER_HAVE_FORTRAN OFF)
if(NOT XFER_FORTRAN STREQUAL "OFF")
  if(NOT CMAKE_Fortran_COMPILER AND XFER_MPICC)
    get_filename_component(_dir "${XFER_MPICC}" DIRECTORY)
    get_filename_component(_name "${XFER_MPICC}" NAME)
    string(REPLACE "mpicc" "mpif90" _fname "${_name}")
    if(EXISTS "${_dir}/${_fname}")
      set(CMAKE_Fortran_COMPILER "${_dir}/${_fname}")
    endif()
  endif()
  if(CMAKE_Fortran_COMPILER)
    include(CheckLanguage)
    check_language(Fortran)
  endif()
  if(CMAKE_Fortran_COMPILER)
    enable_language(Fortran)
    set(XFER_HAVE_FORTRAN ON)
    message(STATUS "libxfer: Fortran module with ${CMAKE_Fortran_COMPILER}")
  elseif(XFER_FORTRAN STREQUAL "ON")
    message(FATAL_ERROR "libxfer: XFER_FORTRAN=ON, but no working MPI Fortran compiler (the "
                        "flavour's mpif90; Debian: apt-get install gfortran)")
  else()
    message(STATUS "libxfer: the Fortran module is skipped: no MPI Fortran compiler "
                   "(Debian: apt-get install gfortran)")
  endif()
endif()
