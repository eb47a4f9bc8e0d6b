# SPDX-License-Identifier: BSD-3-Clause
# The workflow file parser: the unit test (examples, every key and default, round trips, error
# messages, docs/workflow.md), one test per invalid file of tests/configs and one per shipped
# example of config/. The unit test writes its scratch files into its working directory.
add_executable(test_config config/test_config.c config/test_config_errors.c
                           config/test_config_shapes.c
                           config/test_config_algos.c config/test_config_flow.c)
target_link_libraries(test_config PRIVATE xfer_internal)

set(XFER_CONFIG_SCRATCH ${CMAKE_CURRENT_BINARY_DIR}/config-scratch)
file(MAKE_DIRECTORY ${XFER_CONFIG_SCRATCH})

# (each test that runs the unit test a directory of its own: its scratch files have fixed names,
# and ctest -j runs config.unit beside valgrind.test_config)
file(MAKE_DIRECTORY ${XFER_CONFIG_SCRATCH}/unit ${XFER_CONFIG_SCRATCH}/valgrind)
add_test(NAME ${P}.config.unit COMMAND test_config --src ${PROJECT_SOURCE_DIR})
set_tests_properties(${P}.config.unit PROPERTIES LABELS "unit;config" TIMEOUT 300
                     WORKING_DIRECTORY ${XFER_CONFIG_SCRATCH}/unit)

# Each invalid file announces its error on its first line: "# expect: <line>:<col>: ...".
file(GLOB XFER_INVALID_CONFIGS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/configs/*.yaml)
foreach(f IN LISTS XFER_INVALID_CONFIGS)
  get_filename_component(name ${f} NAME_WE)
  add_test(NAME ${P}.config.invalid.${name} COMMAND test_config --invalid ${f})
  set_tests_properties(${P}.config.invalid.${name} PROPERTIES LABELS "unit;config" TIMEOUT 60)
endforeach()

foreach(name coupled full_duplex chain fanout fanin ring)
  set(f ${PROJECT_SOURCE_DIR}/config/${name}.yaml)
  add_test(NAME ${P}.config.example.${name} COMMAND test_config --valid ${f})
  set_tests_properties(${P}.config.example.${name} PROPERTIES LABELS "unit;config" TIMEOUT 60
                       WORKING_DIRECTORY ${XFER_CONFIG_SCRATCH})
endforeach()

# The MPI side (2 ranks): xfer_record_mpi_type (extent, size, an array of records sent through
# it).
add_executable(test_config_mpi config/test_config_mpi.c)
target_link_libraries(test_config_mpi PRIVATE libxfer::xfer xfer_warnings)
xfer_mpi_test(config.mpi.np2 NP 2 LABELS config
              COMMAND $<TARGET_FILE:test_config_mpi>)

# xfer-run --check takes joined, variable and record datasets over either transport: a note for
# what it cannot bound (a variable shape; joined rows without max_rows), max_rows in the memory
# estimate when set; --print-config prints them in the file's words.
if(TARGET xfer-run)
  set(f ${XFER_CONFIG_SCRATCH}/run-shapes.yaml)
  file(WRITE ${f} "workflow: w
components: [{name: a, nprocs: 1, cmd: [a]}, {name: b, nprocs: 1, cmd: [b]}]
channels:
  - name: c
    from: a
    to: b
    datasets:
      - {name: p, type: {id: int64, pos: [float64, 3]}, dims: [joined], max_rows: 100}
      - {name: g, type: int8, dims: [variable, 4]}
      - {name: q, type: float32, dims: [joined, 3]}
")
  set(re_ok "run-shapes.yaml: ok .*run-shapes.yaml:9:9: note: channel c: dataset g has a variable shape: its extents are the senders. each step, so it is not counted below.*run-shapes.yaml:10:9: note: channel c: dataset q is joined")
  foreach(tp stream file)
    add_test(NAME ${P}.config.shapes.xfer_run_${tp}
             COMMAND ${CMAKE_COMMAND}
                     "-DCMD=$<TARGET_FILE:xfer-run>;--check;--transport;${tp};${f}"
                     "-DEXPECT=${re_ok}" "-DREJECT=dataset p (is|has)|error" -DMAXTIME=60
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/support/expect_pass.cmake)
    set_tests_properties(${P}.config.shapes.xfer_run_${tp} PROPERTIES LABELS "unit;config"
                         TIMEOUT 60)
  endforeach()
  add_test(NAME ${P}.config.shapes.xfer_run_print
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:xfer-run>;--print-config;${f}"
                   "-DEXPECT=type: {id: int64, pos: .float64, 3.}.        dims: .joined."
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/support/expect_pass.cmake)
  set_tests_properties(${P}.config.shapes.xfer_run_print PROPERTIES LABELS "unit;config"
                       TIMEOUT 60)

  # policy latest: the sender's two holds counted per rank (a 64 x 64 float64 step, 32 KiB, over
  # a's 4 ranks: 16 KiB each)
  set(f ${XFER_CONFIG_SCRATCH}/latest-check.yaml)
  file(WRITE ${f} "workflow: w
components: [{name: a, nprocs: 4, cmd: [a]}, {name: b, nprocs: 2, cmd: [b]}]
channels:
  - {name: c, from: a, to: b, policy: latest, datasets: [{name: v, type: float64, dims: [64, 64]}]}
")
  add_test(NAME ${P}.config.latest.xfer_run_check
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:xfer-run>;--check;${f}"
                   "-DEXPECT=latest-check.yaml: channel c, a: policy latest: each rank of a also holds up to 2 copies of its own blocks of a step .16.0 KiB on each of its 4 ranks when the step is split evenly."
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/support/expect_pass.cmake)
  set_tests_properties(${P}.config.latest.xfer_run_check PROPERTIES LABELS "unit;config"
                       TIMEOUT 60)

  # joined datasets on a file channel: accepted. parts (max_rows 1000000 rows of 3 float64, 24
  # bytes each) counts as 24000000 bytes a step, 6000000 for each of b's 4 ranks under rows,
  # beside 256 bytes of grid (64 each); ids has no bound: a note says so, and it is not counted.
  # --transport stream takes them too.
  set(f ${XFER_CONFIG_SCRATCH}/joined-check.yaml)
  file(WRITE ${f} "workflow: w
components: [{name: a, nprocs: 2, cmd: [a]}, {name: b, nprocs: 4, cmd: [b]}]
channels:
  - name: c
    from: a
    to: b
    transport: file
    selection: rows
    datasets:
      - {name: parts, type: float64, dims: [joined, 3], max_rows: 1000000}
      - {name: ids, type: int64, dims: [joined]}
      - {name: grid, type: int8, dims: [64, 4]}
")
  set(note "joined-check.yaml:11:9: note: channel c: dataset ids is joined: a step's rows are unbounded without max_rows, so they are not counted below")
  set(est "joined-check.yaml: channel c, a -> b: a step is 22.9 MiB; each of the 4 ranks of b holds up to 5.7 MiB of it, 17.2 MiB in its 3 slots .max_in_flight_steps 2., plus its own copy .joined datasets at their max_rows. .joined datasets without max_rows not counted.")
  add_test(NAME ${P}.config.joined.xfer_run_check
           COMMAND ${CMAKE_COMMAND} "-DCMD=$<TARGET_FILE:xfer-run>;--check;${f}"
                   "-DEXPECT=joined-check.yaml: ok .*${note}.*${est}" "-DREJECT=dataset parts is"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/support/expect_pass.cmake)
  set_tests_properties(${P}.config.joined.xfer_run_check PROPERTIES LABELS "unit;config"
                       TIMEOUT 60)
  add_test(NAME ${P}.config.joined.xfer_run_stream
           COMMAND ${CMAKE_COMMAND}
                   "-DCMD=$<TARGET_FILE:xfer-run>;--check;--transport;stream;${f}"
                   "-DEXPECT=joined-check.yaml: ok .*${note}"
                   "-DREJECT=this build carries" -DMAXTIME=60
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/support/expect_pass.cmake)
  set_tests_properties(${P}.config.joined.xfer_run_stream PROPERTIES LABELS "unit;config"
                       TIMEOUT 60)
endif()

# Out of memory on every allocation of a load in turn (malloc, calloc and realloc wrapped at link
# time), for every shipped and invalid file; under valgrind below.
add_executable(test_config_oom config/test_config_oom.c)
target_link_libraries(test_config_oom PRIVATE xfer_internal)
target_link_options(test_config_oom PRIVATE -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc)
file(GLOB XFER_SHIPPED_CONFIGS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/config/*.yaml)
set(XFER_CONFIG_OOM_FILES ${CMAKE_CURRENT_SOURCE_DIR}/config/corpus/every_key.yaml
    ${XFER_SHIPPED_CONFIGS} ${XFER_INVALID_CONFIGS})
add_test(NAME ${P}.config.oom COMMAND test_config_oom ${XFER_CONFIG_OOM_FILES})
set_tests_properties(${P}.config.oom PROPERTIES LABELS "unit;config" TIMEOUT 300)

# Every error path of the parser under memcheck: the unit test loads all the invalid files.
find_program(XFER_VALGRIND valgrind)
if(XFER_VALGRIND AND NOT XFER_ENABLE_SANITIZERS)
  add_test(NAME ${P}.valgrind.test_config
           COMMAND ${XFER_VALGRIND} -q --error-exitcode=99 --leak-check=full
                   --errors-for-leak-kinds=definite,indirect --num-callers=50
                   --suppressions=${CMAKE_CURRENT_SOURCE_DIR}/support/valgrind.supp
                   $<TARGET_FILE:test_config> --src ${PROJECT_SOURCE_DIR})
  set_tests_properties(${P}.valgrind.test_config PROPERTIES LABELS "valgrind;unit;config"
                       TIMEOUT 600 WORKING_DIRECTORY ${XFER_CONFIG_SCRATCH}/valgrind)
  add_test(NAME ${P}.valgrind.test_config_oom
           COMMAND ${XFER_VALGRIND} -q --error-exitcode=99 --leak-check=full
                   --errors-for-leak-kinds=definite,indirect --num-callers=50
                   --suppressions=${CMAKE_CURRENT_SOURCE_DIR}/support/valgrind.supp
                   $<TARGET_FILE:test_config_oom> ${XFER_CONFIG_OOM_FILES})
  set_tests_properties(${P}.valgrind.test_config_oom PROPERTIES LABELS "valgrind;unit;config"
                       TIMEOUT 900)
endif()

# libFuzzer: the loader (xfer_config_load_buffer) built from its sources with clang, seeded with
# every shipped and invalid workflow file and the regression seeds of config/corpus, run for a
# bounded time; a crash, a sanitizer report, a leak, a slow input or a broken promise of the
# loader (fuzz_load.c) fails the test. The rest of the library (the algorithm registry) comes
# uninstrumented from xfer_internal. Like control.fuzz: the fuzzer carries its own ASan+UBSan,
# so it is registered in the normal tree only, and once (it does not depend on the flavour).
# The suite replays the seeds and fuzzes 10 s beyond them; the search itself is a soak, 5 minutes
# in the sweeps' tree (scripts/sweeps.sh, -DXFER_SWEEP_TESTS=ON: label fuzz).
find_program(XFER_CLANG NAMES clang clang-16 clang-15 clang-14)
if(XFER_SWEEP_TESTS)
  set(XFER_FUZZ_SECONDS 300 CACHE STRING "seconds each fuzz test runs its fuzzer")
else()
  set(XFER_FUZZ_SECONDS 10 CACHE STRING "seconds each fuzz test runs its fuzzer")
endif()
if(XFER_CLANG AND NOT XFER_ENABLE_SANITIZERS AND XFER_FLAVOUR_FREE_TESTS)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(XFER_FUZZ_LIBS REQUIRED yaml-0.1 libzmq msgpack)
  set(fuzz_bin ${CMAKE_CURRENT_BINARY_DIR}/fuzz_load)
  set(fuzz_src ${CMAKE_CURRENT_SOURCE_DIR}/config/fuzz_load.c
               ${PROJECT_SOURCE_DIR}/libxfer/src/config/config.c
               ${PROJECT_SOURCE_DIR}/libxfer/src/config/cfg_parse.c
               ${PROJECT_SOURCE_DIR}/libxfer/src/config/cfg_reader.c
               ${PROJECT_SOURCE_DIR}/libxfer/src/config/cfg_print.c
               ${PROJECT_SOURCE_DIR}/libxfer/src/config/cfg_values.c
               ${PROJECT_SOURCE_DIR}/libxfer/src/config/cfg_record.c
               ${PROJECT_SOURCE_DIR}/libxfer/src/config/record.c
               ${PROJECT_SOURCE_DIR}/libxfer/src/core/status.c
               ${PROJECT_SOURCE_DIR}/libxfer/src/core/util.c)
  set(fuzz_inc -I${PROJECT_SOURCE_DIR}/libxfer/include -I${PROJECT_BINARY_DIR}/libxfer/include)
  foreach(d IN LISTS MPI_C_INCLUDE_DIRS XFER_FUZZ_LIBS_INCLUDE_DIRS)
    list(APPEND fuzz_inc -I${d})
  endforeach()
  add_custom_command(OUTPUT ${fuzz_bin}
    COMMAND ${XFER_CLANG} -g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -DXFER_BUILDING_LIBRARY
            -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
            ${fuzz_inc} ${fuzz_src} $<TARGET_FILE:xfer_internal> -o ${fuzz_bin}
            ${XFER_FUZZ_LIBS_LINK_LIBRARIES} ${MPI_C_LIBRARIES} -lpthread -lm
    DEPENDS ${fuzz_src} xfer_internal ${PROJECT_SOURCE_DIR}/libxfer/include/xfer/config.h
            ${PROJECT_SOURCE_DIR}/libxfer/src/config/cfg.h
            ${PROJECT_SOURCE_DIR}/libxfer/src/core/core.h
    COMMENT "Building the workflow-file fuzzer with ${XFER_CLANG}" VERBATIM)
  add_custom_target(xfer_fuzz_load ALL DEPENDS ${fuzz_bin})
  set(seeds ${PROJECT_SOURCE_DIR}/config ${CMAKE_CURRENT_SOURCE_DIR}/configs
            ${CMAKE_CURRENT_SOURCE_DIR}/launcher ${CMAKE_CURRENT_SOURCE_DIR}/config/corpus)
  list(JOIN seeds "," seeds)
  add_test(NAME ${P}.config.fuzz
           COMMAND ${CMAKE_COMMAND} -DFUZZER=${fuzz_bin} -DSEEDS=${seeds}
                   -DDICT=${CMAKE_CURRENT_SOURCE_DIR}/config/fuzz_load.dict
                   -DWORK=${CMAKE_CURRENT_BINARY_DIR}/config-fuzz
                   -DSECONDS=${XFER_FUZZ_SECONDS} -DRUNS=20000000
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/config/run_fuzz.cmake)
  math(EXPR fuzz_timeout "${XFER_FUZZ_SECONDS} + 120")
  set_tests_properties(${P}.config.fuzz PROPERTIES LABELS "config;fuzz" TIMEOUT ${fuzz_timeout})
elseif(NOT XFER_CLANG)
  message(STATUS "libxfer: no clang: the workflow-file fuzz test is not registered")
endif()
