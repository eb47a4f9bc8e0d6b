# SPDX-License-Identifier: BSD-3-Clause
# The quickstart's consumer (docs/quickstart.md): each rank gets its rows of T every step and
# checks them against my_sim.c's (and my_sim.f90's) T[i][j] = 1e6 * step + 128 * i + j.
import numpy as np
import xfer

with xfer.init() as wf:                      # the file and component xfer-run gives
    ch = wf.channel("fields")
    (row0, _), (nrows, _) = ch.selection("T")  # the rows this rank receives
    want = (np.arange(row0, row0 + nrows)[:, None] * 128 + np.arange(128)).astype(np.float64)
    n = 0
    for step in ch:                          # until the producer finalizes
        t = step.get("T")                    # this rank's rows, a new numpy array
        if not np.array_equal(t, want + 1e6 * step.index):
            raise SystemExit(f"ana rank {wf.comm.rank}: step {step.index}: T is not as put")
        n += 1
    print(f"ana rank {wf.comm.rank}: rows {row0}-{row0 + nrows - 1}, {n} steps checked")
