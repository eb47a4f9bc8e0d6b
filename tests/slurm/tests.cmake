# SPDX-License-Identifier: BSD-3-Clause
# xfer-run under a real Slurm (tests/slurm/slurm_fixture.sh: slurmctld and two slurmd on this
# machine, one cluster per build tree on its own ports; CI installs slurm-wlm and munge, and
# these tests are skipped where they are not installed). The coupled example through srun
# --multi-prog, a heterogeneous step, and inside an allocation (salloc, two nodes: xferd on TCP),
# each checked against the simulation's own statistics; xfer-synth's byte-exact check of a
# full-duplex M x N workflow; a failing component; the commands (--dry-run); and, where the MPI
# can connect separate jobs (MPICH ch3), separate srun jobs.
find_program(XFER_SLURMCTLD slurmctld PATHS /usr/sbin)
find_program(XFER_SLURMD slurmd PATHS /usr/sbin)
find_program(XFER_MUNGED munged PATHS /usr/sbin)
find_program(XFER_SRUN srun)
if(NOT XFER_SLURMCTLD OR NOT XFER_SLURMD OR NOT XFER_MUNGED OR NOT XFER_SRUN OR
   NOT TARGET xfer-run OR NOT TARGET xfer-synth OR NOT TARGET gray-scott-sim OR
   XFER_ENABLE_SANITIZERS)
  message(STATUS "libxfer: the Slurm tests are skipped (slurm-wlm and munge not installed, or a "
                 "sanitizer build)")
  return()
endif()
set(SL_DIR ${CMAKE_CURRENT_BINARY_DIR}/slurm)
set(SL_CLUSTER ${SL_DIR}/cluster)
file(MAKE_DIRECTORY ${SL_DIR})
# a port range per tree: clusters of both flavours may run at once under ctest -j
if(P STREQUAL "mpich")
  set(SL_PORT 17310)
elseif(P STREQUAL "openmpi")
  set(SL_PORT 17320)
else()
  set(SL_PORT 17330)
endif()
set(SL_FIXTURE bash ${CMAKE_CURRENT_SOURCE_DIR}/slurm/slurm_fixture.sh)
add_test(NAME ${P}.slurm.cluster.start COMMAND ${SL_FIXTURE} start ${SL_CLUSTER} ${SL_PORT})
add_test(NAME ${P}.slurm.cluster.stop COMMAND ${SL_FIXTURE} stop ${SL_CLUSTER})
set_tests_properties(${P}.slurm.cluster.start PROPERTIES FIXTURES_SETUP ${P}.slurm
                     SKIP_RETURN_CODE 77)
set_tests_properties(${P}.slurm.cluster.stop PROPERTIES FIXTURES_CLEANUP ${P}.slurm)

# The ranks' environment goes through xfer-run's, then srun's (--export=ALL).
set(sl_env ${XFER_TEST_RANK_ENV} "SLURM_CONF=${SL_CLUSTER}/slurm.conf")
if(XFER_TEST_PRELOAD)
  list(JOIN XFER_TEST_PRELOAD ":" sl_preload)
  list(APPEND sl_env "LD_PRELOAD=${sl_preload}")
endif()
if(XFER_MPI_FLAVOR STREQUAL "openmpi")
  list(APPEND sl_env "OMPI_MCA_mpi_yield_when_idle=1")
endif()

function(sl_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "COMMAND" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 180)
  endif()
  add_test(NAME ${P}.slurm.${name} COMMAND ${T_COMMAND})
  set_tests_properties(${P}.slurm.${name} PROPERTIES FIXTURES_REQUIRED ${P}.slurm
                       LABELS "slurm;launcher" TIMEOUT ${T_TIMEOUT} ENVIRONMENT "${sl_env}")
endfunction()

# ---- the coupled example (small), as tests/example does it ---------------------------------
set(XR $<TARGET_FILE:xfer-run>)
find_program(XFER_SL_PY python3)
set(SL_CHECK ${XFER_SL_PY} ${CMAKE_CURRENT_SOURCE_DIR}/example/check_example.py)
set(sl_h5 "")
if(TARGET xfer_hdf5)
  set(sl_h5 --hdf5)
endif()
# sl_example(<name> <p> <q> COMMAND...): the example's file for <name>, then COMMAND with it
function(sl_example name p q)
  cmake_parse_arguments(E "" "" "COMMAND" ${ARGN})
  set(out ${SL_DIR}/example-${name})
  # (heartbeat_timeout_ms: the emulated nodes share two cores with MPICH ch3's busy polling)
  file(WRITE ${out}.yaml "workflow: slurm_example_${name}
control: {timeout_ms: 60000, heartbeat_timeout_ms: 6000}
components:
  - {name: simulation, nprocs: ${p},
     cmd: [gray-scott-sim, --steps, \"60\", --every, \"10\", --output, ${out}]}
  - {name: analysis, nprocs: ${q}, cmd: [gray-scott-analysis, --output, ${out}]}
channels:
  - name: fields
    from: simulation
    to: analysis
    datasets:
      - {name: U, type: float64, dims: [64, 64]}
      - {name: V, type: float64, dims: [64, 64]}
      - {name: time, type: float64, dims: [1]}
")
  sl_test(example.${name} COMMAND ${SL_CHECK} run --out ${out} --rows 6 ${sl_h5} --
                                  ${E_COMMAND} ${out}.yaml)
endfunction()
sl_example(multiprog 3 2 COMMAND ${XR} --launcher slurm --launch mpmd)
sl_example(het 2 3 COMMAND ${XR} --launcher slurm --launch mpmd --slurm-het)
find_program(XFER_SALLOC salloc)
if(XFER_SALLOC) # inside an allocation of two nodes: srun steps, xferd on TCP, auto launcher
  # (Open MPI: TCP only here, for the fixture, not for libxfer. Its shared-memory transport
  # (vader) names a rank's file after the host, the job and the rank's index on its node:
  # /dev/shm/vader_segment.HOST.UID.JOBID.LOCAL_RANK. The fixture's n1 and n2 are one host, so
  # when Slurm puts two or more ranks on each, the first ranks of n1 and of n2 open the same
  # file, and the job crashes or hangs in its first collectives (MPI_Comm_split). Alone the test
  # gets the layout 4,1 (n2's single rank makes no file: 0 crashes in 30); with another Slurm
  # test holding CPUs of n1 (ctest -j) it gets 3,2 or 2,3. scripts/repro-slurm-vader.sh
  # --filler 5 (layout 3,2, a small MPI program, no libxfer): default 48 crashes + 2 hangs in
  # 50 runs, single-copy off 49 + 1 in 50, vader with a backing directory per node 0 in 100, TCP
  # 1 in 100 (a segfault after a TCP connect warning: Open MPI's TCP transport on two busy
  # cores, not this collision).)
  if(XFER_MPI_FLAVOR STREQUAL "openmpi")
    sl_example(salloc 3 2 COMMAND ${CMAKE_COMMAND} -E env OMPI_MCA_btl=self,tcp ${XFER_SALLOC}
                                  --quiet -N 2 -n 5 ${XR} --launch mpmd)
  else()
    sl_example(salloc 3 2 COMMAND ${XFER_SALLOC} --quiet -N 2 -n 5 ${XR} --launch mpmd)
  endif()
endif()

# ---- xfer-synth: full duplex, M x N selections, checked byte for byte -------------------------
set(f ${SL_DIR}/synth.yaml)
file(WRITE ${f} "workflow: slurm_synth
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth, --attrs]}
  - {name: b, nprocs: 3, cmd: [xfer-synth, --attrs]}
channels:
  - name: c
    from: a
    to: b
    duplex: full
    selection: rows
    datasets:
      - {name: plane, type: int32, dims: [13, 9]}
      - {name: back, type: float32, dims: [11, 7], from: b}
")
sl_test(synth.full.p2q3 COMMAND ${XR} --launcher slurm ${f})
set_tests_properties(${P}.slurm.synth.full.p2q3 PROPERTIES PASS_REGULAR_EXPRESSION
                     "xfer-synth: b: 4 steps, [0-9]+ elements checked on rank 0: ok")

# ---- a failing component stops the step and gives its exit code; the commands --------------
set(f ${SL_DIR}/fail.yaml)
file(WRITE ${f} "workflow: slurm_fail
components:
  - {name: a, nprocs: 2, cmd: [xfer-synth, --steps, \"50\", --exit-after, \"2\"]}
  - {name: b, nprocs: 2, cmd: [xfer-synth, --steps, \"50\"]}
channels:
  - {name: c, from: a, to: b, datasets: [{name: x, type: float64, dims: [16]}]}
")
sl_test(fail COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/slurm/expect.sh fail ${XR} ${f})
sl_test(dryrun COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/slurm/expect.sh dryrun ${XR} ${f}
                       ${XFER_MPI_FLAVOR})
if(XFER_MPICH_DEVICE MATCHES "^ch3") # separate srun jobs meet through port files
  sl_test(synth.separate.p2q3 COMMAND ${XR} --launcher slurm --launch separate
                                      ${SL_DIR}/synth.yaml)
  set_tests_properties(${P}.slurm.synth.separate.p2q3 PROPERTIES PASS_REGULAR_EXPRESSION
                       "xfer-synth: b: 4 steps, [0-9]+ elements checked on rank 0: ok")
endif()
