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

static void kernel_free(qjit_context *ctx, qjit__kernel *k)
{
    if (!k)
        return;
    if (k->module && ctx->driver.loaded)
        ctx->driver.ModuleUnload(k->module);
    qjit__strfree(ctx, k->key);
    qjit__free(ctx, k, sizeof *k);
}

/* Releases the table and every kernel in it (the context's modules_release). */
static void modules_destroy(qjit_context *ctx)
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

static qjit_status add(qjit_context *ctx, qjit__kernel *k)
{
    if (!ctx->modules) {
        if (!(ctx->modules = qjit__calloc(ctx, sizeof *ctx->modules)))
            return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
        ctx->modules_release = modules_destroy;
    }
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
    qjit_compile_info info;
    void *cubin = NULL;
    size_t cubin_bytes = 0;
    qjit__kernel *k = qjit__calloc(ctx, sizeof *k);
    if (!k || !(k->key = qjit__strdup(ctx, canon))) {
        qjit__free(ctx, k, sizeof *k);
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    }
    qjit_status st = qjit__build_locked(ctx, canon, NULL, &info, &k->facts, &cubin, &cubin_bytes);
    if (st)
        goto fail;
    memcpy(k->entry, info.entry, sizeof k->entry);
    const qjit__driver *d = &ctx->driver;
    const qjit__kernel_facts *f = &k->facts;
    CUresult r;
    if ((st = qjit__check_device(ctx, canon, f->arch, d->cc_major, d->cc_minor, d->name)))
        goto fail;
    if ((size_t)f->smem > d->max_smem_optin) {
        st = qjit__error(ctx, QJIT_DEVICE_TOO_OLD, "variant %s needs %d bytes of shared memory per block; device "
                         "%s allows %zu", canon, f->smem, d->name, d->max_smem_optin);
        goto fail;
    }
    if ((r = d->ModuleLoadData(&k->module, cubin)) != CUDA_SUCCESS) {
        st = qjit__cuda_error(ctx, d, r, "cuModuleLoadData");
        qjit__error_append(ctx, " (variant %s, cache entry %s)", canon, k->entry);
        goto fail;
    }
    if ((r = d->ModuleGetFunction(&k->function, k->module, f->name)) != CUDA_SUCCESS) {
        st = qjit__cuda_error(ctx, d, r, "cuModuleGetFunction");
        qjit__error_append(ctx, " (kernel %s of variant %s)", f->name, canon);
        goto fail;
    }
    /* Always opt in: the 48 KB default covers dynamic plus static shared
     * memory, so a kernel right at 48 KB of dynamic memory needs it too. */
    if (f->smem > 0 &&
        (r = d->FuncSetAttribute(k->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f->smem)) !=
            CUDA_SUCCESS) {
        st = qjit__cuda_error(ctx, d, r, "cuFuncSetAttribute(max dynamic shared memory)");
        goto fail;
    }
    /* Spread (qjit__kernel_smem): a PDL kernel may take all the shared
     * memory a block can opt into. */
    k->smem_max = f->smem;
    if (d->FuncGetAttribute(&k->static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k->function) == CUDA_SUCCESS &&
        f->pdl && (int)d->max_smem_optin - k->static_smem > f->smem &&
        d->FuncSetAttribute(k->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            (int)d->max_smem_optin - k->static_smem) == CUDA_SUCCESS)
        k->smem_max = (int)d->max_smem_optin - k->static_smem;
    qjit__free(ctx, cubin, cubin_bytes);
    *out = k;
    return QJIT_OK;
fail:
    qjit__free(ctx, cubin, cubin_bytes);
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
        st = qjit__canonicalize_locked(ctx, key, NULL, &canon, NULL);
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

int qjit__spread_smem(int smem, int smem_max, int static_smem, int sms, int per_sm, int reserved, int64_t ctas)
{
    if (smem_max <= smem || sms <= 0 || per_sm <= 0 || ctas <= 0)
        return smem;
    int64_t blocks = (ctas + sms - 1) / sms;   /* per SM, spread evenly */
    int64_t spread = per_sm / blocks - reserved - static_smem;
    return spread > smem_max ? smem_max : spread > smem ? (int)spread : smem;
}

unsigned qjit__kernel_smem(const qjit__driver *d, const qjit__kernel *k, const unsigned grid[3])
{
    return (unsigned)qjit__spread_smem(k->facts.smem, k->smem_max, k->static_smem, d->sm_count, d->smem_per_sm,
                                       d->smem_reserved, (int64_t)grid[0] * grid[1] * grid[2]);
}
