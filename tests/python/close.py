#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""close.py: the Python side of close_prog's two channels (tests/runtime/close_prog.c), leaving
channel c1 early while c2 goes on (docs/bindings.md, "Closing a channel").

    mpiexec -n P close_prog --closer reader ... : -n Q python3 close.py --how with|close
    mpiexec -n P python3 close.py --sender : -n Q close_prog --closer sender

Reader (component b): a for loop over c1's steps, each with the same step of c2; after step
K - 1 it leaves the loop: --how with, by break inside ``with wf.channel("c1") as c1:`` and then
the with block; --how close, by break and c1.close(). Then c1 is closed (closed is True, its
calls raise StateError, the loop's generator too, close() again does nothing) and c2 is read
to its end with a for loop. Every element of every step is checked against close_prog's values
(channel * 1e9 + step * 1e6 + global index). Sender (component a, --sender): K steps of c1 and c2,
then c1.close(), then c2 to S steps. After finalize both channels are closed: close() does
nothing, a call raises StateError. Exits 1 on a failed check.
"""
import sys

import numpy as np

import xfer

STEPS, AT, PER_RANK = 12, 4, 8


def check(cond, what):
    if not cond:
        print(f"close.py: {WHO} rank {RANK}: FAILED: {what}", file=sys.stderr, flush=True)
        sys.exit(1)


def value(c, step, idx):
    return (c + 1) * 10**9 + step * 10**6 + idx


def check_step(s, c, want):
    shape = s.get_shape("v")
    got = s.get("v")
    idx = np.arange(shape.start[0], shape.start[0] + shape.count[0], dtype=np.int64)
    check(shape.step == want, f"c{c + 1}: step {shape.step}, expected {want}")
    check(got.dtype == np.int64 and np.array_equal(got, value(c, shape.step, idx)),
          f"c{c + 1} step {shape.step}: data differs")


def closed_checks(wf, c1, it):
    check(c1.closed and wf.channel("c1") is c1, "c1 is closed, and the workflow's c1")
    for call in (lambda: c1.begin_step(0), lambda: c1.stats(), lambda: next(it)):
        try:
            call()
        except xfer.StateError as e:
            check("was closed" in str(e), f"StateError's words: {e}")
        else:
            check(False, "a call on the closed channel did not raise StateError")
    c1.close()  # idempotent
    check("closed" in repr(c1), f"repr {c1!r}")


def reader(wf, how):
    c2 = wf.channel("c2")
    n1 = n2 = 0
    if how == "with":
        with wf.channel("c1") as c1:
            it = iter(c1)
            for s in it:
                check_step(s, 0, n1)
                n1 += 1
                with c2.step() as t:
                    check_step(t, 1, n2)
                    n2 += 1
                if n1 == AT:
                    break
            check(not c1.closed, "c1 closed by leaving the loop alone")
    else:
        c1 = wf.channel("c1")
        it = iter(c1)
        for s in it:
            check_step(s, 0, n1)
            n1 += 1
            with c2.step() as t:
                check_step(t, 1, n2)
                n2 += 1
            if n1 == AT:
                break
        c1.close()
    closed_checks(wf, c1, it)
    for t in c2:
        check_step(t, 1, n2)
        n2 += 1
    check(n1 == AT and n2 == STEPS, f"c1: {n1} steps, c2: {n2} steps")
    print(f"close.py: b rank {RANK}: c1: {n1} steps, c2: {n2} steps ({how})", flush=True)


def sender(wf):
    c1, c2 = wf.channel("c1"), wf.channel("c2")
    size = wf.comm.size
    idx = np.arange(RANK * PER_RANK, (RANK + 1) * PER_RANK, dtype=np.int64)
    for i in range(STEPS):
        if i == AT:
            c1.close()
            closed_checks(wf, c1, iter(c1))
        for c, ch in ((0, c1), (1, c2)):
            if ch.closed:
                continue
            with ch.step() as s:
                check(ch.datasets["v"].shape == (size * PER_RANK,), "the dataset's shape")
                s.put("v", value(c, i, idx), start=(RANK * PER_RANK,))
    check(c2.stats()["steps"] == STEPS, "c2's steps")
    print(f"close.py: a rank {RANK}: c1 closed after {AT} steps, c2: {STEPS} steps", flush=True)


def main():
    global WHO, RANK
    args = sys.argv[1:]
    how = args[args.index("--how") + 1] if "--how" in args else "with"
    with xfer.init() as wf:
        RANK = wf.comm.rank
        if "--sender" in args:
            WHO = "a"
            sender(wf)
        else:
            WHO = "b"
            reader(wf, how)
    # after finalize: close() does nothing (finalize closed every channel), a call raises
    for name in ("c1", "c2"):
        ch = wf.channel(name)
        ch.close()
        check(ch.closed, f"{name} closed after finalize")
        try:
            ch.stats()
        except xfer.StateError:
            pass
        else:
            check(False, f"{name}: a call after finalize did not raise StateError")


WHO, RANK = "?", -1
if __name__ == "__main__":
    main()
