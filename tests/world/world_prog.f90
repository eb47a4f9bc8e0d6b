! SPDX-License-Identifier: BSD-3-Clause
! The Fortran twin of world_prog.c (tests/world/world_test.sh): an unmodified program (use mpi)
! that uses MPI_COMM_WORLD throughout; rank 0 prints one line that depends on the size only.
program world_prog
  use mpi
  implicit none
  integer :: ierr, rank, size, total, biggest, left, right, got, dup, half, hsize, cmp, failures
  integer(kind=8) :: token
  integer :: status(MPI_STATUS_SIZE)

  failures = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total /= size * (size - 1) / 2) failures = failures + 1
  call MPI_Reduce(rank, biggest, 1, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. biggest /= size - 1) failures = failures + 1
  token = 0
  if (rank == 0) token = 4242
  call MPI_Bcast(token, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD, ierr)
  if (token /= 4242) failures = failures + 1
  left = modulo(rank - 1, size)
  right = modulo(rank + 1, size)
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, right, 7, got, 1, MPI_INTEGER, left, 7, &
                    MPI_COMM_WORLD, status, ierr)
  if (got /= left) failures = failures + 1
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_compare(MPI_COMM_WORLD, dup, cmp, ierr)
  if (cmp /= MPI_CONGRUENT) failures = failures + 1
  call MPI_Comm_split(MPI_COMM_WORLD, modulo(rank, 2), rank, half, ierr)
  call MPI_Comm_size(half, hsize, ierr)
  if (hsize /= (size + 1 - modulo(rank, 2)) / 2) failures = failures + 1
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a,i0,a,i0)', 'world_fprog: ', size, ' ranks, sum ', total, &
    ', max ', biggest, ', failures ', failures
  call MPI_Comm_free(half, ierr)
  call MPI_Comm_free(dup, ierr)
  call MPI_Finalize(ierr)
  if (failures /= 0) stop 1
end program world_prog
