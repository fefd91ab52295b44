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

/* Opens array `field` of t as *list, checking it has 1..max elements
 * (0..max if empty_ok). */
static qjit_status open_list(qjit__rec *t, const char *field, long long max, int empty_ok, qjit__rec *list,
                             long long *n)
{
    qjit_status st = qjit__rec_table(t, field, list);
    if (st)
        return st;
    *n = qjit__rec_len(list);
    if (*n > max || (*n < 1 && !empty_ok)) {
        st = qjit__rec_fail(list, "has %lld entries (%s1..%lld)", *n, empty_ok ? "0 or " : "", max);
        qjit__rec_close(list);
    }
    return st;
}

static qjit_status read_sections(qjit__rec *root, qjit__layer_plan *out)
{
    qjit__rec list, s;
    long long n;
    qjit_status st = open_list(root, "sections", QJIT__PLAN_SECTIONS, 0, &list, &n);
    if (st)
        return st;
    for (long long i = 1; st == QJIT_OK && i <= n; i++) {
        qjit__section_plan *sp = &out->sections[i - 1];
        long long bytes = 0;
        if ((st = qjit__rec_elem(&list, i, &s)))
            break;
        if (!(st = qjit__rec_strcpy(&s, "name", sp->name, sizeof sp->name)))
            st = qjit__rec_int(&s, "bytes", 0, INT64_MAX, &bytes);
        sp->bytes = (uint64_t)bytes;
        qjit__rec_close(&s);
        out->nsections = (int)i;
    }
    qjit__rec_close(&list);
    return st;
}

static qjit_status read_grid(qjit__rec *k, qjit__grid_dim grid[3])
{
    qjit__rec list, d;
    long long n;
    qjit_status st = open_list(k, "grid", 3, 0, &list, &n);
    if (st)
        return st;
    if (n != 3)
        st = qjit__rec_fail(&list, "has %lld dimensions, not 3", n);
    for (long long i = 1; st == QJIT_OK && i <= 3; i++) {
        long long base, per_m, div;
        if ((st = qjit__rec_elem(&list, i, &d)))
            break;
        if (!(st = qjit__rec_int_or(&d, "base", 0, INT32_MAX, 0, &base)) &&
            !(st = qjit__rec_int_or(&d, "per_m", 0, 1024, 0, &per_m)) &&
            !(st = qjit__rec_int_or(&d, "div", 1, INT32_MAX, 1, &div))) {
            grid[i - 1].base = base;
            grid[i - 1].per_m = per_m;
            grid[i - 1].div = div;
        }
        qjit__rec_close(&d);
    }
    qjit__rec_close(&list);
    return st;
}

static const struct { const char *name; qjit__slot_kind kind; } SLOT_KINDS[] = {
    {"w", QJIT__SLOT_WEIGHTS}, {"ws", QJIT__SLOT_WORKSPACE}, {"count", QJIT__SLOT_COUNT},
    {"map", QJIT__SLOT_MAP},   {"x", QJIT__SLOT_X},          {"y", QJIT__SLOT_Y},
    {"m", QJIT__SLOT_M},       {"n", QJIT__SLOT_N},          {"k", QJIT__SLOT_K},
    {"epoch", QJIT__SLOT_EPOCH},
};

/* One slot: its kind, and what its ref names resolved against the layer's
 * sections and the bucket's workspace and maps. */
static qjit_status read_slot(qjit__rec *s, const qjit__layer_plan *lp, const qjit__bucket_plan *b, qjit__slot *slot)
{
    const char *kind, *ref;
    long long optional;
    qjit_status st;
    if ((st = qjit__rec_strcpy(s, "name", slot->name, sizeof slot->name)) ||
        (st = qjit__rec_str(s, "kind", &kind, NULL)) || (st = qjit__rec_str(s, "ref", &ref, NULL)) ||
        (st = qjit__rec_int_or(s, "optional", 0, 1, 0, &optional)))
        return st;
    size_t k = 0;
    while (k < sizeof SLOT_KINDS / sizeof SLOT_KINDS[0] && strcmp(SLOT_KINDS[k].name, kind))
        k++;
    if (k == sizeof SLOT_KINDS / sizeof SLOT_KINDS[0])
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

static qjit_status read_kernel(qjit__rec *b_rec, const char *field, const qjit__layer_plan *lp,
                               const qjit__bucket_plan *b, qjit__kernel_plan *k)
{
    qjit__rec kr, list, s;
    long long n = 0;
    qjit_status st = qjit__rec_table(b_rec, field, &kr);
    if (st)
        return st;
    if ((st = qjit__rec_strdup(&kr, "key", &k->key)) || (st = qjit__rec_strdup(&kr, "signature", &k->signature)) ||
        (st = read_grid(&kr, k->grid)) || (st = open_list(&kr, "slots", QJIT__PLAN_SLOTS, 0, &list, &n))) {
        qjit__rec_close(&kr);
        return st;
    }
    for (long long i = 1; st == QJIT_OK && i <= n; i++) {
        if ((st = qjit__rec_elem(&list, i, &s)))
            break;
        st = read_slot(&s, lp, b, &k->slots[i - 1]);
        qjit__rec_close(&s);
        k->nslots = (int)i;
    }
    qjit__rec_close(&list);
    k->flags = -1;
    if (st == QJIT_OK && qjit__rec_has(&kr, "flags")) {
        const char *flags;
        if (!(st = qjit__rec_str(&kr, "flags", &flags, NULL)) &&
            (k->flags = find_name(flags, b->ws, sizeof b->ws[0], b->nws)) < 0)
            st = qjit__rec_fail(&kr, "its flags section '%s' is not in the workspace", flags);
    }
    qjit__rec_close(&kr);
    return st;
}

static qjit_status read_workspace(qjit__rec *b_rec, qjit__bucket_plan *b)
{
    qjit__rec list, s;
    long long n;
    qjit_status st = open_list(b_rec, "workspace", QJIT__PLAN_WS, 0, &list, &n);
    if (st)
        return st;
    for (long long i = 1; st == QJIT_OK && i <= n; i++) {
        qjit__ws_section *w = &b->ws[i - 1];
        long long fixed, per_m, per_mtile;
        if ((st = qjit__rec_elem(&list, i, &s)))
            break;
        if (!(st = qjit__rec_strcpy(&s, "name", w->name, sizeof w->name)) &&
            !(st = qjit__rec_int_or(&s, "fixed", 0, INT32_MAX, 0, &fixed)) &&
            !(st = qjit__rec_int_or(&s, "per_m", 0, INT32_MAX, 0, &per_m)) &&
            !(st = qjit__rec_int_or(&s, "per_mtile", 0, INT32_MAX, 0, &per_mtile))) {
            w->fixed = (uint64_t)fixed;
            w->per_m = (uint64_t)per_m;
            w->per_mtile = (uint64_t)per_mtile;
        }
        qjit__rec_close(&s);
        b->nws = (int)i;
    }
    qjit__rec_close(&list);
    return st;
}

static qjit_status read_maps(qjit__rec *b_rec, const qjit__layer_plan *lp, qjit__bucket_plan *b)
{
    qjit__rec list, s;
    long long n;
    qjit_status st = open_list(b_rec, "maps", QJIT__PLAN_MAPS, 1, &list, &n);
    if (st)
        return st;
    for (long long i = 1; st == QJIT_OK && i <= n; i++) {
        qjit__map_plan *m = &b->maps[i - 1];
        const char *source, *section, *type;
        long long cols, rows, rows_per_m, stride, bc, br, swizzle;
        if ((st = qjit__rec_elem(&list, i, &s)))
            break;
        if (!(st = qjit__rec_strcpy(&s, "name", m->name, sizeof m->name)) &&
            !(st = qjit__rec_str(&s, "source", &source, NULL)) && !(st = qjit__rec_str(&s, "section", &section, NULL)) &&
            !(st = qjit__rec_str(&s, "dtype", &type, NULL)) && !(st = qjit__rec_int(&s, "cols", 1, INT64_MAX, &cols)) &&
            !(st = qjit__rec_int(&s, "rows", 0, INT64_MAX, &rows)) &&
            !(st = qjit__rec_int(&s, "rows_per_m", 0, 1, &rows_per_m)) &&
            !(st = qjit__rec_int(&s, "stride", 16, INT64_MAX, &stride)) &&
            !(st = qjit__rec_int(&s, "box_cols", 1, 256, &bc)) && !(st = qjit__rec_int(&s, "box_rows", 1, 256, &br)) &&
            !(st = qjit__rec_int(&s, "swizzle", 0, 128, &swizzle))) {
            m->workspace = !strcmp(source, "ws");
            m->ref = m->workspace ? find_name(section, b->ws, sizeof b->ws[0], b->nws)
                                  : find_name(section, lp->sections, sizeof lp->sections[0], lp->nsections);
            m->type = !strcmp(type, "u8") ? QJIT__MAP_U8 : !strcmp(type, "u32") ? QJIT__MAP_U32 : QJIT__MAP_U64;
            if (strcmp(type, "u8") && strcmp(type, "u32") && strcmp(type, "u64"))
                st = qjit__rec_fail(&s, "map %s has element type '%s' (u8, u32 or u64)", m->name, type);
            m->cols = (uint64_t)cols;
            m->rows = (uint64_t)rows;
            m->rows_per_m = (uint64_t)rows_per_m;
            m->stride = (uint64_t)stride;
            m->box_cols = (uint32_t)bc;
            m->box_rows = (uint32_t)br;
            m->swizzle = (int)swizzle;
            if (st == QJIT_OK && m->ref < 0)
                st = qjit__rec_fail(&s, "map %s is of section '%s', which the plan does not define", m->name,
                                    section);
        }
        qjit__rec_close(&s);
        b->nmaps = (int)i;
    }
    qjit__rec_close(&list);
    return st;
}

static qjit_status read_bucket(qjit__rec *b_rec, const qjit__layer_plan *lp, qjit__bucket_plan *b)
{
    long long max_m, tile_m, cluster;
    qjit_status st;
    if ((st = qjit__rec_int(b_rec, "max_m", 0, INT32_MAX, &max_m)) ||
        (st = qjit__rec_int(b_rec, "tile_m", 1, 4096, &tile_m)) ||
        (st = qjit__rec_int(b_rec, "cluster", 1, 8, &cluster)))
        return st;
    b->max_m = max_m;
    b->tile_m = (int)tile_m;
    b->cluster = (int)cluster;
    /* Workspace and maps first: the slots refer to them. */
    if ((st = read_workspace(b_rec, b)) || (st = read_maps(b_rec, lp, b)) ||
        (st = read_kernel(b_rec, "gemm", lp, b, &b->gemm)) ||
        (st = read_kernel(b_rec, "gemm_acc", lp, b, &b->gemm_acc)))
        return st;
    b->has_quant = qjit__rec_has(b_rec, "quant");
    return b->has_quant ? read_kernel(b_rec, "quant", lp, b, &b->quant) : QJIT_OK;
}

typedef struct plan_read {
    qjit_context *ctx;
    qjit__layer_plan *out;
} plan_read;

static qjit_status read_plan(qjit__rec *root, void *ud)
{
    plan_read *r = ud;
    qjit__layer_plan *out = r->out;
    qjit__rec list, b;
    long long n;
    qjit_status st = read_sections(root, out);
    if (st || (st = open_list(root, "buckets", QJIT__PLAN_BUCKETS, 0, &list, &n)))
        return st;
    for (long long i = 1; st == QJIT_OK && i <= n; i++) {
        if ((st = qjit__rec_elem(&list, i, &b)))
            break;
        out->nbuckets = (int)i;
        st = read_bucket(&b, out, &out->buckets[i - 1]);
        qjit__rec_close(&b);
    }
    qjit__rec_close(&list);
    /* The last bucket takes any larger M. */
    if (st == QJIT_OK && out->buckets[out->nbuckets - 1].max_m != 0)
        st = qjit__rec_fail(root, "the last bucket must have max_m = 0 (any larger M)");
    return st;
}

qjit_status qjit__plan_layer(qjit_context *ctx, const qjit__plan_request *req, qjit__layer_plan *out)
{
    memset(out, 0, sizeof *out);
    qjit__lua *L;
    qjit_status st = qjit__context_lua(ctx, &L);
    if (st)
        return st;
    const qjit__lua_arg args[7] = {QJIT__ARG_STR(req->scheme), QJIT__ARG_INT(req->group), QJIT__ARG_INT(req->N),
                                   QJIT__ARG_INT(req->K),      QJIT__ARG_STR(req->arch),  QJIT__ARG_INT(req->sms),
                                   QJIT__ARG_STR(req->variant ? req->variant : "")};
    plan_read r = {ctx, out};
    return qjit__lua_invoke(L, "dispatch.lua", "plan", args, 7, read_plan, &r, NULL);
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
