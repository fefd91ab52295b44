/* linear.c -- a quantized linear layer on the GPU: packed weights uploaded
 * once, a dispatch table from templates/dispatch.lua (M bucket -> variant),
 * and forward(), whose steady state is two launches (activation kernel,
 * GEMM) -- or one, for GEMMs that quantize their own tokens (actq=fused) --
 * and nothing else: no allocation, no file, no Lua, no lock (kernels are
 * published through atomic pointers once resolved). The TMA pipe adds one
 * host-side tensor-map encode of the activations per call. */
#define _GNU_SOURCE
#include "context.h"
#include "core.h"
#include "generate.h"
#include "lua_vm.h"
#include "module.h"
#include "quant.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BUCKETS 8

typedef struct bucket {
    int64_t max_m;               /* 0: unbounded */
    int tile_m, tile_n, tile_k, split;   /* from the key: they size the workspace */
    int tma;                     /* pipe=tma: launched with tensor maps */
    int cluster;                 /* reduce=cluster: split-K in clusters, no partials or counters */
    uint64_t wmap[16], gmap[16]; /* its CUtensorMaps of the weights and group parameters */
    char *key, *key_acc;         /* FP16 and INT32-accumulator variants */
    _Atomic(const qjit__kernel *) gemm, gemm_acc;
} bucket;

struct qjit_linear {
    qjit_context *ctx;
    qjit_scheme scheme;
    int group;
    int64_t N, K;
    CUdeviceptr weights;         /* the uploaded payload */
    size_t weights_bytes;
    CUdeviceptr qweight, gparams, s0;
    pthread_mutex_t lock;        /* workspace growth and slow-path resolution */
    CUdeviceptr workspace;
    size_t workspace_bytes;
    char *quant_key;
    _Atomic(const qjit__kernel *) quant;
    int nbuckets;
    bucket buckets[MAX_BUCKETS];
};

void qjit_linear_options_init(qjit_linear_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->max_tokens = 1024;
}

static CUdeviceptr device_alloc(qjit_context *ctx, size_t bytes, qjit_status *st)
{
    CUdeviceptr p = 0;
    if (ctx->device_allocator.alloc) {
        p = (CUdeviceptr)ctx->device_allocator.alloc(ctx->device_allocator.ud, bytes);
        *st = p ? QJIT_OK : qjit__error(ctx, QJIT_OUT_OF_MEMORY, "device allocator failed for %zu bytes", bytes);
        return p;
    }
    CUresult r = ctx->driver.MemAlloc(&p, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        *st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of device memory allocating %zu bytes", bytes);
    else
        *st = r == CUDA_SUCCESS ? QJIT_OK : qjit__cuda_error(ctx, &ctx->driver, r, "cuMemAlloc");
    return r == CUDA_SUCCESS ? p : 0;
}

static void device_free(qjit_context *ctx, CUdeviceptr p, size_t bytes)
{
    if (!p)
        return;
    if (ctx->device_allocator.alloc) {
        if (ctx->device_allocator.free)
            ctx->device_allocator.free(ctx->device_allocator.ud, (uint64_t)p, bytes);
    } else {
        ctx->driver.MemFree(p);
    }
}

static const bucket *find_bucket(const qjit_linear *lin, int64_t M)
{
    for (int i = 0; i < lin->nbuckets; i++)
        if (lin->buckets[i].max_m == 0 || M <= lin->buckets[i].max_m)
            return &lin->buckets[i];
    return &lin->buckets[lin->nbuckets - 1];
}

/* Quantizer flags of fused GEMMs (lib/gemm.lua's FUSED_QUANTIZERS). */
#define FUSED_FLAGS 64

/* Workspace, each part 256-byte aligned: Xq (M x K int8), sx (M floats),
 * the quantizer flags of fused GEMMs, the split-K arrival counters (one per
 * output tile) and INT32 partials (split x tile per output tile). */
typedef struct ws_layout {
    size_t sx, flags, counters, partials, total;
    int ncounters;
} ws_layout;

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

static ws_layout workspace_layout(const qjit_linear *lin, const bucket *b, int64_t M)
{
    ws_layout w = {0, 0, 0, 0, 0, 0};
    w.sx = align256((size_t)M * (size_t)lin->K);
    w.flags = w.sx + align256((size_t)M * sizeof(float));
    w.counters = w.flags + align256(FUSED_FLAGS * sizeof(unsigned long long));
    w.partials = w.counters;
    w.total = w.counters;
    if (b->split > 1 && !b->cluster) {
        size_t tiles = (size_t)((lin->N + b->tile_n - 1) / b->tile_n) * (size_t)((M + b->tile_m - 1) / b->tile_m);
        w.ncounters = (int)tiles;
        w.partials = w.counters + align256(tiles * sizeof(unsigned));
        w.total = w.partials + tiles * (size_t)b->split * (size_t)b->tile_m * (size_t)b->tile_n * sizeof(int32_t);
    }
    return w;
}

static int m_in_range(const qjit_linear *lin, int64_t M)
{
    return M > 0 && M <= INT_MAX && (uint64_t)M * (uint64_t)lin->K <= ((uint64_t)1 << 46);
}

qjit_status qjit_linear_workspace_size(const qjit_linear *lin, int64_t M, size_t *bytes)
{
    if (!lin || !bytes)
        return QJIT_INVALID_ARGUMENT;
    if (!m_in_range(lin, M))
        return qjit__error(lin->ctx, QJIT_INVALID_ARGUMENT, "M = %lld is out of range", (long long)M);
    *bytes = workspace_layout(lin, find_bucket(lin, M), M).total;
    return QJIT_OK;
}

/* The largest workspace any M <= max_tokens needs (buckets with split-K can
 * need more at a smaller M than others at a larger one). */
static size_t workspace_for_tokens(const qjit_linear *lin, int64_t max_tokens)
{
    size_t need = workspace_layout(lin, find_bucket(lin, max_tokens), max_tokens).total;
    for (int i = 0; i < lin->nbuckets; i++) {
        int64_t m = lin->buckets[i].max_m;
        if (m > 0 && m < max_tokens) {
            size_t n = workspace_layout(lin, &lin->buckets[i], m).total;
            need = n > need ? n : need;
        }
    }
    return need;
}

/* "tile=16x64x128", "split=2", "pipe=tma" and "reduce=cluster" of a
 * canonical key. */
static void key_shape(const char *key, bucket *b)
{
    const char *t = strstr(key, "tile="), *s = strstr(key, "split=");
    b->tile_m = b->tile_n = b->tile_k = 0;
    b->split = 1;
    if (t)
        sscanf(t + 5, "%dx%dx%d", &b->tile_m, &b->tile_n, &b->tile_k);
    if (s)
        sscanf(s + 6, "%d", &b->split);
    b->tma = strstr(key, ";pipe=tma;") != NULL;
    b->cluster = strstr(key, ";reduce=cluster;") != NULL;
}

/* A 2D tensor map: rows of `cols` elements of `type`, `stride` bytes
 * apart, copied in boxes of box_cols x box_rows; boxes reaching past the
 * tensor are zero-filled. Written into `out` as its 128 bytes (a bucket's
 * allocation need not have CUtensorMap's 64-byte alignment). */
static qjit_status encode_map(qjit_context *ctx, uint64_t out[16], CUtensorMapDataType type, CUdeviceptr base,
                              uint64_t cols, uint64_t rows, uint64_t stride, uint32_t box_cols, uint32_t box_rows,
                              CUtensorMapSwizzle swizzle, const char *what)
{
    CUtensorMap map;
    const cuuint64_t dims[2] = {cols, rows}, strides[1] = {stride};
    const cuuint32_t box[2] = {box_cols, box_rows}, unit[2] = {1, 1};
    CUresult r = ctx->driver.TensorMapEncodeTiled(&map, type, 2, (void *)(uintptr_t)base, dims, strides, box, unit,
                                                  CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return qjit__cuda_error(ctx, &ctx->driver, r, what);
    memcpy(out, &map, 16 * sizeof out[0]);
    return QJIT_OK;
}

/* The tensor maps a pipe=tma bucket's kernels read the layer's constants
 * through: the packed weights as rows of 16-row blocks (512 bytes per
 * 64-k block, as u64) and the group parameters (8 words per group). */
static qjit_status encode_weight_maps(qjit_linear *lin, bucket *b)
{
    const uint64_t kblocks = (uint64_t)lin->K / 64, nblocks = (uint64_t)lin->N / 16;
    if (b->tile_k % 64 || b->tile_n % 16 || b->tile_n / 16 > 256)
        return qjit__error(lin->ctx, QJIT_TEMPLATE, "variant %s: tile unsuitable for tensor maps", b->key);
    qjit_status st = encode_map(lin->ctx, b->wmap, CU_TENSOR_MAP_DATA_TYPE_UINT64, lin->qweight, kblocks * 64, nblocks,
                                kblocks * 512, (uint32_t)(b->tile_k / 64 * 64), (uint32_t)(b->tile_n / 16),
                                CU_TENSOR_MAP_SWIZZLE_NONE, "cuTensorMapEncodeTiled (weights)");
    if (st || lin->group == 0)
        return st;
    const uint64_t groups = (uint64_t)lin->K / (uint64_t)lin->group;
    const uint32_t per_tile = b->tile_k >= lin->group ? (uint32_t)(b->tile_k / lin->group) : 1;
    return encode_map(lin->ctx, b->gmap, CU_TENSOR_MAP_DATA_TYPE_UINT32, lin->gparams, groups * 8, nblocks, groups * 32,
                      per_tile * 8, (uint32_t)(b->tile_n / 16), CU_TENSOR_MAP_SWIZZLE_NONE,
                      "cuTensorMapEncodeTiled (group parameters)");
}

/* Sets a bucket's FP16 key, its INT32-accumulator twin (the same key with
 * the epilogue swapped) and the tile/split read from it. */
static qjit_status set_bucket_key(qjit_context *ctx, bucket *b, const char *key)
{
    qjit__strfree(ctx, b->key);
    qjit__strfree(ctx, b->key_acc);
    b->key = qjit__strdup(ctx, key);
    b->key_acc = qjit__printf(ctx, "%s;epi=i32", key);
    char *f16 = b->key_acc ? strstr(b->key_acc, "epi=f16;") : NULL;
    if (f16)
        memmove(f16, f16 + 8, strlen(f16 + 8) + 1);
    if (!b->key || !b->key_acc)
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    key_shape(key, b);
    if (b->tile_m <= 0 || b->tile_n <= 0 || b->split < 1)
        return qjit__error(ctx, QJIT_TEMPLATE, "variant key lacks tile or split: %s", key);
    return QJIT_OK;
}

/* Replaces every bucket's GEMM key by the canonical form of `forced`,
 * after checking it is a GEMM of the layer's group. */
static qjit_status force_variant(qjit_linear *lin, const char *forced, const char *arch)
{
    qjit_context *ctx = lin->ctx;
    char *canon = NULL;
    qjit_status st = qjit__canonicalize_locked(ctx, forced, arch, &canon);
    if (st)
        return st;
    char want[32];
    snprintf(want, sizeof want, ";g=%d;", lin->group);
    if (!strstr(canon, "kernel=gemm") || !strstr(canon, want)) {
        st = qjit__error(ctx, QJIT_INVALID_ARGUMENT, "forced variant %s must be a GEMM with g=%d, the group of the "
                         "weights", canon, lin->group);
        qjit__strfree(ctx, canon);
        return st;
    }
    for (int i = 0; i < lin->nbuckets && st == QJIT_OK; i++)
        st = set_bucket_key(ctx, &lin->buckets[i], canon);
    qjit__strfree(ctx, canon);
    return st;
}

/* Asks dispatch.lua for the layer's table; a forced variant then replaces
 * every bucket's GEMM key. Caller holds ctx->lock. */
static qjit_status plan(qjit_linear *lin, const char *forced)
{
    qjit_context *ctx = lin->ctx;
    char arch[16], group[16], n[32], k[32];
    qjit_status st = qjit__context_arch_locked(ctx, arch);
    qjit__lua *L;
    if (st || (st = qjit__context_lua(ctx, &L)))
        return st;
    snprintf(group, sizeof group, "%d", lin->group);
    snprintf(n, sizeof n, "%lld", (long long)lin->N);
    snprintf(k, sizeof k, "%lld", (long long)lin->K);
    char sms[16];
    snprintf(sms, sizeof sms, "%d", ctx->driver.sm_count);
    const char *args[6] = {"w4a8-lqq", group, n, k, arch, sms};
    qjit__lua_result r;
    if ((st = qjit__lua_call(L, "dispatch.lua", "plan", 6, args, &r)))
        return st;
    const char *quant = qjit__lua_result_get(&r, "quant");
    const char *count = qjit__lua_result_get(&r, "nbuckets");
    int nb = count ? atoi(count) : 0;
    if (!quant || nb < 1 || nb > MAX_BUCKETS) {
        st = qjit__error(ctx, QJIT_TEMPLATE, "dispatch.lua: plan returned no quant key or %d buckets (1..%d)", nb,
                         MAX_BUCKETS);
        goto done;
    }
    lin->quant_key = qjit__strdup(ctx, quant);
    for (int i = 0; i < nb && st == QJIT_OK; i++) {
        char name[32];
        snprintf(name, sizeof name, "b%d_max", i + 1);
        const char *max = qjit__lua_result_get(&r, name);
        snprintf(name, sizeof name, "b%d_key", i + 1);
        const char *key = qjit__lua_result_get(&r, name);
        if (!max || !key) {
            st = qjit__error(ctx, QJIT_TEMPLATE, "dispatch.lua: bucket %d lacks max or key", i + 1);
            break;
        }
        bucket *b = &lin->buckets[i];
        b->max_m = atoll(max);
        lin->nbuckets = i + 1;
        st = set_bucket_key(ctx, b, key);
    }
    if (st == QJIT_OK && !lin->quant_key)
        st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    if (st == QJIT_OK && forced)
        st = force_variant(lin, forced, arch);
done:
    qjit__lua_result_release(L, &r);
    return st;
}

/* Slow path of a bucket's kernel (b: its bucket; NULL for the activation
 * kernel): build and load, check it fits the layer and is launched the way
 * its bucket's key says, publish. */
static qjit_status resolve(qjit_linear *lin, const bucket *b, const char *key, _Atomic(const qjit__kernel *) *slot,
                           const qjit__kernel **out)
{
    const qjit__kernel *k;
    qjit_status st = qjit__kernel_get(lin->ctx, key, &k);
    if (st)
        return st;
    if (!strcmp(k->kind, "gemm")) {
        if (lin->K % k->k_step || lin->N % k->n_unit)
            return qjit__error(lin->ctx, QJIT_INVALID_ARGUMENT, "variant %s needs K %% %d == 0 and N %% %d == 0; "
                               "the layer is N=%lld K=%lld", k->key, k->k_step, k->n_unit, (long long)lin->N,
                               (long long)lin->K);
        if (k->group != lin->group)
            return qjit__error(lin->ctx, QJIT_INVALID_ARGUMENT, "variant %s has group %d; the weights have %d",
                               k->key, k->group, lin->group);
        if (b && k->tma != b->tma)
            return qjit__error(lin->ctx, QJIT_TEMPLATE, "variant %s %s tensor maps, but its key says pipe%stma",
                               k->key, k->tma ? "takes" : "takes no", b->tma ? "=" : "!=");
        if (b && ((k->cluster > 1) != b->cluster || (b->cluster && k->cluster != b->split)))
            return qjit__error(lin->ctx, QJIT_TEMPLATE, "variant %s is launched in clusters of %d CTAs, but its "
                               "key says split=%d%s", k->key, k->cluster, b->split,
                               b->cluster ? ";reduce=cluster" : "");
    }
    atomic_store_explicit(slot, k, memory_order_release);
    *out = k;
    return QJIT_OK;
}

static qjit_status get_kernel(qjit_linear *lin, const bucket *b, const char *key,
                              _Atomic(const qjit__kernel *) *slot, const qjit__kernel **out)
{
    *out = atomic_load_explicit(slot, memory_order_acquire);
    return *out ? QJIT_OK : resolve(lin, b, key, slot, out);
}

qjit_status qjit_linear_create(qjit_context *ctx, const void *packed, size_t bytes, const qjit_linear_options *opts_in,
                               qjit_linear **out)
{
    if (!ctx || !out)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_linear_create: NULL context or out");
    *out = NULL;
    qjit_linear_options opts;
    qjit_linear_options_init(&opts);
    if (opts_in) {
        if (opts_in->struct_size == 0 || opts_in->struct_size > sizeof opts)
            return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_linear_options.struct_size is %zu", opts_in->struct_size);
        memcpy(&opts, opts_in, opts_in->struct_size);
    }
    if (opts.max_tokens <= 0 || opts.max_tokens > INT_MAX)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "max_tokens = %lld must be in 1..%d", (long long)opts.max_tokens,
                           INT_MAX);
    qjit__weights_view v;
    qjit_status st = qjit__weights_view_init(ctx, packed, bytes, 1, &v);
    if (st)
        return st;
    qjit_linear *lin = qjit__calloc(ctx, sizeof *lin);
    if (!lin)
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    lin->ctx = ctx;
    lin->scheme = v.scheme;
    lin->group = v.group;
    lin->N = v.N;
    lin->K = v.K;
    pthread_mutex_init(&lin->lock, NULL);

    pthread_mutex_lock(&ctx->lock);
    st = qjit__context_driver(ctx);
    if (st == QJIT_OK)
        st = plan(lin, opts.variant);
    if (st == QJIT_OK && (lin->weights = device_alloc(ctx, v.payload_bytes, &st)) != 0) {
        lin->weights_bytes = v.payload_bytes;
        CUresult r = ctx->driver.MemcpyHtoD(lin->weights, v.payload, v.payload_bytes);
        if (r != CUDA_SUCCESS)
            st = qjit__cuda_error(ctx, &ctx->driver, r, "cuMemcpyHtoD (weights)");
    }
    if (st == QJIT_OK) {
        lin->workspace_bytes = workspace_for_tokens(lin, opts.max_tokens);
        lin->workspace = device_alloc(ctx, lin->workspace_bytes, &st);
    }
    pthread_mutex_unlock(&ctx->lock);
    if (st)
        goto fail;
    lin->qweight = lin->weights + v.qweight_offset;
    lin->gparams = lin->weights + v.gparams_offset;
    lin->s0 = lin->weights + v.s0_offset;
    for (int i = 0; i < lin->nbuckets; i++)
        if (lin->buckets[i].tma && (st = encode_weight_maps(lin, &lin->buckets[i])))
            goto fail;
    if (opts.eager || opts.variant) {
        const qjit__kernel *k;
        if ((st = get_kernel(lin, NULL, lin->quant_key, &lin->quant, &k)))
            goto fail;
        for (int i = 0; i < lin->nbuckets; i++)
            if ((st = get_kernel(lin, &lin->buckets[i], lin->buckets[i].key, &lin->buckets[i].gemm, &k)))
                goto fail;
    }
    *out = lin;
    return QJIT_OK;
fail:
    qjit_linear_destroy(lin);
    return st;
}

void qjit_linear_destroy(qjit_linear *lin)
{
    if (!lin)
        return;
    qjit_context *ctx = lin->ctx;
    pthread_mutex_lock(&ctx->lock);
    if (ctx->driver.loaded && qjit__driver_bind(ctx, &ctx->driver) == QJIT_OK) {
        device_free(ctx, lin->weights, lin->weights_bytes);
        device_free(ctx, lin->workspace, lin->workspace_bytes);
    }
    pthread_mutex_unlock(&ctx->lock);
    for (int i = 0; i < lin->nbuckets; i++) {
        qjit__strfree(ctx, lin->buckets[i].key);
        qjit__strfree(ctx, lin->buckets[i].key_acc);
    }
    qjit__strfree(ctx, lin->quant_key);
    pthread_mutex_destroy(&lin->lock);
    qjit__free(ctx, lin, sizeof *lin);
}

qjit_status qjit_linear_variant(qjit_linear *lin, int64_t M, char *buf, size_t size)
{
    if (!lin || !buf || M <= 0)
        return QJIT_INVALID_ARGUMENT;
    const bucket *b = find_bucket(lin, M);
    if (strlen(b->key) >= size)
        return qjit__error(lin->ctx, QJIT_OVERFLOW, "buffer too small for the variant key");
    memcpy(buf, b->key, strlen(b->key) + 1);
    return QJIT_OK;
}

/* The forward path; acc selects the INT32-accumulator epilogue. */
static qjit_status forward(qjit_linear *lin, int64_t M, const void *X, void *out, void *workspace,
                           size_t workspace_bytes, void *stream, int acc)
{
    if (!lin)
        return QJIT_INVALID_ARGUMENT;
    qjit_context *ctx = lin->ctx;
    if (!m_in_range(lin, M))
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "M = %lld: the token count must be in 1..%d (and M x K "
                           "below 2^46)", (long long)M, INT_MAX);
    if (!X || !out)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "%s is NULL", X ? "the output pointer" : "X");
    if (((uintptr_t)X | (uintptr_t)out) & 15)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "%s is not 16-byte aligned (%p)",
                           ((uintptr_t)X & 15) ? "X" : "the output pointer", ((uintptr_t)X & 15) ? X : out);
    const bucket *b = find_bucket(lin, M);
    const ws_layout wl = workspace_layout(lin, b, M);
    size_t need = wl.total;
    if (workspace && (((uintptr_t)workspace & 255) || workspace_bytes < need))
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "workspace must be 256-byte aligned and hold %zu bytes "
                           "for M = %lld (got %zu at %p)", need, (long long)M, workspace_bytes, workspace);
    bucket *bm = (bucket *)b;
    const qjit__kernel *quant, *gemm;
    qjit_status st = get_kernel(lin, NULL, lin->quant_key, &lin->quant, &quant);
    if (st || (st = get_kernel(lin, b, acc ? b->key_acc : b->key, acc ? &bm->gemm_acc : &bm->gemm, &gemm)))
        return st;
    /* Refuse a launch too large before anything (the workspace) changes. */
    unsigned gx = (unsigned)((lin->N + gemm->tile_n - 1) / gemm->tile_n);
    int64_t gy64 = (M + gemm->tile_m - 1) / gemm->tile_m;
    if (gy64 > 65535)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "M = %lld needs %lld token tiles of %d; a launch allows "
                           "65535: split the call", (long long)M, (long long)gy64, gemm->tile_m);
    unsigned gy = (unsigned)gy64;
    const qjit__driver *d = &ctx->driver;
    CUcontext current = NULL;
    if (d->CtxGetCurrent(&current) != CUDA_SUCCESS || current != d->context)
        d->CtxSetCurrent(d->context);
    CUdeviceptr ws = (CUdeviceptr)(uintptr_t)workspace;
    if (!ws) {
        if (need > lin->workspace_bytes) {
            /* Growing is the one allocation forward may make: when M first
             * exceeds what the layer was created for. */
            pthread_mutex_lock(&lin->lock);
            if (need > lin->workspace_bytes) {
                CUdeviceptr grown = device_alloc(ctx, need, &st);
                if (grown) {
                    d->StreamSynchronize((CUstream)stream);
                    device_free(ctx, lin->workspace, lin->workspace_bytes);
                    lin->workspace = grown;
                    lin->workspace_bytes = need;
                }
            }
            pthread_mutex_unlock(&lin->lock);
            if (st)
                return st;
        }
        ws = lin->workspace;
    }
    CUdeviceptr xq = ws, sx = ws + wl.sx, counters = ws + wl.counters, partials = ws + wl.partials;
    int ncounters = wl.ncounters;
    int m32 = (int)M, n32 = (int)lin->N, k32 = (int)lin->K;
    CUdeviceptr x = (CUdeviceptr)(uintptr_t)X, y = (CUdeviceptr)(uintptr_t)out;
    /* The GEMM's arguments: the eleven every GEMM takes, then the three
     * tensor maps (pipe=tma) or the tokens, quantizer flags and this call's
     * epoch (actq=fused). The driver copies argument values at the launch,
     * so the maps are passed from where they are kept. */
    uint64_t xmap[16];
    CUdeviceptr flags = ws + wl.flags;
    unsigned long long epoch = 1;
    void *args[14] = {&lin->qweight, &lin->gparams, &lin->s0, &xq, &sx, &y, &m32, &n32, &k32, &partials,
                      &counters, NULL, NULL, NULL};
    CUresult r;
    if (gemm->tma) {
        /* Xq as M rows of K bytes, in boxes of the tile's K step x its
         * tokens, 128-byte swizzled as the wgmma reads them. */
        st = encode_map(ctx, xmap, CU_TENSOR_MAP_DATA_TYPE_UINT8, xq, (uint64_t)lin->K, (uint64_t)M,
                        (uint64_t)lin->K, (uint32_t)b->tile_k, (uint32_t)b->tile_m, CU_TENSOR_MAP_SWIZZLE_128B,
                        "cuTensorMapEncodeTiled (activations)");
        if (st)
            return st;
        args[11] = xmap;
        args[12] = bm->wmap;
        args[13] = bm->gmap;
    } else if (gemm->fused) {
        /* One launch: the GEMM quantizes its tokens and publishes this
         * call's epoch in the flags (lib/gemm.lua, token_wait). A graph
         * replays its launches with their arguments, so while the stream
         * is captured the flags are cleared in the graph and the epoch is
         * the one value (1) no uncaptured call uses. */
        CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
        if ((r = d->StreamIsCapturing((CUstream)stream, &capture)) != CUDA_SUCCESS)
            return qjit__cuda_error(ctx, d, r, "asking whether the stream is being captured");
        if (capture != CU_STREAM_CAPTURE_STATUS_NONE) {
            if ((r = d->MemsetD8Async(flags, 0, FUSED_FLAGS * sizeof(unsigned long long), (CUstream)stream)) !=
                CUDA_SUCCESS)
                return qjit__cuda_error(ctx, d, r, "clearing the quantizer flags");
        } else {
            do
                epoch = atomic_fetch_add(&ctx->epoch, 1) + 1;
            while (epoch < 2);
        }
        args[11] = &x;
        args[12] = &flags;
        args[13] = &epoch;
    }
    if (!gemm->fused) {
        void *qargs[] = {&x, &xq, &sx, &m32, &k32, &counters, &ncounters};
        r = d->LaunchKernel(quant->function, (unsigned)M, 1, 1, (unsigned)quant->threads, 1, 1, 0,
                            (CUstream)stream, qargs, NULL);
        if (r != CUDA_SUCCESS)
            return qjit__cuda_error(ctx, d, r, "launching the activation quantization");
    }
    if (gemm->pdl || gemm->cluster > 1) {
        /* PDL: may start before the quantization finishes; the kernel waits
         * for it (griddepcontrol.wait) before reading what it wrote.
         * Cluster: the split-K slices of a tile run together, one cluster. */
        CUlaunchAttribute attr[2];
        unsigned nattr = 0;
        memset(attr, 0, sizeof attr);
        if (gemm->pdl) {
            attr[nattr].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            attr[nattr++].value.programmaticStreamSerializationAllowed = 1;
        }
        if (gemm->cluster > 1) {
            attr[nattr].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attr[nattr].value.clusterDim.x = 1;
            attr[nattr].value.clusterDim.y = 1;
            attr[nattr++].value.clusterDim.z = (unsigned)gemm->cluster;
        }
        CUlaunchConfig cfg = {gx, gy, (unsigned)b->split, (unsigned)gemm->threads, 1, 1, (unsigned)gemm->smem,
                              (CUstream)stream, attr, nattr};
        r = d->LaunchKernelEx(&cfg, gemm->function, args, NULL);
    } else {
        r = d->LaunchKernel(gemm->function, gx, gy, (unsigned)b->split, (unsigned)gemm->threads, 1, 1,
                            (unsigned)gemm->smem, (CUstream)stream, args, NULL);
    }
    if (r != CUDA_SUCCESS)
        return qjit__cuda_error(ctx, d, r, "launching the GEMM");
    return QJIT_OK;
}

qjit_status qjit_linear_forward(qjit_linear *lin, int64_t M, const void *X, void *Y, void *workspace,
                                size_t workspace_bytes, void *stream)
{
    return forward(lin, M, X, Y, workspace, workspace_bytes, stream, 0);
}

qjit_status qjit_linear_forward_acc(qjit_linear *lin, int64_t M, const void *X, int32_t *acc, void *workspace,
                                    size_t workspace_bytes, void *stream)
{
    return forward(lin, M, X, acc, workspace, workspace_bytes, stream, 1);
}
