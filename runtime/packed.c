/* packed.c -- the packed-weight container (packed.h): sizes, the quantizing
 * writer and the verifying reader. What the sections hold is each scheme's
 * (scheme.h); this file only lays them out, names them and checks them. */
#define _POSIX_C_SOURCE 200809L
#include "packed.h"
#include "bytes.h"
#include "core.h"
#include "fp16.h"
#include "hash.h"
#include "layout.h"
#include "parallel.h"
#include "residual.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define VERSION 2u

/* Header field offsets (packed.h). */
enum {
    HDR_MAGIC = 0,
    HDR_VERSION = 8,
    HDR_SCHEME = 12,
    HDR_N = 16,
    HDR_K = 24,
    HDR_GROUP = 32,
    HDR_FLAGS = 36,
    HDR_NSECTIONS = 40,
    HDR_HEADER_BYTES = 44,
    HDR_PARAM = 48,
    HDR_RESIDUAL = 52,
    HDR_PAYLOAD_BYTES = 56,
    HDR_TABLE = 64,
    ENTRY_BYTES = 32
};
enum { FLAG_RESIDUAL = 1u, FLAG_WEIGHTED = 2u };
/* Version 1's (the schemes with reads_v1). */
enum { V1_HEADER = 64, V1_PAYLOAD_BYTES = 40, V1_PAYLOAD_HASH = 48, V1_HEADER_HASH = 56 };

static size_t align_section(size_t at)
{
    return (at + QJIT__SECTION_ALIGN - 1) / QJIT__SECTION_ALIGN * QJIT__SECTION_ALIGN;
}

static size_t header_bytes(int nsections)
{
    return align_section(HDR_TABLE + (size_t)ENTRY_BYTES * (size_t)nsections + 16);
}

/* The sections of a validated shape: sizes, 256-aligned offsets, payload
 * size; with a residual, its three sections follow the scheme's. */
typedef struct layout {
    const qjit__scheme *scheme;
    int G;
    int nsections;               /* the scheme's, + 3 with a residual */
    size_t bytes[QJIT__MAX_SECTIONS], offset[QJIT__MAX_SECTIONS];
    size_t payload, header;
} layout;

/* Appends the residual's sections for `blocks` kept blocks to l. */
static qjit_status add_residual(qjit_context *ctx, layout *l, const qjit__residual_plan *plan, int64_t blocks)
{
    size_t bytes[QJIT__RESIDUAL_SECTIONS], at = l->payload;
    qjit__residual_sizes(plan, blocks, bytes);
    for (int i = 0; i < QJIT__RESIDUAL_SECTIONS; i++) {
        size_t padded = align_section(at);
        if (padded < at || !qjit__add_size(padded, bytes[i], &at))
            return qjit__error(ctx, QJIT_OVERFLOW, "packed size with a residual of %lld blocks overflows size_t",
                               (long long)blocks);
        l->offset[l->nsections] = padded;
        l->bytes[l->nsections++] = bytes[i];
    }
    size_t total;
    l->payload = at;
    l->header = header_bytes(l->nsections);
    if (!qjit__add_size(l->payload, l->header, &total))
        return qjit__error(ctx, QJIT_OVERFLOW, "packed size with a residual of %lld blocks overflows size_t",
                           (long long)blocks);
    return QJIT_OK;
}

/* Checks scheme, group and N x K against what the packed layouts need, and
 * lays out the sections with overflow-checked arithmetic. */
static qjit_status check_shape(qjit_context *ctx, qjit_scheme scheme, int group, int64_t N, int64_t K, layout *out)
{
    const qjit__scheme *s = qjit__scheme_get(scheme);
    if (!s) {
        char known[256] = "";
        for (int i = 0, at = 0; i < qjit__nschemes && at < (int)sizeof known; i++)
            at += snprintf(known + at, sizeof known - (size_t)at, "%s%d %s", i ? ", " : "", (int)qjit__schemes[i]->id,
                           qjit__schemes[i]->name);
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "unknown weight scheme %d (known: %s)", (int)scheme, known);
    }
    if (N <= 0 || K <= 0)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "weight shape must be positive, got N=%lld K=%lld",
                           (long long)N, (long long)K);
    if (N > INT32_MAX || K > INT32_MAX)
        return qjit__error(ctx, QJIT_OVERFLOW, "weight shape N=%lld K=%lld too large (each must be < 2^31)",
                           (long long)N, (long long)K);
    if (N % QJIT__PACK_N != 0)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "N=%lld must be a multiple of %d", (long long)N,
                           QJIT__PACK_N);
    if (K % QJIT__PACK_K != 0)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "K=%lld must be a multiple of %d", (long long)K,
                           QJIT__PACK_K);
    const char *why = s->group_problem(group);
    if (why)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "%s: group=%d: %s", s->name, group, why);
    if (group > 0 && K % group != 0)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "group=%d must divide K=%lld", group, (long long)K);
    if (s->k_problem && (why = s->k_problem(K)) != NULL)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "%s: K=%lld: %s", s->name, (long long)K, why);
    layout l = {s, group ? group : (int)K, s->nsections, {0}, {0}, 0, header_bytes(s->nsections)};
    size_t at = 0;
    for (int i = 0; i < s->nsections; i++) {
        size_t padded = align_section(at);
        size_t own = s->layer_bytes ? s->layer_bytes(i, K) : 0;
        if (padded < at || !qjit__mul_size(s->slab_bytes(i, K, group), (size_t)(N / QJIT__PACK_N), &l.bytes[i]) ||
            !qjit__add_size(l.bytes[i], own, &l.bytes[i]) || !qjit__add_size(padded, l.bytes[i], &at))
            return qjit__error(ctx, QJIT_OVERFLOW, "packed size of N=%lld K=%lld group=%d overflows size_t",
                               (long long)N, (long long)K, group);
        l.offset[i] = padded;
    }
    l.payload = at;
    size_t total;
    if (!qjit__add_size(l.payload, l.header, &total))
        return qjit__error(ctx, QJIT_OVERFLOW, "packed size of N=%lld K=%lld group=%d overflows size_t",
                           (long long)N, (long long)K, group);
    *out = l;
    return QJIT_OK;
}

/* The options of a call (defaults where opts_in is NULL or shorter). */
static qjit_status read_options(qjit_context *ctx, const qjit_quantize_options *opts_in, qjit_quantize_options *opts)
{
    qjit_quantize_options_init(opts);
    if (opts_in) {
        if (opts_in->struct_size == 0 || opts_in->struct_size > sizeof *opts)
            return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_quantize_options.struct_size is %zu",
                               opts_in->struct_size);
        memcpy(opts, opts_in, opts_in->struct_size);
    }
    return QJIT_OK;
}

/* The options (opts_in read into opts), the shape's layout, and with a
 * budget the residual's plan and the layout at its most blocks. */
static qjit_status plan_buffer(qjit_context *ctx, qjit_scheme scheme, int group, int64_t N, int64_t K,
                               const qjit_quantize_options *opts_in, qjit_quantize_options *opts, layout *l,
                               qjit__residual_plan *rp, layout *most)
{
    qjit_status st = read_options(ctx, opts_in, opts);
    if (st != QJIT_OK)
        return st;
    st = check_shape(ctx, scheme, group, N, K, l);
    if (st == QJIT_OK)
        st = qjit__residual_plan_make(ctx, l->scheme, group, N, K, opts, rp);
    *most = *l;
    if (st == QJIT_OK && rp->max_blocks > 0)
        st = add_residual(ctx, most, rp, rp->max_blocks);
    return st;
}

qjit_status qjit_packed_size_ex(qjit_context *ctx, qjit_scheme scheme, int group, int64_t N, int64_t K,
                                const qjit_quantize_options *opts_in, size_t *bytes)
{
    if (!bytes)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_packed_size_ex: bytes is NULL");
    qjit_quantize_options opts;
    layout l, most;
    qjit__residual_plan rp;
    qjit_status st = plan_buffer(ctx, scheme, group, N, K, opts_in, &opts, &l, &rp, &most);
    if (st != QJIT_OK)
        return st;
    *bytes = most.header + most.payload;
    return QJIT_OK;
}

qjit_status qjit_packed_size(qjit_scheme scheme, int group, int64_t N, int64_t K, size_t *bytes)
{
    return qjit_packed_size_ex(NULL, scheme, group, N, K, NULL, bytes);
}

/*------------------------------------------------------------------------
 * Writing
 *------------------------------------------------------------------------*/

/* The first weight (row-major) that is NaN or infinite, sought in runs of
 * 16 rows on every CPU (qjit__parallel_for's items): its index, or -1. */
typedef struct nonfinite_job {
    const qjit__slabs *s;
    atomic_llong first;
} nonfinite_job;

static int nonfinite_at(const qjit__slabs *s, size_t i)
{
    if (s->dtype == QJIT_DTYPE_F32)
        return !isfinite(((const float *)s->W)[i]);
    return (((const uint16_t *)s->W)[i] & 0x7C00u) == 0x7C00u;
}

static void nonfinite_rows(void *arg, int64_t item, void *scratch)
{
    (void)scratch;
    nonfinite_job *j = arg;
    const size_t K = (size_t)j->s->K, begin = (size_t)item * 16 * K;
    size_t end = begin + 16 * K;
    if (end > (size_t)j->s->N * K)
        end = (size_t)j->s->N * K;
    for (size_t i = begin; i < end; i++)
        if (nonfinite_at(j->s, i)) {
            long long seen = atomic_load(&j->first);
            while ((seen < 0 || (long long)i < seen) && !atomic_compare_exchange_weak(&j->first, &seen, (long long)i))
                ;
            return;
        }
}

static qjit_status find_nonfinite(qjit_context *ctx, const qjit__slabs *s)
{
    nonfinite_job job = {s, -1};
    qjit_status st = qjit__parallel_for(ctx, (s->N + 15) / 16, 0, nonfinite_rows, &job);
    const long long i = atomic_load(&job.first);
    if (st || i < 0)
        return st;
    const long long n = i / s->K, k = i % s->K;
    if (s->dtype == QJIT_DTYPE_F32) {
        const float v = ((const float *)s->W)[i];
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "weight W[%lld, %lld] is %s", n, k,
                           isnan(v) ? "NaN" : "infinite");
    }
    const uint16_t h = ((const uint16_t *)s->W)[i];
    return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "weight W[%lld, %lld] is %s (FP16 0x%04x)", n, k,
                       (h & 0x3FFu) ? "NaN" : "infinite", h);
}

void qjit_quantize_options_init(qjit_quantize_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
}

qjit_status qjit_quantize_weights(qjit_context *ctx, qjit_scheme scheme, int group, const void *W,
                                  qjit_dtype dtype, int64_t N, int64_t K, void *out, size_t capacity,
                                  size_t *written)
{
    return qjit_quantize_weights_ex(ctx, scheme, group, W, dtype, N, K, NULL, out, capacity, written);
}

/* Writes the header of a buffer laid out as l. */
static void write_header(uint8_t *hdr, const layout *l, qjit_scheme scheme, int group, int64_t N, int64_t K,
                         int32_t param, uint32_t flags, uint32_t residual)
{
    const qjit__scheme *s = l->scheme;
    memcpy(hdr + HDR_MAGIC, QJIT__WEIGHTS_MAGIC, 8);
    qjit__store_u32(hdr + HDR_VERSION, VERSION);
    qjit__store_u32(hdr + HDR_SCHEME, (uint32_t)scheme);
    qjit__store_u64(hdr + HDR_N, (uint64_t)N);
    qjit__store_u64(hdr + HDR_K, (uint64_t)K);
    qjit__store_u32(hdr + HDR_GROUP, (uint32_t)group);
    qjit__store_u32(hdr + HDR_FLAGS, flags);
    qjit__store_u32(hdr + HDR_NSECTIONS, (uint32_t)l->nsections);
    qjit__store_u32(hdr + HDR_HEADER_BYTES, (uint32_t)l->header);
    qjit__store_u32(hdr + HDR_PARAM, (uint32_t)param);
    qjit__store_u32(hdr + HDR_RESIDUAL, residual);
    qjit__store_u64(hdr + HDR_PAYLOAD_BYTES, l->payload);
    for (int i = 0; i < l->nsections; i++) {
        const char *name = i < s->nsections ? s->sections[i] : qjit__residual_names[i - s->nsections];
        uint8_t *e = hdr + HDR_TABLE + i * ENTRY_BYTES;
        memcpy(e, name, strlen(name));
        qjit__store_u64(e + 16, l->offset[i]);
        qjit__store_u64(e + 24, l->bytes[i]);
    }
    size_t tail = HDR_TABLE + (size_t)ENTRY_BYTES * (size_t)l->nsections;
    qjit__store_u64(hdr + tail, qjit__hash64(hdr + l->header, l->payload, 0));
    qjit__store_u64(hdr + tail + 8, qjit__hash64(hdr, tail + 8, 0));
}

/* The view of a buffer laid out as l (its scheme's sections; the residual,
 * if any, is filled apart). */
static void view_of(qjit__weights_view *v, const layout *l, uint32_t version, int group, int64_t N, int64_t K,
                    int32_t param, const uint8_t *payload, size_t payload_bytes, size_t header)
{
    v->scheme = l->scheme;
    v->version = version;
    v->group = group;
    v->group_size = l->G;
    v->N = N;
    v->K = K;
    v->param = param;
    v->payload = payload;
    v->payload_bytes = payload_bytes;
    v->header_bytes = header;
    v->nsections = l->scheme->nsections;
    for (int i = 0; i < v->nsections; i++) {
        snprintf(v->sections[i].name, sizeof v->sections[i].name, "%s", l->scheme->sections[i]);
        v->sections[i].offset = l->offset[i];
        v->sections[i].bytes = l->bytes[i];
    }
}

/* The slabs of 16 weight rows, quantized on every CPU (qjit__parallel_run's
 * items): each writes only its own bytes of the payload's sections. A
 * worker's scratch: the slab as floats, then the scheme's scratch. */
typedef struct slab_job {
    const qjit__scheme *s;
    const qjit__slabs *src;
    int group;
    int32_t param;
    const uint8_t *const *layer;
    size_t slab_scratch;                     /* where the scheme's scratch starts */
    void *out;                               /* the buffer: `need` bytes, zeroed first */
    size_t need;
    uint8_t *payload;
    const layout *l;
    const size_t *own;                       /* bytes of each section of the layer's own (0: a slab section) */
} slab_job;

/* Before the slabs: the buffer zeroed, the layer's own sections copied in. */
static void slabs_begin(void *arg)
{
    const slab_job *j = arg;
    memset(j->out, 0, j->need);
    for (int i = 0; i < j->s->nsections; i++)
        if (j->own[i])
            memcpy(j->payload + j->l->offset[i], j->layer[i], j->own[i]);
}

static void quantize_slab_item(void *arg, int64_t nb, void *scratch)
{
    const slab_job *j = arg;
    const int64_t K = j->src->K;
    uint8_t *dst[QJIT__MAX_SECTIONS];
    for (int i = 0; i < j->s->nsections; i++)
        dst[i] = j->own[i] ? NULL : j->payload + j->l->offset[i] + (size_t)nb * j->s->slab_bytes(i, K, j->group);
    float *slab = scratch;
    qjit__slab_load(j->src, nb, slab);
    j->s->quantize_slab(slab, K, j->group, j->param, j->layer, (unsigned char *)scratch + j->slab_scratch, dst);
}

qjit_status qjit_quantize_weights_ex(qjit_context *ctx, qjit_scheme scheme, int group, const void *W,
                                     qjit_dtype dtype, int64_t N, int64_t K, const qjit_quantize_options *opts_in,
                                     void *out, size_t capacity, size_t *written)
{
    qjit_quantize_options opts;
    layout l, most;
    qjit__residual_plan rp;
    qjit_status st = plan_buffer(ctx, scheme, group, N, K, opts_in, &opts, &l, &rp, &most);
    if (st != QJIT_OK)
        return st;
    if (!W || !out)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "%s is NULL", !W ? "W" : "out");
    if (!qjit__dtype_known(dtype))
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "unknown weight dtype %d", (int)dtype);
    size_t need = most.header + most.payload;
    if (capacity < need)
        return qjit__error(ctx, QJIT_OVERFLOW, "packed weights need %zu bytes%s, capacity is %zu", need,
                           rp.max_blocks ? " (at most, with the residual)" : "", capacity);
    const qjit__slabs src = {W, dtype, N, K};
    if ((st = find_nonfinite(ctx, &src)) != QJIT_OK)
        return st;

    const qjit__scheme *s = l.scheme;
    const size_t floats_bytes = ((size_t)(QJIT__PACK_N * K) * sizeof(float) + 63) & ~(size_t)63,
                 scratch_bytes = floats_bytes + s->scratch_bytes(K, group);
    /* The layer's own bytes of its sections, made before anything is written. */
    size_t own[QJIT__MAX_SECTIONS] = {0}, own_bytes = 0;
    for (int i = 0; i < s->nsections; i++)
        own_bytes += own[i] = s->layer_bytes ? s->layer_bytes(i, K) : 0;
    uint8_t *layer_tmp = own_bytes ? qjit__alloc(ctx, own_bytes) : NULL;
    uint8_t *layer[QJIT__MAX_SECTIONS] = {0};
    size_t own_at = 0;
    for (int i = 0; i < s->nsections; i++) {
        layer[i] = own[i] && layer_tmp ? layer_tmp + own_at : NULL;
        own_at += own[i];
    }
    qjit__residual_work rw = {0};
    int32_t param = 0;
    if (own_bytes && !layer_tmp)
        st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory quantizing weights (K=%lld)", (long long)K);
    if (st == QJIT_OK && rp.max_blocks)
        st = qjit__residual_begin(ctx, &rp, &opts, K, &rw);
    if (st == QJIT_OK && s->prepare)
        st = s->prepare(ctx, &src, group, &opts, &param);
    if (st == QJIT_OK && s->prepare_layer)
        st = s->prepare_layer(ctx, &src, group, &opts, &param, layer);
    uint8_t *hdr = out, *payload = hdr + most.header;
    if (st == QJIT_OK) {
        /* The slabs, on every CPU, once the workers' scratch is had: the
         * buffer is written only then (slabs_begin). */
        slab_job job = {s, &src, group, param, (const uint8_t *const *)layer, floats_bytes, out, need,
                        payload, &l, own};
        st = qjit__parallel_run(ctx, N / QJIT__PACK_N, scratch_bytes, slabs_begin, quantize_slab_item, &job);
    }
    qjit__free(ctx, layer_tmp, own_bytes);
    if (st) {
        qjit__residual_end(ctx, &rw);
        return st;
    }

    uint32_t flags = 0, residual = 0;
    layout fin = l;
    if (rp.max_blocks) {
        /* The base as the kernels read it, then the blocks it leaves most
         * error in. The header keeps its size: the section count is fixed. */
        qjit__weights_view base = {0};
        view_of(&base, &l, VERSION, group, N, K, param, payload, l.payload, most.header);
        int64_t blocks = qjit__residual_choose(ctx, &rp, &src, &base, opts.layer_name, &rw);
        add_residual(NULL, &fin, &rp, blocks);    /* no larger than `most`: cannot overflow */
        uint8_t *dst[QJIT__RESIDUAL_SECTIONS];
        for (int i = 0; i < QJIT__RESIDUAL_SECTIONS; i++)
            dst[i] = payload + fin.offset[s->nsections + i];
        qjit__residual_write(&rp, &src, &base, &rw, blocks, dst);
        flags = FLAG_RESIDUAL | (rw.weighted ? FLAG_WEIGHTED : 0u);
        qjit__residual_end(ctx, &rw);
        residual = (uint32_t)rp.block_n | (uint32_t)rp.block_k << 16;
    }
    write_header(hdr, &fin, scheme, group, N, K, param, flags, residual);
    if (written)
        *written = fin.header + fin.payload;
    return QJIT_OK;
}

/*------------------------------------------------------------------------
 * Reading
 *------------------------------------------------------------------------*/

/* Restates a shape problem of a stored header as corruption. */
static qjit_status inconsistent(qjit_context *ctx, uint32_t scheme, int64_t N, int64_t K, int32_t group)
{
    return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS,
                       "packed-weight header is inconsistent: scheme=%u N=%lld K=%lld group=%d", scheme,
                       (long long)N, (long long)K, group);
}

static qjit_status view_v1(qjit_context *ctx, const uint8_t *hdr, size_t bytes, int verify_payload,
                           qjit__weights_view *v)
{
    if (qjit__hash64(hdr, V1_HEADER_HASH, 0) != qjit__load_u64(hdr + V1_HEADER_HASH))
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight header checksum mismatch");
    uint32_t scheme = qjit__load_u32(hdr + HDR_SCHEME);
    int64_t N = (int64_t)qjit__load_u64(hdr + HDR_N), K = (int64_t)qjit__load_u64(hdr + HDR_K);
    int32_t group = (int32_t)qjit__load_u32(hdr + HDR_GROUP);
    layout l;
    const qjit__scheme *s = qjit__scheme_get((qjit_scheme)scheme);
    if (!s || !s->reads_v1 || qjit__load_u32(hdr + HDR_FLAGS) != 0 ||
        check_shape(ctx, (qjit_scheme)scheme, group, N, K, &l) != QJIT_OK)
        return inconsistent(ctx, scheme, N, K, group);
    /* Version 1 put the sections back to back. */
    size_t at = 0;
    for (int i = 0; i < l.scheme->nsections; i++) {
        l.offset[i] = at;
        at += l.bytes[i];
    }
    if (qjit__load_u64(hdr + V1_PAYLOAD_BYTES) != at || bytes - V1_HEADER != at)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight buffer (version 1) is %zu bytes, N=%lld K=%lld "
                           "group=%d need %zu", bytes, (long long)N, (long long)K, group, V1_HEADER + at);
    if (verify_payload && qjit__hash64(hdr + V1_HEADER, at, 0) != qjit__load_u64(hdr + V1_PAYLOAD_HASH))
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight payload checksum mismatch");
    memset(v, 0, sizeof *v);
    view_of(v, &l, 1, group, N, K, 0, hdr + V1_HEADER, at, V1_HEADER);
    return QJIT_OK;
}

static qjit_status view_init(qjit_context *ctx, const void *packed, size_t bytes, int verify_payload,
                             qjit__weights_view *v)
{
    if (!packed || !v)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "packed weights or view is NULL");
    if (bytes < V1_HEADER)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT,
                           "packed weights of %zu bytes are shorter than the smallest header (%d bytes)", bytes,
                           V1_HEADER);
    const uint8_t *hdr = packed;
    if (memcmp(hdr + HDR_MAGIC, QJIT__WEIGHTS_MAGIC, 8) != 0)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "not a qjit packed-weight buffer (bad magic)");
    uint32_t version = qjit__load_u32(hdr + HDR_VERSION);
    if (version == 1)
        return view_v1(ctx, hdr, bytes, verify_payload, v);
    if (version != VERSION)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight format version %u is not supported (this qjit "
                           "reads 1 and %u)", version, VERSION);
    uint32_t nsections = qjit__load_u32(hdr + HDR_NSECTIONS);
    if (nsections < 1 || nsections > QJIT__MAX_SECTIONS)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight header lists %u sections (1..%d)", nsections,
                           QJIT__MAX_SECTIONS);
    size_t hbytes = header_bytes((int)nsections), tail = HDR_TABLE + (size_t)ENTRY_BYTES * nsections;
    if (bytes < hbytes)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight buffer of %zu bytes is shorter than its "
                           "%zu-byte header (truncated)", bytes, hbytes);
    if (qjit__hash64(hdr, tail + 8, 0) != qjit__load_u64(hdr + tail + 8))
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight header checksum mismatch");

    uint32_t scheme = qjit__load_u32(hdr + HDR_SCHEME);
    int64_t N = (int64_t)qjit__load_u64(hdr + HDR_N), K = (int64_t)qjit__load_u64(hdr + HDR_K);
    int32_t group = (int32_t)qjit__load_u32(hdr + HDR_GROUP);
    layout l;
    uint32_t flags = qjit__load_u32(hdr + HDR_FLAGS), residual = qjit__load_u32(hdr + HDR_RESIDUAL);
    int has_residual = (flags & FLAG_RESIDUAL) != 0;
    if ((flags & ~(FLAG_RESIDUAL | FLAG_WEIGHTED)) || (!has_residual && (flags || residual)) ||
        (has_residual && !residual) || qjit__load_u32(hdr + HDR_HEADER_BYTES) != hbytes ||
        check_shape(ctx, (qjit_scheme)scheme, group, N, K, &l) != QJIT_OK)
        return inconsistent(ctx, scheme, N, K, group);
    int expect = l.scheme->nsections + (has_residual ? QJIT__RESIDUAL_SECTIONS : 0);
    if ((int)nsections != expect)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight header lists %u sections; scheme %s has %d%s",
                           nsections, l.scheme->name, l.scheme->nsections,
                           has_residual ? " and the residual 3" : "");
    memset(v, 0, sizeof *v);
    size_t end = l.payload;    /* of the scheme's sections; the residual's follow */
    for (int i = 0; i < expect; i++) {
        const char *want = i < l.scheme->nsections ? l.scheme->sections[i]
                                                   : qjit__residual_names[i - l.scheme->nsections];
        const uint8_t *e = hdr + HDR_TABLE + i * ENTRY_BYTES;
        char name[17];
        memcpy(name, e, 16);
        name[16] = '\0';
        uint64_t off = qjit__load_u64(e + 16), len = qjit__load_u64(e + 24);
        int padded = 1;   /* every byte after the name is NUL */
        for (size_t j = strlen(want); j < 16; j++)
            padded &= e[j] == 0;
        if (strcmp(name, want) || !padded)
            return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight section %d is '%.16s'; scheme %s's is '%s'",
                               i, name, l.scheme->name, want);
        if (i < l.scheme->nsections) {
            if (off != l.offset[i] || len != l.bytes[i])
                return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight section %s is %llu bytes at %llu; "
                                   "N=%lld K=%lld group=%d need %zu at %zu", name, (unsigned long long)len,
                                   (unsigned long long)off, (long long)N, (long long)K, group, l.bytes[i],
                                   l.offset[i]);
            continue;    /* as laid out: view_of fills it */
        }
        /* The residual's sizes depend on how many blocks were kept: each
         * section where the last ended, aligned, and inside the buffer. */
        if (off != align_section(end) || off < end || len > bytes || off > bytes - len)
            return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight section %s is %llu bytes at %llu; it must "
                               "start at %zu and fit the %zu-byte buffer", name, (unsigned long long)len,
                               (unsigned long long)off, align_section(end), bytes);
        qjit__section_view *rs = &v->residual.sections[i - l.scheme->nsections];
        memcpy(rs->name, name, strlen(name) + 1);
        rs->offset = (size_t)off;
        rs->bytes = (size_t)len;
        end = (size_t)(off + len);
    }
    l.payload = end;
    if (qjit__load_u64(hdr + HDR_PAYLOAD_BYTES) != l.payload)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight header says %llu payload bytes, N=%lld K=%lld "
                           "group=%d need %zu", (unsigned long long)qjit__load_u64(hdr + HDR_PAYLOAD_BYTES),
                           (long long)N, (long long)K, group, l.payload);
    if (bytes - hbytes != l.payload)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight buffer is %zu bytes, its header says %zu (%s)",
                           bytes, hbytes + l.payload, bytes < hbytes + l.payload ? "truncated" : "trailing bytes");
    for (size_t i = tail + 16; i < hbytes; i++)
        if (hdr[i])
            return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight header padding is not zero");
    int32_t param = (int32_t)qjit__load_u32(hdr + HDR_PARAM);
    const char *param_why = l.scheme->param_problem ? l.scheme->param_problem(param, K) : NULL;
    if (param_why || (!l.scheme->param_problem && param != 0))
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight header has parameter %d, which scheme %s does "
                           "not take%s%s", param, l.scheme->name, param_why ? ": " : "", param_why ? param_why : "");
    const uint8_t *payload = hdr + hbytes;
    if (verify_payload && qjit__hash64(payload, l.payload, 0) != qjit__load_u64(hdr + tail))
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight payload checksum mismatch");
    view_of(v, &l, VERSION, group, N, K, param, payload, l.payload, hbytes);
    if (has_residual) {
        v->residual.block_n = (int)(residual & 0xFFFFu);
        v->residual.block_k = (int)(residual >> 16);
        v->residual.weighted = (flags & FLAG_WEIGHTED) != 0;
        return qjit__residual_check(ctx, v);
    }
    return QJIT_OK;
}

/* A checksum proves the bytes are the ones written, not that they mean
 * anything: every channel's epilogue scale must be finite and positive (the
 * quantizers write 1 for an all-zero row) and its zero point, where the
 * scheme has one, in [0, 15]; else the outputs would be NaN or garbage. */
static qjit_status check_values(qjit_context *ctx, const qjit__weights_view *v)
{
    for (int64_t n = 0; n < v->N; n++) {
        float scale;
        int32_t zero;
        qjit__channel(v, n, &scale, &zero);
        if (!isfinite(scale) || !(scale > 0.0f))
            return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight %s buffer: output channel %lld has scale %g "
                               "(must be finite and positive)", v->scheme->name, (long long)n, (double)scale);
        if (zero < 0 || zero > 15)
            return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight %s buffer: output channel %lld has zero "
                               "point %d (must be in [0, 15])", v->scheme->name, (long long)n, zero);
    }
    return QJIT_OK;
}

qjit_status qjit__weights_view_init(qjit_context *ctx, const void *packed, size_t bytes, int verify_payload,
                                    qjit__weights_view *v)
{
    qjit_status st = view_init(ctx, packed, bytes, verify_payload, v);
    if (st == QJIT_OK && verify_payload)
        st = check_values(ctx, v);
    if (st == QJIT_OK && verify_payload && v->scheme->check_layer)
        st = v->scheme->check_layer(ctx, v);
    return st;
}

qjit_status qjit_weights_inspect(qjit_context *ctx, const void *packed, size_t bytes, qjit_weights_info *info)
{
    qjit__weights_view v;
    qjit_status st = qjit__weights_view_init(ctx, packed, bytes, 1, &v);
    if (st != QJIT_OK)
        return st;
    if (info) {
        info->scheme = v.scheme->id;
        info->group = v.group;
        info->N = v.N;
        info->K = v.K;
        info->bytes = v.header_bytes + v.payload_bytes;
        info->payload_bytes = v.payload_bytes;
        info->alpha = v.scheme->param_is_alpha ? ldexp(1.0, v.param) : 0.0;
    }
    return QJIT_OK;
}

void qjit_residual_info_init(qjit_residual_info *info)
{
    if (!info)
        return;
    memset(info, 0, sizeof *info);
    info->struct_size = sizeof *info;
}

qjit_status qjit_weights_residual(qjit_context *ctx, const void *packed, size_t bytes, qjit_residual_info *info)
{
    if (!info || info->struct_size == 0 || info->struct_size > sizeof *info)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_weights_residual: info is NULL or its struct_size (%zu) "
                           "is wrong (qjit_residual_info_init sets it)", info ? info->struct_size : (size_t)0);
    qjit__weights_view v;
    qjit_status st = qjit__weights_view_init(ctx, packed, bytes, 1, &v);
    if (st != QJIT_OK)
        return st;
    const qjit__residual_view *r = &v.residual;
    qjit_residual_info out;
    qjit_residual_info_init(&out);
    if (r->block_n) {
        out.block_n = r->block_n;
        out.block_k = r->block_k;
        out.blocks = r->blocks;
        out.total_blocks = r->row_blocks * r->k_blocks;
        out.density = (double)r->blocks / (double)out.total_blocks;
        out.weighted = r->weighted;
        for (int i = 0; i < QJIT__RESIDUAL_SECTIONS; i++)
            out.bytes += r->sections[i].bytes;
    }
    size_t size = info->struct_size;
    out.struct_size = size;
    memcpy(info, &out, size);
    return QJIT_OK;
}
