#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks of the coupled Gray-Scott example (tests/example/tests.cmake, docs/example.md).

  check_example.py run --out DIR --rows N [--particles P] [--hdf5] [--same-as BASE]
                      [--pngs A.png,B.png] -- COMMAND...
      run the example (COMMAND writes into DIR), then check its outputs: the analysis'
      statistics equal the simulation's reference (DIR/.check/reference_stats.csv), the PNGs
      (V_steps.png, stats.png, V_hist.png) are valid images of sensible size, fields.h5 is
      HDF5 (with --particles, particles.h5 a group per step holding every id once, and
      particles.xmf its points per step, the data it points at the particles' fields), and DIR
      holds nothing else but .check/; with --particles, the analysis' particle
      check passed (its line in the output), particles.csv equals the simulation's
      DIR/.check/reference_particles.csv, every step holds P particles whose per-rank rows add
      up to P and change from step to step (they migrate), and particles.png is valid; with
      --same-as, DIR/.check/reference_stats.csv (and reference_particles.csv) must also be
      byte-identical to that of the run in BASE (the same simulation on the same blocks) and
      DIR/stats.csv (and particles.csv) equal to BASE's
  check_example.py compare [--skip PREFIX] REFERENCE.csv STATS.csv
      the comparison alone: counts (step, particles, histogram, rows) and time, min, max
      exactly, means within 1e-12 relative (the two sides sum in different orders); columns
      starting with PREFIX left out (rows_: two simulations on different rank counts)
  check_example.py fails --expect TEXT -- COMMAND...
      COMMAND must exit with a status other than 0 and print TEXT (the analysis' particle
      check on damaged particles)
  check_example.py negative --out DIR
      the comparison must fail on perturbed copies of DIR/stats.csv and DIR/particles.csv (a
      negative control, written to DIR/.check/)

The files that are not the user's (the simulation's reference, the analysis' gnuplot script and
its data, this script's perturbed copies) are in DIR/.check/ (GS_CHECK_SUBDIR of gs_common.h).
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adapters"))
import xdmf_points  # noqa: E402  (tests/adapters: the .xmf of joined datasets)

MEAN_RTOL = 1e-12
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
CHECK_DIR = ".check"  # GS_CHECK_SUBDIR


def reference(out, name="stats"):
    """The simulation's reference statistics of the run in out (name: stats or particles)."""
    return os.path.join(out, CHECK_DIR, f"reference_{name}.csv")


def read_csv(path):
    with open(path) as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    if not lines:
        raise ValueError(f"{path}: empty")
    header = lines[0].split(",")
    rows = []
    for n, line in enumerate(lines[1:], start=2):
        cells = line.split(",")
        if len(cells) != len(header):
            raise ValueError(f"{path}:{n}: {len(cells)} columns, header has {len(header)}")
        rows.append(dict(zip(header, cells)))
    return header, rows


def compare(ref_path, got_path, skip=None):
    """The list of differences (empty: equal); columns starting with skip left out."""
    diffs = []
    ref_h, ref = read_csv(ref_path)
    got_h, got = read_csv(got_path)
    if skip:
        ref_h = [c for c in ref_h if not c.startswith(skip)]
        got_h = [c for c in got_h if not c.startswith(skip)]
    if ref_h != got_h:
        return [f"headers differ: {ref_h} vs {got_h}"]
    if len(ref) != len(got):
        diffs.append(f"{len(ref)} steps in {ref_path}, {len(got)} in {got_path}")
    for r, g in zip(ref, got):
        step = r["step"]
        for col in ref_h:
            a, b = r[col], g[col]
            if col in ("step", "particles") or col.startswith(("v_hist_", "rows_")):
                ok = int(a) == int(b)
            elif col.endswith("_mean"):
                fa, fb = float(a), float(b)
                ok = abs(fa - fb) <= MEAN_RTOL * max(abs(fa), abs(fb))
            else:  # time, min, max: the same doubles on both sides
                ok = float(a) == float(b)
            if not ok:
                diffs.append(f"step {step}: {col}: reference {a}, analysis {b}")
    return diffs


PNG_PIXELS = (150, 5000)  # the figures' sides in pixels: 180 to about 1100 here
PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # bytes per pixel at bit depth 8, by colour type


def check_png(path):
    """A valid PNG of sensible size: chunks with their CRCs, IHDR first and IEND last, both
    sides within PNG_PIXELS, the image data decompressing to the size IHDR declares, and not
    blank (its scanlines take more than a few distinct byte values)."""
    if not os.path.isfile(path):
        return f"{path}: missing"
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != PNG_MAGIC:
        return f"{path}: not a PNG (starts with {data[:8]!r})"
    chunks, pos = [], 8
    while pos + 12 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        crc = data[pos + 8 + n:pos + 12 + n]
        if len(body) != n or len(crc) != 4:
            return f"{path}: truncated {kind!r} chunk"
        if struct.unpack(">I", crc)[0] != zlib.crc32(kind + body):
            return f"{path}: bad CRC in its {kind!r} chunk"
        chunks.append((kind, body))
        pos += 12 + n
    if not chunks or chunks[0][0] != b"IHDR" or chunks[-1][0] != b"IEND" or pos != len(data):
        return f"{path}: chunks out of order or trailing bytes"
    width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    lo, hi = PNG_PIXELS
    if not (lo <= width <= hi and lo <= height <= hi):
        return f"{path}: {width} x {height} pixels, expected {lo} to {hi} a side"
    if depth != 8 or ctype not in PNG_CHANNELS or interlace != 0:
        return f"{path}: bit depth {depth}, colour type {ctype}, interlace {interlace}: unexpected"
    try:
        raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    except zlib.error as e:
        return f"{path}: image data do not decompress: {e}"
    want = height * (1 + width * PNG_CHANNELS[ctype])
    if len(raw) != want:
        return f"{path}: {len(raw)} bytes of scanlines, IHDR implies {want}"
    if len(set(raw)) <= 16:
        return f"{path}: blank (its scanlines hold {len(set(raw))} distinct bytes)"
    return None


def check_user_outputs(out, pngs, hdf5, particles):
    """The output directory holds the user's outputs only; the rest is in CHECK_DIR."""
    allowed = {"stats.csv", CHECK_DIR, *pngs}
    if particles is not None:
        allowed.add("particles.csv")
    if hdf5:
        allowed |= {"fields.h5", "fields.xmf"}
    if hdf5 and particles is not None:
        allowed |= {"particles.h5", "particles.xmf"}
    return [f"{os.path.join(out, name)}: not one of the user's outputs (those for the checks "
            f"go to {CHECK_DIR}/)" for name in sorted(set(os.listdir(out)) - allowed)]


def check_hdf5(path, rows):
    if not os.path.isfile(path):
        return [f"{path}: missing"]
    with open(path, "rb") as f:
        if f.read(8) != HDF5_MAGIC:
            return [f"{path}: not an HDF5 file"]
    h5ls = shutil.which("h5ls")
    if not h5ls:
        return []
    out = subprocess.run([h5ls, "-r", path], capture_output=True, text=True)
    if out.returncode != 0:
        return [f"h5ls -r {path} failed: {out.stderr.strip()}"]
    errs = []
    for name in ("fields/U", "fields/V", "stats/summary", "stats/v_hist", "stats/time"):
        if name not in out.stdout:
            errs.append(f"{path}: no {name} in h5ls -r:\n{out.stdout}")
    return errs + check_coords(path, rows)


def check_coords(path, rows):
    """The coordinates a reader sees (h5py, xarray with h5netcdf) and the XDMF description
    ParaView opens: /fields/U is (time, y, x) with /time the simulated times of stats.csv, and
    fields.xmf a temporal collection of `rows` grids over datasets that exist. Skipped (with a
    note) where h5py or xarray is not installed."""
    import xml.etree.ElementTree as ET
    errs = []
    try:
        import h5py
    except ImportError:
        print(f"note: no h5py: the coordinates of {path} are not checked")
        return []
    _, stats = read_csv(os.path.join(os.path.dirname(path), "stats.csv"))
    want_t = [float(r["time"]) for r in stats]
    with h5py.File(path, "r") as f:
        u = f["fields/U"]
        got = [u.dims[k][0].name if len(u.dims[k]) else None for k in range(3)]
        if got != ["/time", "/fields/y", "/fields/x"]:
            errs.append(f"{path}: /fields/U's dimension scales are {got}")
        t = list(f["time"][:])
        if t != want_t:
            errs.append(f"{path}: /time is {t}, stats.csv's times {want_t}")
        shapes = {name: f[name].shape for name in ("fields/U", "fields/V")}
    try:
        import xarray
        with xarray.open_dataset(path, engine="h5netcdf", group="fields") as ds:
            if ds["U"].dims != ("time", "y", "x") or ds["V"].dims != ("time", "y", "x"):
                errs.append(f"{path}: xarray sees U {ds['U'].dims}, V {ds['V'].dims}")
        with xarray.open_dataset(path, engine="h5netcdf") as root:
            if list(root["time"].values) != want_t:
                errs.append(f"{path}: xarray's time coordinate {list(root['time'].values)}")
    except ImportError:
        print(f"note: no xarray (or h5netcdf): {path} is not opened with it")
    xmf = os.path.splitext(path)[0] + ".xmf"
    if not os.path.isfile(xmf):
        return errs + [f"{xmf}: missing"]
    try:
        root = ET.parse(xmf).getroot()
    except ET.ParseError as e:
        return errs + [f"{xmf}: not XML: {e}"]
    grids = root.findall("./Domain/Grid[@CollectionType='Temporal']/Grid")
    if len(grids) != rows:
        errs.append(f"{xmf}: {len(grids)} steps, expected {rows}")
    times = [float(g.find("Time").get("Value")) for g in grids]
    if times != want_t:
        errs.append(f"{xmf}: times {times}, stats.csv's {want_t}")
    for item in root.iter("DataItem"):
        if item.get("Format") != "HDF":
            continue
        fname, _, dset = item.text.strip().partition(":")
        dims = tuple(int(x) for x in item.get("Dimensions").split())
        if fname != os.path.basename(path) or dset.lstrip("/") not in shapes or \
                shapes[dset.lstrip("/")] != dims:
            errs.append(f"{xmf}: {item.text.strip()} {dims} does not match the file")
            break
    return errs


def check_particles_h5(path, rows, n):
    """particles.h5: a group per step (step_NNNNNN/particles), `rows` steps, each a compound of
    the record's fields (id, pos, v) holding n particles with every id 0 .. n-1 once. With h5py;
    without it, the groups are counted with h5ls."""
    if not os.path.isfile(path):
        return [f"{path}: missing"]
    try:
        import h5py
    except ImportError:
        h5ls = shutil.which("h5ls")
        if not h5ls:
            return []
        out = subprocess.run([h5ls, "-r", path], capture_output=True, text=True)
        sets = [l for l in out.stdout.splitlines() if l.split()[:1] and
                l.split()[0].endswith("/particles")]
        return [] if len(sets) == rows else [f"{path}: {len(sets)} steps, expected {rows}"]
    errs = []
    with h5py.File(path, "r") as f:
        steps = sorted(k for k in f.keys() if k.startswith("step_"))
        if len(steps) != rows:
            errs.append(f"{path}: {len(steps)} step groups, expected {rows}")
        for k in steps:
            d = f[k]["particles"]
            if d.dtype.names != ("id", "pos", "v") or d.shape != (n,):
                errs.append(f"{path}: /{k}/particles is {d.dtype} {d.shape}, expected the "
                            f"record (id, pos, v) of {n} particles")
                break
            ids = sorted(int(i) for i in d["id"])
            if ids != list(range(n)):
                errs.append(f"{path}: /{k}/particles does not hold every id 0..{n - 1} once")
                break
    return errs + check_particles_xmf(path, rows, n)


def check_particles_xmf(path, rows, n):
    """particles.xmf, what ParaView opens: one temporal collection, `particles`, of `rows`
    steps at the simulated times of stats.csv, each n points whose geometry is the copy of the
    field pos (XY) and whose attributes are id and v, the copies equal to the compound's fields
    (xdmf_points.check_points_xmf reads them with h5py; skipped without it)."""
    xmf = os.path.splitext(path)[0] + ".xmf"
    if not os.path.isfile(xmf):
        return [f"{xmf}: missing"]
    try:
        import h5py  # noqa: F401
    except ImportError:
        print(f"note: no h5py: {xmf} is not checked against {path}")
        return []
    errs, grids = xdmf_points.check_points_xmf(xmf)
    _, stats = read_csv(os.path.join(os.path.dirname(path), "stats.csv"))
    want = [(s, float(r["time"]), n, f"/step_{s:06d}/particles.xdmf/pos", "XY",
             {"id": "Scalar", "v": "Scalar"}) for s, r in enumerate(stats)]
    if list(grids) != ["particles"]:
        return errs + [f"{xmf}: grids {list(grids)}, expected one, particles"]
    got = [(g["step"], g["time"], g["n"], g["geometry"], g["gtype"],
            {a: k for a, (k, _) in g["attrs"].items()}) for g in grids["particles"]]
    if len(got) != rows or got != want:
        errs.append(f"{xmf}: the particles' grids are (step, time, points, geometry, its "
                    f"type, attributes) {got}, expected {want}")
    return errs


FIGURES = ("V_steps.png", "stats.png", "V_hist.png")
DEFAULT_PNGS = ",".join(FIGURES)
PARTICLE_FIGURE = "particles.png"


def check_particles(out, rows, n):
    """The particles of the run in out: the analysis' particles.csv equal to the simulation's
    reference, `rows` steps of n particles each, the simulation ranks' rows adding up to n in
    every step and changing between every two steps (particles migrate between blocks)."""
    ref, got = reference(out, "particles"), os.path.join(out, "particles.csv")
    errs = [f"{p}: missing" for p in (ref, got) if not os.path.isfile(p)]
    if errs:
        return errs
    header, steps = read_csv(got)
    if len(steps) != rows:
        errs.append(f"{got}: {len(steps)} steps, expected {rows}")
    cols = [c for c in header if c.startswith("rows_")]
    if not cols:
        errs.append(f"{got}: no rows_ columns (each simulation rank's particles)")
    prev = None
    for r in steps:
        per_rank = [int(r[c]) for c in cols]
        if int(r["particles"]) != n or sum(per_rank) != n:
            errs.append(f"{got}: step {r['step']}: {r['particles']} particles, the ranks' rows "
                        f"{per_rank} (sum {sum(per_rank)}), expected {n}")
        if prev is not None and per_rank == prev:
            errs.append(f"{got}: step {r['step']}: each rank holds as many particles as in the "
                        f"step before ({per_rank}): no particle migrated?")
        prev = per_rank
    return errs + compare(ref, got)


def check_outputs(out, rows, hdf5, pngs=FIGURES, particles=None):
    errs = []
    ref, got = reference(out), os.path.join(out, "stats.csv")
    for p in (ref, got):
        if not os.path.isfile(p):
            errs.append(f"{p}: missing")
    if not errs:
        _, r = read_csv(ref)
        if len(r) != rows:
            errs.append(f"{ref}: {len(r)} steps, expected {rows}")
        errs += compare(ref, got)
    for png in pngs:
        e = check_png(os.path.join(out, png))
        if e:
            errs.append(e)
    if hdf5:
        errs += check_hdf5(os.path.join(out, "fields.h5"), rows)
    if particles is not None:
        errs += check_particles(out, rows, particles)
    if hdf5 and particles is not None:
        errs += check_particles_h5(os.path.join(out, "particles.h5"), rows, particles)
    return errs + check_user_outputs(out, pngs, hdf5, particles)


def check_same_as(out, base, particles):
    """The simulation's statistics byte for byte, the analysis' with compare() (the base run's
    analysis may have another rank count, so its means may differ in the last bits); the
    particles' too when the run has them."""
    errs = []
    for name, csv in (("stats", "stats.csv"), ("particles", "particles.csv")):
        if name == "particles" and particles is None:
            continue
        ref, base_ref = reference(out, name), reference(base, name)
        if not os.path.isfile(base_ref):
            errs.append(f"{base_ref}: missing")
            continue
        with open(ref, "rb") as f, open(base_ref, "rb") as g:
            if f.read() != g.read():
                errs.append(f"{ref} differs from {base_ref}")
        errs += compare(os.path.join(base, csv), os.path.join(out, csv))
    return errs


def cmd_run(a):
    if not a.command:
        sys.exit("check_example.py run: no command")
    shutil.rmtree(a.out, ignore_errors=True)
    print("running:", " ".join(a.command), flush=True)
    text, rc = run_teed(a.command)
    if rc != 0:
        print(f"FAIL: the example exited with {rc}")
        return 1
    pngs = a.pngs.split(",") if a.pngs else []
    errs = []
    if a.particles is not None:
        if a.pngs == DEFAULT_PNGS:
            pngs.append(PARTICLE_FIGURE)
        if "particle check passed in all" not in text:
            errs.append("the analysis did not report its particle check as passed")
    errs += check_outputs(a.out, a.rows, a.hdf5, pngs, a.particles)
    if not errs and a.same_as:
        errs = check_same_as(a.out, a.same_as, a.particles)
    for e in errs:
        print("FAIL:", e)
    if errs:
        return 1
    print(f"ok: {a.rows} steps, statistics equal to the simulation's"
          + (f", {a.particles} particles checked and equal to the simulation's"
             if a.particles is not None else "")
          + f", valid PNGs ({','.join(pngs)})" + (", fields.h5" if a.hdf5 else "")
          + f" and only those in {a.out}"
          + (f"; statistics identical to {a.same_as}" if a.same_as else ""))
    return 0


def run_teed(command):
    """Run command, its output (stderr merged) going on to ours and kept: (text, status)."""
    p = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = []
    for raw in p.stdout:
        line = raw.decode(errors="replace")
        lines.append(line)
        sys.stdout.write(line)
        sys.stdout.flush()
    return "".join(lines), p.wait()


def cmd_fails(a):
    """The command must fail (a status other than 0) and say a.expect."""
    if not a.command:
        sys.exit("check_example.py fails: no command")
    if a.out:
        shutil.rmtree(a.out, ignore_errors=True)
    print("running:", " ".join(a.command), flush=True)
    text, rc = run_teed(a.command)
    errs = []
    if rc == 0:
        errs.append("the command exited with 0")
    if a.expect not in text:
        errs.append(f"its output does not say {a.expect!r}")
    for e in errs:
        print("FAIL:", e)
    if errs:
        return 1
    print(f"ok: it failed (status {rc}) and said {a.expect!r}")
    return 0


def cmd_compare(a):
    diffs = compare(a.reference, a.stats, a.skip)
    for d in diffs:
        print(d)
    if diffs:
        print(f"FAIL: {len(diffs)} differences")
        return 1
    print("ok: equal")
    return 0


def perturb(rows, header, what):
    """A copy of rows with one change (the kinds of error the comparison must catch)."""
    rows = [dict(r) for r in rows]
    last = rows[-1]
    if what == "hist":  # one cell moved to the next bin
        hs = [c for c in header if c.startswith("v_hist_")]
        i = next(k for k, c in enumerate(hs) if int(last[c]) > 0)
        j = i + 1 if i + 1 < len(hs) else i - 1
        last[hs[i]] = str(int(last[hs[i]]) - 1)
        last[hs[j]] = str(int(last[hs[j]]) + 1)
    elif what == "max":  # one unit in the last place
        x = float(last["v_max"])
        last["v_max"] = repr(x + abs(x) * 2.0**-52 if x else 5e-324)
    elif what == "mean":  # 1e-9 relative: beyond summation order
        last["u_mean"] = repr(float(last["u_mean"]) * (1 + 1e-9))
    elif what == "step":
        rows = rows[:-1]
    elif what == "count":  # one particle more
        last["particles"] = str(int(last["particles"]) + 1)
    elif what == "rows":  # one particle counted on another simulation rank
        last["rows_0"] = str(int(last["rows_0"]) - 1)
        last["rows_1"] = str(int(last["rows_1"]) + 1)
    elif what == "v_mean":  # 1e-9 relative
        last["v_mean"] = repr(float(last["v_mean"]) * (1 + 1e-9))
    return rows


def cmd_negative(a):
    fails = 0
    for name, csv, kinds in (("stats", "stats.csv", ("hist", "max", "mean", "step")),
                             ("particles", "particles.csv", ("count", "rows", "v_mean", "step"))):
        ref, got = reference(a.out, name), os.path.join(a.out, csv)
        if compare(ref, got):
            print(f"FAIL: the unperturbed {csv} already differs")
            return 1
        header, rows = read_csv(got)
        for what in kinds:
            path = os.path.join(a.out, CHECK_DIR, f"negative-{name}-{what}.csv")
            with open(path, "w") as f:
                f.write(",".join(header) + "\n")
                for r in perturb(rows, header, what):
                    f.write(",".join(r[c] for c in header) + "\n")
            diffs = compare(ref, path)
            if diffs:
                print(f"ok: {csv}: perturbed {what}: caught ({diffs[0]})")
            else:
                print(f"FAIL: {csv}: perturbed {what}: the comparison did not notice")
                fails += 1
    return 1 if fails else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--rows", type=int, required=True)
    r.add_argument("--particles", type=int, metavar="P",
                   help="the run has P tracer particles: check them (and particles.png)")
    r.add_argument("--hdf5", action="store_true")
    r.add_argument("--same-as", metavar="BASE")
    r.add_argument("--pngs", default=DEFAULT_PNGS,
                   help="the PNGs the run must write (comma-separated; empty: none)")
    r.add_argument("command", nargs=argparse.REMAINDER)
    c = sub.add_parser("compare")
    c.add_argument("--skip", metavar="PREFIX", help="leave out the columns starting with it")
    c.add_argument("reference")
    c.add_argument("stats")
    x = sub.add_parser("fails")
    x.add_argument("--expect", required=True, metavar="TEXT")
    x.add_argument("--out", help="remove this directory first")
    x.add_argument("command", nargs=argparse.REMAINDER)
    n = sub.add_parser("negative")
    n.add_argument("--out", required=True)
    a = p.parse_args()
    if a.cmd in ("run", "fails") and a.command and a.command[0] == "--":
        a.command = a.command[1:]
    if a.cmd == "run":
        return cmd_run(a)
    if a.cmd == "fails":
        return cmd_fails(a)
    if a.cmd == "compare":
        return cmd_compare(a)
    return cmd_negative(a)


if __name__ == "__main__":
    sys.exit(main())
