/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test-only LD_PRELOAD helper for memory checkers (ASan/LSan, valgrind): makes dlclose() a
 * no-op. The MPI stacks (UCX transports, Open MPI components) dlclose their plug-ins during
 * MPI_Finalize, after which a leak checker can neither see the plug-ins' globals (their allocations
 * then look leaked) nor name the module in a report ("<unknown module>"), so nothing can be
 * suppressed precisely. Keeping the modules mapped gives reports with real frames and no such false
 * positives.
 */
int dlclose(void *handle);

int dlclose(void *handle)
{
    (void) handle;
    return 0;
}
