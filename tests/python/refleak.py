#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""refleak.py: 1000 steps through the Python API leak no references and no memory.

    mpiexec -n 1 python3 refleak.py : -n 1 python3 refleak.py     (XFER_CONFIG: 1 x 1)

Each step the producer puts an array (the same object every step) and attributes (a number, a
string, an array); the consumer iterates over the channel, gets into a new array, into a given
one and reads the attributes. Between step 100 and step 1000 the reference counts of the arrays
handed to libxfer must not change, the number of objects the garbage collector tracks must not
grow, and tracemalloc must see less than 64 KiB more memory allocated by Python (a leak of one
small object per step would be 900 objects and tens of KiB)."""
import gc
import sys
import tracemalloc

import numpy as np

import xfer

STEPS = 1000
WARM = 100


def fail(msg):
    print(f"refleak.py: FAILED: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def measure(*objs):
    gc.collect()
    return ([sys.getrefcount(o) for o in objs], len(gc.get_objects()),
            tracemalloc.get_traced_memory()[0])


def compare(me, before, after):
    (rc0, n0, m0), (rc1, n1, m1) = before, after
    print(f"refleak.py: {me}: refcounts {rc0} -> {rc1}, gc objects {n0} -> {n1}, "
          f"traced memory {m0} -> {m1} bytes over {STEPS - WARM} steps", flush=True)
    if rc0 != rc1:
        fail(f"{me}: reference counts changed: {rc0} -> {rc1}")
    if n1 > n0 + 10:
        fail(f"{me}: {n1 - n0} more objects tracked by the garbage collector")
    if m1 - m0 > 64 * 1024:
        fail(f"{me}: {m1 - m0} more bytes allocated")


def main():
    tracemalloc.start()
    wf = xfer.init()
    ch = wf.channel("c")
    if wf.component == "prod":
        block = np.zeros(1000)
        label = "a label"
        vec = np.arange(3, dtype=np.int32)
        for s in range(STEPS):
            if s == WARM:
                before = measure(block, label, vec)
            elif s == STEPS - 1:
                after = measure(block, label, vec)
            block[0] = s
            with ch.step() as st:
                st.put("x", block)
                st.attrs["t"] = 0.5 * s
                st.attrs["label"] = label
                st.attrs["vec"] = vec
        compare("producer", before, after)
    else:
        out = np.empty(1000)
        n = 0
        for st in ch:  # the same state at step WARM and at the last step
            if n == WARM:
                before = measure(out, ch)
            elif n == STEPS - 1:
                after = measure(out, ch)
            x = st.get("x")
            st.get("x", out=out)
            if x[0] != n or out[0] != n or st.attrs["t"] != 0.5 * n or \
                    st.attrs["label"] != "a label" or len(st.attrs["vec"]) != 3:
                fail(f"step {n} differs")
            n += 1
        if n != STEPS:
            fail(f"{n} steps")
        compare("consumer", before, after)
    wf.finalize()


if __name__ == "__main__":
    main()
