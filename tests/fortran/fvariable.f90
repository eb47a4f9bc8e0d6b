! SPDX-License-Identifier: BSD-3-Clause
!> fvariable: datasets of variable shape through the Fortran module, either side of a channel.
!!
!!     fvariable COMPONENT [corrupt]
!!
!! The Fortran twin of tests/python/variable.py (same datasets, shapes and values, so the two
!! pair in either direction): it plays COMPONENT (a sends, b receives) of channel c of
!!
!!     g      int32 [variable, 4], block       here g(4, rows): Fortran order
!!     y      float64 [variable], rows         y(n)
!!     m      float32 [variable, variable], block
!!                                              m(cols, rows)
!!     parts  {id: int64, pos: [float64, 3], q: float32, kind: int8} [variable], rows
!!                                              parts(n), of the bind(c) derived type particle
!!
!! Each step's shape grows and shrinks (0 rows in step 2, 0 columns of m in step 3); every value
!! comes from the step and its global C-order position. The sending ranks split each step (g and
!! parts by rows, m by blocks, y wholly on rank 0, the others putting an empty block in odd
!! steps) and put with dims, the step's global shape in Fortran order. Step 0 tries the bad puts
!! first (a start without dims, dims of the wrong rank, another fixed extent, a block outside
!! the shape, a block without its start) and step 1 the three commits a variable shape refuses
!! on every sending rank (two shapes, overlapping blocks, a hole), before the step is put right.
!! A receiving rank compares xfer_get_shape with its mode over the step's shape
!! (xfer_decompose), xfer_selection once the step is there, and every element and field of
!! what it gets; an array of the wrong shape is refused. corrupt: sender rank 0 changes one
!! value of g in step 3 (the receiver must fail).
program fvariable
    use mpi
    use xfer
    use, intrinsic :: iso_c_binding
    use, intrinsic :: iso_fortran_env, only: error_unit
    implicit none

    type, bind(c) :: particle
        integer(c_int64_t) :: id
        real(c_double) :: pos(3)
        real(c_float) :: q
        integer(c_int8_t) :: kind
    end type particle

    integer, parameter :: STEPS = 6
    integer(c_int64_t), parameter :: ROWS(0:STEPS - 1) = [5, 9, 0, 3, 12, 1]
    integer(c_int64_t), parameter :: COLS(0:STEPS - 1) = [3, 1, 4, 0, 2, 5]
    integer(c_int64_t), parameter :: ZERO = 0
    type(xfer_t) :: x
    type(xfer_channel_t) :: ch
    character(len=64) :: me, arg, dname
    logical :: corrupt, sent, differs = .false.
    character(len=64) :: last_differs = ''
    integer :: ierr, comm, rank, nranks, s, i, nds, typ, nd
    integer(c_int64_t) :: dims(XFER_MAX_DIMS)
    integer(c_size_t) :: offsets(4)
    type(particle) :: sample

    call MPI_Init(ierr)
    call get_command_argument(1, me)
    corrupt = .false.
    do i = 2, command_argument_count()
        call get_command_argument(i, arg)
        if (trim(arg) == 'corrupt') corrupt = .true.
    end do
    call xfer_init(x, component=trim(me))
    call xfer_comm(x, comm)
    call MPI_Comm_rank(comm, rank, ierr)
    call MPI_Comm_size(comm, nranks, ierr)
    call xfer_channel_open(x, 'c', ch)

    call xfer_dataset_count(ch, nds)
    call expect(nds == 4, 'four datasets')
    do i = 1, nds
        call xfer_dataset_info(ch, i, dname, typ, nd, dims, sent)
        select case (trim(dname))
        case ('g')
            call expect(nd == 2 .and. dims(1) == 4 .and. dims(2) == 0, 'g: dims (4, 0): variable')
        case ('m')
            call expect(nd == 2 .and. all(dims(1:2) == 0), 'm: dims (0, 0): variable')
        case ('parts')
            call expect(typ == XFER_TYPE_RECORD .and. nd == 1, 'parts is a record')
        end select
    end do
    offsets = [xfer_offset(sample, sample%id), xfer_offset(sample, sample%pos(1)), &
               xfer_offset(sample, sample%q), xfer_offset(sample, sample%kind)]

    do s = 0, STEPS - 1
        if (trim(me) == 'a') then
            call send_step(s)
        else
            call recv_step(s)
        end if
    end do
    call xfer_finalize(x)
    call MPI_Finalize(ierr)
    if (differs) error stop 1

contains

    !> A value check: a difference is reported (once per step and dataset) and the run goes on to
    !! its end, which then fails; the words reach the test whatever the launcher does with an
    !! abort's output (hydra may drop what a rank wrote just before MPI_Abort).
    subroutine expect_value(cond, what)
        logical, intent(in) :: cond
        character(len=*), intent(in) :: what
        if (cond) return
        if (what /= last_differs) then
            write (error_unit, '(a, a, a, i0, a, a)') 'fvariable: ', trim(me), ' rank ', rank, &
                ': FAILED: ', what
            flush (error_unit)
            last_differs = what
        end if
        differs = .true.
    end subroutine expect_value

    subroutine expect(cond, what)
        logical, intent(in) :: cond
        character(len=*), intent(in) :: what
        if (.not. cond) then
            write (error_unit, '(a, a, a, i0, a, a)') 'fvariable: ', trim(me), ' rank ', rank, &
                ': FAILED: ', what
            flush (error_unit)
            call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
        end if
    end subroutine expect

    !> A call that must fail: status st, words containing word.
    subroutine refused(st, want, word, what)
        integer, intent(in) :: st, want
        character(len=*), intent(in) :: word, what
        call expect(st == want, what//': status '//xfer_status_name(st)//', want '// &
                    xfer_status_name(want)//' ('//xfer_error_message()//')')
        call expect(index(xfer_error_message(), word) > 0, &
                    what//': "'//xfer_error_message()//'" lacks "'//word//'"')
    end subroutine refused

    !> "[0:9, 0:4]": libxfer's words for a shape of C-order extents a and b.
    function box(a, b) result(w)
        integer(c_int64_t), intent(in) :: a, b
        character(len=:), allocatable :: w
        character(len=64) :: buf
        write (buf, '(a, i0, a, i0, a)') '[0:', a, ', 0:', b, ']'
        w = trim(buf)
    end function box

    ! ---- the values: variable.py's, at each element's global C-order position -----------------

    integer(c_int32_t) function g_at(st, r, c)
        integer, intent(in) :: st
        integer(c_int64_t), intent(in) :: r, c
        g_at = int(int(st, c_int64_t)*10000 + r*4 + c, c_int32_t)
    end function g_at

    real(c_double) function y_at(st, r)
        integer, intent(in) :: st
        integer(c_int64_t), intent(in) :: r
        y_at = real(st, c_double)*100.0_c_double + real(r, c_double) + 0.5_c_double
    end function y_at

    real(c_float) function m_at(st, r, c)
        integer, intent(in) :: st
        integer(c_int64_t), intent(in) :: r, c
        m_at = real(real(int(st, c_int64_t)*1000 + r*10 + c, c_double) + 0.25_c_double, c_float)
    end function m_at

    type(particle) function part_at(st, r)
        integer, intent(in) :: st
        integer(c_int64_t), intent(in) :: r
        part_at%id = int(st, c_int64_t)*1000 + r
        part_at%pos = [real(r, c_double)*0.5_c_double, -real(r, c_double), real(st, c_double)]
        part_at%q = real(real(r, c_double)/4.0_c_double, c_float)
        part_at%kind = int(mod(r, 100_c_int64_t) - 50, c_int8_t)
    end function part_at

    logical function same(a, b)
        type(particle), intent(in) :: a, b
        same = a%id == b%id .and. all(a%pos == b%pos) .and. a%q == b%q .and. a%kind == b%kind
    end function same

    ! ---- sending side -------------------------------------------------------------------------

    !> g's rows [r0, r0 + n) of step st, put with the step's shape (Fortran order) fdims.
    subroutine put_g(st, r0, n, fdims, e, bad)
        integer, intent(in) :: st
        integer(c_int64_t), intent(in) :: r0, n, fdims(2)
        integer, intent(out), optional :: e
        logical, intent(in), optional :: bad
        integer(c_int32_t), allocatable :: g(:, :)
        integer(c_int64_t) :: i, c
        allocate (g(4, n))
        do i = 1, n
            do c = 1, 4
                g(c, i) = g_at(st, r0 + i - 1, c - 1)
            end do
        end do
        if (present(bad)) then
            if (bad .and. n > 0) g(4, n) = g(4, n) + 1
        end if
        call xfer_put(ch, 'g', g, start=[ZERO, r0], dims=fdims, ierr=e)
    end subroutine put_g

    !> This sending rank's rows of g in step st.
    subroutine g_rows(st, r, r0, n)
        integer, intent(in) :: st, r
        integer(c_int64_t), intent(out) :: r0, n
        integer(c_int64_t) :: a(2), c(2)
        call xfer_decompose(XFER_SELECT_ROWS, [4_c_int64_t, ROWS(st)], nranks, r, a, c)
        r0 = a(2)
        n = c(2)
    end subroutine g_rows

    subroutine bad_puts()
        integer(c_int32_t) :: two(4, 2), wide(5, 2)
        integer(c_int64_t) :: n
        integer :: st
        character(len=64) :: w
        two = 0
        wide = 0
        n = ROWS(0)
        call xfer_put(ch, 'g', two, start=[ZERO, ZERO], ierr=st)
        call refused(st, XFER_ERR_INVALID_ARG, 'dataset g has a variable shape, (4, variable)', &
                     'g at a start without dims')
        call xfer_put(ch, 'g', two, start=[ZERO, ZERO], dims=[n], ierr=st)
        call refused(st, XFER_ERR_INVALID_ARG, 'dims has 1 entries', 'g with dims of 1 entry')
        call xfer_put(ch, 'g', wide, start=[ZERO, ZERO], dims=[5_c_int64_t, n], ierr=st)
        write (w, '(a, i0, a)') 'dataset g: step 0: rank ', rank, ' puts int32'
        call refused(st, XFER_ERR_MISMATCH, trim(w)//box(n, 5_c_int64_t)// &
                     ', the workflow file declares int32[variable, 4]', 'g of 5 columns')
        call xfer_put(ch, 'g', two, start=[ZERO, n - 1], dims=[4_c_int64_t, n], ierr=st)
        call refused(st, XFER_ERR_INVALID_ARG, 'exceeds its size', 'g outside the shape')
        call xfer_put(ch, 'g', two, dims=[4_c_int64_t, n], ierr=st)
        call refused(st, XFER_ERR_INVALID_ARG, "is part of the step's shape (4, ", &
                     'g without its start')
    end subroutine bad_puts

    !> Step 1: the three commits a variable shape refuses, on every sending rank alike.
    subroutine refusals()
        integer(c_int64_t) :: r0, n, n0, a1, n1, nr
        character(len=200) :: w
        integer :: st
        call g_rows(1, rank, r0, n)
        call g_rows(1, 0, a1, n0)
        call g_rows(1, 1, a1, n1)
        nr = ROWS(1)
        ! the last rank says one row more than the others
        if (rank == nranks - 1) then
            call put_g(1, r0, n, [4_c_int64_t, nr + 1])
        else
            call put_g(1, r0, n, [4_c_int64_t, nr])
        end if
        call xfer_step_end(ch, ierr=st)
        write (w, '(a, i0, a)') 'dataset g: step 1: rank ', nranks - 1, ' of a puts it with shape '
        call refused(st, XFER_ERR_MISMATCH, trim(w)//' '//box(nr + 1, 4_c_int64_t)// &
                     ', rank 0 with '//box(nr, 4_c_int64_t), 'two shapes')
        ! rank 0 reaches one row into rank 1's block
        if (rank == 0) then
            call put_g(1, r0, n + 1, [4_c_int64_t, nr])
        else
            call put_g(1, r0, n, [4_c_int64_t, nr])
        end if
        call xfer_step_end(ch, ierr=st)
        write (w, '(a, i0, a, i0, a, i0, a)') 'dataset g: step 1: the block of a rank 1 [', a1, &
            ':', a1 + n1, ', 0:4] overlaps the block of rank 0 [0:', n0 + 1, ', 0:4]'
        call refused(st, XFER_ERR_INVALID_ARG, trim(w), 'overlapping blocks')
        ! rank 0 leaves its last row out
        if (rank == 0) then
            call put_g(1, r0, n - 1, [4_c_int64_t, nr])
        else
            call put_g(1, r0, n, [4_c_int64_t, nr])
        end if
        call xfer_step_end(ch, ierr=st)
        write (w, '(a, i0, a, i0, a, i0, a)') "dataset g: step 1: the blocks of a's ", nranks, &
            ' ranks hold ', (nr - 1)*4, ' of the ', nr*4, ' elements of its shape '
        call refused(st, XFER_ERR_INVALID_ARG, trim(w)//' '//box(nr, 4_c_int64_t), 'a hole')
    end subroutine refusals

    subroutine send_step(st)
        integer, intent(in) :: st
        real(c_double), allocatable :: y(:)
        real(c_float), allocatable :: m(:, :)
        type(particle), allocatable :: parts(:)
        integer(c_int64_t) :: r0, n, i, j, a(2), c(2), a1(1), c1(1), md(2)
        integer :: status
        call xfer_step_begin(ch, -1, status)
        call expect(status == XFER_STEP_OK, 'a step begins')
        if (st == 0) call bad_puts()
        if (st == 1) call refusals()
        call g_rows(st, rank, r0, n)
        call put_g(st, r0, n, [4_c_int64_t, ROWS(st)], bad=corrupt .and. rank == 0 .and. st == 3)
        if (rank == 0) then ! the whole step: no start, no dims
            allocate (y(st + 1))
            do i = 1, st + 1
                y(i) = y_at(st, i - 1)
            end do
            call xfer_put(ch, 'y', y)
        else if (mod(st, 2) == 1) then ! an empty block, which says the shape too
            allocate (y(0))
            call xfer_put(ch, 'y', y, start=[ZERO], dims=[int(st + 1, c_int64_t)])
        end if
        md = [COLS(st), ROWS(st)]
        call xfer_decompose(XFER_SELECT_BLOCK, md, nranks, rank, a, c)
        allocate (m(c(1), c(2)))
        do i = 1, c(2)
            do j = 1, c(1)
                m(j, i) = m_at(st, a(2) + i - 1, a(1) + j - 1)
            end do
        end do
        call xfer_put(ch, 'm', m, start=a, dims=md)
        call xfer_decompose(XFER_SELECT_ROWS, [ROWS(st) + 2], nranks, rank, a1, c1)
        allocate (parts(c1(1)))
        do i = 1, c1(1)
            parts(i) = part_at(st, a1(1) + i - 1)
        end do
        call xfer_put(ch, 'parts', parts, start=a1, dims=[ROWS(st) + 2], offsets=offsets)
        call xfer_step_end(ch)
    end subroutine send_step

    ! ---- receiving side -----------------------------------------------------------------------

    !> xfer_get_shape and xfer_selection of dataset name against mode over the step's shape fd
    !! (Fortran order); this rank's (start, count) out.
    subroutine check_shape(name, st, mode, fd, a, c)
        character(len=*), intent(in) :: name
        integer, intent(in) :: st, mode
        integer(c_int64_t), intent(in) :: fd(:)
        integer(c_int64_t), intent(out) :: a(:), c(:)
        integer(c_int64_t) :: d(XFER_MAX_DIMS), ga(XFER_MAX_DIMS), gc(XFER_MAX_DIMS), step
        integer(c_int64_t) :: sa(XFER_MAX_DIMS), sc(XFER_MAX_DIMS)
        integer :: ndims, k
        character(len=160) :: where
        k = size(fd)
        write (where, '(a, a, i0)') name, ' step ', st
        call xfer_decompose(mode, fd, nranks, rank, a, c)
        call xfer_get_shape(ch, name, d, ga, gc, ndims, step)
        call expect(ndims == k .and. all(d(1:k) == fd) .and. all(ga(1:k) == a) .and. &
                    all(gc(1:k) == c) .and. step == st, trim(where)//': get_shape')
        call xfer_selection(ch, name, sa, sc)
        call expect(all(sa(1:k) == a) .and. all(sc(1:k) == c), trim(where)//': xfer_selection')
    end subroutine check_shape

    subroutine recv_step(st)
        integer, intent(in) :: st
        integer(c_int32_t), allocatable :: g(:, :)
        real(c_double), allocatable :: y(:)
        real(c_float), allocatable :: m(:, :)
        type(particle), allocatable :: parts(:)
        integer(c_int64_t) :: a(2), c(2), a1(1), c1(1), i, j
        integer :: status, e
        character(len=32) :: w
        write (w, '(a, i0, a)') ' step ', st, ': data differs'
        call xfer_step_begin(ch, -1, status)
        call expect(status == XFER_STEP_OK, 'a step begins')
        call check_shape('g', st, XFER_SELECT_BLOCK, [4_c_int64_t, ROWS(st)], a, c)
        allocate (g(c(1), c(2) + 1))
        call xfer_get(ch, 'g', g, ierr=e) ! one row too many
        call refused(e, XFER_ERR_INVALID_ARG, "step's selection", 'g into one row too many')
        call xfer_get(ch, 'g', g(:, 1:c(2)))
        do i = 1, c(2)
            do j = 1, c(1)
                call expect_value(g(j, i) == g_at(st, a(2) + i - 1, a(1) + j - 1), 'g'//trim(w))
            end do
        end do
        call check_shape('y', st, XFER_SELECT_ROWS, [int(st + 1, c_int64_t)], a1, c1)
        allocate (y(c1(1)))
        call xfer_get(ch, 'y', y)
        do i = 1, c1(1)
            call expect_value(y(i) == y_at(st, a1(1) + i - 1), 'y'//trim(w))
        end do
        call check_shape('m', st, XFER_SELECT_BLOCK, [COLS(st), ROWS(st)], a, c)
        allocate (m(c(1), c(2)))
        call xfer_get(ch, 'm', m)
        do i = 1, c(2)
            do j = 1, c(1)
                call expect_value(m(j, i) == m_at(st, a(2) + i - 1, a(1) + j - 1), 'm'//trim(w))
            end do
        end do
        call check_shape('parts', st, XFER_SELECT_ROWS, [ROWS(st) + 2], a1, c1)
        allocate (parts(c1(1)))
        call xfer_get(ch, 'parts', parts, offsets=offsets)
        do i = 1, c1(1)
            call expect_value(same(parts(i), part_at(st, a1(1) + i - 1)), 'parts'//trim(w))
        end do
        call xfer_step_end(ch)
    end subroutine recv_step

end program fvariable
