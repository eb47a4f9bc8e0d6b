/* SPDX-License-Identifier: BSD-3-Clause */
/* The figures of gray-scott-analysis (docs/example.md): V at up to six steps (V_steps.png, from
 * a bounded sample each rank keeps, see snaps_t), the statistics over time (stats.png), the
 * histogram of V over time (V_hist.png) and, with particles, the tracer particles over V at the
 * steps of V_steps.png (particles.png), drawn by gnuplot from a script written to the output
 * directory's .check/. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "gs_common.h"
#include "gs_figures.h"

extern char **environ;

/* Run gnuplot on a script; 0 when it exited with 0, else a message in err. */
static int run_gnuplot(const char *script, char *err, size_t errlen)
{
    char *argv[] = {"gnuplot", (char *) script, NULL};
    pid_t pid;
    int rc, status;

    rc = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
    if (rc != 0) {
        snprintf(err, errlen, "cannot run gnuplot: %s (Debian: apt-get install gnuplot-nox)",
                 strerror(rc));
        return -1;
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, errlen, "waiting for gnuplot: %s", strerror(errno));
            return -1;
        }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(err, errlen, "gnuplot %s failed (%s %d)", script,
                 WIFEXITED(status) ? "exit status" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return -1;
    }
    return 0;
}

int gs_snaps_init(snaps_t *s, uint64_t ny, uint64_t nx, uint64_t r0, uint64_t nr)
{
    const uint64_t longer = ny > nx ? ny : nx;
    memset(s, 0, sizeof(*s));
    s->f = (longer + GS_PANEL_MAX - 1) / GS_PANEL_MAX;
    s->cy = (ny + s->f - 1) / s->f;
    s->cx = (nx + s->f - 1) / s->f;
    s->c0 = r0 / s->f;
    s->nrows = nr ? (r0 + nr - 1) / s->f - s->c0 + 1 : 0;
    s->stride = 1;
    s->sums = calloc((GS_SNAP_SLOTS + 1) * s->nrows * s->cx + 1, sizeof(double));
    return s->sums ? 0 : -1;
}

int gs_snaps_particles(snaps_t *s, uint64_t np)
{
    s->np = np;
    s->pos = calloc((GS_SNAP_SLOTS + 1) * 2 * np + 1, sizeof(double));
    return s->pos ? 0 : -1;
}

static double *snaps_slot(const snaps_t *s, uint64_t k)
{
    return s->sums + k * s->nrows * s->cx;
}

static double *snaps_pos(const snaps_t *s, uint64_t k)
{
    return s->pos + k * 2 * s->np;
}

static void snaps_copy(snaps_t *s, uint64_t to, uint64_t from)
{
    memmove(snaps_slot(s, to), snaps_slot(s, from), s->nrows * s->cx * sizeof(double));
    if (s->np)
        memmove(snaps_pos(s, to), snaps_pos(s, from), 2 * s->np * sizeof(double));
    s->seen[to] = s->seen[from];
    s->step[to] = s->step[from];
    s->time[to] = s->time[from];
}

/* Add this rank's rows r0 .. r0 + nr - 1 of V (nx columns) of the next step, and its n
 * particles p (when particles are kept). */
void gs_snaps_add(snaps_t *s, uint64_t step, double time, const double *v, uint64_t r0, uint64_t nr,
                  uint64_t nx, const gs_particle_t *p, size_t n)
{
    double *latest = snaps_slot(s, GS_SNAP_SLOTS),
           *pos = s->np ? snaps_pos(s, GS_SNAP_SLOTS) : NULL;
    uint64_t i, j, k;
    size_t q;

    if (pos) {
        memset(pos, 0, 2 * s->np * sizeof(double));
        for (q = 0; q < n; q++)
            if (p[q].id >= 0 && (uint64_t) p[q].id < s->np) {
                pos[2 * p[q].id] = p[q].pos[0];
                pos[2 * p[q].id + 1] = p[q].pos[1];
            }
    }

    memset(latest, 0, s->nrows * s->cx * sizeof(double));
    for (i = 0; i < nr; i++) {
        double *row = latest + ((r0 + i) / s->f - s->c0) * s->cx;
        for (j = 0; j < nx; j++)
            row[j / s->f] += v[i * nx + j];
    }
    s->seen[GS_SNAP_SLOTS] = s->nseen;
    s->step[GS_SNAP_SLOTS] = step;
    s->time[GS_SNAP_SLOTS] = time;
    if (s->nseen % s->stride == 0 && s->nkept == GS_SNAP_SLOTS) {
        for (k = 0; 2 * k < GS_SNAP_SLOTS; k++) /* keep the multiples of 2 x stride */
            snaps_copy(s, k, 2 * k);
        s->nkept = k;
        s->stride *= 2;
    }
    if (s->nseen % s->stride == 0)
        snaps_copy(s, s->nkept++, GS_SNAP_SLOTS);
    s->nseen++;
}

static double distance(uint64_t i, double t)
{
    return (double) i > t ? (double) i - t : t - (double) i;
}

/* The slots of the panels, at most GS_PANELS, in step order: for targets evenly spaced from
 * the first to the last step, the sampled step nearest to each (the lower one on a tie). */
int gs_snaps_pick(const snaps_t *s, uint64_t *pick)
{
    uint64_t cand[GS_SNAP_SLOTS + 1], m = 0, k, best;
    int np = 0, j, P;

    for (k = 0; k < s->nkept; k++)
        cand[m++] = k;
    if (s->nseen > 0 && (m == 0 || s->seen[cand[m - 1]] != s->seen[GS_SNAP_SLOTS]))
        cand[m++] = GS_SNAP_SLOTS;
    if (m == 0)
        return 0;
    P = m < GS_PANELS ? (int) m : GS_PANELS;
    if (P == 1) {
        pick[0] = cand[m - 1];
        return 1;
    }
    for (j = 0; j < P; j++) {
        const double t = (double) j * (double) (s->nseen - 1) / (double) (P - 1);
        best = cand[0];
        for (k = 1; k < m; k++)
            if (distance(s->seen[cand[k]], t) < distance(s->seen[best], t))
                best = cand[k];
        if (np == 0 || pick[np - 1] != best)
            pick[np++] = best;
    }
    return np;
}

/* The panels of slots pick[0 .. np - 1] as block means on rank 0 of comm, into out (np x cy x
 * cx; rank 0 only), and the particles' positions into pos_out (np x s->np x 2; rank 0 only).
 * Collective over comm. Returns an MPI code, or -1 when out of memory. */
int gs_snaps_gather(const snaps_t *s, const uint64_t *pick, int np, uint64_t ny, uint64_t nx,
                    MPI_Comm comm, double *out, double *pos_out)
{
    const uint64_t n = s->cy * s->cx;
    double *all = calloc(n, sizeof(double));
    uint64_t by, bx;
    int j, rc = MPI_SUCCESS;

    if (!all)
        return -1;
    for (j = 0; j < np && rc == MPI_SUCCESS; j++) {
        memset(all, 0, n * sizeof(double));
        memcpy(all + s->c0 * s->cx, snaps_slot(s, pick[j]), s->nrows * s->cx * sizeof(double));
        rc = MPI_Reduce(all, out ? out + (uint64_t) j * n : NULL, (int) n, MPI_DOUBLE, MPI_SUM, 0,
                        comm);
        if (rc == MPI_SUCCESS && s->np) /* each id on one rank, zeros on the others: exact */
            rc = MPI_Reduce(snaps_pos(s, pick[j]),
                            pos_out ? pos_out + (uint64_t) j * 2 * s->np : NULL, (int) (2 * s->np),
                            MPI_DOUBLE, MPI_SUM, 0, comm);
    }
    free(all);
    for (j = 0; out && rc == MPI_SUCCESS && j < np; j++)
        for (by = 0; by < s->cy; by++)
            for (bx = 0; bx < s->cx; bx++) {
                const uint64_t h = (by + 1) * s->f < ny ? s->f : ny - by * s->f;
                const uint64_t w = (bx + 1) * s->f < nx ? s->f : nx - bx * s->f;
                out[(uint64_t) j * n + by * s->cx + bx] /= (double) (h * w);
            }
    return rc;
}

void gs_snaps_free(snaps_t *s)
{
    free(s->sums);
    free(s->pos);
    s->sums = s->pos = NULL;
}

/* s as a gnuplot string in single quotes (a quote in it doubled). */
static void gp_string(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

/* The palettes, with matplotlib's names (analysis.py uses those): sampled stops of plasma and
 * viridis. */
static const char gp_plasma[] = "set palette defined (0 '#0d0887', 0.25 '#7e03a8', 0.5 "
                                "'#cc4778', 0.75 '#f89540', 1 '#f0f921')\n";
static const char gp_viridis[] = "set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 "
                                 "'#21918c', 0.75 '#5ec962', 1 '#fde725')\n";
/* particles.png: V from white to a dark grey, under red particles */
static const char gp_greys[] = "set palette defined (0 '#ffffff', 1 '#404040')\n";

/* The layout of V_steps.png, as analysis.py has it: columns and rows of panels; a panel's
 * longer side is 280 pixels. */
static void panel_grid(const plot_t *p, int *cols, int *rows, double *pw, double *ph)
{
    const double longer = (double) (p->cy > p->cx ? p->cy : p->cx);
    *cols = p->npanels <= 3 ? p->npanels : p->npanels == 4 ? 2 : 3;
    *rows = (p->npanels + *cols - 1) / *cols;
    *pw = 280.0 * (double) p->cx / longer;
    *ph = 280.0 * (double) p->cy / longer;
    *pw = *pw < 60 ? 60 : *pw;
    *ph = *ph < 60 ? 60 : *ph;
}

/* The panels of V at the plotted steps, one colour bar on the right, into @p png with palette
 * @p palette and the multiplot title @p title; @p over (NULL: none) adds a plot of its own over
 * panel j. Margins in pixels: 20 left, 100 right (the colour bar), 70 top (the titles), 10
 * bottom, 20 and 40 between panels. */
static void gp_panels(FILE *f, const plot_t *p, const char *png, const char *palette,
                      const char *title, void (*over)(FILE *f, const plot_t *p, int j))
{
    const uint64_t bytes = p->cy * p->cx * sizeof(double);
    double pw, ph, w, h;
    int j, cols, rows;

    panel_grid(p, &cols, &rows, &pw, &ph);
    w = 20 + cols * pw + (cols - 1) * 20 + 100;
    h = 70 + rows * ph + (rows - 1) * 40 + 10;
    h = h < 300 ? 300 : h; /* room for the colour bar; the panels keep their aspect */
    fprintf(f,
            "reset\n"
            "set terminal pngcairo size %.0f,%.0f font ',10'\n"
            "set output '%s'\n"
            "%s"
            "set cbrange [0:%.17g]\n"
            "set cblabel 'V (dimensionless)'\n"
            "unset key\n"
            "set size ratio -1\n"
            "set xrange [-0.5:%" PRIu64 ".5]\n"
            "set yrange [%" PRIu64 ".5:-0.5]\n"
            "unset xtics\n"
            "unset ytics\n"
            "unset colorbox\n"
            "set multiplot layout %d,%d title '%s' "
            "margins %.4f,%.4f,%.4f,%.4f spacing %.4f,%.4f\n",
            w, h, png, palette, p->vmax, p->cx - 1, p->cy - 1, rows, cols, title, 20 / w,
            1 - 100 / w, 10 / h, 1 - 70 / h, 20 / w, 40 / h);
    for (j = 0; j < p->npanels; j++) {
        if (j == p->npanels - 1)
            fprintf(f, "set colorbox user origin screen %.4f,%.4f size screen %.4f,%.4f\n",
                    1 - 80 / w, 10 / h, 20 / w, 1 - 80 / h);
        fprintf(f,
                "set title 't = %g (step %" PRIu64 ")'\n"
                "plot '" GS_CHECK_SUBDIR "/V_steps.bin' binary array=(%" PRIu64 ",%" PRIu64
                ") format='%%float64' skip=%" PRIu64 " with image",
                p->ptime[j], p->pstep[j], p->cx, p->cy, (uint64_t) j * bytes);
        if (over)
            over(f, p, j);
        fprintf(f, "\n");
    }
    fprintf(f, "unset multiplot\n");
}

/* V_steps.png: the panels in the plasma palette. */
static void gp_v_steps(FILE *f, const plot_t *p)
{
    char shown[128] = "", title[512];
    if (p->f > 1)
        snprintf(shown, sizeof(shown), ", shown as means of %" PRIu64 " x %" PRIu64 " blocks", p->f,
                 p->f);
    snprintf(title, sizeof(title),
             "Gray-Scott V at %d of %" PRIu64 " coupled steps (%" PRIu64 " x %" PRIu64
             " cells%s; one colour scale)",
             p->npanels, p->nsteps, p->ny, p->nx, shown);
    gp_panels(f, p, "V_steps.png", gp_plasma, title, NULL);
}

/* Panel j's particles of id below np, red dots. A particle at x (cells) lies in panel pixel
 * x / f - 0.5 (pixel c covers cells c f .. (c + 1) f, centred on c). */
static void gp_particle_dots(FILE *f, const plot_t *p, int j)
{
    const uint64_t pbytes = 2 * p->np * sizeof(double);
    if (p->np)
        fprintf(f,
                ", '" GS_CHECK_SUBDIR "/particles.bin' binary record=(%" PRIu64
                ") format='%%float64%%float64' skip=%" PRIu64 " using ($1 / %" PRIu64
                ".0 - 0.5):($2 / %" PRIu64 ".0 - 0.5) with points pt 7 ps 0.25 "
                "lc rgb '#d62728'",
                p->np, (uint64_t) j * pbytes, p->f, p->f);
}

/* particles.png: the panels of V_steps.png in grey (white: 0), the particles over them. */
static void gp_particles(FILE *f, const plot_t *p)
{
    char shown[128] = "", title[512];
    if (p->np < p->nparticles)
        snprintf(shown, sizeof(shown), " (ids below %" PRIu64 " shown)", p->np);
    snprintf(title, sizeof(title),
             "%" PRIu64 " tracer particles%s drifting up the gradient of V, at %d of %" PRIu64
             " coupled steps",
             p->nparticles, shown, p->npanels, p->nsteps);
    gp_panels(f, p, "particles.png", gp_greys, title, gp_particle_dots);
}

/* stats.png: U left, V right; the mean above, min and max below; each panel autoscaled. A
 * point marks each step up to GS_MARKED_STEPS steps. */
static void gp_stats(FILE *f, const plot_t *p)
{
    static const struct {
        const char *name, *colour;
        int min, max, mean; /* columns of stats.csv */
    } var[2] = {{"U", "#1f77b4", 3, 4, 5}, {"V", "#d62728", 6, 7, 8}};
    int k;

    fprintf(f,
            "reset\n"
            "set terminal pngcairo size 960,640 font ',10'\n"
            "set output 'stats.png'\n"
            "set datafile separator ','\n"
            "set datafile columnheaders\n"
            "set grid\n"
            "set tics out nomirror\n"
            "unset key\n"
            "set autoscale yfix\n"
            "set offsets 0, 0, graph 0.05, graph 0.05\n"
            "set format y '%%g'\n"
            "set style line 1 pt 7 ps %s lw 1.5\n",
            p->nsteps <= GS_MARKED_STEPS ? "0.6" : "0");
    if (p->nsteps > 1)
        fprintf(f, "set xrange [%.17g:%.17g]\n", p->t_first, p->t_last);
    else
        fprintf(f, "set xrange [%.17g:%.17g]\n", p->t_first - 0.5, p->t_last + 0.5);
    fprintf(f,
            "set multiplot layout 2,2 title 'Gray-Scott: U and V over the %" PRIu64 " x %" PRIu64
            " cells at each coupled step (each panel autoscaled)' margins 0.1,0.98,0.09,0.9 "
            "spacing 0.12,0.12\n",
            p->ny, p->nx);
    for (k = 0; k < 2; k++)
        fprintf(f,
                "set title 'mean of %s'\n"
                "set ylabel '%s (dimensionless)'\n"
                "plot 'stats.csv' using 2:%d with linespoints ls 1 lc rgb '%s'\n",
                var[k].name, var[k].name, var[k].mean, var[k].colour);
    fprintf(f, "set xlabel 'simulated time t'\n");
    for (k = 0; k < 2; k++)
        fprintf(f,
                "set title 'min (lower line) and max (upper line) of %s'\n"
                "set ylabel '%s (dimensionless)'\n"
                "plot 'stats.csv' using 2:%d:%d with filledcurves fs transparent solid 0.2 "
                "noborder lc rgb '%s', '' using 2:%d with linespoints ls 1 lc rgb '%s', '' "
                "using 2:%d with linespoints ls 1 lc rgb '%s'\n",
                var[k].name, var[k].name, var[k].min, var[k].max, var[k].colour, var[k].max,
                var[k].colour, var[k].min, var[k].colour);
    fprintf(f, "unset multiplot\n");
}

/* V_hist.png: one box per step and bin, from stats.csv; the bins' edges from the histogram's
 * range (fields.h5: the attribute range of /stats/v_hist), V shown up to the highest bin with a
 * count; counts on a log scale, an empty bin left blank. */
static void gp_v_hist(FILE *f, const plot_t *p)
{
    const double bw = (GS_HIST_HI - GS_HIST_LO) / p->bins;
    const double dt = p->nsteps > 1 ? (p->t_last - p->t_first) / (double) (p->nsteps - 1) : 1.0;
    const double top = GS_HIST_LO + (p->top + 1) * bw;
    /* each box overlaps its neighbours by about a pixel (of 600 x 360): antialiased edges that
     * meet would leave seams */
    const double ox = (p->t_last - p->t_first + dt) / 600, oy = (top - GS_HIST_LO) / 360;
    char above[96] = "";

    if (p->top + 1 < p->bins)
        snprintf(above, sizeof(above), "; none above %g", top);
    fprintf(f,
            "reset\n"
            "set terminal pngcairo size 800,480 font ',10'\n"
            "set output 'V_hist.png'\n"
            "set datafile separator ','\n"
            "set datafile columnheaders\n"
            "%s"
            "set logscale cb\n"
            "set cbrange [1:%" PRIu64 "]\n"
            "set format cb '10^{%%T}'\n"
            "set cblabel 'cells in the bin (log scale; blank: none)' offset 1,0\n"
            "set xrange [%.17g:%.17g]\n"
            "set yrange [%.17g:%.17g]\n"
            "set xlabel 'simulated time t'\n"
            "set ylabel 'V (dimensionless)'\n"
            "set title \"Gray-Scott: histogram of V over time\\n%" PRIu64
            " cells per step, %d bins over [%g, %g]%s\"\n"
            "set tics out nomirror\n"
            "unset key\n"
            "plot for [b=0:%d] 'stats.csv' using 2:(%.17g + (b + 0.5) * %.17g):(%.17g):(%.17g):"
            "(column(9 + b) > 0 ? column(9 + b) : NaN) with boxxyerror fs solid 1.0 noborder "
            "lc palette\n",
            gp_viridis, p->hmax > 1 ? p->hmax : 10, p->t_first - dt / 2, p->t_last + dt / 2,
            GS_HIST_LO, top, p->ny * p->nx, p->bins, GS_HIST_LO, GS_HIST_HI, above, p->bins - 1,
            GS_HIST_LO, bw, dt / 2 + ox, bw / 2 + oy);
}

/* n doubles to a new file at path: 0, or -1 with errno set. */
static int write_doubles(const char *path, const double *a, size_t n)
{
    FILE *f = fopen(path, "wb");
    int e;
    if (!f)
        return -1;
    if (fwrite(a, sizeof(double), n, f) != n) {
        e = errno;
        fclose(f);
        errno = e;
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* The figures, with gnuplot: V_steps.png from the panels (np x cy x cx), stats.png and
 * V_hist.png from stats.csv, particles.png from the panels and the positions. Its script and the
 * panels' data go to GS_CHECK_SUBDIR. */
int gs_render_figures(const plot_t *p, const double *panels, const double *pos, char *err,
                      size_t errlen)
{
    const size_t n = (size_t) (p->npanels * p->cy * p->cx), npos = (size_t) p->npanels * 2 * p->np;
    char path[4096], *absdir = NULL;
    FILE *f = NULL;
    int rc = -1;

    snprintf(path, sizeof(path), "%s/" GS_CHECK_SUBDIR, p->dir);
    if (gs_mkdir_p(path) != 0) {
        snprintf(err, errlen, "creating %s: %s", path, strerror(errno));
        goto out;
    }
    snprintf(path, sizeof(path), "%s/" GS_CHECK_SUBDIR "/V_steps.bin", p->dir);
    if (write_doubles(path, panels, n) != 0)
        goto io_error;
    snprintf(path, sizeof(path), "%s/" GS_CHECK_SUBDIR "/particles.bin", p->dir);
    if (p->np && write_doubles(path, pos, npos) != 0)
        goto io_error;
    snprintf(path, sizeof(path), "%s/" GS_CHECK_SUBDIR "/plot.gp", p->dir);
    if (!(f = fopen(path, "w")))
        goto io_error;
    /* gnuplot changes into the output directory: the script runs from anywhere */
    absdir = realpath(p->dir, NULL);
    fprintf(f,
            "# written by gray-scott-analysis: gnuplot %s renders V_steps.png, stats.png, "
            "V_hist.png%s\ncd ",
            path, p->particles ? " and particles.png" : "");
    gp_string(f, absdir ? absdir : p->dir);
    fputc('\n', f);
    gp_v_steps(f, p);
    gp_stats(f, p);
    gp_v_hist(f, p);
    if (p->particles)
        gp_particles(f, p);
    if (fclose(f) != 0) {
        f = NULL;
        goto io_error;
    }
    f = NULL;
    rc = run_gnuplot(path, err, errlen);
    goto out;
io_error:
    snprintf(err, errlen, "writing %s: %s", path, strerror(errno));
out:
    if (f)
        fclose(f);
    free(absdir);
    return rc;
}
