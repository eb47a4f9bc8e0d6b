! SPDX-License-Identifier: BSD-3-Clause
!> The Fortran module xfer: libxfer's workflow API for Fortran (docs/bindings.md).
!!
!! A component joins the workflow of a YAML file, opens its channels and moves numbered steps of
!! datasets through them:
!!
!!     use mpi
!!     use xfer
!!     type(xfer_t) :: x
!!     type(xfer_channel_t) :: ch
!!     call xfer_init(x, 'workflow.yaml', 'simulation', MPI_COMM_WORLD)
!!     call xfer_channel_open(x, 'fields', ch)
!!     call xfer_step_begin(ch, -1, status)            ! waits for a free slot (flow control)
!!     call xfer_put(ch, 'U', u, start=[i0, j0])       ! this rank's block of the global array
!!     call xfer_step_end(ch)
!!     call xfer_finalize(x)
!!
!! Arrays are any integer or real array of rank 0 to 8 (assumed-rank, assumed-type arguments),
!! of the dataset's size: integer(int8/16/32/64) for int and uint datasets, real(real32/64).
!! Fortran arrays are column-major, so a Fortran array of shape (n1, ..., nr) is the dataset of
!! C-order dims [nr, ..., n1]: a 2-D field u(nx, ny) is the dataset of dims [ny, nx]. Every
!! start, count and dims argument here is in Fortran order (fastest dimension first) and every
!! start is a 0-based offset. Non-contiguous arrays (sections) are accepted and copied.
!!
!! Every routine has an optional last argument ierr: XFER_SUCCESS or a status code, the words
!! of the failure in xfer_error_message(). Without ierr a failure prints them and stops the
!! program (error stop).
module xfer
    use, intrinsic :: iso_c_binding
    use, intrinsic :: iso_fortran_env, only: error_unit
    implicit none
    private

    include 'xfer_status.inc'

    integer, parameter, public :: XFER_STEP_OK = 0, XFER_STEP_NOT_READY = 1, &
                                  XFER_STEP_END_OF_STREAM = 2
    integer, parameter, public :: XFER_TYPE_INT8 = 1, XFER_TYPE_UINT8 = 2, XFER_TYPE_INT16 = 3, &
                                  XFER_TYPE_UINT16 = 4, XFER_TYPE_INT32 = 5, XFER_TYPE_UINT32 = 6, &
                                  XFER_TYPE_INT64 = 7, XFER_TYPE_UINT64 = 8, &
                                  XFER_TYPE_FLOAT32 = 9, XFER_TYPE_FLOAT64 = 10, &
                                  XFER_TYPE_RECORD = 11
    !> Decompositions (xfer_decompose) and selection modes. ROWS splits the slowest C dimension,
    !! which is the LAST Fortran dimension; COLUMNS the first Fortran dimension.
    integer, parameter, public :: XFER_SELECT_ALL = 0, XFER_SELECT_ROWS = 1, &
                                  XFER_SELECT_COLUMNS = 2, XFER_SELECT_BLOCK = 3
    integer, parameter, public :: XFER_MAX_DIMS = 8, XFER_RECORD_MAX_FIELDS = 64

    !> One component's membership of a workflow.
    type, public :: xfer_t
        type(c_ptr) :: p = c_null_ptr
    end type xfer_t

    !> A channel of the workflow.
    type, public :: xfer_channel_t
        type(c_ptr) :: x = c_null_ptr
        type(c_ptr) :: h = c_null_ptr
        integer(c_int) :: index = -1
    end type xfer_channel_t

    public :: xfer_init, xfer_finalize, xfer_comm, xfer_channel_open, xfer_channel_close, &
              xfer_step_begin, xfer_step_end, xfer_put, xfer_get, xfer_get_box, xfer_select, &
              xfer_selection, &
              xfer_put_attr, xfer_put_attr_string, xfer_get_attr, xfer_get_attr_string, &
              xfer_dataset_count, xfer_dataset_info, xfer_decompose, xfer_error_message, &
              xfer_status_name, xfer_get_shape, xfer_get_rows, xfer_record_offsets, xfer_offset

    interface
        integer(c_int) function c_init(config, component, has_comm, comm, x) &
            bind(C, name='xfer_f_init')
            import :: c_char, c_int, c_ptr
            character(kind=c_char), dimension(*), intent(in) :: config, component
            integer(c_int), value :: has_comm, comm
            type(c_ptr), intent(out) :: x
        end function c_init
        integer(c_int) function c_finalize(x) bind(C, name='xfer_f_finalize')
            import :: c_int, c_ptr
            type(c_ptr), intent(inout) :: x
        end function c_finalize
        integer(c_int) function c_comm(x, comm) bind(C, name='xfer_f_comm')
            import :: c_int, c_ptr
            type(c_ptr), value :: x
            integer(c_int), intent(out) :: comm
        end function c_comm
        integer(c_int) function c_channel_open(x, name, h, index) bind(C, name='xfer_f_channel_open')
            import :: c_char, c_int, c_ptr
            type(c_ptr), value :: x
            character(kind=c_char), dimension(*), intent(in) :: name
            type(c_ptr), intent(out) :: h
            integer(c_int), intent(out) :: index
        end function c_channel_open
        integer(c_int) function c_channel_close(h) bind(C, name='xfer_f_channel_close')
            import :: c_int, c_ptr
            type(c_ptr), intent(inout) :: h
        end function c_channel_close
        integer(c_int) function c_step_begin(h, timeout_ms, status) bind(C, name='xfer_f_step_begin')
            import :: c_int, c_ptr
            type(c_ptr), value :: h
            integer(c_int), value :: timeout_ms
            integer(c_int), intent(out) :: status
        end function c_step_begin
        integer(c_int) function c_step_end(h) bind(C, name='xfer_f_step_end')
            import :: c_int, c_ptr
            type(c_ptr), value :: h
        end function c_step_end
        integer(c_int) function c_put(x, h, index, name, a, start, nstart, offsets, noffsets, &
                                      dims, ndims) bind(C, name='xfer_f_put')
            import :: c_char, c_int, c_ptr, c_int64_t
            type(c_ptr), value :: x, h
            integer(c_int), value :: index, nstart, noffsets, ndims
            character(kind=c_char), dimension(*), intent(in) :: name
            type(*), dimension(..), intent(in) :: a
            integer(c_int64_t), dimension(*), intent(in) :: start, offsets, dims
        end function c_put
        integer(c_int) function c_get(x, h, index, name, a, start, count, nbox, offsets, noffsets) &
            bind(C, name='xfer_f_get')
            import :: c_char, c_int, c_ptr, c_int64_t
            type(c_ptr), value :: x, h
            integer(c_int), value :: index, nbox, noffsets
            character(kind=c_char), dimension(*), intent(in) :: name
            type(*), dimension(..), intent(inout) :: a
            integer(c_int64_t), dimension(*), intent(in) :: start, count, offsets
        end function c_get
        integer(c_int) function c_get_shape(x, h, index, name, dims, start, count, n, ndims, &
                                            step) bind(C, name='xfer_f_get_shape')
            import :: c_char, c_int, c_ptr, c_int64_t
            type(c_ptr), value :: x, h
            integer(c_int), value :: index, n
            character(kind=c_char), dimension(*), intent(in) :: name
            integer(c_int64_t), dimension(*), intent(out) :: dims, start, count
            integer(c_int), intent(out) :: ndims
            integer(c_int64_t), intent(out) :: step
        end function c_get_shape
        integer(c_int) function c_get_rows(h, name, rows, n, nsenders) &
            bind(C, name='xfer_f_get_rows')
            import :: c_char, c_int, c_ptr, c_int64_t
            type(c_ptr), value :: h
            character(kind=c_char), dimension(*), intent(in) :: name
            integer(c_int64_t), dimension(*), intent(out) :: rows
            integer(c_int), value :: n
            integer(c_int), intent(out) :: nsenders
        end function c_get_rows
        integer(c_int) function c_record(x, index, name, offsets, n, nfields, size) &
            bind(C, name='xfer_f_record')
            import :: c_char, c_int, c_ptr, c_int64_t
            type(c_ptr), value :: x
            integer(c_int), value :: index, n
            character(kind=c_char), dimension(*), intent(in) :: name
            integer(c_int64_t), dimension(*), intent(out) :: offsets
            integer(c_int), intent(out) :: nfields
            integer(c_int64_t), intent(out) :: size
        end function c_record
        !> The byte offset of field in record (both given as variables, e.g. p and p%pos(1)):
        !! a derived type's layout, for the offsets argument of xfer_put and xfer_get.
        integer(c_size_t) function xfer_offset(record, field) bind(C, name='xfer_f_offset')
            import :: c_size_t
            type(*), intent(in) :: record, field
        end function xfer_offset
        integer(c_int) function c_select(h, name, start, count, n) bind(C, name='xfer_f_select')
            import :: c_char, c_int, c_ptr, c_int64_t
            type(c_ptr), value :: h
            character(kind=c_char), dimension(*), intent(in) :: name
            integer(c_int64_t), dimension(*), intent(in) :: start, count
            integer(c_int), value :: n
        end function c_select
        integer(c_int) function c_selection(x, h, index, name, start, count, n, ndims) &
            bind(C, name='xfer_f_selection')
            import :: c_char, c_int, c_ptr, c_int64_t
            type(c_ptr), value :: x, h
            integer(c_int), value :: index, n
            character(kind=c_char), dimension(*), intent(in) :: name
            integer(c_int64_t), dimension(*), intent(out) :: start, count
            integer(c_int), intent(out) :: ndims
        end function c_selection
        integer(c_int) function c_put_attr(h, name, a, is_unsigned) bind(C, name='xfer_f_put_attr')
            import :: c_char, c_int, c_ptr
            type(c_ptr), value :: h
            character(kind=c_char), dimension(*), intent(in) :: name
            type(*), dimension(..), intent(in) :: a
            integer(c_int), value :: is_unsigned
        end function c_put_attr
        integer(c_int) function c_put_attr_string(h, name, value) &
            bind(C, name='xfer_f_put_attr_string')
            import :: c_char, c_int, c_ptr
            type(c_ptr), value :: h
            character(kind=c_char), dimension(*), intent(in) :: name, value
        end function c_put_attr_string
        integer(c_int) function c_get_attr(h, name, a) bind(C, name='xfer_f_get_attr')
            import :: c_char, c_int, c_ptr
            type(c_ptr), value :: h
            character(kind=c_char), dimension(*), intent(in) :: name
            type(*), dimension(..), intent(inout) :: a
        end function c_get_attr
        integer(c_int) function c_get_attr_string(h, name, buf, len) &
            bind(C, name='xfer_f_get_attr_string')
            import :: c_char, c_int, c_ptr, c_size_t
            type(c_ptr), value :: h
            character(kind=c_char), dimension(*), intent(in) :: name
            character(kind=c_char), dimension(*), intent(out) :: buf
            integer(c_size_t), value :: len
        end function c_get_attr_string
        integer(c_int) function c_ndatasets(x, index, n) bind(C, name='xfer_f_ndatasets')
            import :: c_int, c_ptr
            type(c_ptr), value :: x
            integer(c_int), value :: index
            integer(c_int), intent(out) :: n
        end function c_ndatasets
        integer(c_int) function c_dataset(x, index, i, name, namelen, type, ndims, dims, sent) &
            bind(C, name='xfer_f_dataset')
            import :: c_char, c_int, c_ptr, c_int64_t, c_size_t
            type(c_ptr), value :: x
            integer(c_int), value :: index, i
            character(kind=c_char), dimension(*), intent(out) :: name
            integer(c_size_t), value :: namelen
            integer(c_int), intent(out) :: type, ndims, sent
            integer(c_int64_t), dimension(*), intent(out) :: dims
        end function c_dataset
        integer(c_int) function c_decompose(mode, ndims, dims, nranks, rank, start, count) &
            bind(C, name='xfer_f_decompose')
            import :: c_int, c_int64_t
            integer(c_int), value :: mode, ndims, nranks, rank
            integer(c_int64_t), dimension(*), intent(in) :: dims
            integer(c_int64_t), dimension(*), intent(out) :: start, count
        end function c_decompose
        subroutine c_error_message(buf, len) bind(C, name='xfer_f_error_message')
            import :: c_char, c_size_t
            character(kind=c_char), dimension(*), intent(out) :: buf
            integer(c_size_t), value :: len
        end subroutine c_error_message
        integer(c_int) function c_set_error(st, msg) bind(C, name='xfer_f_set_error')
            import :: c_char, c_int
            integer(c_int), value :: st
            character(kind=c_char), dimension(*), intent(in) :: msg
        end function c_set_error
        subroutine c_status_name(st, buf, len) bind(C, name='xfer_f_status_name')
            import :: c_char, c_int, c_size_t
            integer(c_int), value :: st
            character(kind=c_char), dimension(*), intent(out) :: buf
            integer(c_size_t), value :: len
        end subroutine c_status_name
    end interface

contains

    !> The words of the last failure of a routine of this module on this thread.
    function xfer_error_message() result(msg)
        character(len=:), allocatable :: msg
        character(kind=c_char, len=2048) :: buf
        call c_error_message(buf, int(len(buf), c_size_t))
        msg = trim(buf)
    end function xfer_error_message

    !> The symbolic name of a status code, e.g. 'XFER_ERR_MISMATCH'.
    function xfer_status_name(st) result(name)
        integer, intent(in) :: st
        character(len=:), allocatable :: name
        character(kind=c_char, len=64) :: buf
        call c_status_name(int(st, c_int), buf, int(len(buf), c_size_t))
        name = trim(buf)
    end function xfer_status_name

    !> A Fortran string as a NUL-terminated C string.
    pure function cstr(s) result(c)
        character(len=*), intent(in) :: s
        character(kind=c_char, len=len_trim(s) + 1) :: c
        c = trim(s)//c_null_char
    end function cstr

    !> A record's field offsets as the C side takes them: off(1:noff). (More than
    !! XFER_RECORD_MAX_FIELDS cannot match a record: the C side says so before reading them.)
    subroutine offsets_in(offsets, off, noff)
        integer(c_size_t), dimension(:), intent(in), optional :: offsets
        integer(c_int64_t), intent(out) :: off(XFER_RECORD_MAX_FIELDS)
        integer(c_int), intent(out) :: noff
        integer :: m
        off = 0
        noff = 0
        if (present(offsets)) then
            m = min(size(offsets), XFER_RECORD_MAX_FIELDS)
            off(1:m) = int(offsets(1:m), c_int64_t)
            noff = int(size(offsets), c_int)
        end if
    end subroutine offsets_in

    !> Hand a status to the caller (ierr) or, without ierr, stop on a failure.
    subroutine finish(st, what, ierr)
        integer(c_int), intent(in) :: st
        character(len=*), intent(in) :: what
        integer, intent(out), optional :: ierr
        if (present(ierr)) then
            ierr = int(st)
        else if (st /= XFER_SUCCESS) then
            write (error_unit, '(5a)') 'xfer: ', what, ': ', xfer_status_name(int(st)), &
                ': '//xfer_error_message()
            flush (error_unit)
            error stop 1
        end if
    end subroutine finish

    !> Join the workflow of file config (absent or '': XFER_CONFIG) as component (absent or '':
    !! XFER_COMPONENT, else the MPMD application number). comm (a Fortran MPI handle; absent:
    !! MPI_COMM_WORLD) holds every process of this launch. Collective; MPI must be initialised.
    subroutine xfer_init(x, config, component, comm, ierr)
        type(xfer_t), intent(out) :: x
        character(len=*), intent(in), optional :: config, component
        integer, intent(in), optional :: comm
        integer, intent(out), optional :: ierr
        character(len=:), allocatable :: cf, cp
        integer(c_int) :: st, has, fc
        cf = ''
        cp = ''
        if (present(config)) cf = config
        if (present(component)) cp = component
        has = 0
        fc = 0
        if (present(comm)) then
            has = 1
            fc = int(comm, c_int)
        end if
        st = c_init(cstr(cf), cstr(cp), has, fc, x%p)
        call finish(st, 'xfer_init', ierr)
    end subroutine xfer_init

    !> Leave the workflow (collective over the component): committed steps are delivered, the
    !! peers told that no step comes any more. x is reset; channels opened from it are closed.
    subroutine xfer_finalize(x, ierr)
        type(xfer_t), intent(inout) :: x
        integer, intent(out), optional :: ierr
        integer(c_int) :: st
        st = c_finalize(x%p)
        x%p = c_null_ptr
        call finish(st, 'xfer_finalize', ierr)
    end subroutine xfer_finalize

    !> The component's own communicator (a Fortran handle; owned by libxfer).
    subroutine xfer_comm(x, comm, ierr)
        type(xfer_t), intent(in) :: x
        integer, intent(out) :: comm
        integer, intent(out), optional :: ierr
        integer(c_int) :: st, c
        st = c_comm(x%p, c)
        comm = int(c)
        call finish(st, 'xfer_comm', ierr)
    end subroutine xfer_comm

    !> The channel called name (formed by xfer_init).
    subroutine xfer_channel_open(x, name, ch, ierr)
        type(xfer_t), intent(in) :: x
        character(len=*), intent(in) :: name
        type(xfer_channel_t), intent(out) :: ch
        integer, intent(out), optional :: ierr
        integer(c_int) :: st
        st = c_channel_open(x%p, cstr(name), ch%h, ch%index)
        ch%x = x%p
        call finish(st, 'xfer_channel_open '//trim(name), ierr)
    end subroutine xfer_channel_open

    !> Finish the channel now while the component's other channels go on (collective over the
    !! component, xfer_channel_close): a reader leaves cleanly (its sender sees the end of the
    !! stream, or goes on under on_reader_loss: continue), a sender ends its stream after its
    !! last committed step. ch is reset; closing it again is an error (XFER_ERR_INVALID_ARG).
    subroutine xfer_channel_close(ch, ierr)
        type(xfer_channel_t), intent(inout) :: ch
        integer, intent(out), optional :: ierr
        integer(c_int) :: st
        st = c_channel_close(ch%h)
        ch%h = c_null_ptr
        ch%index = -1
        call finish(st, 'xfer_channel_close', ierr)
    end subroutine xfer_channel_close

    !> Begin the current step, waiting at most timeout_ms (0: poll, -1: as long as the peer
    !! lives). status: XFER_STEP_OK, XFER_STEP_NOT_READY (call again) or XFER_STEP_END_OF_STREAM.
    subroutine xfer_step_begin(ch, timeout_ms, status, ierr)
        type(xfer_channel_t), intent(in) :: ch
        integer, intent(in) :: timeout_ms
        integer, intent(out) :: status
        integer, intent(out), optional :: ierr
        integer(c_int) :: st, s
        st = c_step_begin(ch%h, int(timeout_ms, c_int), s)
        status = int(s)
        call finish(st, 'xfer_step_begin', ierr)
    end subroutine xfer_step_begin

    !> Commit (sending side) or release (receiving side) the current step. Collective over the
    !! component's ranks.
    subroutine xfer_step_end(ch, ierr)
        type(xfer_channel_t), intent(in) :: ch
        integer, intent(out), optional :: ierr
        call finish(c_step_end(ch%h), 'xfer_step_end', ierr)
    end subroutine xfer_step_end

    !> Stage this rank's block of dataset name for the current step: an integer or real array of
    !! the dataset's element size whose shape, reversed, is the block's C-order count. start:
    !! the block's 0-based offset in each dimension, Fortran order (absent: the block is the
    !! whole dataset). The array is copied: it may be reused on return.
    !!
    !! A dataset of variable shape (a `variable` entry in its dims) takes the step's global shape
    !! too: dims, Fortran order, every sending rank giving the same (absent, with no start: the
    !! array's own, the block is the whole step). A joined dataset takes this rank's rows
    !! instead: the rows are the LAST Fortran dimension (a dataset of dims [joined, 3] is an
    !! array p(3, rows)), any number of them (0 included), and no start or dims. A record
    !! dataset takes an array of a bind(c) derived type of the record's size; offsets (one per
    !! field, in the workflow file's order, as xfer_offset gives them) has libxfer check the
    !! type's layout against the declaration.
    subroutine xfer_put(ch, name, array, start, ierr, offsets, dims)
        type(xfer_channel_t), intent(in) :: ch
        character(len=*), intent(in) :: name
        type(*), dimension(..), intent(in) :: array
        integer(c_int64_t), dimension(:), intent(in), optional :: start
        integer, intent(out), optional :: ierr
        integer(c_size_t), dimension(:), intent(in), optional :: offsets
        integer(c_int64_t), dimension(:), intent(in), optional :: dims
        integer(c_int64_t) :: off(XFER_RECORD_MAX_FIELDS), s(XFER_MAX_DIMS), d(XFER_MAX_DIMS)
        integer(c_int) :: st, noff, ns, nd
        s = 0
        d = 0
        ns = 0
        nd = 0
        call offsets_in(offsets, off, noff)
        if (present(start)) then
            ns = int(size(start), c_int)
            s(1:min(size(start), XFER_MAX_DIMS)) = start(1:min(size(start), XFER_MAX_DIMS))
        end if
        if (present(dims)) then
            nd = int(size(dims), c_int)
            d(1:min(size(dims), XFER_MAX_DIMS)) = dims(1:min(size(dims), XFER_MAX_DIMS))
        end if
        if (ns > XFER_MAX_DIMS .or. nd > XFER_MAX_DIMS) then
            st = c_set_error(XFER_ERR_INVALID_ARG, cstr('dataset '//trim(name)// &
                                                        ': start or dims has more than 8 entries'))
        else
            st = c_put(ch%x, ch%h, ch%index, cstr(name), array, s, ns, off, noff, d, nd)
        end if
        call finish(st, 'xfer_put '//trim(name), ierr)
    end subroutine xfer_put

    !> Receive this rank's selection of dataset name for the current step into array (its
    !! shape: the selection's count in Fortran order; xfer_selection says which box). A joined
    !! or variable dataset's selection is the step's: xfer_get_shape gives it. offsets (a record
    !! dataset): the derived type's field offsets, checked against the declaration before
    !! anything lands.
    subroutine xfer_get(ch, name, array, ierr, offsets)
        type(xfer_channel_t), intent(in) :: ch
        character(len=*), intent(in) :: name
        type(*), dimension(..), intent(inout) :: array
        integer, intent(out), optional :: ierr
        integer(c_size_t), dimension(:), intent(in), optional :: offsets
        integer(c_int64_t) :: none(1), off(XFER_RECORD_MAX_FIELDS)
        integer(c_int) :: noff
        none = 0
        call offsets_in(offsets, off, noff)
        call finish(c_get(ch%x, ch%h, ch%index, cstr(name), array, none, none, 0_c_int, off, &
                          noff), 'xfer_get '//trim(name), ierr)
    end subroutine xfer_get

    !> Dataset name in the current step, waiting for the step as xfer_get does: the step's dims
    !! (a joined dataset's rows, every sending rank's together, in the LAST entry: Fortran
    !! order), this rank's selection of it (0-based start, count), its rank and the step. For
    !! sizing the array of a joined dataset's xfer_get: count(1:ndims) is its shape.
    subroutine xfer_get_shape(ch, name, dims, start, count, ndims, step, ierr)
        type(xfer_channel_t), intent(in) :: ch
        character(len=*), intent(in) :: name
        integer(c_int64_t), dimension(:), intent(out) :: dims, start, count
        integer, intent(out), optional :: ndims
        integer(c_int64_t), intent(out), optional :: step
        integer, intent(out), optional :: ierr
        integer(c_int) :: st, nd
        integer(c_int64_t) :: s
        dims = 0
        start = 0
        count = 0
        st = c_get_shape(ch%x, ch%h, ch%index, cstr(name), dims, start, count, &
                         int(min(size(dims), size(start), size(count)), c_int), nd, s)
        if (present(ndims)) ndims = int(nd)
        if (present(step)) step = s
        call finish(st, 'xfer_get_shape '//trim(name), ierr)
    end subroutine xfer_get_shape

    !> Each sending rank's rows of joined dataset name in the current step (waiting for it):
    !! rows(r + 1) for sending rank r, the first size(rows) of them; nsenders: how many sending
    !! ranks there are. Rank r's rows follow those of ranks 0 .. r-1 in the step's rows.
    subroutine xfer_get_rows(ch, name, rows, nsenders, ierr)
        type(xfer_channel_t), intent(in) :: ch
        character(len=*), intent(in) :: name
        integer(c_int64_t), dimension(:), intent(out) :: rows
        integer, intent(out), optional :: nsenders
        integer, intent(out), optional :: ierr
        integer(c_int) :: st, n
        rows = 0
        st = c_get_rows(ch%h, cstr(name), rows, int(size(rows), c_int), n)
        if (present(nsenders)) nsenders = int(n)
        call finish(st, 'xfer_get_rows '//trim(name), ierr)
    end subroutine xfer_get_rows

    !> The layout of record dataset name as the workflow file declares it (a C struct's): each
    !! field's byte offset, in the file's order, in the first nfields entries of offsets, and
    !! the record's size in bytes (padding included). A bind(c) derived type of the same fields
    !! has this layout: compare, e.g., xfer_offset(p, p%q) with it.
    subroutine xfer_record_offsets(ch, name, offsets, bytes, nfields, ierr)
        type(xfer_channel_t), intent(in) :: ch
        character(len=*), intent(in) :: name
        integer(c_size_t), dimension(:), intent(out) :: offsets
        integer(c_size_t), intent(out) :: bytes
        integer, intent(out), optional :: nfields
        integer, intent(out), optional :: ierr
        integer(c_int64_t) :: off(XFER_RECORD_MAX_FIELDS), sz
        integer(c_int) :: st, n
        integer :: m
        off = 0
        sz = 0
        n = 0
        st = c_record(ch%x, ch%index, cstr(name), off, int(size(off), c_int), n, sz)
        m = min(size(offsets), int(n), size(off))
        offsets = 0
        offsets(1:m) = int(off(1:m), c_size_t)
        bytes = int(sz, c_size_t)
        if (present(nfields)) nfields = int(n)
        call finish(st, 'xfer_record_offsets '//trim(name), ierr)
    end subroutine xfer_record_offsets

    !> As xfer_get, for the box start/count (0-based, Fortran order) inside the selection.
    subroutine xfer_get_box(ch, name, start, count, array, ierr)
        type(xfer_channel_t), intent(in) :: ch
        character(len=*), intent(in) :: name
        integer(c_int64_t), dimension(:), intent(in) :: start, count
        type(*), dimension(..), intent(inout) :: array
        integer, intent(out), optional :: ierr
        integer(c_int) :: st
        if (size(start) /= size(count)) then
            st = c_set_error(XFER_ERR_INVALID_ARG, cstr('dataset '//trim(name)// &
                                                        ': start and count differ in size'))
        else
            st = c_get(ch%x, ch%h, ch%index, cstr(name), array, start, count, &
                       int(size(start), c_int), start, 0_c_int)
        end if
        call finish(st, 'xfer_get_box '//trim(name), ierr)
    end subroutine xfer_get_box

    !> Declare the box (0-based start, count, Fortran order) of dataset name this rank
    !! receives; before step 0. Without start and count: the whole dataset.
    subroutine xfer_select(ch, name, start, count, ierr)
        type(xfer_channel_t), intent(in) :: ch
        character(len=*), intent(in) :: name
        integer(c_int64_t), dimension(:), intent(in), optional :: start, count
        integer, intent(out), optional :: ierr
        integer(c_int64_t) :: none(1)
        integer(c_int) :: st
        none = 0
        if (present(start) .neqv. present(count)) then
            st = c_set_error(XFER_ERR_INVALID_ARG, cstr('dataset '//trim(name)// &
                                                        ': give both start and count, or neither'))
        else if (present(start)) then
            if (size(start) /= size(count)) then
                st = c_set_error(XFER_ERR_INVALID_ARG, cstr('dataset '//trim(name)// &
                                                            ': start and count differ in size'))
            else
                st = c_select(ch%h, cstr(name), start, count, int(size(start), c_int))
            end if
        else
            st = c_select(ch%h, cstr(name), none, none, 0_c_int)
        end if
        call finish(st, 'xfer_select '//trim(name), ierr)
    end subroutine xfer_select

    !> The box of dataset name this rank receives: 0-based start and count, Fortran order, in
    !! the first ndims entries of start and count (at least the dataset's rank).
    subroutine xfer_selection(ch, name, start, count, ndims, ierr)
        type(xfer_channel_t), intent(in) :: ch
        character(len=*), intent(in) :: name
        integer(c_int64_t), dimension(:), intent(out) :: start, count
        integer, intent(out), optional :: ndims
        integer, intent(out), optional :: ierr
        integer(c_int) :: st, nd
        start = 0
        count = 0
        st = c_selection(ch%x, ch%h, ch%index, cstr(name), start, count, &
                         int(min(size(start), size(count)), c_int), nd)
        if (present(ndims)) ndims = int(nd)
        call finish(st, 'xfer_selection '//trim(name), ierr)
    end subroutine xfer_selection

    !> Attach a numeric attribute (an integer or real scalar or 1-D array) to the current step.
    !! unsigned=.true. gives an integer the unsigned type of its size (C readers see uint64_t
    !! ...; Fortran has no unsigned integers).
    subroutine xfer_put_attr(ch, name, value, unsigned, ierr)
        type(xfer_channel_t), intent(in) :: ch
        character(len=*), intent(in) :: name
        type(*), dimension(..), intent(in) :: value
        logical, intent(in), optional :: unsigned
        integer, intent(out), optional :: ierr
        integer(c_int) :: u
        u = 0
        if (present(unsigned)) then
            if (unsigned) u = 1
        end if
        call finish(c_put_attr(ch%h, cstr(name), value, u), 'xfer_put_attr '//trim(name), ierr)
    end subroutine xfer_put_attr

    !> Attach a string attribute (trailing blanks removed) to the current step.
    subroutine xfer_put_attr_string(ch, name, value, ierr)
        type(xfer_channel_t), intent(in) :: ch
        character(len=*), intent(in) :: name, value
        integer, intent(out), optional :: ierr
        call finish(c_put_attr_string(ch%h, cstr(name), cstr(value)), &
                    'xfer_put_attr_string '//trim(name), ierr)
    end subroutine xfer_put_attr_string

    !> Read a numeric attribute of the current step into value, of its type's size and count.
    subroutine xfer_get_attr(ch, name, value, ierr)
        type(xfer_channel_t), intent(in) :: ch
        character(len=*), intent(in) :: name
        type(*), dimension(..), intent(inout) :: value
        integer, intent(out), optional :: ierr
        call finish(c_get_attr(ch%h, cstr(name), value), 'xfer_get_attr '//trim(name), ierr)
    end subroutine xfer_get_attr

    !> Read a string attribute of the current step (blank-padded into value).
    subroutine xfer_get_attr_string(ch, name, value, ierr)
        type(xfer_channel_t), intent(in) :: ch
        character(len=*), intent(in) :: name
        character(len=*), intent(out) :: value
        integer, intent(out), optional :: ierr
        call finish(c_get_attr_string(ch%h, cstr(name), value, int(len(value), c_size_t)), &
                    'xfer_get_attr_string '//trim(name), ierr)
    end subroutine xfer_get_attr_string

    !> How many datasets the channel has.
    subroutine xfer_dataset_count(ch, n, ierr)
        type(xfer_channel_t), intent(in) :: ch
        integer, intent(out) :: n
        integer, intent(out), optional :: ierr
        integer(c_int) :: st, m
        st = c_ndatasets(ch%x, ch%index, m)
        n = int(m)
        call finish(st, 'xfer_dataset_count', ierr)
    end subroutine xfer_dataset_count

    !> Dataset i (1-based) of the channel: name, XFER_TYPE_*, rank, dims in Fortran order (the
    !! shape of a Fortran array of the whole dataset; 0 where each step gives the extent: a
    !! joined dataset's rows, a variable entry) and whether this component sends it.
    subroutine xfer_dataset_info(ch, i, name, type, ndims, dims, sent, ierr)
        type(xfer_channel_t), intent(in) :: ch
        integer, intent(in) :: i
        character(len=*), intent(out) :: name
        integer, intent(out) :: type, ndims
        integer(c_int64_t), dimension(XFER_MAX_DIMS), intent(out) :: dims
        logical, intent(out) :: sent
        integer, intent(out), optional :: ierr
        integer(c_int) :: st, t, nd, s
        dims = 0
        st = c_dataset(ch%x, ch%index, int(i, c_int), name, int(len(name), c_size_t), t, nd, &
                       dims, s)
        type = int(t)
        ndims = int(nd)
        sent = s /= 0
        call finish(st, 'xfer_dataset_info', ierr)
    end subroutine xfer_dataset_info

    !> The box (0-based start, count, Fortran order) rank rank of nranks holds of an array of
    !! Fortran shape dims under mode (XFER_SELECT_ALL, _ROWS, _COLUMNS or _BLOCK; ROWS splits
    !! the last Fortran dimension).
    subroutine xfer_decompose(mode, dims, nranks, rank, start, count, ierr)
        integer, intent(in) :: mode, nranks, rank
        integer(c_int64_t), dimension(:), intent(in) :: dims
        integer(c_int64_t), dimension(:), intent(out) :: start, count
        integer, intent(out), optional :: ierr
        integer(c_int) :: st
        start = 0
        count = 0
        if (size(start) < size(dims) .or. size(count) < size(dims)) then
            st = c_set_error(XFER_ERR_INVALID_ARG, &
                             cstr('xfer_decompose: start and count are shorter than dims'))
        else
            st = c_decompose(int(mode, c_int), int(size(dims), c_int), dims, int(nranks, c_int), &
                             int(rank, c_int), start, count)
        end if
        call finish(st, 'xfer_decompose', ierr)
    end subroutine xfer_decompose

end module xfer
