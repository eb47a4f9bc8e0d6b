/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libxfer_ucx_yield.so: an LD_PRELOAD helper for oversubscribed runs (more ranks than cores)
 * of Debian's MPICH (ch4:ucx), used by the test launcher and by scripts/demo.sh.
 *
 * MPICH/UCX waits by polling ucp_worker_progress() in user space and never enters the kernel,
 * so with more ranks than cores a waiting rank burns its whole time slice while the rank it
 * waits for is descheduled: 8 ranks on 2 cores run a 64 KiB intercomm allgather ~800x slower
 * than with one rank per core. This wrapper yields the CPU after a run of idle polls. It
 * changes no MPI semantics (progress is still made on every call) and helps the MPI library's
 * own collectives exactly as much as libxfer's, so comparisons stay fair; with one rank per
 * core it is not needed. Whoever uses it for timings says so.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

typedef unsigned (*progress_fn)(void *worker);

unsigned ucp_worker_progress(void *worker);

unsigned ucp_worker_progress(void *worker)
{
    static progress_fn real;
    static unsigned idle;
    unsigned n;

    if (!real)
        real = (progress_fn) dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (!real) {
        /* MPI loaded with dlopen(RTLD_LOCAL), as by a Python extension module: UCX is not in
         * the global scope that RTLD_NEXT searches, but it is loaded */
        void *ucp = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);
        if (ucp)
            real = (progress_fn) dlsym(ucp, "ucp_worker_progress");
    }
    if (!real)
        return 0;
    n = real(worker);
    if (n == 0 && ++idle >= 16) {
        idle = 0;
        sched_yield();
    } else if (n) {
        idle = 0;
    }
    return n;
}
