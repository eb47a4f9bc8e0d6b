#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A real Slurm on this one machine, for the tests (shared/notes recipe: Debian's slurm-wlm
# 22.05 and munge, started as plain processes): two fake nodes n1 and n2 on 127.0.0.1 (a
# heterogeneous job needs two), 8 CPUs each whatever the machine has, one partition.
#
#   slurm_fixture.sh start DIR [PORT]  write DIR/slurm.conf, start munged, slurmctld (on PORT,
#                                      default 16817) and two slurmd (PORT+1, PORT+2), wait
#                                      until both nodes are idle; prints SLURM_CONF=...
#   slurm_fixture.sh stop DIR          cancel every job, wait for them, stop the daemons
#   slurm_fixture.sh env DIR           the environment clients need (SLURM_CONF=...)
# Clusters in different directories on different ports run side by side (one per build tree).
#
# Exit status 0, or 1 with a message; 77 when slurm-wlm or munge is not installed (skip).
set -uo pipefail
cmd=${1:-}
dir=${2:-}
port=${3:-16817}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|env DIR" >&2; exit 2; }
for p in slurmctld slurmd munged srun sinfo squeue scancel; do
    command -v "$p" >/dev/null || { echo "slurm_fixture: $p not found (apt-get install slurm-wlm munge)" >&2; exit 77; }
done
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
export SLURM_CONF=$dir/slurm.conf

pid_of() { [ -s "$1" ] && cat "$1"; }

stop() {
    if [ -f "$SLURM_CONF" ]; then
        scancel --quiet --full "$(squeue -h -o %i 2>/dev/null | tr '\n' ' ')" 2>/dev/null
        for _ in $(seq 1 100); do # jobs first: stopping the daemons does not end them
            [ -z "$(squeue -h 2>/dev/null)" ] && ! pgrep -f "slurmstepd.*$dir" >/dev/null && break
            sleep 0.1
        done
    fi
    for f in "$dir"/run/slurmd-n1.pid "$dir"/run/slurmd-n2.pid "$dir"/run/slurmctld.pid \
        "$dir"/munge/munged.pid; do
        p=$(pid_of "$f") || continue
        kill "$p" 2>/dev/null || continue
        for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$p" 2>/dev/null
        rm -f "$f"
    done
    pkill -9 -f "slurmstepd.*$dir" 2>/dev/null
    return 0
}

start() {
    stop
    rm -rf "$dir"/state "$dir"/spool "$dir"/tmp "$dir"/log "$dir"/run
    mkdir -p "$dir"/state "$dir"/spool/n1 "$dir"/spool/n2 "$dir"/tmp/n1 "$dir"/tmp/n2 \
        "$dir"/log "$dir"/run "$dir"/munge
    chmod 0755 "$dir"/munge
    if [ ! -s "$dir"/munge/munge.key ]; then
        dd if=/dev/urandom of="$dir"/munge/munge.key bs=1k count=1 2>/dev/null
        chmod 400 "$dir"/munge/munge.key
    fi
    cat >"$SLURM_CONF" <<EOF
ClusterName=xfertest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
TmpFS=$dir/tmp/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldPort=$port
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdParameters=config_overrides
KillOnBadExit=1
InactiveLimit=10
MailProg=/bin/true
NodeName=n[1-2] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[$((port + 1))-$((port + 2))] CPUs=8 RealMemory=1000
PartitionName=debug Nodes=n[1-2] Default=YES DefaultTime=10 MaxTime=60 State=UP OverSubscribe=YES
EOF
    munged -F --socket="$dir"/munge/munge.socket --key-file="$dir"/munge/munge.key \
        --pid-file="$dir"/munge/munged.pid --log-file="$dir"/log/munged.log \
        --seed-file="$dir"/munge/munge.seed </dev/null >/dev/null 2>&1 &
    for _ in $(seq 1 50); do [ -S "$dir"/munge/munge.socket ] && break; sleep 0.1; done
    slurmctld -D -i -f "$SLURM_CONF" </dev/null >"$dir"/log/slurmctld.out 2>&1 &
    slurmd -D -N n1 -f "$SLURM_CONF" </dev/null >"$dir"/log/slurmd-n1.out 2>&1 &
    slurmd -D -N n2 -f "$SLURM_CONF" </dev/null >"$dir"/log/slurmd-n2.out 2>&1 &
    for _ in $(seq 1 150); do
        states=$(sinfo -h -o %T 2>/dev/null | sort -u | tr '\n' ' ')
        [ "$states" = "idle " ] && { echo "SLURM_CONF=$SLURM_CONF"; return 0; }
        sleep 0.1
    done
    echo "slurm_fixture: the nodes did not become idle (sinfo: ${states:-no answer}); logs in $dir/log" >&2
    tail -5 "$dir"/log/*.log >&2 2>/dev/null
    stop
    return 1
}

case $cmd in
start) start ;;
stop) stop ;;
env) echo "SLURM_CONF=$SLURM_CONF" ;;
*) echo "usage: $0 start|stop|env DIR" >&2; exit 2 ;;
esac
