# SPDX-License-Identifier: BSD-3-Clause
"""The mpi4py twin of world_prog.c (tests/world/world_test.sh): MPI.COMM_WORLD throughout; rank
0 prints one line that depends on the size only."""
from mpi4py import MPI

w = MPI.COMM_WORLD
rank, size = w.Get_rank(), w.Get_size()
failures = 0
total = w.allreduce(rank)
failures += total != size * (size - 1) // 2
gathered = w.allgather(rank)
failures += gathered != list(range(size))
token = w.bcast(4242 if rank == 0 else None, root=0)
failures += token != 4242
got = w.sendrecv(rank, dest=(rank + 1) % size, source=(rank - 1) % size)
failures += got != (rank - 1) % size
dup = w.Dup()
failures += MPI.Comm.Compare(w, dup) != MPI.CONGRUENT
half = w.Split(rank % 2, rank)
failures += half.Get_size() != (size + 1 - rank % 2) // 2
failures = w.allreduce(failures)
if rank == 0:
    print(f"world_prog.py: {size} ranks, sum {total}, failures {failures}", flush=True)
half.Free()
dup.Free()
raise SystemExit(1 if failures else 0)
