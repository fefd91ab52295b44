/* scheme_w8a8.c -- w8a8 on the host: per-channel symmetric INT8 weights
 * (docs/schemes.md): sw = max|W| / 127 (1 if it underflows to 0), Wq =
 * clamp(round(W / sw), -127, 127); the kernels multiply Wq as it is and
 * the epilogue is Y = sx sw acc.
 *
 * Sections: qweight (8-bit blocks of Wq), scale (sw per channel, float). */
#define _POSIX_C_SOURCE 200809L
#include "scheme.h"
#include "bytes.h"
#include "layout.h"
#include "view.h"


enum { QWEIGHT, SCALE };

static const char *group_problem(int group)
{
    return group != 0 ? "w8a8 has per-channel weights only (g=0)" : NULL;
}

static size_t slab_bytes(int i, int64_t K, int group)
{
    (void)group;
    return i == QWEIGHT ? (size_t)(QJIT__PACK_N * K) : QJIT__PACK_N * sizeof(float);
}

static size_t scratch_bytes(int64_t K, int group)
{
    (void)group;
    return (size_t)(QJIT__PACK_N * K);
}

static void quantize_slab(const float *w, int64_t K, int group, int32_t param, const uint8_t *const layer[],
                          void *scratch, uint8_t *const dst[])
{
    (void)layer;
    (void)group;
    (void)param;
    int8_t *q8 = scratch;
    for (int r = 0; r < QJIT__PACK_N; r++)
        qjit__store_f32(dst[SCALE] + 4 * r, qjit__symmetric_row(w + r * K, K, 127, q8 + r * K));
    qjit__pack8_slab(q8, K, dst[QWEIGHT]);
}

static void operand(const qjit__weights_view *v, int64_t n0, int64_t rows, int8_t *wq, uint8_t *scratch)
{
    (void)scratch;
    qjit__weights_view p = qjit__view_rows(v, n0, rows);
    qjit__unpack8_rows(qjit__view_section(&p, QWEIGHT), rows, v->K, wq);
}

const qjit__scheme qjit__scheme_w8a8 = {
    .id = QJIT_SCHEME_W8A8,
    .name = "w8a8",
    .nsections = 2,
    .sections = {"qweight", "scale"},
    .group_problem = group_problem,
    .slab_bytes = slab_bytes,
    .scratch_bytes = scratch_bytes,
    .quantize_slab = quantize_slab,
    .operand = operand,
    .scale_section = 1,
    .zero_section = -1,
};
