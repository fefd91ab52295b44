/* reference.c -- the CPU reference of the quantized linear layer: per-token
 * INT8 activation quantization and the quantized GEMM over any scheme's
 * packed weights (docs/schemes.md), bit-identical to what the GPU kernels
 * compute: the INT32 accumulators exactly, the FP32 output with the same
 * float operations as the kernels' epilogues.
 *
 * The GEMM is fast enough to check real layer shapes (M=1024, N=11008,
 * K=4096 is 46 G multiply-adds): threads take panels of output channels,
 * dequantize the panel's weights once into INT8, and run a 4 x 4 register
 * blocked INT8 dot product that the compiler vectorizes. */
#define _GNU_SOURCE
#include "core.h"
#include "parallel.h"
#include "fp16.h"
#include "bytes.h"
#include "packed.h"
#include "residual.h"
#include "scheme.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The dot-product kernels are the only hot code: build them at -O3 whatever
 * the library's level, and on x86-64 with glibc also for AVX2 and AVX-512
 * (picked at load time through an ifunc; the arithmetic is integer, so every
 * clone gives the same bits). ThreadSanitizer instruments the ifunc resolver,
 * which then runs before its runtime and crashes: no clones under TSan.
 * QJIT_NO_TARGET_CLONES turns them off by hand. */
#if defined(__GNUC__) && !defined(__clang__)
#  if defined(__x86_64__) && defined(__GLIBC__) && __GNUC__ >= 12 && !defined(__SANITIZE_THREAD__) && \
      !defined(QJIT_NO_TARGET_CLONES)
#    define DOT_KERNEL __attribute__((optimize("O3"), target_clones("arch=x86-64-v4", "avx2", "default")))
#  else
#    define DOT_KERNEL __attribute__((optimize("O3")))
#  endif
#else
#  define DOT_KERNEL
#endif

#define MR 4                     /* tokens per register block */
#define NR 4                     /* output channels per register block */
#define PANEL_ROWS 64            /* output channels one thread dequantizes at once */
/* Inner sums stay in int32 without overflow for this many k
 * (65536 * 128 * 127 < 2^31); longer rows add chunks modulo 2^32, which is
 * what the GPU's int32 accumulator does. Groups (at most K_CHUNK) are summed
 * whole for the schemes that scale each group's sum. */
#define K_CHUNK 65536

/*------------------------------------------------------------------------
 * Activations
 *------------------------------------------------------------------------*/

/* A token's 16-bit floats (FP16 or BF16) as floats. */
typedef float (*to_float_fn)(uint16_t);

/* One part of a token: n values, x[k0 + j] in the caller's order, or
 * x[perm[k0 + j]] (perm: u32 little-endian) in a layer's. */
#define PART_X(j) cvt(x[perm ? qjit__load_u32(perm + 4 * (k0 + (j))) : (uint32_t)(k0 + (j))])

/* The largest |x| of a part. */
static float part_amax(const uint16_t *x, to_float_fn cvt, const uint8_t *perm, int64_t k0, int64_t n)
{
    float amax = 0.0f;
    for (int64_t j = 0; j < n; j++) {
        float v = fabsf(PART_X(j));
        if (v > amax)
            amax = v;
    }
    return amax;
}

/* A part as clamp(round(x / scale), -limit, limit) into q. */
static void quantize_span(const uint16_t *x, to_float_fn cvt, const uint8_t *perm, int64_t k0, int64_t n, float scale,
                          float limit, int8_t *q)
{
    for (int64_t j = 0; j < n; j++) {
        float v = roundf(PART_X(j) / scale);
        if (v > limit)
            v = limit;
        if (v < -limit)
            v = -limit;
        q[j] = (int8_t)v;
    }
}
#undef PART_X

/* Per-token symmetric quantization of a part: scale = max|x| / limit (1
 * for an all-zero part), q = clamp(round(x / scale), -limit, limit).
 * Returns the scale. */
static float quantize_part(const uint16_t *x, to_float_fn cvt, const uint8_t *perm, int64_t k0, int64_t n, float limit,
                           int8_t *q)
{
    /* Division, not multiplication by a reciprocal: the GPU kernel does
     * the same two IEEE divisions, so both round identically. */
    float amax = part_amax(x, cvt, perm, k0, n), scale = amax == 0.0f ? 1.0f : amax / limit;
    quantize_span(x, cvt, perm, k0, n, scale, limit, q);
    return scale;
}

/* M one-part tokens, each quantized whole to `bits` (8: +-127, 4: +-7). */
static void quantize_rows(const uint16_t *X, to_float_fn cvt, int64_t M, int64_t K, int bits, int8_t *Xq, float *sx)
{
    const float limit = bits == 8 ? 127.0f : 7.0f;
    for (int64_t m = 0; m < M; m++)
        sx[m] = quantize_part(X + m * K, cvt, NULL, 0, K, limit, Xq + m * K);
}

/* Whether channel k is in an INT8 channels' set (bit k % 8 of byte k / 8). */
static int in_set(const uint8_t *set, int64_t k)
{
    return set[k / 8] >> (k % 8) & 1;
}

/* One token of a shared-scale two-part layer (w4ax-s), in place: the
 * channels of the set INT8, the rest INT4, with one scale, max(max8 / 127,
 * max4 / 7) (1 for an all-zero token); returns it. The GPU kernel does the
 * same two IEEE divisions. */
static float quantize_shared(const uint16_t *x, to_float_fn cvt, const uint8_t *set, int64_t K, int8_t *q)
{
    float a8 = 0.0f, a4 = 0.0f;
    for (int64_t k = 0; k < K; k++) {
        float v = fabsf(cvt(x[k]));
        if (in_set(set, k))
            a8 = v > a8 ? v : a8;
        else
            a4 = v > a4 ? v : a4;
    }
    float scale = a8 == 0.0f && a4 == 0.0f ? 1.0f : fmaxf(a8 / 127.0f, a4 / 7.0f);
    for (int64_t k = 0; k < K; k++)
        quantize_span(x, cvt, NULL, k, 1, scale, in_set(set, k) ? 127.0f : 7.0f, q + k);
    return scale;
}

static qjit_status check_tokens(qjit_context *ctx, int64_t M, int64_t K, const uint16_t *X, int dtype,
                                const int8_t *Xq, const float *sx);

qjit_status qjit_reference_quantize_activations(qjit_context *ctx, int64_t M, int64_t K, const uint16_t *X,
                                                int8_t *Xq, float *sx)
{
    return qjit_reference_quantize_activations_bits(ctx, 8, M, K, X, Xq, sx);
}

qjit_status qjit_reference_quantize_activations_bits(qjit_context *ctx, int bits, int64_t M, int64_t K,
                                                     const uint16_t *X, int8_t *Xq, float *sx)
{
    if (bits != 8 && bits != 4)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "activations are quantized to 8 or 4 bits, not %d", bits);
    qjit_status st = check_tokens(ctx, M, K, X, QJIT_DTYPE_F16, Xq, sx);
    if (st != QJIT_OK)
        return st;
    quantize_rows(X, qjit__half_to_float, M, K, bits, Xq, sx);
    return QJIT_OK;
}

/* The arguments of an activation quantization, and X (M x K, FP16 or BF16)
 * scanned for NaN and infinity first, so that bad input leaves the outputs
 * untouched. */
static qjit_status check_tokens(qjit_context *ctx, int64_t M, int64_t K, const uint16_t *X, int dtype,
                                const int8_t *Xq, const float *sx)
{
    if (M <= 0 || K <= 0)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "activation shape must be positive, got M=%lld K=%lld",
                           (long long)M, (long long)K);
    if (!X || !Xq || !sx)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "%s is NULL", !X ? "X" : !Xq ? "Xq" : "sx");
    size_t elements;
    if (!qjit__mul_size((size_t)M, (size_t)K, &elements) || elements > (size_t)INT64_MAX)
        return qjit__error(ctx, QJIT_OVERFLOW, "M=%lld x K=%lld overflows", (long long)M, (long long)K);
    if (dtype != QJIT_DTYPE_F16 && dtype != QJIT_DTYPE_BF16)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "activations are FP16 or BF16 (qjit_dtype %d or %d), not %d",
                           QJIT_DTYPE_F16, QJIT_DTYPE_BF16, dtype);
    /* Exponent all ones: NaN or infinity. */
    const uint16_t exp = dtype == QJIT_DTYPE_F16 ? 0x7C00u : 0x7F80u;
    for (int64_t m = 0; m < M; m++)
        for (int64_t k = 0; k < K; k++) {
            uint16_t h = X[m * K + k];
            if ((h & exp) == exp)
                return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "activation X[%lld, %lld] is %s (%s 0x%04x)",
                                   (long long)m, (long long)k, (h & ~exp & 0x7FFFu) ? "NaN" : "infinite",
                                   dtype == QJIT_DTYPE_F16 ? "FP16" : "BF16", h);
        }
    return QJIT_OK;
}

void qjit_activation_info_init(qjit_activation_info *info)
{
    if (!info)
        return;
    memset(info, 0, sizeof *info);
    info->struct_size = sizeof *info;
}

qjit_status qjit_weights_activation(qjit_context *ctx, const void *packed, size_t bytes, qjit_activation_info *info)
{
    if (!info || info->struct_size == 0 || info->struct_size > sizeof *info)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_activation_info is NULL or its struct_size is not set "
                           "(qjit_activation_info_init)");
    qjit__weights_view v;
    qjit_status st = qjit__weights_view_init(ctx, packed, bytes, 1, &v);
    if (st != QJIT_OK)
        return st;
    qjit_activation_info out = {info->struct_size, qjit_scheme_activation_bits(v.scheme->id), 1, 0, 0};
    if (v.scheme->two_part) {
        out.parts = v.scheme->shared_scale ? 1 : 2;
        out.a8_channels = qjit__int8_channels(&v);
        out.permuted = qjit__view_order(&v) != NULL;
    }
    memcpy(info, &out, info->struct_size);
    return QJIT_OK;
}

qjit_status qjit_weights_channel_order(qjit_context *ctx, const void *packed, size_t bytes, uint32_t *perm)
{
    if (!perm)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "perm is NULL");
    qjit__weights_view v;
    qjit_status st = qjit__weights_view_init(ctx, packed, bytes, 1, &v);
    if (st != QJIT_OK)
        return st;
    const uint8_t *p = qjit__view_order(&v);
    for (int64_t j = 0; j < v.K; j++)
        perm[j] = p ? qjit__load_u32(p + 4 * j) : (uint32_t)j;
    return QJIT_OK;
}

qjit_status qjit_weights_int8_set(qjit_context *ctx, const void *packed, size_t bytes, uint8_t *is8)
{
    if (!is8)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "is8 is NULL");
    qjit__weights_view v;
    qjit_status st = qjit__weights_view_init(ctx, packed, bytes, 1, &v);
    if (st != QJIT_OK)
        return st;
    const uint8_t *perm = qjit__view_order(&v), *set = qjit__view_a8set(&v);
    const int64_t k8 = qjit__int8_channels(&v);
    memset(is8, 0, (size_t)v.K);
    for (int64_t j = 0; perm && j < k8; j++)
        is8[qjit__load_u32(perm + 4 * j)] = 1;
    for (int64_t k = 0; set && k < v.K; k++)
        is8[k] = (uint8_t)in_set(set, k);
    return QJIT_OK;
}

qjit_status qjit_reference_quantize_activations_for(qjit_context *ctx, const void *packed, size_t bytes,
                                                    int64_t M, const uint16_t *X, int8_t *Xq, float *sx)
{
    return qjit_reference_quantize_activations_dtype(ctx, packed, bytes, M, QJIT_DTYPE_F16, X, Xq, sx);
}

qjit_status qjit_reference_quantize_activations_dtype(qjit_context *ctx, const void *packed, size_t bytes,
                                                      int64_t M, qjit_dtype dtype, const uint16_t *X, int8_t *Xq,
                                                      float *sx)
{
    qjit__weights_view v;
    qjit_status st = qjit__weights_view_init(ctx, packed, bytes, 1, &v);
    if (st != QJIT_OK)
        return st;
    int64_t K = v.K, a8 = qjit__int8_channels(&v);
    if ((st = check_tokens(ctx, M, K, X, (int)dtype, Xq, sx)) != QJIT_OK)
        return st;
    const to_float_fn cvt = dtype == QJIT_DTYPE_BF16 ? qjit__bf16_to_float : qjit__half_to_float;
    if (!v.scheme->two_part) {
        quantize_rows(X, cvt, M, K, qjit_scheme_activation_bits(v.scheme->id), Xq, sx);
        return QJIT_OK;
    }
    const uint8_t *perm = qjit__view_order(&v), *set = qjit__view_a8set(&v);
    for (int64_t m = 0; v.scheme->shared_scale && m < M; m++)
        sx[m] = quantize_shared(X + m * K, cvt, set, K, Xq + m * K);
    for (int64_t m = 0; !v.scheme->shared_scale && m < M; m++) {
        sx[2 * m] = quantize_part(X + m * K, cvt, perm, 0, a8, 127.0f, Xq + m * K);
        sx[2 * m + 1] = quantize_part(X + m * K, cvt, perm, a8, K - a8, 7.0f, Xq + m * K + a8);
    }
    return QJIT_OK;
}

/*------------------------------------------------------------------------
 * GEMM kernels: plain loops the vectorizer turns into widening multiply-adds
 *------------------------------------------------------------------------*/

/* out[i][j] = sum_k x_i[k] * w_j[k] for 4 rows of X and 4 rows of W'. */
DOT_KERNEL static void dot_4x4(const int8_t *restrict x, int64_t ldx, const int8_t *restrict w, int64_t ldw,
                               int64_t K, int32_t out[MR * NR])
{
    const int8_t *x0 = x, *x1 = x + ldx, *x2 = x + 2 * ldx, *x3 = x + 3 * ldx;
    const int8_t *w0 = w, *w1 = w + ldw, *w2 = w + 2 * ldw, *w3 = w + 3 * ldw;
    int32_t c00 = 0, c01 = 0, c02 = 0, c03 = 0, c10 = 0, c11 = 0, c12 = 0, c13 = 0;
    int32_t c20 = 0, c21 = 0, c22 = 0, c23 = 0, c30 = 0, c31 = 0, c32 = 0, c33 = 0;
    for (int64_t k = 0; k < K; k++) {
        c00 += x0[k] * w0[k]; c01 += x0[k] * w1[k]; c02 += x0[k] * w2[k]; c03 += x0[k] * w3[k];
        c10 += x1[k] * w0[k]; c11 += x1[k] * w1[k]; c12 += x1[k] * w2[k]; c13 += x1[k] * w3[k];
        c20 += x2[k] * w0[k]; c21 += x2[k] * w1[k]; c22 += x2[k] * w2[k]; c23 += x2[k] * w3[k];
        c30 += x3[k] * w0[k]; c31 += x3[k] * w1[k]; c32 += x3[k] * w2[k]; c33 += x3[k] * w3[k];
    }
    out[0] = c00; out[1] = c01; out[2] = c02; out[3] = c03;
    out[4] = c10; out[5] = c11; out[6] = c12; out[7] = c13;
    out[8] = c20; out[9] = c21; out[10] = c22; out[11] = c23;
    out[12] = c30; out[13] = c31; out[14] = c32; out[15] = c33;
}

/* The leftover tokens when M is not a multiple of 4: one row of X. */
DOT_KERNEL static void dot_1x4(const int8_t *restrict x, const int8_t *restrict w, int64_t ldw, int64_t K,
                               int32_t out[NR])
{
    const int8_t *w0 = w, *w1 = w + ldw, *w2 = w + 2 * ldw, *w3 = w + 3 * ldw;
    int32_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
    for (int64_t k = 0; k < K; k++) {
        c0 += x[k] * w0[k]; c1 += x[k] * w1[k]; c2 += x[k] * w2[k]; c3 += x[k] * w3[k];
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

/*------------------------------------------------------------------------
 * Panels of output channels, spread over the CPUs (parallel.h)
 *------------------------------------------------------------------------*/

typedef struct gemm_job {
    const qjit__weights_view *view;
    int64_t M, N, K;
    const int8_t *Xq;
    const float *sx;
    const int32_t *rowsum;       /* sum_k Xq[m, k], for zero-point epilogues; NULL otherwise */
    int32_t *acc;
    float *Y;
    int64_t a8;                  /* a two-part layer's INT8 channels (its first a8); -1: one part */
} gemm_job;

/* Writes acc and Y of one register block: tokens m0.., channels n0..n0+3,
 * through the scheme's epilogue (the kernels' float operations). A two-part
 * layer (w4ax; sum4 != NULL): sum holds the INT8 part's sums and sum4 the
 * INT4 part's, into two acc planes, and Y = fmaf(float(acc8), sx8 s,
 * float(acc4) (sx4 s)). */
static void store_block(const gemm_job *job, int64_t m0, int rows, int64_t n0, const uint32_t *sum,
                        const uint32_t *sum4)
{
    for (int j = 0; j < NR; j++) {
        float scale;
        int32_t zero;
        qjit__channel(job->view, n0 + j, &scale, &zero);
        for (int i = 0; i < rows; i++) {
            int64_t m = m0 + i, n = n0 + j;
            int32_t a = (int32_t)sum[i * NR + j];   /* two's complement: the int32 the GPU holds */
            int32_t a4 = sum4 ? (int32_t)sum4[i * NR + j] : 0;
            if (job->acc) {
                job->acc[m * job->N + n] = a;
                if (sum4)
                    job->acc[job->M * job->N + m * job->N + n] = a4;
            }
            if (job->Y && sum4) {
                job->Y[m * job->N + n] =
                    fmaf((float)a, job->sx[2 * m] * scale, (float)a4 * (job->sx[2 * m + 1] * scale));
            } else if (job->Y) {
                int32_t v = zero ? (int32_t)(sum[i * NR + j] - (uint32_t)zero * (uint32_t)job->rowsum[m]) : a;
                job->Y[m * job->N + n] = (float)v * (job->sx[m] * scale);
            }
        }
    }
}

/* sum[i][j] += dot products of tokens m0.. and operand rows j0.. over
 * columns [k0, k0 + kc), times scale[j] (1 without groups' scales). */
static void add_dots(const gemm_job *job, const int8_t *x, int mrows, const int8_t *w, int64_t k0, int64_t kc,
                     const uint32_t scale[NR], uint32_t *sum)
{
    int64_t K = job->K;
    int32_t part[MR * NR];
    if (mrows == MR) {
        dot_4x4(x + k0, K, w + k0, K, kc, part);
    } else {
        for (int i = 0; i < mrows; i++)
            dot_1x4(x + i * K + k0, w + k0, K, kc, part + i * NR);
    }
    for (int i = 0; i < mrows; i++)
        for (int j = 0; j < NR; j++)
            sum[i * NR + j] += (uint32_t)part[i * NR + j] * scale[j];
}

static void gemm_panel(const gemm_job *job, int8_t *wq, int8_t *r8, uint8_t *scratch, int64_t n_begin, int64_t rows)
{
    const qjit__weights_view *v = job->view;
    v->scheme->operand(v, n_begin, rows, wq, scratch);
    if (r8)
        qjit__residual_operand(v, n_begin, rows, r8);
    int64_t K = job->K, G = v->group_size;
    int fold = v->scheme->group_scale != NULL;
    for (int64_t m0 = 0; m0 < job->M; m0 += MR) {
        int mrows = job->M - m0 < MR ? (int)(job->M - m0) : MR;
        const int8_t *x = job->Xq + m0 * K;
        for (int64_t j0 = 0; j0 < rows; j0 += NR) {
            const int8_t *w = wq + j0 * K;
            uint32_t sum[MR * NR] = {0}, sum4[MR * NR] = {0}, scale[NR] = {1, 1, 1, 1};
            if (fold) {
                for (int64_t gi = 0; gi < K / G; gi++) {
                    for (int j = 0; j < NR; j++)
                        scale[j] = (uint32_t)v->scheme->group_scale(v, n_begin + j0 + j, gi);
                    add_dots(job, x, mrows, w, gi * G, G, scale, sum);
                }
            } else {
                /* A two-part layer's INT8 part into sum, its INT4 part into sum4. */
                int64_t split = job->a8 >= 0 ? job->a8 : K;
                for (int64_t k0 = 0; k0 < split; k0 += K_CHUNK)
                    add_dots(job, x, mrows, w, k0, split - k0 < K_CHUNK ? split - k0 : K_CHUNK, scale, sum);
                for (int64_t k0 = split; k0 < K; k0 += K_CHUNK)
                    add_dots(job, x, mrows, w, k0, K - k0 < K_CHUNK ? K - k0 : K_CHUNK, scale, sum4);
            }
            if (r8) {
                /* The residual's own MMAs into the same INT32 sums: the four
                 * channels share a row block (blocks are 16-row multiples). */
                int64_t first, count = qjit__residual_row(v, n_begin + j0, &first), bk = v->residual.block_k;
                for (int64_t j = first; j < first + count; j++)
                    add_dots(job, x, mrows, r8 + j0 * K, qjit__residual_kblock(v, j) * bk, bk, scale, sum);
            }
            store_block(job, m0, mrows, n_begin + j0, sum, job->a8 >= 0 ? sum4 : NULL);
        }
    }
}

/* One panel of output channels (qjit__parallel_for's item): the worker's
 * scratch holds the panel's operand, the scheme's unpacking and, with a
 * residual, its operand, PANEL_ROWS x K bytes each. */
static void gemm_panel_item(void *arg, int64_t panel, void *scratch)
{
    const gemm_job *job = arg;
    size_t panel_bytes = (size_t)PANEL_ROWS * (size_t)job->K;
    int8_t *wq = scratch, *r8 = (int8_t *)scratch + 2 * panel_bytes;
    int64_t n0 = panel * PANEL_ROWS;
    int64_t rows = job->N - n0 < PANEL_ROWS ? job->N - n0 : PANEL_ROWS;
    gemm_panel(job, wq, job->view->residual.block_n ? r8 : NULL, (uint8_t *)scratch + panel_bytes, n0, rows);
}

qjit_status qjit_reference_gemm(qjit_context *ctx, const void *packed, size_t bytes, int64_t M,
                                const int8_t *Xq, const float *sx, int32_t *acc, float *Y)
{
    if (M <= 0)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "M must be > 0, got %lld", (long long)M);
    if (!Xq || !sx)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "%s is NULL", !Xq ? "Xq" : "sx");
    qjit__weights_view view;
    qjit_status st = qjit__weights_view_init(ctx, packed, bytes, 1, &view);
    if (st != QJIT_OK)
        return st;
    size_t t;
    if (!qjit__mul_size((size_t)M, (size_t)view.K, &t) || !qjit__mul_size((size_t)M, (size_t)view.N, &t) ||
        !qjit__mul_size(t, sizeof(float), &t))
        return qjit__error(ctx, QJIT_OVERFLOW, "M=%lld is too large for N=%lld K=%lld", (long long)M,
                           (long long)view.N, (long long)view.K);
    if (!acc && !Y)
        return QJIT_OK;          /* nothing asked for; the buffer is verified */

    /* The tokens' row sums, for epilogues that subtract a zero point. */
    int32_t *rowsum = qjit__alloc(ctx, (size_t)M * sizeof(int32_t));
    if (!rowsum)
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory for %lld row sums", (long long)M);
    for (int64_t m = 0; m < M; m++) {
        uint32_t s = 0;
        for (int64_t k = 0; k < view.K; k++)
            s += (uint32_t)(int32_t)Xq[m * view.K + k];
        rowsum[m] = (int32_t)s;
    }
    gemm_job job = {.view = &view, .M = M, .N = view.N, .K = view.K, .Xq = Xq, .sx = sx, .rowsum = rowsum,
                    .acc = acc, .Y = Y, .a8 = view.scheme->shared_scale ? -1 : qjit__int8_channels(&view)};
    size_t panel_bytes = (size_t)PANEL_ROWS * (size_t)view.K;
    st = qjit__parallel_for(ctx, (view.N + PANEL_ROWS - 1) / PANEL_ROWS, (view.residual.block_n ? 3 : 2) * panel_bytes,
                            gemm_panel_item, &job);
    qjit__free(ctx, rowsum, (size_t)M * sizeof(int32_t));
    return st;
}
