# SPDX-License-Identifier: BSD-3-Clause
# The workflow file parser: the unit test (examples, every key and default, round trips, error
# messages, docs/workflow.md), one test per invalid file of tests/configs and one per shipped
# example of config/. The unit test writes its scratch files into its working directory.
add_executable(test_config config/test_config.c)
target_link_libraries(test_config PRIVATE xfer_internal)

set(XFER_CONFIG_SCRATCH ${CMAKE_CURRENT_BINARY_DIR}/config-scratch)
file(MAKE_DIRECTORY ${XFER_CONFIG_SCRATCH})

add_test(NAME ${P}.config.unit COMMAND test_config --src ${PROJECT_SOURCE_DIR})
set_tests_properties(${P}.config.unit PROPERTIES LABELS "unit;config" TIMEOUT 300
                     WORKING_DIRECTORY ${XFER_CONFIG_SCRATCH})

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

# Every error path of the parser under memcheck: the unit test loads all the invalid files.
find_program(XFER_VALGRIND valgrind)
if(XFER_VALGRIND AND NOT XFER_ENABLE_SANITIZERS)
  add_test(NAME ${P}.valgrind.test_config
           COMMAND ${XFER_VALGRIND} -q --error-exitcode=99 --leak-check=full
                   --errors-for-leak-kinds=definite,indirect --num-callers=50
                   --suppressions=${CMAKE_CURRENT_SOURCE_DIR}/support/valgrind.supp
                   $<TARGET_FILE:test_config> --src ${PROJECT_SOURCE_DIR})
  set_tests_properties(${P}.valgrind.test_config PROPERTIES LABELS "valgrind;unit;config"
                       TIMEOUT 600 WORKING_DIRECTORY ${XFER_CONFIG_SCRATCH})
endif()
