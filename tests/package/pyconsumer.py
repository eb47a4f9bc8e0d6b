# SPDX-License-Identifier: BSD-3-Clause
# Run against an installed Python package xfer (tests/package: CMake's install, pip's):
# prints where xfer was imported from; with --mpi, under mpiexec with 2 or more ranks, the two
# halves of the world exchange their ranks with xfer.allgather_inter (no mpi4py needed).
import sys

import numpy as np

import xfer

assert xfer.decompose("rows", (4, 2), 2, 1) == ((2, 0), (2, 2))
if "--mpi" not in sys.argv:
    print(xfer.__file__)
    sys.exit(0)
world = xfer.Comm.world()
rank, size = world.rank, world.size
half = size // 2
low = rank < half
local = world.split(int(low), rank)
inter = xfer.intercomm_create(local, 0, world, half if low else 0, 7)
got = xfer.allgather_inter(np.array([rank], np.int32), np.empty(size - local.size, np.int32),
                           inter)
ok = list(got) == list(range(half, size) if low else range(half))
bad = world.allreduce(np.array([0 if ok else 1], np.int32), "max")[0]
if rank == 0:
    print(f"pyconsumer: xfer from {xfer.__file__}")
    print(f"pyconsumer: xfer.allgather_inter on {size} ranks: {'WRONG' if bad else 'ok'}")
sys.exit(1 if bad else 0)
