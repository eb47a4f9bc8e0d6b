! SPDX-License-Identifier: BSD-3-Clause
!> fjoined: joined and record datasets through the Fortran module, either side of a channel.
!!
!!     fjoined COMPONENT [STEPS] [all|rows]
!!
!! The Fortran twin of tests/python/joined.py (same datasets, rows and values, so the two pair
!! in either direction): it plays COMPONENT (a sends, b receives) of channel c, whichever of
!! these datasets the channel declares:
!!
!!     p      float64 [joined, 3]       here p(3, rows): the rows are the LAST Fortran dimension
!!     ids    int32 [joined]            ids(rows)
!!     parts  {id: int64, pos: [float64, 3], q: float32, kind: int8} [joined]
!!                                      parts(rows), of the bind(c) derived type particle
!!     grid   the same record, [7]      each sending rank puts its rows of it
!!
!! Each step every sending rank puts rows_of(rank, step + j) rows of joined dataset j, values
!! computed from the step and the row's global index. A receiving rank computes the step's
!! rows, each sender's rows and its share (all, or the near-equal contiguous share of rows: the
!! third argument, the channel's selection) and compares xfer_get_shape, xfer_get_rows and every
!! element and field with them. The record's layout is given as offsets (xfer_offset) and
!! checked against xfer_record_offsets. Step 0 tries bad input first: a start or dims for a
!! joined dataset, rows of the wrong width, a real array for a record, offsets that differ from the
!! declaration, an array of the wrong shape for a get; each must fail naming the problem and
!! move nothing.
program fjoined
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

    integer, parameter :: GRID = 7
    type(xfer_t) :: x
    type(xfer_channel_t) :: ch
    character(len=64) :: me, arg, mode, dname
    logical :: has_p, has_ids, has_parts, has_grid, sent
    integer :: ierr, comm, rank, nranks, steps, s, i, nds, typ, nd
    integer(c_int64_t) :: dims(XFER_MAX_DIMS)
    integer(c_size_t) :: offsets(4), declared(4), bytes
    type(particle) :: sample

    call MPI_Init(ierr)
    call get_command_argument(1, me)
    steps = 8
    mode = 'all'
    do i = 2, command_argument_count()
        call get_command_argument(i, arg)
        select case (trim(arg))
        case ('all', 'rows')
            mode = arg
        case default
            read (arg, *) steps
        end select
    end do
    call xfer_init(x, component=trim(me))
    call xfer_comm(x, comm)
    call MPI_Comm_rank(comm, rank, ierr)
    call MPI_Comm_size(comm, nranks, ierr)
    call xfer_channel_open(x, 'c', ch)

    has_p = .false.
    has_ids = .false.
    has_parts = .false.
    has_grid = .false.
    call xfer_dataset_count(ch, nds)
    do i = 1, nds
        call xfer_dataset_info(ch, i, dname, typ, nd, dims, sent)
        select case (trim(dname))
        case ('p')
            has_p = .true.
            call expect(nd == 2 .and. dims(1) == 3 .and. dims(2) == 0, 'p: dims (3, 0): joined')
        case ('ids')
            has_ids = .true.
        case ('parts')
            has_parts = .true.
            call expect(typ == XFER_TYPE_RECORD, 'parts is a record')
        case ('grid')
            has_grid = .true.
        end select
    end do

    ! the derived type's layout: the workflow file's (a C struct's), and given with each put
    offsets = [xfer_offset(sample, sample%id), xfer_offset(sample, sample%pos(1)), &
               xfer_offset(sample, sample%q), xfer_offset(sample, sample%kind)]
    if (has_parts) then
        call xfer_record_offsets(ch, 'parts', declared, bytes)
        call expect(all(offsets == declared) .and. bytes == c_sizeof(sample), &
                    'particle has the declared layout')
    end if

    do s = 0, steps - 1
        if (trim(me) == 'a') then
            call send_step(s)
        else
            call recv_step(s)
        end if
    end do
    call xfer_finalize(x)
    call MPI_Finalize(ierr)

contains

    subroutine expect(cond, what)
        logical, intent(in) :: cond
        character(len=*), intent(in) :: what
        if (.not. cond) then
            write (error_unit, '(a, a, a, i0, a, a)') 'fjoined: ', trim(me), ' rank ', rank, &
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

    !> joined.py's rows_of
    integer(c_int64_t) function rows_of(r, st, n)
        integer, intent(in) :: r, st, n
        select case (mod(st, 4))
        case (2)
            rows_of = 0
        case (1)
            rows_of = 0
            if (r == n - 1) rows_of = 9
        case default
            rows_of = int(mod(r*5 + st*3, 4), c_int64_t)
        end select
    end function rows_of

    integer(c_int64_t) function first_row(r, st, n)
        integer, intent(in) :: r, st, n
        integer :: k
        first_row = 0
        do k = 0, r - 1
            first_row = first_row + rows_of(k, st, n)
        end do
    end function first_row

    real(c_double) function p_at(st, g, c)
        integer, intent(in) :: st, c
        integer(c_int64_t), intent(in) :: g
        p_at = real(st, c_double)*1000.0_c_double + real(g, c_double)*3.0_c_double + &
               real(c, c_double) + 0.5_c_double
    end function p_at

    type(particle) function part_at(st, g)
        integer, intent(in) :: st
        integer(c_int64_t), intent(in) :: g
        integer(c_int64_t) :: id
        id = int(st, c_int64_t)*100000 + g
        part_at%id = id
        part_at%pos = [real(id, c_double)*0.5_c_double, -real(id, c_double), &
                       real(id, c_double) + 0.25_c_double]
        part_at%q = real(real(st, c_double) + real(g, c_double)/4.0_c_double, c_float)
        part_at%kind = int(mod(id, 251_c_int64_t) - 125, c_int8_t)
    end function part_at

    type(particle) function grid_at(st, g)
        integer, intent(in) :: st
        integer(c_int64_t), intent(in) :: g
        grid_at%id = int(st, c_int64_t)*10 + g
        grid_at%pos = [real(g, c_double), real(st, c_double), real(g*st, c_double)]
        grid_at%q = real(real(g, c_double)/2.0_c_double, c_float)
        grid_at%kind = int(g - 3, c_int8_t)
    end function grid_at

    logical function same(a, b)
        type(particle), intent(in) :: a, b
        same = a%id == b%id .and. all(a%pos == b%pos) .and. a%q == b%q .and. a%kind == b%kind
    end function same

    ! ---- sending side -------------------------------------------------------------------------

    subroutine bad_puts()
        real(c_double) :: wide(4, 2), two(3, 2)
        type(particle) :: pp(2)
        integer(c_size_t) :: swapped(4)
        integer :: st
        character(len=64) :: w
        wide = 0
        two = 0
        pp = particle(0, 0, 0, 0)
        if (has_p) then
            call xfer_put(ch, 'p', two, start=[0_c_int64_t, 0_c_int64_t], ierr=st)
            call refused(st, XFER_ERR_INVALID_ARG, 'no start', 'p with a start')
            call xfer_put(ch, 'p', two, dims=[3_c_int64_t, 2_c_int64_t], ierr=st)
            call refused(st, XFER_ERR_INVALID_ARG, 'no dims', 'p with dims')
            call xfer_put(ch, 'p', wide, ierr=st)
            call refused(st, XFER_ERR_INVALID_ARG, '(3, rows)', 'p of rows of 4')
        end if
        if (has_parts) then
            call xfer_put(ch, 'parts', two, ierr=st)
            call refused(st, XFER_ERR_INVALID_ARG, 'a record of 40 bytes', 'parts of reals')
            swapped = [offsets(1), offsets(3), offsets(2), offsets(4)]
            call xfer_put(ch, 'parts', pp, ierr=st, offsets=swapped)
            write (w, '(a, i0, a)') 'dataset parts: step 0: field 1 of rank ', rank, "'s record"
            call refused(st, XFER_ERR_MISMATCH, trim(w), 'parts with other offsets')
            call xfer_put(ch, 'parts', pp, ierr=st, offsets=offsets(1:3))
            call refused(st, XFER_ERR_INVALID_ARG, 'offsets has 3 entries', 'parts, 3 offsets')
        end if
    end subroutine bad_puts

    subroutine send_step(st)
        integer, intent(in) :: st
        real(c_double), allocatable :: p(:, :)
        integer(c_int32_t), allocatable :: ids(:)
        type(particle), allocatable :: parts(:)
        type(particle) :: g(GRID)
        integer(c_int64_t) :: k, f, i, gs(1), gc(1)
        integer :: c, status
        call xfer_step_begin(ch, -1, status)
        if (st == 0) call bad_puts()
        if (has_p) then
            k = rows_of(rank, st, nranks)
            f = first_row(rank, st, nranks)
            allocate (p(3, k))
            do i = 1, k
                do c = 1, 3
                    p(c, i) = p_at(st, f + i - 1, c - 1)
                end do
            end do
            call xfer_put(ch, 'p', p)
        end if
        if (has_ids) then
            k = rows_of(rank, st + 1, nranks)
            f = first_row(rank, st + 1, nranks)
            allocate (ids(k))
            do i = 1, k
                ids(i) = int(int(st, c_int64_t)*100000 + f + i - 1, c_int32_t)
            end do
            call xfer_put(ch, 'ids', ids)
        end if
        if (has_parts) then
            k = rows_of(rank, st + 2, nranks)
            f = first_row(rank, st + 2, nranks)
            allocate (parts(k))
            do i = 1, k
                parts(i) = part_at(st, f + i - 1)
            end do
            call xfer_put(ch, 'parts', parts, offsets=offsets)
        end if
        if (has_grid) then
            call xfer_decompose(XFER_SELECT_ROWS, [int(GRID, c_int64_t)], nranks, rank, gs, gc)
            do i = 1, gc(1)
                g(i) = grid_at(st, gs(1) + i - 1)
            end do
            call xfer_put(ch, 'grid', g(1:gc(1)), start=gs, offsets=offsets)
        end if
        call xfer_step_end(ch)
    end subroutine send_step

    ! ---- receiving side -----------------------------------------------------------------------

    !> The step's rows of a joined dataset (j: its index) and this rank's share of them.
    subroutine expected_share(st, j, nsenders, total, s0, c0)
        integer, intent(in) :: st, j, nsenders
        integer(c_int64_t), intent(out) :: total, s0, c0
        integer(c_int64_t) :: base, extra
        total = first_row(nsenders, st + j, nsenders)
        if (trim(mode) == 'all') then
            s0 = 0
            c0 = total
        else
            base = total/nranks
            extra = mod(total, int(nranks, c_int64_t))
            s0 = rank*base + min(int(rank, c_int64_t), extra)
            c0 = base
            if (rank < extra) c0 = c0 + 1
        end if
    end subroutine expected_share

    !> get_shape and get_rows of joined dataset name against the independent computation; the
    !! share's (start, count) out.
    subroutine check_shape(name, st, j, width, s0, c0)
        character(len=*), intent(in) :: name
        integer, intent(in) :: st, j, width
        integer(c_int64_t), intent(out) :: s0, c0
        integer(c_int64_t) :: d(XFER_MAX_DIMS), a(XFER_MAX_DIMS), n(XFER_MAX_DIMS), step, total
        integer(c_int64_t) :: rows(16)
        integer :: ndims, nsenders, r
        character(len=160) :: where
        write (where, '(a, a, i0)') name, ' step ', st
        call xfer_get_rows(ch, name, rows, nsenders)
        do r = 0, nsenders - 1
            call expect(rows(r + 1) == rows_of(r, st + j, nsenders), trim(where)//': get_rows')
        end do
        call expected_share(st, j, nsenders, total, s0, c0)
        call xfer_get_shape(ch, name, d, a, n, ndims, step)
        if (width > 0) then ! (3, rows): Fortran order
            call expect(ndims == 2 .and. d(1) == width .and. d(2) == total .and. a(1) == 0 .and. &
                        a(2) == s0 .and. n(1) == width .and. n(2) == c0 .and. step == st, &
                        trim(where)//': get_shape')
        else
            call expect(ndims == 1 .and. d(1) == total .and. a(1) == s0 .and. n(1) == c0 .and. &
                        step == st, trim(where)//': get_shape')
        end if
    end subroutine check_shape

    subroutine recv_step(st)
        integer, intent(in) :: st
        real(c_double), allocatable :: p(:, :)
        integer(c_int32_t), allocatable :: ids(:)
        type(particle), allocatable :: parts(:)
        type(particle), allocatable :: g(:)
        integer(c_int64_t) :: s0, c0, i, gs(1), gc(1)
        integer(c_size_t) :: swapped(4)
        integer :: c, status, e
        call xfer_step_begin(ch, -1, status)
        call expect(status == XFER_STEP_OK, 'a step begins')
        if (has_p) then
            call check_shape('p', st, 0, 3, s0, c0)
            allocate (p(3, c0 + 1))
            call xfer_get(ch, 'p', p, ierr=e) ! one row too many
            call refused(e, XFER_ERR_INVALID_ARG, "step's selection", 'p into one row too many')
            call xfer_get(ch, 'p', p(:, 1:c0))
            do i = 1, c0
                do c = 1, 3
                    call expect(p(c, i) == p_at(st, s0 + i - 1, c - 1), 'p: data differs')
                end do
            end do
        end if
        if (has_ids) then
            call check_shape('ids', st, 1, 0, s0, c0)
            allocate (ids(c0))
            call xfer_get(ch, 'ids', ids)
            do i = 1, c0
                call expect(ids(i) == int(int(st, c_int64_t)*100000 + s0 + i - 1, c_int32_t), &
                            'ids: data differs')
            end do
        end if
        if (has_parts) then
            call check_shape('parts', st, 2, 0, s0, c0)
            allocate (parts(c0))
            swapped = [offsets(1), offsets(3), offsets(2), offsets(4)]
            call xfer_get(ch, 'parts', parts, ierr=e, offsets=swapped)
            call refused(e, XFER_ERR_MISMATCH, 'field pos', 'parts with other offsets')
            call xfer_get(ch, 'parts', parts, offsets=offsets)
            do i = 1, c0
                call expect(same(parts(i), part_at(st, s0 + i - 1)), 'parts: data differs')
            end do
        end if
        if (has_grid) then
            if (trim(mode) == 'all') then
                gs = 0
                gc = GRID
            else
                call xfer_decompose(XFER_SELECT_ROWS, [int(GRID, c_int64_t)], nranks, rank, gs, gc)
            end if
            allocate (g(gc(1)))
            call xfer_get(ch, 'grid', g)
            do i = 1, gc(1)
                call expect(same(g(i), grid_at(st, gs(1) + i - 1)), 'grid: data differs')
            end do
        end if
        call xfer_step_end(ch)
    end subroutine recv_step

end program fjoined
