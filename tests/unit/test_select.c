/* SPDX-License-Identifier: BSD-3-Clause */
/* The automatic choice under fixed model parameters: half duplex is noticed and served by a
 * half-duplex schedule; the node-sharing term moves p > q half duplex off the joined
 * allgather; every registered algorithm is findable, supports what it claims and its flags say,
 * and the public view of the flags is the registry's. */
#include <stdlib.h>
#include <string.h>

#include "../support/unit.h"
#include "../support/unit_shape.h"
#include "select/select.h"

static long checks;

static const char *choose_on(xfer_shape_t s, int ppn, int ring)
{
    xfer_model_t m;
    char why[512];
    const xfer_algo_t *a;
    memset(&m, 0, sizeof(m));
    m.ring = ring;
    m.alpha = 2e-6;
    m.beta = 1e-10;
    m.gamma = 2.5e-10;
    m.nnodes = (s.n[0] + s.n[1] + ppn - 1) / ppn;
    m.max_ppn = ppn;
    a = xfer_select_auto(&s, &m, why, sizeof(why), NULL);
    checks++;
    UCHECK(strstr(why, s.total[0] && s.total[1] ? "full duplex" : "half duplex") != NULL,
           "trace does not name the duplex mode: %s", why);
    return a->name;
}

static const char *choose(xfer_shape_t s, int ppn)
{
    return choose_on(s, ppn, 0);
}

int main(void)
{
    const char *why;
    int i;

    /* one rank per node: the papers' setting */
    UCHECK(!strcmp(choose(unit_uniform_shape(4, 4, 1 << 20, 0), 1), "fc_half"), "p=q half");
    UCHECK(!strcmp(choose(unit_uniform_shape(6, 2, 1 << 20, 0), 1), "fc_half"), "p>q half, 1 ppn");
    UCHECK(!strcmp(choose(unit_uniform_shape(2, 6, 0, 1 << 20), 1), "fc_half"),
           "p<q half (B sends)");
    UCHECK(!strcmp(choose(unit_uniform_shape(4, 4, 1 << 20, 1 << 20), 1), "fc_full"),
           "full duplex");
    UCHECK(!strcmp(choose(unit_uniform_shape(25, 7, 1 << 16, 1 << 18), 1), "fc_full"), "25:7 full");
    /* everything on one node: H-FC-GT's extra senders triple the memory traffic */
    UCHECK(!strcmp(choose(unit_uniform_shape(3, 1, 4 << 20, 0), 4), "fc_full"),
           "p>q half, shared node");
    UCHECK(!strcmp(choose(unit_uniform_shape(2, 2, 4 << 20, 0), 4), "fc_half"),
           "p=q half, shared node");

    /* ring topology: only ring algorithms; ring_full where the return direction is light */
    UCHECK(!strcmp(choose_on(unit_uniform_shape(8, 8, 1 << 20, 0), 1, 1), "ring_half"),
           "ring half");
    UCHECK(!strcmp(choose_on(unit_uniform_shape(8, 8, 1 << 20, 1 << 20), 1, 1), "ring"),
           "ring equal");
    UCHECK(!strcmp(choose_on(unit_uniform_shape(8, 8, 1 << 20, 1 << 14), 1, 1), "ring_full"),
           "ring light return");

    /* registry */
    for (i = 0; i < xfer_algo_count(); i++) {
        const xfer_algo_t *a = xfer_algo_at(i);
        UCHECK(xfer_algo_find(a->name) == a && xfer_algo_index(a) == i, "lookup of %s", a->name);
        UCHECK(a->cost && a->volume && a->summary && a->restrictions, "%s incomplete", a->name);
        UCHECK((a->build != NULL) == !(a->flags & XFER_ALGO_NATIVE), "%s builder", a->name);
        UCHECK(a->model != NULL, "%s has nothing for the simulator", a->name);
        checks++;
    }
    UCHECK(xfer_algo_find("nope") == NULL, "unknown name found");
    {
        xfer_shape_t full = unit_uniform_shape(3, 3, 8, 8);
        UCHECK(!xfer_algo_supports(xfer_algo_find("fc_half"), &full, &why) &&
                   strstr(why, "full duplex"),
               "fc_half accepts full duplex");
        UCHECK(xfer_algo_supports(xfer_algo_find("fc_full"), &full, &why), "fc_full refuses");
    }

    /* flags: the half-only rule is the flag's, whoever carries it; the public view is the
     * registry's; every defined bit has a name */
    for (i = 0; i < xfer_algo_count(); i++) {
        const xfer_algo_t *a = xfer_algo_at(i);
        const int half_only = (a->flags & XFER_ALGO_HALF_ONLY) != 0;
        xfer_shape_t full = unit_uniform_shape(4, 3, 8, 16), half = unit_uniform_shape(4, 3, 8, 0);
        unsigned flags = 0;
        UCHECK(xfer_algo_supports(a, &full, &why) == !half_only, "%s: full duplex %s", a->name,
               half_only ? "accepted though half_only" : "refused");
        UCHECK(!half_only || strstr(why, "full duplex"), "%s: why = %s", a->name, why);
        UCHECK(xfer_algo_supports(a, &half, &why), "%s refuses half duplex: %s", a->name, why);
        UCHECK(!half_only || !(a->flags & XFER_ALGO_AUTO_FULL), "%s: auto_full and half_only",
               a->name);
        UCHECK(xfer_algorithm_flags(i, &flags) == XFER_SUCCESS && flags == a->flags,
               "xfer_algorithm_flags(%d)", i);
        UCHECK((a->flags & ~XFER_ALGO_FLAGS_ALL) == 0, "%s: undefined flag bits", a->name);
        checks += 4;
    }
    UCHECK((xfer_algo_find("fc_half")->flags & XFER_ALGO_HALF_ONLY) &&
               (xfer_algo_find("ring_half")->flags & XFER_ALGO_HALF_ONLY),
           "fc_half and ring_half are half_only");
    /* the runtime's fixed choice for an auto channel on a ring: ring-capable auto candidates
     * for the duplex mode, the same as before the flags drove it */
    {
        const xfer_algo_t *h = xfer_select_ring_default(0), *f = xfer_select_ring_default(1);
        UCHECK(h && !strcmp(h->name, "ring_half"), "ring default, half duplex: %s",
               h ? h->name : "none");
        UCHECK(f && !strcmp(f->name, "ring_full"), "ring default, full duplex: %s",
               f ? f->name : "none");
        UCHECK(f && !(f->flags & XFER_ALGO_HALF_ONLY), "the full-duplex ring default is half_only");
        checks += 3;
    }
    /* native is the MPI library's collective: it talks to any rank, so not to rings only */
    UCHECK(!(xfer_algo_find("native")->flags & XFER_ALGO_RING), "native flagged ring");
    {
        unsigned f;
        const char *name, *meaning;
        for (f = 1; f != 0; f <<= 1) {
            const int ok = xfer_algorithm_flag_info(f, &name, &meaning) == XFER_SUCCESS;
            UCHECK(ok == ((f & XFER_ALGO_FLAGS_ALL) != 0), "flag 0x%x: named %d", f, ok);
            UCHECK(!ok || (*name && *meaning), "flag 0x%x has an empty name", f);
        }
        UCHECK(xfer_algorithm_flag_info(XFER_ALGO_RING, &name, NULL) == XFER_SUCCESS &&
                   !strcmp(name, "ring"),
               "ring flag name");
        UCHECK(xfer_algorithm_flag_info(XFER_ALGO_HALF_ONLY, &name, NULL) == XFER_SUCCESS &&
                   !strcmp(name, "half_only"),
               "half_only flag name");
        UCHECK(xfer_algorithm_flag_info(XFER_ALGO_RING | XFER_ALGO_NATIVE, &name, NULL) ==
                   XFER_ERR_INVALID_ARG,
               "two bits named as one flag");
        checks += 4;
    }
    return unit_finish("test_select", checks);
}
