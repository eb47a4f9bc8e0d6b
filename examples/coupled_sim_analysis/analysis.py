#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""gray-scott-analysis-py: the coupled example's analysis in Python (docs/example.md).

It computes what the C analysis (analysis.c) computes, with numpy: per coupled step the min,
max and mean of U and V and a histogram of V over [0, 1], reduced over its ranks, written to
stats.csv in the same format (a ctest checks that they equal the simulation's own). Each rank
declares its rows of U and V (an M x N selection) and keeps a bounded sample of its rows of V
(Snapshots). At the end rank 0 draws, with matplotlib, the figures the C analysis draws with
gnuplot: V_steps.png (V at up to six steps), stats.png (the statistics over time) and
V_hist.png (the histogram of V over time).

When the workflow file declares the joined record dataset `particles`, each rank also receives
its share of every step's tracer particles (selection: rows) and the ranks check them together
as the C analysis does (check_particles: as many as the simulation seeded, every id exactly once,
inside the grid; a failed check ends the run with status 1), write particles.csv in its format
and draw particles.png (the particles over V).

    gray-scott-analysis-py [--bins B] [--output DIR] [--channel NAME] [--no-plots]
                           [--config FILE] [--component NAME] [-h|--help] [--version]
"""
import argparse
import os
import sys
import time

import numpy as np

import xfer

HIST_LO, HIST_HI = 0.0, 1.0  # as GS_HIST_LO, GS_HIST_HI of gs_common.h
PANELS, SNAP_SLOTS, PANEL_MAX, MARKED_STEPS = 6, 12, 256, 50  # as in gs_figures.h
PLOT_PARTICLES = 2000  # GS_PLOT_PARTICLES: particles.png shows the ids below it
# the tracer particles (gs_particles.h): the dataset, its record (gs_particle_t) and the step
# attribute with the number the simulation seeded
PARTICLES, PARTICLES_ATTR = "particles", "n_particles"
PARTICLE = np.dtype([("id", "<i8"), ("pos", "<f8", (2,)), ("v", "<f8")], align=True)


def hist_bins(v, bins):
    """gs_hist_bin of every value: the bin over [HIST_LO, HIST_HI], clamped, NaN in bin 0."""
    x = (v - HIST_LO) / (HIST_HI - HIST_LO) * bins
    ok = x >= 0.0
    idx = np.where(ok, np.minimum(x, bins - 1), 0).astype(np.int64)
    return np.bincount(idx.ravel(), minlength=bins).astype(np.uint64)


def stats_row(comm, u, v, bins):
    """The statistics of this rank's cells, reduced over the component."""
    n = u.size
    mins = comm.allreduce(np.array([u.min(), v.min()] if n else [np.inf, np.inf]), "min")
    maxs = comm.allreduce(np.array([u.max(), v.max()] if n else [-np.inf, -np.inf]), "max")
    sums = comm.allreduce(np.array([u.sum(), v.sum()]), "sum")
    cells = int(comm.allreduce(np.array([n], np.uint64), "sum")[0])
    hist = comm.allreduce(hist_bins(v, bins), "sum")
    return mins, maxs, sums / max(cells, 1), hist


def csv_header(f, bins):
    f.write("step,time,u_min,u_max,u_mean,v_min,v_max,v_mean")
    f.write("".join(f",v_hist_{b}" for b in range(bins)) + "\n")


def csv_row(f, step, t, mins, maxs, means, hist):
    vals = (t, mins[0], maxs[0], means[0], mins[1], maxs[1], means[1])
    f.write(f"{step}," + ",".join("%.17g" % x for x in vals))
    f.write("".join(f",{int(h)}" for h in hist) + "\n")


def check_particles(comm, p, total, rows, seeded, ny, nx):
    """gs_particles_check of gs_particles.c, collective over comm: this rank's share p of the
    step's `total` particles, each simulation rank's `rows`, the number `seeded`. None when the
    step holds as many as were seeded, the rows add up, every id arrived exactly once over the
    ranks and every position lies in the grid; else what is wrong, the same on every rank."""
    if total != seeded:
        return f"the step holds {total} particles, the simulation seeded {seeded}"
    if int(rows.sum()) != total:
        return (f"the {len(rows)} simulation ranks' rows add up to {int(rows.sum())}, the step "
                f"holds {total}")
    ids = p["id"]
    ok = (ids >= 0) & (ids < seeded)
    x, y = p["pos"][:, 0], p["pos"][:, 1]
    outside = ok & ~((x >= 0) & (x < nx) & (y >= 0) & (y < ny))  # NaN too
    none = np.iinfo(np.int64).max
    bad = comm.allreduce(np.array([np.count_nonzero(~ok), np.count_nonzero(outside)], np.uint64),
                         "sum")
    first = comm.allreduce(np.array([ids[~ok].min() if (~ok).any() else none,
                                     ids[outside].min() if outside.any() else none], np.int64),
                           "min")
    seen = np.zeros(0, np.uint32)
    if seeded:  # the count of every id, summed over the ranks
        seen = comm.allreduce(np.bincount(ids[ok], minlength=seeded).astype(np.uint32), "sum")
    extra, missing = np.flatnonzero(seen > 1), np.flatnonzero(seen == 0)
    if bad[0]:
        return (f"{int(bad[0])} particles carry an id outside 0 .. {seeded - 1} (the least "
                f"{int(first[0])})")
    if extra.size:
        return (f"id {extra[0]} arrived {seen[extra[0]]} times (ids more than once: {extra.size}, "
                f"not at all: {missing.size})")
    if missing.size:
        return f"id {missing[0]} did not arrive (ids missing: {missing.size})"
    if bad[1]:
        return (f"{int(bad[1])} particles lie outside the {ny} x {nx} grid (the first: id "
                f"{int(first[1])})")
    return None


def particles_header(f, nsenders):
    f.write("step,time,particles,x_mean,y_mean,v_mean")
    f.write("".join(f",rows_{r}" for r in range(nsenders)) + "\n")


def particles_row(f, step, t, count, means, rows):
    f.write(f"{step},{t:.17g},{count}," + ",".join("%.17g" % m for m in means))
    f.write("".join(f",{int(r)}" for r in rows) + "\n")


class Snapshots:
    """V for V_steps.png, as snaps_t of gs_figures.c keeps it: an evenly spaced sample of this
    rank's rows of V (every stride-th step in SNAP_SLOTS slots; when they are full every other
    one goes and the stride doubles) and the latest step, as block sums on a panel of at most
    PANEL_MAX x PANEL_MAX cells. Memory: SNAP_SLOTS + 1 copies of this rank's share of a panel,
    whatever the grid and the step count. With particles (keep_particles), each sampled step
    also holds the positions of the ids below np, indexed by id: this rank's, zeros for the
    others', so that their sum over the ranks holds every one (each id arrives once: checked)."""

    def __init__(self, ny, nx, r0, nr):
        self.ny, self.nx = ny, nx
        self.f = -(-max(ny, nx) // PANEL_MAX)
        self.cy, self.cx = -(-ny // self.f), -(-nx // self.f)
        self.c0 = r0 // self.f
        self.nrows = (r0 + nr - 1) // self.f - self.c0 + 1 if nr else 0
        # where each panel row and column starts among this rank's rows and columns
        rows = (r0 + np.arange(nr)) // self.f
        self.row_starts = np.flatnonzero(np.diff(rows, prepend=-1))
        self.col_starts = np.arange(0, nx, self.f)
        self.stride, self.kept, self.latest, self.nseen = 1, [], None, 0
        self.np = 0

    def keep_particles(self, n):
        """Keep the positions of the particles of id below n too."""
        self.np = n

    def add(self, step, t, v, particles=None):
        """This rank's rows of V of the next step, and its particles (when kept)."""
        if self.nrows == 0:
            sums = np.zeros((0, self.cx))
        elif self.f == 1:
            sums = np.array(v, dtype=np.float64)
        else:
            sums = np.add.reduceat(np.add.reduceat(v, self.col_starts, axis=1),
                                   self.row_starts, axis=0)
        pos = None
        if self.np and particles is not None:
            pos = np.zeros((self.np, 2))
            shown = (particles["id"] >= 0) & (particles["id"] < self.np)
            pos[particles["id"][shown]] = particles["pos"][shown]
        self.latest = (self.nseen, step, t, sums, pos)
        if self.nseen % self.stride == 0 and len(self.kept) == SNAP_SLOTS:
            self.kept = self.kept[::2]  # keep the multiples of 2 x stride
            self.stride *= 2
        if self.nseen % self.stride == 0:
            self.kept.append(self.latest)
        self.nseen += 1

    def pick(self):
        """At most PANELS sampled steps, in order: for targets evenly spaced from the first to
        the last step, the one nearest to each (the lower one on a tie)."""
        cand = list(self.kept)
        if self.latest is not None and (not cand or cand[-1][0] != self.latest[0]):
            cand.append(self.latest)
        if len(cand) <= 1:
            return cand
        npan = min(PANELS, len(cand))
        picks = []
        for j in range(npan):
            target = j * (self.nseen - 1) / (npan - 1)
            best = min(cand, key=lambda c: abs(c[0] - target))  # the first of equals: the lower
            if not picks or picks[-1] is not best:
                picks.append(best)
        return picks

    def gather(self, comm, picks):
        """The panels (block means) of picks and, with particles, their positions (collective
        over comm)."""
        h = np.minimum(self.f, self.ny - np.arange(self.cy) * self.f)
        w = np.minimum(self.f, self.nx - np.arange(self.cx) * self.f)
        cells = np.outer(h, w).astype(np.float64)
        panels, positions = [], []
        for _, _, _, sums, pos in picks:
            full = np.zeros((self.cy, self.cx))
            full[self.c0:self.c0 + self.nrows] = sums
            panels.append(comm.allreduce(full, "sum") / cells)
            if self.np:
                positions.append(comm.allreduce(pos, "sum"))
        return panels, positions


def panel_grid(npan, cy, cx):
    """Columns and rows of V_steps.png's panels, and a panel's size in pixels (the longer side
    280), as gs_figures.c lays them out."""
    cols = npan if npan <= 3 else 2 if npan == 4 else 3
    rows = -(-npan // cols)
    longer = max(cy, cx)
    return cols, rows, max(60.0, 280.0 * cx / longer), max(60.0, 280.0 * cy / longer)


def render(out, snaps, picks, panels, stats, bins, positions=None, nparticles=0):
    """V_steps.png from the panels, stats.png and V_hist.png from stats.csv's rows (rank 0) and,
    with particles (positions: np x 2 per panel), particles.png: the figures gs_figures.c draws
    with gnuplot."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LinearSegmentedColormap, LogNorm

    # V_steps.png: the panels on one colour scale
    npan = len(panels)
    cols, rows, pw, ph = panel_grid(npan, snaps.cy, snaps.cx)
    width = 20 + cols * pw + (cols - 1) * 20 + 100
    height = max(300.0, 70 + rows * ph + (rows - 1) * 40 + 10)
    fig, axes = plt.subplots(rows, cols, figsize=(width / 100, height / 100), squeeze=False,
                             constrained_layout=True)
    vmax = max(float(p.max()) for p in panels)
    vmax = vmax if vmax > 0 else 1.0
    for k, ax in enumerate(axes.flat):
        if k >= npan:
            ax.set_axis_off()
            continue
        _, step, t, _, _ = picks[k]
        im = ax.imshow(panels[k], cmap="plasma", vmin=0.0, vmax=vmax, origin="upper",
                       interpolation="nearest")
        ax.set_title(f"t = {t:g} (step {step})", fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(im, ax=axes.ravel().tolist(), label="V (dimensionless)", fraction=0.03)
    shown = f", shown as means of {snaps.f} x {snaps.f} blocks" if snaps.f > 1 else ""
    fig.suptitle(f"Gray-Scott V at {npan} of {snaps.nseen} coupled steps ({snaps.ny} x "
                 f"{snaps.nx} cells{shown}; one colour scale)", fontsize=10)
    fig.savefig(os.path.join(out, "V_steps.png"), dpi=100)
    plt.close(fig)

    # stats.png: U left, V right; the mean above, min and max below; each panel autoscaled
    t = stats[:, 1]
    n = len(t)
    xlim = (t[0], t[-1]) if n > 1 else (t[0] - 0.5, t[0] + 0.5)
    marker = dict(marker="o", markersize=3.5) if n <= MARKED_STEPS else {}
    fig, ax = plt.subplots(2, 2, figsize=(9.6, 6.4), constrained_layout=True)
    for k, (name, colour, cmin, cmax, cmean) in enumerate((("U", "#1f77b4", 2, 3, 4),
                                                            ("V", "#d62728", 5, 6, 7))):
        ax[0, k].plot(t, stats[:, cmean], color=colour, lw=1.5, **marker)
        ax[0, k].set_title(f"mean of {name}", fontsize=10)
        ax[1, k].fill_between(t, stats[:, cmin], stats[:, cmax], color=colour, alpha=0.2, lw=0)
        ax[1, k].plot(t, stats[:, cmax], color=colour, lw=1.5, **marker)
        ax[1, k].plot(t, stats[:, cmin], color=colour, lw=1.5, **marker)
        ax[1, k].set_title(f"min (lower line) and max (upper line) of {name}", fontsize=10)
        ax[1, k].set_xlabel("simulated time t")
        for a in ax[:, k]:
            a.set_ylabel(f"{name} (dimensionless)")
            a.set_xlim(*xlim)
            a.grid(alpha=0.3, ls=":")
    fig.suptitle(f"Gray-Scott: U and V over the {snaps.ny} x {snaps.nx} cells at each coupled "
                 f"step (each panel autoscaled)", fontsize=10)
    fig.savefig(os.path.join(out, "stats.png"), dpi=100)
    plt.close(fig)

    # V_hist.png: time on x, the bins (edges from the histogram's range) on y up to the highest
    # one with a count, the counts as colour on a log scale, an empty bin blank
    hist = stats[:, 8:8 + bins]
    used = np.flatnonzero(hist.sum(axis=0) > 0)
    top = int(used[-1]) if used.size else 0
    bw = (HIST_HI - HIST_LO) / bins
    dt = (t[-1] - t[0]) / (n - 1) if n > 1 else 1.0
    hmax = float(hist.max())
    fig, ax = plt.subplots(figsize=(8.0, 4.8), constrained_layout=True)
    im = ax.pcolormesh(t[0] - dt / 2 + dt * np.arange(n + 1), HIST_LO + bw * np.arange(top + 2),
                       np.ma.masked_equal(hist[:, :top + 1].T, 0), cmap="viridis",
                       norm=LogNorm(vmin=1, vmax=hmax if hmax > 1 else 10))
    fig.colorbar(im, ax=ax, label="cells in the bin (log scale; blank: none)")
    ax.set_xlabel("simulated time t")
    ax.set_ylabel("V (dimensionless)")
    above = f"; none above {HIST_LO + (top + 1) * bw:g}" if top + 1 < bins else ""
    ax.set_title(f"Gray-Scott: histogram of V over time\n{snaps.ny * snaps.nx} cells per step, "
                 f"{bins} bins over [{HIST_LO:g}, {HIST_HI:g}]{above}", fontsize=10)
    fig.savefig(os.path.join(out, "V_hist.png"), dpi=100)
    plt.close(fig)
    if positions is None:
        return

    # particles.png: the panels of V_steps.png in grey (white: 0), the particles as red dots; a
    # particle at x (cells) lies in panel pixel x / f - 0.5
    greys = LinearSegmentedColormap.from_list("greys", ["#ffffff", "#404040"])
    fig, axes = plt.subplots(rows, cols, figsize=(width / 100, height / 100), squeeze=False,
                             constrained_layout=True)
    for k, ax in enumerate(axes.flat):
        if k >= npan:
            ax.set_axis_off()
            continue
        _, step, t, _, _ = picks[k]
        im = ax.imshow(panels[k], cmap=greys, vmin=0.0, vmax=vmax, origin="upper",
                       interpolation="nearest")
        if snaps.np:
            ax.scatter(positions[k][:, 0] / snaps.f - 0.5, positions[k][:, 1] / snaps.f - 0.5,
                       s=2.5, c="#d62728", linewidths=0)
        ax.set_xlim(-0.5, snaps.cx - 0.5)
        ax.set_ylim(snaps.cy - 0.5, -0.5)
        ax.set_title(f"t = {t:g} (step {step})", fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(im, ax=axes.ravel().tolist(), label="V (dimensionless)", fraction=0.03)
    shown = f" (ids below {snaps.np} shown)" if snaps.np < nparticles else ""
    fig.suptitle(f"{nparticles} tracer particles{shown} drifting up the gradient of V, at {npan} "
                 f"of {snaps.nseen} coupled steps", fontsize=10)
    fig.savefig(os.path.join(out, "particles.png"), dpi=100)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(prog="gray-scott-analysis-py", description=__doc__.split("\n")[0])
    p.add_argument("--bins", type=int, default=32)
    p.add_argument("--output", default="./coupled-output")
    p.add_argument("--channel", default="fields")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--config")
    p.add_argument("--component")
    p.add_argument("--version", action="version",
                   version=f"gray-scott-analysis-py (libxfer {xfer.__version__}, MPI flavour "
                           f"{xfer.MPI_FLAVOR})")
    a = p.parse_args()
    if a.bins < 1:
        p.error("--bins must be at least 1")

    wf = xfer.init(a.config, a.component)
    comm = wf.comm
    rank, size = comm.rank, comm.size
    ch = wf.channel(a.channel)
    ds = ch.datasets
    for name in ("U", "V"):
        if name not in ds or ds[name].dtype != np.float64 or len(ds[name].shape) != 2:
            sys.exit(f"gray-scott-analysis-py: channel {a.channel} needs a float64 2-D {name}")
    if ds["U"].shape != ds["V"].shape or "time" not in ds:
        sys.exit(f"gray-scott-analysis-py: channel {a.channel} needs U and V alike, and time")
    particles = PARTICLES in ds  # without it, no particles (as in the C analysis)
    if particles and (ds[PARTICLES].dtype != PARTICLE or not ds[PARTICLES].joined or
                      len(ds[PARTICLES].shape) != 1):
        sys.exit(f"gray-scott-analysis-py: channel {a.channel}: dataset {PARTICLES} must be "
                 f"declared as {{name: {PARTICLES}, type: {{id: int64, pos: [float64, 2], v: "
                 f"float64}}, dims: [joined]}} (or left out: no particles)")
    ny, nx = ds["U"].shape
    (r0, _), (nr, _) = xfer.decompose("rows", (ny, nx), size, rank)
    plots = not a.no_plots
    ch.select("U", (r0, 0), (nr, nx))  # M x N: this rank's rows only
    ch.select("V", (r0, 0), (nr, nx))
    os.makedirs(a.output, exist_ok=True)
    csv_path = os.path.join(a.output, "stats.csv")
    csv = open(csv_path, "w") if rank == 0 else None
    pcsv = open(os.path.join(a.output, "particles.csv"), "w") if rank == 0 and particles else None
    if csv:
        csv_header(csv, a.bins)
    snaps = Snapshots(ny, nx, r0, nr) if plots else None
    t_wait, t0, seeded, p = 0.0, time.monotonic(), 0, None
    for step in ch:  # until the simulation ends the stream
        t_wait += time.monotonic() - t0
        u = step.get("U")
        v = step.get("V")
        t = float(step.get("time")[0])
        mins, maxs, means, hist = stats_row(comm, u, v, a.bins)
        if particles:
            # this rank's share of the step's particles (selection: rows): a structured array
            shape = step.get_shape(PARTICLES)  # dims[0]: all of the step's; count[0]: this rank's
            p = step.get(PARTICLES)
            rows = step.get_rows(PARTICLES)  # each simulation rank's particles
            seeded = int(step.attrs[PARTICLES_ATTR])
            err = check_particles(comm, p, shape.dims[0], rows, seeded, ny, nx)
            if err:  # every rank alike: all leave, and the simulation sees the channel close
                sys.exit(f"gray-scott-analysis-py: rank {rank}: particle check failed in step "
                         f"{step.index}: {err}")
            pcount = int(comm.allreduce(np.array([p.size], np.uint64), "sum")[0])
            psums = comm.allreduce(np.array([p["pos"][:, 0].sum(), p["pos"][:, 1].sum(),
                                             p["v"].sum()]), "sum")
            if snaps and not snaps.nseen:  # before the first step's sample
                snaps.keep_particles(min(seeded, PLOT_PARTICLES))
        if rank == 0:
            csv_row(csv, step.index, t, mins, maxs, means, hist)
            csv.flush()
            line = (f"gray-scott-analysis-py: step {step.index} (t = {t:g}): U in [{mins[0]:.4f}, "
                    f"{maxs[0]:.4f}] mean {means[0]:.4f}, V in [{mins[1]:.4f}, {maxs[1]:.4f}] "
                    f"mean {means[1]:.4f}")
            if particles:
                if pcsv.tell() == 0:  # its columns name each simulation rank: known now
                    particles_header(pcsv, len(rows))
                particles_row(pcsv, step.index, t, pcount, psums / max(pcount, 1), rows)
                pcsv.flush()
                line += (f"; {pcount} particles checked, V at them "
                         f"{psums[2] / max(pcount, 1):.4f} on average")
            print(line, flush=True)
        if snaps:
            snaps.add(step.index, t, v, p)
        t0 = time.monotonic()
    stats = ch.stats()
    if snaps and snaps.nseen:
        picks = snaps.pick()
        panels, positions = snaps.gather(comm, picks)
    wf.finalize()
    if rank == 0:
        csv.close()
        if pcsv:
            pcsv.close()
        rows = np.loadtxt(csv_path, delimiter=",", skiprows=1, ndmin=2)
        if len(rows) == 0:
            sys.exit("gray-scott-analysis-py: the simulation ended the channel without a step")
        if plots:
            render(a.output, snaps, picks, panels, rows, a.bins,
                   positions if particles else None, seeded)
        mib = 1024.0 * 1024.0
        if particles:
            print(f"gray-scott-analysis-py: particle check passed in all {len(rows)} steps: "
                  f"{seeded} particles each (joined record dataset, each rank its share by rows), "
                  f"every id exactly once, all inside the grid", flush=True)
        figures = ", V_steps.png, stats.png, V_hist.png" if plots else ""
        figures += ", particles.png" if plots and particles else ""
        print(f"gray-scott-analysis-py: {len(rows)} steps on {size} ranks; rank 0 received "
              f"{stats['bytes_received'] / len(rows) / mib:.3f} MiB per step and waited "
              f"{t_wait:.3f} s for steps; outputs in {a.output}: stats.csv"
              f"{', particles.csv' if particles else ''}{figures}", flush=True)


if __name__ == "__main__":
    main()
