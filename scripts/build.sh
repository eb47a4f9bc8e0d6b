#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Configure and build libxfer for one MPI flavour in its own tree.
#   scripts/build.sh <mpich|openmpi|mpich-ch3|plain> [--sanitize] [--dir DIR] [extra cmake args...]
# Default tree: build/<flavour> (build/asan/<flavour> with --sanitize). plain: no flavour named,
# CMake's FindMPI finds the mpicc in PATH (or MPI_C_COMPILER=... among the extra arguments).
# mpich-ch3 is MPICH 4.0.2 built with the ch3:nemesis device by bench/mpich-ch3.sh, installed
# under ${XFER_MPICH_CH3:-~/.cache/libxfer/mpich-ch3}; unlike Debian's ch4:ucx MPICH it can
# connect separately launched jobs.
set -euo pipefail
cd "$(dirname "$0")/.."

flavour="${1:?usage: scripts/build.sh <mpich|openmpi|mpich-ch3|plain> [--sanitize] [--dir DIR] [cmake args]}"
shift
mpi_args=(-DXFER_MPI_FLAVOR="$flavour")
[ "$flavour" = plain ] && mpi_args=()
if [ "$flavour" = mpich-ch3 ]; then
    ch3="${XFER_MPICH_CH3:-$HOME/.cache/libxfer/mpich-ch3}"
    if [ ! -x "$ch3/bin/mpicc" ] || [ ! -x "$ch3/bin/mpiexec" ]; then
        echo "build.sh: no ch3 MPICH under $ch3 (build it with: bash bench/mpich-ch3.sh)" >&2
        exit 1
    fi
    mpi_args=(-DXFER_MPI_FLAVOR=mpich -DMPI_C_COMPILER="$ch3/bin/mpicc"
        -DMPIEXEC_EXECUTABLE="$ch3/bin/mpiexec")
fi
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
cmake -S . -B "$dir" "${mpi_args[@]}" "${extra[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
