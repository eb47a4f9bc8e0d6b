#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""interrupt.py: Ctrl-C in a blocked get raises KeyboardInterrupt within a second.

    mpiexec -n 1 python3 interrupt.py : -n 1 python3 interrupt.py   (XFER_CONFIG: 1 x 1)

The producer computes (sleeps) 2.5 s before each of its two steps. The consumer is waiting in
Channel.get for step 0, then in Channel.begin_step for step 1, when a timer sends its own
process SIGINT (a real signal, handled by Python's default handler) 0.5 s into each wait: the
KeyboardInterrupt must come within a second of the signal, and the same call made again must
then return the step intact (libxfer changed nothing). With --uncaught the consumer does not
catch it: the program must end (the package aborts MPI so that no peer waits for it).
"""
import os
import signal
import sys
import threading
import time

import numpy as np

import xfer

N = 1000


def fail(msg):
    print(f"interrupt.py: FAILED: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def sigint_in(seconds, sent):
    def fire():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)
    t = threading.Timer(seconds, fire)
    t.daemon = True
    t.start()


def interrupted(call, *args):
    """call(*args) interrupted by SIGINT after 0.5 s: the latency, then the call's result."""
    sent = []
    sigint_in(0.5, sent)
    try:
        call(*args)
        fail(f"{call.__name__} returned before the signal")
    except KeyboardInterrupt:
        latency = time.monotonic() - sent[0]
    if latency >= 1.0:
        fail(f"KeyboardInterrupt {latency:.3f} s after SIGINT")
    print(f"interrupt.py: {call.__name__}: KeyboardInterrupt {1e3 * latency:.0f} ms after SIGINT",
          flush=True)
    return call(*args)


def main():
    uncaught = "--uncaught" in sys.argv
    wf = xfer.init()
    ch = wf.channel("c")
    if wf.component == "prod":
        for s in range(2):
            time.sleep(30 if uncaught else 2.5)
            with ch.step():
                ch.put("x", np.arange(N, dtype=np.float64) + s)
        wf.finalize()
        return
    if uncaught:
        sigint_in(0.5, [])
        ch.get("x")  # KeyboardInterrupt ends the program
        fail("get returned")
    x = interrupted(ch.get, "x")
    if not np.array_equal(x, np.arange(N, dtype=np.float64)):
        fail("step 0 differs after the interrupted get")
    ch.end_step()
    if interrupted(ch.begin_step, None) != xfer.StepStatus.OK:
        fail("step 1 did not begin after the interrupted begin_step")
    if not np.array_equal(ch.get("x"), np.arange(N, dtype=np.float64) + 1):
        fail("step 1 differs")
    ch.end_step()
    wf.finalize()
    print("interrupt.py: ok", flush=True)


if __name__ == "__main__":
    main()
