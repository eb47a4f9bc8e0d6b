# SPDX-License-Identifier: BSD-3-Clause
# Run the workflow-file fuzzer (tests/config/tests.cmake) on a scratch corpus: every YAML file
# of the SEEDS directories (the shipped configs, the invalid ones, the regression seeds).
#   cmake -DFUZZER=... -DSEEDS=dir,dir,... -DDICT=file -DWORK=dir -DSECONDS=n -DRUNS=n
#         -P run_fuzz.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus)
string(REPLACE "," ";" dirs "${SEEDS}")
set(n 0)
foreach(d IN LISTS dirs)
  file(GLOB seeds ${d}/*.yaml)
  foreach(s IN LISTS seeds)
    # one flat directory: the names of different directories may clash
    get_filename_component(base ${s} NAME)
    math(EXPR n "${n} + 1")
    configure_file(${s} ${WORK}/corpus/${n}-${base} COPYONLY)
  endforeach()
endforeach()
if(n LESS 50)
  message(FATAL_ERROR "only ${n} seeds in ${SEEDS}")
endif()
execute_process(COMMAND ${FUZZER} -max_total_time=${SECONDS} -runs=${RUNS} -timeout=10
                        -rss_limit_mb=2048 -max_len=16384 -dict=${DICT} -print_final_stats=1
                        -artifact_prefix=${WORK}/ ${WORK}/corpus
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fuzz_load failed (${rc}): the input that broke it is in ${WORK}")
endif()
