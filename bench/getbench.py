#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""getbench.py: the Python consumer of tools/xfer-getbench.c (bench/get-bench.sh).

Begins each step, then times Channel.get of the whole dataset x into an array allocated once
(get(out=...)) and into a new array (get()), alternately, and prints
    lang,call,bytes,steps,min_us,median_us,max_us
for each over the steps after the first two (their warm-up)."""
import sys
import time

import numpy as np

import xfer


def main():
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 50
    wf = xfer.init(thread_level="single")
    ch = wf.channel("c")
    n = ch.datasets["x"].shape[0]
    out = np.empty(n, np.uint8)
    times = {"get_out": [], "get_new": []}
    for s in range(steps):
        if ch.begin_step() != xfer.StepStatus.OK:
            sys.exit("getbench.py: the stream ended early")
        call = "get_out" if s % 2 == 0 else "get_new"
        t0 = time.perf_counter()
        if call == "get_out":
            ch.get("x", out=out)
        else:
            ch.get("x")
        times[call].append(time.perf_counter() - t0)
        ch.end_step()
    wf.finalize()
    for call, t in times.items():
        t = sorted(t[1:])
        print(f"python,{call},{n},{len(t)},{1e6 * t[0]:.2f},{1e6 * t[len(t) // 2]:.2f},"
              f"{1e6 * t[-1]:.2f}", flush=True)


if __name__ == "__main__":
    main()
