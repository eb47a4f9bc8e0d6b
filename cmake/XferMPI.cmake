# SPDX-License-Identifier: BSD-3-Clause
# Select the MPI flavour explicitly. Debian installs MPICH and Open MPI side by side and
# installing one flips the plain mpicc/mpiexec alternatives, so we always name the flavour's
# own wrapper and launcher (mpicc.mpich / mpiexec.openmpi ...).
set(XFER_MPI_FLAVOR "mpich" CACHE STRING "MPI flavour to build against: mpich | openmpi")
set_property(CACHE XFER_MPI_FLAVOR PROPERTY STRINGS mpich openmpi)

if(XFER_MPI_FLAVOR STREQUAL "mpich")
  find_program(XFER_MPICC mpicc.mpich REQUIRED)
  find_program(XFER_MPIEXEC mpiexec.mpich REQUIRED)
elseif(XFER_MPI_FLAVOR STREQUAL "openmpi")
  find_program(XFER_MPICC mpicc.openmpi REQUIRED)
  find_program(XFER_MPIEXEC mpiexec.openmpi REQUIRED)
else()
  message(FATAL_ERROR "XFER_MPI_FLAVOR must be mpich or openmpi, got '${XFER_MPI_FLAVOR}'")
endif()

set(MPI_C_COMPILER "${XFER_MPICC}" CACHE FILEPATH "MPI C wrapper of the chosen flavour" FORCE)
set(MPIEXEC_EXECUTABLE "${XFER_MPIEXEC}" CACHE FILEPATH "launcher of the chosen flavour" FORCE)
find_package(MPI 3.1 REQUIRED COMPONENTS C)
# The MPICH device decides whether separately launched jobs can connect (ch4:ucx cannot).
set(XFER_MPICH_DEVICE "")
if(XFER_MPI_FLAVOR STREQUAL "mpich")
  execute_process(COMMAND ${XFER_MPIEXEC} -info OUTPUT_VARIABLE _info ERROR_QUIET)
  if(_info MATCHES "--with-device=([a-z0-9:]+)")
    set(XFER_MPICH_DEVICE "${CMAKE_MATCH_1}")
  endif()
endif()
message(STATUS "libxfer: MPI flavour ${XFER_MPI_FLAVOR} ${XFER_MPICH_DEVICE}")

# Launcher flags our tests and scripts need for this flavour on a small oversubscribed box.
if(XFER_MPI_FLAVOR STREQUAL "openmpi")
  set(XFER_MPIEXEC_PREFLAGS --oversubscribe --mca btl self,vader
      CACHE STRING "extra mpiexec flags for tests")
  set(XFER_MPIEXEC_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
  set(XFER_MPIEXEC_ENVFLAG -x)
  set(XFER_PC_MPI ompi-c)
else()
  set(XFER_MPIEXEC_PREFLAGS "" CACHE STRING "extra mpiexec flags for tests")
  set(XFER_MPIEXEC_ENV "")
  set(XFER_MPIEXEC_ENVFLAG -genv)
  set(XFER_PC_MPI mpich)
endif()
