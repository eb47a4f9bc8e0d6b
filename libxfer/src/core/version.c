/* SPDX-License-Identifier: BSD-3-Clause */
/* Which libxfer a process loaded: the version compiled into the library (not the headers'), and
 * the file the dynamic linker opened, so that `python3 -m xfer info` and a user's program can
 * tell a stale install from the one they meant. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#include <xfer/version.h>

#include "core.h"

xfer_status_t xfer_library_version(const char **version, const char **mpi_flavor)
{
    if (version)
        *version = XFER_VERSION_STRING;
    if (mpi_flavor)
        *mpi_flavor = XFER_MPI_FLAVOR;
    return XFER_SUCCESS;
}

xfer_status_t xfer_library_path(const char **path)
{
    Dl_info info;
    if (!path)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "path is NULL");
    *path = NULL;
    /* dli_fname lives as long as the library stays loaded: as long as this code does. */
    if (!dladdr((void *) (uintptr_t) xfer_library_path, &info) || !info.dli_fname ||
        !info.dli_fname[0])
        return XFER_ERR(XFER_ERR_NOT_SUPPORTED, "the dynamic linker does not know libxfer's file "
                                                "(a static link?)");
    *path = info.dli_fname;
    return XFER_SUCCESS;
}
