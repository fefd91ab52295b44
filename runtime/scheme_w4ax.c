/* scheme_w4ax.c -- w4ax and w4ax-s on the host (COMET's W4Ax, docs/schemes.md): w4a4's
 * per-channel symmetric INT4 weights over the input channels in the layer's
 * order, a permutation that puts the channels with the largest calibration
 * magnitude (max_t |calib[t, k]|; ties: the lower k) first, in
 * ceil(a8_fraction x K / 128) blocks of 128 that the activations keep in
 * INT8, each part in the caller's order within itself. The rest are INT4.
 * w4ax: per token two scales (each part's max|x| / 127 and / 7) and two
 * INT32 sums; the epilogue Y = fmaf(float(acc8), sx8 sw, float(acc4) (sx4
 * sw)). w4ax-s: the same INT8 channels, one scale per token, max(max8 /
 * 127, max4 / 7), for both parts (the INT8 part at the INT4 part's step,
 * 127 levels) and one sum, which does not depend on the channels' order:
 * its weights and activations keep the caller's order.
 *
 * Sections: qweight (4-bit blocks holding Wq + 8; w4ax: columns in the
 * layer's order), scale (sw per channel, float), and the layer's own: w4ax
 * perm (K u32, the caller's channel at each position), w4ax-s a8set (K / 8
 * bytes, bit k % 8 of byte k / 8 set for an INT8 channel k). Layer
 * parameter: the INT8 blocks. */
#define _POSIX_C_SOURCE 200809L
#include "scheme.h"
#include "bytes.h"
#include "core.h"
#include "fp16.h"
#include "layout.h"
#include "view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { QWEIGHT, SCALE, PERM, A8SET = PERM };

static const char *group_problem(int group)
{
    return group != 0 ? "w4ax has per-channel weights only (g=0)" : NULL;
}

static const char *k_problem(int64_t K)
{
    return K % QJIT__A8_BLOCK ? "w4ax's activations come in blocks of 128 channels" : NULL;
}

static size_t slab_bytes(int i, int64_t K, int group)
{
    (void)group;
    return i == QWEIGHT ? (size_t)(QJIT__PACK_N * K / 2) : i == SCALE ? QJIT__PACK_N * sizeof(float) : 0;
}

static size_t layer_bytes(int i, int64_t K)
{
    return i == PERM ? (size_t)K * sizeof(uint32_t) : 0;
}

static size_t layer_bytes_set(int i, int64_t K)
{
    return i == A8SET ? (size_t)K / 8 : 0;
}

static size_t scratch_bytes(int64_t K, int group)
{
    (void)group;
    /* The slab in the layer's column order, then w4a4's scratch. */
    return (size_t)QJIT__PACK_N * (size_t)K * (sizeof(float) + 2);
}

/* A channel's calibration magnitude and index, for the ranking. */
typedef struct channel_rank {
    float amax;
    int64_t k;
} channel_rank;

static int by_magnitude(const void *a, const void *b)
{
    const channel_rank *x = a, *y = b;
    if (x->amax != y->amax)
        return x->amax > y->amax ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

void qjit__w4ax_order(const float *amax, int64_t K, int64_t a8_channels, uint32_t *perm, void *scratch)
{
    channel_rank *rank = scratch;
    uint8_t *top = (uint8_t *)(rank + K);
    for (int64_t k = 0; k < K; k++) {
        rank[k] = (channel_rank){amax[k], k};
        top[k] = 0;
    }
    qsort(rank, (size_t)K, sizeof *rank, by_magnitude);
    for (int64_t i = 0; i < a8_channels; i++)
        top[rank[i].k] = 1;
    int64_t at8 = 0, at4 = a8_channels;
    for (int64_t k = 0; k < K; k++)
        perm[top[k] ? at8++ : at4++] = (uint32_t)k;
}

size_t qjit__w4ax_order_scratch(int64_t K)
{
    return (size_t)K * (sizeof(channel_rank) + 1);
}

/* The INT8 blocks of a_fraction, the calibration magnitudes, and the order
 * (K entries) into perm. */
static qjit_status choose_order(qjit_context *ctx, const qjit__slabs *w, const qjit_quantize_options *o,
                                int32_t *param, uint32_t *perm)
{
    int64_t K = w->K, blocks = K / QJIT__A8_BLOCK;
    const char *name = o->layer_name ? o->layer_name : "the layer";
    double f = o->a8_fraction;
    if (!isfinite(f) || f < 0.0 || f > 1.0)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "%s: a8_fraction = %g must be a share in [0, 1]", name, f);
    int64_t a8 = qjit__ceil_share(f, blocks);
    if (a8 > 0 && !o->calib)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "%s: an INT8 share a8_fraction = %g needs calibration rows "
                           "(calib, calib_rows) to choose its INT8 channels%s", name, f,
                           o->hessian_diag ? " (a Hessian diagonal holds no magnitudes)" : "");
    if (o->calib && (o->calib_rows <= 0 || !qjit__dtype_known(o->calib_dtype)))
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "calibration rows: calib_rows = %lld must be > 0 and "
                           "calib_dtype (%d) F16, BF16 or F32", (long long)o->calib_rows, (int)o->calib_dtype);
    size_t amax_bytes = (size_t)K * sizeof(float), scratch = qjit__w4ax_order_scratch(K);
    float *amax = qjit__alloc(ctx, amax_bytes);
    void *work = qjit__alloc(ctx, scratch);
    qjit_status st = QJIT_OK;
    if (!amax || !work)
        st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory ordering %lld channels", (long long)K);
    for (int64_t k = 0; st == QJIT_OK && k < K; k++)
        amax[k] = 0.0f;
    for (int64_t t = 0; st == QJIT_OK && a8 > 0 && t < o->calib_rows; t++)
        for (int64_t k = 0; k < K; k++) {
            size_t i = (size_t)(t * K + k);
            float x = qjit__dtype_load(o->calib, o->calib_dtype, i);
            if (!isfinite(x)) {
                st = qjit__error(ctx, QJIT_INVALID_ARGUMENT, "calibration value X[%lld, %lld] is %s", (long long)t,
                                 (long long)k, isnan(x) ? "NaN" : "infinite");
                break;
            }
            if (fabsf(x) > amax[k])
                amax[k] = fabsf(x);
        }
    if (st == QJIT_OK) {
        qjit__w4ax_order(amax, K, a8 * QJIT__A8_BLOCK, perm, work);
        *param = (int32_t)a8;
    }
    qjit__free(ctx, amax, amax_bytes);
    qjit__free(ctx, work, scratch);
    return st;
}

/* choose_order into a buffer of its own, then written out: w4ax the order
 * (perm), w4ax-s the set of its first k8 channels (a8set). */
static qjit_status prepare_with(qjit_context *ctx, const qjit__slabs *w, const qjit_quantize_options *o,
                                int32_t *param, uint8_t *const layer[], int set)
{
    const int64_t K = w->K;
    uint32_t *perm = qjit__alloc(ctx, (size_t)K * sizeof(uint32_t));
    if (!perm)
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory ordering %lld channels", (long long)K);
    qjit_status st = choose_order(ctx, w, o, param, perm);
    if (st == QJIT_OK && !set) {
        for (int64_t j = 0; j < K; j++)
            qjit__store_u32(layer[PERM] + 4 * j, perm[j]);
    } else if (st == QJIT_OK) {
        memset(layer[A8SET], 0, (size_t)K / 8);
        for (int64_t j = 0; j < (int64_t)*param * QJIT__A8_BLOCK; j++)
            layer[A8SET][perm[j] / 8] |= (uint8_t)(1u << (perm[j] % 8));
    }
    qjit__free(ctx, perm, (size_t)K * sizeof(uint32_t));
    return st;
}

static qjit_status prepare_layer(qjit_context *ctx, const qjit__slabs *w, int group, const qjit_quantize_options *o,
                                 int32_t *param, uint8_t *const layer[])
{
    (void)group;
    return prepare_with(ctx, w, o, param, layer, 0);
}

static qjit_status prepare_layer_set(qjit_context *ctx, const qjit__slabs *w, int group,
                                     const qjit_quantize_options *o, int32_t *param, uint8_t *const layer[])
{
    (void)group;
    return prepare_with(ctx, w, o, param, layer, 1);
}

static void quantize_slab(const float *w, int64_t K, int group, int32_t param, const uint8_t *const layer[],
                          void *scratch, uint8_t *const dst[])
{
    (void)group;
    (void)param;
    float *wp = scratch;
    for (int r = 0; r < QJIT__PACK_N; r++)
        for (int64_t j = 0; j < K; j++)
            wp[r * K + j] = w[r * K + qjit__load_u32(layer[PERM] + 4 * j)];
    qjit__quantize_int4_slab(wp, K, wp + QJIT__PACK_N * K, dst[QWEIGHT], dst[SCALE]);
}

/* w4ax-s: the columns in the caller's order, as w4a4 quantizes them. */
static void quantize_slab_set(const float *w, int64_t K, int group, int32_t param, const uint8_t *const layer[],
                              void *scratch, uint8_t *const dst[])
{
    (void)group;
    (void)param;
    (void)layer;
    qjit__quantize_int4_slab(w, K, scratch, dst[QWEIGHT], dst[SCALE]);
}

static const char *param_problem(int32_t param, int64_t K)
{
    return param < 0 || param > K / QJIT__A8_BLOCK ? "w4ax's INT8 blocks must number 0 .. K / 128" : NULL;
}

/* The stored order must be a permutation of the K channels, each part (the
 * first k8 positions, the rest) in ascending channel order, as the packer
 * writes it (the format's order: the INT8 channels' set alone gives every
 * position). */
static qjit_status check_layer(qjit_context *ctx, const qjit__weights_view *v)
{
    size_t bytes = (size_t)v->K;
    uint8_t *seen = qjit__alloc(ctx, bytes);
    if (!seen)
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory checking %lld channels", (long long)v->K);
    memset(seen, 0, bytes);
    const uint8_t *perm = qjit__view_section(v, PERM);
    qjit_status st = QJIT_OK;
    for (int64_t j = 0; j < v->K; j++) {
        uint32_t k = qjit__load_u32(perm + 4 * j);
        if (k >= (uint64_t)v->K || seen[k]) {
            st = qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight %s buffer: position %lld holds channel %u, "
                             "%s (the order must be a permutation of the %lld channels)", v->scheme->name, (long long)j, k,
                             k >= (uint64_t)v->K ? "past K" : "held twice", (long long)v->K);
            break;
        }
        seen[k] = 1;
    }
    const int64_t k8 = qjit__int8_channels(v);
    for (int64_t j = 1; st == QJIT_OK && j < v->K; j++) {
        uint32_t a = qjit__load_u32(perm + 4 * (j - 1)), b = qjit__load_u32(perm + 4 * j);
        if (j != k8 && b < a)
            st = qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight %s buffer: position %lld holds channel %u after "
                             "channel %u (each part of the order, the first %lld positions and the rest, lists its "
                             "channels in ascending order)", v->scheme->name, (long long)j, b, a, (long long)k8);
    }
    qjit__free(ctx, seen, bytes);
    return st;
}

/* The stored set must hold exactly the layer's k8 INT8 channels. */
static qjit_status check_set(qjit_context *ctx, const qjit__weights_view *v)
{
    const uint8_t *set = qjit__view_section(v, A8SET);
    int64_t n = 0;
    for (int64_t i = 0; i < v->K / 8; i++)
        for (int b = 0; b < 8; b++)
            n += set[i] >> b & 1;
    const int64_t k8 = qjit__int8_channels(v);
    if (n != k8)
        return qjit__error(ctx, QJIT_CORRUPT_WEIGHTS, "packed-weight %s buffer: its INT8 channels' set holds %lld "
                           "channels, not the layer's %lld (%d blocks of %d)", v->scheme->name, (long long)n,
                           (long long)k8, (int)v->param, QJIT__A8_BLOCK);
    return QJIT_OK;
}

#define W4AX_FIELDS                                                                                                  \
    .nsections = 3, .act_bits = 4, .two_part = 1, .group_problem = group_problem, .k_problem = k_problem,          \
    .slab_bytes = slab_bytes, .scratch_bytes = scratch_bytes, .param_problem = param_problem,                       \
    .operand = qjit__operand_offset8, .scale_section = 1, .zero_section = -1

const qjit__scheme qjit__scheme_w4ax = {.id = QJIT_SCHEME_W4AX, .name = "w4ax", .sections = {"qweight", "scale", "perm"},
                                        .order_section = PERM, .set_section = -1, .layer_bytes = layer_bytes,
                                        .prepare_layer = prepare_layer, .quantize_slab = quantize_slab,
                                        .check_layer = check_layer, W4AX_FIELDS};

/* w4ax-s: the same INT8 channels, kept as a set; one scale per token shared
 * by the two parts, so one INT32 sum, and the caller's channel order. */
const qjit__scheme qjit__scheme_w4ax_s = {.id = QJIT_SCHEME_W4AX_S, .name = "w4ax-s", .shared_scale = 1,
                                          .sections = {"qweight", "scale", "a8set"}, .order_section = -1,
                                          .set_section = A8SET, .layer_bytes = layer_bytes_set,
                                          .prepare_layer = prepare_layer_set, .quantize_slab = quantize_slab_set,
                                          .check_layer = check_set, W4AX_FIELDS};
