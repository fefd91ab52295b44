/* plan.c -- reads dispatch.lua's plan of a layer into a qjit__layer_plan,
 * field by field with the typed accessors of lua_vm.h. Names (of sections,
 * workspace sections and maps) are resolved to indexes here, once, so the
 * layer binds and launches without comparing strings. */
#define _GNU_SOURCE
#include "plan.h"
#include "context.h"
#include "core.h"
#include "lua_vm.h"

#include <stdint.h>
#include <string.h>

/* Index of `name` among count records of `stride` bytes that start with
 * their name; -1 if absent. */
static int find_name(const char *name, const void *base, size_t stride, int count)
{
    for (int i = 0; i < count; i++)
        if (!strcmp((const char *)base + (size_t)i * stride, name))
            return i;
    return -1;
}

/* Reads array `field` of t, 1..max elements (0..max if empty_ok), element
 * by element with one(element, index from 0, ud); *count follows the
 * elements taken. */
typedef qjit_status (*read_elem_fn)(qjit__rec *e, int i, void *ud);
static qjit_status read_list(qjit__rec *t, const char *field, long long max, int empty_ok, read_elem_fn one,
                             void *ud, int *count)
{
    qjit__rec list, e;
    qjit_status st = qjit__rec_table(t, field, &list);
    if (st)
        return st;
    long long n = qjit__rec_len(&list);
    if (n > max || (n < 1 && !empty_ok))
        st = qjit__rec_fail(&list, "has %lld entries (%s1..%lld)", n, empty_ok ? "0 or " : "", max);
    for (long long i = 1; st == QJIT_OK && i <= n; i++) {
        if ((st = qjit__rec_elem(&list, i, &e)))
            break;
        *count = (int)i;
        st = one(&e, (int)(i - 1), ud);
        qjit__rec_close(&e);
    }
    qjit__rec_close(&list);
    return st;
}

static qjit_status read_section(qjit__rec *s, int i, void *ud)
{
    qjit__section_plan *sp = &((qjit__layer_plan *)ud)->sections[i];
    long long bytes = 0;
    qjit_status st = qjit__rec_strcpy(s, "name", sp->name, sizeof sp->name);
    long long derived = 0;
    if (!st)
        st = qjit__rec_int(s, "bytes", 0, INT64_MAX, &bytes);
    if (!st)
        st = qjit__rec_int_or(s, "derived", 0, 1, 0, &derived);
    sp->bytes = (uint64_t)bytes;
    sp->derived = (int)derived;
    if (!st && i > 0 && sp[-1].derived && !derived)
        st = qjit__rec_fail(s, "stored section %s follows a derived one", sp->name);
    return st;
}

static qjit_status read_dim(qjit__rec *d, int i, void *ud)
{
    qjit__grid_dim *g = &((qjit__grid_dim *)ud)[i];
    long long base, per_m, div, mul, max;
    qjit_status st;
    if ((st = qjit__rec_int_or(d, "base", 0, INT32_MAX, 0, &base)) ||
        (st = qjit__rec_int_or(d, "per_m", 0, 1024, 0, &per_m)) ||
        (st = qjit__rec_int_or(d, "div", 1, INT32_MAX, 1, &div)) ||
        (st = qjit__rec_int_or(d, "mul", 1, INT32_MAX, 1, &mul)) ||
        (st = qjit__rec_int_or(d, "max", 0, INT32_MAX, 0, &max)))
        return st;
    g->base = base;
    g->per_m = per_m;
    g->div = div;
    g->mul = mul;
    g->max = max;
    return QJIT_OK;
}

static const struct { char name[8]; qjit__slot_kind kind; } SLOT_KINDS[] = {
    {"w", QJIT__SLOT_WEIGHTS}, {"ws", QJIT__SLOT_WORKSPACE}, {"count", QJIT__SLOT_COUNT},
    {"map", QJIT__SLOT_MAP},   {"x", QJIT__SLOT_X},          {"y", QJIT__SLOT_Y},
    {"m", QJIT__SLOT_M},       {"n", QJIT__SLOT_N},          {"k", QJIT__SLOT_K},
    {"epoch", QJIT__SLOT_EPOCH}, {"param", QJIT__SLOT_PARAM},
    {"bias", QJIT__SLOT_BIAS},
};

/* What the records of one bucket are resolved against. */
typedef struct bucket_read {
    const qjit__layer_plan *lp;
    qjit__bucket_plan *b;
    qjit__kernel_plan *k;        /* the kernel whose slots are being read */
} bucket_read;

/* One slot: its kind, and what its ref names resolved against the layer's
 * sections and the bucket's workspace and maps. */
static qjit_status read_slot(qjit__rec *s, int i, void *ud)
{
    const bucket_read *r = ud;
    const qjit__layer_plan *lp = r->lp;
    const qjit__bucket_plan *b = r->b;
    qjit__slot *slot = &r->k->slots[i];
    const char *kind, *ref;
    long long optional;
    qjit_status st;
    if ((st = qjit__rec_strcpy(s, "name", slot->name, sizeof slot->name)) ||
        (st = qjit__rec_str(s, "kind", &kind, NULL)) || (st = qjit__rec_str(s, "ref", &ref, NULL)) ||
        (st = qjit__rec_int_or(s, "optional", 0, 1, 0, &optional)))
        return st;
    int k = find_name(kind, SLOT_KINDS, sizeof SLOT_KINDS[0], (int)(sizeof SLOT_KINDS / sizeof SLOT_KINDS[0]));
    if (k < 0)
        return qjit__rec_fail(s, "slot %s has unknown kind '%s'", slot->name, kind);
    slot->kind = SLOT_KINDS[k].kind;
    slot->ref = 0;
    switch (slot->kind) {
    case QJIT__SLOT_WEIGHTS:
        slot->ref = find_name(ref, lp->sections, sizeof lp->sections[0], lp->nsections);
        break;
    case QJIT__SLOT_WORKSPACE:
    case QJIT__SLOT_COUNT:
        slot->ref = find_name(ref, b->ws, sizeof b->ws[0], b->nws);
        if (slot->ref < 0 && optional)
            return QJIT_OK;
        break;
    case QJIT__SLOT_MAP:
        slot->ref = find_name(slot->name, b->maps, sizeof b->maps[0], b->nmaps);
        break;
    default:
        break;
    }
    if (slot->ref < 0)
        return qjit__rec_fail(s, "slot %s refers to '%s', which the plan does not define", slot->name, ref);
    return QJIT_OK;
}

static qjit_status read_kernel(qjit__rec *b_rec, const char *field, bucket_read *r, qjit__kernel_plan *k)
{
    qjit__rec kr;
    int ndims = 0;
    qjit_status st = qjit__rec_table(b_rec, field, &kr);
    if (st)
        return st;
    r->k = k;
    if (!(st = qjit__rec_strdup(&kr, "key", &k->key)) && !(st = qjit__rec_strdup(&kr, "signature", &k->signature)) &&
        !(st = read_list(&kr, "grid", 3, 0, read_dim, k->grid, &ndims)) && ndims != 3)
        st = qjit__rec_fail(&kr, "grid has %d dimensions, not 3", ndims);
    long long cluster = 1;
    if (!st && !(st = qjit__rec_int_or(&kr, "cluster", 1, 8, 1, &cluster)))
        k->cluster = (int)cluster;
    if (!st)
        st = read_list(&kr, "slots", QJIT__PLAN_SLOTS, 0, read_slot, r, &k->nslots);
    k->flags = -1;
    if (st == QJIT_OK && qjit__rec_has(&kr, "flags")) {
        const char *flags;
        if (!(st = qjit__rec_str(&kr, "flags", &flags, NULL)) &&
            (k->flags = find_name(flags, r->b->ws, sizeof r->b->ws[0], r->b->nws)) < 0)
            st = qjit__rec_fail(&kr, "its flags section '%s' is not in the workspace", flags);
    }
    qjit__rec_close(&kr);
    return st;
}

static qjit_status read_ws(qjit__rec *s, int i, void *ud)
{
    qjit__ws_section *w = &((qjit__bucket_plan *)ud)->ws[i];
    long long fixed, per_m, per_mtile, tokens;
    qjit_status st;
    if ((st = qjit__rec_strcpy(s, "name", w->name, sizeof w->name)) ||
        (st = qjit__rec_int_or(s, "fixed", 0, INT32_MAX, 0, &fixed)) ||
        (st = qjit__rec_int_or(s, "per_m", 0, INT32_MAX, 0, &per_m)) ||
        (st = qjit__rec_int_or(s, "per_mtile", 0, INT32_MAX, 0, &per_mtile)) ||
        (st = qjit__rec_int_or(s, "tokens", 0, QJIT__TOKENS_ROWSUM, 0, &tokens)))
        return st;
    w->tokens = (int)tokens;
    w->fixed = (uint64_t)fixed;
    w->per_m = (uint64_t)per_m;
    w->per_mtile = (uint64_t)per_mtile;
    return QJIT_OK;
}

static const struct { char name[8]; qjit__map_type type; } MAP_TYPES[] = {
    {"u8", QJIT__MAP_U8}, {"u16", QJIT__MAP_U16}, {"u32", QJIT__MAP_U32}, {"u64", QJIT__MAP_U64},
};

static qjit_status read_map(qjit__rec *s, int i, void *ud)
{
    const bucket_read *r = ud;
    const qjit__layer_plan *lp = r->lp;
    const qjit__bucket_plan *b = r->b;
    qjit__map_plan *m = &r->b->maps[i];
    const char *source, *section, *type;
    long long cols, rows, rows_per_m, stride, bc, br, swizzle;
    qjit_status st;
    if ((st = qjit__rec_strcpy(s, "name", m->name, sizeof m->name)) ||
        (st = qjit__rec_str(s, "source", &source, NULL)) || (st = qjit__rec_str(s, "section", &section, NULL)) ||
        (st = qjit__rec_str(s, "dtype", &type, NULL)) || (st = qjit__rec_int(s, "cols", 1, INT64_MAX, &cols)) ||
        (st = qjit__rec_int(s, "rows", 0, INT64_MAX, &rows)) ||
        (st = qjit__rec_int(s, "rows_per_m", 0, 1, &rows_per_m)) ||
        (st = qjit__rec_int(s, "stride", 16, INT64_MAX, &stride)) ||
        (st = qjit__rec_int(s, "box_cols", 1, 256, &bc)) || (st = qjit__rec_int(s, "box_rows", 1, 256, &br)) ||
        (st = qjit__rec_int(s, "swizzle", 0, 128, &swizzle)))
        return st;
    int t = find_name(type, MAP_TYPES, sizeof MAP_TYPES[0], (int)(sizeof MAP_TYPES / sizeof MAP_TYPES[0]));
    if (t < 0)
        return qjit__rec_fail(s, "map %s has element type '%s' (u8, u16, u32 or u64)", m->name, type);
    m->type = MAP_TYPES[t].type;
    if (!strcmp(source, "y")) {
        m->source = QJIT__MAP_OF_OUTPUT;
        m->ref = 0;
    } else if (!strcmp(source, "ws")) {
        m->source = QJIT__MAP_OF_WORKSPACE;
        m->ref = find_name(section, b->ws, sizeof b->ws[0], b->nws);
    } else if (!strcmp(source, "w")) {
        m->source = QJIT__MAP_OF_WEIGHTS;
        m->ref = find_name(section, lp->sections, sizeof lp->sections[0], lp->nsections);
    } else {
        return qjit__rec_fail(s, "map %s is of '%s' (w: weights, ws: workspace, y: the output)", m->name, source);
    }
    m->cols = (uint64_t)cols;
    m->rows = (uint64_t)rows;
    m->rows_per_m = (uint64_t)rows_per_m;
    m->stride = (uint64_t)stride;
    m->box_cols = (uint32_t)bc;
    m->box_rows = (uint32_t)br;
    m->swizzle = (int)swizzle;
    if (m->ref < 0)
        return qjit__rec_fail(s, "map %s is of section '%s', which the plan does not define", m->name, section);
    return QJIT_OK;
}

static qjit_status read_bucket(qjit__rec *b_rec, int i, void *ud)
{
    qjit__layer_plan *lp = ud;
    qjit__bucket_plan *b = &lp->buckets[i];
    bucket_read r = {lp, b, NULL};
    long long max_m, tile_m, pack;
    qjit_status st;
    if ((st = qjit__rec_int(b_rec, "max_m", 0, INT32_MAX, &max_m)) ||
        (st = qjit__rec_int(b_rec, "tile_m", 1, 4096, &tile_m)) ||
        (st = qjit__rec_int_or(b_rec, "token_pack", 1, 2, 1, &pack)))
        return st;
    b->max_m = max_m;
    b->tile_m = (int)tile_m;
    b->token_pack = (int)pack;
    /* Workspace and maps first: the slots refer to them. */
    if ((st = read_list(b_rec, "workspace", QJIT__PLAN_WS, 0, read_ws, b, &b->nws)) ||
        (st = read_list(b_rec, "maps", QJIT__PLAN_MAPS, 1, read_map, &r, &b->nmaps)) ||
        (st = read_kernel(b_rec, "gemm", &r, &b->gemm)) || (st = read_kernel(b_rec, "gemm_acc", &r, &b->gemm_acc)))
        return st;
    b->has_quant = qjit__rec_has(b_rec, "quant");
    return b->has_quant ? read_kernel(b_rec, "quant", &r, &b->quant) : QJIT_OK;
}

static qjit_status read_plan(qjit__rec *root, void *ud)
{
    qjit__layer_plan *out = ud;
    qjit_status st;
    if ((st = read_list(root, "sections", QJIT__PLAN_SECTIONS, 0, read_section, out, &out->nsections)) ||
        (st = read_list(root, "buckets", QJIT__PLAN_BUCKETS, 0, read_bucket, out, &out->nbuckets)))
        return st;
    /* The last bucket takes any larger M. */
    if (out->buckets[out->nbuckets - 1].max_m != 0)
        return qjit__rec_fail(root, "the last bucket must have max_m = 0 (any larger M)");
    return QJIT_OK;
}

qjit_status qjit__plan_layer(qjit_context *ctx, const qjit__plan_request *req, qjit__layer_plan *out)
{
    memset(out, 0, sizeof *out);
    qjit__lua *L;
    qjit_status st = qjit__context_lua(ctx, &L);
    if (st)
        return st;
    const qjit__lua_arg args[13] = {QJIT__ARG_STR(req->scheme),   QJIT__ARG_INT(req->group),
                                    QJIT__ARG_INT(req->N),        QJIT__ARG_INT(req->K),
                                    QJIT__ARG_STR(req->arch),     QJIT__ARG_INT(req->sms),
                                    QJIT__ARG_STR(req->variant ? req->variant : ""),
                                    QJIT__ARG_INT(req->rblock_n), QJIT__ARG_INT(req->rblock_k),
                                    QJIT__ARG_INT(req->rblocks),
                                    QJIT__ARG_STR(req->dtype ? req->dtype : "f16"),
                                    QJIT__ARG_INT(req->bias),
                                    QJIT__ARG_STR(req->picks ? req->picks : "")};
    return qjit__lua_invoke(L, "dispatch.lua", "plan", args, 13, read_plan, out, NULL);
}

static void kernel_plan_release(qjit_context *ctx, qjit__kernel_plan *k)
{
    qjit__strfree(ctx, k->key);
    qjit__strfree(ctx, k->signature);
    k->key = k->signature = NULL;
}

void qjit__plan_release(qjit_context *ctx, qjit__layer_plan *p)
{
    if (!p)
        return;
    for (int i = 0; i < QJIT__PLAN_BUCKETS; i++) {
        kernel_plan_release(ctx, &p->buckets[i].quant);
        kernel_plan_release(ctx, &p->buckets[i].gemm);
        kernel_plan_release(ctx, &p->buckets[i].gemm_acc);
    }
    memset(p, 0, sizeof *p);
}
