/* SPDX-License-Identifier: BSD-3-Clause */
/* Built against an installed libxfer (CMake package and pkg-config); needs no MPI launch. */
#include <stdio.h>
#include <string.h>

#include <xfer/xfer.h>

int main(void)
{
    int n = 0;
    xfer_algo_info_t info;
    if (xfer_algorithm_count(&n) != XFER_SUCCESS || n < 1)
        return 1;
    if (xfer_algorithm_info(0, &info) != XFER_SUCCESS || strcmp(info.name, "native") != 0)
        return 1;
    printf("consumer: libxfer %s, %d algorithms\n", XFER_VERSION_STRING, n);
    return 0;
}
