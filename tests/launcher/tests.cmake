# SPDX-License-Identifier: BSD-3-Clause
# xfer-run, the workflow launcher (docs/launcher.md): command construction (--dry-run), option
# and file errors, --check, output prefixes, whole lines on a shared output, failure
# propagation, --walltime, forwarded signals, processes a launcher leaves behind, and a real MPI
# program in both launch modes. The driver
# (launcher/run_test.sh) checks exit codes, messages, timing and that no process outlives
# xfer-run. Components are shell commands unless MPI is the point.
if(TARGET xfer-run)
  # An ordinary MPI program (MPI only, no libxfer); the tests find it through PATH.
  add_executable(launcher_mpi_hello launcher/mpi_hello.c)
  target_link_libraries(launcher_mpi_hello PRIVATE MPI::MPI_C xfer_warnings)
  # Runs xfer-run with its output on a socket that keeps write boundaries (the lines test).
  add_executable(launcher_whole_lines launcher/whole_lines.c)
  target_link_libraries(launcher_whole_lines PRIVATE xfer_warnings)

  # The flavour's test flags reach xfer-run the way users pass theirs. OMPI_ALLOW_RUN_AS_ROOT*
  # are deliberately not set: xfer-run must set them itself. The sanitizer settings are: on this
  # oversubscribed machine xfer-run preloads the UCX yield helper into every process it starts
  # on MPICH (its own wrappers, instrumented, among them), and a preloaded library comes before
  # the ASan runtime, which it then accepts only with verify_asan_link_order=0.
  list(JOIN XFER_MPIEXEC_PREFLAGS " " xfer_launcher_flags)

  # xfer_launcher_test(<name> <case> [<mode>] [ENV VAR=value ...])
  function(xfer_launcher_test name kase)
    cmake_parse_arguments(L "" "" "ENV" ${ARGN})
    set(test ${P}.launcher.${name})
    add_test(NAME ${test}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launcher/run_test.sh ${kase}
                     $<TARGET_FILE:xfer-run> ${XFER_MPI_FLAVOR} ${XFER_MPIEXEC}
                     ${CMAKE_CURRENT_BINARY_DIR}/launcher/${name} ${L_UNPARSED_ARGUMENTS})
    set_tests_properties(${test} PROPERTIES LABELS "launcher" TIMEOUT 120
                         ENVIRONMENT "XFER_RUN_MPIEXEC_FLAGS=${xfer_launcher_flags};XFER_TEST_MPICH_DEVICE=${XFER_MPICH_DEVICE};${XFER_TEST_RANK_ENV};${L_ENV}")
  endfunction()

  xfer_launcher_test(errors errors)
  xfer_launcher_test(check check)
  xfer_launcher_test(leftover leftover)
  foreach(mode mpmd separate)
    xfer_launcher_test(dryrun.${mode} dryrun ${mode})
    xfer_launcher_test(prefix.${mode} prefix ${mode})
    xfer_launcher_test(fail.${mode} fail ${mode})
    xfer_launcher_test(walltime.${mode} walltime ${mode})
    xfer_launcher_test(signal.${mode} signal ${mode})
    # every line of xfer-run, xferd and the components reaches the shared output in one write
    xfer_launcher_test(lines.${mode} lines ${mode} $<TARGET_FILE_DIR:launcher_whole_lines>)
  endforeach()

  # Real MPI ranks: the oversubscription helper (MPICH) and the sanitizer settings pass
  # through xfer-run's environment to mpiexec and on to the ranks.
  set(rank_env ${XFER_TEST_RANK_ENV})
  if(XFER_TEST_PRELOAD)
    list(JOIN XFER_TEST_PRELOAD ":" preload)
    list(APPEND rank_env "LD_PRELOAD=${preload}")
  endif()
  # The UCX yield helper xfer-run preloads itself when MPICH ch4:ucx is oversubscribed.
  xfer_launcher_test(yield yield)
  # A Python component's interpreter (--check) and a launch that dies at import. The package's
  # Python is not instrumented: not under the sanitizers.
  if(TARGET xfer_python AND NOT XFER_ENABLE_SANITIZERS)
    xfer_launcher_test(python python ENV XFER_TEST_PYTHON=${XFER_PYTHON_EXECUTABLE}
                       XFER_TEST_PYPATH=${XFER_PYTHON_BUILD_DIR})
  endif()

  # Late and returning components (--without, --attach; launcher/late_test.sh): the refusals
  # and commands, --check's history and spill, shell components attached into a run, and a
  # real reader of a kept file channel attached after its sender ran.
  function(xfer_late_test kase)
    set(test ${P}.launcher.late.${kase})
    add_test(NAME ${test}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launcher/late_test.sh ${kase}
                     $<TARGET_FILE:xfer-run> ${XFER_MPI_FLAVOR}
                     ${CMAKE_CURRENT_BINARY_DIR}/launcher/late.${kase} ${ARGN})
    set_tests_properties(${test} PROPERTIES LABELS "launcher" TIMEOUT 180
                         ENVIRONMENT "XFER_RUN_MPIEXEC_FLAGS=${xfer_launcher_flags};XFER_TEST_MPICH_DEVICE=${XFER_MPICH_DEVICE};${rank_env}")
  endfunction()
  xfer_late_test(errors)
  xfer_late_test(check)
  xfer_late_test(attach)
  if(TARGET xfer-synth AND TARGET xfer_hdf5)
    xfer_late_test(file $<TARGET_FILE_DIR:xfer-synth>)
  endif()

  foreach(mode mpmd separate)
    xfer_launcher_test(mpi.${mode} mpi ${mode} $<TARGET_FILE_DIR:launcher_mpi_hello>
                       ENV ${rank_env})
    xfer_launcher_test(early.${mode} early ${mode} $<TARGET_FILE_DIR:launcher_mpi_hello>
                       ENV ${rank_env})
  endforeach()
endif()
