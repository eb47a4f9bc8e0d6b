#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""variable.py: datasets of variable shape through the Python binding, either side of a channel.

    mpiexec -n P python3 variable.py [opts] : -n Q python3 variable.py [opts]   (XFER_CONFIG set)

The workflow (tests/CMakeLists.txt, xfer_variable_workflow; the same in tests/fortran/
fvariable.f90, which plays either side too): channel c from a to b of

    g      int32   [variable, 4]         selection: block
    y      float64 [variable]            selection: rows
    m      float32 [variable, variable]  selection: block
    parts  {id: int64, pos: [float64, 3], q: float32, kind: int8} [variable]  selection: rows

Each step's shape grows and shrinks (ROWS, COLS below: 0 rows in step 2, 0 columns of m in step
3); every value is computed from the step and its global position, so each receiving rank checks
what it gets, byte for byte (a record field by field), against its own computation. The sending
ranks split each step's shape between them: g and parts by rows, m by blocks of both dimensions
(Fortran-ordered arrays in odd steps: a copy), y wholly on rank 0, put without start or shape
(the block is the whole step), the other ranks putting an empty block in odd steps and nothing
in even ones.

The sender first tries the bad puts, each refused at once with the C library's words (a start
without shape=, a shape of the wrong rank, another fixed extent, a block outside the shape, a
block without its start); then in step 1 the three commits a variable shape refuses on every
sending rank alike (two shapes, overlapping blocks, a hole) before the step is put right. A
receiving rank checks Channel.datasets, that its selection is not known before a step's shape,
get_shape (its mode over the step's shape, xfer.decompose), selection() once the step is there,
get into a new and a given array, a wrong output shape, and a box inside its selection.

  --bind         receiver: bind arrays to g (16 x 4) and y (2): get returns a view of their
                 first elements when the step's selection fits, a new array when not; an array
                 of another rank is refused
  --corrupt      sender rank 0 changes one value of g in step 3: the receiver must fail
"""
import argparse
import sys

import numpy as np

import xfer

REC = np.dtype([("id", "<i8"), ("pos", "<f8", (3,)), ("q", "<f4"), ("kind", "i1")], align=True)
ROWS = [5, 9, 0, 3, 12, 1]
COLS = [3, 1, 4, 0, 2, 5]  # m's second extent
STEPS = len(ROWS)
MODE = {"g": "block", "y": "rows", "m": "block", "parts": "rows"}
ME = "?"


def fail(msg):
    """End the whole job: the other ranks would wait for this one in a collective."""
    print(f"variable.py: {ME}: FAILED: {msg}", file=sys.stderr, flush=True)
    xfer._core.mpi_abort(1)


def check(cond, msg):
    if not cond:
        fail(msg)


DIFFERS = []  # the value checks that failed: the run goes on and fails at its end


def check_value(cond, msg):
    """A value check: a difference is reported once and the run goes on to its end, which then
    fails; the words reach the test whatever the launcher does with an abort's output (hydra
    may drop what a rank wrote just before MPI_Abort)."""
    if not cond and msg not in DIFFERS:
        print(f"variable.py: {ME}: FAILED: {msg}", file=sys.stderr, flush=True)
        DIFFERS.append(msg)


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


def shape_of(name, s):
    """Dataset `name`'s global shape in step `s`."""
    return {"g": (ROWS[s], 4), "y": (s + 1,), "m": (ROWS[s], COLS[s]),
            "parts": (ROWS[s] + 2,)}[name]


def values(name, s, start, count):
    """The box (start, count) of dataset `name` in step `s`, from each element's global index."""
    idx = np.indices(count, dtype=np.int64)
    for k, st in enumerate(start):
        idx[k] += st
    if name == "g":
        return (s * 10000 + idx[0] * 4 + idx[1]).astype(np.int32)
    if name == "y":
        return s * 100.0 + idx[0] + 0.5
    if name == "m":
        return (s * 1000 + idx[0] * 10 + idx[1] + 0.25).astype(np.float32)
    i = idx[0]
    out = np.zeros(count, REC)
    out["id"] = s * 1000 + i
    out["pos"][..., 0] = i * 0.5
    out["pos"][..., 1] = -i.astype(np.float64)
    out["pos"][..., 2] = s
    out["q"] = (i / 4.0).astype(np.float32)
    out["kind"] = (i % 100 - 50).astype(np.int8)
    return out


def same(got, want):
    """Byte for byte; a record field by field (its padding is not data)."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.names:
        return all(np.ascontiguousarray(got[f]).tobytes() == np.ascontiguousarray(want[f]).tobytes()
                   for f in got.dtype.names)
    return np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()


# ---- sending side ------------------------------------------------------------------------------

def block_of(name, s, size, rank):
    """This sending rank's (start, count) of dataset `name` in step `s`."""
    mode = "block" if name == "m" else "rows"
    return xfer.decompose(mode, shape_of(name, s), size, rank)


def bad_puts(ch, me):
    """Each refused at once, naming the dataset (and where libxfer checks, the step and the
    rank), with nothing staged (step 0)."""
    rows = ROWS[0]
    raises(xfer.InvalidArgumentError, ch.put, "g", np.zeros((2, 4), np.int32), start=(0, 0),
           contains=["dataset g has a variable shape, (variable, 4)", "shape=",
                     "nothing was sent"])
    raises(xfer.InvalidArgumentError, ch.put, "g", np.zeros((2, 4), np.int32), start=(0, 0),
           shape=(rows,), contains=["shape: expected 2 integers, got 1"])
    raises(xfer.MismatchError, ch.put, "g", np.zeros((2, 5), np.int32), start=(0, 0),
           shape=(rows, 5), contains=[f"dataset g: step 0: rank {me} puts int32[0:{rows}, 0:5], "
                                      f"the workflow file declares int32[variable, 4]"])
    raises(xfer.InvalidArgumentError, ch.put, "g", np.zeros((2, 4), np.int32),
           start=(rows - 1, 0), shape=(rows, 4),
           contains=[f"dataset g: block start {rows - 1} count 2 in dimension 0 exceeds its "
                     f"size {rows}"])
    raises(xfer.InvalidArgumentError, ch.put, "g", np.zeros((2, 4), np.int32), shape=(rows, 4),
           contains=[f"a block of shape (2, 4) is part of the step's shape ({rows}, 4)",
                     "give its start="])
    raises(xfer.InvalidArgumentError, ch.put, "m", np.zeros((2, 2, 1), np.float32),
           contains=["dataset m: the block has shape (2, 2, 1)", "(variable, variable)"])


def put_g(ch, s, size, rank, shape=None, start=None, count=None, corrupt=False):
    (r0, _), (n, _) = block_of("g", s, size, rank)
    start = start if start is not None else r0
    count = count if count is not None else n
    v = values("g", s, (start, 0), (count, 4))
    if corrupt and count:
        v[count - 1, 3] += 1
    ch.put("g", v, start=(start, 0), shape=shape or shape_of("g", s))


def refusals(ch, me, size, comp):
    """Step 1: the three commits a variable shape refuses, on every sending rank alike."""
    s, rows = 1, ROWS[1]
    (_, _), (n0, _) = block_of("g", s, size, 0)
    (r1, _), (n1, _) = block_of("g", s, size, 1)
    # the last rank says one row more than the others
    put_g(ch, s, size, me, shape=(rows + 1, 4) if me == size - 1 else None)
    raises(xfer.MismatchError, ch.end_step,
           contains=[f"dataset g: step 1: rank {size - 1} of {comp} puts it with shape "
                     f"[0:{rows + 1}, 0:4], rank 0 with [0:{rows}, 0:4]",
                     "the senders of a variable shape agree on it each step"])
    # rank 0 reaches one row into rank 1's block
    put_g(ch, s, size, me, count=n0 + 1 if me == 0 else None)
    raises(xfer.InvalidArgumentError, ch.end_step,
           contains=[f"dataset g: step 1: the block of {comp} rank 1 [{r1}:{r1 + n1}, 0:4] "
                     f"overlaps the block of rank 0 [0:{n0 + 1}, 0:4]"])
    # rank 0 leaves its last row out
    put_g(ch, s, size, me, count=n0 - 1 if me == 0 else None)
    raises(xfer.InvalidArgumentError, ch.end_step,
           contains=[f"dataset g: step 1: the blocks of {comp}'s {size} ranks hold "
                     f"{(rows - 1) * 4} of the {rows * 4} elements of its shape [0:{rows}, 0:4]",
                     "each element must belong to exactly one rank's block"])


def send(wf, ch, args):
    me, size = wf.comm.rank, wf.comm.size
    ds = ch.datasets
    check(ds["g"].variable and ds["g"].shape == (None, 4) and not ds["g"].joined
          and ds["m"].shape == (None, None) and ds["y"].shape == (None,)
          and ds["parts"].dtype == REC, f"Channel.datasets: {ds}")
    for s in range(STEPS):
        check(ch.begin_step() == xfer.StepStatus.OK, f"step {s} did not begin")
        if s == 0:
            bad_puts(ch, me)
        if s == 1:
            refusals(ch, me, size, wf.component)
        put_g(ch, s, size, me, corrupt=args.corrupt and me == 0 and s == 3)
        if me == 0:  # the whole step: no start, no shape
            ch.put("y", values("y", s, (0,), shape_of("y", s)))
        elif s % 2:  # an empty block, which says the shape too
            ch.put("y", np.zeros(0), start=(0,), shape=shape_of("y", s))
        start, count = block_of("m", s, size, me)
        v = values("m", s, start, count)
        ch.put("m", np.asfortranarray(v) if s % 2 else v, start=start, shape=shape_of("m", s))
        start, count = block_of("parts", s, size, me)
        v = values("parts", s, start, count)
        if s % 2:  # a list of tuples
            v = [tuple(x) for x in v.tolist()]
        ch.put("parts", v, start=start, shape=shape_of("parts", s))
        ch.end_step()


# ---- receiving side ----------------------------------------------------------------------------

def recv(wf, ch, args):
    me, q = wf.comm.rank, wf.comm.size
    ds = ch.datasets
    check(all(ds[n].variable and not ds[n].sent for n in MODE), f"Channel.datasets: {ds}")
    cfg = {d["name"]: d for c in wf.config["channels"] if c["name"] == ch.name
           for d in c["datasets"]}
    check(cfg["g"]["variable"] == (True, False) and cfg["m"]["variable"] == (True, True),
          "the workflow file's variable entries")
    raises(xfer.StateError, ch.selection, "g",
           contains=["dataset g is of variable shape", "depends on each step's shape"])
    bound = {}
    if args.bind:
        raises(xfer.InvalidArgumentError, ch.bind, "g", np.zeros(64, np.int32),
               contains=["dataset g has a variable shape", "shape (64,)", "2 dimensions"])
        bound = {"g": np.full((16, 4), -1, np.int32), "y": np.full(2, -1.0)}
        for name, b in bound.items():
            ch.bind(name, b)
    nsteps = 0
    for st in ch:
        s = st.index
        for name, mode in MODE.items():
            dims = shape_of(name, s)
            start, count = xfer.decompose(mode, dims, q, me)
            where = f"{name} step {s}"
            shp = st.get_shape(name)
            check(shp == xfer.Shape(dims, start, count, s),
                  f"{where}: get_shape {shp}, want dims {dims}, start {start}, count {count}")
            check(ch.selection(name) == (start, count), f"{where}: selection()")
            want = values(name, s, start, count)
            got = st.get(name)
            check_value(same(got, want), f"{where}: data differs from what was put")
            if name in bound and got.size:
                check(np.shares_memory(got, bound[name]) == (got.nbytes <= bound[name].nbytes),
                      f"{where}: the bound array is used when the selection {count} fits")
            out = np.zeros(count, ch.dtype_of(name))
            check(st.get(name, out=out) is out, f"{where}: get(out=) returns out")
            check_value(same(out, want), f"{where}: get(out=)'s data differs")
            raises(xfer.InvalidArgumentError, st.get, name,
                   out=np.zeros((count[0] + 1, *count[1:]), ch.dtype_of(name)),
                   contains=[name, "shape", "nothing was received"])
            if all(count):  # the selection's last element, as a box
                last = tuple(a + c - 1 for a, c in zip(start, count))
                box = st.get(name, start=last, count=(1,) * len(dims))
                check_value(same(box, values(name, s, last, (1,) * len(dims))),
                            f"{where}: a box of the selection differs")
        nsteps += 1
    check(nsteps == STEPS, f"received {nsteps} steps, want {STEPS}")


def main():
    global ME
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bind", action="store_true")
    ap.add_argument("--corrupt", action="store_true")
    args = ap.parse_args()
    with xfer.init() as wf:
        ME = f"{wf.component} rank {wf.comm.rank}"
        ch = wf.channel("c")
        if ch.role == "send":
            send(wf, ch, args)
        else:
            recv(wf, ch, args)
    if DIFFERS:
        sys.exit(1)


if __name__ == "__main__":
    main()
