/* scheme_qoq.c -- w4a8-qoq, QServe's QoQ, on the host: the quantizer, the
 * packer and the reference operand (docs/schemes.md).
 *
 * Groups (G > 0), progressive: level 1 as w4a8-lqq (per channel, the
 * protective range: s0 = max|W| / 119, Q8 in [-119, 119]); level 2 per group
 * asymmetric UINT4: s1 = max(1, ceil((max Q8 - min Q8) / 15)), z = round(-min
 * Q8 / s1), Q4 = clamp(round(Q8 / s1) + z, 0, 15). The kernel computes
 * Q8' = Q4 s1 - z s1 on four lanes of a 32-bit register (every product fits
 * a byte; the subtraction is byte-wise, modulo 256): the stored parameter
 * bytes are s1 and (z s1) mod 256. The protective range keeps Q8' in
 * [-128, 127] (tests/test_quant.c checks every group by brute force).
 *
 * Per channel (G = K): UINT4 with a zero point, Q4 = clamp(round(W / sw) +
 * zw, 0, 15) over the row's range widened to hold zero, [lo, hi] = [min(min
 * W, 0), max(max W, 0)]: sw = (hi - lo) / 15 (computed in double, rounded
 * to float; 1 for an all-zero row), zw = round(-lo / sw) in [0, 15]
 * (float); the kernel multiplies Q4 itself and the
 * epilogue subtracts the zero point: Y = sx sw (acc - zw sum_k Xq).
 *
 * Sections: qweight (4-bit blocks of Q4), gparams (groups: entries of
 * {s1, z s1} per row and group; empty per channel), scale (s0 or sw per
 * channel, float), zero (zw per channel, int32; empty with groups). */
#define _POSIX_C_SOURCE 200809L
#include "scheme.h"
#include "bytes.h"
#include "layout.h"
#include "view.h"

#include <math.h>
#include <string.h>

enum { QWEIGHT, GPARAMS, SCALE, ZERO };

static size_t slab_bytes(int i, int64_t K, int group)
{
    const int64_t G = group ? group : K;
    int per_channel = group == 0;
    switch (i) {
    case QWEIGHT: return (size_t)(QJIT__PACK_N * K / 2);
    case GPARAMS: return per_channel ? 0 : (size_t)(K / G) * QJIT__GPARAMS_ENTRY;
    case SCALE: return QJIT__PACK_N * sizeof(float);
    default: return per_channel ? QJIT__PACK_N * sizeof(int32_t) : 0;
    }
}

/* Level 2 of one group: Q4, s1 and (z s1) mod 256. */
static void level2_group(const int8_t *q8, int G, uint8_t *q4, uint8_t *s1_out, uint8_t *zs_out)
{
    int lo = 127, hi = -128;
    for (int i = 0; i < G; i++) {
        if (q8[i] < lo)
            lo = q8[i];
        if (q8[i] > hi)
            hi = q8[i];
    }
    int s1 = (hi - lo + 14) / 15;
    if (s1 < 1)
        s1 = 1;
    int z = qjit__round_div(-lo, s1);
    for (int i = 0; i < G; i++) {
        int q = qjit__round_div(q8[i], s1) + z;
        q4[i] = (uint8_t)(q < 0 ? 0 : q > 15 ? 15 : q);
    }
    *s1_out = (uint8_t)s1;
    *zs_out = (uint8_t)(z * s1);
}

/* Per channel: Q4, sw and zw of one row. The range holds zero, so zw is in
 * [0, 15] and the epilogue's zw sum_k Xq stays far inside INT32. */
static void channel_row(const float *w, int64_t K, uint8_t *q4, float *sw_out, int32_t *zw_out)
{
    float lo = 0.0f, hi = 0.0f;
    for (int64_t k = 0; k < K; k++) {
        if (w[k] < lo)
            lo = w[k];
        if (w[k] > hi)
            hi = w[k];
    }
    /* The range in double: hi - lo overflows a float for rows spanning more
     * than FLT_MAX. */
    float sw = (float)(((double)hi - (double)lo) / 15.0);
    if (sw == 0.0f)
        sw = 1.0f;
    float zf = roundf(-lo / sw);
    int32_t zw = (int32_t)zf;
    for (int64_t k = 0; k < K; k++) {
        float q = roundf(w[k] / sw) + zf;
        q4[k] = (uint8_t)(q < 0.0f ? 0 : q > 15.0f ? 15 : (int)q);
    }
    *sw_out = sw;
    *zw_out = zw;
}

static void quantize_slab(const float *w, int64_t K, int group, int32_t param, const uint8_t *const layer[],
                          void *scratch, uint8_t *const dst[])
{
    (void)layer;
    const int G = group ? group : (int)K;
    (void)param;
    uint8_t *q4 = (uint8_t *)scratch + QJIT__PACK_N * K;
    if (group == 0) {
        for (int r = 0; r < QJIT__PACK_N; r++) {
            float sw;
            int32_t zw;
            channel_row(w + r * K, K, q4 + r * K, &sw, &zw);
            qjit__store_f32(dst[SCALE] + 4 * r, sw);
            qjit__store_u32(dst[ZERO] + 4 * r, (uint32_t)zw);
        }
    } else {
        int64_t groups = K / G;
        int8_t *q8 = scratch;
        uint8_t *s1 = q4 + QJIT__PACK_N * K, *zs = s1 + QJIT__PACK_N * groups;
        for (int r = 0; r < QJIT__PACK_N; r++) {
            qjit__store_f32(dst[SCALE] + 4 * r, qjit__symmetric_row(w + r * K, K, QJIT__Q8_PROTECTED, q8 + r * K));
            for (int64_t gi = 0; gi < groups; gi++)
                level2_group(q8 + r * K + gi * G, G, q4 + r * K + gi * G, s1 + r * groups + gi,
                             zs + r * groups + gi);
        }
        qjit__gparams_pack_slab(s1, zs, groups, dst[GPARAMS]);
    }
    qjit__pack4_slab(q4, K, dst[QWEIGHT]);
}

/* Groups: Q8' = (Q4 s1 - z s1) mod 256 as INT8; per channel: Q4 itself. */
static void operand(const qjit__weights_view *v, int64_t n0, int64_t rows, int8_t *wq, uint8_t *q4)
{
    qjit__weights_view p = qjit__view_rows(v, n0, rows);
    int64_t K = v->K, G = v->group_size;
    qjit__unpack4_rows(qjit__view_section(&p, QWEIGHT), rows, K, q4);
    if (v->group == 0) {
        for (int64_t i = 0; i < rows * K; i++)
            wq[i] = (int8_t)q4[i];
        return;
    }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t gi = 0; gi < K / G; gi++) {
            uint8_t s1, zs;
            qjit__gparams_row(qjit__gparams_entry(&p, r / QJIT__PACK_N, gi), (int)(r % QJIT__PACK_N), &s1, &zs);
            for (int64_t k = gi * G; k < (gi + 1) * G; k++)
                wq[r * K + k] = (int8_t)(uint8_t)(q4[r * K + k] * (unsigned)s1 - zs);
        }
}

/* Per channel, Q4 comes from W directly: no INT8 level for a residual. */
static const char *residual_problem(int group)
{
    return group == 0 ? "per channel (g=0) it has no INT8 level for the residual to restore; use groups, or "
                        "w4a8-lqq, whose per-channel weights have one"
                      : NULL;
}

const qjit__scheme qjit__scheme_qoq = {
    .id = QJIT_SCHEME_W4A8_QOQ,
    .name = "w4a8-qoq",
    .nsections = 4,
    .sections = {"qweight", "gparams", "scale", "zero"},
    .group_problem = qjit__group_0_or_64,
    .slab_bytes = slab_bytes,
    .scratch_bytes = qjit__scratch_two_level,
    .quantize_slab = quantize_slab,
    .operand = operand,
    .residual_target = qjit__level1_row,
    .residual_problem = residual_problem,
    .scale_section = 2,
    .zero_section = 3,
};
