#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Slurm launcher checks (tests/slurm/tests.cmake); SLURM_CONF points at the test cluster.
#   expect.sh fail XFER_RUN FILE        a component exits 3 after 2 steps: xfer-run exits non-zero
#                                       (srun's status: the highest task code, or 128 + signal for
#                                       the tasks it stopped) within a bound, srun names the code,
#                                       and no job or step is left in the queue
#   expect.sh dryrun XFER_RUN FILE F    the commands: srun with the flavour's PMI, --multi-prog,
#                                       the components' environment by env(1)
set -u
kase=$1 xr=$2 file=$3 flavour=${4:-}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
case $kase in
fail)
    t0=${EPOCHREALTIME/./}
    timeout -s KILL 120 "$xr" --launcher slurm "$file" >out.log 2>err.log
    rc=$?
    ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
    sed 's/^/  out| /' out.log
    sed 's/^/  err| /' err.log
    [ "$rc" != 0 ] || fail "exit code 0"
    grep -q "Exited with exit code 3" err.log || fail "the failing tasks' code 3 is not reported"
    [ "$ms" -lt 30000 ] || fail "took $ms ms"
    for _ in $(seq 1 50); do [ -z "$(squeue -h)" ] && break; sleep 0.1; done
    [ -z "$(squeue -h)" ] || fail "jobs left: $(squeue -h)"
    ;;
dryrun)
    "$xr" --launcher slurm --launch mpmd --dry-run "$file" >out.log 2>&1 || fail "--dry-run failed"
    cat out.log
    pmi=pmi2
    [ "$flavour" = openmpi ] && pmi=pmix
    grep -q -- "srun .*--mpi=$pmi .*--input=none .*-n 4 --multi-prog .*/slurm.multi-prog" out.log ||
        fail "no srun --mpi=$pmi ... --multi-prog line"
    grep -q "^  0-1 .*'XFER_COMPONENT=a'" out.log || fail "no multi-prog line for ranks 0-1 (a)"
    grep -q "^  2-3 .*'XFER_COMPONENT=b'" out.log || fail "no multi-prog line for ranks 2-3 (b)"
    grep -q -- "--endpoint tcp://0.0.0.0:[0-9]* --allow-remote" out.log ||
        fail "outside an allocation xferd is not on TCP"
    "$xr" --launcher slurm --launch separate --dry-run "$file" >sep.log 2>&1
    rc=$?
    cat sep.log
    if [ "$flavour" = openmpi ]; then
        [ "$rc" = 2 ] && grep -q "separate under Slurm with Open MPI" sep.log ||
            fail "separate with Open MPI under Slurm was not refused with a reason"
    else
        [ "$rc" = 0 ] && [ "$(grep -c "^/.*srun .* -n 2 .*XFER_LAUNCH=separate" sep.log)" = 2 ] ||
            fail "separate: not one srun per component"
    fi
    ;;
*) echo "usage: $0 fail|dryrun ..." >&2; exit 2 ;;
esac
[ "$fails" = 0 ] && echo "expect.sh $kase: ok"
exit $((fails > 0))
