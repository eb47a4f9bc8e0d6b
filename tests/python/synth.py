#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""synth.py: the Python twin of tools/xfer-synth.c, for couplings across languages.

It plays its component's part of every channel of the workflow file with xfer-synth's pattern
(a hash of channel, dataset, step and global element index, written in the dataset's type): a
sending rank puts its block of each dataset, a receiving rank gets what it holds (its
selection) and a hyperslab inside it and compares them byte for byte with the pattern. So
C (xfer-synth), Python (this) and Fortran (tests/fortran) components can be paired in any
direction and each checks what it receives exactly.

  synth.py [--steps N] [--decomp block|rows] [--attrs] [--strided] [--bind] [--begin SECONDS]
           [--corrupt] [--blocks N] [--move] [--config FILE] [--component NAME]

--strided puts from non-contiguous views (every other element of a larger array) and gets into
non-contiguous output arrays; --bind binds each dataset's buffer (xfer.Channel.bind: no copies);
--attrs puts and checks xfer-synth's per-step attributes (step, time, v3, label). --corrupt (a
negative control) changes one element of rank 0's first block in step 1: the receiver must fail.
--blocks N puts each block as up to N slabs of its first dimension, one put each (several blocks
per rank, docs/runtime.md), the last first on odd steps; --move makes rank r put rank
(r + s) mod n's block in step s of each dataset with blocks: per_step.
"""
import argparse
import sys

import numpy as np

import xfer

M64 = (1 << 64) - 1
K_CH, K_DS, K_STEP, K_G = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                           0x27D4EB2F165667C5)
K_MIX = 0xBF58476D1CE4E5B9


def pattern(dtype, ch, ds, step, g):
    """xfer-synth's element() for the global indices g (a uint64 array), in dtype."""
    dtype = np.dtype(dtype)
    base = (((ch + 1) * K_CH) ^ ((ds + 1) * K_DS) ^ ((step + 1) * K_STEP)) & M64
    with np.errstate(over="ignore"):
        h = np.uint64(base) ^ ((g.astype(np.uint64) + np.uint64(1)) * np.uint64(K_G))
        h ^= h >> np.uint64(29)
        h *= np.uint64(K_MIX)
        h ^= h >> np.uint64(32)
    if dtype == np.float32:
        return (h % np.uint64(1000003)).astype(np.float32) / np.float32(7.0)
    if dtype == np.float64:
        return (h % np.uint64(1000003)).astype(np.float64) / 7.0
    unsigned = np.dtype(f"u{dtype.itemsize}")
    return h.astype(unsigned).view(dtype)  # the low bytes, as C's conversion keeps them


def box_pattern(dtype, dims, start, count, ch, ds, step):
    """The pattern of the box start/count of a dataset of shape dims, C order."""
    if 0 in count:
        return np.zeros(count, dtype)
    idx = np.indices(count, dtype=np.uint64)
    g = np.zeros(count, np.uint64)
    for k in range(len(dims)):
        g = g * np.uint64(dims[k]) + np.uint64(start[k]) + idx[k]
    return pattern(dtype, ch, ds, step, g).reshape(count)


def strided_copy(a):
    """a as a non-contiguous view: every other element of the last axis of a larger array."""
    big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],) if a.ndim else (2,), a.dtype)
    view = big[..., ::2] if a.ndim else big[::2][0:1].reshape(())
    view[...] = a
    return view


def slabs(start, count, n, step):
    """The block start/count as up to n slabs of its first dimension (each put adds a block),
    the last first on odd steps; an empty block is one put of nothing."""
    n = max(1, min(n, count[0])) if count[0] else 1
    cuts = [count[0] * k // n for k in range(n + 1)]
    out = [((start[0] + cuts[k],) + tuple(start[1:]), (cuts[k + 1] - cuts[k],) + tuple(count[1:]))
           for k in range(n)]
    return out[::-1] if step % 2 else out


def fail(me, msg):
    print(f"synth.py: {me}: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--decomp", choices=["block", "rows"], default="block")
    p.add_argument("--attrs", action="store_true")
    p.add_argument("--strided", action="store_true")
    p.add_argument("--bind", action="store_true")
    p.add_argument("--begin", type=float, default=None)
    p.add_argument("--corrupt", action="store_true")
    p.add_argument("--blocks", type=int, default=1)
    p.add_argument("--move", action="store_true")
    p.add_argument("--config")
    p.add_argument("--component")
    a = p.parse_args()

    wf = xfer.init(a.config, a.component)
    me = wf.component
    comm = wf.comm
    rank, size = comm.rank, comm.size
    cfg = wf.config
    mine = [(i, c) for i, c in enumerate(cfg["channels"]) if me in (c["from"], c["to"])]
    chans = {i: wf.channel(c["name"]) for i, c in mine}
    blocks = {}  # (channel, dataset) -> (start, count) of this rank's block
    bound = {}
    for i, c in mine:
        ch = chans[i]
        for j, d in enumerate(c["datasets"]):
            dims = tuple(d["dims"])
            if d["from"] == me:
                blocks[i, j] = xfer.decompose(a.decomp, dims, size, rank)
                if a.bind:
                    bound[i, j] = np.empty(blocks[i, j][1], np.dtype(d["type"]))
                    ch.bind(d["name"], bound[i, j])
            elif a.bind:
                bound[i, j] = np.empty(ch.selection(d["name"])[1], np.dtype(d["type"]))
                ch.bind(d["name"], bound[i, j])
    checked = 0
    for s in range(a.steps):
        for i, c in mine:
            ch = chans[i]
            st = ch.begin_step(a.begin)
            while st == xfer.StepStatus.NOT_READY:
                st = ch.begin_step(a.begin)
            if st != xfer.StepStatus.OK:
                fail(me, f"channel {c['name']}: step {s}: {st.name}")
            for j, d in enumerate(c["datasets"]):
                if d["from"] != me:
                    continue
                start, count = blocks[i, j]
                if a.move and d["blocks"] == "per_step":
                    start, count = xfer.decompose(a.decomp, tuple(d["dims"]), size,
                                                  (rank + s) % size)
                for start, count in slabs(start, count, a.blocks, s):
                    blk = box_pattern(d["type"], d["dims"], start, count, i, j, s)
                    if a.corrupt and s == 1 and rank == 0 and j == 0 and blk.size:
                        blk.reshape(-1)[0] += 1
                    if a.bind:
                        bound[i, j][...] = blk
                        blk = bound[i, j]
                    elif a.strided:
                        blk = strided_copy(blk)
                        assert not blk.flags.c_contiguous or blk.size <= 1
                    ch.put(d["name"], blk, start=start)
            if a.attrs and ch.role != "recv":
                ch.attrs["step"] = np.uint64(s)
                ch.attrs["time"] = 0.5 * s
                ch.attrs["v3"] = np.array([s, s + 1, s + 2], np.int32)
                ch.attrs["label"] = "replaced below"
                ch.attrs["label"] = f"{me} step {s}"
        for i, c in mine:
            ch = chans[i]
            peer = c["to"] if c["from"] == me else c["from"]
            for j, d in enumerate(c["datasets"]):
                if d["from"] == me:
                    continue
                start, count = ch.selection(d["name"])
                want = box_pattern(d["type"], d["dims"], start, count, i, j, s)
                if a.strided:
                    got = strided_copy(np.zeros(count, np.dtype(d["type"])))
                    ch.get(d["name"], out=got)
                else:
                    got = ch.get(d["name"])
                    if a.bind and got is not bound[i, j]:
                        fail(me, f"{d['name']}: get did not return the bound array")
                if got.shape != tuple(count) or got.tobytes() != want.tobytes():
                    fail(me, f"channel {c['name']} dataset {d['name']} step {s}: differs "
                             f"(shape {got.shape}, want {tuple(count)})")
                # a hyperslab: the middle third of every dimension, inside the selection
                hs = tuple(st0 + cnt // 3 for st0, cnt in zip(start, count))
                hc = tuple(max(1, cnt // 3) if cnt else 0 for cnt in count)
                if all(hc):
                    part = ch.get(d["name"], start=hs, count=hc)
                    want_p = box_pattern(d["type"], d["dims"], hs, hc, i, j, s)
                    if part.tobytes() != want_p.tobytes():
                        fail(me, f"{d['name']} step {s}: hyperslab differs")
                checked += got.size
            if a.attrs and ch.role != "send":
                at = ch.attrs
                want_label = f"{peer} step {s}"
                if (len(at) != 4 or at["step"] != s or at["time"] != 0.5 * s
                        or list(at["v3"]) != [s, s + 1, s + 2] or at["label"] != want_label):
                    fail(me, f"channel {c['name']} step {s}: attributes differ: {dict(at)}")
        for i, c in mine:
            chans[i].end_step()
    for i, c in mine:  # the stream's end is a status, not an error
        ch = chans[i]
        if ch.role == "recv" and ch.begin_step(None) != xfer.StepStatus.END_OF_STREAM:
            fail(me, f"channel {c['name']}: a step beyond {a.steps}")
    wf.finalize()
    if rank == 0:
        print(f"synth.py: {me}: {a.steps} steps, {checked} elements checked on rank 0: ok",
              flush=True)


if __name__ == "__main__":
    main()
