/* scheme_is.c -- w4a8-is, Integer Scale, on the host: the quantizer (with
 * the amplifier and its INT32 bound), the packer and the reference operand
 * (docs/schemes.md).
 *
 * Per group of G (> 0) of a row, symmetric INT4: sg = max|W| / 7, Q4 =
 * clamp(round(W / sg), -8, 7) (0 for an all-zero group). The group's scale
 * becomes an integer, S = round(sg alpha), alpha = 2^e one amplifier per
 * layer (computed in double: exact), and the kernels add each group's INT32 sum times S into the
 * accumulator; the epilogue is Y = sx acc / alpha (2^-e, exact, as the
 * per-channel scale). Every group sum is at most 127 x 8 x G in size, so
 * |acc| <= 127 x 8 x K x max S: the quantizer keeps that bound within INT32.
 * alpha given: refused if the bound could overflow. alpha left to the
 * heuristic: the smallest 2^e (e >= 0) with min sg 2^e >= 1 (the smallest
 * nonzero group scale amplified to at least 1), lowered (e may go below 0)
 * until the bound fits, which is logged.
 *
 * Sections: qweight (4-bit blocks of Q4 + 8, offset binary), gparams
 * (entries of S per row and group, 16 bits little-endian), scale (2^-e per
 * channel, float). The header's parameter is e. */
#define _POSIX_C_SOURCE 200809L
#include "scheme.h"
#include "bytes.h"
#include "core.h"
#include "layout.h"
#include "view.h"

#include <math.h>
#include <stdint.h>

enum { QWEIGHT, GPARAMS, SCALE };

#define E_MAX 30                 /* alpha at most 2^30 */
#define E_MIN (-30)
#define SUM_BOUND (127.0 * 8.0)  /* |Xq Q4| of one product */

static const char *group_problem(int group)
{
    if (group == 0)
        return "w4a8-is needs groups along K (g=64, 128, 256, ...): its integer scales are per group";
    return qjit__group_0_or_64(group);
}

static size_t scratch_bytes(int64_t K, int group)
{
    const int64_t G = group ? group : K;
    return (size_t)(QJIT__PACK_N * K + 2 * QJIT__PACK_N * (K / G));
}

/* A group's scale, the same float everywhere it is computed. */
static float group_sg(const float *w, int G)
{
    float amax = 0.0f;
    for (int i = 0; i < G; i++)
        amax = fmaxf(amax, fabsf(w[i]));
    return amax / 7.0f;
}

/* S = round(sg 2^e), in double: exact for every float sg and e in
 * [E_MIN, E_MAX] (no overflow, no conversion to an integer type that could
 * not hold it). */
static double integer_scale(float sg, int e) { return round(ldexp((double)sg, e)); }

static double bound(int64_t K, double max_s) { return SUM_BOUND * (double)K * max_s; }

static qjit_status prepare(qjit_context *ctx, const qjit__slabs *w, int G, const qjit_quantize_options *o,
                           int32_t *param)
{
    /* G is the group (w4a8-is has no per-channel form). */
    const char *layer = o->layer_name ? o->layer_name : "the layer";
    int64_t K = w->K;
    float *slab = qjit__alloc(ctx, (size_t)(QJIT__PACK_N * K) * sizeof(float));
    if (!slab)
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory scanning %s's group scales", layer);
    float sg_min = 0.0f, sg_max = 0.0f;
    for (int64_t nb = 0; nb < w->N / QJIT__PACK_N; nb++) {
        qjit__slab_load(w, nb, slab);
        for (int64_t i = 0; i < QJIT__PACK_N * K; i += G) {
            float sg = group_sg(slab + i, G);
            if (sg > 0.0f && (sg_min == 0.0f || sg < sg_min))
                sg_min = sg;
            sg_max = fmaxf(sg_max, sg);
        }
    }
    qjit__free(ctx, slab, (size_t)(QJIT__PACK_N * K) * sizeof(float));
    if (o->alpha) {
        if (o->alpha & (o->alpha - 1) || o->alpha > (1u << E_MAX))
            return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "%s: alpha = %u must be a power of two in 1..2^%d",
                               layer, o->alpha, E_MAX);
        int e = 0;
        while ((1u << e) != o->alpha)
            e++;
        if (bound(K, integer_scale(sg_max, e)) > INT32_MAX) {
            int fit = e;
            while (fit > E_MIN && bound(K, integer_scale(sg_max, fit)) > INT32_MAX)
                fit--;
            return qjit__error(ctx, QJIT_OVERFLOW, "%s: w4a8-is with alpha = 2^%d could overflow the INT32 "
                               "accumulator: 127 x 8 x K (%lld) x max S (%.0f) = %.0f > 2147483647; the largest "
                               "alpha that fits is 2^%d", layer, e, (long long)K, integer_scale(sg_max, e),
                               bound(K, integer_scale(sg_max, e)), fit);
        }
        *param = e;
        return QJIT_OK;
    }
    int e = 0;
    while (sg_min > 0.0f && e < E_MAX && ldexpf(sg_min, e) < 1.0f)
        e++;
    int heuristic = e;
    while (e > E_MIN && bound(K, integer_scale(sg_max, e)) > INT32_MAX)
        e--;
    if (bound(K, integer_scale(sg_max, e)) > INT32_MAX)
        return qjit__error(ctx, QJIT_OVERFLOW, "%s: w4a8-is cannot bound its INT32 sums: even alpha = 2^%d gives "
                           "127 x 8 x K (%lld) x max S (%.0f) = %.0f > 2147483647 (weights up to %g)", layer,
                           E_MIN, (long long)K, integer_scale(sg_max, e), bound(K, integer_scale(sg_max, e)),
                           (double)sg_max * 7.0);
    if (e < heuristic)
        qjit__log(ctx, "%s: w4a8-is alpha lowered from 2^%d (the heuristic) to 2^%d so that 127 x 8 x K (%lld) x "
                  "max S (%.0f) = %.0f fits INT32", layer, heuristic, e, (long long)K, integer_scale(sg_max, e),
                  bound(K, integer_scale(sg_max, e)));
    *param = e;
    return QJIT_OK;
}

static void quantize_slab(const float *w, int64_t K, int group, int32_t e, const uint8_t *const layer[],
                          void *scratch, uint8_t *const dst[])
{
    (void)layer;
    const int G = group;
    int64_t groups = K / G;
    uint8_t *q4 = scratch, *s_lo = q4 + QJIT__PACK_N * K, *s_hi = s_lo + QJIT__PACK_N * groups;
    for (int r = 0; r < QJIT__PACK_N; r++) {
        for (int64_t gi = 0; gi < groups; gi++) {
            const float *x = w + r * K + gi * G;
            float sg = group_sg(x, G);
            /* prepare bounded S: it fits 16 bits. */
            long s = (long)integer_scale(sg, e);
            for (int i = 0; i < G; i++) {
                float q = sg > 0.0f ? roundf(x[i] / sg) : 0.0f;
                q = q > 7.0f ? 7.0f : q < -8.0f ? -8.0f : q;
                q4[r * K + gi * G + i] = (uint8_t)((int)q + 8);
            }
            s_lo[r * groups + gi] = (uint8_t)(s & 0xFF);
            s_hi[r * groups + gi] = (uint8_t)(s >> 8);
        }
        qjit__store_f32(dst[SCALE] + 4 * r, ldexpf(1.0f, -e));
    }
    qjit__pack4_slab(q4, K, dst[QWEIGHT]);
    qjit__gparams_pack_slab(s_lo, s_hi, groups, dst[GPARAMS]);
}

static int32_t group_scale(const qjit__weights_view *v, int64_t n, int64_t gi)
{
    uint8_t lo, hi;
    qjit__gparams_row(qjit__gparams_entry(v, n / QJIT__PACK_N, gi), (int)(n % QJIT__PACK_N), &lo, &hi);
    return (int32_t)(lo | hi << 8);
}

static const char *param_problem(int32_t e, int64_t K)
{
    (void)K;
    return e < -64 || e > 64 ? "the amplifier's exponent lies in -64 .. 64" : NULL;
}

const qjit__scheme qjit__scheme_is = {
    .id = QJIT_SCHEME_W4A8_IS,
    .name = "w4a8-is",
    .nsections = 3,
    .sections = {"qweight", "gparams", "scale"},
    .param_is_alpha = 1,
    .param_problem = param_problem,
    .group_problem = group_problem,
    .slab_bytes = qjit__slab_bytes_q4,
    .scratch_bytes = scratch_bytes,
    .prepare = prepare,
    .quantize_slab = quantize_slab,
    .operand = qjit__operand_offset8,     /* the per-group operand: Q4 (stored + 8) */
    .group_scale = group_scale,
    .scale_section = 2,
    .zero_section = -1,
};
