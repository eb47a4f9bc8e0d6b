#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Emulated cluster on one machine (DESIGN.md section 7): N network namespaces ("hosts") on a
# bridge, each with its own link rate-limited in both directions (HTB on both ends of its veth,
# pure TCP ACKs ahead of data; XFER_EMU_SHAPER=tbf for one FIFO per direction), its own
# hostname (UTS namespace, so MPI sees distinct nodes) and a head namespace from which the MPI
# launcher starts the ranks through an rsh agent. Ranks on one host talk through shared
# memory; ranks on different hosts share their host's link, like a node's NIC. Queues hold
# XFER_EMU_QUEUE (default 50ms) of traffic before they drop.
#
#   emucluster.sh up [--hosts N (<= 64)] [--rate 200mbit] [--delay D] [--ranks-per-host K]
#                                    create (root; idempotent: recreates). --delay adds D of
#                                    one-way latency between any two hosts (netem, e.g. 100us);
#                                    K is run's default --ppn (2)
#   emucluster.sh run [--mpi openmpi|mpich] [--ppn K] [--np M] [--] CMD...
#                                    launch CMD with N*K (or M) ranks, K per host, in host
#                                    order (0..K-1 on host 1, ...): Open MPI's mpirun (the
#                                    default), or the hydra mpiexec of an MPICH ch3:nemesis
#                                    build (bench/mpich-ch3.sh; prefix $XFER_MPICH_CH3) --
#                                    Debian's MPICH (ch4:ucx) does not run across namespaces
#   emucluster.sh down                               remove everything it created (idempotent)
#
# Only 10.77.0.0/24 addresses on the namespaces it creates are used; nothing leaves the machine.
set -Eeuo pipefail

STATE=/tmp/xfer-emucluster
BR=xfbr0
PREFIX=xfh
QLAT=${XFER_EMU_QUEUE:-50ms} # queue bound: packets beyond it are dropped
SHAPER=${XFER_EMU_SHAPER:-htb} # htb (ACKs first) or tbf (one FIFO per direction)

die() { echo "emucluster: $*" >&2; exit 1; }
nhosts() { cat "$STATE/hosts" 2>/dev/null || echo 0; }

down() {
    local ns
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${PREFIX}[0-9]*$" || true); do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
        ip netns del "$ns"
    done
    ip link del "$BR" 2>/dev/null || true
    for v in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
               grep "^xfv[0-9]*$" || true); do
        ip link del "$v" 2>/dev/null || true
    done
    rm -rf "$STATE"
}

# One direction of a host's link limited to RATE by HTB, with two classes: pure TCP ACKs
# (IP packets under 64 bytes) first, then everything else. A single FIFO would queue the ACKs of
# one flow behind the data of the opposite flow on the same link, which halves a two-way
# exchange (the problem noted in DESIGN.md section 7); a NIC's full-duplex link has no such
# coupling. Both classes queue up to QLAT's worth of full-size packets, and drop nothing
# before that.
#   shape_htb RATE DEV [NAMESPACE]
shape_htb() {
    local rate=$1 dev=$2 num unit pkts ack bulk tc=(tc)
    [ -z "${3:-}" ] || tc=(ip netns exec "$3" tc)
    num=${rate%%[a-z]*}
    unit=${rate#"$num"}
    # queue length in full-size packets; the ACK class's guaranteed tenth, the rest for data
    read -r pkts ack bulk < <(awk -v r="$num" -v u="$unit" -v q="${QLAT%ms}" 'BEGIN {
        m = u == "gbit" ? 1e9 : u == "mbit" ? 1e6 : u == "kbit" ? 1e3 : 1
        n = int(r * m / 8 * q / 1000 / 1514) + 1; print (n < 100 ? 100 : n), r / 10, r * 9 / 10 }')
    "${tc[@]}" qdisc add dev "$dev" root handle 1: htb default 20 r2q 1000
    "${tc[@]}" class add dev "$dev" parent 1: classid 1:1 htb rate "$rate" ceil "$rate" \
        burst 32kbit cburst 32kbit
    # (quantum: one full packet; from r2q, the ACK class's would be under one below 100 Mbit/s)
    "${tc[@]}" class add dev "$dev" parent 1:1 classid 1:10 htb rate "$ack$unit" ceil "$rate" \
        prio 0 burst 32kbit cburst 32kbit quantum 1514
    "${tc[@]}" class add dev "$dev" parent 1:1 classid 1:20 htb rate "$bulk$unit" ceil "$rate" \
        prio 1 burst 32kbit cburst 32kbit quantum 1514
    "${tc[@]}" qdisc add dev "$dev" parent 1:10 handle 10: pfifo limit "$pkts"
    "${tc[@]}" qdisc add dev "$dev" parent 1:20 handle 20: pfifo limit "$pkts"
    "${tc[@]}" filter add dev "$dev" parent 1: protocol ip prio 1 u32 \
        match ip protocol 6 0xff match u16 0x0000 0xffc0 at 2 flowid 1:10
}

add_host() { # index, address, rate ("" = unlimited), one-way delay ("" = none)
    local k=$1 addr=$2 rate=$3 delay=${4:-} ns=${PREFIX}$1
    ip netns add "$ns"
    ip link add "xfv$k" type veth peer name eth0 netns "$ns"
    ip link set "xfv$k" master "$BR"
    ip link set "xfv$k" up
    ip netns exec "$ns" ip addr add "$addr/24" dev eth0
    ip netns exec "$ns" ip link set eth0 up
    ip netns exec "$ns" ip link set lo up
    if [ -n "$rate" ] && [ -z "$delay" ] && [ "$SHAPER" = htb ]; then
        shape_htb "$rate" eth0 "$ns" # out: the host side
        shape_htb "$rate" "xfv$k"       # in: the bridge side
    elif [ -n "$rate" ]; then # the host's link: out (host side) and in (bridge side)
        if [ -n "$delay" ]; then # latency on the way out, then the rate limit
            ip netns exec "$ns" tc qdisc add dev eth0 root handle 1: netem delay "$delay" \
                limit 100000
            ip netns exec "$ns" tc qdisc add dev eth0 parent 1:1 handle 10: tbf rate "$rate" \
                burst 32kbit latency "$QLAT"
        else
            ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "$rate" burst 32kbit \
                latency "$QLAT"
        fi
        tc qdisc add dev "xfv$k" root tbf rate "$rate" burst 32kbit latency "$QLAT"
    fi
}

up() {
    local n=4 rate=200mbit delay="" rph=2 k
    while [ $# -gt 0 ]; do
        case $1 in
        --hosts) n=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        --delay) delay=$2; shift 2 ;;
        --ranks-per-host) rph=$2; shift 2 ;;
        *) die "up: unknown option $1" ;;
        esac
    done
    [[ $rph =~ ^[0-9]+$ ]] && [ "$rph" -ge 1 ] || die "--ranks-per-host must be >= 1"
    [ -z "$delay" ] || [[ $delay =~ ^[0-9.]+(us|ms|s)$ ]] || die "--delay: e.g. 100us or 2ms"
    [ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
    [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 64 ] || die "--hosts must be 1..64"
    down
    # a step that fails (no bridge or veth support, a qdisc this kernel lacks ...) leaves
    # nothing behind
    trap 'rc=$?; trap - ERR; echo "emucluster: up failed (exit $rc); removing what it made" >&2
          down; exit $rc' ERR
    mkdir -p "$STATE"
    ip link add "$BR" type bridge
    ip link set "$BR" up
    add_host 0 10.77.0.254 "" # head: runs mpirun, hosts no ranks
    if [ -n "$delay" ] &&
        ! ip netns exec ${PREFIX}0 tc qdisc add dev lo root netem delay "$delay" 2>/dev/null; then
        down
        die "--delay needs the kernel's netem queueing discipline (sch_netem), which this kernel lacks"
    fi
    for ((k = 1; k <= n; k++)); do
        add_host "$k" "10.77.0.$k" "$rate" "$delay"
    done
    echo "$n" >"$STATE/hosts"
    echo "$rate" >"$STATE/rate"
    echo "$rph" >"$STATE/ppn"
    cat >"$STATE/agent" <<'AGENT'
#!/bin/sh
# rsh agent: "agent HOST COMMAND..." runs COMMAND in the namespace of HOST under its hostname
host=$1
shift
k=${host##*.}
ns=xfh$k
exec ip netns exec "$ns" unshare --uts sh -c "hostname $ns && $*"
AGENT
    chmod +x "$STATE/agent"
    echo "emucluster: $n hosts (10.77.0.1-$n), links $rate each way${delay:+, $delay one way}; head 10.77.0.254"
}

run() {
    local ppn n np="" mpi=openmpi
    n=$(nhosts)
    ppn=$(cat "$STATE/ppn" 2>/dev/null || echo 2)
    [ "$n" -ge 1 ] || die "no cluster: run 'emucluster.sh up' first"
    while [ $# -gt 0 ]; do
        case $1 in
        --ppn) ppn=$2; shift 2 ;;
        --np) np=$2; shift 2 ;;
        --mpi) mpi=$2; shift 2 ;;
        --) shift; break ;;
        *) break ;;
        esac
    done
    [ $# -ge 1 ] || die "run: no command"
    if [ "$mpi" = mpich ]; then
        run_mpich "$n" "$ppn" "${np:-$((n * ppn))}" "$@"
        return
    fi
    [ "$mpi" = openmpi ] || die "run: --mpi must be openmpi or mpich"
    : >"$STATE/hostfile"
    for ((k = 1; k <= n; k++)); do
        echo "10.77.0.$k slots=$ppn" >>"$STATE/hostfile"
    done
    local pass=() v
    for v in LD_LIBRARY_PATH XFER_TRACE XFER_ALGORITHM XFER_HIER_SENDERS XFER_HIER_SYNC \
        XFER_TIMEOUT_MS XFER_NODE_SIZE XFER_NODE_MAP XFER_ALPHA XFER_BETA XFER_GAMMA XFER_TOPOLOGY; do
        if [ -n "${!v:-}" ]; then pass+=(-x "$v"); fi
    done
    # Open MPI: TCP between hosts (their eth0), shared memory within one; yield when idle (the
    # ranks outnumber the cores).
    ip netns exec ${PREFIX}0 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        mpirun.openmpi --hostfile "$STATE/hostfile" --map-by slot --oversubscribe \
        -np "${np:-$((n * ppn))}" --mca plm_rsh_agent "$STATE/agent" \
        --mca btl tcp,vader,self --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 \
        --mca mpi_yield_when_idle 1 --mca btl_vader_single_copy_mechanism none \
        "${pass[@]}" "$@"
}

# MPICH ch3:nemesis: hydra starts one proxy per host through the same agent; TCP on eth0
# between hosts, shared memory within one. The environment is passed on (hydra's default).
run_mpich() {
    local n=$1 ppn=$2 np=$3 prefix=${XFER_MPICH_CH3:-$HOME/.cache/libxfer/mpich-ch3} k
    shift 3
    [ -x "$prefix/bin/mpiexec.hydra" ] ||
        die "run --mpi mpich: no MPICH ch3 build in $prefix (bash bench/mpich-ch3.sh builds one)"
    : >"$STATE/hostfile.hydra"
    for ((k = 1; k <= n; k++)); do
        echo "10.77.0.$k:$ppn" >>"$STATE/hostfile.hydra"
    done
    ip netns exec ${PREFIX}0 "$prefix/bin/mpiexec.hydra" -f "$STATE/hostfile.hydra" \
        -launcher rsh -launcher-exec "$STATE/agent" -iface eth0 -n "$np" "$@"
}

case ${1:-} in
up) shift; up "$@" ;;
down) down ;;
run) shift; run "$@" ;;
*) die "usage: emucluster.sh up [--hosts N] [--rate R] [--delay D] [--ranks-per-host K] | run [--mpi openmpi|mpich] [--ppn K] [--np M] [--] CMD... | down" ;;
esac
