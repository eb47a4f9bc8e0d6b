/* SPDX-License-Identifier: BSD-3-Clause */
/* The config layer's MPI side (2 ranks). xfer_record_mpi_type: the datatype of a record read
 * from a workflow file has the record's size as its extent and the fields' bytes as its size; an
 * array of C structs sent with it arrives with every field byte-equal and the padding untouched
 * (a struct datatype moves the fields only, no packing by the caller); a record laid out by hand
 * does the same; a bad record gives no datatype.
 *
 *   mpiexec -n 2 test_config_mpi */
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include <xfer/xfer.h>

#include "../support/mpitest.h"

#define N 37 /* records per message: not a round number */

struct particle {
    int64_t id;
    double pos[3];
    double v[3];
    float q;
    int8_t kind;
};

struct small {
    int16_t x[3];
    int8_t y;
};

static const char yaml[] =
    "workflow: w\n"
    "components: [{name: a, nprocs: 1, cmd: [a]}, {name: b, nprocs: 1, cmd: [b]}]\n"
    "channels:\n"
    "  - {name: c, from: a, to: b, datasets: [{name: particles, type: {id: int64, pos: [float64, "
    "3], v: [float64, 3], q: float32, kind: int8}, dims: [joined]}]}\n";

/* The type's extent, lower bound and size. */
static void check_type(MPI_Datatype t, const xfer_record_t *r, size_t field_bytes, const char *what)
{
    MPI_Aint lb = -1, extent = -1;
    int size = -1;

    MT_MPI(MPI_Type_get_extent(t, &lb, &extent));
    MT_MPI(MPI_Type_size(t, &size));
    MT_CHECK(lb == 0 && extent == (MPI_Aint) r->size, "%s: lb %ld extent %ld, record size %zu",
             what, (long) lb, (long) extent, r->size);
    MT_CHECK(size == (int) field_bytes, "%s: type size %d, fields %zu bytes", what, size,
             field_bytes);
}

/* Rank 0 sends @p n records of @p esize bytes from @p src; rank 1 receives them into a buffer of
 * 0xAB bytes and compares: fields equal to what was sent, padding still 0xAB. @p is_field marks
 * the bytes of one record that are fields. */
static void send_records(MPI_Datatype t, const void *src, size_t esize, int n,
                         const unsigned char *is_field, const char *what)
{
    unsigned char *got = malloc(esize * (size_t) n);
    MPI_Status status;
    size_t i;
    int rank, count = -1, field_bad = 0, pad_bad = 0;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MT_MPI(MPI_Send(src, n, t, 1, 7, MPI_COMM_WORLD));
    } else {
        memset(got, 0xAB, esize * (size_t) n);
        MT_MPI(MPI_Recv(got, n, t, 0, 7, MPI_COMM_WORLD, &status));
        MT_MPI(MPI_Get_count(&status, t, &count));
        MT_CHECK(count == n, "%s: %d records received, %d sent", what, count, n);
        for (i = 0; i < esize * (size_t) n; i++) {
            if (is_field[i % esize])
                field_bad += got[i] != ((const unsigned char *) src)[i];
            else
                pad_bad += got[i] != 0xAB;
        }
        MT_CHECK(field_bad == 0, "%s: %d field bytes differ", what, field_bad);
        MT_CHECK(pad_bad == 0, "%s: %d padding bytes written", what, pad_bad);
    }
    free(got);
}

/* Mark the bytes of the fields of @p r. */
static size_t mark_fields(const xfer_record_t *r, unsigned char *is_field)
{
    size_t total = 0;
    int i;

    memset(is_field, 0, r->size);
    for (i = 0; i < r->nfields; i++) {
        const size_t b = xfer_type_size(r->fields[i].type) * r->fields[i].count;
        memset(is_field + r->fields[i].offset, 1, b);
        total += b;
    }
    return total;
}

static void particles(void)
{
    struct particle p[N];
    unsigned char is_field[sizeof(struct particle)];
    xfer_config_t *cfg = NULL;
    const xfer_record_t *r;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    size_t bytes;
    int i, k;

    MT_CHECK(xfer_config_load_buffer("particles.yaml", yaml, strlen(yaml), &cfg) == XFER_SUCCESS,
             "load: %s", xfer_last_error());
    if (!cfg)
        return;
    r = cfg->channels[0].datasets[0].record;
    MT_CHECK(r && r->size == sizeof(struct particle) &&
                 r->fields[1].offset == offsetof(struct particle, pos) &&
                 r->fields[4].offset == offsetof(struct particle, kind),
             "the record is struct particle");
    MT_CHECK(xfer_record_mpi_type(r, &t) == XFER_SUCCESS, "xfer_record_mpi_type: %s",
             xfer_last_error());
    bytes = mark_fields(r, is_field);
    MT_CHECK(bytes == 8 + 24 + 24 + 4 + 1, "field bytes %zu", bytes);
    check_type(t, r, bytes, "particle");
    memset(p, 0x5C, sizeof(p)); /* padding: neither 0xAB nor a field value */
    for (i = 0; i < N; i++) {
        p[i].id = ((int64_t) 1 << 40) | i;
        for (k = 0; k < 3; k++) {
            p[i].pos[k] = i + 0.25 * k;
            p[i].v[k] = -1.0 / (i + k + 1);
        }
        p[i].q = (float) i / 3.0f;
        p[i].kind = (int8_t) (i % 5 - 2);
    }
    send_records(t, p, sizeof(struct particle), N, is_field, "particle");
    MT_MPI(MPI_Type_free(&t));
    xfer_config_free(&cfg);
}

static void small(void)
{
    xfer_record_field_t f[2] = {{"x", XFER_TYPE_INT16, 3, 0}, {"y", XFER_TYPE_INT8, 1, 0}};
    xfer_record_t r = {2, f, 0, 0};
    struct small s[N];
    unsigned char is_field[sizeof(struct small)];
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int i;

    MT_CHECK(xfer_record_layout(&r) == XFER_SUCCESS && r.size == sizeof(struct small) &&
                 f[1].offset == offsetof(struct small, y),
             "layout of struct small: size %zu, y at %zu", r.size, f[1].offset);
    MT_CHECK(xfer_record_mpi_type(&r, &t) == XFER_SUCCESS, "xfer_record_mpi_type: %s",
             xfer_last_error());
    check_type(t, &r, mark_fields(&r, is_field), "small");
    memset(s, 0x5C, sizeof(s));
    for (i = 0; i < N; i++) {
        s[i].x[0] = (int16_t) i;
        s[i].x[1] = (int16_t) -i;
        s[i].x[2] = (int16_t) (i * 1000);
        s[i].y = (int8_t) i;
    }
    send_records(t, s, sizeof(struct small), N, is_field, "small");
    MT_MPI(MPI_Type_free(&t));

    /* a field outside the record, a nested record: no datatype */
    f[1].offset = 8;
    MT_CHECK(xfer_record_mpi_type(&r, &t) == XFER_ERR_INVALID_ARG && t == MPI_DATATYPE_NULL &&
                 strstr(xfer_last_error(), "record field 1 (y): bytes 8..9 lie outside the "
                                           "record's 8 bytes"),
             "a field past the end: %s", xfer_last_error());
    f[1].type = XFER_TYPE_RECORD;
    MT_CHECK(xfer_record_mpi_type(&r, &t) == XFER_ERR_INVALID_ARG && t == MPI_DATATYPE_NULL,
             "a nested record: %s", xfer_last_error());
    MT_CHECK(xfer_record_mpi_type(&r, NULL) == XFER_ERR_INVALID_ARG, "NULL type");
}

int main(int argc, char **argv)
{
    int size, rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (mt_world_rank == 0)
            fprintf(stderr, "test_config_mpi: run on 2 ranks, not %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    particles();
    small();
    rc = mt_finish("test_config_mpi");
    MPI_Finalize();
    return rc;
}
