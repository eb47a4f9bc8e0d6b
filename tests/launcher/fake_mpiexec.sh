#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Stands in for mpiexec in the leftover test: it starts nothing of the workflow, leaves a
# detached process behind (its own session, no inherited output) and exits 0. xfer-run must
# not let that process outlive it.
rundir=
while [ $# -gt 0 ]; do
    case "$1" in
    -env) [ "$2" = XFER_RUN_DIR ] && rundir=$3; shift 3 ;;
    -x) case "$2" in XFER_RUN_DIR=*) rundir=${2#XFER_RUN_DIR=} ;; esac; shift 2 ;;
    *) shift ;;
    esac
done
setsid sleep 300 </dev/null >/dev/null 2>&1 &
echo $! > "$rundir/leftover.pid"
exit 0
