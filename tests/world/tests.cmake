# SPDX-License-Identifier: BSD-3-Clause
# MPI_COMM_WORLD per component in an MPMD launch (libxfer_world.so, components[].mpi_world):
# unmodified programs that use MPI_COMM_WORLD throughout, in C and Fortran (use mpi, and use
# mpi_f08 where the compiler has it; and mpi4py where it is built for this MPI), each run
# standalone and as a component beside another by xfer-run, must print the same
# (tests/world/world_test.sh).
if(TARGET xfer_world AND TARGET xfer-run)
  # The ranks' sanitizer settings (xfer-run passes its environment on): under the sanitizers
  # the preloaded libxfer_world.so comes before the program's ASan runtime in the library list,
  # which the runtime refuses unless told the order is fine (verify_asan_link_order=0).
  set(world_env ${XFER_MPIEXEC_ENV} ${XFER_TEST_RANK_ENV})
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
    # use mpi_f08, when this compiler has the module
    include(CheckFortranSourceCompiles)
    check_fortran_source_compiles(
      "program t\n use mpi_f08\n call MPI_Init()\n call MPI_Finalize()\nend program t"
      XFER_HAVE_MPI_F08 SRC_EXT f90)
    if(XFER_HAVE_MPI_F08)
      add_executable(world_fprog08 world/world_prog_f08.f90)
      list(APPEND world_runs "fortran08=$<TARGET_FILE:world_fprog08>")
    endif()
  endif()
  foreach(run ${world_runs})
    string(REGEX REPLACE "=.*" "" lang "${run}")
    string(REGEX REPLACE "^[a-z0-9]+=" "" prog "${run}")
    add_test(NAME ${P}.world.${lang}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/world/world_test.sh $<TARGET_FILE:xfer-run>
                     ${XFER_MPIEXEC} ${CMAKE_CURRENT_BINARY_DIR}/world/${lang} ${prog})
    set_tests_properties(${P}.world.${lang} PROPERTIES LABELS "mpi;world" TIMEOUT 300
                         ENVIRONMENT "${world_env}")
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
