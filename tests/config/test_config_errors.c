/* SPDX-License-Identifier: BSD-3-Clause */
/* test_config's error tests: messages word for word, every error of a file in file order with
 * what each was probably meant to be, the limits, and a file that cannot be opened. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfer/config.h>

#include "../support/unit.h"
#include "config/cfg.h"
#include "test_config.h"

/* ---- errors --------------------------------------------------------------------------------- */

#define TWO                                                                                        \
    "components:\n  - {name: simulation, nprocs: 4, cmd: [s]}\n"                                   \
    "  - {name: analysis, nprocs: 2, cmd: [a]}\n"
/* appended to a file that tests something else: its only mistake stays that one */
#define ONE "components: [{name: a, nprocs: 1, cmd: [a]}]\n"

void test_errors(void)
{
    char *big;
    size_t o;
    int i;

    /* the examples of docs/workflow.md, word for word */
    expect_error("wf.yaml",
                 "workflow: w\n" TWO "channels:\n"
                 "  - name: c\n    from: simulation\n    to: analysis\n"
                 "    datasets: [{name: U, type: float64, dims: [4]}]\n"
                 "    algorithm: auto\n    duplex:\n      both\n",
                 "12:7: channels[0].duplex: expected half|full, got \"both\"");
    expect_error("wf.yaml",
                 "workflow: w\ncomponents: [{name: a, nprocs: 1, cmd: [x]},\n"
                 "    {name: b, cmd: [y]}]\n",
                 "3:5: components[1]: missing required key \"nprocs\"");
    expect_error("wf.yaml",
                 "workflow: w\n" TWO "channels:\n"
                 "  - {name: c, from: simulation, to: analysys, datasets: [{name: U, type: int8, "
                 "dims: [1]}]}\n",
                 "6:37: channels[0].to: unknown component \"analysys\" (components: simulation, "
                 "analysis); did you mean \"analysis\"?");
    expect_error("wf.yaml",
                 "workflow: w\ncomponents:\n  - name: x\n    nprocs: 1\n    cmd: [x]\n"
                 "  - name: sim\n    nprocs: 1\n    cmd: [x]\n  - name: sim\n    nprocs: 1\n"
                 "    cmd: [x]\n",
                 "9:11: components[2].name: duplicate component name \"sim\" (first at line 6)");
    expect_error("wf.yaml", "workflow: w\ntopology:\n  colour: red\n" ONE,
                 "3:3: topology.colour: unknown key (expected kind, ranks_per_node)");
    expect_error("wf.yaml", "workflow: w\ncontrol: {timeout_ms: -5}\n" ONE,
                 "2:23: control.timeout_ms: expected an integer in 1..86400000, got \"-5\"");

    /* integers: decimal digits only, range-checked */
    expect_error("int.yaml", "workflow: w\ncontrol: {heartbeat_ms: 10ms}\n" ONE,
                 "2:25: control.heartbeat_ms: expected an integer in 1..3600000, got \"10ms\"");
    expect_error("int.yaml", "workflow: w\ncontrol: {heartbeat_ms: 0x10}\n" ONE,
                 "2:25: control.heartbeat_ms: expected an integer in 1..3600000, got \"0x10\"");
    expect_error("int.yaml", "workflow: w\ncontrol: {heartbeat_ms: 3600001}\n" ONE,
                 "2:25: control.heartbeat_ms: expected an integer in 1..3600000, got \"3600001\"");
    expect_error("int.yaml", "workflow: w\ncontrol: {heartbeat_ms: 99999999999999999999999}\n" ONE,
                 "2:25: control.heartbeat_ms: expected an integer in 1..3600000, got "
                 "\"99999999999999999999999\"");
    expect_error("int.yaml", "workflow: w\ncontrol: {heartbeat_ms: }\n" ONE,
                 "2:25: control.heartbeat_ms: expected an integer in 1..3600000, got an empty "
                 "value");
    expect_error("int.yaml", "workflow: w\ntopology: {ranks_per_node: many}\n" ONE,
                 "2:28: topology.ranks_per_node: expected auto or an integer in 1..65536, got "
                 "\"many\"");
    expect_error("nul.yaml", "workflow: \"a\\0b\"\n" ONE,
                 "1:11: workflow: NUL characters are not allowed");
    expect_error("name.yaml", "workflow: my workflow\n" ONE,
                 "1:11: workflow: expected a name ([A-Za-z0-9_.-]+), got \"my workflow\"");
    expect_error("ctl.yaml", "workflow: w\ncontrol: [1]\n" ONE,
                 "2:10: control: expected a mapping, got a sequence");
    expect_error("ctl.yaml", "workflow: w\n\x01\n",
                 "2:1: YAML syntax error: control characters are not allowed (byte 0x01)");
    expect_error("top.yaml", "- a\n- b\n",
                 "1:1: expected a mapping at the top level, got a "
                 "sequence");
    expect_error("top.yaml", "---\n",
                 "2:1: empty document (expected a mapping with the keys "
                 "workflow, components)");
    expect_error("top.yaml", "",
                 "1:1: empty file (expected a mapping with the keys workflow, "
                 "components)");
    expect_error("size.yaml",
                 "workflow: w\n" TWO "channels:\n"
                 "  - {name: c, from: simulation, to: analysis, datasets: [{name: U, type: "
                 "float32, dims: [1152921504606846977]}]}\n",
                 "6:89: channels[0].datasets[0].dims: impossible size: [1152921504606846977] "
                 "float32 is more than 2^62 bytes");
    expect_error("top.yaml", "workflow: w\n", "1:1: missing required key \"components\"");

    /* at most XFER_MAX_DATASETS datasets from one end of a channel */
    big = malloc(200000);
    o = (size_t) sprintf(big, "workflow: w\n" TWO "channels:\n  - name: c\n    from: simulation\n"
                              "    to: analysis\n    duplex: full\n    datasets:\n");
    for (i = 0; i < 2; i++)
        o += (size_t) sprintf(big + o,
                              "      - {name: a%d, type: int8, dims: [1], from: analysis}\n", i);
    for (i = 0; i <= XFER_MAX_DATASETS; i++)
        o += (size_t) sprintf(big + o, "      - {name: s%d, type: int8, dims: [1]}\n", i);
    expect_error("many.yaml", big,
                 "77:9: channels[0].datasets[66]: more than 64 datasets from \"simulation\" in "
                 "one channel");
    /* and at most 128 in all */
    for (i = 0; i < XFER_MAX_DATASETS; i++)
        o += (size_t) sprintf(big + o, "      - {name: t%d, type: int8, dims: [1]}\n", i);
    expect_error("many.yaml", big,
                 "77:9: channels[0].datasets[66]: more than 64 datasets from \"simulation\" in one "
                 "channel\nmany.yaml:139:9: channels[0].datasets[128]: more than 128 datasets");
    free(big);
}

/* ---- every error of a file, and what each was probably meant to be --------------------------- */

/* @p text, loaded from memory as @p name, must fail with exactly @p report. */
static void expect_report(const char *name, const char *text, const char *report)
{
    xfer_config_t *c = (xfer_config_t *) &c;
    xfer_status_t st = xfer_config_load_buffer(name, text, strlen(text), &c);

    checks++;
    UCHECK(st == XFER_ERR_CONFIG && !c, "%s: status %s", name, xfer_status_name(st));
    UCHECK(strcmp(xfer_last_error(), report) == 0, "\n  expected: %s\n  got:      %s", report,
           xfer_last_error());
}

void test_every_error(void)
{
    xfer_config_t *c = NULL, *f = NULL;
    const char *part;
    char *big, *text;
    size_t o;
    int i;

    /* parse errors and check errors together, in file order: the unknown component (a check)
     * comes between two errors the reading found */
    expect_report("mem.yaml",
                  "workflow: w\n" TWO "channels:\n"
                  "  - {name: c, from: simulation, to: analysys, duplex: both,\n"
                  "     datasets: [{name: U, type: float64, dims: [4]}]}\n"
                  "launch: sepárate\n",
                  "mem.yaml:6:37: channels[0].to: unknown component \"analysys\" (components: "
                  "simulation, analysis); did you mean \"analysis\"?\n"
                  "mem.yaml:6:55: channels[0].duplex: expected half|full, got \"both\"\n"
                  "mem.yaml:8:9: launch: expected auto|mpmd|separate|user, got \"sepárate\"; did "
                  "you mean \"separate\"?");

    /* one mistake is said once: a key taken for a required one is not also missing; a rule
     * whose other key is wrong is not applied; a reference to a wrong component is not
     * checked again in the datasets */
    expect_report(
        "once.yaml",
        "workflow: w\n" TWO "channels:\n"
        "  - name: c\n    from: simulator\n    to: analysis\n"
        "    hierarchical: {leaders_per_node: 2, multi_sender: yes}\n"
        "    datasets: [{name: U, type: int8, dims: [4], from: analysis}]\n"
        "  - {name: d, from: simulation, to: analysis, duplex: fulll, datasets: [{name: V,"
        " type: int8, dims: [1], from: analysis}]}\n"
        "  - {name: e, from: analysis, to: simulation, datasets: [{name: W, tipe: int8, "
        "dims: [2]}]}\n",
        "once.yaml:7:11: channels[0].from: unknown component \"simulator\" (components: "
        "simulation, analysis); did you mean \"simulation\"?\n"
        "once.yaml:9:55: channels[0].hierarchical.multi_sender: expected true|false, got "
        "\"yes\"\n"
        "once.yaml:11:55: channels[1].duplex: expected half|full, got \"fulll\"; did you "
        "mean \"full\"?\n"
        "once.yaml:12:68: channels[2].datasets[0].tipe: unknown key (expected name, "
        "type, dims, from, selection, max_rows, blocks, compression, tolerance); did you mean "
        "\"type\"?");

    /* suggestions: none when nothing is close, both of two equally close ones, a prefix, the
     * case of letters ignored, the registry's algorithms and the word of an integer key */
    expect_report(
        "hint.yaml",
        "workflow: w\ntopology: {colour: red, ranks_per_node: atuo}\n" TWO "channels:\n"
        "  - {name: c, from: simulation, to: analysis, algorithm: FC_HALF, datasets: "
        "[{name: U, type: float16, dims: [4]}]}\n"
        "  - {name: d, from: simulation, to: analysis, algo: ring, datasets: "
        "[{name: U, type: int8, dims: [4], selection: Rows}]}\n",
        "hint.yaml:2:12: topology.colour: unknown key (expected kind, ranks_per_node)\n"
        "hint.yaml:2:41: topology.ranks_per_node: expected auto or an integer in "
        "1..65536, got \"atuo\"; did you mean \"auto\"?\n"
        "hint.yaml:7:58: channels[0].algorithm: expected auto|native|root_gather|fc_half|"
        "fc_full|fc_full_v|ring_half|ring_full|ring|fc_direct|relay|relay_full, got \"FC_HALF\"; "
        "did you "
        "mean \"fc_half\"?\n"
        "hint.yaml:7:94: channels[0].datasets[0].type: expected int8|uint8|int16|uint16|"
        "int32|uint32|int64|uint64|float32|float64, got \"float16\"; did you mean "
        "\"float32\" or \"float64\"?\n"
        "hint.yaml:8:47: channels[1].algo: unknown key (expected name, from, to, duplex, "
        "algorithm, hierarchical, max_in_flight_steps, policy, stride, on_reader_loss, spill, "
        "start, "
        "history, selection, "
        "attributes_bytes, "
        "transport, file, datasets); did you mean \"algorithm\"?\n"
        "hint.yaml:8:114: channels[1].datasets[0].selection: expected channel|all|rows|"
        "columns|block|user, got \"Rows\"; did you mean \"rows\"?");

    /* a syntax error ends the list: what came before it is reported, nothing is checked */
    expect_report("syntax.yaml",
                  "workflow: w\nlaunch: mpdm\n" TWO "channels:\n"
                  "  - {name: c, from: nowhere, to: analysis, datasets: [{name: U, type: int8, "
                  "dims: [1]}]}\n"
                  "run_dir: [unclosed\n",
                  "syntax.yaml:2:9: launch: expected auto|mpmd|separate|user, got \"mpdm\"; did "
                  "you mean \"mpmd\"?\n"
                  "syntax.yaml:8:10: run_dir: expected a string, got a sequence\n"
                  "syntax.yaml:9:1: YAML syntax error: did not find expected ',' or ']' (while "
                  "parsing a flow sequence)");

    /* more than XFER_CONFIG_MAX_ERRORS: the first ones in file order, then the count (check
     * errors found after the reading are placed among them) */
    big = malloc(65536);
    o = (size_t) sprintf(big, "workflow: w\ncomponents:\n");
    for (i = 0; i < 30; i++)
        o += (size_t) sprintf(big + o, "  - {name: c%d, nprocs: 1, cmd: [x]}\n", i);
    o += (size_t) sprintf(big + o, "channels:\n");
    for (i = 0; i < 30; i++)
        o += (size_t) sprintf(big + o,
                              "  - {name: h%d, from: c%d, to: x%d, datasets: [{name: U, type: "
                              "int8, dims: [%d]}]}\n",
                              i, i, i, i % 2);
    xfer_config_free(&c);
    UCHECK(xfer_config_load_buffer("many.yaml", big, o, &c) == XFER_ERR_CONFIG,
           "30 channels with errors");
    text = strdup(xfer_last_error());
    {
        int lines = 1, last = 0;
        char *s;
        for (s = text; (s = strchr(s, '\n')); s++)
            lines++;
        UCHECK(lines == XFER_CONFIG_MAX_ERRORS + 1, "%d lines:\n%s", lines, text);
        UCHECK(strncmp(text, "many.yaml:34:30: channels[0].to: unknown component \"x0\"", 55) == 0,
               "first: %.100s", text);
        UCHECK(strstr(text,
                      "did you mean \"c0\"?\nmany.yaml:34:74: channels[0].datasets[0].dims[0]: "
                      "expected a positive integer, got \"0\"\n") != NULL,
               "second: %s", text);
        UCHECK(strstr(text, "\nmany.yaml:46:77: channels[12].datasets[0].dims[0]: expected a "
                            "positive integer, got \"0\"\n... and 25 more errors") &&
                   !strstr(text, "channels[13]"),
               "last shown: %s", text);
        s = strrchr(text, '\n');
        UCHECK(s && strcmp(s, "\n... and 25 more errors") == 0, "tail: %s", s ? s : "");
        for (s = text; s && *s != '.'; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
            const int line = atoi(s + strlen("many.yaml:"));
            UCHECK(line >= last, "out of order: %s", text);
            last = line;
        }
        checks += 5;
    }
    free(text);

    /* the bounds of cmd and env: said once, the rest read past */
    big = realloc(big, 1 << 20);
    o = (size_t) sprintf(big, "workflow: w\ncomponents:\n  - name: a\n    nprocs: 1\n    cmd: [");
    for (i = 0; i < 65538; i++)
        o += (size_t) sprintf(big + o, "%sx", i ? "," : "");
    o += (size_t) sprintf(big + o, "]\n    env:\n");
    for (i = 0; i < 4098; i++)
        o += (size_t) sprintf(big + o, "      V%d: x\n", i);
    expect_report("limits.yaml", big,
                  "limits.yaml:5:131083: components[0].cmd[65536]: more than 65536 strings\n"
                  "limits.yaml:4103:7: components[0].env.V4096: more than 4096 variables");

    /* the buffer API: the same configuration as from the file, NULL names "<buffer>", the
     * text need not end with a NUL, a file past XFER_CONFIG_MAX_BYTES is refused unread */
    write_text("buf.yaml", all_keys_yaml);
    f = load_ok("buf.yaml");
    text = strdup(all_keys_yaml);
    UCHECK(xfer_config_load_buffer("buf.yaml", text, strlen(text), &c) == XFER_SUCCESS,
           "buffer: %s", xfer_last_error());
    if (c && f) {
        char why[256];
        UCHECK(cfg_equal(c, f, why, sizeof(why)), "buffer and file differ in %s", why);
        UCHECK(strcmp(c->path, "buf.yaml") == 0, "path %s", c->path);
    }
    xfer_config_free(&c);
    xfer_config_free(&f);
    free(text);
    UCHECK(xfer_config_load_buffer(NULL, "workflow: [\n", 12, &c) == XFER_ERR_CONFIG &&
               strstr(xfer_last_error(), "\n<buffer>:2:1: YAML syntax error"),
           "%s", xfer_last_error());
    part = "workflow: w\ncomponents: [{name: a, nprocs: 1, cmd: [a]}]\nJUNK";
    UCHECK(xfer_config_load_buffer("x", part, strlen(part) - 4, &c) == XFER_SUCCESS,
           "not NUL-terminated: %s", xfer_last_error());
    xfer_config_free(&c);
    UCHECK(xfer_config_load_buffer("x", NULL, 0, &c) == XFER_ERR_CONFIG &&
               strcmp(xfer_last_error(), "x:1:1: empty file (expected a mapping with the keys "
                                         "workflow, components)") == 0,
           "NULL, 0: %s", xfer_last_error());
    UCHECK(xfer_config_load_buffer("x", NULL, 1, &c) == XFER_ERR_INVALID_ARG, "NULL text");
    UCHECK(xfer_config_load_buffer("x", "", 0, NULL) == XFER_ERR_INVALID_ARG, "NULL cfg");
    UCHECK(xfer_config_load_buffer("x", big, (size_t) XFER_CONFIG_MAX_BYTES + 1, &c) ==
                   XFER_ERR_CONFIG &&
               strcmp(xfer_last_error(), "x: larger than a workflow file may be (16 MiB)") == 0,
           "too large: %s", xfer_last_error());
    checks += 6;
    free(big);
}

void test_cannot_open(void)
{
    xfer_config_t *c = (xfer_config_t *) &c;
    checks++;
    UCHECK(xfer_config_load("no-such-dir/wf.yaml", &c) == XFER_ERR_CONFIG && c == NULL,
           "missing file");
    UCHECK(strcmp(xfer_last_error(),
                  "no-such-dir/wf.yaml: cannot open: No such file or directory") == 0,
           "%s", xfer_last_error());
    UCHECK(xfer_config_load(".", &c) == XFER_ERR_CONFIG && c == NULL, "a directory");
    UCHECK(strcmp(xfer_last_error(), ".: cannot read: Is a directory") == 0, "%s",
           xfer_last_error());
}
