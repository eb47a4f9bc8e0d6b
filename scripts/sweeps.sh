#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The sweeps the test suite leaves out to keep CI short (docs/testing.md, "Sweeps"): the schedule
# simulator at every algorithm and every p, q <= 64 (sched.sweep64), the largest schedules
# (the ring algorithms at 4096 x 4096, fc_direct at 2048 x 2048) and the fuzzers' search for 5
# minutes each (config.fuzz, control.fuzz; 10 s in the suite), in their own build tree.
#   scripts/sweeps.sh [extra ctest args...]
# Minutes of CPU on a 2-core machine; run it alone.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build/sweeps
bash scripts/build.sh mpich --dir "$dir" -DXFER_SWEEP_TESTS=ON
ctest --test-dir "$dir" --output-on-failure -L "sweep|scale|fuzz" "$@"
