# SPDX-License-Identifier: BSD-3-Clause
"""transport: file behaviours the synthetic components do not reach (tests/python/tests.cmake):

  file_transport.py close     the receiver stops after 2 of 8 steps (keep: false, one step in
                              flight): the sender's next steps end with EndOfStream
  file_transport.py keep      keep: false: the sender never has more than max_in_flight_steps + 1
                              step files waiting, and none is left at the end
  file_transport.py write     a sender alone (no receiver running) writes STEPS steps
  file_transport.py read      a receiver alone reads them later: data, attributes, the end
  file_transport.py rerun     like read, after the sender ran twice: only the second run's data

The data of step s, rank r's rows: value = 1000 * s + global index (+ 0.5 with --second).
Run in one MPMD launch (close, keep) or alone (write, read) with XFER_TRANSPORT_DIR set.
"""
import glob
import os
import sys
import time

import numpy as np

import xfer

ROWS, COLS = 12, 5


def field(step, offset):
    return (1000.0 * step + np.arange(ROWS * COLS, dtype=np.float64).reshape(ROWS, COLS)
            + offset)


def send(wf, steps, offset, expect_close=False, count_files=None):
    ch = wf.channel("c")
    start, count = xfer.decompose("rows", (ROWS, COLS), wf.comm.size, wf.comm.rank)
    sent = 0
    try:
        for s in range(steps):
            with ch.step() as st:
                block = field(s, offset)[start[0]:start[0] + count[0]]
                st.put("f", block, start=start)
                st.attrs["step_time"] = 0.25 * s
                st.attrs["label"] = f"step {s}"
            sent += 1
            if count_files is not None and wf.comm.rank == 0:
                n = len(glob.glob(os.path.join(count_files, "a.[0-9]*.h5")))
                if n > count_files_limit:
                    sys.exit(f"send: {n} step files waiting after step {s}, the bound is "
                             f"{count_files_limit}")
    except xfer.EndOfStream as e:
        if not expect_close:
            raise
        if wf.comm.rank == 0:
            print(f"send: the receiver closed after {sent} of {steps} steps: {e}", flush=True)
        return sent
    if expect_close:
        sys.exit(f"send: all {steps} steps went out; the receiver's close was never seen")
    return sent


def receive(wf, steps, offset, stop_after=None, slow=0.0):
    ch = wf.channel("c")
    got = 0
    for st in ch:
        v = st.get("f")
        (r0, _), (nr, _) = ch.selection("f")
        want = field(st.index, offset)[r0:r0 + nr]
        if v.shape != want.shape or not np.array_equal(v, want):
            sys.exit(f"receive: step {st.index}: data differs from what was sent")
        if st.attrs["step_time"] != 0.25 * st.index or st.attrs["label"] != f"step {st.index}":
            sys.exit(f"receive: step {st.index}: attributes {dict(st.attrs)}")
        got += 1
        if slow:
            time.sleep(slow)
        if stop_after is not None and got == stop_after:
            break
    if stop_after is None and got != steps:
        sys.exit(f"receive: {got} steps, expected {steps}")
    return got


def main():
    global count_files_limit
    what = sys.argv[1]
    steps = int(os.environ.get("STEPS", "6"))
    offset = 0.5 if "--second" in sys.argv else 0.0
    with xfer.init() as wf:
        sender = wf.component == "a"
        if what == "close":
            if sender:
                n = send(wf, 8, offset, expect_close=True)
                if n >= 8:
                    sys.exit("send: no close seen")
            else:
                receive(wf, 8, offset, stop_after=2)
        elif what == "keep":
            d = os.path.join(os.environ["XFER_TRANSPORT_DIR"], "file_transport", "c")
            count_files_limit = wf.config["channels"][0]["max_in_flight_steps"] + 1
            if sender:
                send(wf, steps, offset, count_files=d)
            else:
                receive(wf, steps, offset, slow=0.05)
        elif what == "write":
            send(wf, steps, offset)
        elif what in ("read", "rerun"):
            receive(wf, steps, offset)
        else:
            sys.exit(f"unknown scenario {what}")
        rank = wf.comm.rank
        comp = wf.component
    if what == "keep" and not sender and rank == 0:
        left = glob.glob(os.path.join(d, "a.[0-9]*.h5"))
        if left:
            sys.exit(f"keep: false left {left}")
    if rank == 0:
        print(f"file_transport {what}: {comp}: ok", flush=True)


count_files_limit = 0
if __name__ == "__main__":
    main()
