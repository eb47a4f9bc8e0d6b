#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Reproducer: Open MPI's shared-memory BTL (vader) under the test fixture's emulated Slurm
# (tests/slurm/slurm_fixture.sh: two nodes n1 and n2 that are the same host).
#
#   scripts/repro-slurm-vader.sh [options] SETTING...
#
# Starts a private cluster (its own directory and port, stopped on exit), then for each SETTING
# runs RUNS jobs `salloc -N 2 -n 5 ...` (the shape of tests/slurm's salloc example) and counts
# their outcomes. Each job is either the small MPI program below (no libxfer: MPI_Init, then a
# communicator split 3 + 2 and one duplicated and an allreduce on it checked, 20 times) or, with
# --xfer BUILD, the salloc example itself (xfer-run --launch mpmd, gray-scott-sim 3 ranks +
# gray-scott-analysis 2).
#
# SETTING is one of (several may be given; each gets RUNS jobs):
#   default     Open MPI's default transports (vader between the ranks Slurm puts on one node)
#   tcp         OMPI_MCA_btl=self,tcp (what tests/slurm/tests.cmake sets)
#   nocopy      OMPI_MCA_btl_vader_single_copy_mechanism=none (vader without CMA)
#   pernode     vader with a backing directory per emulated node: a wrapper on the ranks sets
#               OMPI_MCA_btl_vader_backing_directory=SHM-$SLURMD_NODENAME
# All settings put vader's files in SHM=/dev/shm/<work dir name> (the two nodes share it as
# they share /dev/shm; pernode gives each its own): the names are those vader makes in
# /dev/shm, vader_segment.HOST.UID.JOBID.LOCAL_RANK, and every fixture cluster numbers its jobs
# from 1, so a run here never meets the files of another cluster's runs on this machine, and
# the files dead ranks leave are removed after each run.
#
# Options:
#   --runs N        jobs per setting (default 100)
#   --filler N      before the runs, hold N CPUs of n1 with a job that sleeps (default 0). The
#                   allocation then spills onto n2: 5 CPUs held give the layout 3,2 (ranks 0-2
#                   on n1, 3-4 on n2), which a ctest -j run gives when another Slurm test (e.g.
#                   the 5-rank multiprog example) holds n1; 0 gives 4,1 (the test alone)
#   --cpu-load N    N busy loops (sh -c 'while :; do :; done', niced) beside the runs (default 0)
#   --xfer BUILD    run the salloc example of build tree BUILD (e.g. build/openmpi) instead of
#                   the small program
#   --port P        the cluster's slurmctld port (default 17480; P+1, P+2 for the slurmd)
#   --keep          keep the work directory (the cluster's logs, the failed runs' logs)
#
# Output: one line per setting,
#   SETTING layout=L runs=N ok=A crash=B wrong=C hang=D other=E
# crash: a rank died on a signal (Open MPI's "Process received signal", srun's "Segmentation
# fault"/"Bus error"/"Aborted"); wrong: the program's check failed; hang: the job did not end
# in 60 s; other: any other non-zero exit. layout: the runs' SLURM_TASKS_PER_NODE values. The
# first failed run of each kind per setting is kept in WORKDIR/fail-SETTING-KIND-RUN.log.
#
# Needs slurm-wlm and munge (as the fixture does), Open MPI's mpicc, root (the fixture's
# daemons). About 5 s a run. The counts quoted in tests/slurm/tests.cmake came from:
#   scripts/repro-slurm-vader.sh --runs 50 --filler 5 default nocopy
#   scripts/repro-slurm-vader.sh --runs 100 --filler 5 tcp pernode
#   scripts/repro-slurm-vader.sh --runs 30 default                  (the test alone: layout 4,1)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
src=$PWD
runs=100 filler=0 cpuload=0 xfer="" port=17480 keep=0
settings=()
while (($#)); do
    case "$1" in
    --runs) runs=$2; shift ;;
    --filler) filler=$2; shift ;;
    --cpu-load) cpuload=$2; shift ;;
    --xfer) xfer=$(cd "$2" && pwd) || exit 2; shift ;;
    --port) port=$2; shift ;;
    --keep) keep=1 ;;
    default | tcp | nocopy | pernode) settings+=("$1") ;;
    *)
        echo "usage: $0 [--runs N] [--filler N] [--cpu-load N] [--xfer BUILD] [--port P] [--keep]" \
            "default|tcp|nocopy|pernode..." >&2
        exit 2
        ;;
    esac
    shift
done
((${#settings[@]})) || settings=(default tcp)

dir=$(mktemp -d /tmp/repro-vader-XXXX)
chmod 0755 "$dir" # munged wants every directory above its socket searchable
export SLURM_CONF=$dir/cluster/slurm.conf
shm=/dev/shm/$(basename "$dir")
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    bash "$src"/tests/slurm/slurm_fixture.sh stop "$dir"/cluster >/dev/null 2>&1
    rm -rf "$shm" "$shm"-n1 "$shm"-n2
    if ((keep)); then echo "repro: work directory $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the small program: communicators made and used, as libxfer_world's set-up does ---------
cat >"$dir"/comms.c <<'END'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, size, i, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (i = 0; i < 20; i++) {
        MPI_Comm split, dup;
        long v = rank + 1, sum = 0;
        int n;
        MPI_Comm_split(MPI_COMM_WORLD, rank < 3, rank, &split); /* two "components" */
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Comm_size(split, &n);
        MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, dup);
        if (sum != (long) size * (size + 1) / 2 || n != (rank < 3 ? 3 : size - 3))
            bad = 1;
        MPI_Comm_free(&split);
        MPI_Comm_free(&dup);
    }
    if (bad)
        printf("comms: rank %d: WRONG\n", rank);
    MPI_Finalize();
    return bad ? 3 : 0;
}
END
# pernode: each rank's backing directory named after its Slurm node (evaluated on the node)
cat >"$dir"/pernode.sh <<END
#!/bin/sh
d=$shm-\$SLURMD_NODENAME
mkdir -p "\$d"
OMPI_MCA_btl_vader_backing_directory=\$d exec "\$@"
END
chmod +x "$dir"/pernode.sh
if [ -z "$xfer" ]; then
    mpicc -O2 -o "$dir"/comms "$dir"/comms.c || exit 1
else # the example of tests/slurm/tests.cmake; pernode: the wrapper before each command
    for w in "" "$dir/pernode.sh, "; do
        sed -e "s#@OUT@#$dir/example#" -e "s#@WRAP@#$w#" >"$dir/example${w:+-pernode}.yaml" <<'END'
workflow: repro_vader
control: {timeout_ms: 60000, heartbeat_timeout_ms: 6000}
components:
  - {name: simulation, nprocs: 3,
     cmd: [@WRAP@gray-scott-sim, --steps, "60", --every, "10", --output, @OUT@]}
  - {name: analysis, nprocs: 2, cmd: [@WRAP@gray-scott-analysis, --output, @OUT@]}
channels:
  - name: fields
    from: simulation
    to: analysis
    datasets:
      - {name: U, type: float64, dims: [64, 64]}
      - {name: V, type: float64, dims: [64, 64]}
      - {name: time, type: float64, dims: [1]}
END
    done
fi

bash "$src"/tests/slurm/slurm_fixture.sh start "$dir"/cluster "$port" >/dev/null || exit 1
# the filler: a job of its own name holding CPUs of n1 (again when its time limit ended it)
filler() {
    ((filler > 0)) || return 0
    [ -n "$(squeue -h -n repro-filler -t R 2>/dev/null)" ] && return 0
    salloc --quiet -J repro-filler -t 60 -w n1 -n "$filler" sleep 3600 >/dev/null 2>&1 &
    pids+=($!)
    for _ in $(seq 1 100); do
        [ -n "$(squeue -h -n repro-filler -t R 2>/dev/null)" ] && break
        sleep 0.1
    done
}
for _ in $(seq 1 "$cpuload"); do
    nice -n 5 sh -c 'while :; do :; done' &
    pids+=($!)
done

# one job: prints layout=..., then the run's output; the job's exit status
job() { # SETTING
    local wrap="" yaml=$dir/example.yaml
    local envs=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        OMPI_MCA_btl_vader_backing_directory="$shm")
    mkdir -p "$shm"
    case $1 in
    tcp) envs+=("OMPI_MCA_btl=self,tcp") ;;
    nocopy) envs+=(OMPI_MCA_btl_vader_single_copy_mechanism=none) ;;
    pernode) wrap=$dir/pernode.sh yaml=$dir/example-pernode.yaml ;;
    esac
    if [ -z "$xfer" ]; then
        env "${envs[@]}" timeout -k 5 60 salloc --quiet -N 2 -n 5 \
            sh -c 'echo layout=$SLURM_TASKS_PER_NODE
                   exec srun --mpi=pmix --kill-on-bad-exit=1 "$@"' sh $wrap "$dir"/comms
    else
        env "${envs[@]}" PATH="$xfer/tools:$xfer/examples:$PATH" timeout -k 5 60 salloc --quiet \
            -N 2 -n 5 sh -c 'echo layout=$SLURM_TASKS_PER_NODE; exec "$@"' sh \
            "$xfer"/tools/xfer-run --launch mpmd "$yaml"
    fi
}

for s in "${settings[@]}"; do
    ok=0 crash=0 wrong=0 hang=0 other=0 layouts=""
    for r in $(seq 1 "$runs"); do
        log=$dir/run.log
        filler
        job "$s" >"$log" 2>&1
        rc=$?
        l=$(sed -n 's/^layout=//p' "$log" | head -1)
        case " $layouts " in *" $l "*) ;; *) layouts="$layouts $l" ;; esac
        rm -rf "$shm" "$shm"-n1 "$shm"-n2 # what dead ranks left
        if ((rc == 0)) && ! grep -q "WRONG" "$log"; then
            ok=$((ok + 1))
            continue
        fi
        if ((rc == 124 || rc == 137)); then kind=hang
        elif grep -q "WRONG" "$log"; then kind=wrong
        elif grep -qE "Process received signal|Segmentation fault|Bus error|Aborted" "$log"; then
            kind=crash
        else kind=other
        fi
        eval "$kind=\$(($kind + 1))"
        compgen -G "$dir/fail-$s-$kind-*" >/dev/null || cp "$log" "$dir/fail-$s-$kind-$r.log"
    done
    echo "$s layout=${layouts# } runs=$runs ok=$ok crash=$crash wrong=$wrong hang=$hang" \
        "other=$other"
done
