#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# MPI_COMM_WORLD per component (docs/launcher.md, mpi_world; tests/world/tests.cmake):
#   world_test.sh XFER_RUN MPIEXEC WORKDIR PROGRAM... 
# PROGRAM (one command, e.g. world_prog, or python3 world_prog.py) uses MPI_COMM_WORLD
# throughout and prints one line on its rank 0 that depends on the world's size only. It runs
# standalone on 2 and on 3 ranks, then as components a (2 ranks) and b (3 ranks) of one MPMD
# launch by xfer-run (mpi_world: component, the default): each component must print what the
# standalone run of its size printed. Then with mpi_world: job its first collective on the
# job-wide world must fail at once, naming the call and the fix.
set -u
xr=$1 mpiexec=$2 work=$3
shift 3
rm -rf "$work"
mkdir -p "$work"
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
flags=()
if "$mpiexec" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
    flags=(--oversubscribe)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
for n in 2 3; do
    timeout -s KILL 120 "$mpiexec" "${flags[@]}" -n $n "$@" >"$work/alone$n" 2>"$work/alone$n.err"
    echo "--- standalone, $n ranks -> exit $?"
    cat "$work/alone$n" "$work/alone$n.err"
    [ "$(grep -c . "$work/alone$n")" = 1 ] || fail "standalone $n ranks: not one line"
done
cmd=$(printf '"%s", ' "$@")
cmd="[${cmd%, }]"
for world in component job; do
    cat >"$work/$world.yaml" <<YAML
workflow: world-$world
control: {timeout_ms: 20000}
components:
  - {name: a, nprocs: 2, mpi_world: $world, cmd: $cmd}
  - {name: b, nprocs: 3, mpi_world: $world, cmd: $cmd}
YAML
    t0=${EPOCHREALTIME/./}
    timeout -s KILL 120 "$xr" --launch mpmd --walltime 60 "$work/$world.yaml" >"$work/$world.out" \
        2>"$work/$world.err"
    rc=$?
    ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
    echo "--- xfer-run, mpi_world: $world -> exit $rc after $ms ms"
    sed 's/^/  out| /' "$work/$world.out"
    sed 's/^/  err| /' "$work/$world.err" | tail -20
    if [ $world = component ]; then
        [ $rc = 0 ] || fail "mpi_world: component: exit $rc"
        grep -qxF "[a] $(cat "$work/alone2")" "$work/$world.out" ||
            fail "component a (2 ranks) did not print what a standalone 2-rank run does"
        grep -qxF "[b] $(cat "$work/alone3")" "$work/$world.out" ||
            fail "component b (3 ranks) did not print what a standalone 3-rank run does"
    else
        [ $rc != 0 ] || fail "mpi_world: job: a collective on the job's world succeeded"
        grep -q "on MPI_COMM_WORLD in component [ab]: in this MPMD launch MPI_COMM_WORLD holds every component's processes (mpi_world: job).*Set \`mpi_world: component\`" \
            "$work/$world.err" || fail "mpi_world: job: no message naming the call and the fix"
        [ $ms -lt 50000 ] || fail "mpi_world: job: took $ms ms (a hang until the walltime?)"
    fi
done
[ $fails = 0 ] && echo "world: ok" && exit 0
echo "world: $fails check(s) failed"
exit 1
