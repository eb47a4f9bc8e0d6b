# SPDX-License-Identifier: BSD-3-Clause
# Run the control-message fuzzer (tests/control/tests.cmake) on a scratch copy of the corpus.
#   cmake -DFUZZER=... -DCORPUS=dir -DWORK=dir -DSECONDS=n -DRUNS=n -P run_fuzz.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus)
file(GLOB seeds ${CORPUS}/*.bin)
file(COPY ${seeds} DESTINATION ${WORK}/corpus)
execute_process(COMMAND ${FUZZER} -max_total_time=${SECONDS} -runs=${RUNS} -timeout=10
                        -rss_limit_mb=2048 -max_len=70000 -print_final_stats=1
                        -artifact_prefix=${WORK}/ ${WORK}/corpus
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fuzz_decode failed (${rc}): the input that broke it is in ${WORK}")
endif()
