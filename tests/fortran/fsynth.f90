! SPDX-License-Identifier: BSD-3-Clause
!> fsynth: a Fortran workflow component for the couplings across languages (tests/fortran).
!!
!!     fsynth COMPONENT [STEPS] [strided] [attrs] [rowmajor] [blocks]
!!
!! It plays COMPONENT (a or b) of channel c of the workflow file in XFER_CONFIG, whose datasets
!! are line (float64 [37]), plane (int32 [13, 9]), cube (uint8 [5, 4, 3]), hyper (float64
!! [3, 2, 4, 5]) and short (uint16 [23]) from a, and in full duplex back2 (float32 [11, 7]) and
!! back3 (int64 [3, 5, 2]) from b. Each is held the way a Fortran code holds it: plane as plane(9, 13),
!! indexed plane(i, j) with i the fastest, and so on, and filled in nested loops with
!! xfer-synth's pattern of the element's global position (the Fortran column-major index of
!! the global array, which is the C-order index of the dataset). A receiving rank gets its
!! selection and compares every element the same way. So a C (xfer-synth) or Python (synth.py)
!! peer checks that the column-major mapping of the module is the documented one, element by
!! element, and so does this program of what they send. `strided` puts from and gets into
!! array sections (every other element); `attrs` puts and checks xfer-synth's attributes.
!! `rowmajor` (a negative control) fills the arrays as if Fortran were row-major: the peer must
!! find the data out of place. `blocks` puts each block as up to three slabs of its last
!! (slowest) dimension, one xfer_put each (several blocks per rank, docs/runtime.md).
program fsynth
    use mpi
    use xfer
    use, intrinsic :: iso_c_binding
    use, intrinsic :: iso_fortran_env, only: error_unit
    implicit none

    interface
        real(c_double) function pf64(ds, step, g) bind(C, name='fsynth_f64')
            import :: c_double, c_int64_t
            integer(c_int64_t), value :: ds, step, g
        end function pf64
        real(c_float) function pf32(ds, step, g) bind(C, name='fsynth_f32')
            import :: c_float, c_int64_t
            integer(c_int64_t), value :: ds, step, g
        end function pf32
        integer(c_int64_t) function pi64(ds, step, g) bind(C, name='fsynth_i64')
            import :: c_int64_t
            integer(c_int64_t), value :: ds, step, g
        end function pi64
        integer(c_int32_t) function pi32(ds, step, g) bind(C, name='fsynth_i32')
            import :: c_int32_t, c_int64_t
            integer(c_int64_t), value :: ds, step, g
        end function pi32
        integer(c_int8_t) function pi8(ds, step, g) bind(C, name='fsynth_i8')
            import :: c_int8_t, c_int64_t
            integer(c_int64_t), value :: ds, step, g
        end function pi8
        integer(c_int16_t) function pi16(ds, step, g) bind(C, name='fsynth_i16')
            import :: c_int16_t, c_int64_t
            integer(c_int64_t), value :: ds, step, g
        end function pi16
    end interface

    type(xfer_t) :: x
    type(xfer_channel_t) :: ch
    character(len=64) :: me, peer, arg, dname, label
    integer :: ierr, comm, rank, nranks, steps, s, nds, k, typ, nd, st, i, na, nb, b
    integer(c_int64_t) :: s0(XFER_MAX_DIMS), c0(XFER_MAX_DIMS)
    integer(c_int64_t) :: dims(XFER_MAX_DIMS), start(XFER_MAX_DIMS), count(XFER_MAX_DIMS)
    integer(c_int64_t) :: checked, a_step, v3(3)
    integer(c_int32_t) :: a_v3(3)
    real(c_double) :: a_time
    logical :: sent, strided, attrs, sends, recvs, rowmajor, blocks

    call MPI_Init(ierr)
    call get_command_argument(1, me)
    steps = 4
    strided = .false.
    attrs = .false.
    rowmajor = .false.
    blocks = .false.
    do i = 2, command_argument_count()
        call get_command_argument(i, arg)
        if (arg == 'strided') then
            strided = .true.
        else if (arg == 'attrs') then
            attrs = .true.
        else if (arg == 'rowmajor') then
            rowmajor = .true.
        else if (arg == 'blocks') then
            blocks = .true.
        else
            read (arg, *) steps
        end if
    end do
    peer = 'b'
    if (me == 'b') peer = 'a'
    call xfer_init(x, component=trim(me))
    call xfer_comm(x, comm)
    call MPI_Comm_rank(comm, rank, ierr)
    call MPI_Comm_size(comm, nranks, ierr)
    call xfer_channel_open(x, 'c', ch)
    call xfer_dataset_count(ch, nds)
    sends = .false.
    recvs = .false.
    do k = 1, nds
        call xfer_dataset_info(ch, k, dname, typ, nd, dims, sent)
        sends = sends .or. sent
        recvs = recvs .or. .not. sent
    end do
    checked = 0

    do s = 0, steps - 1
        call xfer_step_begin(ch, -1, st)
        if (st /= XFER_STEP_OK) call fail('step did not begin')
        do k = 1, nds
            call xfer_dataset_info(ch, k, dname, typ, nd, dims, sent)
            if (.not. sent) cycle
            call xfer_decompose(XFER_SELECT_BLOCK, dims(1:nd), nranks, rank, start, count)
            nb = 1
            if (blocks) nb = int(max(1_c_int64_t, min(3_c_int64_t, count(nd))))
            do b = 0, nb - 1 ! (blocks: slabs of the slowest dimension, each its own put)
                s0 = start
                c0 = count
                s0(nd) = start(nd) + count(nd)*b/nb
                c0(nd) = count(nd)*(b + 1)/nb - count(nd)*b/nb
                call put_one(k - 1, dname, nd, dims, s0, c0, s)
            end do
        end do
        if (attrs .and. sends) then
            a_step = s
            call xfer_put_attr(ch, 'step', a_step, unsigned=.true.)
            call xfer_put_attr(ch, 'time', 0.5_c_double*s)
            call xfer_put_attr(ch, 'v3', [int(s, c_int32_t), int(s + 1, c_int32_t), &
                                          int(s + 2, c_int32_t)])
            write (label, '(a, " step ", i0)') trim(me), s
            call xfer_put_attr_string(ch, 'label', trim(label))
        end if
        do k = 1, nds
            call xfer_dataset_info(ch, k, dname, typ, nd, dims, sent)
            if (sent) cycle
            call xfer_selection(ch, dname, start, count)
            call get_one(k - 1, dname, nd, dims, start, count, s)
        end do
        if (attrs .and. recvs) then
            call xfer_get_attr(ch, 'step', a_step)
            call xfer_get_attr(ch, 'time', a_time)
            call xfer_get_attr(ch, 'v3', a_v3)
            call xfer_get_attr_string(ch, 'label', label)
            write (arg, '(a, " step ", i0)') trim(peer), s
            v3 = [s, s + 1, s + 2]
            if (a_step /= s .or. a_time /= 0.5_c_double*s .or. any(a_v3 /= v3) .or. &
                label /= arg) call fail('attributes differ: '//trim(label))
        end if
        call xfer_step_end(ch)
    end do
    if (.not. sends) then ! a receive-only stream ends with a status
        call xfer_step_begin(ch, -1, st)
        if (st /= XFER_STEP_END_OF_STREAM) call fail('a step beyond the last')
    end if
    ! bad input is refused with a message naming the problem, and nothing happens
    call xfer_put_attr(ch, 'x', [.true.], ierr=ierr)
    if (ierr /= XFER_ERR_INVALID_ARG .or. index(xfer_error_message(), 'logical') == 0) &
        call fail('a logical attribute: '//xfer_error_message())
    call xfer_finalize(x)
    na = 0
    if (rank == 0) write (*, '(a, a, a, i0, a, i0, a)') 'fsynth: ', trim(me), ': ', steps, &
        ' steps, ', checked, ' elements checked on rank 0: ok'
    call MPI_Finalize(ierr)

contains

    subroutine fail(msg)
        character(len=*), intent(in) :: msg
        write (error_unit, '(a, a, a, i0, a, a)') 'fsynth: ', trim(me), ' rank ', rank, ': ', msg
        flush (error_unit)
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end subroutine fail

    !> The global index of element idx (1-based, within the box at start) of a dataset of
    !! Fortran shape dims: its column-major index.
    integer(c_int64_t) function gidx(nd, dims, start, idx)
        integer, intent(in) :: nd
        integer(c_int64_t), intent(in) :: dims(:), start(:), idx(:)
        integer :: m
        gidx = 0
        do m = nd, 1, -1
            gidx = gidx*dims(m) + start(m) + idx(m) - 1
        end do
    end function gidx

    !> The global index a producer fills element idx with: gidx, or with `rowmajor` (the
    !! negative control) the index of a row-major array.
    integer(c_int64_t) function gfill(nd, dims, start, idx)
        integer, intent(in) :: nd
        integer(c_int64_t), intent(in) :: dims(:), start(:), idx(:)
        integer :: m
        if (.not. rowmajor) then
            gfill = gidx(nd, dims, start, idx)
            return
        end if
        gfill = 0
        do m = 1, nd
            gfill = gfill*dims(m) + start(m) + idx(m) - 1
        end do
    end function gfill

    subroutine put_one(ds, name, nd, dims, start, count, s)
        integer, intent(in) :: ds, nd, s
        character(len=*), intent(in) :: name
        integer(c_int64_t), intent(in) :: dims(:), start(:), count(:)
        real(c_double), allocatable, target :: f1(:), f4(:, :, :, :)
        integer(c_int32_t), allocatable, target :: i2(:, :), big(:, :)
        integer(c_int8_t), allocatable :: b3(:, :, :)
        integer(c_int16_t), allocatable :: h1(:)
        real(c_float), allocatable :: r2(:, :)
        integer(c_int64_t), allocatable :: l3(:, :, :)
        integer(c_int64_t) :: d, i, j, l, m
        d = ds
        select case (trim(name))
        case ('short')
            allocate (h1(count(1)))
            do i = 1, count(1)
                h1(i) = pi16(d, int(s, c_int64_t), gfill(nd, dims, start, [i]))
            end do
            call xfer_put(ch, name, h1, start=start(1:nd))
        case ('line')
            allocate (f1(count(1)))
            do i = 1, count(1)
                f1(i) = pf64(d, int(s, c_int64_t), gfill(nd, dims, start, [i]))
            end do
            call xfer_put(ch, name, f1, start=start(1:nd))
        case ('plane')
            allocate (i2(count(1), count(2)))
            do j = 1, count(2)
                do i = 1, count(1)
                    i2(i, j) = pi32(d, int(s, c_int64_t), gfill(nd, dims, start, [i, j]))
                end do
            end do
            if (strided) then ! a section: every other element of the first dimension
                allocate (big(2*count(1), count(2)))
                big = -1
                big(1::2, :) = i2
                call xfer_put(ch, name, big(1::2, :), start=start(1:nd))
            else
                call xfer_put(ch, name, i2, start=start(1:nd))
            end if
        case ('cube')
            allocate (b3(count(1), count(2), count(3)))
            do l = 1, count(3)
                do j = 1, count(2)
                    do i = 1, count(1)
                        b3(i, j, l) = pi8(d, int(s, c_int64_t), gfill(nd, dims, start, [i, j, l]))
                    end do
                end do
            end do
            call xfer_put(ch, name, b3, start=start(1:nd))
        case ('hyper')
            allocate (f4(count(1), count(2), count(3), count(4)))
            do m = 1, count(4)
                do l = 1, count(3)
                    do j = 1, count(2)
                        do i = 1, count(1)
                            f4(i, j, l, m) = pf64(d, int(s, c_int64_t), &
                                                  gfill(nd, dims, start, [i, j, l, m]))
                        end do
                    end do
                end do
            end do
            call xfer_put(ch, name, f4, start=start(1:nd))
        case ('back2')
            allocate (r2(count(1), count(2)))
            do j = 1, count(2)
                do i = 1, count(1)
                    r2(i, j) = pf32(d, int(s, c_int64_t), gfill(nd, dims, start, [i, j]))
                end do
            end do
            call xfer_put(ch, name, r2, start=start(1:nd))
        case ('back3')
            allocate (l3(count(1), count(2), count(3)))
            do l = 1, count(3)
                do j = 1, count(2)
                    do i = 1, count(1)
                        l3(i, j, l) = pi64(d, int(s, c_int64_t), gfill(nd, dims, start, [i, j, l]))
                    end do
                end do
            end do
            call xfer_put(ch, name, l3, start=start(1:nd))
        case default
            call fail('no such dataset in this test: '//trim(name))
        end select
    end subroutine put_one

    subroutine get_one(ds, name, nd, dims, start, count, s)
        integer, intent(in) :: ds, nd, s
        character(len=*), intent(in) :: name
        integer(c_int64_t), intent(in) :: dims(:), start(:), count(:)
        real(c_double), allocatable :: f1(:), f4(:, :, :, :)
        integer(c_int32_t), allocatable :: i2(:, :)
        integer(c_int8_t), allocatable :: b3(:, :, :)
        integer(c_int16_t), allocatable :: h1(:)
        real(c_float), allocatable :: r2(:, :), big(:, :)
        integer(c_int64_t), allocatable :: l3(:, :, :)
        integer(c_int64_t) :: d, i, j, l, m, t
        d = ds
        t = s
        select case (trim(name))
        case ('short')
            allocate (h1(count(1)))
            call xfer_get(ch, name, h1)
            do i = 1, count(1)
                if (h1(i) /= pi16(d, t, gidx(nd, dims, start, [i]))) call differs(name)
            end do
            checked = checked + size(h1)
        case ('line')
            allocate (f1(count(1)))
            call xfer_get(ch, name, f1)
            do i = 1, count(1)
                if (f1(i) /= pf64(d, t, gidx(nd, dims, start, [i]))) call differs(name)
            end do
            checked = checked + size(f1)
        case ('plane')
            allocate (i2(count(1), count(2)))
            call xfer_get(ch, name, i2)
            do j = 1, count(2)
                do i = 1, count(1)
                    if (i2(i, j) /= pi32(d, t, gidx(nd, dims, start, [i, j]))) call differs(name)
                end do
            end do
            checked = checked + size(i2)
        case ('cube')
            allocate (b3(count(1), count(2), count(3)))
            call xfer_get(ch, name, b3)
            do l = 1, count(3)
                do j = 1, count(2)
                    do i = 1, count(1)
                        if (b3(i, j, l) /= pi8(d, t, gidx(nd, dims, start, [i, j, l]))) &
                            call differs(name)
                    end do
                end do
            end do
            checked = checked + size(b3)
        case ('hyper')
            allocate (f4(count(1), count(2), count(3), count(4)))
            call xfer_get(ch, name, f4)
            do m = 1, count(4)
                do l = 1, count(3)
                    do j = 1, count(2)
                        do i = 1, count(1)
                            if (f4(i, j, l, m) /= pf64(d, t, gidx(nd, dims, start, [i, j, l, m]))) &
                                call differs(name)
                        end do
                    end do
                end do
            end do
            checked = checked + size(f4)
        case ('back2')
            allocate (r2(count(1), count(2)))
            if (strided) then ! into a section: every other element of the first dimension
                allocate (big(2*count(1), count(2)))
                big = -1
                call xfer_get(ch, name, big(2::2, :))
                if (any(big(1::2, :) /= -1)) call differs(name//' (outside the section)')
                r2 = big(2::2, :)
            else
                call xfer_get(ch, name, r2)
            end if
            do j = 1, count(2)
                do i = 1, count(1)
                    if (r2(i, j) /= pf32(d, t, gidx(nd, dims, start, [i, j]))) call differs(name)
                end do
            end do
            checked = checked + size(r2)
        case ('back3')
            allocate (l3(count(1), count(2), count(3)))
            call xfer_get(ch, name, l3)
            do l = 1, count(3)
                do j = 1, count(2)
                    do i = 1, count(1)
                        if (l3(i, j, l) /= pi64(d, t, gidx(nd, dims, start, [i, j, l]))) &
                            call differs(name)
                    end do
                end do
            end do
            checked = checked + size(l3)
        case default
            call fail('no such dataset in this test: '//trim(name))
        end select
    end subroutine get_one

    subroutine differs(name)
        character(len=*), intent(in) :: name
        character(len=96) :: msg
        write (msg, '(a, " step ", i0, ": data differs from the pattern")') trim(name), s
        call fail(trim(msg))
    end subroutine differs

end program fsynth
