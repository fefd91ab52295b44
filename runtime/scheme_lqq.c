/* scheme_lqq.c -- w4a8-lqq, LiquidQuant (LiquidGEMM), on the host: the
 * quantizer, the packer and the reference operand (docs/schemes.md).
 *
 * Level 1, per channel: s0 = max|W| / 119, Q8 = clamp(round(W / s0), -119,
 * 119). Level 2, per group of G: U8 = Q8 + 128 in [9, 247]; a = min U8,
 * s = max(1, ceil((max U8 - a) / 15)) <= 16, Q4 = clamp(round((U8 - a) / s),
 * 0, 15). Since Q4 s <= (max U8 - a) + s / 2 <= max U8 - a + 8, the kernel's
 * U8' = Q4 s + a never exceeds 255, and W' = U8' XOR 0x80 read as INT8.
 *
 * Sections: qweight (4-bit blocks of Q4), gparams (entries of {s, a} per row
 * and group), scale (s0 per channel, float). */
#define _POSIX_C_SOURCE 200809L
#include "scheme.h"
#include "bytes.h"
#include "layout.h"
#include "view.h"

#include <string.h>

enum { QWEIGHT, GPARAMS, SCALE };


/* Level 2 of one group (the header comment's arithmetic). */
static void level2_group(const int8_t *q8, int G, uint8_t *q4, uint8_t *s_out, uint8_t *a_out)
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
        int q = qjit__round_div(q8[i] + 128 - lo, s);
        q4[i] = (uint8_t)(q > 15 ? 15 : q);
    }
    *s_out = (uint8_t)s;
    *a_out = (uint8_t)lo;
}

static void quantize_slab(const float *w, int64_t K, int group, int32_t param, const uint8_t *const layer[],
                          void *scratch, uint8_t *const dst[])
{
    (void)layer;
    const int G = group ? group : (int)K;
    (void)param;
    int64_t groups = K / G;
    int8_t *q8 = scratch;
    uint8_t *q4 = (uint8_t *)scratch + QJIT__PACK_N * K, *s = q4 + QJIT__PACK_N * K, *a = s + QJIT__PACK_N * groups;
    for (int r = 0; r < QJIT__PACK_N; r++) {
        qjit__store_f32(dst[SCALE] + 4 * r, qjit__symmetric_row(w + r * K, K, QJIT__Q8_PROTECTED, q8 + r * K));
        for (int64_t gi = 0; gi < groups; gi++)
            level2_group(q8 + r * K + gi * G, G, q4 + r * K + gi * G, s + r * groups + gi, a + r * groups + gi);
    }
    qjit__pack4_slab(q4, K, dst[QWEIGHT]);
    qjit__gparams_pack_slab(s, a, groups, dst[GPARAMS]);
}

/* W' = (Q4 s + a) XOR 0x80, block by block: group boundaries are multiples
 * of 64, so all 64 columns of a block share one (s, a) per row. */
static void operand(const qjit__weights_view *v, int64_t n0, int64_t rows, int8_t *wq, uint8_t *q4)
{
    qjit__weights_view p = qjit__view_rows(v, n0, rows);
    int64_t K = v->K, G = v->group_size;
    qjit__unpack4_rows(qjit__view_section(&p, QWEIGHT), rows, K, q4);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t gi = 0; gi < K / G; gi++) {
            uint8_t s, a;
            qjit__gparams_row(qjit__gparams_entry(&p, r / QJIT__PACK_N, gi), (int)(r % QJIT__PACK_N), &s, &a);
            for (int64_t k = gi * G; k < (gi + 1) * G; k++)
                wq[r * K + k] = (int8_t)(uint8_t)((q4[r * K + k] * (unsigned)s + a) ^ 0x80u);
        }
}

const qjit__scheme qjit__scheme_lqq = {
    .id = QJIT_SCHEME_W4A8_LQQ,
    .name = "w4a8-lqq",
    .nsections = 3,
    .sections = {"qweight", "gparams", "scale"},
    .group_problem = qjit__group_0_or_64,
    .slab_bytes = qjit__slab_bytes_q4,
    .scratch_bytes = qjit__scratch_two_level,
    .quantize_slab = quantize_slab,
    .operand = operand,
    .residual_target = qjit__level1_row,
    .reads_v1 = 1,
    .scale_section = 2,
    .zero_section = -1,
};
