#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Configure and build libxfer for one MPI flavour in its own tree.
#   scripts/build.sh <mpich|openmpi> [--sanitize] [--dir DIR] [extra cmake args...]
# Default tree: build/<flavour> (build/asan/<flavour> with --sanitize).
set -euo pipefail
cd "$(dirname "$0")/.."

flavour="${1:?usage: scripts/build.sh <mpich|openmpi> [--sanitize] [--dir DIR] [cmake args]}"
shift
sanitize=0
dir=""
extra=()
while (($#)); do
    case "$1" in
    --sanitize) sanitize=1 ;;
    --dir) dir="$2"; shift ;;
    *) extra+=("$1") ;;
    esac
    shift
done
if ((sanitize)); then
    dir="${dir:-build/asan/$flavour}"
    extra+=(-DXFER_ENABLE_SANITIZERS=ON -DCMAKE_BUILD_TYPE=Debug)
else
    dir="${dir:-build/$flavour}"
    extra+=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
fi
cmake -S . -B "$dir" -DXFER_MPI_FLAVOR="$flavour" "${extra[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
