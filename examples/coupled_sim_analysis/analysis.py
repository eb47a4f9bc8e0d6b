#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""gray-scott-analysis-py: the coupled example's analysis in Python (docs/example.md).

It computes what the C analysis (analysis.c) computes, with numpy: per coupled step the min,
max and mean of U and V and a histogram of V over [0, 1], reduced over its ranks, written to
stats.csv in the same format (a ctest checks that they equal the simulation's own). Each rank
declares its rows of U and V (an M x N selection); rank 0 takes V whole instead, for the
figures: V_steps.png (V at up to six steps) and stats.png (the statistics and the histogram
over time), with matplotlib.

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


def render(out, snaps, rows, bins):
    """V_steps.png and stats.png (rank 0)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pick = np.unique(np.linspace(0, len(snaps) - 1, min(6, len(snaps))).round().astype(int))
    fig, axes = plt.subplots(1, len(pick), figsize=(2.6 * len(pick) + 0.8, 3.0),
                             squeeze=False, constrained_layout=True)
    vmax = max(float(snaps[i][2].max()) for i in pick)
    for ax, i in zip(axes[0], pick):
        step, t, v = snaps[i]
        im = ax.imshow(v, cmap="plasma", vmin=0.0, vmax=vmax, origin="upper")
        ax.set_title(f"step {step}, t = {t:g}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.85, label="V")
    fig.suptitle(f"Gray-Scott V ({snaps[0][2].shape[0]} x {snaps[0][2].shape[1]})")
    fig.savefig(os.path.join(out, "V_steps.png"), dpi=110)
    plt.close(fig)

    t = np.array([r[1] for r in rows])
    fig, ax = plt.subplots(3, 1, figsize=(7.5, 8.5), constrained_layout=True)
    for k, (name, col) in enumerate((("U", 0), ("V", 1))):
        ax[k].fill_between(t, [r[2][col] for r in rows], [r[3][col] for r in rows], alpha=0.25,
                           label="min .. max")
        ax[k].plot(t, [r[4][col] for r in rows], marker="o", label="mean")
        ax[k].set_ylabel(name)
        ax[k].grid(alpha=0.3)
        ax[k].legend(loc="best", fontsize=8)
    hist = np.array([r[5] for r in rows], dtype=float).T
    edges = np.linspace(HIST_LO, HIST_HI, bins + 1)
    im = ax[2].pcolormesh(np.arange(len(rows) + 1), edges, np.log10(hist + 1), cmap="viridis")
    ax[2].set_xticks(np.arange(len(rows)) + 0.5, [f"{x:g}" for x in t], fontsize=7)
    ax[2].set_xlabel("simulated time")
    ax[2].set_ylabel("V (histogram)")
    fig.colorbar(im, ax=ax[2], label="log10(cells + 1)")
    fig.suptitle("Gray-Scott statistics over time")
    fig.savefig(os.path.join(out, "stats.png"), dpi=110)
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
    plots = not a.no_plots and rank == 0
    ch.select("U", (r0, 0), (nr, nx))  # M x N: this rank's rows only
    if plots:
        ch.select("V", (0, 0), (ny, nx))  # rank 0: V whole, for the figures
    else:
        ch.select("V", (r0, 0), (nr, nx))
    os.makedirs(a.output, exist_ok=True)
    csv = open(os.path.join(a.output, "stats.csv"), "w") if rank == 0 else None
    if csv:
        csv_header(csv, a.bins)
    rows, snaps = [], []
    t_wait, t0 = 0.0, time.monotonic()
    for step in ch:  # until the simulation ends the stream
        t_wait += time.monotonic() - t0
        u = step.get("U")
        v_all = step.get("V")
        v = v_all[r0:r0 + nr] if plots else v_all
        t = float(step.get("time")[0])
        mins, maxs, means, hist = stats_row(comm, u, v, a.bins)
        if rank == 0:
            csv_row(csv, step.index, t, mins, maxs, means, hist)
            csv.flush()
            rows.append((step.index, t, mins, maxs, means, hist))
            print(f"gray-scott-analysis-py: step {step.index} (t = {t:g}): U in [{mins[0]:.4f}, "
                  f"{maxs[0]:.4f}] mean {means[0]:.4f}, V in [{mins[1]:.4f}, {maxs[1]:.4f}] mean "
                  f"{means[1]:.4f}", flush=True)
        if plots:
            snaps.append((step.index, t, v_all.copy()))
        t0 = time.monotonic()
    stats = ch.stats()
    wf.finalize()
    if rank == 0:
        csv.close()
        if not rows:
            sys.exit("gray-scott-analysis-py: the simulation ended the channel without a step")
        if plots:
            render(a.output, snaps, rows, a.bins)
        mib = 1024.0 * 1024.0
        print(f"gray-scott-analysis-py: {len(rows)} steps on {size} ranks; rank 0 received "
              f"{stats['bytes_received'] / len(rows) / mib:.3f} MiB per step and waited "
              f"{t_wait:.3f} s for steps; outputs in {a.output}: stats.csv"
              f"{', V_steps.png, stats.png' if plots else ''}", flush=True)


if __name__ == "__main__":
    main()
