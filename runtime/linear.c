/* linear.c -- a quantized linear layer on the GPU: packed weights uploaded
 * once, the launch plan of templates/dispatch.lua (per M bucket: kernels,
 * their argument slots, workspace sections, tensor maps) bound once per
 * bucket, and forward(), whose steady state is the bucket's launches (the
 * activation kernel and the GEMM, or the GEMM alone when it quantizes its
 * own tokens) and nothing else: no allocation, no file, no Lua, no lock
 * (kernels are published through atomic pointers once resolved). A forward
 * fills in only what changes per call: M, the tokens, the output, the
 * workspace addresses, tensor maps of the workspace and output, and the
 * epoch. */
#define _GNU_SOURCE
#include "context.h"
#include "core.h"
#include "module.h"
#include "packed.h"
#include "plan.h"
#include "record.h"
#include "residual.h"
#include "tune.h"

#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A kernel's arguments as bound for a bucket: the constant slots point into
 * the layer or the bucket; a forward copies the array and points the
 * per-call slots (listed in `call`) at values of its own. */
typedef struct binding {
    const qjit__kernel_plan *plan;
    void *args[QJIT__PLAN_SLOTS];
    int ncall;
    unsigned char call[QJIT__PLAN_SLOTS];
} binding;

typedef struct bucket {
    const qjit__bucket_plan *plan;
    binding quant, gemm, gemm_acc;
    uint64_t maps[QJIT__PLAN_MAPS][16];   /* tensor maps of weight sections (CUtensorMap bytes) */
    _Atomic(const qjit__kernel *) quant_k, gemm_k, gemm_acc_k;
} bucket;

struct qjit_linear {
    qjit_context *ctx;
    int64_t K;
    int n32, k32;                /* N and K as the kernels take them */
    int param32;                 /* the layer's parameter as they take it (slot kind "param") */
    CUdeviceptr weights;         /* the uploaded payload (then the derived sections and the bias) */
    CUdeviceptr bias;            /* N floats in the weights' allocation, or 0: no bias */
    size_t weights_bytes;
    CUdeviceptr section[QJIT__PLAN_SECTIONS];   /* device address of each planned section */
    pthread_mutex_t lock;        /* workspace growth */
    CUdeviceptr workspace;
    size_t workspace_bytes;
    qjit__layer_plan plan;
    bucket buckets[QJIT__PLAN_BUCKETS];
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
    int n = lin->plan.nbuckets;
    for (int i = 0; i < n; i++)
        if (lin->buckets[i].plan->max_m == 0 || M <= lin->buckets[i].plan->max_m)
            return &lin->buckets[i];
    return &lin->buckets[n - 1];
}

/*------------------------------------------------------------------------
 * Workspace
 *------------------------------------------------------------------------*/

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

/* Offsets and sizes of a bucket's workspace sections at M, in plan order,
 * each 256-byte aligned; returns the total. */
static size_t ws_layout(const qjit__bucket_plan *b, int64_t M, size_t offset[], size_t size[])
{
    size_t at = 0;
    uint64_t mtiles = (uint64_t)((M + b->tile_m - 1) / b->tile_m);
    for (int i = 0; i < b->nws; i++) {
        const qjit__ws_section *w = &b->ws[i];
        size[i] = (size_t)(w->fixed + w->per_m * (uint64_t)M + w->per_mtile * mtiles);
        offset[i] = at;
        at = align256(at + size[i]);
    }
    return at;
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
    size_t off[QJIT__PLAN_WS], size[QJIT__PLAN_WS];
    *bytes = ws_layout(find_bucket(lin, M)->plan, M, off, size);
    return QJIT_OK;
}

/* The largest workspace any M <= max_tokens needs (buckets with split-K can
 * need more at a smaller M than others at a larger one). */
static size_t workspace_for_tokens(const qjit_linear *lin, int64_t max_tokens)
{
    size_t off[QJIT__PLAN_WS], size[QJIT__PLAN_WS];
    size_t need = ws_layout(find_bucket(lin, max_tokens)->plan, max_tokens, off, size);
    for (int i = 0; i < lin->plan.nbuckets; i++) {
        int64_t m = lin->plan.buckets[i].max_m;
        if (m > 0 && m < max_tokens) {
            size_t n = ws_layout(&lin->plan.buckets[i], m, off, size);
            need = n > need ? n : need;
        }
    }
    return need;
}

/*------------------------------------------------------------------------
 * Binding
 *------------------------------------------------------------------------*/

/* A 2D tensor map (map's geometry over `base`, with `rows` rows), written
 * into out as its 128 bytes (storage need not have CUtensorMap's 64-byte
 * alignment). */
static qjit_status encode_map(qjit_context *ctx, uint64_t out[16], const qjit__map_plan *m, CUdeviceptr base,
                              uint64_t rows)
{
    static const CUtensorMapDataType types[] = {[QJIT__MAP_U8] = CU_TENSOR_MAP_DATA_TYPE_UINT8,
                                                [QJIT__MAP_U16] = CU_TENSOR_MAP_DATA_TYPE_UINT16,
                                                [QJIT__MAP_U32] = CU_TENSOR_MAP_DATA_TYPE_UINT32,
                                                [QJIT__MAP_U64] = CU_TENSOR_MAP_DATA_TYPE_UINT64};
    CUtensorMap map;
    const cuuint64_t dims[2] = {m->cols, rows}, strides[1] = {m->stride};
    const cuuint32_t box[2] = {m->box_cols, m->box_rows}, unit[2] = {1, 1};
    CUresult r = ctx->driver.TensorMapEncodeTiled(&map, types[m->type], 2, (void *)(uintptr_t)base,
                                                  dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                                  m->swizzle == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                                                                    : CU_TENSOR_MAP_SWIZZLE_NONE,
                                                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        qjit_status st = qjit__cuda_error(ctx, &ctx->driver, r, "cuTensorMapEncodeTiled");
        qjit__error_append(ctx, " (tensor map %s)", m->name);
        return st;
    }
    memcpy(out, &map, 16 * sizeof out[0]);
    return QJIT_OK;
}

/* What an optional workspace slot the bucket lacks is bound to: a null
 * address or a count of 0 (both zero bytes). */
static const CUdeviceptr absent_slot = 0;

/* Points a kernel's constant slots at the layer's values and lists its
 * per-call ones. */
static void bind(qjit_linear *lin, bucket *b, const qjit__kernel_plan *kp, binding *out)
{
    memset(out, 0, sizeof *out);
    out->plan = kp;
    for (int i = 0; i < kp->nslots; i++) {
        const qjit__slot *s = &kp->slots[i];
        if (s->ref < 0) {
            out->args[i] = (void *)&absent_slot;
            continue;
        }
        switch (s->kind) {
        case QJIT__SLOT_WEIGHTS:
            out->args[i] = &lin->section[s->ref];
            break;
        case QJIT__SLOT_N:
            out->args[i] = &lin->n32;
            break;
        case QJIT__SLOT_K:
            out->args[i] = &lin->k32;
            break;
        case QJIT__SLOT_PARAM:
            out->args[i] = &lin->param32;
            break;
        case QJIT__SLOT_BIAS:
            out->args[i] = &lin->bias;
            break;
        case QJIT__SLOT_MAP:
            /* Maps of the weights are the bucket's; those of the workspace
             * and the output change per call. */
            if (b->plan->maps[s->ref].source == QJIT__MAP_OF_WEIGHTS)
                out->args[i] = b->maps[s->ref];
            else
                out->call[out->ncall++] = (unsigned char)i;
            break;
        default:
            out->call[out->ncall++] = (unsigned char)i;
            break;
        }
    }
}

/* Resolves a bucket's kernel and checks it is the one its plan binds:
 * same parameters (signature) and the same cluster shape. */
static qjit_status resolve(qjit_linear *lin, const binding *bd,
                           _Atomic(const qjit__kernel *) *slot, const qjit__kernel **out)
{
    const qjit__kernel *k;
    qjit_status st = qjit__kernel_get(lin->ctx, bd->plan->key, &k);
    if (st)
        return st;
    if (strcmp(k->facts.signature, bd->plan->signature))
        return qjit__error(lin->ctx, QJIT_TEMPLATE, "variant %s takes (%s), but its launch plan binds (%s): the "
                           "templates disagree", k->key, k->facts.signature, bd->plan->signature);
    if (k->facts.cluster != bd->plan->cluster)
        return qjit__error(lin->ctx, QJIT_TEMPLATE, "variant %s is launched in clusters of %d CTAs, but its plan "
                           "says %d", k->key, k->facts.cluster, bd->plan->cluster);
    atomic_store_explicit(slot, k, memory_order_release);
    *out = k;
    return QJIT_OK;
}

static qjit_status get_kernel(qjit_linear *lin, const binding *bd,
                              _Atomic(const qjit__kernel *) *slot, const qjit__kernel **out)
{
    *out = atomic_load_explicit(slot, memory_order_acquire);
    return *out ? QJIT_OK : resolve(lin, bd, slot, out);
}

/* Section i of the buffer in plan order: the scheme's, then the residual's. */
static const qjit__section_view *stored_section(const qjit__weights_view *v, int i)
{
    return i < v->nsections ? &v->sections[i] : &v->residual.sections[i - v->nsections];
}

static int stored_sections(const qjit__weights_view *v)
{
    return v->nsections + (v->residual.block_n ? QJIT__RESIDUAL_SECTIONS : 0);
}

/* Bytes of a derived section as the layer builds it; -1: none by that name. */
static int64_t derived_bytes(const qjit__weights_view *v, const char *name)
{
    return !strcmp(name, "rmask") && v->residual.block_n ? (int64_t)qjit__residual_mask_bytes(&v->residual) : -1;
}

/* The plan's sections against the buffer's: the stored ones with the same
 * names and sizes, in order, then the ones the layer derives. */
static qjit_status check_sections(qjit_context *ctx, const qjit__layer_plan *p, const qjit__weights_view *v)
{
    int stored = 0;
    while (stored < p->nsections && !p->sections[stored].derived)
        stored++;
    if (stored != stored_sections(v))
        return qjit__error(ctx, QJIT_TEMPLATE, "the plan expects %d packed sections; scheme %s's buffer has %d",
                           stored, v->scheme->name, stored_sections(v));
    for (int i = 0; i < stored; i++) {
        const qjit__section_view *sv = stored_section(v, i);
        if (strcmp(p->sections[i].name, sv->name) || p->sections[i].bytes != sv->bytes)
            return qjit__error(ctx, QJIT_TEMPLATE, "the plan expects section %d to be %s of %llu bytes; the buffer's "
                               "is %s of %zu bytes (templates/schemes/%s.lua and the host disagree)", i,
                               p->sections[i].name, (unsigned long long)p->sections[i].bytes, sv->name, sv->bytes,
                               v->scheme->name);
    }
    for (int i = stored; i < p->nsections; i++)
        if (derived_bytes(v, p->sections[i].name) != (int64_t)p->sections[i].bytes)
            return qjit__error(ctx, QJIT_TEMPLATE, "the plan derives section %s of %llu bytes, which this layer "
                               "cannot build (%lld bytes)", p->sections[i].name,
                               (unsigned long long)p->sections[i].bytes,
                               (long long)derived_bytes(v, p->sections[i].name));
    return QJIT_OK;
}

/* Builds what the layer derives from the buffer, in host memory laid out as
 * on the device (each part 256-byte aligned from 0): the plan's derived
 * sections (rmask) at offset[i]; *bytes: the total. */
static qjit_status build_derived(qjit_context *ctx, const qjit__layer_plan *p, const qjit__weights_view *v,
                                 size_t offset[], uint8_t **out, size_t *bytes)
{
    size_t at = 0;
    int mask = -1;
    for (int i = 0; i < p->nsections; i++)
        if (p->sections[i].derived) {
            offset[i] = at;
            at = align256(at + (size_t)p->sections[i].bytes);
            mask = i;     /* rmask, the one derived section (check_sections) */
        }
    *out = NULL;
    *bytes = at;
    if (!at)
        return QJIT_OK;
    if (!(*out = qjit__calloc(ctx, at)))
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory building the residual's index (%zu bytes)", at);
    qjit__residual_mask(&v->residual, (uint32_t *)(void *)(*out + offset[mask]));
    return QJIT_OK;
}

/* The picks of the tuning record for the layer of req on this device, or
 * NULL (none, or one that cannot be read: logged). Caller holds ctx->lock. */
static char *record_picks(qjit_context *ctx, const qjit__plan_request *req)
{
    const qjit__record_layer layer = {req->scheme, req->group, req->N, req->K, req->dtype, req->bias,
                                      req->rblock_n, req->rblock_k, req->rblocks};
    qjit__record_device dev;
    char *picks = NULL;
    qjit_status st = qjit__record_device_now(ctx, &dev);
    if (!st)
        st = qjit__record_load(ctx, ctx->cache_dir, &layer, &dev, &picks);
    if (st && st != QJIT_NOT_FOUND)
        qjit__log(ctx, "tuning record of %s g=%d %lldx%lld not used: %s", req->scheme, req->group,
                  (long long)req->N, (long long)req->K, qjit_last_error(ctx));
    return st ? NULL : picks;
}

/* Asks for the plan (codegen), checks it against the buffer. Caller holds
 * ctx->lock. */
static qjit_status make_plan(qjit_linear *lin, const qjit__weights_view *v, const char *variant, qjit_dtype dtype,
                             int bias, const char *given_picks)
{
    qjit_context *ctx = lin->ctx;
    char arch[16];
    qjit_status st = qjit__context_arch_locked(ctx, arch);
    if (st)
        return st;
    qjit__plan_request req = {v->scheme->name, v->group, v->N, v->K, arch, ctx->driver.sm_count, variant,
                              v->residual.block_n, v->residual.block_k, v->residual.blocks,
                              dtype == QJIT_DTYPE_BF16 ? "bf16" : "f16", bias, NULL};
    /* Picks given (the tuner's) are planned as they are. Else a tuning
     * record for this layer on this device takes the table's place unless
     * a variant is forced; one that cannot be read or planned is logged and
     * the table used. */
    int planned = 0;
    if (given_picks) {
        req.picks = given_picks;
        if ((st = qjit__plan_layer(ctx, &req, &lin->plan)))
            return st;
        planned = 1;
    } else if (!(variant && variant[0])) {
        char *record = record_picks(ctx, &req);
        req.picks = record;
        if (record && !(planned = qjit__plan_layer(ctx, &req, &lin->plan) == QJIT_OK)) {
            qjit__log(ctx, "tuning record of %s g=%d %lldx%lld not used: %s", req.scheme, req.group,
                      (long long)req.N, (long long)req.K, qjit_last_error(ctx));
            qjit__plan_release(ctx, &lin->plan);
        }
        qjit__strfree(ctx, record);
    }
    req.picks = NULL;
    if (!planned && (st = qjit__plan_layer(ctx, &req, &lin->plan)))
        return st;
    for (int i = 0; i < lin->plan.nbuckets; i++)
        lin->buckets[i].plan = &lin->plan.buckets[i];
    return check_sections(ctx, &lin->plan, v);
}

qjit_status qjit_linear_create(qjit_context *ctx, const void *packed, size_t bytes, const qjit_linear_options *opts_in,
                               qjit_linear **out)
{
    return qjit__linear_create_picks(ctx, packed, bytes, opts_in, NULL, out);
}

qjit_status qjit__linear_create_picks(qjit_context *ctx, const void *packed, size_t bytes,
                                      const qjit_linear_options *opts_in, const char *picks, qjit_linear **out)
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
    if (opts.dtype == 0)
        opts.dtype = QJIT_DTYPE_F16;
    if (opts.dtype != QJIT_DTYPE_F16 && opts.dtype != QJIT_DTYPE_BF16)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_linear_options.dtype = %d: a layer's tokens and "
                           "outputs are QJIT_DTYPE_F16 or QJIT_DTYPE_BF16", (int)opts.dtype);
    if (opts.max_tokens <= 0 || opts.max_tokens > INT_MAX)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "max_tokens = %lld must be in 1..%d", (long long)opts.max_tokens,
                           INT_MAX);
    qjit__weights_view v;
    qjit_status st = qjit__weights_view_init(ctx, packed, bytes, 1, &v);
    if (st || (st = qjit__residual_check_sums(ctx, &v)))   /* the kernels add it in INT8 */
        return st;
    for (int64_t n = 0; opts.bias && n < v.N; n++)
        if (!isfinite(opts.bias[n]))
            return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_linear_options.bias[%lld] = %g is not finite",
                               (long long)n, (double)opts.bias[n]);
    qjit_linear *lin = qjit__calloc(ctx, sizeof *lin);
    if (!lin)
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    lin->ctx = ctx;
    lin->K = v.K;
    lin->n32 = (int)v.N;
    lin->k32 = (int)v.K;
    lin->param32 = (int)qjit__int8_channels(&v);
    pthread_mutex_init(&lin->lock, NULL);

    pthread_mutex_lock(&ctx->lock);
    st = qjit__context_driver(ctx);
    if (st == QJIT_OK)
        st = make_plan(lin, &v, opts.variant, opts.dtype, opts.bias != NULL, picks);
    /* The payload as stored, then the sections the layer derives from it. */
    size_t derived_at[QJIT__PLAN_SECTIONS] = {0}, derived_size = 0;
    size_t payload_span = align256(v.payload_bytes);
    uint8_t *derived = NULL;
    if (st == QJIT_OK)
        st = build_derived(ctx, &lin->plan, &v, derived_at, &derived, &derived_size);
    /* The bias after the derived sections. */
    const size_t bias_at = payload_span + align256(derived_size), bias_bytes = opts.bias ? 4 * (size_t)v.N : 0;
    if (st == QJIT_OK && (lin->weights = device_alloc(ctx, bias_at + bias_bytes, &st)) != 0) {
        lin->weights_bytes = bias_at + bias_bytes;
        CUresult r = ctx->driver.MemcpyHtoD(lin->weights, v.payload, v.payload_bytes);
        if (r == CUDA_SUCCESS && derived_size)
            r = ctx->driver.MemcpyHtoD(lin->weights + payload_span, derived, derived_size);
        if (r == CUDA_SUCCESS && bias_bytes) {
            lin->bias = lin->weights + bias_at;
            r = ctx->driver.MemcpyHtoD(lin->bias, opts.bias, bias_bytes);
        }
        if (r != CUDA_SUCCESS)
            st = qjit__cuda_error(ctx, &ctx->driver, r, "cuMemcpyHtoD (weights)");
    }
    if (derived)
        qjit__free(ctx, derived, derived_size);
    if (st == QJIT_OK) {
        lin->workspace_bytes = workspace_for_tokens(lin, opts.max_tokens);
        /* Zeroed once: the GEMMs leave their counters as they find them,
         * so GEMMs on the caller's tokens (no activation kernel before
         * them to zero the counters) find them zeroed. */
        if ((lin->workspace = device_alloc(ctx, lin->workspace_bytes, &st)) != 0) {
            CUresult r = ctx->driver.MemsetD8(lin->workspace, 0, lin->workspace_bytes);
            if (r != CUDA_SUCCESS)
                st = qjit__cuda_error(ctx, &ctx->driver, r, "cuMemsetD8 (workspace)");
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    if (st)
        goto fail;
    for (int i = 0; i < lin->plan.nsections; i++)
        lin->section[i] = lin->weights + (lin->plan.sections[i].derived ? payload_span + derived_at[i]
                                                                         : stored_section(&v, i)->offset);
    /* Bind every bucket: tensor maps of the weights, then the slots. */
    for (int i = 0; i < lin->plan.nbuckets; i++) {
        bucket *b = &lin->buckets[i];
        for (int m = 0; m < b->plan->nmaps; m++) {
            const qjit__map_plan *mp = &b->plan->maps[m];
            if (mp->source == QJIT__MAP_OF_WEIGHTS && (st = encode_map(ctx, b->maps[m], mp, lin->section[mp->ref], mp->rows)))
                goto fail;
        }
        if (b->plan->has_quant)
            bind(lin, b, &b->plan->quant, &b->quant);
        bind(lin, b, &b->plan->gemm, &b->gemm);
        bind(lin, b, &b->plan->gemm_acc, &b->gemm_acc);
    }
    if (opts.eager || opts.variant) {
        const qjit__kernel *k;
        for (int i = 0; i < lin->plan.nbuckets; i++) {
            bucket *b = &lin->buckets[i];
            if ((b->plan->has_quant && (st = get_kernel(lin, &b->quant, &b->quant_k, &k))) ||
                (st = get_kernel(lin, &b->gemm, &b->gemm_k, &k)))
                goto fail;
        }
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
    qjit__plan_release(ctx, &lin->plan);
    pthread_mutex_destroy(&lin->lock);
    qjit__free(ctx, lin, sizeof *lin);
}

qjit_status qjit_linear_variant(qjit_linear *lin, int64_t M, char *buf, size_t size)
{
    if (!lin || !buf || M <= 0)
        return QJIT_INVALID_ARGUMENT;
    const char *key = find_bucket(lin, M)->plan->gemm.key;
    if (strlen(key) >= size)
        return qjit__error(lin->ctx, QJIT_OVERFLOW, "buffer too small for the variant key");
    memcpy(buf, key, strlen(key) + 1);
    return QJIT_OK;
}

/*------------------------------------------------------------------------
 * Forward
 *------------------------------------------------------------------------*/

/* The values of one call that slots bind. */
typedef struct call {
    int32_t m;
    CUdeviceptr x, y;
    CUdeviceptr at[QJIT__PLAN_WS];       /* each workspace section's address (the caller's tokens: theirs) */
    size_t size[QJIT__PLAN_WS];
    unsigned long long epoch;
    uint64_t maps[QJIT__PLAN_MAPS][16];   /* tensor maps of the workspace and output, this call's */
} call;

/* One value per per-call slot, where the kernel's arguments point. */
typedef union slot_value {
    CUdeviceptr ptr;
    int32_t i32;
} slot_value;

/* Fills a kernel's argument array for this call. */
static qjit_status call_args(qjit_linear *lin, const bucket *b, const binding *bd, call *c, void *args[],
                             slot_value vals[])
{
    memcpy(args, bd->args, sizeof bd->args);
    for (int j = 0; j < bd->ncall; j++) {
        int i = bd->call[j];
        const qjit__slot *s = &bd->plan->slots[i];
        args[i] = &vals[i];
        switch (s->kind) {
        case QJIT__SLOT_WORKSPACE:
            vals[i].ptr = c->at[s->ref];
            break;
        case QJIT__SLOT_COUNT:
            vals[i].i32 = (int32_t)(c->size[s->ref] / 4);
            break;
        case QJIT__SLOT_MAP: {
            const qjit__map_plan *mp = &b->plan->maps[s->ref];
            qjit_status st = encode_map(lin->ctx, c->maps[s->ref], mp,
                                        mp->source == QJIT__MAP_OF_OUTPUT ? c->y : c->at[mp->ref],
                                        mp->rows + mp->rows_per_m * (uint64_t)c->m);
            if (st)
                return st;
            args[i] = c->maps[s->ref];
            break;
        }
        case QJIT__SLOT_X:
            args[i] = &c->x;
            break;
        case QJIT__SLOT_Y:
            args[i] = &c->y;
            break;
        case QJIT__SLOT_M:
            vals[i].i32 = c->m;
            break;
        case QJIT__SLOT_EPOCH:
            args[i] = &c->epoch;
            break;
        default:
            return qjit__error(lin->ctx, QJIT_INTERNAL, "slot %s of %s has no per-call value", s->name, bd->plan->key);
        }
    }
    return QJIT_OK;
}

/* The grid of a kernel at M; 0 if a dimension exceeds what a launch allows. */
static int grid_of(const qjit__kernel_plan *kp, int64_t M, unsigned dims[3])
{
    static const int64_t limit[3] = {INT32_MAX, 65535, 65535};
    for (int d = 0; d < 3; d++) {
        const qjit__grid_dim *g = &kp->grid[d];
        int64_t n = (g->base + g->per_m * M + g->div - 1) / g->div;
        if (n > INT32_MAX / g->mul)
            return 0;
        n *= g->mul;
        if (g->max > 0 && n > g->max)
            n = g->max;
        if (n < 1 || n > limit[d])
            return 0;
        dims[d] = (unsigned)n;
    }
    return 1;
}

static qjit_status launch(qjit_linear *lin, const bucket *b, const binding *bd, const qjit__kernel *k,
                          const unsigned grid[3], call *c, CUstream stream)
{
    const qjit__driver *d = &lin->ctx->driver;
    void *args[QJIT__PLAN_SLOTS];
    slot_value vals[QJIT__PLAN_SLOTS];
    qjit_status st = call_args(lin, b, bd, c, args, vals);
    if (st)
        return st;
    CUresult r;
    if (k->facts.pdl || k->facts.cluster > 1) {
        /* PDL: may start before the kernel before it finishes; it waits
         * (griddepcontrol.wait) before reading what that one wrote.
         * Cluster: the split-K slices of a tile, or the CTAs of a token,
         * run together. */
        CUlaunchAttribute attr[2];
        unsigned nattr = 0;
        memset(attr, 0, sizeof attr);
        if (k->facts.pdl) {
            attr[nattr].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            attr[nattr++].value.programmaticStreamSerializationAllowed = 1;
        }
        if (k->facts.cluster > 1) {
            attr[nattr].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attr[nattr].value.clusterDim.x = 1;
            attr[nattr].value.clusterDim.y = 1;
            attr[nattr++].value.clusterDim.z = (unsigned)k->facts.cluster;
        }
        CUlaunchConfig cfg = {grid[0], grid[1], grid[2], (unsigned)k->facts.threads, 1, 1,
                              qjit__kernel_smem(d, k, grid), stream, attr, nattr};
        r = d->LaunchKernelEx(&cfg, k->function, args, NULL);
    } else {
        r = d->LaunchKernel(k->function, grid[0], grid[1], grid[2], (unsigned)k->facts.threads, 1, 1,
                            (unsigned)k->facts.smem, stream, args, NULL);
    }
    if (r != CUDA_SUCCESS) {
        st = qjit__cuda_error(lin->ctx, d, r, "cuLaunchKernel");
        qjit__error_append(lin->ctx, " (%s)", k->key);
    }
    return st;
}

/* Makes the workspace at least `need` bytes: the one allocation forward may
 * make, when M first exceeds what the layer was created for. It starts
 * zeroed, as the sections the GEMMs leave zeroed (split-K counters) must. */
static qjit_status grow_workspace(qjit_linear *lin, size_t need, CUstream stream)
{
    qjit_status st = QJIT_OK;
    const qjit__driver *d = &lin->ctx->driver;
    /* Not while the stream is captured: the old workspace may be in the
     * graph, and waiting on the stream is not allowed then. */
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    if (d->StreamIsCapturing(stream, &capture) == CUDA_SUCCESS && capture != CU_STREAM_CAPTURE_STATUS_NONE)
        return qjit__error(lin->ctx, QJIT_INVALID_ARGUMENT, "the layer's workspace must grow to %zu bytes for this "
                           "M while the stream is being captured: run one call at the largest M before capturing, "
                           "create the layer with a larger max_tokens, or pass a workspace", need);
    pthread_mutex_lock(&lin->lock);
    if (need > lin->workspace_bytes) {
        CUdeviceptr grown = device_alloc(lin->ctx, need, &st);
        CUresult r = grown ? d->MemsetD8Async(grown, 0, need, stream) : CUDA_SUCCESS;
        if (r != CUDA_SUCCESS) {
            st = qjit__cuda_error(lin->ctx, d, r, "zeroing the grown workspace");
            device_free(lin->ctx, grown, need);
        } else if (grown) {
            d->StreamSynchronize(stream);
            device_free(lin->ctx, lin->workspace, lin->workspace_bytes);
            lin->workspace = grown;
            lin->workspace_bytes = need;
        }
    }
    pthread_mutex_unlock(&lin->lock);
    return st;
}

/* What a call runs: the activation kernel then the GEMM (forward), the GEMM
 * alone on tokens the caller quantized, or the activation kernel alone
 * into the caller's buffers. */
typedef enum run_what { RUN_BOTH, RUN_GEMM, RUN_QUANT } run_what;

static const char *const TOKEN_FIELD[] = {[QJIT__TOKENS_XQ] = "xq", [QJIT__TOKENS_SX] = "sx",
                                          [QJIT__TOKENS_ROWSUM] = "rowsum"};

/* Points the bucket's token sections at the caller's buffers (c->at),
 * after checking that each one the layer takes is given, 16-byte aligned,
 * and that none it does not take is. */
static qjit_status bind_tokens(qjit_linear *lin, const bucket *b, int64_t M, const qjit_tokens *in, call *c)
{
    qjit_context *ctx = lin->ctx;
    if (!in || in->struct_size == 0 || in->struct_size > sizeof *in)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_tokens is NULL or its struct_size is not set "
                           "(qjit_tokens_init)");
    if (!b->plan->has_quant)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "the GEMM of M = %lld (%s) quantizes its own tokens: it "
                           "takes FP16 X (qjit_linear_forward), not quantized tokens", (long long)M,
                           b->plan->gemm.key);
    qjit_tokens t;
    memset(&t, 0, sizeof t);
    memcpy(&t, in, in->struct_size);
    void *given[] = {[QJIT__TOKENS_XQ] = t.xq, [QJIT__TOKENS_SX] = t.sx, [QJIT__TOKENS_ROWSUM] = t.rowsum};
    int taken[QJIT__TOKENS_ROWSUM + 1] = {0};
    for (int i = 0; i < b->plan->nws; i++) {
        int role = b->plan->ws[i].tokens;
        if (!role)
            continue;
        taken[role] = 1;
        if (!given[role])
            return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_tokens.%s is NULL; this layer takes it "
                               "(qjit_linear_tokens_format)", TOKEN_FIELD[role]);
        if ((uintptr_t)given[role] & 15)
            return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_tokens.%s is not 16-byte aligned (%p)",
                               TOKEN_FIELD[role], given[role]);
        c->at[i] = (CUdeviceptr)(uintptr_t)given[role];
    }
    for (int role = QJIT__TOKENS_XQ; role <= QJIT__TOKENS_ROWSUM; role++)
        if (given[role] && !taken[role])
            return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_tokens.%s is given, but this layer takes none "
                               "(qjit_linear_tokens_format): set it to NULL", TOKEN_FIELD[role]);
    return QJIT_OK;
}

/* Zeroes what the activation kernel would have zeroed for the GEMM (its
 * workspace slots that are not tokens: split-K counters, the stash's
 * bitmap) in a caller's workspace, whose contents are unknown. */
static qjit_status zero_for_gemm(qjit_linear *lin, const bucket *b, const call *c, CUstream stream)
{
    const qjit__kernel_plan *q = &b->plan->quant;
    const qjit__driver *d = &lin->ctx->driver;
    for (int i = 0; i < q->nslots; i++) {
        const qjit__slot *s = &q->slots[i];
        if (s->kind != QJIT__SLOT_WORKSPACE || s->ref < 0 || b->plan->ws[s->ref].tokens || !c->size[s->ref])
            continue;
        CUresult r = d->MemsetD8Async(c->at[s->ref], 0, c->size[s->ref], stream);
        if (r != CUDA_SUCCESS) {
            qjit_status st = qjit__cuda_error(lin->ctx, d, r, "cuMemsetD8Async");
            qjit__error_append(lin->ctx, " (zeroing the workspace's %s)", b->plan->ws[s->ref].name);
            return st;
        }
    }
    return QJIT_OK;
}

static qjit_status run(qjit_linear *lin, int64_t M, const void *X, const qjit_tokens *tok, void *out,
                       void *workspace, size_t workspace_bytes, void *stream_in, int acc, run_what what)
{
    if (!lin)
        return QJIT_INVALID_ARGUMENT;
    qjit_context *ctx = lin->ctx;
    CUstream stream = (CUstream)stream_in;
    if (!m_in_range(lin, M))
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "M = %lld: the token count must be in 1..%d (and M x K "
                           "below 2^46)", (long long)M, INT_MAX);
    if (what != RUN_GEMM && !X)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "X is NULL");
    if (what != RUN_QUANT && !out)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "the output pointer is NULL");
    if ((uintptr_t)X & 15)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "X is not 16-byte aligned (%p)", X);
    if ((uintptr_t)out & 15)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "the output pointer is not 16-byte aligned (%p)", out);
    bucket *b = (bucket *)find_bucket(lin, M);
    call c;
    memset(c.at, 0, sizeof c.at);
    c.m = (int32_t)M;
    size_t offset[QJIT__PLAN_WS];
    size_t need = ws_layout(b->plan, M, offset, c.size);
    if (what != RUN_QUANT && workspace && (((uintptr_t)workspace & 255) || workspace_bytes < need))
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "workspace must be 256-byte aligned and hold %zu bytes "
                           "for M = %lld (got %zu at %p)", need, (long long)M, workspace_bytes, workspace);
    qjit_status st = QJIT_OK;
    if (what != RUN_BOTH && (st = bind_tokens(lin, b, M, tok, &c)))
        return st;
    const binding *gb = acc ? &b->gemm_acc : &b->gemm;
    const qjit__kernel *quant = NULL, *gemm = NULL;
    if (what != RUN_GEMM && b->plan->has_quant)
        st = get_kernel(lin, &b->quant, &b->quant_k, &quant);
    if (st || (what != RUN_QUANT && (st = get_kernel(lin, gb, acc ? &b->gemm_acc_k : &b->gemm_k, &gemm))))
        return st;
    /* Refuse a launch too large before anything (the workspace) changes. */
    unsigned ggrid[3] = {1, 1, 1}, qgrid[3] = {1, 1, 1};
    if ((gemm && !grid_of(gb->plan, M, ggrid)) || (quant && !grid_of(b->quant.plan, M, qgrid)))
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "M = %lld needs more blocks along a grid dimension than a "
                           "launch allows (65535 along y and z): split the call", (long long)M);
    const qjit__driver *d = &ctx->driver;
    CUcontext current = NULL;
    if (d->CtxGetCurrent(&current) != CUDA_SUCCESS || current != d->context)
        d->CtxSetCurrent(d->context);
    /* The workspace's sections; the activation kernel alone writes only the
     * caller's tokens (nothing else: no counters to zero). */
    CUdeviceptr ws = 0;
    if (what != RUN_QUANT) {
        ws = (CUdeviceptr)(uintptr_t)workspace;
        if (!ws) {
            if (need > lin->workspace_bytes && (st = grow_workspace(lin, need, stream)))
                return st;
            ws = lin->workspace;
        }
    }
    for (int i = 0; i < b->plan->nws; i++) {
        if (what != RUN_BOTH && b->plan->ws[i].tokens)
            continue;
        c.at[i] = ws ? ws + offset[i] : 0;
        if (!ws)
            c.size[i] = 0;
    }
    c.x = (CUdeviceptr)(uintptr_t)X;
    c.y = (CUdeviceptr)(uintptr_t)out;
    c.epoch = 1;
    int flags = gemm ? gb->plan->flags : -1;
    if (flags >= 0) {
        /* The GEMM quantizes its tokens and publishes this call's epoch in
         * its flags (templates/lib/token_wait.cu). A graph replays its
         * launches with their arguments, so while the stream is captured
         * the flags are cleared in the graph and the epoch is the one value
         * (1) no uncaptured call uses. */
        CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
        CUresult r;
        if ((r = d->StreamIsCapturing(stream, &capture)) != CUDA_SUCCESS)
            return qjit__cuda_error(ctx, d, r, "asking whether the stream is being captured");
        if (capture != CU_STREAM_CAPTURE_STATUS_NONE) {
            if ((r = d->MemsetD8Async(c.at[flags], 0, c.size[flags], stream)) != CUDA_SUCCESS)
                return qjit__cuda_error(ctx, d, r, "clearing the quantizer flags");
        } else {
            do
                c.epoch = atomic_fetch_add(&ctx->epoch, 1) + 1;
            while (c.epoch < 2);
        }
    }
    /* The layer's own workspace stays zeroed where the GEMM needs it (the
     * GEMMs leave it so); a caller's may hold anything. */
    if (what == RUN_GEMM && workspace && (st = zero_for_gemm(lin, b, &c, stream)))
        return st;
    if (quant && (st = launch(lin, b, &b->quant, quant, qgrid, &c, stream)))
        return st;
    return gemm ? launch(lin, b, gb, gemm, ggrid, &c, stream) : QJIT_OK;
}

qjit_status qjit_linear_forward(qjit_linear *lin, int64_t M, const void *X, void *Y, void *workspace,
                                size_t workspace_bytes, void *stream)
{
    return run(lin, M, X, NULL, Y, workspace, workspace_bytes, stream, 0, RUN_BOTH);
}

qjit_status qjit_linear_forward_acc(qjit_linear *lin, int64_t M, const void *X, int32_t *acc, void *workspace,
                                    size_t workspace_bytes, void *stream)
{
    return run(lin, M, X, NULL, acc, workspace, workspace_bytes, stream, 1, RUN_BOTH);
}

void qjit_tokens_init(qjit_tokens *tokens)
{
    memset(tokens, 0, sizeof *tokens);
    tokens->struct_size = sizeof *tokens;
}

void qjit_tokens_format_init(qjit_tokens_format *format)
{
    memset(format, 0, sizeof *format);
    format->struct_size = sizeof *format;
}

qjit_status qjit_linear_tokens_format(const qjit_linear *lin, int64_t M, qjit_tokens_format *format)
{
    if (!lin)
        return QJIT_INVALID_ARGUMENT;
    if (!format || format->struct_size == 0 || format->struct_size > sizeof *format)
        return qjit__error(lin->ctx, QJIT_INVALID_ARGUMENT, "qjit_tokens_format is NULL or its struct_size is not "
                           "set (qjit_tokens_format_init)");
    if (!m_in_range(lin, M))
        return qjit__error(lin->ctx, QJIT_INVALID_ARGUMENT, "M = %lld is out of range", (long long)M);
    const qjit__bucket_plan *b = find_bucket(lin, M)->plan;
    if (!b->has_quant)
        return qjit__error(lin->ctx, QJIT_INVALID_ARGUMENT, "the GEMM of M = %lld (%s) quantizes its own tokens: "
                           "it takes no quantized tokens", (long long)M, b->gemm.key);
    qjit_tokens_format f;
    memset(&f, 0, sizeof f);
    f.struct_size = format->struct_size;
    f.pack = b->token_pack;
    /* Packed rows: a two-part layer's INT8 part keeps a byte a value. */
    int64_t k8 = lin->param32;
    f.row_bytes = f.pack == 1 ? lin->K : (k8 > 0 ? k8 + (lin->K - k8) / 2 : lin->K / 2);
    for (int i = 0; i < b->nws; i++) {
        if (b->ws[i].tokens == QJIT__TOKENS_SX)
            f.scales = (int)(b->ws[i].per_m / 4);
        else if (b->ws[i].tokens == QJIT__TOKENS_ROWSUM)
            f.rowsum = 1;
    }
    memcpy(format, &f, format->struct_size);
    return QJIT_OK;
}

qjit_status qjit_linear_quantize(qjit_linear *lin, int64_t M, const void *X, const qjit_tokens *tokens, void *stream)
{
    return run(lin, M, X, tokens, NULL, NULL, 0, stream, 0, RUN_QUANT);
}

qjit_status qjit_linear_forward_tokens(qjit_linear *lin, int64_t M, const qjit_tokens *tokens, void *Y,
                                       void *workspace, size_t workspace_bytes, void *stream)
{
    return run(lin, M, NULL, tokens, Y, workspace, workspace_bytes, stream, 0, RUN_GEMM);
}
