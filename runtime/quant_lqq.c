/* quant_lqq.c -- LiquidQuant (LQQ) weight quantization on the host, the
 * dual-MMA packed layout the W4A8 kernels read, and the self-describing
 * packed-weight buffer around it. The arithmetic is ALGORITHMS.md sections 3
 * and 4; the bit layout is the one documented in quant.h, which the GPU
 * kernels read byte for byte. */
#define _POSIX_C_SOURCE 200809L
#include "quant.h"
#include "core.h"
#include "hash.h"

#include <math.h>
#include <string.h>

#define WEIGHTS_VERSION 1u
#define Q8_LIMIT 119             /* the protective range of level 1 */
#define BLOCK_BYTES 512          /* one 16 x 64 block of 4-bit weights */
#define GPARAMS_ENTRY_BYTES 32   /* one (16 rows, one group) gparams entry */

/* Header field offsets, as quant.h lists them. */
enum {
    HDR_MAGIC = 0,
    HDR_VERSION = 8,
    HDR_SCHEME = 12,
    HDR_N = 16,
    HDR_K = 24,
    HDR_GROUP = 32,
    HDR_FLAGS = 36,
    HDR_PAYLOAD_BYTES = 40,
    HDR_PAYLOAD_HASH = 48,
    HDR_HEADER_HASH = 56
};

/*------------------------------------------------------------------------
 * Little-endian field access (the buffer is little-endian on every host)
 *------------------------------------------------------------------------*/
static void store_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void store_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t load_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static uint64_t load_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void store_f32(uint8_t *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    store_u32(p, u);
}

/*------------------------------------------------------------------------
 * Sizes
 *------------------------------------------------------------------------*/

/* Byte counts of the three payload sections for a shape already validated. */
typedef struct payload_layout {
    size_t qweight_bytes, gparams_bytes, s0_bytes, total;
} payload_layout;

/* Checks N, K, group against what the packed layout needs and computes the
 * payload sections with overflow-checked arithmetic. */
static qjit_status check_shape(qjit_context *ctx, qjit_scheme scheme, int group, int64_t N, int64_t K,
                               payload_layout *out)
{
    if (scheme != QJIT_SCHEME_W4A8_LQQ)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "unknown weight scheme %d (only %d, W4A8 LQQ, exists)",
                           (int)scheme, (int)QJIT_SCHEME_W4A8_LQQ);
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
    if (group < 0 || (group > 0 && (group % QJIT__PACK_K != 0 || K % group != 0)))
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT,
                           "group=%d must be 0 (per channel) or a multiple of %d dividing K=%lld", group,
                           QJIT__PACK_K, (long long)K);

    int64_t groups_per_row = group ? K / group : 1;
    payload_layout p;
    size_t elements, entries, t;
    if (!qjit__mul_size((size_t)N, (size_t)K, &elements) ||
        !qjit__mul_size((size_t)N / QJIT__PACK_N, (size_t)groups_per_row, &entries) ||
        !qjit__mul_size(entries, GPARAMS_ENTRY_BYTES, &p.gparams_bytes) ||
        !qjit__mul_size((size_t)N, sizeof(float), &p.s0_bytes))
        goto overflow;
    p.qweight_bytes = elements / 2;
    if (!qjit__add_size(p.qweight_bytes, p.gparams_bytes, &t) || !qjit__add_size(t, p.s0_bytes, &p.total) ||
        !qjit__add_size(p.total, QJIT__WEIGHTS_HEADER_BYTES, &t))
        goto overflow;
    *out = p;
    return QJIT_OK;

overflow:
    return qjit__error(ctx, QJIT_OVERFLOW, "packed size of N=%lld K=%lld group=%d overflows size_t",
                       (long long)N, (long long)K, group);
}

qjit_status qjit_packed_size(qjit_scheme scheme, int group, int64_t N, int64_t K, size_t *bytes)
{
    if (!bytes)
        return QJIT_INVALID_ARGUMENT;
    payload_layout p;
    qjit_status st = check_shape(NULL, scheme, group, N, K, &p);
    if (st != QJIT_OK)
        return st;
    *bytes = QJIT__WEIGHTS_HEADER_BYTES + p.total;
    return QJIT_OK;
}

/*------------------------------------------------------------------------
 * Quantization (unpacked)
 *------------------------------------------------------------------------*/

/* Round half away from zero of a non-negative ratio num / den, in integers. */
static int round_div(int num, int den) { return (2 * num + den) / (2 * den); }

/* Level 1 of one row: s0 = max|W| / 119 and Q8 = clamp(round(W / s0)). A row
 * whose scale underflows to zero (max|W| below about 119 * 2^-149, only
 * possible with FP32 input) is treated like an all-zero row: s0 = 1, Q8 = 0;
 * its weights are below 1.7e-43 and round to zero at any useful scale. */
static float quantize_row_level1(const float *w, int64_t K, int8_t *q8)
{
    float amax = 0.0f;
    for (int64_t k = 0; k < K; k++) {
        float v = fabsf(w[k]);
        if (v > amax)
            amax = v;
    }
    float s0 = amax / (float)Q8_LIMIT;
    if (s0 == 0.0f)
        s0 = 1.0f;
    for (int64_t k = 0; k < K; k++) {
        float r = roundf(w[k] / s0);
        if (r > (float)Q8_LIMIT)
            r = (float)Q8_LIMIT;
        if (r < -(float)Q8_LIMIT)
            r = -(float)Q8_LIMIT;
        q8[k] = (int8_t)r;
    }
    return s0;
}

/* Level 2 of one group: U8 = Q8 + 128 in [9, 247]; a = min U8,
 * s = max(1, ceil((max U8 - a) / 15)) <= 16, Q4 = round((U8 - a) / s) <= 15.
 * Since Q4 * s <= (max U8 - a) + s / 2 <= max U8 - a + 8, U8' = Q4 s + a never
 * exceeds 247 + 8 = 255. */
static void quantize_group_level2(const int8_t *q8, int G, uint8_t *q4, uint8_t *s_out, uint8_t *a_out)
{
    int lo = 255, hi = 0;
    for (int i = 0; i < G; i++) {
        int u = q8[i] + 128;
        if (u < lo)
            lo = u;
        if (u > hi)
            hi = u;
    }
    int s = (hi - lo + 14) / 15;
    if (s < 1)
        s = 1;
    for (int i = 0; i < G; i++) {
        int q = round_div(q8[i] + 128 - lo, s);
        q4[i] = (uint8_t)(q > 15 ? 15 : q);
    }
    *s_out = (uint8_t)s;
    *a_out = (uint8_t)lo;
}

static qjit_status find_nonfinite_f32(qjit_context *ctx, const float *W, int64_t N, int64_t K)
{
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++)
            if (!isfinite(W[n * K + k]))
                return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "weight W[%lld, %lld] is %s", (long long)n,
                                   (long long)k, isnan(W[n * K + k]) ? "NaN" : "infinite");
    return QJIT_OK;
}

static qjit_status find_nonfinite_f16(qjit_context *ctx, const uint16_t *W, int64_t N, int64_t K)
{
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++) {
            uint16_t h = W[n * K + k];
            if ((h & 0x7C00u) == 0x7C00u)
                return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "weight W[%lld, %lld] is %s (FP16 0x%04x)",
                                   (long long)n, (long long)k, (h & 0x3FFu) ? "NaN" : "infinite", h);
        }
    return QJIT_OK;
}

/* Quantizes rows of an already checked, finite W. q8_row and q4_row are
 * scratch of K bytes, used where the caller does not want Q8 or Q4. */
static void quantize_rows(const float *W, int64_t N, int64_t K, int G, int8_t *q8_row, uint8_t *q4_row,
                          int8_t *Q8, uint8_t *Q4, uint8_t *s, uint8_t *a, float *s0)
{
    int64_t groups = K / G;
    for (int64_t n = 0; n < N; n++) {
        int8_t *q8 = Q8 ? Q8 + n * K : q8_row;
        uint8_t *q4 = Q4 ? Q4 + n * K : q4_row;
        float row_s0 = quantize_row_level1(W + n * K, K, q8);
        for (int64_t gi = 0; gi < groups; gi++) {
            uint8_t gs, ga;
            quantize_group_level2(q8 + gi * G, G, q4 + gi * G, &gs, &ga);
            if (s)
                s[n * groups + gi] = gs;
            if (a)
                a[n * groups + gi] = ga;
        }
        if (s0)
            s0[n] = row_s0;
    }
}

qjit_status qjit__lqq_quantize(qjit_context *ctx, const float *W, int64_t N, int64_t K, int group_size,
                               int8_t *Q8, uint8_t *Q4, uint8_t *s, uint8_t *a, float *s0)
{
    if (!W)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "weights are NULL");
    if (N <= 0 || K <= 0 || K > INT32_MAX)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "bad weight shape N=%lld K=%lld", (long long)N,
                           (long long)K);
    int G = group_size ? group_size : (int)K;
    if (G < 0 || K % G != 0)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "group size %d does not divide K=%lld", group_size,
                           (long long)K);
    size_t elements;
    if (!qjit__mul_size((size_t)N, (size_t)K, &elements) || elements > (size_t)INT64_MAX)
        return qjit__error(ctx, QJIT_OVERFLOW, "N=%lld x K=%lld overflows", (long long)N, (long long)K);
    qjit_status st = find_nonfinite_f32(ctx, W, N, K);
    if (st != QJIT_OK)
        return st;

    int8_t *q8_row = qjit__alloc(ctx, (size_t)K);
    uint8_t *q4_row = qjit__alloc(ctx, (size_t)K);
    if (q8_row && q4_row)
        quantize_rows(W, N, K, G, q8_row, q4_row, Q8, Q4, s, a, s0);
    else
        st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory quantizing a row of %lld weights",
                         (long long)K);
    qjit__free(ctx, q8_row, (size_t)K);
    qjit__free(ctx, q4_row, (size_t)K);
    return st;
}

/*------------------------------------------------------------------------
 * Packing: the dual-MMA layout of quant.h
 *------------------------------------------------------------------------*/

void qjit__lqq_pack(int64_t N, int64_t K, int group_size, const uint8_t *Q4, const uint8_t *s,
                    const uint8_t *a, uint8_t *qweight, uint8_t *gparams)
{
    int64_t G = group_size ? group_size : K;
    int64_t kblocks = K / QJIT__PACK_K, groups = K / G;

    for (int64_t nb = 0; nb < N / QJIT__PACK_N; nb++) {
        int64_t n0 = nb * QJIT__PACK_N;
        for (int64_t kb = 0; kb < kblocks; kb++) {
            int64_t k0 = kb * QJIT__PACK_K;
            uint8_t *block = qweight + (nb * kblocks + kb) * BLOCK_BYTES;
            for (int lane = 0; lane < 32; lane++) {
                int g = lane / 4, t = lane % 4;
                const uint8_t *row_lo = Q4 + (n0 + g) * K;        /* row g: low nibbles */
                const uint8_t *row_hi = Q4 + (n0 + g + 8) * K;    /* row g + 8: high nibbles */
                for (int kk = 0; kk < 2; kk++)
                    for (int h = 0; h < 2; h++) {
                        int word = 2 * kk + h;
                        for (int j = 0; j < 4; j++) {
                            int64_t k = k0 + 32 * kk + 16 * h + 4 * t + j;
                            block[lane * 16 + word * 4 + j] =
                                (uint8_t)((row_lo[k] & 0x0F) | (row_hi[k] & 0x0F) << 4);
                        }
                    }
            }
        }
        for (int64_t gi = 0; gi < groups; gi++) {
            uint8_t *entry = gparams + (nb * groups + gi) * GPARAMS_ENTRY_BYTES;
            for (int g = 0; g < 8; g++) {
                entry[4 * g + 0] = s[(n0 + g) * groups + gi];
                entry[4 * g + 1] = a[(n0 + g) * groups + gi];
                entry[4 * g + 2] = s[(n0 + g + 8) * groups + gi];
                entry[4 * g + 3] = a[(n0 + g + 8) * groups + gi];
            }
        }
    }
}

void qjit__lqq_unpack(int64_t N, int64_t K, int group_size, const uint8_t *qweight,
                      const uint8_t *gparams, uint8_t *Q4, uint8_t *s, uint8_t *a)
{
    int64_t G = group_size ? group_size : K;
    int64_t kblocks = K / QJIT__PACK_K, groups = K / G;

    for (int64_t nb = 0; nb < N / QJIT__PACK_N; nb++) {
        int64_t n0 = nb * QJIT__PACK_N;
        for (int64_t kb = 0; kb < kblocks; kb++) {
            int64_t k0 = kb * QJIT__PACK_K;
            const uint8_t *block = qweight + (nb * kblocks + kb) * BLOCK_BYTES;
            for (int lane = 0; lane < 32; lane++) {
                int g = lane / 4, t = lane % 4;
                for (int kk = 0; kk < 2; kk++)
                    for (int h = 0; h < 2; h++) {
                        int word = 2 * kk + h;
                        for (int j = 0; j < 4; j++) {
                            int64_t k = k0 + 32 * kk + 16 * h + 4 * t + j;
                            uint8_t byte = block[lane * 16 + word * 4 + j];
                            Q4[(n0 + g) * K + k] = byte & 0x0F;
                            Q4[(n0 + g + 8) * K + k] = byte >> 4;
                        }
                    }
            }
        }
        for (int64_t gi = 0; gi < groups; gi++) {
            const uint8_t *entry = gparams + (nb * groups + gi) * GPARAMS_ENTRY_BYTES;
            for (int g = 0; g < 8; g++) {
                s[(n0 + g) * groups + gi] = entry[4 * g + 0];
                a[(n0 + g) * groups + gi] = entry[4 * g + 1];
                s[(n0 + g + 8) * groups + gi] = entry[4 * g + 2];
                a[(n0 + g + 8) * groups + gi] = entry[4 * g + 3];
            }
        }
    }
}

/* Dequantizes block by block, walking the layout exactly as unpack does.
 * Group boundaries are multiples of 64, so all 64 columns of a block share
 * one (s, a) per row. */
void qjit__lqq_dequantize(const qjit__weights_view *v, int8_t *Wq)
{
    const uint8_t *qweight = v->payload + v->qweight_offset;
    const uint8_t *gparams = v->payload + v->gparams_offset;
    int64_t K = v->K, G = v->group_size;
    int64_t kblocks = K / QJIT__PACK_K, groups = K / G;

    for (int64_t nb = 0; nb < v->N / QJIT__PACK_N; nb++) {
        int64_t n0 = nb * QJIT__PACK_N;
        for (int64_t kb = 0; kb < kblocks; kb++) {
            int64_t k0 = kb * QJIT__PACK_K;
            const uint8_t *block = qweight + (nb * kblocks + kb) * BLOCK_BYTES;
            const uint8_t *entry = gparams + (nb * groups + k0 / G) * GPARAMS_ENTRY_BYTES;
            for (int lane = 0; lane < 32; lane++) {
                int g = lane / 4, t = lane % 4;
                unsigned s_lo = entry[4 * g + 0], a_lo = entry[4 * g + 1];   /* row g */
                unsigned s_hi = entry[4 * g + 2], a_hi = entry[4 * g + 3];   /* row g + 8 */
                int8_t *row_lo = Wq + (n0 + g) * K, *row_hi = Wq + (n0 + g + 8) * K;
                for (int kk = 0; kk < 2; kk++)
                    for (int h = 0; h < 2; h++) {
                        int word = 2 * kk + h;
                        for (int j = 0; j < 4; j++) {
                            int64_t k = k0 + 32 * kk + 16 * h + 4 * t + j;
                            uint8_t byte = block[lane * 16 + word * 4 + j];
                            /* U8' = Q4 s + a <= 255, then flip the top bit: U8' - 128. */
                            row_lo[k] = (int8_t)(uint8_t)(((byte & 0x0Fu) * s_lo + a_lo) ^ 0x80u);
                            row_hi[k] = (int8_t)(uint8_t)(((byte >> 4) * s_hi + a_hi) ^ 0x80u);
                        }
                    }
            }
        }
    }
}

/*------------------------------------------------------------------------
 * The packed buffer
 *------------------------------------------------------------------------*/

qjit_status qjit__weights_view_init(qjit_context *ctx, const void *packed, size_t bytes,
                                    int verify_payload, qjit__weights_view *view)
{
    if (!packed || !view)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "packed weights or view is NULL");
    if (bytes < QJIT__WEIGHTS_HEADER_BYTES)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT,
                           "packed weights of %zu bytes are shorter than the %d-byte header", bytes,
                           QJIT__WEIGHTS_HEADER_BYTES);
    const uint8_t *hdr = packed;
    if (memcmp(hdr + HDR_MAGIC, QJIT__WEIGHTS_MAGIC, 8) != 0)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "not a qjit packed-weight buffer (bad magic)");
    uint32_t version = load_u32(hdr + HDR_VERSION);
    if (version != WEIGHTS_VERSION)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight format version %u is not supported (want %u)",
                           version, WEIGHTS_VERSION);
    if (qjit__hash64(hdr, HDR_HEADER_HASH, 0) != load_u64(hdr + HDR_HEADER_HASH))
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight header checksum mismatch");

    uint32_t scheme = load_u32(hdr + HDR_SCHEME);
    int64_t N = (int64_t)load_u64(hdr + HDR_N);
    int64_t K = (int64_t)load_u64(hdr + HDR_K);
    int32_t group = (int32_t)load_u32(hdr + HDR_GROUP);
    uint32_t flags = load_u32(hdr + HDR_FLAGS);
    uint64_t payload_bytes = load_u64(hdr + HDR_PAYLOAD_BYTES);
    if (flags != 0)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight header has unknown flags 0x%x", flags);

    payload_layout p;
    if (check_shape(ctx, (qjit_scheme)scheme, group, N, K, &p) != QJIT_OK)
        /* The shape error's detail is in the last error; restate it as corruption. */
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS,
                           "packed-weight header is inconsistent: scheme=%u N=%lld K=%lld group=%d", scheme,
                           (long long)N, (long long)K, group);
    if (payload_bytes != p.total)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS,
                           "packed-weight header says %llu payload bytes, N=%lld K=%lld group=%d need %zu",
                           (unsigned long long)payload_bytes, (long long)N, (long long)K, group, p.total);
    if (bytes - QJIT__WEIGHTS_HEADER_BYTES != p.total)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS,
                           "packed-weight buffer is %zu bytes, its header says %zu (%s)", bytes,
                           QJIT__WEIGHTS_HEADER_BYTES + p.total,
                           bytes < QJIT__WEIGHTS_HEADER_BYTES + p.total ? "truncated" : "trailing bytes");
    const uint8_t *payload = hdr + QJIT__WEIGHTS_HEADER_BYTES;
    if (verify_payload && qjit__hash64(payload, p.total, 0) != load_u64(hdr + HDR_PAYLOAD_HASH))
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight payload checksum mismatch");

    view->scheme = (qjit_scheme)scheme;
    view->group = group;
    view->group_size = group ? group : (int)K;
    view->N = N;
    view->K = K;
    view->payload = payload;
    view->payload_bytes = p.total;
    view->qweight_offset = 0;
    view->qweight_bytes = p.qweight_bytes;
    view->gparams_offset = p.qweight_bytes;
    view->gparams_bytes = p.gparams_bytes;
    view->s0_offset = p.qweight_bytes + p.gparams_bytes;
    view->s0_bytes = p.s0_bytes;
    return QJIT_OK;
}

qjit_status qjit_weights_inspect(qjit_context *ctx, const void *packed, size_t bytes, qjit_weights_info *info)
{
    qjit__weights_view v;
    qjit_status st = qjit__weights_view_init(ctx, packed, bytes, 1, &v);
    if (st != QJIT_OK)
        return st;
    if (info) {
        info->scheme = v.scheme;
        info->group = v.group;
        info->N = v.N;
        info->K = v.K;
        info->bytes = QJIT__WEIGHTS_HEADER_BYTES + v.payload_bytes;
    }
    return QJIT_OK;
}

/* Scratch for quantizing one 16-row slab, all allocated before anything is
 * written so that no failure can leave a half-written buffer behind. */
typedef struct slab {
    float *w;
    int8_t *q8_row;
    uint8_t *q4, *s, *a;
    float s0[QJIT__PACK_N];
    size_t w_bytes, q4_bytes, param_bytes;
} slab;

static void slab_free(qjit_context *ctx, slab *sl)
{
    qjit__free(ctx, sl->w, sl->w_bytes);
    qjit__free(ctx, sl->q8_row, sl->q4_bytes / QJIT__PACK_N);
    qjit__free(ctx, sl->q4, sl->q4_bytes);
    qjit__free(ctx, sl->s, sl->param_bytes);
    qjit__free(ctx, sl->a, sl->param_bytes);
}

static int slab_alloc(qjit_context *ctx, slab *sl, int64_t K, int64_t groups)
{
    memset(sl, 0, sizeof *sl);
    sl->w_bytes = (size_t)(QJIT__PACK_N * K) * sizeof(float);
    sl->q4_bytes = (size_t)(QJIT__PACK_N * K);
    sl->param_bytes = (size_t)(QJIT__PACK_N * groups);
    sl->w = qjit__alloc(ctx, sl->w_bytes);
    sl->q8_row = qjit__alloc(ctx, (size_t)K);
    sl->q4 = qjit__alloc(ctx, sl->q4_bytes);
    sl->s = qjit__alloc(ctx, sl->param_bytes);
    sl->a = qjit__alloc(ctx, sl->param_bytes);
    if (sl->w && sl->q8_row && sl->q4 && sl->s && sl->a)
        return 1;
    slab_free(ctx, sl);
    return 0;
}

qjit_status qjit_quantize_weights(qjit_context *ctx, qjit_scheme scheme, int group, const void *W,
                                  qjit_dtype dtype, int64_t N, int64_t K, void *out, size_t capacity,
                                  size_t *written)
{
    payload_layout p;
    qjit_status st = check_shape(ctx, scheme, group, N, K, &p);
    if (st != QJIT_OK)
        return st;
    if (!W || !out)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "%s is NULL", !W ? "W" : "out");
    if (dtype != QJIT_DTYPE_F16 && dtype != QJIT_DTYPE_F32)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "unknown weight dtype %d", (int)dtype);
    size_t need = QJIT__WEIGHTS_HEADER_BYTES + p.total;
    if (capacity < need)
        return qjit__error(ctx, QJIT_OVERFLOW, "packed weights need %zu bytes, capacity is %zu", need, capacity);
    st = dtype == QJIT_DTYPE_F16 ? find_nonfinite_f16(ctx, W, N, K) : find_nonfinite_f32(ctx, W, N, K);
    if (st != QJIT_OK)
        return st;

    int G = group ? group : (int)K;
    int64_t groups = K / G;
    slab sl;
    if (!slab_alloc(ctx, &sl, K, groups))
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory quantizing weights (K=%lld)", (long long)K);

    /* From here nothing can fail: the input is finite and the scratch is ours. */
    uint8_t *hdr = out;
    uint8_t *payload = hdr + QJIT__WEIGHTS_HEADER_BYTES;
    uint8_t *qweight = payload, *gparams = payload + p.qweight_bytes;
    uint8_t *s0 = gparams + p.gparams_bytes;
    for (int64_t nb = 0; nb < N / QJIT__PACK_N; nb++) {
        size_t first = (size_t)(nb * QJIT__PACK_N * K), count = (size_t)(QJIT__PACK_N * K);
        if (dtype == QJIT_DTYPE_F32) {
            memcpy(sl.w, (const float *)W + first, count * sizeof(float));
        } else {
            const uint16_t *src = (const uint16_t *)W + first;
            for (size_t i = 0; i < count; i++)
                sl.w[i] = qjit__half_to_float(src[i]);
        }
        quantize_rows(sl.w, QJIT__PACK_N, K, G, sl.q8_row, NULL, NULL, sl.q4, sl.s, sl.a, sl.s0);
        /* A 16-row slab is block row nb: its blocks and gparams entries are
         * contiguous, so packing it as an N = 16 matrix puts it in place. */
        qjit__lqq_pack(QJIT__PACK_N, K, G, sl.q4, sl.s, sl.a, qweight + nb * (K / QJIT__PACK_K) * BLOCK_BYTES,
                       gparams + nb * groups * GPARAMS_ENTRY_BYTES);
        for (int r = 0; r < QJIT__PACK_N; r++)
            store_f32(s0 + (nb * QJIT__PACK_N + r) * sizeof(float), sl.s0[r]);
    }
    slab_free(ctx, &sl);

    memset(hdr, 0, QJIT__WEIGHTS_HEADER_BYTES);
    memcpy(hdr + HDR_MAGIC, QJIT__WEIGHTS_MAGIC, 8);
    store_u32(hdr + HDR_VERSION, WEIGHTS_VERSION);
    store_u32(hdr + HDR_SCHEME, (uint32_t)scheme);
    store_u64(hdr + HDR_N, (uint64_t)N);
    store_u64(hdr + HDR_K, (uint64_t)K);
    store_u32(hdr + HDR_GROUP, (uint32_t)group);
    store_u32(hdr + HDR_FLAGS, 0);
    store_u64(hdr + HDR_PAYLOAD_BYTES, p.total);
    store_u64(hdr + HDR_PAYLOAD_HASH, qjit__hash64(payload, p.total, 0));
    store_u64(hdr + HDR_HEADER_HASH, qjit__hash64(hdr, HDR_HEADER_HASH, 0));
    if (written)
        *written = need;
    return QJIT_OK;
}
