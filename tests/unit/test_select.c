/* SPDX-License-Identifier: BSD-3-Clause */
/* The automatic choice under fixed model parameters: half duplex is noticed and served by a
 * half-duplex schedule; the node-sharing term moves p > q half duplex off the joined
 * allgather; every registered algorithm is findable and supports what it claims. */
#include <stdlib.h>
#include <string.h>

#include "../support/unit.h"
#include "select/select.h"

static long checks;

static xfer_shape_t uniform(int p, int q, size_t ka, size_t kb)
{
    xfer_shape_t s;
    memset(&s, 0, sizeof(s));
    s.n[0] = p;
    s.n[1] = q;
    s.ucnt[0] = ka;
    s.ucnt[1] = kb;
    s.total[0] = ka * (size_t) p;
    s.total[1] = kb * (size_t) q;
    return s;
}

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
    a = xfer_select_auto(&s, &m, why, sizeof(why));
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
    UCHECK(!strcmp(choose(uniform(4, 4, 1 << 20, 0), 1), "fc_half"), "p=q half");
    UCHECK(!strcmp(choose(uniform(6, 2, 1 << 20, 0), 1), "fc_half"), "p>q half, 1 ppn");
    UCHECK(!strcmp(choose(uniform(2, 6, 0, 1 << 20), 1), "fc_half"), "p<q half (B sends)");
    UCHECK(!strcmp(choose(uniform(4, 4, 1 << 20, 1 << 20), 1), "fc_full"), "full duplex");
    UCHECK(!strcmp(choose(uniform(25, 7, 1 << 16, 1 << 18), 1), "fc_full"), "25:7 full");
    /* everything on one node: H-FC-GT's extra senders triple the memory traffic */
    UCHECK(!strcmp(choose(uniform(3, 1, 4 << 20, 0), 4), "fc_full"), "p>q half, shared node");
    UCHECK(!strcmp(choose(uniform(2, 2, 4 << 20, 0), 4), "fc_half"), "p=q half, shared node");

    /* ring topology: only ring algorithms; ring_full where the return direction is light */
    UCHECK(!strcmp(choose_on(uniform(8, 8, 1 << 20, 0), 1, 1), "ring_half"), "ring half");
    UCHECK(!strcmp(choose_on(uniform(8, 8, 1 << 20, 1 << 20), 1, 1), "ring"), "ring equal");
    UCHECK(!strcmp(choose_on(uniform(8, 8, 1 << 20, 1 << 14), 1, 1), "ring_full"),
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
        xfer_shape_t full = uniform(3, 3, 8, 8);
        UCHECK(!xfer_algo_supports(xfer_algo_find("fc_half"), &full, &why) &&
                   strstr(why, "full duplex"),
               "fc_half accepts full duplex");
        UCHECK(xfer_algo_supports(xfer_algo_find("fc_full"), &full, &why), "fc_full refuses");
    }
    return unit_finish("test_select", checks);
}
