#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build MPICH with the ch3:nemesis device (plain TCP between hosts) from Debian's own source
# package, for the emulated cluster: Debian's MPICH is ch4:ucx, which does not run across the
# network namespaces. Same MPICH release (4.0.2) as the Debian package, installed under
#   ${XFER_MPICH_CH3:-$HOME/.cache/libxfer/mpich-ch3}
# and reused when it is there (about 7-10 minutes to build on 2 cores). Prints the prefix.
#
#   bash bench/mpich-ch3.sh [--jobs N]
set -euo pipefail

PREFIX=${XFER_MPICH_CH3:-$HOME/.cache/libxfer/mpich-ch3}
JOBS=$(nproc)
[ "${1:-}" = --jobs ] && JOBS=$2

if [ -x "$PREFIX/bin/mpicc" ] && [ -x "$PREFIX/bin/mpiexec.hydra" ]; then
    echo "$PREFIX"
    exit 0
fi

die() { echo "mpich-ch3: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || [ -n "$(ls /etc/apt/sources.list.d/*src* 2>/dev/null)" ] ||
    die "needs root once (to add a deb-src entry and build dependencies)"

if ! grep -rqs '^Types: deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    cat >/etc/apt/sources.list.d/xfer-debian-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    apt-get update -qq
fi
if [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential dpkg-dev \
        python3 >/dev/null
fi

WORK=$(mktemp -d /tmp/xfer-mpich-ch3.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
apt-get source -qq --download-only mpich 2>/dev/null ||
    die "apt-get source mpich failed (no deb-src entry or no network?)"
tar xf mpich_*.orig.tar.* && cd mpich-*/
echo "mpich-ch3: configuring ($(pwd))" >&2
./configure --prefix="$PREFIX" --with-device=ch3:nemesis --disable-fortran --disable-cxx \
    --disable-doc --enable-fast=O2 --enable-shared --disable-static >configure.log 2>&1 ||
    { tail -30 configure.log >&2; die "configure failed"; }
echo "mpich-ch3: building with $JOBS jobs" >&2
make -j"$JOBS" >make.log 2>&1 || { tail -30 make.log >&2; die "make failed"; }
make install >install.log 2>&1 || { tail -30 install.log >&2; die "make install failed"; }
echo "$PREFIX"
