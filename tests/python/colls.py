#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""colls.py: xfer.allgather_inter / allgatherv_inter on numpy buffers.

    mpiexec -n N python3 colls.py [--mpi4py] [--p P]

The world splits into groups of P and N - P ranks joined by an intercommunicator: made by
xfer.intercomm_create (no mpi4py needed) or, with --mpi4py, by mpi4py and passed as is. For
every algorithm that takes the shape, allgather in full and half duplex and allgatherv with
uneven counts (also non-contiguous send and receive arrays) must give every rank the other
group's blocks in rank order, byte for byte; with --mpi4py also what mpi4py's own
Intercomm.Allgather(v) gives. Bad buffers raise InvalidArgumentError, an intracommunicator
XferError (XFER_ERR_NOT_INTERCOMM).
"""
import sys

import numpy as np

import xfer


def fail(msg):
    print(f"colls.py: rank {WRANK}: FAILED: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def block(group, rank, n, dtype):
    return (np.arange(n) * 7 + 1000 * group + rank).astype(dtype)


def main():
    global WRANK
    use_mpi4py = "--mpi4py" in sys.argv
    p = int(sys.argv[sys.argv.index("--p") + 1]) if "--p" in sys.argv else 2
    if use_mpi4py:
        from mpi4py import MPI
        world = MPI.COMM_WORLD
        WRANK, wsize = world.Get_rank(), world.Get_size()
        group = int(WRANK >= p)
        local = world.Split(group, WRANK)
        inter = local.Create_intercomm(0, world, p if group == 0 else 0, 11)
        lrank, rsize = local.Get_rank(), inter.Get_remote_size()
    else:
        world = xfer.Comm.world()
        WRANK, wsize = world.rank, world.size
        group = int(WRANK >= p)
        local = world.split(group, WRANK)
        inter = xfer.intercomm_create(local, 0, world, p if group == 0 else 0, 11)
        lrank, rsize = local.rank, xfer.Comm(inter).remote_size
        if not xfer.Comm(inter).is_inter or xfer.Comm(local).is_inter:
            fail("intercommunicator flags")
    other = 1 - group
    algos = ["auto"] + [a["name"] for a in xfer.algorithms()]
    n = 5 + 3 * group  # the groups' block sizes differ
    checked = 0
    for algo in algos:
        half_only = algo != "auto" and "half_only" in next(
            a["flags"] for a in xfer.algorithms() if a["name"] == algo)
        for duplex in ("half",) if half_only else ("full", "half"):
            for dtype in (np.float64, np.int16):
                send = block(group, lrank, n, dtype)
                m = 5 + 3 * other
                sends = duplex == "full" or group == 0
                recvs = duplex == "full" or group == 1
                recv = np.full(rsize * m, -1, dtype) if recvs else None
                try:
                    xfer.allgather_inter(send if sends else None, recv, inter, algorithm=algo)
                except xfer.XferError as e:
                    if e.name == "XFER_ERR_NOT_SUPPORTED":
                        continue
                    fail(f"{algo} {duplex}: {e}")
                if recvs:
                    want = np.concatenate([block(other, r, m, dtype) for r in range(rsize)])
                    if recv.tobytes() != want.tobytes():
                        fail(f"allgather {algo} {duplex} {np.dtype(dtype)}: differs")
                    if use_mpi4py and duplex == "full":
                        ref = np.empty_like(recv)
                        inter.Allgather(send, ref)
                        if ref.tobytes() != recv.tobytes():
                            fail(f"allgather {algo}: differs from mpi4py's Allgather")
                    checked += recv.size
        # allgatherv, full duplex, uneven counts, into a strided array
        counts = [1 + ((r * 3 + other) % 4) for r in range(rsize)]
        mine = 1 + ((lrank * 3 + group) % 4)
        if half_only:
            continue
        send = np.repeat(block(group, lrank, mine, np.int32), 2)[::2]  # non-contiguous
        big = np.full(2 * sum(counts), -1, np.int32)
        recv = big[::2]
        try:
            xfer.allgatherv_inter(send, recv, counts, inter, algorithm=algo)
        except xfer.XferError as e:
            if e.name == "XFER_ERR_NOT_SUPPORTED":
                continue
            fail(f"allgatherv {algo}: {e}")
        want = np.concatenate([block(other, r, c, np.int32) for r, c in enumerate(counts)])
        if recv.tobytes() != want.tobytes() or (big[1::2] != -1).any():
            fail(f"allgatherv {algo}: differs")
        if use_mpi4py:
            ref = np.empty(sum(counts), np.int32)
            inter.Allgatherv(np.ascontiguousarray(send), [ref, counts])
            if ref.tobytes() != np.ascontiguousarray(recv).tobytes():
                fail(f"allgatherv {algo}: differs from mpi4py's Allgatherv")
        checked += recv.size
    # the component-side reduction the analyses use without mpi4py
    lc = xfer.Comm(local)
    got = lc.allreduce(np.array([lrank, -lrank, 1.5], np.float64), "sum")
    n_l = lc.size
    if got.tolist() != [n_l * (n_l - 1) / 2, -n_l * (n_l - 1) / 2, 1.5 * n_l]:
        fail(f"allreduce sum: {got}")
    if lc.allreduce(np.array([lrank], np.int64), "max")[0] != n_l - 1 or \
            lc.allreduce(np.array([lrank + 5], np.uint64), "min")[0] != 5:
        fail("allreduce min/max")
    # bad input, on every rank (nothing is sent: the checks come before communication), from
    # int32 elements whatever the last algorithm's loop left in send
    send = block(group, lrank, 3, np.int32)
    try:
        xfer.allgather_inter(send, np.zeros(rsize * 3 + 1, np.int32), inter)
        fail("a recvbuf not a multiple of the remote size was accepted")
    except xfer.InvalidArgumentError as e:
        if "multiple" not in str(e):
            fail(f"message: {e}")
    try:
        xfer.allgather_inter(send, np.zeros(4, np.int32), local)
        fail("an intracommunicator was accepted")
    except xfer.XferError as e:
        if e.name != "XFER_ERR_NOT_INTERCOMM":
            fail(f"intracommunicator: {e.name}")
    ro = np.zeros(rsize, np.int32)
    ro.flags.writeable = False
    try:
        xfer.allgather_inter(send[:1], ro, inter)
        fail("a read-only recvbuf was accepted")
    except xfer.InvalidArgumentError:
        pass
    if WRANK == 0:
        print(f"colls.py: {len(algos)} algorithms, {checked} elements checked on rank 0"
              f"{' against mpi4py' if use_mpi4py else ''}: ok", flush=True)
    if not use_mpi4py:
        xfer.Comm(inter).free()
        local.free()


WRANK = -1
if __name__ == "__main__":
    main()
