/* scheme_w4a4.c -- w4a4 on the host: per-channel symmetric INT4 weights
 * (docs/schemes.md): sw = max|W| / 7 (1 if it underflows to 0), Wq =
 * clamp(round(W / sw), -7, 7); activations per-token INT4 (sx = max|x| / 7,
 * qjit_reference_quantize_activations_bits with 4); acc = sum_k Xq Wq and
 * the epilogue Y = sx sw acc.
 *
 * Sections: qweight (4-bit blocks holding Wq + 8, 1..15), scale (sw per
 * channel, float). */
#define _POSIX_C_SOURCE 200809L
#include "scheme.h"
#include "bytes.h"
#include "layout.h"
#include "view.h"

enum { QWEIGHT, SCALE };

static const char *group_problem(int group)
{
    return group != 0 ? "w4a4 has per-channel weights only (g=0)" : NULL;
}

static size_t slab_bytes(int i, int64_t K, int group)
{
    (void)group;
    return i == QWEIGHT ? (size_t)(QJIT__PACK_N * K / 2) : QJIT__PACK_N * sizeof(float);
}

static size_t scratch_bytes(int64_t K, int group)
{
    (void)group;
    return (size_t)(2 * QJIT__PACK_N * K);   /* Wq, then the nibbles */
}

static void quantize_slab(const float *w, int64_t K, int group, int32_t param, const uint8_t *const layer[],
                          void *scratch, uint8_t *const dst[])
{
    (void)group;
    (void)param;
    (void)layer;
    qjit__quantize_int4_slab(w, K, scratch, dst[QWEIGHT], dst[SCALE]);
}

const qjit__scheme qjit__scheme_w4a4 = {
    .id = QJIT_SCHEME_W4A4,
    .name = "w4a4",
    .nsections = 2,
    .sections = {"qweight", "scale"},
    .act_bits = 4,
    .group_problem = group_problem,
    .slab_bytes = slab_bytes,
    .scratch_bytes = scratch_bytes,
    .quantize_slab = quantize_slab,
    .operand = qjit__operand_offset8,
    .scale_section = 1,
    .zero_section = -1,
};
