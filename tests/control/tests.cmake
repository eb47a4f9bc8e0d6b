# SPDX-License-Identifier: BSD-3-Clause
# The control plane (docs/control-protocol.md): the message codec's unit test (no daemon), then,
# once in the MPICH tree since nothing here uses MPI, xferd against its malformed-message corpus,
# xferd's behaviour case by case, and the decoder under libFuzzer when clang is at hand.
add_executable(test_ctl_proto control/test_proto.c control/test_proto_limits.c
                              control/test_proto_tokens.c)
target_compile_definitions(test_ctl_proto PRIVATE _GNU_SOURCE)
target_link_libraries(test_ctl_proto PRIVATE libxfer::xfer xfer_warnings m)
add_test(NAME ${P}.control.proto COMMAND test_ctl_proto)
set_tests_properties(${P}.control.proto PROPERTIES LABELS "control;unit" TIMEOUT 60
                     ENVIRONMENT "${XFER_TEST_RANK_ENV}")

if(P STREQUAL "mpich" AND TARGET xferd) # not again in the mpich-ch3 tree
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(XFER_TEST_ZMQ REQUIRED IMPORTED_TARGET libzmq)
  # the fixture: an xferd of the test's own (fork/exec, ready file) and a raw DEALER socket
  add_library(xfer_ctl_fixture STATIC control/fixture.c)
  target_compile_definitions(xfer_ctl_fixture PUBLIC _GNU_SOURCE)
  target_link_libraries(xfer_ctl_fixture PUBLIC libxfer::xfer PkgConfig::XFER_TEST_ZMQ
                        PRIVATE xfer_warnings)
  add_executable(test_ctl_corpus control/test_corpus.c)
  # test_xferd's cases by stage, and the client helpers they share
  add_executable(test_ctl_xferd control/test_xferd.c control/xferd_client.c
                                control/xferd_sessions.c control/xferd_life.c control/xferd_steps.c
                                control/xferd_attach.c)
  foreach(target test_ctl_corpus test_ctl_xferd)
    target_link_libraries(${target} PRIVATE xfer_ctl_fixture xfer_warnings)
    add_dependencies(${target} xferd)
  endforeach()

  # every file of the corpus is answered as its name says; xferd keeps serving
  add_test(NAME ${P}.control.corpus
           COMMAND test_ctl_corpus --xferd $<TARGET_FILE:xferd>
                   --corpus ${CMAKE_CURRENT_SOURCE_DIR}/control/corpus)
  set_tests_properties(${P}.control.corpus PROPERTIES LABELS "control" TIMEOUT 120
                       ENVIRONMENT "${XFER_TEST_RANK_ENV}")
  foreach(c basic order auth liveness ranks exited stop sigterm restart endpoint curve ahead
                  flow attach)
    add_test(NAME ${P}.control.xferd.${c} COMMAND test_ctl_xferd ${c} --xferd $<TARGET_FILE:xferd>)
    set_tests_properties(${P}.control.xferd.${c} PROPERTIES LABELS "control" TIMEOUT 120
                         ENVIRONMENT "${XFER_TEST_RANK_ENV}")
  endforeach()

  # libFuzzer: the decoder built from its sources with clang, seeded with the corpus, run for a
  # bounded time; a crash, a sanitizer report or a round-trip difference fails the test. The
  # fuzzer carries its own ASan+UBSan: registered in the normal tree only, not again in the
  # sanitizer tree.
  # (the seconds: 10 in the suite, 300 in the sweeps' tree; config/tests.cmake sets them first)
  find_program(XFER_CLANG NAMES clang clang-16 clang-15 clang-14)
  if(XFER_SWEEP_TESTS)
    set(XFER_FUZZ_SECONDS 300 CACHE STRING "seconds each fuzz test runs its fuzzer")
  else()
    set(XFER_FUZZ_SECONDS 10 CACHE STRING "seconds each fuzz test runs its fuzzer")
  endif()
  if(XFER_CLANG AND NOT XFER_ENABLE_SANITIZERS)
    pkg_check_modules(XFER_FUZZ_MSGPACK REQUIRED msgpack)
    set(fuzz_bin ${CMAKE_CURRENT_BINARY_DIR}/fuzz_decode)
    set(ctl_dir ${PROJECT_SOURCE_DIR}/libxfer/src/control)
    set(fuzz_src ${CMAKE_CURRENT_SOURCE_DIR}/control/fuzz_decode.c
                 ${ctl_dir}/proto_msg.c ${ctl_dir}/proto_scan.c ${ctl_dir}/proto_codec.c
                 ${ctl_dir}/proto_schema.c ${ctl_dir}/proto_json.c ${ctl_dir}/proto_token.c
                 ${PROJECT_SOURCE_DIR}/libxfer/src/core/status.c
                 ${PROJECT_SOURCE_DIR}/libxfer/src/core/util.c)
    set(fuzz_inc -I${PROJECT_SOURCE_DIR}/libxfer/include)
    foreach(d IN LISTS MPI_C_INCLUDE_DIRS XFER_FUZZ_MSGPACK_INCLUDE_DIRS)
      list(APPEND fuzz_inc -I${d})
    endforeach()
    add_custom_command(OUTPUT ${fuzz_bin}
      COMMAND ${XFER_CLANG} -g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L
              -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
              ${fuzz_inc} ${fuzz_src} -o ${fuzz_bin}
              ${XFER_FUZZ_MSGPACK_LINK_LIBRARIES} ${MPI_C_LIBRARIES} -lm
      DEPENDS ${fuzz_src} ${PROJECT_SOURCE_DIR}/libxfer/include/xfer/control.h
              ${ctl_dir}/proto_int.h
      COMMENT "Building the control-message fuzzer with ${XFER_CLANG}" VERBATIM)
    add_custom_target(xfer_fuzz_decode ALL DEPENDS ${fuzz_bin})
    add_test(NAME ${P}.control.fuzz
             COMMAND ${CMAKE_COMMAND} -DFUZZER=${fuzz_bin}
                     -DCORPUS=${CMAKE_CURRENT_SOURCE_DIR}/control/corpus
                     -DWORK=${CMAKE_CURRENT_BINARY_DIR}/control-fuzz
                     -DSECONDS=${XFER_FUZZ_SECONDS} -DRUNS=20000000
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/control/run_fuzz.cmake)
    math(EXPR fuzz_timeout "${XFER_FUZZ_SECONDS} + 120")
    set_tests_properties(${P}.control.fuzz PROPERTIES LABELS "control;fuzz"
                         TIMEOUT ${fuzz_timeout})
  else()
    message(STATUS "libxfer: no clang: the control-message fuzz test is not registered")
  endif()
endif()
