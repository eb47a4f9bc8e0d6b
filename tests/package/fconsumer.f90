! SPDX-License-Identifier: BSD-3-Clause
! Built against an installed libxfer's Fortran module; needs no MPI launch.
program fconsumer
    use xfer
    use, intrinsic :: iso_c_binding, only: c_int64_t
    implicit none
    integer(c_int64_t) :: start(2), count(2)
    call xfer_decompose(XFER_SELECT_ROWS, [8_c_int64_t, 10_c_int64_t], 2, 1, start, count)
    if (any(start /= [0, 5]) .or. any(count /= [8, 5])) error stop 'xfer_decompose'
    if (xfer_status_name(XFER_ERR_MISMATCH) /= 'XFER_ERR_MISMATCH') error stop 'status names'
    print '(a)', 'fconsumer: the Fortran module xfer: ok'
end program fconsumer
