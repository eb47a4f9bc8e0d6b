#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install the Debian 12 packages libxfer needs, only those that are missing.
#   scripts/deps.sh [--ci]     (--ci adds the tools CI uses: clang-format, clang for the fuzz target)
set -euo pipefail

pkgs=(build-essential cmake pkg-config mpich libmpich-dev openmpi-bin libopenmpi-dev valgrind libyaml-dev
    libzmq3-dev libmsgpack-dev
    libhdf5-mpich-dev libhdf5-openmpi-dev hdf5-tools libnetcdf-dev netcdf-bin gnuplot-nox
    python3-dev python3-numpy python3-mpi4py python3-matplotlib gfortran)
if [[ "${1:-}" == "--ci" ]]; then
    pkgs+=(clang-format clang)
fi

missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
((${#missing[@]} == 0)) && exit 0

sudo=""
if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "deps.sh: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
fi
echo "deps.sh: installing ${missing[*]}"
for attempt in 1 2 3; do
    if $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; then
        exit 0
    fi
    echo "deps.sh: apt-get failed (attempt $attempt), retrying" >&2
    sleep $((attempt * 10))
done
echo "deps.sh: could not install ${missing[*]}" >&2
exit 1
