! SPDX-License-Identifier: BSD-3-Clause
! The quickstart's producer in Fortran (docs/quickstart.md): my_sim.c's T, 64 x 128 float64 in
! the workflow file, is the Fortran array t(128, 64) (column-major: the dims reversed); each rank
! puts its rows, t(:, row0+1 : row0+nrows), every step.
program my_sim_f
    use mpi
    use xfer
    use, intrinsic :: iso_fortran_env, only: int64, real64
    implicit none
    integer, parameter :: nx = 128, ny = 64, nsteps = 3
    type(xfer_t) :: x
    type(xfer_channel_t) :: ch
    integer(int64) :: start(2), count(2), row0, nrows
    real(real64), allocatable :: t(:, :)
    integer :: ierr, comm, rank, nranks, step, status, i, j

    call MPI_Init(ierr)
    call xfer_init(x)                            ! the file and component xfer-run gives
    call xfer_channel_open(x, 'fields', ch)
    call xfer_comm(x, comm)                      ! this component's ranks
    call MPI_Comm_rank(comm, rank, ierr)
    call MPI_Comm_size(comm, nranks, ierr)
    call xfer_decompose(XFER_SELECT_ROWS, [int(nx, int64), int(ny, int64)], nranks, rank, &
                        start, count)            ! Fortran order: ROWS splits the last dimension
    row0 = start(2)
    nrows = count(2)
    allocate (t(nx, nrows))
    do step = 0, nsteps - 1
        do j = 1, int(nrows)
            do i = 1, nx
                t(i, j) = 1d6*step + real((row0 + j - 1)*nx + (i - 1), real64)
            end do
        end do
        call xfer_step_begin(ch, -1, status)
        if (status == XFER_STEP_END_OF_STREAM) exit
        call xfer_put(ch, 'T', t, start=[0_int64, row0])
        call xfer_step_end(ch)                   ! no ierr: a failure prints why and stops
    end do
    print '(a,i0,a,i0,a,i0,a,i0,a)', 'sim rank ', rank, ': rows ', row0, '-', row0 + nrows - 1, &
        ', ', step, ' steps put (Fortran)'
    call xfer_finalize(x)
    call MPI_Finalize(ierr)
end program my_sim_f
