#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""joined.py: joined and record datasets through the Python binding, either side of a channel.

    mpiexec -n P python3 joined.py [opts] : -n Q python3 joined.py [opts]   (XFER_CONFIG set)

It plays whichever of these datasets the channel declares:

    p      float64 [joined, 3]
    ids    int32   [joined]
    parts  {id: int64, pos: [float64, 3], q: float32, kind: int8} [joined]
    grid   the same record, [7], a fixed shape (each sending rank puts its rows of it)

Each step every sending rank puts rows_of(rank, step + j) rows of joined dataset j (zeros
included; some steps one rank holds every row, some steps none does), values computed from
the step and each row's global index (rows_of and the values are written out again in C, in
joined_send.c, and in Fortran, tests/fortran/fjoined.f90). A receiving rank computes, without
libxfer, every sending rank's rows, the step's rows and its share of them (`all`, the
near-equal contiguous share of `rows`, or under `user` the box it declared with select, clipped
to the step: BOXES), and compares get_shape, selection(), get_rows and the data, byte for byte
and field by field, with them; gets into a given array (out=) and a box inside the share; and
checks what bad input raises.

The sender tries each bad put first (step 0): a start or a shape for a joined dataset, rows of
the wrong width, record dtypes whose layout differs (an offset, a type, a missing or extra field,
a packed itemsize, a plain array); each must raise naming the problem and send nothing. Good
puts come from the aligned dtype, from a dtype of the same layout with its fields listed in
another order, and from a list of tuples.

  --steps N      steps (8)
  --bind         receiver: bind a 6-row array to p: whole rows, or under user
                 with 2 receiving ranks rows of the declared box's columns (rank 1's 2); get
                 returns a view of its first elements when the step's selection fits, a new
                 array when not; rows of 4 are refused
  --corrupt      sender rank 0 changes one value of p in step 3: the receiver must fail
"""
import argparse
import sys

import numpy as np

import xfer

REC = np.dtype([("id", "<i8"), ("pos", "<f8", (3,)), ("q", "<f4"), ("kind", "i1")], align=True)
GRID = 7
JOINED = ["p", "ids", "parts"]
ME = "?"
ALL = 2**64 - 1  # a joined dimension's count in select(name) without a box: every row

# selection: user: the box (start, count) receiving rank r declares for each dataset (None:
# select(name) without one, every row of every step; receiving ranks past the table's last
# take it). Rows are not checked against any extent: boxes reach past a step's rows (clipped),
# overlap, hold nothing, or take some columns of each row.
BOXES = {
    "p": [None, ((2, 1), (5, 2)), ((4, 0), (1000, 3))],
    "ids": [((1,), (3,)), ((3,), (0,)), ((0,), (1000,))],
    "parts": [((3,), (1000,)), None, ((0,), (2,))],
    "grid": [((0,), (7,)), ((2,), (3,)), ((6,), (1,))],
}


def fail(msg):
    """End the whole job: the other ranks would wait for this one in a collective."""
    print(f"joined.py: {ME}: FAILED: {msg}", file=sys.stderr, flush=True)
    xfer._core.mpi_abort(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def raises(exc, fn, *args, contains=(), **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        for c in contains:
            check(c in str(e), f"{exc.__name__} {str(e)!r} lacks {c!r}")
        return
    except Exception as e:  # noqa: BLE001
        fail(f"{fn.__name__}{args}: raised {type(e).__name__}: {e}, not {exc.__name__}")
    fail(f"{fn.__name__}{args}: did not raise {exc.__name__}")


def rows_of(rank, step, nsenders):
    """Rows sending rank `rank` puts in `step` (of a joined dataset: step + its index)."""
    k = step % 4
    if k == 2:
        return 0  # every rank empty
    if k == 1:
        return 9 if rank == nsenders - 1 else 0  # one rank holds every row
    return (rank * 5 + step * 3) % 4  # 0 to 3


def values(name, step, g):
    """Dataset `name`'s rows of global indices g (an int64 array) in `step`."""
    if name == "p":
        c = np.arange(3, dtype=np.float64)
        return step * 1000.0 + g[:, None].astype(np.float64) * 3.0 + c[None, :] + 0.5
    if name == "ids":
        return (step * 100000 + g).astype(np.int32)
    out = np.zeros(len(g), REC)
    if name == "parts":
        ident = step * 100000 + g
        out["id"] = ident
        out["pos"][:, 0] = ident * 0.5
        out["pos"][:, 1] = -ident.astype(np.float64)
        out["pos"][:, 2] = ident + 0.25
        out["q"] = (step + g / 4.0).astype(np.float32)
        out["kind"] = (ident % 251 - 125).astype(np.int8)
    else:  # grid: element g of the fixed record array
        out["id"] = step * 10 + g
        out["pos"][:, 0] = g
        out["pos"][:, 1] = step
        out["pos"][:, 2] = g * step
        out["q"] = (g / 2.0).astype(np.float32)
        out["kind"] = (g - 3).astype(np.int8)
    return out


def same(got, want):
    """Byte for byte; a record field by field (its padding is not data)."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.names:
        return all(np.ascontiguousarray(got[f]).tobytes() == np.ascontiguousarray(want[f]).tobytes()
                   for f in got.dtype.names)
    return np.ascontiguousarray(got).tobytes() == want.tobytes()


def share(total, q, rank, mode):
    """This receiving rank's (start, count) of the step's rows: all, or rows (near-equal,
    contiguous, the first total % q ranks one row longer)."""
    if mode == "all":
        return 0, total
    base, extra = divmod(total, q)
    return rank * base + min(rank, extra), base + (1 if rank < extra else 0)


def declared(name, rank, shape):
    """The box of BOXES rank `rank` declares for dataset `name` of `shape` (None: a joined
    extent), as selection() gives it before step 0."""
    box = BOXES[name][min(rank, len(BOXES[name]) - 1)]
    if box is None:
        return (0,) * len(shape), tuple(ALL if n is None else n for n in shape)
    return box


def selection(name, dims, q, rank, mode, shape):
    """This receiving rank's (start, count) of dataset `name` in a step of `dims`."""
    if mode == "user":  # the declared box, clipped to the step
        start, count = declared(name, rank, shape)
        s = tuple(min(a, d) for a, d in zip(start, dims))
        return s, tuple(min(c, d - a) for a, c, d in zip(s, count, dims))
    s0, c0 = share(dims[0], q, rank, mode)
    return (s0,) + (0,) * (len(dims) - 1), (c0, *dims[1:])


def cut(v, start, count):
    """The columns [start[1:], +count[1:]) of rows v (the rows are cut already)."""
    return v[(slice(None),) + tuple(slice(a, a + c) for a, c in zip(start[1:], count[1:]))]


# ---- sending side ------------------------------------------------------------------------------

def bad_puts(st, ch, present):
    if "p" in present:
        raises(xfer.InvalidArgumentError, st.put, "p", np.zeros((2, 3)), start=(0, 0),
               contains=["dataset p is joined", "no start", "nothing was sent"])
        raises(xfer.InvalidArgumentError, st.put, "p", np.zeros((2, 3)), shape=(2, 3),
               contains=["dataset p is joined", "no shape", "nothing was sent"])
        raises(xfer.InvalidArgumentError, st.put, "p", np.zeros((2, 4)),
               contains=["dataset p is joined", "(2, 4)", "(rows, 3)"])
        raises(xfer.InvalidArgumentError, st.put, "p", np.zeros(3),
               contains=["(3,)", "(rows, 3)"])
    if "parts" in present:
        moved = np.dtype([("id", "<i8"), ("q", "<f4"), ("pos", "<f8", (3,)), ("kind", "i1")],
                         align=True)  # pos at 16, not 8
        raises(xfer.MismatchError, st.put, "parts", np.zeros(2, moved),
               contains=["dataset parts", "field pos", "offset 16", "offset 8", "align=True"])
        wide_q = np.dtype({"names": ["id", "pos", "q", "kind"],
                           "formats": ["<i8", ("<f8", (3,)), "<f8", "i1"],
                           "offsets": [0, 8, 32, 36], "itemsize": 40})
        raises(xfer.MismatchError, st.put, "parts", np.zeros(2, wide_q),
               contains=["field q is float64", "declared float32"])
        packed = np.dtype([("id", "<i8"), ("pos", "<f8", (3,)), ("q", "<f4"), ("kind", "i1")])
        raises(xfer.MismatchError, st.put, "parts", np.zeros(2, packed),
               contains=["itemsize is 37", "40"])
        extra = np.dtype({"names": ["id", "pos", "q", "kind", "spin"],
                          "formats": ["<i8", ("<f8", (3,)), "<f4", "i1", "i1"],
                          "offsets": [0, 8, 32, 36, 37], "itemsize": 40})
        raises(xfer.MismatchError, st.put, "parts", np.zeros(2, extra),
               contains=["5 fields", "spin"])
        missing = np.dtype({"names": ["id", "pos", "q"], "formats": ["<i8", ("<f8", (3,)), "<f4"],
                            "offsets": [0, 8, 32], "itemsize": 40})
        raises(xfer.MismatchError, st.put, "parts", np.zeros(2, missing),
               contains=["no field kind"])
        raises(xfer.MismatchError, st.put, "parts", np.zeros((2, 5)),
               contains=["not a structured dtype"])
        raises(xfer.InvalidArgumentError, st.put, "parts", np.zeros(2, REC), start=(0,),
               contains=["dataset parts is joined"])
    if "grid" in present:
        raises(xfer.MismatchError, st.put, "grid", np.zeros(GRID, np.dtype([("id", "<i8")])),
               contains=["dataset grid", "no field pos"])


def send(wf, ch, args):
    rank, size = wf.comm.rank, wf.comm.size
    present = ch.datasets
    check(all(present[n].joined and present[n].shape[0] is None for n in JOINED if n in present),
          "Dataset.joined and shape")
    for n in ("parts", "grid"):
        if n in present:
            check(ch.dtype_of(n) == REC and ch.dtype_of(n).isalignedstruct
                  and present[n].dtype == REC, f"{n}: dtype_of is the aligned dtype")
    for s in range(args.steps):
        with ch.step() as st:
            if s == 0:
                bad_puts(st, ch, present)
            for j, name in enumerate(JOINED):
                if name not in present:
                    continue
                first = sum(rows_of(r, s + j, size) for r in range(rank))
                k = rows_of(rank, s + j, size)
                v = values(name, s, np.arange(first, first + k, dtype=np.int64))
                if name == "p" and args.corrupt and rank == 0 and s == 3 and k:
                    v[k - 1, 2] += 1.0
                if name == "parts" and s % 3 == 1:  # the same layout, fields in another order
                    other = np.dtype({"names": ["kind", "q", "pos", "id"],
                                      "formats": ["i1", "<f4", ("<f8", (3,)), "<i8"],
                                      "offsets": [36, 32, 8, 0], "itemsize": 40})
                    w = np.zeros(k, other)
                    for f in REC.names:
                        w[f] = v[f]
                    v = w
                elif name == "parts" and s % 3 == 2:  # a list of tuples
                    v = [tuple(x) for x in v.tolist()]
                st.put(name, v)
            if "grid" in present:
                (g0,), (gc,) = xfer.decompose("rows", (GRID,), size, rank)
                st.put("grid", values("grid", s, np.arange(g0, g0 + gc, dtype=np.int64)),
                       start=(g0,))


# ---- receiving side ----------------------------------------------------------------------------

def recv(wf, ch, args, nsenders):
    rank, q = wf.comm.rank, wf.comm.size
    present = ch.datasets
    mode = {d["name"]: d["selection"] for c in wf.config["channels"] if c["name"] == ch.name
            for d in c["datasets"]}
    for name in present:  # selection: user: the boxes, before step 0
        if mode[name] == "user":
            box = BOXES[name][min(rank, len(BOXES[name]) - 1)]
            ch.select(name, *(box or ()))
            want = declared(name, rank, present[name].shape)
            check(ch.selection(name) == want,
                  f"{name}: selection() {ch.selection(name)} before step 0, want {want}")
    bound = None
    if args.bind and "p" in present:  # rows of 3, or (2 receivers) of the declared box's columns
        cols = declared("p", rank, (None, 3))[1][1] if mode["p"] == "user" and q == 2 else 3
        raises(xfer.InvalidArgumentError, ch.bind, "p", np.zeros((6, 4)),
               contains=["dataset p is joined", "(6, 4)", "whole rows, (rows, 3)",
                         "the box the rank declared"])
        bound = np.full((6, cols), -1.0)
        ch.bind("p", bound)
    nsteps = 0
    for st in ch:
        s = st.index
        for j, name in enumerate(JOINED):
            if name not in present:
                continue
            rows = [rows_of(r, s + j, nsenders) for r in range(nsenders)]
            total = sum(rows)
            row = present[name].shape[1:]
            start, count = selection(name, (total, *row), q, rank, mode[name],
                                     present[name].shape)
            want = cut(values(name, s, np.arange(start[0], start[0] + count[0], dtype=np.int64)),
                       start, count)
            where = f"{name} step {s}"
            shp = st.get_shape(name)
            check(shp == xfer.Shape((total, *row), start, count, s),
                  f"{where}: get_shape {shp}, want rows {total}, selection {start} + {count}")
            check(ch.selection(name) == (start, count),
                  f"{where}: selection() {ch.selection(name)}, want {start} + {count}")
            got_rows = st.get_rows(name)
            check(got_rows.dtype == np.uint64 and got_rows.tolist() == rows,
                  f"{where}: get_rows {got_rows.tolist()}, want {rows}")
            got = st.get(name)
            check(same(got, want), f"{where}: data differs from the pattern")
            n = count[0]
            if name == "p" and bound is not None and n:
                fits = got.nbytes <= bound.nbytes
                check(np.shares_memory(got, bound) == fits,
                      f"{where}: the bound array is used when the selection fits ({count})")
            out = np.zeros(count, ch.dtype_of(name))
            check(st.get(name, out=out) is out and same(out, want), f"{where}: get(out=)")
            raises(xfer.InvalidArgumentError, st.get, name,
                   out=np.zeros((n + 1, *count[1:]), ch.dtype_of(name)),
                   contains=[name, "shape", "nothing was received"])
            if all(count):  # the last row of the selection, as a box
                box = st.get(name, start=(start[0] + n - 1, *start[1:]), count=(1, *count[1:]))
                check(same(box, want[n - 1:]), f"{where}: a box of the selection")
            if name == "parts":
                packed = np.dtype([("id", "<i8"), ("pos", "<f8", (3,)), ("q", "<f4"),
                                   ("kind", "i1")])
                raises(xfer.MismatchError, st.get, name, out=np.zeros(n, packed),
                       contains=["dataset parts", "itemsize", "nothing was received"])
        if "grid" in present:
            if mode["grid"] == "user":
                (g0,), (gc,) = selection("grid", (GRID,), q, rank, "user", (GRID,))
            else:
                (g0,), (gc,) = xfer.decompose(mode["grid"], (GRID,), q, rank)
            check(same(st.get("grid"), values("grid", s, np.arange(g0, g0 + gc, dtype=np.int64))),
                  f"grid step {s}: data differs from the pattern")
            raises(xfer.InvalidArgumentError, st.get_rows, "grid", contains=["not joined"])
        nsteps += 1
    check(nsteps == args.steps, f"received {nsteps} steps, want {args.steps}")


def main():
    global ME
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--bind", action="store_true")
    ap.add_argument("--corrupt", action="store_true")
    args = ap.parse_args()
    with xfer.init() as wf:
        ME = f"{wf.component} rank {wf.comm.rank}"
        ch = wf.channel(wf.channels[0])
        cfg = wf.config
        chan = next(c for c in cfg["channels"] if c["name"] == ch.name)
        peer = chan["from"] if ch.role == "recv" else chan["to"]
        nsenders = next(c["nprocs"] for c in cfg["components"] if c["name"] == peer)
        if ch.role == "send":
            send(wf, ch, args)
        else:
            recv(wf, ch, args, nsenders)


if __name__ == "__main__":
    main()
