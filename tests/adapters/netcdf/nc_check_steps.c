/* SPDX-License-Identifier: BSD-3-Clause */
/* nc_check_steps IN.nc OUT.nc STEPS stepdim|group: reads back what xfer-ncstream recv wrote
 * from "send IN.nc --steps STEPS" and checks it against IN.nc with the library itself: every
 * numeric variable of IN is in OUT (stepdim: one variable with a leading "step" dimension of
 * length STEPS; group: one per group step_NNNNNN), step s holds IN's values plus s, the
 * dimensions are named <var>_d0.., and the variable's and the file's attributes are equal.
 * Links libnetcdf only. Exit 0: equal; 1: a difference (printed). */
#include <inttypes.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define NCX(call)                                                                                  \
    do {                                                                                           \
        const int rc_ = (call);                                                                    \
        if (rc_ != NC_NOERR) {                                                                     \
            fprintf(stderr, "nc_check_steps: %s: %s\n", #call, nc_strerror(rc_));                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define BAD(...)                                                                                   \
    do {                                                                                           \
        fprintf(stderr, "nc_check_steps: ");                                                       \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        failures++;                                                                                \
    } while (0)

static size_t type_size(nc_type t)
{
    switch (t) {
    case NC_BYTE:
    case NC_UBYTE:
    case NC_CHAR:
        return 1;
    case NC_SHORT:
    case NC_USHORT:
        return 2;
    case NC_INT:
    case NC_UINT:
    case NC_FLOAT:
        return 4;
    case NC_INT64:
    case NC_UINT64:
    case NC_DOUBLE:
        return 8;
    }
    return 0;
}

/* The same arithmetic as xfer-ncstream's test series. */
static void add_step(nc_type t, void *buf, size_t n, uint64_t s)
{
    size_t i;
    for (i = 0; s > 0 && i < n; i++) {
        switch (t) {
        case NC_BYTE:
        case NC_UBYTE:
            ((uint8_t *) buf)[i] = (uint8_t) (((uint8_t *) buf)[i] + s);
            break;
        case NC_SHORT:
        case NC_USHORT:
            ((uint16_t *) buf)[i] = (uint16_t) (((uint16_t *) buf)[i] + s);
            break;
        case NC_INT:
        case NC_UINT:
            ((uint32_t *) buf)[i] = (uint32_t) (((uint32_t *) buf)[i] + s);
            break;
        case NC_INT64:
        case NC_UINT64:
            ((uint64_t *) buf)[i] += s;
            break;
        case NC_FLOAT:
            ((float *) buf)[i] += (float) s;
            break;
        case NC_DOUBLE:
            ((double *) buf)[i] += (double) s;
            break;
        }
    }
}

static void compare_attrs(int a, int av, int b, int bv, const char *owner)
{
    int na, nb, i;
    NCX(nc_inq_varnatts(a, av, &na));
    NCX(nc_inq_varnatts(b, bv, &nb));
    if (na != nb)
        BAD("%s: %d attributes in the input, %d in the output", owner, na, nb);
    for (i = 0; i < na; i++) {
        char name[NC_MAX_NAME + 1];
        nc_type ta, tb;
        size_t la, lb;
        char *da, *db;
        NCX(nc_inq_attname(a, av, i, name));
        NCX(nc_inq_att(a, av, name, &ta, &la));
        if (nc_inq_att(b, bv, name, &tb, &lb) != NC_NOERR) {
            BAD("%s: attribute %s missing", owner, name);
            continue;
        }
        if (ta != tb || la != lb) {
            BAD("%s: attribute %s: type or length differs", owner, name);
            continue;
        }
        da = calloc(la * type_size(ta) + 1, 1);
        db = calloc(lb * type_size(tb) + 1, 1);
        NCX(nc_get_att(a, av, name, da));
        NCX(nc_get_att(b, bv, name, db));
        if (memcmp(da, db, la * type_size(ta)) != 0)
            BAD("%s: attribute %s: values differ", owner, name);
        free(da);
        free(db);
    }
}

int main(int argc, char **argv)
{
    int a, b, nvars, v, group;
    uint64_t steps, s;

    if (argc != 5) {
        fprintf(stderr, "usage: nc_check_steps IN.nc OUT.nc STEPS stepdim|group\n");
        return 2;
    }
    steps = strtoull(argv[3], NULL, 10);
    group = strcmp(argv[4], "group") == 0;
    NCX(nc_open(argv[1], NC_NOWRITE, &a));
    NCX(nc_open(argv[2], NC_NOWRITE, &b));
    compare_attrs(a, NC_GLOBAL, b, NC_GLOBAL, "global");
    if (!group) {
        int sd;
        size_t len;
        if (nc_inq_dimid(b, "step", &sd) != NC_NOERR)
            BAD("no dimension \"step\" in %s", argv[2]);
        else if (nc_inq_dimlen(b, sd, &len) == NC_NOERR && len != steps)
            BAD("dimension step has length %zu, expected %" PRIu64, len, steps);
    }
    NCX(nc_inq_nvars(a, &nvars));
    for (v = 0; v < nvars; v++) {
        char name[NC_MAX_NAME + 1];
        int nd, dims[NC_MAX_VAR_DIMS], k;
        size_t n = 1, cnt[NC_MAX_VAR_DIMS + 1];
        nc_type t;
        char *want, *got;
        NCX(nc_inq_var(a, v, name, &t, &nd, dims, NULL));
        if (type_size(t) == 0 || t == NC_CHAR)
            continue;
        for (k = 0; k < nd; k++) {
            NCX(nc_inq_dimlen(a, dims[k], &cnt[k]));
            n *= cnt[k];
        }
        want = malloc(n * type_size(t) + 1);
        got = malloc(n * type_size(t) + 1);
        for (s = 0; s < steps; s++) {
            char gname[32];
            int g = b, ov, ond, odims[NC_MAX_VAR_DIMS], off = !group;
            nc_type ot;
            snprintf(gname, sizeof(gname), "step_%06" PRIu64, s);
            if (group && nc_inq_grp_ncid(b, gname, &g) != NC_NOERR) {
                BAD("no group %s", gname);
                break;
            }
            if (nc_inq_varid(g, name, &ov) != NC_NOERR) {
                BAD("%s: variable %s missing", gname, name);
                break;
            }
            NCX(nc_inq_var(g, ov, NULL, &ot, &ond, odims, NULL));
            if (ot != t || ond != (nd ? nd : 1) + off) {
                BAD("%s: variable %s: type or rank differs", gname, name);
                break;
            }
            for (k = 0; k < (nd ? nd : 1); k++) {
                char dn[NC_MAX_NAME + 1], expect[NC_MAX_NAME + 16];
                NCX(nc_inq_dimname(g, odims[off + k], dn));
                snprintf(expect, sizeof(expect), "%s_d%d", name, k);
                if (strcmp(dn, expect) != 0)
                    BAD("variable %s: dimension %d is %s, expected %s", name, k, dn, expect);
            }
            if (s == 0)
                compare_attrs(a, v, g, ov, name);
            NCX(nc_get_var(a, v, want));
            add_step(t, want, n, s);
            {
                size_t c2[NC_MAX_VAR_DIMS + 1], s2[NC_MAX_VAR_DIMS + 1];
                int q = 0;
                if (!group) {
                    s2[q] = s;
                    c2[q++] = 1;
                }
                for (k = 0; k < (nd ? nd : 1); k++) {
                    s2[q] = 0;
                    c2[q++] = nd ? cnt[k] : 1;
                }
                NCX(nc_get_vara(g, ov, s2, c2, got));
            }
            if (memcmp(want, got, n * type_size(t)) != 0)
                BAD("%s: variable %s: values differ", gname, name);
        }
        free(want);
        free(got);
    }
    NCX(nc_close(a));
    NCX(nc_close(b));
    if (failures)
        return 1;
    printf("nc_check_steps: %s: %" PRIu64 " step(s) of %d variable(s) equal the input\n", argv[2],
           steps, nvars);
    return 0;
}
