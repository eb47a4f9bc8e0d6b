! SPDX-License-Identifier: BSD-3-Clause
! Built against libxfer's Fortran module from outside its tree (the build tree or an install;
! CMake package and pkg-config): each rank's share of a decomposition, summed over the ranks.
program fconsumer
    use mpi
    use xfer
    use, intrinsic :: iso_c_binding, only: c_int64_t
    implicit none
    integer(c_int64_t) :: start(2), count(2)
    integer :: ierr, rank, nranks, rows
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
    call xfer_decompose(XFER_SELECT_ROWS, [8_c_int64_t, 10_c_int64_t], nranks, rank, start, &
                        count)
    if (count(1) /= 8) error stop 'xfer_decompose'
    if (xfer_status_name(XFER_ERR_MISMATCH) /= 'XFER_ERR_MISMATCH') error stop 'status names'
    call MPI_Allreduce(int(count(2)), rows, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rows /= 10) error stop 'the ranks rows do not add up'
    if (rank == 0) print '(a,i0,a)', 'fconsumer: the Fortran module xfer on ', nranks, &
                         ' ranks: ok'
    call MPI_Finalize(ierr)
end program fconsumer
