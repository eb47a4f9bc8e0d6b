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


class Snapshots:
    """V for V_steps.png, as snaps_t of gs_figures.c keeps it: an evenly spaced sample of this
    rank's rows of V (every stride-th step in SNAP_SLOTS slots; when they are full every other
    one goes and the stride doubles) and the latest step, as block sums on a panel of at most
    PANEL_MAX x PANEL_MAX cells. Memory: SNAP_SLOTS + 1 copies of this rank's share of a panel,
    whatever the grid and the step count."""

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

    def add(self, step, t, v):
        """This rank's rows of V of the next step."""
        if self.nrows == 0:
            sums = np.zeros((0, self.cx))
        elif self.f == 1:
            sums = np.array(v, dtype=np.float64)
        else:
            sums = np.add.reduceat(np.add.reduceat(v, self.col_starts, axis=1),
                                   self.row_starts, axis=0)
        self.latest = (self.nseen, step, t, sums)
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
        """The panels (block means) of picks (collective over comm)."""
        h = np.minimum(self.f, self.ny - np.arange(self.cy) * self.f)
        w = np.minimum(self.f, self.nx - np.arange(self.cx) * self.f)
        cells = np.outer(h, w).astype(np.float64)
        panels = []
        for _, _, _, sums in picks:
            full = np.zeros((self.cy, self.cx))
            full[self.c0:self.c0 + self.nrows] = sums
            panels.append(comm.allreduce(full, "sum") / cells)
        return panels


def panel_grid(npan, cy, cx):
    """Columns and rows of V_steps.png's panels, and a panel's size in pixels (the longer side
    280), as gs_figures.c lays them out."""
    cols = npan if npan <= 3 else 2 if npan == 4 else 3
    rows = -(-npan // cols)
    longer = max(cy, cx)
    return cols, rows, max(60.0, 280.0 * cx / longer), max(60.0, 280.0 * cy / longer)


def render(out, snaps, picks, panels, stats, bins):
    """V_steps.png from the panels, stats.png and V_hist.png from stats.csv's rows (rank 0):
    the figures gs_figures.c draws with gnuplot."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

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
        _, step, t, _ = picks[k]
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
    ny, nx = ds["U"].shape
    (r0, _), (nr, _) = xfer.decompose("rows", (ny, nx), size, rank)
    plots = not a.no_plots
    ch.select("U", (r0, 0), (nr, nx))  # M x N: this rank's rows only
    ch.select("V", (r0, 0), (nr, nx))
    os.makedirs(a.output, exist_ok=True)
    csv_path = os.path.join(a.output, "stats.csv")
    csv = open(csv_path, "w") if rank == 0 else None
    if csv:
        csv_header(csv, a.bins)
    snaps = Snapshots(ny, nx, r0, nr) if plots else None
    t_wait, t0 = 0.0, time.monotonic()
    for step in ch:  # until the simulation ends the stream
        t_wait += time.monotonic() - t0
        u = step.get("U")
        v = step.get("V")
        t = float(step.get("time")[0])
        mins, maxs, means, hist = stats_row(comm, u, v, a.bins)
        if rank == 0:
            csv_row(csv, step.index, t, mins, maxs, means, hist)
            csv.flush()
            print(f"gray-scott-analysis-py: step {step.index} (t = {t:g}): U in [{mins[0]:.4f}, "
                  f"{maxs[0]:.4f}] mean {means[0]:.4f}, V in [{mins[1]:.4f}, {maxs[1]:.4f}] mean "
                  f"{means[1]:.4f}", flush=True)
        if snaps:
            snaps.add(step.index, t, v)
        t0 = time.monotonic()
    stats = ch.stats()
    if snaps and snaps.nseen:
        picks = snaps.pick()
        panels = snaps.gather(comm, picks)
    wf.finalize()
    if rank == 0:
        csv.close()
        rows = np.loadtxt(csv_path, delimiter=",", skiprows=1, ndmin=2)
        if len(rows) == 0:
            sys.exit("gray-scott-analysis-py: the simulation ended the channel without a step")
        if plots:
            render(a.output, snaps, picks, panels, rows, a.bins)
        mib = 1024.0 * 1024.0
        print(f"gray-scott-analysis-py: {len(rows)} steps on {size} ranks; rank 0 received "
              f"{stats['bytes_received'] / len(rows) / mib:.3f} MiB per step and waited "
              f"{t_wait:.3f} s for steps; outputs in {a.output}: stats.csv"
              f"{', V_steps.png, stats.png, V_hist.png' if plots else ''}", flush=True)


if __name__ == "__main__":
    main()
