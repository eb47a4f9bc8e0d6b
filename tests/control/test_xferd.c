/* SPDX-License-Identifier: BSD-3-Clause */
/* xferd's behaviour through the client API (plus a raw DEALER where the API will not do):
 *   test_xferd CASE --xferd PATH
 * main() here picks the case; each case starts its own daemon in a scratch directory. The cases,
 * by stage: xferd_sessions.c (basic, order, auth, endpoint, curve), xferd_life.c (liveness,
 * ranks, exited, stop, sigterm, restart), xferd_steps.c (ahead, flow), xferd_attach.c (attach); the
 * client helpers they share: xferd_client.c. */
#include <stdio.h>
#include <string.h>

#include "xferd_client.h"

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    int hb = 1000;

    for (int i = 2; i + 1 < argc; i += 2)
        if (strcmp(argv[i], "--xferd") == 0)
            D.xferd = argv[i + 1];
    if (!D.xferd) {
        fprintf(stderr, "usage: test_xferd CASE --xferd PATH\n");
        return 2;
    }
    if (strcmp(c, "liveness") == 0 || strcmp(c, "ranks") == 0)
        hb = 100;
    {
        const char *xferd = D.xferd;
        memset(&D, 0, sizeof(D));
        D.xferd = xferd;
    }
    if (start(hb) != 0) {
        fx_cleanup(&D);
        return 1;
    }
    printf("xferd at %s\n", D.endpoint);
    if (strcmp(c, "basic") == 0)
        case_basic();
    else if (strcmp(c, "order") == 0)
        case_order();
    else if (strcmp(c, "auth") == 0)
        case_auth();
    else if (strcmp(c, "liveness") == 0)
        case_liveness();
    else if (strcmp(c, "ranks") == 0)
        case_ranks();
    else if (strcmp(c, "exited") == 0)
        case_exited();
    else if (strcmp(c, "stop") == 0)
        case_stop(0);
    else if (strcmp(c, "sigterm") == 0)
        case_stop(1);
    else if (strcmp(c, "restart") == 0)
        case_restart();
    else if (strcmp(c, "endpoint") == 0)
        case_endpoint();
    else if (strcmp(c, "curve") == 0)
        case_curve();
    else if (strcmp(c, "ahead") == 0)
        case_ahead();
    else if (strcmp(c, "flow") == 0)
        case_flow();
    else if (strcmp(c, "attach") == 0)
        case_attach();
    else
        CHECK(0, "unknown case \"%s\"", c);
    fx_cleanup(&D);
    if (fx_failures) {
        fprintf(stderr, "test_xferd %s: %d checks failed\n", c, fx_failures);
        return 1;
    }
    printf("test_xferd %s: all checks passed\n", c);
    return 0;
}
