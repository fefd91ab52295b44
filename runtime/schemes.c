/* schemes.c -- the table of schemes: qjit_scheme value -> host side
 * (scheme_<name>.c) and Lua module name; and what the schemes share. */
#define _POSIX_C_SOURCE 200809L
#include "scheme.h"
#include "bytes.h"
#include "core.h"
#include "fp16.h"
#include "layout.h"
#include "view.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

/* The scheme modules, one per file. */
extern const qjit__scheme qjit__scheme_lqq, qjit__scheme_qoq, qjit__scheme_is, qjit__scheme_w8a8,
    qjit__scheme_w4a4, qjit__scheme_w4ax, qjit__scheme_w4ax_s;

const qjit__scheme *const qjit__schemes[] = {&qjit__scheme_lqq,  &qjit__scheme_qoq,  &qjit__scheme_is,
                                             &qjit__scheme_w8a8, &qjit__scheme_w4a4, &qjit__scheme_w4ax,
                                             &qjit__scheme_w4ax_s};
const int qjit__nschemes = (int)(sizeof qjit__schemes / sizeof qjit__schemes[0]);

const qjit__scheme *qjit__scheme_get(qjit_scheme id)
{
    for (int i = 0; i < qjit__nschemes; i++)
        if (qjit__schemes[i]->id == id)
            return qjit__schemes[i];
    return NULL;
}

const char *qjit_scheme_name(qjit_scheme scheme)
{
    const qjit__scheme *s = qjit__scheme_get(scheme);
    return s ? s->name : NULL;
}

int qjit_scheme_activation_bits(qjit_scheme scheme)
{
    const qjit__scheme *s = qjit__scheme_get(scheme);
    return !s ? 0 : s->act_bits ? s->act_bits : 8;
}

/* Short spellings (any case) besides the names. */
static const struct { const char *alias; qjit_scheme id; } ALIASES[] = {
    {"lqq", QJIT_SCHEME_W4A8_LQQ}, {"liquidquant", QJIT_SCHEME_W4A8_LQQ}, {"qoq", QJIT_SCHEME_W4A8_QOQ},
    {"qserve", QJIT_SCHEME_W4A8_QOQ}, {"is", QJIT_SCHEME_W4A8_IS}, {"integer-scale", QJIT_SCHEME_W4A8_IS},
    {"int8", QJIT_SCHEME_W8A8}, {"int4", QJIT_SCHEME_W4A4},
};

qjit_status qjit_scheme_from_name(const char *name, qjit_scheme *out)
{
    if (!name || !out)
        return QJIT_INVALID_ARGUMENT;
    char low[32];
    size_t n = strlen(name);
    if (n == 0 || n >= sizeof low)
        return QJIT_INVALID_ARGUMENT;
    for (size_t i = 0; i <= n; i++)
        low[i] = name[i] == '_' ? '-' : (char)tolower((unsigned char)name[i]);
    for (int i = 0; i < qjit__nschemes; i++)
        if (!strcmp(low, qjit__schemes[i]->name)) {
            *out = qjit__schemes[i]->id;
            return QJIT_OK;
        }
    for (size_t i = 0; i < sizeof ALIASES / sizeof ALIASES[0]; i++)
        if (!strcmp(low, ALIASES[i].alias)) {
            *out = ALIASES[i].id;
            return QJIT_OK;
        }
    return QJIT_INVALID_ARGUMENT;
}

/*------------------------------------------------------------------------
 * Shared pieces
 *------------------------------------------------------------------------*/

int64_t qjit__ceil_share(double share, int64_t total)
{
    double want = share * (double)total;
    int64_t keep = (int64_t)floor(want);
    if (want - (double)keep > 1e-9 * (double)total)
        keep++;
    return keep < total ? keep : total;
}

void qjit__quantize_int4_slab(const float *w, int64_t K, void *scratch, uint8_t *q, uint8_t *scale)
{
    int8_t *wq = scratch;
    uint8_t *nib = (uint8_t *)scratch + QJIT__PACK_N * K;
    for (int r = 0; r < QJIT__PACK_N; r++)
        qjit__store_f32(scale + 4 * r, qjit__symmetric_row(w + r * K, K, 7, wq + r * K));
    for (int64_t i = 0; i < QJIT__PACK_N * K; i++)
        nib[i] = (uint8_t)(wq[i] + 8);
    qjit__pack4_slab(nib, K, q);
}

int qjit__round_div(int num, int den)
{
    return num >= 0 ? (2 * num + den) / (2 * den) : -((-2 * num + den) / (2 * den));
}

/* A row whose scale underflows to zero (max|W| below about limit * 2^-149,
 * only possible with FP32 input) is treated like an all-zero row: s = 1,
 * q = 0; its weights are below 1.8e-43 and round to zero at any useful
 * scale. */
float qjit__symmetric_row(const float *w, int64_t K, int limit, int8_t *q)
{
    float amax = 0.0f;
    for (int64_t k = 0; k < K; k++) {
        float v = fabsf(w[k]);
        if (v > amax)
            amax = v;
    }
    float s = amax / (float)limit;
    if (s == 0.0f)
        s = 1.0f;
    for (int64_t k = 0; k < K; k++) {
        float r = roundf(w[k] / s);
        if (r > (float)limit)
            r = (float)limit;
        if (r < -(float)limit)
            r = -(float)limit;
        q[k] = (int8_t)r;
    }
    return s;
}

float qjit__level1_row(const float *w, int64_t K, int8_t *q8)
{
    return qjit__symmetric_row(w, K, QJIT__Q8_PROTECTED, q8);
}

size_t qjit__scratch_two_level(int64_t K, int group)
{
    const int64_t G = group ? group : K;
    return (size_t)(2 * QJIT__PACK_N * K + 2 * QJIT__PACK_N * (K / G));
}

void qjit__operand_offset8(const qjit__weights_view *v, int64_t n0, int64_t rows, int8_t *wq, uint8_t *scratch)
{
    qjit__weights_view p = qjit__view_rows(v, n0, rows);
    qjit__unpack4_rows(qjit__view_section(&p, 0), rows, v->K, scratch);
    for (int64_t i = 0; i < rows * v->K; i++)
        wq[i] = (int8_t)(scratch[i] - 8);
}

const uint8_t *qjit__gparams_entry(const qjit__weights_view *v, int64_t nb, int64_t gi)
{
    int64_t groups = v->K / v->group_size;
    return qjit__view_section(v, 1) + (size_t)(nb * groups + gi) * QJIT__GPARAMS_ENTRY;
}

void qjit__channel(const qjit__weights_view *v, int64_t n, float *scale, int32_t *zero)
{
    const qjit__scheme *s = v->scheme;
    *scale = qjit__load_f32(qjit__view_section(v, s->scale_section) + 4 * n);
    *zero = s->zero_section >= 0 && v->sections[s->zero_section].bytes
                ? (int32_t)qjit__load_u32(qjit__view_section(v, s->zero_section) + 4 * n)
                : 0;
}

size_t qjit__slab_bytes_q4(int i, int64_t K, int group)
{
    const int64_t G = group ? group : K;
    switch (i) {
    case 0: return (size_t)(QJIT__PACK_N * K / 2);                   /* qweight */
    case 1: return (size_t)(K / G) * QJIT__GPARAMS_ENTRY;            /* gparams */
    default: return QJIT__PACK_N * sizeof(float);                    /* scale */
    }
}

const char *qjit__group_0_or_64(int group)
{
    if (group < 0 || (group > 0 && group % QJIT__PACK_K != 0))
        return "the group must be 0 (per channel) or a multiple of 64 (the packing unit along K)";
    return NULL;
}

void qjit__slab_load(const qjit__slabs *s, int64_t nb, float *out)
{
    size_t first = (size_t)(nb * QJIT__PACK_N * s->K), count = (size_t)(QJIT__PACK_N * s->K);
    if (s->dtype == QJIT_DTYPE_F32) {
        memcpy(out, (const float *)s->W + first, count * sizeof(float));
    } else {
        for (size_t i = 0; i < count; i++)
            out[i] = qjit__dtype_load(s->W, s->dtype, first + i);
    }
}
