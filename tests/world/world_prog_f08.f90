! SPDX-License-Identifier: BSD-3-Clause
! world_prog.f90 with use mpi_f08 (tests/world/world_test.sh): the same calls on MPI_COMM_WORLD,
! a type(MPI_Comm) here, some of them without their optional ierror, and the same line printed;
! and MPI_Alltoallw, whose arrays have the world's size.
program world_prog_f08
  use mpi_f08
  implicit none
  integer :: ierr, rank, size, total, biggest, left, right, got, hsize, cmp, failures
  integer :: key, namelen, i
  integer(kind=8) :: token
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  type(MPI_Comm) :: dup, half
  type(MPI_Errhandler) :: eh
  type(MPI_Status) :: status
  logical :: flag
  character(len=MPI_MAX_OBJECT_NAME) :: name
  integer, allocatable :: sendbuf(:), recvbuf(:), counts(:), displs(:)
  type(MPI_Datatype), allocatable :: types(:)

  failures = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total /= size * (size - 1) / 2) call fail('Allreduce')
  call MPI_Reduce(rank, biggest, 1, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD)
  if (rank == 0 .and. biggest /= size - 1) call fail('Reduce')
  token = 0
  if (rank == 0) token = 4242
  call MPI_Bcast(token, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD, ierr)
  if (token /= 4242) call fail('Bcast')
  left = modulo(rank - 1, size)
  right = modulo(rank + 1, size)
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, right, 7, got, 1, MPI_INTEGER, left, 7, &
                    MPI_COMM_WORLD, status, ierr)
  if (got /= left) call fail('Sendrecv')
  ! every rank sends its rank to every rank: counts, displacements and types of the world's size
  allocate (sendbuf(size), recvbuf(size), counts(size), displs(size), types(size))
  sendbuf = rank
  recvbuf = -1
  counts = 1
  displs = [(4 * i, i = 0, size - 1)]
  types = MPI_INTEGER
  call MPI_Alltoallw(sendbuf, counts, displs, types, recvbuf, counts, displs, types, &
                     MPI_COMM_WORLD, ierr)
  if (any(recvbuf /= [(i, i = 0, size - 1)])) call fail('Alltoallw')
  ! a user attribute on the world, copied by MPI_Comm_dup; a predefined one
  extra = 0
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key, extra, ierr)
  val = 1000 + size
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key, val)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_compare(MPI_COMM_WORLD, dup, cmp, ierr)
  if (cmp /= MPI_CONGRUENT) call fail('Comm_compare')
  val = 0
  call MPI_Comm_get_attr(MPI_COMM_WORLD, key, val, flag)
  if (.not. flag .or. val /= 1000 + size) call fail('Comm_get_attr of a user key')
  val = 0
  call MPI_Comm_get_attr(dup, key, val, flag, ierr)
  if (.not. flag .or. val /= 1000 + size) call fail('the user key copied by Comm_dup')
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, key, ierr)
  if (ierr /= MPI_SUCCESS) call fail('Comm_delete_attr')
  call MPI_Comm_get_attr(MPI_COMM_WORLD, key, val, flag, ierr)
  if (flag) call fail('the user key deleted')
  call MPI_Comm_free_keyval(key, ierr)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag, ierr)
  if (.not. flag .or. val < 32767) call fail('MPI_TAG_UB')
  call MPI_Comm_split(MPI_COMM_WORLD, modulo(rank, 2), rank, half, ierr)
  call MPI_Comm_size(half, hsize, ierr)
  if (hsize /= (size + 1 - modulo(rank, 2)) / 2) call fail('Comm_split')
  ! the world's name (a string: hidden lengths)
  call MPI_Comm_get_name(MPI_COMM_WORLD, name, namelen, ierr)
  if (name /= 'MPI_COMM_WORLD' .or. namelen /= 14) call fail('Comm_get_name')
  call MPI_Comm_set_name(MPI_COMM_WORLD, 'world_fprog')
  call MPI_Comm_get_name(MPI_COMM_WORLD, name, namelen)
  if (name /= 'world_fprog' .or. namelen /= 11) call fail('Comm_set_name')
  ! an error handler on the world; a send to rank `size` then returns an error
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Comm_get_errhandler(MPI_COMM_WORLD, eh, ierr)
  if (eh /= MPI_ERRORS_RETURN) call fail('Comm_get_errhandler')
  call MPI_Errhandler_free(eh, ierr)
  call MPI_Send(rank, 1, MPI_INTEGER, size, 0, MPI_COMM_WORLD, ierr)
  if (ierr == MPI_SUCCESS) call fail('a send to rank size succeeded')
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a,i0,a,i0)', 'world_fprog: ', size, ' ranks, sum ', total, &
    ', max ', biggest, ', failures ', failures
  call MPI_Comm_free(half, ierr)
  call MPI_Comm_free(dup, ierr)
  call MPI_Finalize()
  if (failures /= 0) stop 1

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    write (0, '(a,i0,a,a)') 'world_prog_f08: rank ', rank, ': check failed: ', what
    failures = failures + 1
  end subroutine fail
end program world_prog_f08
