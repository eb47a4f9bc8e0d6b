/* SPDX-License-Identifier: BSD-3-Clause */
/* test_config (test_config.c): the lifecycle keys of a channel (policy, stride, on_reader_loss,
 * spill, start, history): start's auto resolved at load, the settings in effect after the
 * environment's overrides (xfer_config_channel_flow), and a bad variable named. The refusals of
 * contradicting keys are files of tests/configs (spill_latest.yaml, history_*.yaml, ...). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/config.h>

#include "../support/unit.h"
#include "test_config.h"

/* A workflow whose channel 0 (a -> b) carries @p keys, one "key: value" per line; channel 1 is a
 * full-duplex one. */
static xfer_config_t *load_with(const char *keys)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "workflow: w\n"
             "components:\n"
             "  - {name: a, nprocs: 2, cmd: [a]}\n"
             "  - {name: b, nprocs: 1, cmd: [b]}\n"
             "channels:\n"
             "  - name: c\n"
             "    from: a\n"
             "    to: b\n"
             "%s"
             "    datasets: [{name: x, type: float64, dims: [8]}]\n"
             "  - name: f\n"
             "    from: a\n"
             "    to: b\n"
             "    duplex: full\n"
             "    datasets: [{name: y, type: float64, dims: [8]}]\n",
             keys);
    write_text("flow.yaml", text);
    return load_ok("flow.yaml");
}

static void expect_flow(const xfer_config_t *c, int k, xfer_flow_policy_t policy, int stride,
                        xfer_reader_loss_t loss, xfer_reader_start_t start, int history)
{
    xfer_channel_flow_t f;
    xfer_status_t st = xfer_config_channel_flow(c, k, &f);
    UCHECK(st == XFER_SUCCESS, "channel %d: %s", k, xfer_last_error());
    if (st != XFER_SUCCESS)
        return;
    UCHECK(f.policy == policy && f.stride == stride && f.on_reader_loss == loss &&
               f.start == start && f.history == history,
           "channel %d: policy %d stride %d loss %d start %d history %d; expected %d %d %d %d %d",
           k, f.policy, f.stride, f.on_reader_loss, f.start, f.history, policy, stride, loss, start,
           history);
}

void test_flow_keys(void)
{
    xfer_config_t *c;
    xfer_channel_flow_t f;
    xfer_status_t st;

    unsetenv("XFER_POLICY");
    unsetenv("XFER_STRIDE");
    unsetenv("XFER_ON_READER_LOSS");

    /* defaults: start auto is latest where nothing is kept */
    if ((c = load_with(""))) {
        UCHECK(c->channels[0].start == XFER_START_LATEST, "start %d", c->channels[0].start);
        expect_flow(c, 0, XFER_POLICY_BLOCK, 1, XFER_LOSS_FAIL, XFER_START_LATEST, 0);
        xfer_config_free(&c);
    }
    /* auto is oldest with history, with spill, with kept step files; latest with unkept ones */
    if ((c = load_with("    on_reader_loss: continue\n    history: 3\n"))) {
        expect_flow(c, 0, XFER_POLICY_BLOCK, 1, XFER_LOSS_CONTINUE, XFER_START_OLDEST, 3);
        xfer_config_free(&c);
    }
    if ((c = load_with(
             "    on_reader_loss: spill\n    spill: {max_steps: 7, max_bytes: 4096}\n"))) {
        expect_flow(c, 0, XFER_POLICY_BLOCK, 1, XFER_LOSS_SPILL, XFER_START_OLDEST, 0);
        UCHECK(c->channels[0].spill.max_steps == 7 && c->channels[0].spill.max_bytes == 4096,
               "spill %d %llu", c->channels[0].spill.max_steps,
               (unsigned long long) c->channels[0].spill.max_bytes);
        xfer_config_free(&c);
    }
    if ((c = load_with("    transport: file\n"))) {
        UCHECK(c->channels[0].start == XFER_START_OLDEST, "file keep: start %d",
               c->channels[0].start);
        xfer_config_free(&c);
    }
    if ((c = load_with("    transport: file\n    file: {keep: false}\n"))) {
        UCHECK(c->channels[0].start == XFER_START_LATEST, "file unkept: start %d",
               c->channels[0].start);
        xfer_config_free(&c);
    }
    /* start written out stays; latest with history is allowed */
    if ((c = load_with("    on_reader_loss: continue\n    history: 2\n    start: latest\n"))) {
        expect_flow(c, 0, XFER_POLICY_BLOCK, 1, XFER_LOSS_CONTINUE, XFER_START_LATEST, 2);
        xfer_config_free(&c);
    }

    /* the environment overrides a half-duplex channel's keys, never a full-duplex one's */
    if ((c = load_with("    policy: latest\n    stride: 4\n"))) {
        expect_flow(c, 0, XFER_POLICY_LATEST, 4, XFER_LOSS_FAIL, XFER_START_LATEST, 0);
        setenv("XFER_POLICY", "block", 1);
        setenv("XFER_STRIDE", "10", 1);
        setenv("XFER_ON_READER_LOSS", "spill", 1);
        expect_flow(c, 0, XFER_POLICY_BLOCK, 10, XFER_LOSS_SPILL, XFER_START_LATEST, 0);
        expect_flow(c, 1, XFER_POLICY_BLOCK, 1, XFER_LOSS_FAIL, XFER_START_LATEST, 0);
        setenv("XFER_ON_READER_LOSS", "ignore", 1);
        st = xfer_config_channel_flow(c, 0, &f);
        UCHECK(st == XFER_ERR_CONFIG &&
                   strcmp(xfer_last_error(),
                          "XFER_ON_READER_LOSS=ignore: fail, continue or spill") == 0,
               "bad XFER_ON_READER_LOSS: %s: %s", xfer_status_name(st), xfer_last_error());
        unsetenv("XFER_ON_READER_LOSS");
        setenv("XFER_STRIDE", "0", 1);
        st = xfer_config_channel_flow(c, 0, &f);
        UCHECK(st == XFER_ERR_CONFIG &&
                   strcmp(xfer_last_error(), "XFER_STRIDE=0: a whole number from 1 to 1000000") ==
                       0,
               "bad XFER_STRIDE: %s: %s", xfer_status_name(st), xfer_last_error());
        unsetenv("XFER_STRIDE");
        unsetenv("XFER_POLICY");
        st = xfer_config_channel_flow(c, 2, &f);
        UCHECK(st == XFER_ERR_INVALID_ARG, "channel 2 of 2: %s", xfer_status_name(st));
        st = xfer_config_channel_flow(c, 0, NULL);
        UCHECK(st == XFER_ERR_INVALID_ARG, "NULL output: %s", xfer_status_name(st));
        xfer_config_free(&c);
    }
}
