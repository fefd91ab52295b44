/* module.c -- the context's table of loaded kernels. */
#define _GNU_SOURCE
#include "module.h"
#include "context.h"
#include "core.h"
#include "generate.h"

#include <string.h>

struct qjit__module_table {
    qjit__kernel **items;
    size_t count, capacity;
};

static qjit__kernel *find(qjit__module_table *t, const char *canon)
{
    for (size_t i = 0; t && i < t->count; i++)
        if (!strcmp(t->items[i]->key, canon))
            return t->items[i];
    return NULL;
}

static qjit_status add(qjit_context *ctx, qjit__kernel *k)
{
    if (!ctx->modules && !(ctx->modules = qjit__calloc(ctx, sizeof *ctx->modules)))
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    qjit__module_table *t = ctx->modules;
    if (t->count == t->capacity) {
        size_t cap = t->capacity ? 2 * t->capacity : 16;
        qjit__kernel **items = qjit__realloc(ctx, t->items, t->capacity * sizeof *items, cap * sizeof *items);
        if (!items)
            return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
        t->items = items;
        t->capacity = cap;
    }
    t->items[t->count++] = k;
    return QJIT_OK;
}

static void kernel_free(qjit_context *ctx, qjit__kernel *k)
{
    if (!k)
        return;
    if (k->module && ctx->driver.loaded)
        ctx->driver.ModuleUnload(k->module);
    qjit__strfree(ctx, k->key);
    qjit__free(ctx, k, sizeof *k);
}

void qjit__modules_destroy(qjit_context *ctx)
{
    qjit__module_table *t = ctx->modules;
    if (!t)
        return;
    if (ctx->driver.loaded)
        qjit__driver_bind(ctx, &ctx->driver);
    for (size_t i = 0; i < t->count; i++)
        kernel_free(ctx, t->items[i]);
    qjit__free(ctx, t->items, t->capacity * sizeof *t->items);
    qjit__free(ctx, t, sizeof *t);
    ctx->modules = NULL;
}

static qjit_status read_meta(qjit_context *ctx, const char *meta, qjit__kernel *k)
{
    struct { const char *name; int *dst; } ints[] = {
        {"threads", &k->threads}, {"smem", &k->smem}, {"tile_m", &k->tile_m}, {"tile_n", &k->tile_n},
        {"tile_k", &k->tile_k}, {"k_step", &k->k_step}, {"n_unit", &k->n_unit}, {"group", &k->group}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        long long v;
        if (!qjit__meta_int(meta, ints[i].name, &v) || v < 0 || v > (1 << 30))
            return qjit__error(ctx, QJIT_TEMPLATE, "kernel %s: launch fact '%s' missing or invalid", k->key,
                               ints[i].name);
        *ints[i].dst = (int)v;
    }
    if (!qjit__meta_str(meta, "name", k->name, sizeof k->name) ||
        !qjit__meta_str(meta, "kind", k->kind, sizeof k->kind) ||
        !qjit__meta_str(meta, "epi", k->epi, sizeof k->epi))
        return qjit__error(ctx, QJIT_TEMPLATE, "kernel %s: name, kind or epi missing from its facts", k->key);
    long long pdl = 0;
    k->pdl = qjit__meta_int(meta, "pdl", &pdl) && pdl == 1;
    long long tma = 0;
    k->tma = qjit__meta_int(meta, "tma", &tma) && tma == 1;
    long long fused = 0;
    k->fused = qjit__meta_int(meta, "fused", &fused) && fused == 1;
    long long cluster = 1;
    if (!qjit__meta_int(meta, "cluster", &cluster))
        cluster = 1;
    if (cluster < 1 || cluster > 8)
        return qjit__error(ctx, QJIT_TEMPLATE, "kernel %s: cluster of %lld CTAs (1..8)", k->key, cluster);
    k->cluster = (int)cluster;
    if (k->tma && k->fused)
        return qjit__error(ctx, QJIT_TEMPLATE, "kernel %s: claims both tensor maps and fused quantization", k->key);
    if (k->threads < 32 || k->threads > 1024)
        return qjit__error(ctx, QJIT_TEMPLATE, "kernel %s: %d threads per block", k->key, k->threads);
    return QJIT_OK;
}

/* A cubin for sm_XY runs on devices X.Z with Z >= Y; sm_XYa only on X.Y. */
qjit_status qjit__check_device(qjit_context *ctx, const char *canon, const char *arch, int cc_major,
                               int cc_minor, const char *device_name)
{
    int major = 0, minor = 0;
    const char *digits = strncmp(arch, "sm_", 3) ? arch : arch + 3;
    size_t n = strspn(digits, "0123456789");
    if (n < 2 || (digits[n] && strcmp(digits + n, "a") && strcmp(digits + n, "f")))
        return qjit__error(ctx, QJIT_UNSUPPORTED_ARCH, "'%s' is not an architecture of the form sm_XY[a]", arch);
    for (size_t i = 0; i + 1 < n; i++)
        major = major * 10 + (digits[i] - '0');
    minor = digits[n - 1] - '0';
    int exact = digits[n] == 'a';
    int dev = cc_major * 10 + cc_minor, need = major * 10 + minor;
    if (dev < need)
        return qjit__error(ctx, QJIT_DEVICE_TOO_OLD, "variant %s needs %s (compute capability %d.%d); the device "
                           "(%s) is %d.%d", canon, arch, major, minor, device_name, cc_major, cc_minor);
    if (cc_major != major || (exact && cc_minor != minor))
        return qjit__error(ctx, QJIT_UNSUPPORTED_ARCH, "variant %s is built for %s, which cannot run on the device "
                           "(%s, compute capability %d.%d); build it for sm_%d%d%s", canon, arch, device_name,
                           cc_major, cc_minor, cc_major, cc_minor, cc_major == 9 ? "a" : "");
    return QJIT_OK;
}

static qjit_status load(qjit_context *ctx, const char *canon, qjit__kernel **out)
{
    qjit__cache_entry e;
    qjit_compile_info info;
    qjit_status st = qjit__build_locked(ctx, canon, NULL, &info, &e);
    if (st)
        return st;
    qjit__kernel *k = qjit__calloc(ctx, sizeof *k);
    if (!k || !(k->key = qjit__strdup(ctx, canon))) {
        qjit__free(ctx, k, sizeof *k);
        qjit__cache_entry_release(ctx, &e);
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    }
    memcpy(k->entry, info.entry, sizeof k->entry);
    memcpy(k->arch, ctx->arch, sizeof k->arch);
    qjit__key_arch(canon, k->arch);
    const qjit__driver *d = &ctx->driver;
    CUresult r;
    if ((st = read_meta(ctx, e.meta, k)) || (st = qjit__check_device(ctx, canon, k->arch, d->cc_major, d->cc_minor, d->name)))
        goto fail;
    if ((size_t)k->smem > d->max_smem_optin) {
        st = qjit__error(ctx, QJIT_DEVICE_TOO_OLD, "variant %s needs %d bytes of shared memory per block; device "
                         "%s allows %zu", canon, k->smem, d->name, d->max_smem_optin);
        goto fail;
    }
    if ((r = d->ModuleLoadData(&k->module, e.payload)) != CUDA_SUCCESS) {
        st = qjit__cuda_error(ctx, d, r, "cuModuleLoadData");
        qjit__error_append(ctx, " (variant %s, cache entry %s)", canon, k->entry);
        goto fail;
    }
    if ((r = d->ModuleGetFunction(&k->function, k->module, k->name)) != CUDA_SUCCESS) {
        st = qjit__cuda_error(ctx, d, r, "cuModuleGetFunction");
        qjit__error_append(ctx, " (kernel %s of variant %s)", k->name, canon);
        goto fail;
    }
    /* Always opt in: the 48 KB default covers dynamic plus static shared
     * memory, so a kernel right at 48 KB of dynamic memory needs it too. */
    if (k->smem > 0 &&
        (r = d->FuncSetAttribute(k->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k->smem)) !=
            CUDA_SUCCESS) {
        st = qjit__cuda_error(ctx, d, r, "cuFuncSetAttribute(max dynamic shared memory)");
        goto fail;
    }
    qjit__cache_entry_release(ctx, &e);
    *out = k;
    return QJIT_OK;
fail:
    qjit__cache_entry_release(ctx, &e);
    kernel_free(ctx, k);
    return st;
}

qjit_status qjit__kernel_get(qjit_context *ctx, const char *key, const qjit__kernel **out)
{
    *out = NULL;
    pthread_mutex_lock(&ctx->lock);
    char *canon = NULL;
    qjit__kernel *k = NULL;
    qjit_status st = qjit__context_driver(ctx);
    if (st == QJIT_OK)
        st = qjit__canonicalize_locked(ctx, key, NULL, &canon);
    if (st == QJIT_OK && !(k = find(ctx->modules, canon))) {
        st = load(ctx, canon, &k);
        if (st == QJIT_OK && (st = add(ctx, k)) != QJIT_OK) {
            kernel_free(ctx, k);
            k = NULL;
        }
    }
    qjit__strfree(ctx, canon);
    pthread_mutex_unlock(&ctx->lock);
    *out = k;
    return st;
}
