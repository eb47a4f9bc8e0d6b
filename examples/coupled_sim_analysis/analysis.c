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
 * simulation's reference statistics: the user's outputs stay apart. The figures' code is in
 * gs_figures.c.
 *
 * When the workflow file declares the joined record dataset `particles`, each rank also receives
 * its share of every step's tracer particles (selection: rows) and the ranks check them together
 * (gs_particles_check: as many as the simulation seeded, every id exactly once, inside the grid;
 * a failed check ends the run with status 1); their count, means and each simulation rank's
 * rows go to particles.csv and the particles over V to particles.png.
 */
#include <errno.h>
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/xfer.h>
#ifdef GS_WITH_HDF5
#include <xfer/adapter.h>
#endif

#include "common/cli.h"
#include "gs_common.h"
#include "gs_figures.h"
#include "gs_particles.h"

typedef struct opts {
    int bins;
    int hdf5;   /* write fields.h5 (when built with the HDF5 adapter) */
    int plots;  /* render the PNGs */
    int layout; /* XFER_ADAPTER_STEP_DIM or XFER_ADAPTER_GROUP_PER_STEP */
    const char *output, *channel, *config, *component;
} opts_t;

#ifdef GS_WITH_HDF5
static void *h5;  /* the output file while it is open: abort() keeps its completed steps */
static void *ph5; /* particles.h5 likewise: a group per step (their number changes) */
#endif

static void cleanup_on_failure(void)
{
#ifdef GS_WITH_HDF5
    if (h5)
        xfer_adapter_hdf5()->abort(&h5);
    if (ph5)
        xfer_adapter_hdf5()->abort(&ph5);
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
            "  V_hist.png (and .check/, the figures' gnuplot script and data); with the dataset\n"
            "  particles, particles.csv, particles.png and particles.h5 (a group per step,\n"
            "  + particles.xmf).\n"
            "  fields.h5 layout: one dataset per variable with a step dimension (step,\n"
            "  default) or a group per step (group).\n");
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

#ifdef GS_WITH_HDF5
/* One step of particles.h5: /step_NNNNNN/particles, the step's particles in simulation-rank
 * order, a compound of the record's fields; every rank its share (collective). As a joined
 * dataset, the adapter also writes numeric copies of its fields for particles.xmf (pos the
 * geometry, id and v the attributes: docs/adapters.md, "XDMF for joined datasets"). */
static void h5_write_particles(uint64_t step, const gs_particle_t *p, uint64_t first, uint64_t n,
                               uint64_t total, double time)
{
    const xfer_adapter_ops_t *ops = xfer_adapter_hdf5();
    xfer_record_field_t f[3];
    xfer_record_t rec;
    xfer_adapter_var_t var;
    memset(&var, 0, sizeof(var));
    gs_particle_record(&rec, f);
    snprintf(var.name, sizeof(var.name), "/particles");
    var.type = XFER_TYPE_RECORD;
    var.ndims = 1;
    var.dims[0] = total;
    var.record = &rec;
    var.joined = 1; /* their number changes every step */
    if (ops->set_time)
        HCHECK(ops->set_time(ph5, step, time));
    HCHECK(ops->write(ph5, step, &var, &first, &n, p));
    HCHECK(ops->end_step(ph5, step));
}
#endif

/* This rank's share of the particles of the current step, and what they hold. */
typedef struct precv {
    gs_particle_t *p;
    size_t n, cap;
    gs_pstats_t ps; /* after get_particles: the step's statistics on rank 0, rows on all */
    uint64_t seeded;
    uint64_t total, first; /* the step's particles; where this rank's share starts */
} precv_t;

/* Receive this rank's share of the current step's particles (selection: rows), check them with
 * the other ranks (collective over comm; a failed check ends the run on every rank) and count
 * them into r->ps (on rank 0). */
static void get_particles(xfer_channel_t *ch, precv_t *r, uint64_t ny, uint64_t nx, MPI_Comm comm)
{
    xfer_dataset_desc_t d;
    xfer_type_t type;
    size_t count;
    int64_t seeded;
    int nsenders, rc;
    char err[512];

    /* dims[0]: the step's particles, all simulation ranks' together; count[0]: this rank's */
    XCHECK(xfer_get_shape(ch, GS_PARTICLES_DATASET, &d));
    if (d.count[0] > r->cap) {
        gs_particle_t *q = realloc(r->p, d.count[0] * sizeof(*q));
        if (!q)
            FAIL("out of memory for %" PRIu64 " particles", d.count[0]);
        r->p = q;
        r->cap = d.count[0];
    }
    XCHECK(xfer_get(ch, GS_PARTICLES_DATASET, r->p, r->cap * sizeof(*r->p), &d));
    r->n = d.count[0];
    r->total = d.dims[0];
    r->first = d.start[0];
    /* each simulation rank's particles: its rows of the step, in rank order */
    if (!r->ps.rows) {
        XCHECK(xfer_get_rows(ch, GS_PARTICLES_DATASET, NULL, 0, &nsenders));
        if (gs_pstats_init(&r->ps, nsenders) != 0)
            FAIL("out of memory");
    }
    XCHECK(xfer_get_rows(ch, GS_PARTICLES_DATASET, r->ps.rows, r->ps.nsenders, &nsenders));
    if (nsenders != r->ps.nsenders)
        FAIL("%d simulation ranks put particles, %d before", nsenders, r->ps.nsenders);
    XCHECK(xfer_get_attr(ch, GS_PARTICLES_ATTR, &type, &count, NULL, 0));
    if (type != XFER_TYPE_INT64 || count != 1)
        FAIL("step attribute " GS_PARTICLES_ATTR ": %zu values of %s, expected one int64", count,
             xfer_type_name(type));
    XCHECK(xfer_get_attr(ch, GS_PARTICLES_ATTR, NULL, NULL, &seeded, sizeof(seeded)));
    if (seeded < 0)
        FAIL("step attribute " GS_PARTICLES_ATTR " is %" PRId64, seeded);
    r->seeded = (uint64_t) seeded;
    rc = gs_particles_check(r->p, r->n, d.dims[0], r->ps.rows, r->ps.nsenders, r->seeded, ny, nx,
                            comm, err, sizeof(err));
    if (rc == -1)
        FAIL("particle check failed in step %" PRIu64 ": %s", d.step, err);
    MCHECK(rc);
    r->ps.count = 0;
    r->ps.xsum = r->ps.ysum = r->ps.vsum = 0.0;
    gs_pstats_add(&r->ps, r->p, r->n);
    MCHECK(gs_pstats_reduce(&r->ps, comm));
}

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
    precv_t parts = {0};
    uint64_t ny, nx, r0, nr, step = 0, start[2], count[2], pick[GS_PANELS];
    size_t bytes;
    double *u, *v, *panels = NULL, *ppos = NULL, time = 0, t_prev = 0, t_wait = 0, t0, t_now;
    double gap_sum = 0, gap_min = 0, gap_max = 0;
    char err[4608], path[4096], ppath[4096], h5path[4096] = "";
    FILE *csv = NULL, *pcsv = NULL;
    int provided = MPI_THREAD_SINGLE;
    int comp, csize, wrank, k = 0, particles;
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
    if ((particles = gs_particles_declared(cfg, o.channel, err, sizeof(err))) < 0)
        FAIL("%s", err);
    XCHECK(xfer_channel_open(x, o.channel, &ch));

    /* this rank's rows: near-equal slabs of the slowest dimension */
    r0 = ny * (uint64_t) gs_rank / (uint64_t) csize;
    nr = ny * (uint64_t) (gs_rank + 1) / (uint64_t) csize - r0;
    bytes = (size_t) (nr * nx) * sizeof(double);
    u = malloc(bytes + 1);
    v = malloc(bytes + 1);
    if (!u || !v || gs_stats_init(&stats, o.bins) != 0 ||
        (o.plots && gs_snaps_init(&snaps, ny, nx, r0, nr) != 0))
        FAIL("out of memory for %" PRIu64 " rows", nr);

    /* rank 0 creates the directory and the CSVs; everyone stops if it cannot */
    snprintf(path, sizeof(path), "%s/stats.csv", o.output);
    snprintf(ppath, sizeof(ppath), "%s/particles.csv", o.output);
    if (gs_rank == 0)
        k = gs_mkdir_p(o.output) != 0 || !(csv = fopen(path, "w")) ? errno : 0;
    if (gs_rank == 0 && !k && particles)
        k = !(pcsv = fopen(ppath, "w")) ? errno : 0;
    MCHECK(MPI_Bcast(&k, 1, MPI_INT, 0, comm));
    if (k)
        FAIL("cannot write %s: %s", csv ? ppath : path, strerror(k));
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
        if (particles) { /* their number changes every step: a group per step */
            char pp[4096];
            wo.layout = XFER_ADAPTER_GROUP_PER_STEP;
            snprintf(pp, sizeof(pp), "%s/particles.h5", o.output);
            HCHECK(xfer_adapter_hdf5()->create(pp, comm, &wo, &ph5));
        }
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
        if (particles)
            get_particles(ch, &parts, ny, nx, comm);
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
        if (o.plots && particles && step == 0 &&
            gs_snaps_particles(&snaps, parts.seeded < GS_PLOT_PARTICLES ? parts.seeded
                                                                        : GS_PLOT_PARTICLES) != 0)
            FAIL("out of memory for the figures");
        if (o.plots)
            gs_snaps_add(&snaps, d.step, time, v, r0, nr, nx, parts.p, parts.n);
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
                   "%.4f, V in [%.4f, %.4f] mean %.4f",
                   d.step, time, stats.umin, stats.umax, stats.usum / (double) stats.cells,
                   stats.vmin, stats.vmax, stats.vsum / (double) stats.cells);
            if (particles) {
                if (step == 0) /* its columns name each simulation rank: known now */
                    gs_pstats_csv_header(pcsv, parts.ps.nsenders);
                gs_pstats_csv_row(pcsv, d.step, time, &parts.ps);
                if (fflush(pcsv) != 0)
                    FAIL("writing %s: %s", ppath, strerror(errno));
                printf("; %" PRIu64 " particles checked, V at them %.4f on average", parts.ps.count,
                       parts.ps.vsum / (double) (parts.ps.count ? parts.ps.count : 1));
            }
            printf("\n");
            fflush(stdout);
        }
#ifdef GS_WITH_HDF5
        /* the files' steps are this run's, 0, 1, 2, ... (an analysis restarted into a running
         * workflow begins at a later channel step: the simulated time tells them apart) */
        if (h5)
            h5_write_step(&hv, step, r0, nr, u, v, &stats, time);
        if (ph5)
            h5_write_particles(step, parts.p, parts.first, parts.n, parts.total, time);
#endif
        XCHECK(xfer_step_end(ch));
        step++;
    }
    if (step == 0)
        FAIL("the simulation ended the channel without sending a step");
#ifdef GS_WITH_HDF5
    if (h5)
        HCHECK(xfer_adapter_hdf5()->commit(&h5));
    if (ph5)
        HCHECK(xfer_adapter_hdf5()->commit(&ph5));
#endif

    /* the panels of V_steps.png on rank 0 (collective) */
    if (o.plots) {
        plot.npanels = gs_snaps_pick(&snaps, pick);
        if (gs_rank == 0 &&
            (!(panels = malloc((size_t) plot.npanels * snaps.cy * snaps.cx * sizeof(double))) ||
             !(ppos = malloc(((size_t) plot.npanels * 2 * snaps.np + 1) * sizeof(double)))))
            FAIL("out of memory for the figures");
        k = gs_snaps_gather(&snaps, pick, plot.npanels, ny, nx, comm, panels, ppos);
        if (k == -1)
            FAIL("out of memory for the figures");
        MCHECK(k);
    }
    XCHECK(xfer_finalize(&x));

    if (gs_rank == 0) {
        /* each rank receives its rows of U and V (M x N selections), the time and its share of
         * the particles (those of the last step: their number is the same in every step) */
        const double pbytes = (double) (parts.seeded * sizeof(gs_particle_t));
        const double per_step = (double) (2 * ny * nx + 1) * sizeof(double) + pbytes;
        const double delivered =
            (double) (2 * ny * nx + (uint64_t) csize) * sizeof(double) + pbytes;
        const double mib = 1024.0 * 1024.0;
        if (fclose(csv) != 0)
            FAIL("writing %s: %s", path, strerror(errno));
        if (pcsv && fclose(pcsv) != 0)
            FAIL("writing %s: %s", ppath, strerror(errno));
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
            plot.particles = particles;
            plot.np = snaps.np;
            plot.nparticles = parts.seeded;
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
            if (gs_render_figures(&plot, panels, ppos, err, sizeof(err)) != 0)
                FAIL("%s", err);
        }
        printf("gray-scott-analysis: %" PRIu64 " steps received on %d ranks; per step %.3f MiB "
               "(U, V, time%s), %.3f MiB delivered (each rank receives its rows)\n",
               step, csize, per_step / mib, particles ? ", particles" : "", delivered / mib);
        if (step > 1 && gap_sum > 0)
            printf("gray-scott-analysis: steps arrived every %.3f s on average (min %.3f, max "
                   "%.3f): effective throughput %.2f MiB/s (%.2f MiB/s delivered); rank 0 "
                   "spent %.3f s waiting for steps, the first one included\n",
                   gap_sum / (double) (step - 1), gap_min, gap_max,
                   per_step * (double) (step - 1) / gap_sum / mib,
                   delivered * (double) (step - 1) / gap_sum / mib, t_wait);
        if (particles)
            printf("gray-scott-analysis: particle check passed in all %" PRIu64 " steps: "
                   "%" PRIu64 " particles each (joined record dataset, each rank its share by "
                   "rows), every id exactly once, all inside the grid\n",
                   step, parts.seeded);
        printf("gray-scott-analysis: outputs in %s: stats.csv%s%s%s%s\n", o.output,
               particles ? (h5path[0] ? ", particles.csv, particles.h5, particles.xmf"
                                      : ", particles.csv")
                         : "",
               h5path[0] ? ", fields.h5, fields.xmf" : "",
               o.plots ? ", V_steps.png, stats.png, V_hist.png" : "",
               o.plots && particles ? ", particles.png" : "");
        fflush(stdout);
    }
    gs_stats_free(&stats);
    gs_snaps_free(&snaps);
    free(u);
    free(v);
    free(panels);
    free(ppos);
    free(parts.p);
    gs_pstats_free(&parts.ps);
    MPI_Finalize();
    return 0;
}
