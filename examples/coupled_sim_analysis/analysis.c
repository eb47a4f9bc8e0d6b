/* SPDX-License-Identifier: BSD-3-Clause */
/* gray-scott-analysis: the consumer of the coupled example (docs/example.md). Each of its q
 * ranks declares its share of rows of U and V (xfer_select: it receives those rows only),
 * begins each coupled step with xfer_step_begin (the end of the stream is a status) and gets
 * its rows and the simulated time; together they compute the statistics the simulation computes on
 * its own data (min, max, mean of U and V, a histogram of V over [0, 1]) and write them to
 * stats.csv. With the HDF5 adapter, the fields and statistics also go to fields.h5 (collective
 * parallel writes, one dataset per variable with a leading step dimension, or one group per step).
 * At the end rank 0 renders, with gnuplot, V at up to six steps (V_steps.png: each rank keeps
 * a bounded sample of its rows, see snaps_t), the statistics over time (stats.png) and the
 * histogram of V over time (V_hist.png), and reports the bytes moved per step and the effective
 * throughput. The gnuplot script and its data go to the output directory's .check/, with the
 * simulation's reference statistics: the user's outputs stay apart.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <inttypes.h>
#include <mpi.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <xfer/xfer.h>
#ifdef GS_WITH_HDF5
#include <xfer/adapter.h>
#endif

#include "common/cli.h"
#include "gs_common.h"

extern char **environ;

#define GS_PANELS       6   /* panels of V_steps.png */
#define GS_SNAP_SLOTS   12  /* steps of V each rank keeps for them (see snaps_t) */
#define GS_PANEL_MAX    256 /* a panel's longer side in cells: larger grids are shown as means */
#define GS_MARKED_STEPS 50  /* stats.png marks each step with a point up to so many steps */

typedef struct opts {
    int bins;
    int hdf5;   /* write fields.h5 (when built with the HDF5 adapter) */
    int plots;  /* render the PNGs */
    int layout; /* XFER_ADAPTER_STEP_DIM or XFER_ADAPTER_GROUP_PER_STEP */
    const char *output, *channel, *config, *component;
} opts_t;

#ifdef GS_WITH_HDF5
static void *h5; /* the output file while it is open: abort() keeps its completed steps */
#endif

static void cleanup_on_failure(void)
{
#ifdef GS_WITH_HDF5
    if (h5)
        xfer_adapter_hdf5()->abort(&h5);
#endif
}

#ifdef GS_WITH_HDF5
#define HCHECK(call)                                                                               \
    do {                                                                                           \
        xfer_status_t st_ = (call);                                                                \
        if (st_ != XFER_SUCCESS)                                                                   \
            FAIL("%s: %s: %s", #call, xfer_status_name(st_), xfer_adapter_error());                \
    } while (0)
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gray-scott-analysis [--bins B] [--output DIR] [--layout step|group]\n"
            "                           [--no-hdf5] [--no-plots] [--channel NAME]\n"
            "                           [--config FILE] [--component NAME]\n"
            "  B histogram bins of V over [0, 1] (32, as the simulation's); DIR (" GS_DEFAULT_OUTPUT
            ")\n"
            "  receives stats.csv, fields.h5 (+ fields.xmf), V_steps.png, stats.png and\n"
            "  V_hist.png (and .check/, the figures' gnuplot script and data). fields.h5 layout:\n"
            "  one dataset per variable with a step dimension (step, default) or a group\n"
            "  per step (group).\n");
}

/* The options; --help, --version and usage errors exit. */
static void parse_args(int argc, char **argv, opts_t *o)
{
    enum {
        O_BINS = 256,
        O_NOHDF5,
        O_NOPLOTS,
        O_LAYOUT,
        O_OUTPUT,
        O_CHANNEL,
        O_CONFIG,
        O_COMPONENT,
        O_VERSION
    };
    static const struct option longopts[] = {{"bins", required_argument, NULL, O_BINS},
                                             {"no-hdf5", no_argument, NULL, O_NOHDF5},
                                             {"no-plots", no_argument, NULL, O_NOPLOTS},
                                             {"layout", required_argument, NULL, O_LAYOUT},
                                             {"output", required_argument, NULL, O_OUTPUT},
                                             {"channel", required_argument, NULL, O_CHANNEL},
                                             {"config", required_argument, NULL, O_CONFIG},
                                             {"component", required_argument, NULL, O_COMPONENT},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, O_VERSION},
                                             {NULL, 0, NULL, 0}};
    const char *prog = "gray-scott-analysis";
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, XFER_CLI_OPTS "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            exit(0);
        case O_VERSION:
            xfer_cli_version(prog);
            exit(0);
        case O_BINS:
            o->bins = (int) xfer_cli_long(prog, "--bins", optarg, 1, 1000000);
            break;
        case O_NOHDF5:
            o->hdf5 = 0;
            break;
        case O_NOPLOTS:
            o->plots = 0;
            break;
        case O_LAYOUT:
            if (strcmp(optarg, "step") == 0)
                o->layout = 1;
            else if (strcmp(optarg, "group") == 0)
                o->layout = 0;
            else
                xfer_cli_usage_error(prog, "--layout: expected step or group, got \"%s\"", optarg);
            break;
        case O_OUTPUT:
            o->output = optarg;
            break;
        case O_CHANNEL:
            o->channel = optarg;
            break;
        case O_CONFIG:
            o->config = optarg;
            break;
        case O_COMPONENT:
            o->component = optarg;
            break;
        default:
            xfer_cli_bad_option(prog, c, argv);
        }
    }
    if (optind < argc)
        xfer_cli_usage_error(prog, "unexpected argument \"%s\"", argv[optind]);
}

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

/* V for the small multiple (V_steps.png). The analysis does not know how many steps will come,
 * and keeping every step's rows would grow without bound, so each rank keeps an evenly spaced
 * sample of its rows of V: every stride-th step in GS_SNAP_SLOTS slots; when they are full every
 * other one goes and the stride doubles (once thinned, 7 to 12 steps, the stride a power of two),
 * and one more slot holds the latest step. The rows are kept as block sums on a panel of at most
 * GS_PANEL_MAX x GS_PANEL_MAX cells (blocks of f x f cells; f = 1 up to 256 x 256), so a rank
 * holds GS_SNAP_SLOTS + 1 copies of its share of a panel, whatever the grid and the step count.
 * At the end the GS_PANELS sampled steps nearest to evenly spaced targets, the first and the
 * last step among them, are summed on rank 0 (MPI_Reduce) and divided into block means.
 * analysis.py keeps and picks the same steps. */
typedef struct snaps {
    uint64_t f, cy, cx; /* the panel: cy x cx blocks of f x f cells */
    uint64_t c0, nrows; /* this rank's rows of the panel: c0 .. c0 + nrows - 1 */
    uint64_t stride, nkept, nseen;
    uint64_t seen[GS_SNAP_SLOTS + 1], step[GS_SNAP_SLOTS + 1]; /* arrival index, channel step */
    double time[GS_SNAP_SLOTS + 1];
    double *sums; /* GS_SNAP_SLOTS + 1 slots of nrows x cx block sums; the last: the latest step */
} snaps_t;

static int snaps_init(snaps_t *s, uint64_t ny, uint64_t nx, uint64_t r0, uint64_t nr)
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

static double *snaps_slot(const snaps_t *s, uint64_t k)
{
    return s->sums + k * s->nrows * s->cx;
}

static void snaps_copy(snaps_t *s, uint64_t to, uint64_t from)
{
    memmove(snaps_slot(s, to), snaps_slot(s, from), s->nrows * s->cx * sizeof(double));
    s->seen[to] = s->seen[from];
    s->step[to] = s->step[from];
    s->time[to] = s->time[from];
}

/* Add this rank's rows r0 .. r0 + nr - 1 of V (nx columns) of the next step. */
static void snaps_add(snaps_t *s, uint64_t step, double time, const double *v, uint64_t r0,
                      uint64_t nr, uint64_t nx)
{
    double *latest = snaps_slot(s, GS_SNAP_SLOTS);
    uint64_t i, j, k;

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
static int snaps_pick(const snaps_t *s, uint64_t *pick)
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
 * cx; rank 0 only). Collective over comm. Returns an MPI code, or -1 when out of memory. */
static int snaps_gather(const snaps_t *s, const uint64_t *pick, int np, uint64_t ny, uint64_t nx,
                        MPI_Comm comm, double *out)
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

static void snaps_free(snaps_t *s)
{
    free(s->sums);
    s->sums = NULL;
}

/* What the figures show, on rank 0 at the end. */
typedef struct plot {
    const char *dir;    /* the output directory */
    uint64_t ny, nx, f; /* the grid; the panels show means of f x f cells */
    uint64_t cy, cx;    /* the panels' shape */
    int npanels;
    uint64_t pstep[GS_PANELS]; /* the panels' steps and simulated times */
    double ptime[GS_PANELS];
    double vmax; /* the top of the common colour scale */
    uint64_t nsteps;
    double t_first, t_last;
    int bins, top; /* histogram bins; the highest one with a count in any step */
    uint64_t hmax; /* the largest count */
} plot_t;

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

/* V_steps.png: the panels, one colour bar on the right. Margins in pixels: 20 left, 100 right
 * (the colour bar), 70 top (the titles), 10 bottom, 20 and 40 between panels. */
static void gp_v_steps(FILE *f, const plot_t *p)
{
    const uint64_t bytes = p->cy * p->cx * sizeof(double);
    char shown[128] = "";
    double pw, ph, w, h;
    int j, cols, rows;

    panel_grid(p, &cols, &rows, &pw, &ph);
    w = 20 + cols * pw + (cols - 1) * 20 + 100;
    h = 70 + rows * ph + (rows - 1) * 40 + 10;
    h = h < 300 ? 300 : h; /* room for the colour bar; the panels keep their aspect */

    if (p->f > 1)
        snprintf(shown, sizeof(shown), ", shown as means of %" PRIu64 " x %" PRIu64 " blocks", p->f,
                 p->f);
    fprintf(f,
            "reset\n"
            "set terminal pngcairo size %.0f,%.0f font ',10'\n"
            "set output 'V_steps.png'\n"
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
            "set multiplot layout %d,%d title 'Gray-Scott V at %d of %" PRIu64
            " coupled steps (%" PRIu64 " x %" PRIu64 " cells%s; one colour scale)' "
            "margins %.4f,%.4f,%.4f,%.4f spacing %.4f,%.4f\n",
            w, h, gp_plasma, p->vmax, p->cx - 1, p->cy - 1, rows, cols, p->npanels, p->nsteps,
            p->ny, p->nx, shown, 20 / w, 1 - 100 / w, 10 / h, 1 - 70 / h, 20 / w, 40 / h);
    for (j = 0; j < p->npanels; j++) {
        if (j == p->npanels - 1)
            fprintf(f, "set colorbox user origin screen %.4f,%.4f size screen %.4f,%.4f\n",
                    1 - 80 / w, 10 / h, 20 / w, 1 - 80 / h);
        fprintf(f,
                "set title 't = %g (step %" PRIu64 ")'\n"
                "plot '" GS_CHECK_SUBDIR "/V_steps.bin' binary array=(%" PRIu64 ",%" PRIu64
                ") format='%%float64' skip=%" PRIu64 " with image\n",
                p->ptime[j], p->pstep[j], p->cx, p->cy, (uint64_t) j * bytes);
    }
    fprintf(f, "unset multiplot\n");
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

/* The figures, with gnuplot: V_steps.png from the panels (np x cy x cx), stats.png and
 * V_hist.png from stats.csv. Its script and the panels' data go to GS_CHECK_SUBDIR. */
static int render(const plot_t *p, const double *panels, char *err, size_t errlen)
{
    const size_t n = (size_t) (p->npanels * p->cy * p->cx);
    char path[4096], *absdir = NULL;
    FILE *f = NULL;
    int rc = -1;

    snprintf(path, sizeof(path), "%s/" GS_CHECK_SUBDIR, p->dir);
    if (gs_mkdir_p(path) != 0) {
        snprintf(err, errlen, "creating %s: %s", path, strerror(errno));
        goto out;
    }
    snprintf(path, sizeof(path), "%s/" GS_CHECK_SUBDIR "/V_steps.bin", p->dir);
    if (!(f = fopen(path, "wb")) || fwrite(panels, sizeof(double), n, f) != n)
        goto io_error;
    if (fclose(f) != 0) {
        f = NULL;
        goto io_error;
    }
    snprintf(path, sizeof(path), "%s/" GS_CHECK_SUBDIR "/plot.gp", p->dir);
    if (!(f = fopen(path, "w")))
        goto io_error;
    /* gnuplot changes into the output directory: the script runs from anywhere */
    absdir = realpath(p->dir, NULL);
    fprintf(f,
            "# written by gray-scott-analysis: gnuplot %s renders V_steps.png, stats.png and "
            "V_hist.png\ncd ",
            path);
    gp_string(f, absdir ? absdir : p->dir);
    fputc('\n', f);
    gp_v_steps(f, p);
    gp_stats(f, p);
    gp_v_hist(f, p);
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

#ifdef GS_WITH_HDF5
/* The variables of fields.h5. */
typedef struct h5vars {
    xfer_adapter_var_t u, v, summary, hist, time;
    xfer_adapter_attr_t cols, range;
    double range_v[2];
} h5vars_t;

static void h5vars_init(h5vars_t *w, uint64_t ny, uint64_t nx, int bins)
{
    static const char columns[] = "u_min,u_max,u_mean,v_min,v_max,v_mean";
    memset(w, 0, sizeof(*w));
    snprintf(w->u.name, sizeof(w->u.name), "/fields/U");
    snprintf(w->v.name, sizeof(w->v.name), "/fields/V");
    w->u.type = w->v.type = XFER_TYPE_FLOAT64;
    w->u.ndims = w->v.ndims = 2;
    w->u.dims[0] = w->v.dims[0] = ny;
    w->u.dims[1] = w->v.dims[1] = nx;
    /* named axes: xarray and ParaView see (time, y, x) */
    snprintf(w->u.dim_names[0], sizeof(w->u.dim_names[0]), "y");
    snprintf(w->u.dim_names[1], sizeof(w->u.dim_names[1]), "x");
    memcpy(w->v.dim_names, w->u.dim_names, sizeof(w->v.dim_names));

    snprintf(w->cols.name, sizeof(w->cols.name), "columns");
    w->cols.is_text = 1;
    w->cols.count = sizeof(columns) - 1;
    w->cols.data = (void *) columns;
    snprintf(w->summary.name, sizeof(w->summary.name), "/stats/summary");
    w->summary.type = XFER_TYPE_FLOAT64;
    w->summary.ndims = 1;
    w->summary.dims[0] = 6;
    snprintf(w->summary.dim_names[0], sizeof(w->summary.dim_names[0]), "statistic");
    w->summary.nattrs = 1;
    w->summary.attrs = &w->cols;

    w->range_v[0] = GS_HIST_LO;
    w->range_v[1] = GS_HIST_HI;
    snprintf(w->range.name, sizeof(w->range.name), "range");
    w->range.type = XFER_TYPE_FLOAT64;
    w->range.count = 2;
    w->range.data = w->range_v;
    snprintf(w->hist.name, sizeof(w->hist.name), "/stats/v_hist");
    w->hist.type = XFER_TYPE_UINT64;
    w->hist.ndims = 1;
    w->hist.dims[0] = (uint64_t) bins;
    snprintf(w->hist.dim_names[0], sizeof(w->hist.dim_names[0]), "bin");
    w->hist.nattrs = 1;
    w->hist.attrs = &w->range;

    snprintf(w->time.name, sizeof(w->time.name), "/stats/time");
    w->time.type = XFER_TYPE_FLOAT64;
    w->time.ndims = 1;
    w->time.dims[0] = 1;
}

/* One step: every rank its rows of U and V, rank 0 the statistics (collective). */
static void h5_write_step(const h5vars_t *w, uint64_t step, uint64_t r0, uint64_t nr,
                          const double *u, const double *v, const gs_stats_t *s, double time)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_hdf5();
    const int root = gs_rank == 0;
    const double n = s->cells ? (double) s->cells : 1.0;
    double summary[6] = {s->umin, s->umax, s->usum / n, s->vmin, s->vmax, s->vsum / n};
    uint64_t start[2] = {r0, 0}, count[2] = {nr, w->u.dims[1]}, z = 0, c6 = 6, cb = w->hist.dims[0],
             c1 = 1;

    if (ops->set_time) /* the file's time coordinate: the simulated time */
        HCHECK(ops->set_time(h5, step, time));
    HCHECK(ops->write(h5, step, &w->u, start, count, u));
    HCHECK(ops->write(h5, step, &w->v, start, count, v));
    HCHECK(ops->write(h5, step, &w->summary, &z, root ? &c6 : &z, summary));
    HCHECK(ops->write(h5, step, &w->hist, &z, root ? &cb : &z, s->hist));
    HCHECK(ops->write(h5, step, &w->time, &z, root ? &c1 : &z, &time));
    HCHECK(ops->end_step(h5, step));
}
#endif

int main(int argc, char **argv)
{
    gs_program = "gray-scott-analysis";
    gs_on_failure = cleanup_on_failure;
    opts_t o = {.bins = GS_DEFAULT_BINS,
                .hdf5 = 1,
                .plots = 1,
                .layout = 1,
                .output = GS_DEFAULT_OUTPUT,
                .channel = GS_DEFAULT_CHANNEL};
    const xfer_config_t *cfg;
    xfer_channel_t *ch;
    xfer_t *x = NULL;
    MPI_Comm comm;
    gs_stats_t stats;
    snaps_t snaps = {0};
    plot_t plot = {0};
    uint64_t ny, nx, r0, nr, step = 0, start[2], count[2], pick[GS_PANELS];
    size_t bytes;
    double *u, *v, *panels = NULL, time = 0, t_prev = 0, t_wait = 0, t0, t_now;
    double gap_sum = 0, gap_min = 0, gap_max = 0;
    char err[4608], path[4096], h5path[4096] = "";
    FILE *csv = NULL;
    int provided = MPI_THREAD_SINGLE;
    int comp, csize, wrank, k = 0;
#ifdef GS_WITH_HDF5
    h5vars_t hv;
#endif

    parse_args(argc, argv, &o);
    /* MPI_THREAD_MULTIPLE when the library has it: libxfer's progress thread then moves each
     * step while this rank computes (progress: auto; docs/runtime.md, Progress) */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    gs_rank = wrank;
    XCHECK(xfer_init(o.config, o.component, MPI_COMM_WORLD, &x));
    XCHECK(xfer_comm(x, &comm));
    XCHECK(xfer_config_of(x, &cfg, &comp));
    MPI_Comm_rank(comm, &gs_rank);
    MPI_Comm_size(comm, &csize);
    if (gs_fields_shape(cfg, o.channel, &ny, &nx, err, sizeof(err)) != 0)
        FAIL("%s", err);
    XCHECK(xfer_channel_open(x, o.channel, &ch));

    /* this rank's rows: near-equal slabs of the slowest dimension */
    r0 = ny * (uint64_t) gs_rank / (uint64_t) csize;
    nr = ny * (uint64_t) (gs_rank + 1) / (uint64_t) csize - r0;
    bytes = (size_t) (nr * nx) * sizeof(double);
    u = malloc(bytes + 1);
    v = malloc(bytes + 1);
    if (!u || !v || gs_stats_init(&stats, o.bins) != 0 ||
        (o.plots && snaps_init(&snaps, ny, nx, r0, nr) != 0))
        FAIL("out of memory for %" PRIu64 " rows", nr);

    /* rank 0 creates the directory and the CSV; everyone stops if it cannot */
    snprintf(path, sizeof(path), "%s/stats.csv", o.output);
    if (gs_rank == 0)
        k = gs_mkdir_p(o.output) != 0 || !(csv = fopen(path, "w")) ? errno : 0;
    MCHECK(MPI_Bcast(&k, 1, MPI_INT, 0, comm));
    if (k)
        FAIL("cannot write %s: %s", path, strerror(k));
    if (gs_rank == 0)
        gs_stats_csv_header(csv, o.bins);
#ifdef GS_WITH_HDF5
    if (o.hdf5) {
        xfer_adapter_wopts_t wo;
        memset(&wo, 0, sizeof(wo));
        wo.layout = o.layout ? XFER_ADAPTER_STEP_DIM : XFER_ADAPTER_GROUP_PER_STEP;
        wo.chunked = 1;
        snprintf(h5path, sizeof(h5path), "%s/fields.h5", o.output);
        h5vars_init(&hv, ny, nx, o.bins);
        HCHECK(xfer_adapter_hdf5()->create(h5path, comm, &wo, &h5));
    }
#endif

    /* M x N: this rank receives its rows of U and V only (and the time) */
    start[0] = r0;
    start[1] = 0;
    count[0] = nr;
    count[1] = nx;
    XCHECK(xfer_select(ch, "U", start, count));
    XCHECK(xfer_select(ch, "V", start, count));
    for (;;) {
        xfer_dataset_desc_t d;
        xfer_step_status_t ss;
        t0 = MPI_Wtime();
        /* wait as long as the simulation lives; the end of the stream is a status */
        XCHECK(xfer_step_begin(ch, -1, &ss));
        if (ss == XFER_STEP_END_OF_STREAM)
            break;
        XCHECK(xfer_get(ch, "U", u, bytes, &d));
        XCHECK(xfer_get(ch, "V", v, bytes, &d));
        XCHECK(xfer_get(ch, "time", &time, sizeof(time), NULL));
        t_now = MPI_Wtime();
        t_wait += t_now - t0;
        if (step > 0) {
            const double gap = t_now - t_prev;
            gap_sum += gap;
            gap_min = step == 1 || gap < gap_min ? gap : gap_min;
            gap_max = step == 1 || gap > gap_max ? gap : gap_max;
        }
        t_prev = t_now;

        gs_stats_reset(&stats);
        gs_stats_add(&stats, u, v, (size_t) nr, (size_t) nx, (size_t) nx);
        MCHECK(gs_stats_reduce(&stats, comm));
        if (o.plots)
            snaps_add(&snaps, d.step, time, v, r0, nr, nx);
        if (gs_rank == 0) {
            for (k = 0; k < o.bins; k++) { /* the histogram's scales */
                plot.hmax = stats.hist[k] > plot.hmax ? stats.hist[k] : plot.hmax;
                plot.top = stats.hist[k] > 0 && k > plot.top ? k : plot.top;
            }
            plot.t_first = step == 0 ? time : plot.t_first;
            gs_stats_csv_row(csv, d.step, time, &stats);
            if (fflush(csv) != 0)
                FAIL("writing %s: %s", path, strerror(errno));
            printf("gray-scott-analysis: step %" PRIu64 " (t = %g): U in [%.4f, %.4f] mean "
                   "%.4f, V in [%.4f, %.4f] mean %.4f\n",
                   d.step, time, stats.umin, stats.umax, stats.usum / (double) stats.cells,
                   stats.vmin, stats.vmax, stats.vsum / (double) stats.cells);
            fflush(stdout);
        }
#ifdef GS_WITH_HDF5
        if (h5)
            h5_write_step(&hv, d.step, r0, nr, u, v, &stats, time);
#endif
        XCHECK(xfer_step_end(ch));
        step++;
    }
    if (step == 0)
        FAIL("the simulation ended the channel without sending a step");
#ifdef GS_WITH_HDF5
    if (h5)
        HCHECK(xfer_adapter_hdf5()->commit(&h5));
#endif

    /* the panels of V_steps.png on rank 0 (collective) */
    if (o.plots) {
        plot.npanels = snaps_pick(&snaps, pick);
        if (gs_rank == 0 &&
            !(panels = malloc((size_t) plot.npanels * snaps.cy * snaps.cx * sizeof(double))))
            FAIL("out of memory for the figures");
        k = snaps_gather(&snaps, pick, plot.npanels, ny, nx, comm, panels);
        if (k == -1)
            FAIL("out of memory for the figures");
        MCHECK(k);
    }
    XCHECK(xfer_finalize(&x));

    if (gs_rank == 0) {
        /* each rank receives its rows of U and V (M x N selections) and the time */
        const double per_step = (double) (2 * ny * nx + 1) * sizeof(double);
        const double delivered = (double) (2 * ny * nx + (uint64_t) csize) * sizeof(double);
        const double mib = 1024.0 * 1024.0;
        if (fclose(csv) != 0)
            FAIL("writing %s: %s", path, strerror(errno));
        if (o.plots) {
            plot.dir = o.output;
            plot.ny = ny;
            plot.nx = nx;
            plot.f = snaps.f;
            plot.cy = snaps.cy;
            plot.cx = snaps.cx;
            plot.nsteps = step;
            plot.t_last = time;
            plot.bins = o.bins;
            plot.vmax = 0;
            for (k = 0; k < plot.npanels; k++) {
                const double *pv = panels + (size_t) k * snaps.cy * snaps.cx;
                size_t i;
                plot.pstep[k] = snaps.step[pick[k]];
                plot.ptime[k] = snaps.time[pick[k]];
                for (i = 0; i < snaps.cy * snaps.cx; i++)
                    plot.vmax = pv[i] > plot.vmax ? pv[i] : plot.vmax;
            }
            if (!(plot.vmax > 0))
                plot.vmax = 1;
            if (render(&plot, panels, err, sizeof(err)) != 0)
                FAIL("%s", err);
        }
        printf("gray-scott-analysis: %" PRIu64 " steps received on %d ranks; per step %.3f MiB "
               "(U, V, time), %.3f MiB delivered (each rank receives its rows)\n",
               step, csize, per_step / mib, delivered / mib);
        if (step > 1 && gap_sum > 0)
            printf("gray-scott-analysis: steps arrived every %.3f s on average (min %.3f, max "
                   "%.3f): effective throughput %.2f MiB/s (%.2f MiB/s delivered); rank 0 "
                   "spent %.3f s waiting for steps, the first one included\n",
                   gap_sum / (double) (step - 1), gap_min, gap_max,
                   per_step * (double) (step - 1) / gap_sum / mib,
                   delivered * (double) (step - 1) / gap_sum / mib, t_wait);
        printf("gray-scott-analysis: outputs in %s: stats.csv%s%s\n", o.output,
               h5path[0] ? ", fields.h5, fields.xmf" : "",
               o.plots ? ", V_steps.png, stats.png, V_hist.png" : "");
        fflush(stdout);
    }
    gs_stats_free(&stats);
    snaps_free(&snaps);
    free(u);
    free(v);
    free(panels);
    MPI_Finalize();
    return 0;
}
