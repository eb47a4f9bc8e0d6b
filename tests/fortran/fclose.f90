! SPDX-License-Identifier: BSD-3-Clause
!> fclose: a Fortran reader of close_prog's channels c1 and c2 (tests/runtime/close_prog.c), which
!! closes c1 early (xfer_channel_close) and reads c2 to its end.
!!
!!     mpiexec -n P close_prog --closer reader : -n Q fclose
!!
!! Each step it reads c1 and c2 (int64 v, 8 elements per sending rank, channel * 1e9 + step * 1e6
!! + global index: every element of its selection checked); after 4 steps it closes c1, checks that
!! the handle was reset and that closing it again is XFER_ERR_INVALID_ARG, then reads c2 until the
!! end of the stream: 12 steps in all. Prints "fclose: b rank R: c1: 4 steps, c2: 12 steps".
program fclose
    use mpi
    use xfer
    use, intrinsic :: iso_c_binding
    use, intrinsic :: iso_fortran_env, only: error_unit
    implicit none

    integer, parameter :: at = 4, steps = 12
    type(xfer_t) :: x
    type(xfer_channel_t) :: c1, c2
    integer :: ierr, comm, rank, n1, n2
    logical :: more

    call MPI_Init(ierr)
    call xfer_init(x)
    call xfer_comm(x, comm)
    call MPI_Comm_rank(comm, rank, ierr)
    call xfer_channel_open(x, 'c1', c1)
    call xfer_channel_open(x, 'c2', c2)
    n1 = 0
    n2 = 0
    do while (n1 < at)
        call read_step(c1, 0, n1, more)
        if (.not. more) call fail('c1 ended early')
        call read_step(c2, 1, n2, more)
        if (.not. more) call fail('c2 ended early')
    end do
    call xfer_channel_close(c1)
    if (c_associated(c1%h)) call fail('the handle was not reset by the close')
    call xfer_channel_close(c1, ierr)
    if (ierr /= XFER_ERR_INVALID_ARG) call fail('a second close did not say XFER_ERR_INVALID_ARG')
    more = .true.
    do while (more)
        call read_step(c2, 1, n2, more)
    end do
    if (n2 /= steps) call fail('c2 did not bring every step')
    write (*, '(a, i0, a, i0, a, i0, a)') 'fclose: b rank ', rank, ': c1: ', n1, ' steps, c2: ', &
        n2, ' steps'
    flush (6)
    call xfer_finalize(x)
    call MPI_Finalize(ierr)

contains

    subroutine fail(what)
        character(len=*), intent(in) :: what
        write (error_unit, '(a, i0, 2a)') 'fclose: b rank ', rank, ': FAILED: ', what
        flush (error_unit)
        error stop 1
    end subroutine fail

    !> The next step of channel ch (index c: 0 for c1), every element checked; more is false at
    !! the end of the stream. n counts the steps read.
    subroutine read_step(ch, c, n, more)
        type(xfer_channel_t), intent(in) :: ch
        integer, intent(in) :: c
        integer, intent(inout) :: n
        logical, intent(out) :: more
        integer :: status, i
        integer(c_int64_t) :: dims(1), start(1), count(1), step
        integer(c_int64_t), allocatable :: v(:)
        call xfer_step_begin(ch, -1, status)
        more = status /= XFER_STEP_END_OF_STREAM
        if (.not. more) return
        call xfer_get_shape(ch, 'v', dims, start, count, step=step)
        if (step /= n) call fail('a step out of order')
        allocate (v(count(1)))
        call xfer_get(ch, 'v', v)
        do i = 1, int(count(1))
            if (v(i) /= (c + 1) * 1000000000_c_int64_t + step * 1000000_c_int64_t + start(1) &
                + i - 1) call fail('data differs')
        end do
        deallocate (v)
        call xfer_step_end(ch)
        n = n + 1
    end subroutine read_step
end program fclose
