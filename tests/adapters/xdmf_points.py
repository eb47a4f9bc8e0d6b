#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The XDMF description of joined datasets that the HDF5 adapter writes beside a group-per-step
file (docs/adapters.md, "XDMF for joined datasets"), checked against the file with h5py.

  xdmf_points.py h5points DIR NRANKS
      DIR/points.xmf and DIR/points.h5 as tests/adapters/h5points.c wrote them on NRANKS ranks:
      the generic checks below, then the grids, rows, times, attributes, comments and values
      that program wrote. Exit 0, 1 (the errors listed), or 77 without h5py or numpy.

check_points_xmf(xmf) is the generic part (tests/example/check_example.py uses it too): every
temporal collection of Polyvertex grids whose NumberOfElements equals the first extent of each
HDF data item it reads, every item a dataset of the .h5 of that shape and number type, in the
step group its grid names, every copy of a record's fields (PATH.xdmf/FIELD, or
PATH.xdmf/x,y(,z)) equal to those fields of the compound at PATH, which holds as many rows, and
the topology's vertex list (a hyperslab of /xfer_xdmf_vertices) 0 .. NumberOfElements - 1.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

WIDTH = {"XY": 2, "XYZ": 3}
NUMBER = {("f", 4): ("Float", "4"), ("f", 8): ("Float", "8"), ("i", 1): ("Char", "1"),
          ("u", 1): ("UChar", "1")}


def number_of(dtype):
    kind = dtype.kind
    if (kind, dtype.itemsize) in NUMBER:
        return NUMBER[(kind, dtype.itemsize)]
    return ("Int" if kind == "i" else "UInt", str(dtype.itemsize))


def source_of(f, path, data):
    """The compound a copy comes from and the copy's fields of it, equal to data? Returns the
    compound's rows and an error (or None); (None, None) for a dataset that is no copy."""
    import numpy as np
    if ".xdmf/" not in path:
        return None, None
    comp_path, field = path.rsplit(".xdmf/", 1)
    if comp_path not in f or f[comp_path].dtype.names is None:
        return None, f"{path}: no compound {comp_path} beside it"
    comp = f[comp_path][...]
    names = field.split(",")
    if any(n not in comp.dtype.names for n in names):
        return len(comp), f"{path}: {comp_path} has no field(s) {field}"
    if len(names) == 1:
        want = comp[field]
    else:
        want = np.stack([comp[n] for n in names], axis=1)
    if want.shape != data.shape or not np.array_equal(want, data):
        return len(comp), f"{path} differs from the fields {field} of {comp_path}"
    if f[path].attrs.get("xfer_coordinate") not in ("xdmf", b"xdmf"):
        return len(comp), f"{path}: not marked xfer_coordinate = xdmf"
    return len(comp), None


def check_item(item, n, want_width, h5dir, step, files, errs, where):
    """One HDF data item of `n` rows; returns its dataset path (or None)."""
    import h5py
    if item is None or item.get("Format") != "HDF":
        errs.append(f"{where}: no HDF data item")
        return None
    fname, _, path = (item.text or "").strip().partition(":")
    dims = tuple(int(x) for x in item.get("Dimensions").split())
    if dims[0] != n:
        errs.append(f"{where}: {path}: {dims[0]} rows, NumberOfElements {n}")
    if want_width is not None and dims[1:] != ((want_width,) if want_width > 1 else ()):
        errs.append(f"{where}: {path}: dimensions {dims}, expected rows of {want_width}")
    if not path.startswith(f"/step_{step:06d}/"):
        errs.append(f"{where}: {path} is not in the step's group /step_{step:06d}")
    if fname not in files:
        full = os.path.join(h5dir, fname)
        if not os.path.isfile(full):
            errs.append(f"{where}: {fname}: no such file beside the .xmf")
            return None
        files[fname] = h5py.File(full, "r")
    f = files[fname]
    if path not in f:
        errs.append(f"{where}: {fname}:{path}: no such dataset")
        return None
    ds = f[path]
    if ds.shape != dims:
        errs.append(f"{where}: {path}: the file's shape {ds.shape}, the .xmf's {dims}")
    if number_of(ds.dtype) != (item.get("NumberType"), item.get("Precision")):
        errs.append(f"{where}: {path}: {ds.dtype} described as {item.get('NumberType')} "
                    f"{item.get('Precision')}")
    rows, e = source_of(f, path, ds[...])
    if e:
        errs.append(f"{where}: {e}")
    if rows is not None and rows != n:
        errs.append(f"{where}: {path}: its compound holds {rows} rows, NumberOfElements {n}")
    return path


def check_vertices(topo, n, h5dir, files, errs, where):
    """The topology of n points lists vertices 0 .. n-1: the first n of a dataset of 0, 1, ...
    (none for no point)."""
    import h5py
    import numpy as np
    slab = topo.find("DataItem")
    if n == 0:
        if slab is not None:
            errs.append(f"{where}: a vertex list for no point")
        return
    items = slab.findall("DataItem") if slab is not None else []
    if slab is None or slab.get("ItemType") != "HyperSlab" or len(items) != 2 or \
            slab.get("Dimensions") != str(n) or (items[0].text or "").split() != ["0", "1", str(n)]:
        errs.append(f"{where}: the topology's vertices are no hyperslab 0, 1, {n} of a list")
        return
    fname, _, path = (items[1].text or "").strip().partition(":")
    if fname not in files:
        files[fname] = h5py.File(os.path.join(h5dir, fname), "r")
    f = files[fname]
    if path not in f or f[path].shape != (int(items[1].get("Dimensions")),) or \
            f[path].shape[0] < n or not np.array_equal(f[path][:n], np.arange(n)):
        errs.append(f"{where}: {fname}:{path} does not list the vertices 0 .. {n - 1}")


def check_points_xmf(xmf):
    """(errors, grids): grids maps each collection's name to its steps, each a dict with the
    step, time, n, the geometry's path and type and the attributes (name -> (type, path))."""
    errs, grids, files = [], {}, {}
    try:
        root = ET.parse(xmf).getroot()
    except (OSError, ET.ParseError) as e:
        return [f"{xmf}: {e}"], grids
    if root.tag != "Xdmf" or root.get("Version") != "3.0":
        errs.append(f"{xmf}: root {root.tag} version {root.get('Version')}, expected Xdmf 3.0")
    h5dir = os.path.dirname(os.path.abspath(xmf))
    try:
        for coll in root.findall("./Domain/Grid"):
            name = coll.get("Name")
            if coll.get("GridType") != "Collection" or coll.get("CollectionType") != "Temporal":
                errs.append(f"{xmf}: grid {name} is no temporal collection")
                continue
            steps, last = [], None
            for g in coll.findall("Grid"):
                where = f"{xmf}: {name}, {g.get('Name')}"
                m = re.fullmatch(r"step (\d+)", g.get("Name") or "")
                topo, geo = g.find("Topology"), g.find("Geometry")
                if not m or g.find("Time") is None or topo is None or geo is None:
                    errs.append(f"{where}: no step name, Time, Topology or Geometry")
                    continue
                step, t = int(m.group(1)), float(g.find("Time").get("Value"))
                if last is not None and t <= last:
                    errs.append(f"{where}: time {t} after {last}")
                last = t
                if topo.get("TopologyType") != "Polyvertex" or topo.get("NodesPerElement") != "1":
                    errs.append(f"{where}: topology {topo.attrib}, expected Polyvertex of 1 node")
                n = int(topo.get("NumberOfElements"))
                check_vertices(topo, n, h5dir, files, errs, where)
                width = WIDTH.get(geo.get("GeometryType"))
                if width is None:
                    errs.append(f"{where}: geometry type {geo.get('GeometryType')}")
                gpath = check_item(geo.find("DataItem"), n, width, h5dir, step, files, errs, where)
                attrs = {}
                for a in g.findall("Attribute"):
                    kind = a.get("AttributeType")
                    w = {"Scalar": 1, "Vector": 3}.get(kind)
                    if a.get("Center") != "Node" or kind not in ("Scalar", "Vector", "Matrix"):
                        errs.append(f"{where}: attribute {a.get('Name')}: {a.attrib}")
                    p = check_item(a.find("DataItem"), n, w, h5dir, step, files, errs,
                                   f"{where}, attribute {a.get('Name')}")
                    attrs[a.get("Name")] = (kind, p)
                steps.append({"step": step, "time": t, "n": n, "geometry": gpath,
                              "gtype": geo.get("GeometryType"), "attrs": attrs})
            grids[name] = steps
    finally:
        for f in files.values():
            f.close()
    return errs, grids


# ---- tests/adapters/h5points.c ------------------------------------------------------------------

NSTEPS = 4


def rows(s, r):
    """h5points.c's rows()."""
    if s == 1 or (s == 3 and r == 1):
        return 0
    return (5 * s + 3 * r + 2) % 7


def check_h5points(d, nranks):
    import h5py
    import numpy as np
    xmf, h5 = os.path.join(d, "points.xmf"), os.path.join(d, "points.h5")
    errs, grids = check_points_xmf(xmf)
    totals = [sum(rows(s, r) for r in range(nranks)) for s in range(NSTEPS)]
    want_grids = {"swarm/particles": ("pos", {"id": "Scalar", "q": "Scalar", "kind": "Scalar"}),
                  "flat/points": ("x,y", {"t": "Scalar", "vel": "Matrix"}),
                  "cloud/xyz": (None, {"ids": "Scalar"})}
    if sorted(grids) != sorted(want_grids):
        errs.append(f"{xmf}: grids {sorted(grids)}, expected {sorted(want_grids)}")
    for name, (geo, attrs) in want_grids.items():
        steps = grids.get(name, [])
        got = [(s["step"], s["time"], s["n"]) for s in steps]
        want = [(s, 0.5 * (s + 1), totals[s]) for s in range(NSTEPS)]
        if got != want:
            errs.append(f"{xmf}: {name}: (step, time, rows) {got}, expected {want}")
        for s in steps:
            where = f"{xmf}: {name}, step {s['step']}"
            gpath = f"/step_{s['step']:06d}/{name}" + (f".xdmf/{geo}" if geo else "")
            if s["geometry"] != gpath:
                errs.append(f"{where}: geometry {s['geometry']}, expected {gpath}")
            kinds = {a: k for a, (k, _) in s["attrs"].items()}
            if kinds != attrs:
                errs.append(f"{where}: attributes {kinds}, expected {attrs}")
    text = open(xmf).read()
    for c in ("<!-- /swarm/tags: a joined dataset without geometry (no field pos or position of "
              "2 or 3 floats, nor fields x, y (and z) of one float type): no grid -->",
              "<!-- /cloud/mass: a joined dataset without geometry (rows of one number, not of 2 "
              "or 3 floats): no grid -->",
              "<!-- /cloud/ids: a joined dataset without geometry (rows of one number, not of 2 "
              "or 3 floats); an attribute of the points of /cloud/xyz -->",
              "<!-- /odd/pts: no grid: its type or shape in step 2 differs from its first "
              "step's -->",
              "<!-- /swarm/particles: a record (HDF5 compound type); XDMF cannot address its "
              "fields, so its grid reads their copies in STEP/swarm/particles.xdmf/"):
        if c not in text:
            errs.append(f"{xmf}: no comment {c}")
    if "/cloud/grid" in text:
        errs.append(f"{xmf}: names /cloud/grid, a dataset that is not joined")
    # the values h5points.c wrote (the copies equal them through check_points_xmf)
    with h5py.File(h5, "r") as f:
        for s in range(NSTEPS):
            g = np.arange(totals[s])
            k = f"/step_{s:06d}"
            p, xyz = f[k + "/swarm/particles"][...], f[k + "/cloud/xyz"][...]
            fl = f[k + "/flat/points"][...]
            checks = {
                "particles id": np.array_equal(p["id"], 1000 * s + g),
                "particles pos": np.array_equal(
                    p["pos"], np.stack([g + 0.25, -g.astype(float), np.full(len(g), 0.5 * s)],
                                       axis=1)),
                "particles q": np.array_equal(p["q"], g.astype(np.float32) / np.float32(3) +
                                              np.float32(s)),
                "particles kind": np.array_equal(p["kind"], (g * 7 - s).astype(np.int8)),
                "flat x": np.array_equal(fl["x"], g.astype(np.float32) + np.float32(0.5)),
                "flat y": np.array_equal(fl["y"], np.float32(s) - g.astype(np.float32)),
                "cloud xyz": np.array_equal(xyz, np.stack([g, 2 * g, np.full(len(g), s + 0.125)],
                                                          axis=1).astype(np.float32)),
                "cloud ids": np.array_equal(f[k + "/cloud/ids"][...], 1000 * s + g),
            }
            errs += [f"{h5}: step {s}: {what} differs from what h5points wrote"
                     for what, ok in checks.items() if not ok]
    return errs


def main(argv):
    if len(argv) != 4 or argv[1] != "h5points":
        sys.exit(__doc__)
    try:
        import h5py  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        print("xdmf_points.py: no h5py or numpy: skipped")
        return 77
    errs = check_h5points(argv[2], int(argv[3]))
    for e in errs:
        print(e)
    if errs:
        return 1
    print(f"xdmf_points.py: {argv[2]}/points.xmf matches points.h5 and what h5points wrote")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
