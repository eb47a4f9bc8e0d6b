#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""cases.py: the Python workflow API's behaviour, in one MPMD launch of two components.

    mpiexec -n P python3 cases.py : -n Q python3 cases.py      (XFER_CONFIG: cases.yaml)

The producer `prod` puts every step's datasets (one of each libxfer type, 1-D to 4-D, blocks
from C- and Fortran-ordered and strided arrays, lists and scalars), tries wrong puts first (the
wrong dtype, shape, kind; each must raise InvalidArgumentError naming the dataset and send
nothing) and attaches attributes. The consumer `cons` polls before the first step (NOT_READY,
NotReady), gets every dataset into new arrays, given arrays, strided arrays and its bound array
and compares them byte for byte with xfer-synth's pattern (synth.py), checks the bad gets
(wrong dtype, shape, a read-only array, an unknown dataset) raise and leave the step intact,
reads the attributes, sees the stream end as the end of its loop, then EndOfStream and, after
finalize, StateError. Every failed check exits 1.
"""
import os
import sys
import time

import numpy as np

import xfer
from synth import box_pattern

STEPS = 3
TYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32",
         "float64"]


def check(cond, what):
    if not cond:
        print(f"cases.py: rank {RANK}: FAILED: {what}", file=sys.stderr, flush=True)
        sys.exit(1)


def raises(exc, fn, *args, contains=(), **kw):
    """fn(*args) must raise exc, with every string of `contains` in its message."""
    try:
        fn(*args, **kw)
    except exc as e:
        for c in contains:
            check(c in str(e), f"{exc.__name__} message {str(e)!r} lacks {c!r}")
        check(isinstance(e, xfer.XferError) and e.name.startswith("XFER_") and e.message and
              (isinstance(e.status, int) or exc is xfer.NotReady),
              f"{exc.__name__}: status, name and message attributes")
        return e
    except Exception as e:  # noqa: BLE001
        check(False, f"{fn.__name__}{args}: raised {type(e).__name__}: {e}, not {exc.__name__}")
    check(False, f"{fn.__name__}{args}: did not raise {exc.__name__}")


def expected(ds, index, start, count, step):
    return box_pattern(ds.dtype, ds.shape, start, count, 0, index, step)


def producer(wf, ch):
    size, rank = wf.comm.size, wf.comm.rank
    names = list(ch.datasets)
    check(ch.role == "send", "producer role")
    raises(xfer.InvalidArgumentError, ch.get, "f64_2d", contains=["f64_2d", "sent"])
    raises(xfer.InvalidArgumentError, ch.select, "f64_2d", (0, 0), (1, 1))
    raises(xfer.NotFoundError, ch.put, "nope", np.zeros(3), contains=["nope", "f64_2d"])
    time.sleep(1.5)  # the consumer polls meanwhile (NOT_READY)
    for s in range(STEPS):
        with ch.step(timeout=30) as st:
            check(st.index == s, "step index")
            for i, name in enumerate(names):
                ds = ch.datasets[name]
                start, count = xfer.decompose("block", ds.shape, size, rank)
                blk = expected(ds, i, start, count, s)
                if name == "f64_2d" and s == 0:
                    # wrong puts: each raises and sends nothing
                    raises(xfer.InvalidArgumentError, st.put, name, blk.astype(np.float32),
                           start=start, contains=[name, "float32", "float64"])
                    raises(xfer.InvalidArgumentError, st.put, name, blk.reshape(-1),
                           start=start, contains=[name, "shape"])
                    if blk.shape != ds.shape:
                        raises(xfer.InvalidArgumentError, st.put, name, blk,
                               contains=[name, "start="])
                    raises(xfer.InvalidArgumentError, st.put, name, blk.astype(">f8"),
                           start=start, contains=["byte-swapped"])
                if name == "i32_1d" and s == 0 and blk.size:
                    raises(xfer.InvalidArgumentError, st.put, name, blk.astype(np.float64).tolist(),
                           start=start, contains=[name, "kind"])
                if name == "f64_4d":  # a Fortran-ordered copy: same array, other layout
                    blk = np.asfortranarray(blk)
                elif name == "f32_3d":  # a strided view
                    big = np.zeros(blk.shape[:-1] + (3 * blk.shape[-1],), blk.dtype)
                    big[..., ::3] = blk
                    blk = big[..., ::3]
                elif name == "i32_1d" and blk.size:  # a list, converted (same kind)
                    blk = blk.tolist()
                st.put(name, blk, start=start)
            if rank == 0:
                st.attrs["time"] = 0.25 * s
                st.attrs["step"] = s
                st.attrs["name"] = f"step {s}"
                st.attrs["v"] = np.arange(4, dtype=np.float32) + s
                raises(xfer.InvalidArgumentError, st.attrs.__setitem__, "flag", True)
                raises(xfer.InvalidArgumentError, st.attrs.__setitem__, "m", np.zeros((2, 2)))


def consumer(wf, ch):
    size, rank = wf.comm.size, wf.comm.rank
    names = list(ch.datasets)
    check(ch.role == "recv", "consumer role")
    # rows of f64_2d by the file's mode; a user box for u8_2d, declared here
    start, count = ch.selection("f64_2d")
    want = xfer.decompose("rows", ch.datasets["f64_2d"].shape, size, rank)
    check((start, count) == want, f"selection of f64_2d {start, count} vs {want}")
    box = ((1, 2), (3, 4)) if rank % 2 == 0 else ((0, 0), (0, 0))
    ch.select("u8_2d", *box)
    check(ch.selection("u8_2d") == box, "xfer.select then selection")
    raises(xfer.InvalidArgumentError, ch.select, "u8_2d", (5, 0), (9, 1),
           contains=["u8_2d", "exceeds"])
    bound = np.zeros(ch.selection("u16_2d")[1], np.uint16)
    ch.bind("u16_2d", bound)
    # before the producer's first step: a status, not an error
    t0 = time.monotonic()
    check(ch.begin_step(0) == xfer.StepStatus.NOT_READY, "poll before step 0: NOT_READY")
    raises(xfer.NotReady, ch.step, 0.2)
    waited = time.monotonic() - t0
    check(0.15 <= waited < 1.4, f"ch.step(timeout=0.2) raised NotReady after {waited:.3f} s")
    n = 0
    for st in ch:
        s = st.index
        check(s == n, f"step {s}, expected {n}")
        for i, name in enumerate(names):
            ds = ch.datasets[name]
            start, count = ch.selection(name)
            want = expected(ds, i, start, count, s)
            got = st.get(name)
            check(got.dtype == ds.dtype and got.shape == tuple(count),
                  f"{name}: {got.dtype} {got.shape}")
            check(got.tobytes() == want.tobytes(), f"{name} step {s}: differs")
            if name == "u16_2d":
                check(got is bound, "get of a bound dataset returns the bound array")
                continue
            out = np.full(count, 7, ds.dtype)
            check(st.get(name, out=out) is out and out.tobytes() == want.tobytes(),
                  f"{name}: get into out")
            if len(count) >= 2 and all(count):  # a strided output array
                big = np.zeros(tuple(count[:-1]) + (2 * count[-1],), ds.dtype)
                view = big[..., 1::2]
                st.get(name, out=view)
                check(view.tobytes() == want.tobytes() and not big[..., ::2].any(),
                      f"{name}: get into a strided view")
            if name == "f64_2d" and s == 0:
                raises(xfer.InvalidArgumentError, st.get, name, out=np.zeros(count, np.float32),
                       contains=[name, "float32"])
                raises(xfer.InvalidArgumentError, st.get, name,
                       out=np.zeros((count[0] + 1, count[1])), contains=[name, "shape"])
                ro = np.zeros(count)
                ro.flags.writeable = False
                raises(xfer.InvalidArgumentError, st.get, name, out=ro,
                       contains=[name, "not writable"])
                check(not ro.any(), "a read-only array stays untouched")
                raises(xfer.InvalidArgumentError, st.get, name, start=(0, 0),
                       contains=["both start and count"])
                raises(xfer.NotFoundError, st.get, "nope", contains=["nope"])
                # after the failed calls the step is intact
                check(st.get(name).tobytes() == want.tobytes(), "get again after errors")
        check(st.attrs["time"] == 0.25 * s and st.attrs["step"] == s, "numeric attributes")
        check(isinstance(st.attrs["step"], int) and isinstance(st.attrs["time"], float),
              "scalars come back as Python numbers")
        check(st.attrs["name"] == f"step {s}", "string attribute")
        check(np.array_equal(st.attrs["v"], np.arange(4, dtype=np.float32) + s) and
              st.attrs["v"].dtype == np.float32, "array attribute")
        check(sorted(st.attrs) == ["name", "step", "time", "v"] and "v" in st.attrs,
              f"attribute names {sorted(st.attrs)}")
        try:
            st.attrs["missing"]
            check(False, "a missing attribute raises KeyError")
        except KeyError:
            pass
        n += 1
    check(n == STEPS, f"{n} steps before the end of the stream, expected {STEPS}")
    raises(xfer.EndOfStream, ch.step)
    check(ch.begin_step(0) == xfer.StepStatus.END_OF_STREAM, "END_OF_STREAM stays")
    raises(xfer.EndOfStream, ch.get, "f64_2d")
    stats = ch.stats()
    check(stats["steps"] == STEPS and stats["bytes_received"] > 0, f"stats {stats}")


def main():
    global RANK
    wf = xfer.init()
    RANK = wf.comm.rank
    me = wf.component
    ch = wf.channel("c")
    check(ch is wf.channel("c") and wf.channels == ["c"], "channel cache")
    check(isinstance(wf.comm, xfer.Comm) and wf.comm.size >= 1, "component communicator")
    check(xfer.Comm(ch.intercomm).is_inter, "the channel's intercommunicator")
    (producer if me == "prod" else consumer)(wf, ch)
    wf.finalize()
    wf.finalize()  # idempotent
    raises(xfer.StateError, ch.begin_step, 0, contains=["finalized"])
    raises(xfer.StateError, ch.get, "f64_2d", contains=["finalized"])
    raises(xfer.StateError, xfer.Channel, wf, "c", contains=["finalized"])
    if RANK == 0:
        print(f"cases.py: {me}: ok", flush=True)


RANK = -1
if __name__ == "__main__":
    main()
