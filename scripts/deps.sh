#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install the Debian 12 packages libxfer needs, only those that are missing. Elsewhere (no
# apt-get), or without root or sudo, install nothing: check that the tools are there and say
# what to install. XFER_NO_DEPS=1 skips all of it.
#   scripts/deps.sh [--ci]     (--ci adds the tools CI uses: clang-format, clang for the fuzz
#                               target, slurm-wlm and munge for the Slurm tests)
set -euo pipefail

pkgs=(build-essential cmake pkg-config mpich libmpich-dev openmpi-bin libopenmpi-dev valgrind libyaml-dev
    libzmq3-dev libmsgpack-dev liblz4-dev libzstd-dev libzfp-dev
    libhdf5-mpich-dev libhdf5-openmpi-dev hdf5-tools libnetcdf-dev netcdf-bin gnuplot-nox
    python3-dev python3-numpy python3-mpi4py python3-matplotlib gfortran
    python3-h5py python3-xarray python3-h5netcdf
    python3-pip python3-setuptools python3-wheel python3-venv) # pip install of bindings/python
if [[ "${1:-}" == "--ci" ]]; then
    # slurm-wlm and munge: the Slurm tests' local cluster (tests/slurm; CI only: on a machine
    # with systemd the packages would start daemons of their own)
    # gdb: where each process of a hung xfer-chaos seed waited, in the CI log
    pkgs+=(clang-format clang slurm-wlm munge gdb)
fi

# Check for the tools and libraries the build needs, whatever installed them, and say what is
# missing in terms any package manager or module system understands: 0 when the required ones
# are there.
check_tools() {
    local need=() opt=() n o
    command -v cmake >/dev/null || need+=("CMake >= 3.20")
    command -v cc >/dev/null || need+=("a C11 compiler")
    command -v mpicc >/dev/null || compgen -c | grep -q '^mpicc\.' || need+=("an MPI-3.1 library with its mpicc wrapper (MPICH, Open MPI, or your site's)")
    if command -v pkg-config >/dev/null; then
        pkg-config --exists yaml-0.1 || need+=("libyaml (headers and yaml-0.1.pc)")
        pkg-config --exists libzmq || need+=("ZeroMQ (libzmq, headers)")
        pkg-config --exists msgpack || pkg-config --exists msgpack-c || need+=("msgpack-c")
    else
        need+=("pkg-config (to find libyaml, ZeroMQ and msgpack-c)")
    fi
    command -v h5pcc >/dev/null || opt+=("parallel HDF5 (h5pcc) for the HDF5 adapter and the example's fields.h5")
    command -v nc-config >/dev/null || opt+=("netCDF-4 (nc-config) for the netCDF adapter")
    if command -v pkg-config >/dev/null; then
        pkg-config --exists liblz4 || opt+=("liblz4 (headers, liblz4.pc) for compression: lz4")
        pkg-config --exists libzstd || opt+=("libzstd (headers, libzstd.pc) for compression: zstd")
    fi
    [ -e /usr/include/zfp.h ] || [ -e /usr/local/include/zfp.h ] ||
        opt+=("zfp (libzfp, its CMake package) for compression: zfp")
    python3 -c "import numpy" 2>/dev/null || opt+=("Python 3 with its headers and numpy for the Python package")
    python3 -c "import pip, setuptools, wheel, ensurepip" 2>/dev/null ||
        opt+=("pip, setuptools, wheel and venv for Python 3 (pip install of the Python package)")
    command -v gfortran >/dev/null || opt+=("gfortran (and your MPI's mpif90) for the Fortran module")
    command -v gnuplot >/dev/null || opt+=("gnuplot for the example's images")
    for o in "${opt[@]}"; do echo "deps.sh: optional, missing: $o" >&2; done
    if ((${#need[@]})); then
        for n in "${need[@]}"; do echo "deps.sh: required, missing: $n" >&2; done
        echo "deps.sh: install those with your package manager or modules" >&2
        return 1
    fi
    return 0
}

# XFER_NO_DEPS=1: install nothing, check nothing (a site that provides everything itself).
[[ "${XFER_NO_DEPS:-0}" == 1 ]] && exit 0
# Not Debian (no dpkg/apt-get): install nothing, check the tools.
if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
    check_tools
    exit $?
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
    if ! command -v sudo >/dev/null || ! sudo -n true 2>/dev/null; then
        # cannot install: the tools may be there all the same (modules, /opt)
        echo "deps.sh: not root and no sudo: not installing ${missing[*]}; checking the tools" >&2
        check_tools
        exit $?
    fi
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
