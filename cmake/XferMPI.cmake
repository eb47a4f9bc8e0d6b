# SPDX-License-Identifier: BSD-3-Clause
# The MPI library, found the CMake way (FindMPI), with Debian's flavour names as a convenience:
#  - MPI_C_COMPILER given (the MPI's C wrapper, e.g. -DMPI_C_COMPILER=/opt/mpi/bin/mpicc, and
#    MPIEXEC_EXECUTABLE for its launcher): that MPI, whatever it is;
#  - else XFER_MPI_FLAVOR=mpich|openmpi: that flavour's own wrapper and launcher, mpicc.mpich /
#    mpiexec.openmpi ... where they exist (Debian installs both flavours side by side, and
#    installing one flips the plain mpicc/mpiexec alternatives), else the plain ones;
#  - else FindMPI's own search: the mpicc in PATH.
# The flavour (mpich or openmpi: launcher flags, test settings, the pkg-config module) is then
# read from mpi.h; an MPICH-derived library counts as mpich. A flavour named that the wrapper
# does not give is an error.
set(XFER_MPI_FLAVOR "" CACHE STRING "MPI flavour: mpich | openmpi | empty (detect from mpi.h)")
set_property(CACHE XFER_MPI_FLAVOR PROPERTY STRINGS "" mpich openmpi)
if(XFER_MPI_FLAVOR AND NOT XFER_MPI_FLAVOR MATCHES "^(mpich|openmpi)$")
  message(FATAL_ERROR "XFER_MPI_FLAVOR must be mpich, openmpi or empty, got '${XFER_MPI_FLAVOR}'")
endif()
if(XFER_MPI_FLAVOR AND NOT MPI_C_COMPILER)
  find_program(XFER_MPICC mpicc.${XFER_MPI_FLAVOR})
  find_program(XFER_MPIEXEC mpiexec.${XFER_MPI_FLAVOR})
  if(XFER_MPICC)
    set(MPI_C_COMPILER "${XFER_MPICC}" CACHE FILEPATH "MPI C wrapper" FORCE)
  endif()
  if(XFER_MPIEXEC)
    set(MPIEXEC_EXECUTABLE "${XFER_MPIEXEC}" CACHE FILEPATH "MPI launcher" FORCE)
  endif()
endif()
find_package(MPI 3.1 REQUIRED COMPONENTS C)
if(NOT MPIEXEC_EXECUTABLE)
  message(FATAL_ERROR "libxfer: no MPI launcher found beside ${MPI_C_COMPILER}: set "
                      "MPIEXEC_EXECUTABLE")
endif()
set(XFER_MPICC "${MPI_C_COMPILER}" CACHE FILEPATH "the MPI C wrapper in use" FORCE)
set(XFER_MPIEXEC "${MPIEXEC_EXECUTABLE}" CACHE FILEPATH "the MPI launcher in use" FORCE)

# Which MPI is it? Its mpi.h says (Open MPI defines OPEN_MPI, MPICH and its derivatives
# MPICH_VERSION).
include(CheckSymbolExists)
set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
set(CMAKE_REQUIRED_QUIET ON)
unset(XFER_MPI_IS_OPENMPI CACHE)
unset(XFER_MPI_IS_MPICH CACHE)
check_symbol_exists(OPEN_MPI "mpi.h" XFER_MPI_IS_OPENMPI)
check_symbol_exists(MPICH_VERSION "mpi.h" XFER_MPI_IS_MPICH)
unset(CMAKE_REQUIRED_INCLUDES)
unset(CMAKE_REQUIRED_QUIET)
if(XFER_MPI_IS_OPENMPI)
  set(_flavour openmpi)
elseif(XFER_MPI_IS_MPICH)
  set(_flavour mpich)
else()
  set(_flavour mpich)
  message(WARNING "libxfer: ${MPI_C_COMPILER} is neither Open MPI nor MPICH-derived; its "
                  "launcher is driven as MPICH's (Hydra flags)")
endif()
if(XFER_MPI_FLAVOR AND NOT XFER_MPI_FLAVOR STREQUAL _flavour)
  message(FATAL_ERROR "libxfer: XFER_MPI_FLAVOR=${XFER_MPI_FLAVOR}, but ${MPI_C_COMPILER} is "
                      "${_flavour}: name the flavour's wrapper in MPI_C_COMPILER, or leave "
                      "XFER_MPI_FLAVOR empty")
endif()
# FindMPI takes the mpiexec beside the wrapper, and Debian's /usr/bin/mpiexec follows the
# alternatives, not the wrapper named: a launcher of the other flavour is replaced by this
# flavour's mpiexec.<flavour> when there is one, else refused.
execute_process(COMMAND ${XFER_MPIEXEC} --version OUTPUT_VARIABLE _ver ERROR_VARIABLE _ver
                TIMEOUT 20)
set(_launcher "")
if(_ver MATCHES "Open MPI|OpenRTE")
  set(_launcher openmpi)
elseif(_ver MATCHES "HYDRA")
  set(_launcher mpich)
endif()
if(_launcher AND NOT _launcher STREQUAL _flavour)
  get_filename_component(_bindir "${MPI_C_COMPILER}" DIRECTORY)
  find_program(_own_mpiexec mpiexec.${_flavour} HINTS ${_bindir} NO_CACHE)
  if(NOT _own_mpiexec)
    message(FATAL_ERROR "libxfer: ${MPI_C_COMPILER} is ${_flavour}, but the launcher "
                        "${XFER_MPIEXEC} is ${_launcher}'s: set MPIEXEC_EXECUTABLE to the "
                        "launcher of ${MPI_C_COMPILER}'s MPI")
  endif()
  message(STATUS "libxfer: ${XFER_MPIEXEC} is ${_launcher}'s launcher: using ${_own_mpiexec}")
  set(MPIEXEC_EXECUTABLE "${_own_mpiexec}" CACHE FILEPATH "MPI launcher" FORCE)
  set(XFER_MPIEXEC "${_own_mpiexec}" CACHE FILEPATH "the MPI launcher in use" FORCE)
endif()
set(XFER_MPI_FLAVOR ${_flavour} CACHE STRING
    "MPI flavour: mpich | openmpi | empty (detect from mpi.h)" FORCE)
# The MPICH device decides whether separately launched jobs can connect (ch4:ucx cannot).
set(XFER_MPICH_DEVICE "")
if(XFER_MPI_FLAVOR STREQUAL "mpich")
  execute_process(COMMAND ${XFER_MPIEXEC} -info OUTPUT_VARIABLE _info ERROR_QUIET)
  if(_info MATCHES "--with-device=([a-z0-9:]+)")
    set(XFER_MPICH_DEVICE "${CMAKE_MATCH_1}")
  endif()
endif()
message(STATUS "libxfer: MPI flavour ${XFER_MPI_FLAVOR} ${XFER_MPICH_DEVICE}")

# MPI-4 persistent collectives: libxfer_pmpi.so intercepts MPI_Allgather(v)_init where the
# library has them (MPICH 4 does, Open MPI 4.1 does not).
set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
set(CMAKE_REQUIRED_QUIET ON)
unset(XFER_MPI_HAS_ALLGATHER_INIT CACHE)
unset(XFER_MPI_HAS_ALLGATHERV_INIT CACHE)
check_symbol_exists(MPI_Allgather_init "mpi.h" XFER_MPI_HAS_ALLGATHER_INIT)
check_symbol_exists(MPI_Allgatherv_init "mpi.h" XFER_MPI_HAS_ALLGATHERV_INIT)
unset(CMAKE_REQUIRED_INCLUDES)
unset(CMAKE_REQUIRED_LIBRARIES)
unset(CMAKE_REQUIRED_QUIET)
set(XFER_MPI_PERSISTENT_COLL OFF)
if(XFER_MPI_HAS_ALLGATHER_INIT AND XFER_MPI_HAS_ALLGATHERV_INIT)
  set(XFER_MPI_PERSISTENT_COLL ON)
endif()
message(STATUS "libxfer: MPI persistent collectives (MPI_Allgather(v)_init): "
               "${XFER_MPI_PERSISTENT_COLL}")

# Launcher flags our tests and scripts need for this flavour on a small oversubscribed box.
# (Open MPI: pml ^cm. Every process otherwise probes the cm PML's fabrics (PSM, PSM2, OFI),
# about 0.2 s of each launch here, and then takes ob1 as before; the Open MPI MPMD workflow
# tests took 45 s instead of 65.)
if(XFER_MPI_FLAVOR STREQUAL "openmpi")
  set(XFER_MPIEXEC_PREFLAGS --oversubscribe --mca btl self,vader
      CACHE STRING "extra mpiexec flags for tests")
  set(XFER_MPIEXEC_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_pml=^cm")
  set(XFER_MPIEXEC_ENVFLAG -x)
  set(XFER_PC_MPI ompi-c)
else()
  set(XFER_MPIEXEC_PREFLAGS "" CACHE STRING "extra mpiexec flags for tests")
  set(XFER_MPIEXEC_ENV "")
  set(XFER_MPIEXEC_ENVFLAG -genv)
  set(XFER_PC_MPI mpich)
endif()
