# SPDX-License-Identifier: BSD-3-Clause
# xferctl and the daemon's load test against a real xferd (tests/control/xferctl_test.sh starts
# one per test in a fresh run directory). Nothing here uses MPI: registered once, in the MPICH
# tree. (The daemons are built with the tools: XFER_ENABLE_TOOLS.)
if(P STREQUAL "mpich" AND TARGET xferd AND TARGET xferctl) # not in mpich-ch3
  set(XC_DRIVER ${CMAKE_CURRENT_SOURCE_DIR}/control/xferctl_test.sh)
  set(XC_BINS $<TARGET_FILE:xferd> $<TARGET_FILE:xferctl> $<TARGET_FILE:xferd-load>)
  foreach(c status json denied unreachable watch watch_end stop)
    add_test(NAME ${P}.control.xferctl.${c} COMMAND bash ${XC_DRIVER} ${c} ${XC_BINS})
    set_tests_properties(${P}.control.xferctl.${c} PROPERTIES LABELS "control" TIMEOUT 120
                         ENVIRONMENT "${XFER_TEST_RANK_ENV}")
  endforeach()
  # 500 clients, one connection each, 10 requests each after registering (a throughput figure:
  # normal builds only; under ASan the daemon is 30 times slower and proves nothing more)
  if(NOT XFER_ENABLE_SANITIZERS)
    add_test(NAME ${P}.control.load COMMAND bash ${XC_DRIVER} load ${XC_BINS})
    set_tests_properties(${P}.control.load PROPERTIES LABELS "control" TIMEOUT 300
                         ENVIRONMENT "${XFER_TEST_RANK_ENV}")
  endif()
endif()
