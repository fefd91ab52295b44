/* cache_api.c -- the public cache calls (qjit.h): list and clear the
 * context's cache folder through the cache module. */
#define _GNU_SOURCE
#include "cache.h"
#include "context.h"
#include "core.h"

typedef struct list_adapter {
    qjit_cache_visit_fn visit;
    void *ud;
} list_adapter;

static int adapt_visit(void *ud, const qjit__cache_visit_info *in)
{
    list_adapter *a = ud;
    qjit_cache_entry_info out = {in->name, in->variant, in->arch, in->bytes, in->valid, in->problem};
    return a->visit ? a->visit(a->ud, &out) : 0;
}

qjit_status qjit_cache_list(qjit_context *ctx, qjit_cache_visit_fn visit, void *ud, size_t *bad)
{
    if (!ctx)
        return QJIT_INVALID_ARGUMENT;
    qjit_status st = qjit__cache_open_dir(ctx, ctx->cache_dir);
    if (st)
        return st;
    list_adapter a = {visit, ud};
    return qjit__cache_list(ctx, ctx->cache_dir, adapt_visit, &a, bad);
}

qjit_status qjit_cache_clear(qjit_context *ctx, size_t *removed)
{
    if (!ctx)
        return QJIT_INVALID_ARGUMENT;
    qjit_status st = qjit__cache_open_dir(ctx, ctx->cache_dir);
    if (st)
        return st;
    return qjit__cache_clear(ctx, ctx->cache_dir, removed);
}
