/* SPDX-License-Identifier: BSD-3-Clause */
/* The workflow file's checks that a table entry cannot say (config.c's tables call them once the
 * whole file is read): components' names, a channel's ends and algorithm, node staging, a
 * dataset's shape, type, size and selection. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/coll.h>
#include <xfer/config.h>

#include "../codec/codec.h"
#include "cfg.h"

/* ---- checks (run once the whole file is read) ----------------------------------------------- */

/* Append @p s to the @p sep-separated list in @p buf (cut with "..." when full); 0 when full. */
static int append(char *buf, size_t size, const char *sep, const char *s)
{
    const size_t o = strlen(buf);
    if (o + strlen(sep) + strlen(s) + 4 >= size) {
        if (o + 4 < size && !strstr(buf, "..."))
            strcat(buf, "...");
        return 0;
    }
    snprintf(buf + o, size - o, "%s%s", o ? sep : "", s);
    return 1;
}

/* The registered algorithms whose flags include all of @p want and none of @p unwanted,
 * ", "-separated after @p first (NULL: nothing first). */
static const char *algorithms_with(unsigned want, unsigned unwanted, const char *first, char *buf,
                                   size_t size)
{
    xfer_algo_info_t info;
    unsigned flags;
    int n = 0, i;

    buf[0] = '\0';
    if (first)
        append(buf, size, ", ", first);
    if (xfer_algorithm_count(&n) != XFER_SUCCESS)
        return buf;
    for (i = 0; i < n; i++)
        if (xfer_algorithm_info(i, &info) == XFER_SUCCESS &&
            xfer_algorithm_flags(i, &flags) == XFER_SUCCESS && (flags & want) == want &&
            !(flags & unwanted))
            append(buf, size, ", ", info.name);
    return buf;
}

static int name_cmp(const void *a, const void *b)
{
    const cfg_name_t *x = a, *y = b;
    const int c = strcmp(x->name, y->name);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* The components by name, built once per file: a reference costs a binary search. */
static xfer_status_t component_names(cfg_parser_t *p)
{
    const xfer_config_t *c = p->cfg;
    int i;

    if (p->names)
        return XFER_SUCCESS;
    if (!(p->names = xfer_calloc((size_t) c->ncomponents + 1, sizeof(*p->names)))) {
        p->stop = 1;
        return XFER_ERR(XFER_ERR_NO_MEMORY, "%d component names", c->ncomponents);
    }
    for (i = 0; i < c->ncomponents; i++) /* a name left out or found wrong is reported already */
        if (c->components[i].name)
            p->names[p->nnames++] = (cfg_name_t){c->components[i].name, i};
    qsort(p->names, (size_t) p->nnames, sizeof(*p->names), name_cmp);
    return XFER_SUCCESS;
}

/* The component that @p key (under the current key path) names. *@p index is left alone when
 * the file does not set @p key, and is -1 when the value was found wrong (reported already) or
 * names no component (reported here, with the names it was probably meant to be). */
static xfer_status_t resolve(cfg_parser_t *p, const char *key, int *index)
{
    const xfer_config_t *c = p->cfg;
    const cfg_rec_t *r = xfer_cfg_find(p, key);
    char names[512] = "", shown[96], hint[256];
    const cfg_name_t *found = NULL;
    size_t lo = 0, hi;
    cfg_name_t want;
    cfg_suggest_t s;
    xfer_status_t st;
    int i, listing = 1;

    if (!r)
        return XFER_SUCCESS;
    *index = -1;
    if (r->bad || !r->text)
        return XFER_SUCCESS;
    if ((st = component_names(p)) != XFER_SUCCESS)
        return st;
    hi = (size_t) p->nnames;
    want.name = r->text;
    want.index = -1; /* before every index: the first component of that name */
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (name_cmp(&p->names[mid], &want) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < (size_t) p->nnames && strcmp(p->names[lo].name, r->text) == 0)
        found = &p->names[lo];
    if (found) {
        *index = found->index;
        return XFER_SUCCESS;
    }
    xfer_cfg_suggest_init(&s, p, r->text);
    for (i = 0; i < c->ncomponents && (listing || s.len >= 0); i++) {
        if (!c->components[i].name)
            continue;
        xfer_cfg_suggest_add(&s, c->components[i].name);
        if (listing)
            listing = append(names, sizeof(names), ", ", c->components[i].name);
    }
    return xfer_cfg_fail_key(p, key, "unknown component %s (components: %s)%s",
                             xfer_cfg_quote(r->text, shown, sizeof(shown)), names,
                             xfer_cfg_suggestion(&s, hint, sizeof(hint)));
}

/* What the algorithm's flags allow (xfer-info lists them): a half_only algorithm only in a
 * half-duplex channel, and on a ring topology only ring algorithms. A rule whose other key was
 * found wrong is not applied: that key's default is no grounds for a second error. */
static xfer_status_t check_algorithm(cfg_parser_t *p, const xfer_cfg_channel_t *ch)
{
    char valid[512] = "auto", ring[256], shown[96], hint[256];
    const int full = ch->duplex == XFER_DUPLEX_FULL;
    const cfg_rec_t *kind = xfer_cfg_find_up(p, 2, "topology.kind");
    xfer_algo_info_t info;
    cfg_suggest_t s;
    xfer_status_t st;
    unsigned flags = 0;
    int n, i, found = -1;

    if (!ch->algorithm || xfer_cfg_bad(p, "algorithm") || strcmp(ch->algorithm, "auto") == 0)
        return XFER_SUCCESS;
    if ((st = xfer_algorithm_count(&n)) != XFER_SUCCESS)
        return st;
    xfer_cfg_suggest_init(&s, p, ch->algorithm);
    xfer_cfg_suggest_add(&s, "auto");
    for (i = 0; i < n; i++) {
        if ((st = xfer_algorithm_info(i, &info)) != XFER_SUCCESS)
            return st;
        if (strcmp(info.name, ch->algorithm) == 0)
            found = i;
        append(valid, sizeof(valid), "|", info.name);
        xfer_cfg_suggest_add(&s, info.name);
    }
    if (found < 0)
        return xfer_cfg_fail_key(p, "algorithm", "expected %s, got %s%s", valid,
                                 xfer_cfg_quote(ch->algorithm, shown, sizeof(shown)),
                                 xfer_cfg_suggestion(&s, hint, sizeof(hint)));
    if ((st = xfer_algorithm_flags(found, &flags)) != XFER_SUCCESS)
        return st;
    if (full && (flags & XFER_ALGO_HALF_ONLY) && !xfer_cfg_bad(p, "duplex"))
        return xfer_cfg_fail_key(p, "algorithm",
                                 "%s moves data one way only: not for a duplex: full channel",
                                 ch->algorithm);
    if (p->cfg->topology == XFER_TOPOLOGY_RING && !(flags & XFER_ALGO_RING) && !(kind && kind->bad))
        return xfer_cfg_fail_key(
            p, "algorithm",
            "%s needs a fully connected topology (topology.kind is ring: use one of %s)",
            ch->algorithm,
            algorithms_with(XFER_ALGO_RING, full ? XFER_ALGO_HALF_ONLY : 0, "auto", ring,
                            sizeof(ring)));
    return XFER_SUCCESS;
}

/* The reference's line for `algorithm`, from the registry's flags. */
const char *xfer_cfg_algorithm_doc(char *buf, size_t size)
{
    char half[256], ring[256];
    snprintf(buf, size,
             "auto or a registered algorithm (xfer-info lists them with their flags); those "
             "flagged half_only (%s) only in half duplex; on a ring topology only those flagged "
             "ring (%s)",
             algorithms_with(XFER_ALGO_HALF_ONLY, 0, NULL, half, sizeof(half)),
             algorithms_with(XFER_ALGO_RING, 0, NULL, ring, sizeof(ring)));
    return buf;
}

/* A reader that attaches to a running channel (docs/runtime.md, "Readers that attach late or
 * come back"): the keys that say what it finds agree with each other. `start: auto` is resolved
 * here: oldest where the sender keeps steps (history, spill, the file transport's kept files),
 * else latest. */
static xfer_status_t check_lifecycle(cfg_parser_t *p, xfer_cfg_channel_t *ch)
{
    const int kept_files = ch->transport == XFER_TRANSPORT_FILE && ch->file.keep;
    const int spill = ch->on_reader_loss == XFER_LOSS_SPILL;
    xfer_status_t ret = XFER_SUCCESS;

    if (spill && ch->policy == XFER_POLICY_LATEST && !xfer_cfg_bad(p, "on_reader_loss") &&
        !xfer_cfg_bad(p, "policy"))
        ret = xfer_cfg_fail_key(p, "on_reader_loss",
                                "on_reader_loss: spill keeps every step for a reader that comes "
                                "back, and policy: latest drops steps: choose one (spill with "
                                "policy: block, or latest with on_reader_loss: continue)");
    if (ch->history > 0 && ch->on_reader_loss != XFER_LOSS_CONTINUE &&
        !xfer_cfg_bad(p, "history") && !xfer_cfg_bad(p, "on_reader_loss")) {
        ret = xfer_cfg_fail_key(
            p, "history",
            "history: %d keeps steps for a reader that attaches later, which needs "
            "on_reader_loss: continue (%s)",
            ch->history,
            spill ? "spill keeps every step already"
                  : "under fail the sender waits for its reader");
        if (xfer_cfg_fatal(p, ret))
            return ret;
    }
    if (ch->history > 0 && ch->policy == XFER_POLICY_LATEST && !xfer_cfg_bad(p, "history") &&
        !xfer_cfg_bad(p, "policy")) {
        ret = xfer_cfg_fail_key(p, "history",
                                "history: %d keeps the last steps sent, and policy: latest "
                                "drops steps a reader has not begun: use one or the other",
                                ch->history);
        if (xfer_cfg_fatal(p, ret))
            return ret;
    }
    if (ch->start == XFER_START_OLDEST && ch->history == 0 && !spill && !kept_files &&
        !xfer_cfg_bad(p, "start")) {
        ret = xfer_cfg_fail_key(p, "start",
                                "start: oldest needs steps kept for a reader that attaches "
                                "later: history: K (K >= 1), on_reader_loss: spill, or the file "
                                "transport with file.keep: true");
        if (xfer_cfg_fatal(p, ret))
            return ret;
    }
    if (ch->start == XFER_START_AUTO)
        ch->start = ch->history > 0 || spill || kept_files ? XFER_START_OLDEST : XFER_START_LATEST;
    return ret;
}

/* Every rule is applied that the values it needs allow; the errors are all reported. */
xfer_status_t xfer_cfg_check_channel(cfg_parser_t *p, void *base, const void *parent)
{
    xfer_cfg_channel_t *ch = base;
    xfer_status_t st, ret = XFER_SUCCESS;
    char shown[96];
    int i;

    (void) parent;
    if ((st = resolve(p, "from", &ch->from)) != XFER_SUCCESS)
        ret = st;
    if (!xfer_cfg_fatal(p, st) && (st = resolve(p, "to", &ch->to)) != XFER_SUCCESS)
        ret = st;
    if (xfer_cfg_fatal(p, st))
        return st;
    if (ch->from >= 0 && ch->from == ch->to) {
        const char *name = xfer_cfg_quote(p->cfg->components[ch->to].name, shown, sizeof(shown));
        ret = xfer_cfg_fail_key(
            p, "to", "from and to are both %s: a channel joins two different components", name);
        if (xfer_cfg_fatal(p, ret))
            return ret;
    }
    /* a full-duplex step moves both ways at once: each side waits for the other's */
    if (ch->duplex == XFER_DUPLEX_FULL && !xfer_cfg_bad(p, "duplex")) {
        if (ch->policy != XFER_POLICY_BLOCK && !xfer_cfg_bad(p, "policy"))
            ret = xfer_cfg_fail_key(p, "policy",
                                    "policy: latest needs a half-duplex channel (in a full-duplex "
                                    "one each side waits for the other's step anyway)");
        else if (ch->stride > 1 && !xfer_cfg_bad(p, "stride"))
            ret = xfer_cfg_fail_key(p, "stride",
                                    "stride: %d needs a half-duplex channel (a full-duplex step "
                                    "moves both ways at once)",
                                    ch->stride);
        else if (ch->on_reader_loss != XFER_LOSS_FAIL && !xfer_cfg_bad(p, "on_reader_loss"))
            ret = xfer_cfg_fail_key(p, "on_reader_loss",
                                    "on_reader_loss: %s needs a half-duplex channel (in a "
                                    "full-duplex one each side reads the other's steps)",
                                    ch->on_reader_loss == XFER_LOSS_SPILL ? "spill" : "continue");
        else if (ch->history > 0 && !xfer_cfg_bad(p, "history"))
            ret = xfer_cfg_fail_key(p, "history",
                                    "history: %d needs a half-duplex channel (no reader attaches "
                                    "to a full-duplex one later)",
                                    ch->history);
        if (xfer_cfg_fatal(p, ret))
            return ret;
    }
    if ((st = check_lifecycle(p, ch)) != XFER_SUCCESS) {
        ret = st;
        if (xfer_cfg_fatal(p, ret))
            return ret;
    }
    for (i = 0; i < ch->ndatasets; i++) /* the datasets that follow the channel's mode */
        if (ch->datasets[i].selection == XFER_SELECT_CHANNEL)
            ch->datasets[i].selection = ch->selection;
    st = check_algorithm(p, ch);
    return st != XFER_SUCCESS ? st : ret;
}

xfer_status_t xfer_cfg_check_hier(cfg_parser_t *p, void *base, const void *parent)
{
    const xfer_cfg_hier_t *h = base;

    (void) parent;
    if (h->leaders_per_node > 1 && !h->multi_sender && !xfer_cfg_bad(p, "multi_sender"))
        return xfer_cfg_fail_key(p, "leaders_per_node",
                                 "%d leaders per node need multi_sender: true",
                                 h->leaders_per_node);
    return XFER_SUCCESS;
}

/* @p d's dims as the file spells them: "joined, 3", "variable, 64". */
static const char *dims_text(const xfer_cfg_dataset_t *d, char *buf, size_t size)
{
    char num[24];
    int i;

    buf[0] = '\0';
    for (i = 0; i < d->ndims; i++) {
        if (i == 0 && d->joined)
            snprintf(num, sizeof(num), "joined");
        else if (d->variable & (1u << i))
            snprintf(num, sizeof(num), "variable");
        else
            snprintf(num, sizeof(num), "%" PRIu64, d->dims[i]);
        append(buf, size, ", ", num);
    }
    return buf;
}

/* The ends of the channel are checked only when both were found (-1: reported already); the
 * size when the type and dims were (joined and variable extents count as 1 row or element, and
 * a joined dataset's max_rows as that many rows). */
xfer_status_t xfer_cfg_check_dataset(cfg_parser_t *p, void *base, const void *parent)
{
    xfer_cfg_dataset_t *d = base;
    const xfer_cfg_channel_t *ch = parent;
    const xfer_cfg_component_t *comp = p->cfg->components;
    const uint64_t limit = (uint64_t) 1 << XFER_CFG_MAX_SIZE_LOG2;
    const cfg_rec_t *duplex = xfer_cfg_find_up(p, 2, "duplex");
    const size_t bytes_of_one = xfer_cfg_dataset_esize(d);
    uint64_t bytes = bytes_of_one;
    const int j = (int) (d - ch->datasets);
    char shape[256] = "", type[64];
    xfer_status_t st, ret = XFER_SUCCESS;
    int i, same = 0;

    d->from = ch->from;
    if ((st = resolve(p, "from", &d->from)) != XFER_SUCCESS) {
        if (xfer_cfg_fatal(p, st))
            return st;
        ret = st;
    }
    if (d->from >= 0 && ch->from >= 0 && ch->to >= 0) {
        if (d->from != ch->from && d->from != ch->to)
            ret = xfer_cfg_fail_key(p, "from",
                                    "\"%s\" is not an end of this channel (from: %s, to: %s)",
                                    comp[d->from].name, comp[ch->from].name, comp[ch->to].name);
        else if (ch->duplex == XFER_DUPLEX_HALF && d->from != ch->from && !(duplex && duplex->bad))
            ret = xfer_cfg_fail_key(p, "from",
                                    "\"%s\" only receives in this half-duplex channel (from: %s; "
                                    "set duplex: full to send both ways)",
                                    comp[d->from].name, comp[ch->from].name);
        if (xfer_cfg_fatal(p, ret))
            return ret;
    }
    for (i = 0; i <= j; i++)
        same += ch->datasets[i].from == d->from;
    if (d->from >= 0 && same == XFER_MAX_DATASETS + 1) { /* said once, at the first too many */
        ret = xfer_cfg_fail_key(p, NULL, "more than %d datasets from \"%s\" in one channel",
                                XFER_MAX_DATASETS, comp[d->from].name);
        if (xfer_cfg_fatal(p, ret))
            return ret;
    }
    if (d->max_rows && d->ndims >= 1 && !d->joined) {
        dims_text(d, shape, sizeof(shape));
        ret = xfer_cfg_fail_key(p, "max_rows",
                                "max_rows %" PRIu64 " is for joined datasets only (dims: [joined, "
                                "...]), and dataset \"%s\" has dims [%s]",
                                d->max_rows, d->name ? d->name : "", shape);
        if (xfer_cfg_fatal(p, ret))
            return ret;
    }
    if (d->blocks == XFER_BLOCKS_PER_STEP && d->ndims >= 1 && (d->joined || d->variable)) {
        dims_text(d, shape, sizeof(shape));
        ret = xfer_cfg_fail_key(p, "blocks",
                                "blocks: per_step is for fixed-shape datasets, and dataset \"%s\" "
                                "has dims [%s] (its blocks are each step's own already)",
                                d->name ? d->name : "", shape);
        if (xfer_cfg_fatal(p, ret))
            return ret;
    }
    if (bytes && (d->compression != XFER_COMPRESSION_NONE || d->tolerance != 0.0) &&
        !(xfer_cfg_find(p, "tolerance") && xfer_cfg_find(p, "tolerance")->bad) &&
        !(xfer_cfg_find(p, "compression") && xfer_cfg_find(p, "compression")->bad)) {
        const char *why = xfer_codec_refuses(d->compression, d->type, d->tolerance);
        if (why) {
            ret = xfer_cfg_fail_key(
                p, d->compression == XFER_COMPRESSION_NONE ? "tolerance" : "compression",
                "dataset \"%s\", compression %s, type %s: %s", d->name ? d->name : "",
                xfer_codec_name(d->compression), xfer_type_name(d->type), why);
            if (xfer_cfg_fatal(p, ret))
                return ret;
        }
    }
    if (!bytes || d->ndims < 1) /* a type or dims found wrong: reported already */
        return ret;
    /* the extents written (joined and variable ones are 1 here), then the rows max_rows allows */
    for (i = 0; i < d->ndims; i++) {
        if (d->dims[i] && bytes > limit / d->dims[i])
            break;
        bytes *= d->dims[i] ? d->dims[i] : 1;
    }
    dims_text(d, shape, sizeof(shape));
    if (d->type == XFER_TYPE_RECORD)
        snprintf(type, sizeof(type), "record of %zu bytes", bytes_of_one);
    else
        snprintf(type, sizeof(type), "%s", xfer_type_name(d->type));
    if (i < d->ndims)
        return xfer_cfg_fail_key(p, "dims", "impossible size: [%s] %s is more than 2^%d bytes",
                                 shape, type, XFER_CFG_MAX_SIZE_LOG2);
    if (d->joined && d->max_rows > limit / bytes)
        return xfer_cfg_fail_key(p, "max_rows",
                                 "impossible size: max_rows %" PRIu64 " of [%s] %s is more than "
                                 "2^%d bytes",
                                 d->max_rows, shape, type, XFER_CFG_MAX_SIZE_LOG2);
    return ret;
}
