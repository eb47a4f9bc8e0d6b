# SPDX-License-Identifier: BSD-3-Clause
# MPI_COMM_WORLD per component in an MPMD launch (libxfer_world.so, components[].mpi_world):
# unmodified programs that use MPI_COMM_WORLD throughout, in C and Fortran (and mpi4py where it
# is built for this MPI), each run standalone and as a component beside another by xfer-run,
# must print the same (tests/world/world_test.sh).
if(TARGET xfer_world AND TARGET xfer-run)
  add_executable(world_prog world/world_prog.c)
  target_link_libraries(world_prog PRIVATE MPI::MPI_C xfer_warnings)
  set(world_runs "c=$<TARGET_FILE:world_prog>")
  # a handler set on MPI_COMM_WORLD is given MPI_COMM_WORLD (libxfer/src/world/world_errh.c)
  find_package(Threads REQUIRED)
  add_executable(world_errh world/world_errh.c)
  target_link_libraries(world_errh PRIVATE MPI::MPI_C xfer_warnings Threads::Threads)
  list(APPEND world_runs "errhandler=$<TARGET_FILE:world_errh>")
  if(XFER_HAVE_FORTRAN) # (the compiler is the flavour's mpif90)
    add_executable(world_fprog world/world_prog.f90)
    list(APPEND world_runs "fortran=$<TARGET_FILE:world_fprog>")
  endif()
  foreach(run ${world_runs})
    string(REGEX REPLACE "=.*" "" lang "${run}")
    string(REGEX REPLACE "^[a-z]+=" "" prog "${run}")
    add_test(NAME ${P}.world.${lang}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/world/world_test.sh $<TARGET_FILE:xfer-run>
                     ${XFER_MPIEXEC} ${CMAKE_CURRENT_BINARY_DIR}/world/${lang} ${prog})
    set_tests_properties(${P}.world.${lang} PROPERTIES LABELS "mpi;world" TIMEOUT 300
                         ENVIRONMENT "${XFER_MPIEXEC_ENV}")
  endforeach()
  # mpi4py: Debian's is built for Open MPI
  if(XFER_MPI_FLAVOR STREQUAL "openmpi")
    add_test(NAME ${P}.world.mpi4py
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/world/world_test.sh $<TARGET_FILE:xfer-run>
                     ${XFER_MPIEXEC} ${CMAKE_CURRENT_BINARY_DIR}/world/mpi4py /usr/bin/python3
                     ${CMAKE_CURRENT_SOURCE_DIR}/world/world_prog.py)
    set_tests_properties(${P}.world.mpi4py PROPERTIES LABELS "mpi;world;python" TIMEOUT 300
                         ENVIRONMENT "${XFER_MPIEXEC_ENV}")
  endif()
endif()
