# SPDX-License-Identifier: BSD-3-Clause
# The random-workflow and fault-injection tester (tools/xfer-chaos, docs/testing.md): a fixed
# list of seeds, each a generated workflow of xfer-synth components (perhaps with a fault) run
# through xfer-run and checked against the oracle: it ends, every element is right, no
# committed step is lost, every failure names the failed component. About 5 minutes per MPI on
# a 2-core machine; the soak (scripts/soak.sh) runs thousands. Included by runtime/tests.cmake.
if(NOT TARGET xfer-run OR NOT TARGET xferd)
  return()
endif()
find_package(Python3 COMPONENTS Interpreter)
get_property(chaos_codecs GLOBAL PROPERTY XFER_CODEC_DEFS)
list(LENGTH chaos_codecs chaos_ncodecs)
set(XFER_CODEC_DEFS_ALL OFF)
if(chaos_ncodecs EQUAL 3) # lz4, zstd and zfp
  set(XFER_CODEC_DEFS_ALL ON)
endif()
if(NOT Python3_Interpreter_FOUND)
  message(STATUS "runtime: the chaos batch needs python3; skipped")
  return()
endif()
add_test(NAME ${P}.chaos.batch
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_BINARY_DIR}/tools/xfer-chaos
                 --batch ${CMAKE_CURRENT_SOURCE_DIR}/runtime/chaos-seeds.txt --flows none
                 --bindir ${CMAKE_BINARY_DIR}/tools)
set_tests_properties(${P}.chaos.batch PROPERTIES TIMEOUT 900 LABELS "mpi;chaos"
                     RUN_SERIAL TRUE ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
# Two seeds under a tight control.timeout_ms (2.5 s): a component comes to a channel only after
# forming those before it, and on 2 cores a channel's setup between separately launched jobs
# takes seconds while a third job spins in MPI_Comm_accept. Seed 5 failed 8 runs of 8 (exit 124,
# "no peer within 2500 ms"), and seed 29 once in the batch at 8 s, while the wait for a channel's
# peer was a flat control.timeout_ms; it is that times the channel's place in the workflow
# (docs/runtime.md, Joining).
if(XFER_MPI_FLAVOR STREQUAL "openmpi")
  add_test(NAME ${P}.chaos.formbound
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_BINARY_DIR}/tools/xfer-chaos --seeds 5,29
                   --flows none --control-timeout-ms 2500 --bindir ${CMAKE_BINARY_DIR}/tools)
  set_tests_properties(${P}.chaos.formbound PROPERTIES TIMEOUT 300 LABELS "mpi;chaos"
                       RUN_SERIAL TRUE ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
endif()
# Seeds whose workflows draw flow policies (policy latest, strides, readers slower than their
# senders, a reader killed under on_reader_loss: continue): the oracle accepts steps latest
# drops and a stride skips, nothing else.
add_test(NAME ${P}.chaos.flows
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_BINARY_DIR}/tools/xfer-chaos
                 --batch ${CMAKE_CURRENT_SOURCE_DIR}/runtime/chaos-flow-seeds.txt --flows always
                 --bindir ${CMAKE_BINARY_DIR}/tools)
set_tests_properties(${P}.chaos.flows PROPERTIES TIMEOUT 600 LABELS "mpi;chaos"
                     RUN_SERIAL TRUE ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
# Seeds with every dataset's compression drawn (xfer-chaos --compress mix: none, lz4, zstd, auto,
# zfp for float types, on workflows of every shape, fault and launch; docs/runtime.md,
# "Compression"): the oracle as for the batch, xfer-synth checking zfp's elements within the
# tolerance and that compressed datasets came as frames.
if(XFER_CODEC_DEFS_ALL)
  add_test(NAME ${P}.chaos.compress
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_BINARY_DIR}/tools/xfer-chaos
                   --batch ${CMAKE_CURRENT_SOURCE_DIR}/runtime/chaos-zip-seeds.txt --flows mix
                   --compress mix --bindir ${CMAKE_BINARY_DIR}/tools)
  set_tests_properties(${P}.chaos.compress PROPERTIES TIMEOUT 600 LABELS "mpi;chaos"
                       RUN_SERIAL TRUE ENVIRONMENT "${XFER_MPIEXEC_ENV};${RT_SEP_ENV}")
endif()
# The oracle itself, on made-up runs (no MPI): a good run passes; a missing step, wrong data,
# a hang, a crash, a missing result, a message that does not name the failed component and a
# committed step lost after a kill are each caught.
if(XFER_FLAVOUR_FREE_TESTS)
  add_test(NAME ${P}.chaos.oracle
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_BINARY_DIR}/tools/xfer-chaos --self-test)
  set_tests_properties(${P}.chaos.oracle PROPERTIES TIMEOUT 60 LABELS "chaos")
endif()
