/* test_quant.c -- the host side of the weight schemes (runtime/scheme_*.c),
 * the packed layouts (runtime/layout.c) and the packed-weight buffer
 * (runtime/packed.c).
 *
 * What the library writes is read back here by a decoder of the documented
 * formats only (packed.h: header and section table; layout.h: blocks and
 * group entries), and compared byte for byte with a buffer this file builds
 * itself from the float weights, following docs/schemes.md and
 * the arithmetic each scheme file's header comment states. The library's
 * own unpackers are used nowhere in that comparison; they are tested on
 * their own against hand-computed positions. */
#define _GNU_SOURCE
#include "harness.h"
#include "context.h"
#include "fp16.h"
#include "hash.h"
#include "layout.h"
#include "packed.h"
#include "plan.h"
#include "scheme.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LQQ QJIT_SCHEME_W4A8_LQQ
#define QOQ QJIT_SCHEME_W4A8_QOQ
#define IS QJIT_SCHEME_W4A8_IS
#define W8A8 QJIT_SCHEME_W8A8
#define W4A4 QJIT_SCHEME_W4A4
#define PATTERN 0xA5
#define INT32_BOUND 2147483647.0
#define SUM_BOUND (127.0 * 8.0)  /* the largest |Xq Q4| of one w4a8-is product */

static const char *sname(qjit_scheme s)
{
    const char *n = qjit_scheme_name(s);
    return n ? n : "?";
}

static size_t align256(size_t n) { return (n + 255) / 256 * 256; }

/*------------------------------------------------------------------------
 * Weight generators
 *------------------------------------------------------------------------*/

typedef enum weight_kind {
    W_NORMAL,           /* N(0, sigma) with sigma varying per row */
    W_ZERO_ROWS,        /* normal, every third row all zero */
    W_OUTLIER,          /* small normal values plus one huge outlier per row */
    W_CONSTANT,         /* each row one constant value (sign varies) */
    W_ALTERNATING,      /* +max, -max, +max, ... */
    W_TINY,             /* FP16-subnormal magnitudes (< 2^-14) */
    W_FP16_MAX,         /* values up to +-65504 */
    W_EQUAL_GROUPS,     /* every group of 64 one value, groups differ */
    W_POSITIVE,         /* all of one sign per row: QoQ's zero point leaves [0, 15] of the range */
    W_ZERO_GROUPS,      /* normal rows with some all-zero groups of 64 */
    W_KIND_COUNT
} weight_kind;

static const char *const kind_names[W_KIND_COUNT] = {
    "normal", "zero rows", "outlier", "constant", "alternating", "tiny", "fp16 max", "equal groups",
    "one sign", "zero groups"};

/* Fills W (N x K) with values that are all representable in FP16, so the same
 * matrix can be fed as FP16 and as FP32. */
static void make_weights(weight_kind kind, qt_rng *r, int64_t N, int64_t K, float *W)
{
    for (int64_t n = 0; n < N; n++) {
        double sigma = exp(qt_uniform(r) * 8.0 - 6.0);   /* e^-6 .. e^2 */
        double c = (qt_uniform(r) < 0.5 ? -1 : 1) * (0.01 + 100 * qt_uniform(r));
        double sign = qt_uniform(r) < 0.5 ? -1 : 1;
        int64_t outlier = (int64_t)(qt_next(r) % (uint64_t)K);
        for (int64_t k = 0; k < K; k++) {
            double v = 0;
            switch (kind) {
            case W_NORMAL: v = qt_normal(r) * sigma; break;
            case W_ZERO_ROWS: v = n % 3 == 1 ? 0.0 : qt_normal(r) * sigma; break;
            case W_OUTLIER: v = k == outlier ? (qt_uniform(r) < 0.5 ? -1 : 1) * 60000.0 : qt_normal(r) * 0.01; break;
            case W_CONSTANT: v = c; break;
            case W_ALTERNATING: v = (k % 2 ? -1 : 1) * 65504.0; break;
            case W_TINY: v = qt_normal(r) * 1e-6; break;
            case W_FP16_MAX: v = k == outlier ? -65504.0 : qt_normal(r) * 30000.0; break;
            case W_EQUAL_GROUPS: v = ((k / 64) % 5 - 2) * (1 + n % 7) * 0.37 + (k / 64 == 1 ? 0.001 : 0); break;
            case W_POSITIVE: v = sign * sigma * (1.0 + qt_uniform(r)); break;
            case W_ZERO_GROUPS: v = (k / 64 + n) % 3 == 0 ? 0.0 : qt_normal(r) * sigma; break;
            default: break;
            }
            if (v > 65504.0)
                v = 65504.0;
            if (v < -65504.0)
                v = -65504.0;
            W[n * K + k] = qjit__half_to_float(qjit__float_to_half((float)v));
        }
    }
}

/* A fresh N x K layer of W_NORMAL weights, the common case of the tests
 * that are about the buffer rather than the quantizer. */
static float *normal_weights(qt_rng *r, int64_t N, int64_t K)
{
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    make_weights(W_NORMAL, r, N, K, W);
    return W;
}

/*------------------------------------------------------------------------
 * What a buffer holds, unpacked: the test's own model
 *------------------------------------------------------------------------*/

typedef struct quant {
    qjit_scheme scheme;
    int group, G;                /* as stored; effective (K for per channel) */
    int64_t N, K, groups;
    int32_t param;               /* the header's layer parameter: w4a8-is's e, else 0 */
    uint8_t *q4;                 /* N x K stored nibbles (4-bit schemes) */
    int8_t *q8;                  /* N x K w8a8 weights */
    int8_t *level1;              /* N x K level-1 Q8 of the two-level schemes (computed, not stored) */
    uint8_t *p0, *p1;            /* N x groups bytes of the group entries */
    float *scale;                /* N per-channel scales */
    int32_t *zero;               /* N zero points (w4a8-qoq per channel) */
} quant;

static int per_channel_qoq(const quant *q) { return q->scheme == QOQ && q->group == 0; }
static int has_gparams(qjit_scheme s, int group) { return s == LQQ || s == IS || (s == QOQ && group != 0); }

static quant quant_alloc(qjit_scheme s, int group, int64_t N, int64_t K)
{
    quant q = {.scheme = s, .group = group, .G = group ? group : (int)K, .N = N, .K = K};
    q.groups = K / q.G;
    q.q4 = calloc((size_t)(N * K), 1);
    q.q8 = calloc((size_t)(N * K), 1);
    q.level1 = calloc((size_t)(N * K), 1);
    q.p0 = calloc((size_t)(N * q.groups), 1);
    q.p1 = calloc((size_t)(N * q.groups), 1);
    q.scale = calloc((size_t)N, sizeof(float));
    q.zero = calloc((size_t)N, sizeof(int32_t));
    ck_assert(q.q4 && q.q8 && q.level1 && q.p0 && q.p1 && q.scale && q.zero);
    return q;
}

static void quant_free(quant *q)
{
    free(q->q4);
    free(q->q8);
    free(q->level1);
    free(q->p0);
    free(q->p1);
    free(q->scale);
    free(q->zero);
}

/* w4a8-is's integer scale of row n, group gi: 16 bits, low byte first. */
static int is_scale(const quant *q, int64_t n, int64_t gi)
{
    return q->p0[n * q->groups + gi] | q->p1[n * q->groups + gi] << 8;
}

/* The INT8 MMA operand the kernels compute from what is stored (for
 * w4a8-is: the group's INT4 value, its integer scale applies to the sum). */
static int operand(const quant *q, int64_t n, int64_t k)
{
    int64_t i = n * q->K + k, gi = n * q->groups + k / q->G;
    int q4 = q->q4[i];
    switch (q->scheme) {
    case LQQ: return (int8_t)(uint8_t)(((q4 * q->p0[gi] + q->p1[gi]) & 0xFF) ^ 0x80);
    case QOQ: return q->group == 0 ? q4 : (int8_t)(uint8_t)((q4 * q->p0[gi] - q->p1[gi]) & 0xFF);
    case IS:
    case W4A4: return q4 - 8;
    default: return q->q8[i];
    }
}

/* The real weight the layer computes with: operand times every scale. */
static double dequant(const quant *q, int64_t n, int64_t k)
{
    int op = operand(q, n, k);
    if (per_channel_qoq(q))
        return (double)(op - q->zero[n]) * q->scale[n];
    if (q->scheme == IS)
        return (double)op * is_scale(q, n, k / q->G) * q->scale[n];
    return (double)op * q->scale[n];
}

/*------------------------------------------------------------------------
 * The expected quantization, from the spec
 *------------------------------------------------------------------------*/

/* Round half away from zero of num / den (den > 0): lround rounds halves
 * away, and a tie of two small integers is exact in double. */
static int rdiv(int num, int den) { return (int)lround((double)num / den); }

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static float amax_of(const float *w, int64_t n)
{
    float a = 0.0f;
    for (int64_t i = 0; i < n; i++)
        if (fabsf(w[i]) > a)
            a = fabsf(w[i]);
    return a;
}

/* Level 1 (docs/schemes.md, w4a8-lqq): s0 = max|W| / 119 (1 if that is 0),
 * Q8 = clamp(round(W / s0), -119, 119), a float division then roundf. */
static float expect_level1(const float *w, int64_t K, int8_t *q8)
{
    float s0 = amax_of(w, K) / 119.0f;
    if (s0 == 0.0f)
        s0 = 1.0f;
    for (int64_t k = 0; k < K; k++) {
        volatile float quotient = w[k] / s0;
        q8[k] = (int8_t)clampi((int)lroundf(quotient), -119, 119);
    }
    return s0;
}

/* A w4a8-is group's scale sg = max|W| / 7, as a float. */
static float group_sg(const float *w, int G) { return amax_of(w, G) / 7.0f; }

static double is_max_s(float sg_max, int e) { return round(ldexp((double)sg_max, e)); }

/* w4a8-is's exponent e of alpha = 2^e (scheme_is.c, docs/schemes.md, w4a8-is):
 * given alpha, its log2, refused if 127 x 8 x K x max S exceeds INT32;
 * else the smallest e >= 0 (at most 30) with min nonzero sg 2^e >= 1,
 * lowered (down to -30) while the bound exceeds INT32. max S is computed
 * in double here, so nothing can wrap. */
static qjit_status expect_is_exponent(const float *W, int64_t N, int64_t K, int G, uint32_t alpha, int *e_out,
                                      int *heuristic_out)
{
    float sg_min = 0.0f, sg_max = 0.0f;
    for (int64_t i = 0; i < N * K; i += G) {
        float sg = group_sg(W + i, G);
        if (sg > 0.0f && (sg_min == 0.0f || sg < sg_min))
            sg_min = sg;
        if (sg > sg_max)
            sg_max = sg;
    }
    if (alpha) {
        if ((alpha & (alpha - 1)) != 0 || alpha > (1u << 30))
            return QJIT_INVALID_ARGUMENT;
        int e = __builtin_ctz(alpha);
        if (SUM_BOUND * (double)K * is_max_s(sg_max, e) > INT32_BOUND)
            return QJIT_OVERFLOW;
        *e_out = e;
        return QJIT_OK;
    }
    int e = 0;
    if (sg_min > 0.0f) {
        int x;
        /* sg_min = m 2^x with m in [0.5, 1): m 2^(x + e) >= 1 exactly when
         * x + e >= 1 (at x + e = 0 it is m < 1), whatever m is. */
        (void)frexpf(sg_min, &x);
        e = 1 - x;
        e = e < 0 ? 0 : e > 30 ? 30 : e;
    }
    if (heuristic_out)
        *heuristic_out = e;
    while (e > -30 && SUM_BOUND * (double)K * is_max_s(sg_max, e) > INT32_BOUND)
        e--;
    if (SUM_BOUND * (double)K * is_max_s(sg_max, e) > INT32_BOUND)
        return QJIT_OVERFLOW;
    *e_out = e;
    return QJIT_OK;
}

/* Everything a buffer of W should hold, computed here (docs/schemes.md and
 * the scheme files' headers); fills q. Returns the status the library must
 * give (w4a8-is may refuse). */
static qjit_status expect_quant(const float *W, uint32_t alpha, quant *q)
{
    int64_t N = q->N, K = q->K, G = q->G;
    if (q->scheme == IS) {
        int e = 0;
        qjit_status st = expect_is_exponent(W, N, K, (int)G, alpha, &e, NULL);
        if (st != QJIT_OK)
            return st;
        q->param = e;
    }
    for (int64_t n = 0; n < N; n++) {
        const float *w = W + n * K;
        uint8_t *q4 = q->q4 + n * K;
        int8_t *l1 = q->level1 + n * K;
        switch (q->scheme) {
        case LQQ:
            q->scale[n] = expect_level1(w, K, l1);
            for (int64_t gi = 0; gi < q->groups; gi++) {
                const int8_t *g8 = l1 + gi * G;
                int lo = 255, hi = 0;
                for (int64_t i = 0; i < G; i++) {
                    lo = g8[i] + 128 < lo ? g8[i] + 128 : lo;
                    hi = g8[i] + 128 > hi ? g8[i] + 128 : hi;
                }
                int s = (int)ceil((hi - lo) / 15.0);
                s = s < 1 ? 1 : s;
                for (int64_t i = 0; i < G; i++)
                    q4[gi * G + i] = (uint8_t)clampi(rdiv(g8[i] + 128 - lo, s), 0, 15);
                q->p0[n * q->groups + gi] = (uint8_t)s;
                q->p1[n * q->groups + gi] = (uint8_t)lo;
            }
            break;
        case QOQ:
            if (q->group == 0) {
                /* Per channel (scheme_qoq.c): UINT4 over [min(W, 0), max(W, 0)]. */
                float lo = 0.0f, hi = 0.0f;
                for (int64_t k = 0; k < K; k++) {
                    lo = w[k] < lo ? w[k] : lo;
                    hi = w[k] > hi ? w[k] : hi;
                }
                float sw = (float)(((double)hi - (double)lo) / 15.0);
                if (sw == 0.0f)
                    sw = 1.0f;
                volatile float zq = -lo / sw;
                float zf = roundf(zq);
                for (int64_t k = 0; k < K; k++) {
                    volatile float quotient = w[k] / sw;
                    float v = roundf(quotient) + zf;
                    q4[k] = (uint8_t)(v < 0.0f ? 0 : v > 15.0f ? 15 : (int)v);
                }
                q->scale[n] = sw;
                q->zero[n] = (int32_t)zf;
            } else {
                q->scale[n] = expect_level1(w, K, l1);
                for (int64_t gi = 0; gi < q->groups; gi++) {
                    const int8_t *g8 = l1 + gi * G;
                    int lo = 127, hi = -128;
                    for (int64_t i = 0; i < G; i++) {
                        lo = g8[i] < lo ? g8[i] : lo;
                        hi = g8[i] > hi ? g8[i] : hi;
                    }
                    int s1 = (int)ceil((hi - lo) / 15.0);
                    s1 = s1 < 1 ? 1 : s1;
                    int z = rdiv(-lo, s1);
                    for (int64_t i = 0; i < G; i++)
                        q4[gi * G + i] = (uint8_t)clampi(rdiv(g8[i], s1) + z, 0, 15);
                    q->p0[n * q->groups + gi] = (uint8_t)s1;
                    q->p1[n * q->groups + gi] = (uint8_t)(z * s1);   /* modulo 256 */
                }
            }
            break;
        case IS:
            for (int64_t gi = 0; gi < q->groups; gi++) {
                const float *x = w + gi * G;
                float sg = group_sg(x, (int)G);
                long long s = llround(ldexp((double)sg, q->param));
                for (int64_t i = 0; i < G; i++) {
                    int v = 0;
                    if (sg > 0.0f) {
                        volatile float quotient = x[i] / sg;
                        v = clampi((int)lroundf(quotient), -8, 7);
                    }
                    q4[gi * G + i] = (uint8_t)(v + 8);
                }
                q->p0[n * q->groups + gi] = (uint8_t)(s & 0xFF);
                q->p1[n * q->groups + gi] = (uint8_t)((s >> 8) & 0xFF);
            }
            q->scale[n] = ldexpf(1.0f, -q->param);
            break;
        case W4A4: {
            /* Symmetric INT4 per channel, stored offset by 8. */
            float sw = amax_of(w, K) / 7.0f;
            if (sw == 0.0f)
                sw = 1.0f;
            for (int64_t k = 0; k < K; k++) {
                volatile float quotient = w[k] / sw;
                q4[k] = (uint8_t)(clampi((int)lroundf(quotient), -7, 7) + 8);
            }
            q->scale[n] = sw;
            break;
        }
        default: {
            float sw = amax_of(w, K) / 127.0f;
            if (sw == 0.0f)
                sw = 1.0f;
            for (int64_t k = 0; k < K; k++) {
                volatile float quotient = w[k] / sw;
                q->q8[n * K + k] = (int8_t)clampi((int)lroundf(quotient), -127, 127);
            }
            q->scale[n] = sw;
            break;
        }
        }
    }
    return QJIT_OK;
}

/*------------------------------------------------------------------------
 * The documented formats: sections, block addresses, encoder, decoder
 *------------------------------------------------------------------------*/

typedef struct sections {
    int n;
    const char *name[4];
    size_t bytes[4], offset[4];
    size_t payload, header;
} sections;

/* A scheme's sections in order (packed.h; each scheme file's header), laid
 * out as packed.h says: each at the next multiple of 256 of the payload. */
static sections expect_sections(qjit_scheme s, int group, int64_t N, int64_t K)
{
    int64_t G = group ? group : K;
    size_t q4 = (size_t)(N * K / 2), gp = (size_t)(N / 16 * (K / G) * 32), ch = (size_t)(4 * N);
    sections sc;
    memset(&sc, 0, sizeof sc);
    switch (s) {
    case LQQ:
    case IS:
        sc = (sections){3, {"qweight", "gparams", "scale"}, {q4, gp, ch}, {0}, 0, 0};
        break;
    case QOQ:
        sc = (sections){4, {"qweight", "gparams", "scale", "zero"}, {q4, group ? gp : 0, ch, group ? 0 : ch},
                        {0}, 0, 0};
        break;
    case W4A4:
        sc = (sections){2, {"qweight", "scale"}, {q4, ch}, {0}, 0, 0};
        break;
    default:
        sc = (sections){2, {"qweight", "scale"}, {(size_t)(N * K), ch}, {0}, 0, 0};
        break;
    }
    size_t at = 0;
    for (int i = 0; i < sc.n; i++) {
        sc.offset[i] = align256(at);
        at = sc.offset[i] + sc.bytes[i];
    }
    sc.payload = at;
    sc.header = align256(64 + 32 * (size_t)sc.n + 16);
    return sc;
}

/* layout.h, element by element: where Q4[n][k] lives in a 4-bit block
 * layout (*high: in the high nibble), and W8[n][k] in an 8-bit one. */
static size_t addr4(int64_t n, int64_t k, int64_t K, int *high)
{
    int64_t block = n / 16 * (K / 64) + k / 64;
    int r = (int)(n % 16), c = (int)(k % 64);
    int g = r % 8, kk = c / 32, h = (c / 16) % 2, t = (c / 4) % 4, j = c % 4;
    *high = r >= 8;
    return (size_t)block * 512 + (size_t)(4 * g + t) * 16 + (size_t)(2 * kk + h) * 4 + (size_t)j;
}

static size_t addr8(int64_t n, int64_t k, int64_t K)
{
    int64_t block = n / 16 * (K / 64) + k / 64;
    int r = (int)(n % 16), c = (int)(k % 64);
    int g = r % 8, kk = c / 32, h = (c / 16) % 2, t = (c / 4) % 4, j = c % 4;
    return (size_t)block * 1024 + (size_t)kk * 512 + (size_t)(4 * g + t) * 16 + (size_t)(2 * h + r / 8) * 4 +
           (size_t)j;
}

/* layout.h's group entries: the two bytes of row n, group gi. */
static size_t gentry(int64_t n, int64_t gi, int64_t groups)
{
    int r = (int)(n % 16);
    return (size_t)((n / 16) * groups + gi) * 32 + (size_t)(4 * (r % 8) + 2 * (r / 8));
}

static int sec_index(const sections *sc, const char *name)
{
    for (int i = 0; i < sc->n; i++)
        if (!strcmp(sc->name[i], name))
            return i;
    return -1;
}

/* The whole version-2 buffer q describes, built from packed.h's table. */
static uint8_t *encode(const quant *q, size_t *bytes)
{
    sections sc = expect_sections(q->scheme, q->group, q->N, q->K);
    size_t total = sc.header + sc.payload;
    uint8_t *b = calloc(total, 1), *pay = b + sc.header;
    ck_assert(b != NULL);
    int64_t N = q->N, K = q->K;
    uint8_t *qw = pay + sc.offset[0];
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++) {
            if (q->scheme == W8A8) {
                qw[addr8(n, k, K)] = (uint8_t)q->q8[n * K + k];
            } else {
                int high;
                size_t a = addr4(n, k, K, &high);
                qw[a] |= (uint8_t)(q->q4[n * K + k] << (high ? 4 : 0));
            }
        }
    int gp = sec_index(&sc, "gparams"), sc_i = sec_index(&sc, "scale"), zi = sec_index(&sc, "zero");
    if (has_gparams(q->scheme, q->group))
        for (int64_t n = 0; n < N; n++)
            for (int64_t gi = 0; gi < q->groups; gi++) {
                size_t e = sc.offset[gp] + gentry(n, gi, q->groups);
                pay[e] = q->p0[n * q->groups + gi];
                pay[e + 1] = q->p1[n * q->groups + gi];
            }
    for (int64_t n = 0; n < N; n++)
        qt_put_le(pay + sc.offset[sc_i] + 4 * n, qt_bits_of(q->scale[n]), 4);
    if (per_channel_qoq(q))
        for (int64_t n = 0; n < N; n++)
            qt_put_le(pay + sc.offset[zi] + 4 * n, (uint32_t)q->zero[n], 4);

    memcpy(b, "QJITWTS1", 8);
    qt_put_le(b + 8, 2, 4);
    qt_put_le(b + 12, (uint32_t)q->scheme, 4);
    qt_put_le(b + 16, (uint64_t)N, 8);
    qt_put_le(b + 24, (uint64_t)K, 8);
    qt_put_le(b + 32, (uint32_t)q->group, 4);
    qt_put_le(b + 40, (uint32_t)sc.n, 4);
    qt_put_le(b + 44, sc.header, 4);
    qt_put_le(b + 48, (uint32_t)q->param, 4);
    qt_put_le(b + 56, sc.payload, 8);
    for (int i = 0; i < sc.n; i++) {
        memcpy(b + 64 + 32 * i, sc.name[i], strlen(sc.name[i]));
        qt_put_le(b + 64 + 32 * i + 16, sc.offset[i], 8);
        qt_put_le(b + 64 + 32 * i + 24, sc.bytes[i], 8);
    }
    size_t tail = 64 + 32 * (size_t)sc.n;
    qt_put_le(b + tail, qjit__hash64(pay, sc.payload, 0), 8);
    qt_put_le(b + tail + 8, qjit__hash64(b, tail + 8, 0), 8);
    *bytes = total;
    return b;
}

/* Checks every header field of a version-2 buffer against the documented
 * format and the expected shape, both hashes and the padding. */
static void check_header(const char *what, const uint8_t *b, size_t bytes, qjit_scheme s, int group, int64_t N,
                         int64_t K)
{
    sections sc = expect_sections(s, group, N, K);
    ck_assert_msg(bytes == sc.header + sc.payload, "%s: %zu bytes, want %zu", what, bytes, sc.header + sc.payload);
    ck_assert_msg(memcmp(b, "QJITWTS1", 8) == 0, "%s: magic", what);
    ck_assert_msg(qt_le32(b + 8) == 2, "%s: version %u", what, qt_le32(b + 8));
    ck_assert_msg(qt_le32(b + 12) == (uint32_t)s, "%s: scheme %u", what, qt_le32(b + 12));
    ck_assert_msg(qt_le64(b + 16) == (uint64_t)N && qt_le64(b + 24) == (uint64_t)K, "%s: N, K", what);
    ck_assert_msg((int32_t)qt_le32(b + 32) == group, "%s: group %d", what, (int32_t)qt_le32(b + 32));
    ck_assert_msg(qt_le32(b + 36) == 0 && qt_le32(b + 52) == 0, "%s: flags/reserved", what);
    ck_assert_msg(qt_le32(b + 40) == (uint32_t)sc.n, "%s: nsections %u", what, qt_le32(b + 40));
    ck_assert_msg(qt_le32(b + 44) == sc.header, "%s: header_bytes %u", what, qt_le32(b + 44));
    ck_assert_msg(qt_le64(b + 56) == sc.payload, "%s: payload_bytes %llu, want %zu", what,
                  (unsigned long long)qt_le64(b + 56), sc.payload);
    for (int i = 0; i < sc.n; i++) {
        const uint8_t *e = b + 64 + 32 * i;
        char name[16] = {0};
        memcpy(name, sc.name[i], strlen(sc.name[i]));
        ck_assert_msg(memcmp(e, name, 16) == 0, "%s: section %d is '%.16s', want '%s' NUL-padded", what, i,
                      (const char *)e, sc.name[i]);
        ck_assert_msg(qt_le64(e + 16) == sc.offset[i] && qt_le64(e + 24) == sc.bytes[i],
                      "%s: section %s at %llu of %llu bytes, want %zu of %zu", what, sc.name[i],
                      (unsigned long long)qt_le64(e + 16), (unsigned long long)qt_le64(e + 24), sc.offset[i],
                      sc.bytes[i]);
    }
    size_t tail = 64 + 32 * (size_t)sc.n;
    ck_assert_msg(qt_le64(b + tail) == qjit__hash64(b + sc.header, sc.payload, 0), "%s: payload hash", what);
    ck_assert_msg(qt_le64(b + tail + 8) == qjit__hash64(b, tail + 8, 0), "%s: header hash", what);
    for (size_t i = tail + 16; i < sc.header; i++)
        ck_assert_msg(b[i] == 0, "%s: header padding byte %zu is 0x%02x", what, i, b[i]);
}

/* Reads a (checked) version-2 buffer into q, from the documented layouts. */
static void decode(const uint8_t *b, quant *q)
{
    sections sc = expect_sections(q->scheme, q->group, q->N, q->K);
    const uint8_t *pay = b + sc.header, *qw = pay + sc.offset[0];
    int64_t N = q->N, K = q->K;
    q->param = (int32_t)qt_le32(b + 48);
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++) {
            if (q->scheme == W8A8) {
                q->q8[n * K + k] = (int8_t)qw[addr8(n, k, K)];
            } else {
                int high;
                uint8_t byte = qw[addr4(n, k, K, &high)];
                q->q4[n * K + k] = (uint8_t)(high ? byte >> 4 : byte & 15);
            }
        }
    int gp = sec_index(&sc, "gparams"), sc_i = sec_index(&sc, "scale"), zi = sec_index(&sc, "zero");
    if (has_gparams(q->scheme, q->group))
        for (int64_t n = 0; n < N; n++)
            for (int64_t gi = 0; gi < q->groups; gi++) {
                size_t e = sc.offset[gp] + gentry(n, gi, q->groups);
                q->p0[n * q->groups + gi] = pay[e];
                q->p1[n * q->groups + gi] = pay[e + 1];
            }
    for (int64_t n = 0; n < N; n++)
        q->scale[n] = qt_float_of(qt_le32(pay + sc.offset[sc_i] + 4 * n));
    if (per_channel_qoq(q))
        for (int64_t n = 0; n < N; n++)
            q->zero[n] = (int32_t)qt_le32(pay + sc.offset[zi] + 4 * n);
}

/* Compares the stored fields of two models, naming the first difference. */
static void compare_quant(const char *what, const quant *got, const quant *want)
{
    int64_t N = want->N, K = want->K, groups = want->groups;
    ck_assert_msg(got->param == want->param, "%s: layer parameter %d, want %d", what, got->param, want->param);
    for (int64_t n = 0; n < N; n++) {
        REQUIRE(qt_bits_of(got->scale[n]) == qt_bits_of(want->scale[n]), "%s: scale[%lld] = %a, want %a", what,
                (long long)n, (double)got->scale[n], (double)want->scale[n]);
        REQUIRE(got->zero[n] == want->zero[n], "%s: zero[%lld] = %d, want %d", what, (long long)n, got->zero[n],
                want->zero[n]);
        for (int64_t gi = 0; gi < groups; gi++)
            REQUIRE(got->p0[n * groups + gi] == want->p0[n * groups + gi] &&
                        got->p1[n * groups + gi] == want->p1[n * groups + gi],
                    "%s: group entry [%lld, %lld] = {%d, %d}, want {%d, %d}", what, (long long)n, (long long)gi,
                    got->p0[n * groups + gi], got->p1[n * groups + gi], want->p0[n * groups + gi],
                    want->p1[n * groups + gi]);
        for (int64_t k = 0; k < K; k++) {
            REQUIRE(got->q4[n * K + k] == want->q4[n * K + k], "%s: Q4[%lld, %lld] = %d, want %d", what,
                    (long long)n, (long long)k, got->q4[n * K + k], want->q4[n * K + k]);
            REQUIRE(got->q8[n * K + k] == want->q8[n * K + k], "%s: W8[%lld, %lld] = %d, want %d", what,
                    (long long)n, (long long)k, got->q8[n * K + k], want->q8[n * K + k]);
        }
    }
}

/*------------------------------------------------------------------------
 * Properties and error bounds
 *------------------------------------------------------------------------*/

/* The invariants each scheme's arithmetic promises, on the expected model
 * (which the buffer has been shown to equal). */
static void check_properties(const char *what, const float *W, const quant *q)
{
    int64_t N = q->N, K = q->K, G = q->G;
    for (int64_t n = 0; n < N; n++) {
        const float *w = W + n * K;
        float amax = amax_of(w, K);
        for (int64_t gi = 0; gi < q->groups; gi++) {
            int p0 = q->p0[n * q->groups + gi], p1 = q->p1[n * q->groups + gi];
            for (int64_t k = gi * G; k < (gi + 1) * G; k++) {
                int l1 = q->level1[n * K + k], q4 = q->q4[n * K + k], op = operand(q, n, k);
                if (q->scheme == LQQ) {
                    REQUIRE(p1 >= 9 && p1 <= 247 && p0 >= 1 && p0 <= 16, "%s: [%lld, %lld] s = %d, a = %d", what,
                            (long long)n, (long long)gi, p0, p1);
                    REQUIRE(q4 * p0 + p1 <= 255, "%s: U8' = %d > 255 at [%lld, %lld]", what, q4 * p0 + p1,
                            (long long)n, (long long)k);
                    REQUIRE(2 * abs(op - l1) <= p0, "%s: |Q8' - Q8| = %d > s/2 = %d/2 at [%lld, %lld]", what,
                            abs(op - l1), p0, (long long)n, (long long)k);
                } else if (q->scheme == QOQ && q->group) {
                    /* Subtraction after multiplication: the true value
                     * Q4 s1 - z s1 (z s1 in [-127, 127] is the INT8 reading
                     * of the stored byte) must equal the byte-wise result. */
                    int exact = q4 * p0 - (int8_t)p1;
                    REQUIRE(p0 >= 1 && p0 <= 16 && q4 * p0 <= 255, "%s: s1 = %d, Q4 = %d", what, p0, q4);
                    /* The kernel adds c = (128 - zs) mod 256 in one multiply-add:
                     * no carry may leave the byte. */
                    REQUIRE(q4 * p0 + ((128 - p1) & 0xFF) <= 255, "%s: Q4 s1 + c = %d at [%lld, %lld]", what,
                            q4 * p0 + ((128 - p1) & 0xFF), (long long)n, (long long)k);
                    REQUIRE(exact >= -128 && exact <= 127 && exact == op, "%s: Q8' = %d (byte-wise %d) at [%lld, %lld]",
                            what, exact, op, (long long)n, (long long)k);
                    REQUIRE(2 * abs(op - l1) <= p0, "%s: |Q8' - Q8| = %d > s1/2 = %d/2 at [%lld, %lld]", what,
                            abs(op - l1), p0, (long long)n, (long long)k);
                } else if (q->scheme == IS) {
                    REQUIRE(op >= -8 && op <= 7, "%s: Q4 = %d at [%lld, %lld]", what, op, (long long)n, (long long)k);
                } else if (q->scheme == W4A4) {
                    REQUIRE(op >= -7 && op <= 7, "%s: Q4 = %d at [%lld, %lld]", what, op, (long long)n, (long long)k);
                }
            }
        }
        if (per_channel_qoq(q))
            REQUIRE(q->zero[n] >= 0 && q->zero[n] <= 15 && isfinite(q->scale[n]) && q->scale[n] > 0,
                    "%s: row %lld: sw = %a, zw = %d (want a finite positive scale, zw in [0, 15])", what,
                    (long long)n, (double)q->scale[n], q->zero[n]);
        /* The largest |W| of a row lands on the edge of the range, unless
         * its scale underflowed or is subnormal (then the quotient is only
         * 119 or 127 to within the scale's few bits). */
        int limit = q->scheme == W8A8 ? 127 : q->scheme == W4A4 ? 7 : 119;
        if ((q->scheme == LQQ || (q->scheme == QOQ && q->group) || q->scheme == W8A8 || q->scheme == W4A4) &&
            amax / (float)limit >= FLT_MIN) {
            int saw = 0;
            for (int64_t k = 0; k < K && !saw; k++) {
                int v = q->scheme == W8A8 ? q->q8[n * K + k]
                        : q->scheme == W4A4 ? operand(q, n, k) : q->level1[n * K + k];
                saw = fabsf(w[k]) == amax && v == (w[k] > 0 ? limit : -limit);
            }
            REQUIRE(saw, "%s: row %lld: the largest |W| does not map to +-%d", what, (long long)n, limit);
        }
    }
    if (q->scheme == IS) {
        /* The stored integer scales keep every INT32 sum in range. */
        int max_s = 0;
        for (int64_t i = 0; i < N * q->groups; i++)
            max_s = (q->p0[i] | q->p1[i] << 8) > max_s ? (q->p0[i] | q->p1[i] << 8) : max_s;
        REQUIRE(SUM_BOUND * (double)K * max_s <= INT32_BOUND, "%s: 127 x 8 x K x max S = %.0f > INT32", what,
                SUM_BOUND * (double)K * max_s);
    }
}

/* |W - dequant(W)| against a bound derived per scheme. s0, sw: the stored
 * per-channel scale; float slack: the quotient W / scale is rounded once
 * (|W| 2^-24 in weight units) and clamping costs what the scale rounded
 * below its exact value (amax - 119 s0, nonzero only when s0 < amax / 119,
 * which matters for subnormal scales).
 *   lqq, qoq groups: level 1 |W - Q8 s0| <= s0 / 2 + slack; level 2
 *       |Q8' - Q8| <= s / 2 (s the group's level-2 scale, <= 16), so
 *       |W - Q8' s0| <= s0 / 2 + slack + s s0 / 2.
 *   qoq per channel: |W - (Q4 - zw) sw| <= sw / 2 + max(0, hi - lo - 15 sw)
 *       + slack: unclamped it is rounding; clamped above, the zero point is
 *       within sw / 2 of -lo / sw and W <= hi; below, W >= lo.
 *   is: |W - Q4 sg| <= sg / 2 + slack (no clamp: |W| <= 7 sg), and
 *       |sg - S / alpha| <= 1 / (2 alpha) for |Q4| <= 7: + 3.5 / alpha.
 *   w8a8: sw / 2 + slack; w4a4 the same with 7 for 127. */
static void check_error_bounds(const char *what, const float *W, const quant *q)
{
    int64_t N = q->N, K = q->K, G = q->G;
    for (int64_t n = 0; n < N; n++) {
        const float *w = W + n * K;
        double amax = amax_of(w, K), s = q->scale[n], lo = 0, hi = 0;
        for (int64_t k = 0; k < K; k++) {
            lo = fmin(lo, w[k]);
            hi = fmax(hi, w[k]);
        }
        for (int64_t k = 0; k < K; k++) {
            int64_t gi = k / G;
            double bound;
            switch (q->scheme) {
            case LQQ:
            case QOQ:
                if (q->group == 0 && q->scheme == QOQ)
                    bound = 0.5 * s + fmax(0.0, hi - lo - 15.0 * s) + (fabs(w[k]) + fabs(lo) + fabs(hi)) * 0x1p-22;
                else
                    bound = 0.5 * s + amax * 0x1p-24 + fmax(0.0, amax - 119.0 * s) +
                            0.5 * q->p0[n * q->groups + gi] * s;
                break;
            case IS: {
                double sg = group_sg(w + gi * G, (int)G), gmax = amax_of(w + gi * G, G);
                bound = 0.5 * sg + fabs(w[k]) * 0x1p-23 + fmax(0.0, gmax - 7.0 * sg) + 3.5 * ldexp(1.0, -q->param);
                break;
            }
            case W4A4:
                bound = 0.5 * s + amax * 0x1p-24 + fmax(0.0, amax - 7.0 * s);
                break;
            default:
                bound = 0.5 * s + amax * 0x1p-24 + fmax(0.0, amax - 127.0 * s);
                break;
            }
            double err = fabs((double)w[k] - dequant(q, n, k));
            REQUIRE(err <= bound, "%s: |W - W'| = %g > bound %g at [%lld, %lld] (W = %a, W' = %a, scale %a)", what,
                    err, bound, (long long)n, (long long)k, (double)w[k], dequant(q, n, k), s);
        }
    }
}

/* What a GPU lane does with its 16-byte load: four 32-bit words, each
 * dequantized four bytes at a time as the scheme's header says, the bytes
 * taken as the MMA fragment (row g or g + 8, k = k0 + 32 kk + 16 h + 4 t + j).
 * Compared with the element-wise operand. */
static uint32_t vsub4(uint32_t x, uint32_t y)
{
    /* Byte-wise x - y with no borrow between bytes (what __vsub4 does). */
    return ((x | 0x80808080u) - (y & 0x7F7F7F7Fu)) ^ ((x ^ ~y) & 0x80808080u);
}

static void check_lane_view(const char *what, const uint8_t *buf, const quant *q)
{
    sections sc = expect_sections(q->scheme, q->group, q->N, q->K);
    const uint8_t *qw = buf + sc.header + sc.offset[0];
    const uint8_t *gp = has_gparams(q->scheme, q->group) ? buf + sc.header + sc.offset[1] : NULL;
    int64_t N = q->N, K = q->K;
    for (int64_t nb = 0; nb < N / 16; nb++)
        for (int64_t kb = 0; kb < K / 64; kb++)
            for (int lane = 0; lane < 32; lane++) {
                int g = lane / 4, t = lane % 4;
                int64_t gi = kb * 64 / q->G;
                const uint8_t *e = gp ? gp + (nb * q->groups + gi) * 32 + 4 * g : NULL;
                for (int kk = 0; kk < 2; kk++)
                    for (int h = 0; h < 2; h++) {
                        uint32_t r[2];   /* rows g and g + 8 */
                        if (q->scheme == W8A8) {
                            const uint8_t *base = qw + (nb * (K / 64) + kb) * 1024 + kk * 512 + lane * 16;
                            r[0] = qt_le32(base + (2 * h) * 4);
                            r[1] = qt_le32(base + (2 * h + 1) * 4);
                        } else {
                            uint32_t word = qt_le32(qw + (nb * (K / 64) + kb) * 512 + lane * 16 + (2 * kk + h) * 4);
                            uint32_t nib[2] = {word & 0x0F0F0F0Fu, (word >> 4) & 0x0F0F0F0Fu};
                            for (int x = 0; x < 2; x++) {
                                if (q->scheme == LQQ)
                                    r[x] = (nib[x] * e[2 * x] + e[2 * x + 1] * 0x01010101u) ^ 0x80808080u;
                                else if (q->scheme == QOQ && q->group)
                                    r[x] = vsub4(nib[x] * e[2 * x], e[2 * x + 1] * 0x01010101u);
                                else if (q->scheme == IS || q->scheme == W4A4)
                                    r[x] = (nib[x] + 0x78787878u) ^ 0x80808080u;
                                else
                                    r[x] = nib[x];
                            }
                        }
                        for (int x = 0; x < 2; x++)
                            for (int j = 0; j < 4; j++) {
                                int64_t n = nb * 16 + g + 8 * x, k = kb * 64 + 32 * kk + 16 * h + 4 * t + j;
                                int v = (int8_t)(uint8_t)(r[x] >> (8 * j));
                                REQUIRE(v == operand(q, n, k),
                                        "%s: lane %d word %d byte %d (row %lld, k %lld): %d, element-wise %d", what,
                                        lane, 2 * kk + h, j, (long long)n, (long long)k, v, operand(q, n, k));
                            }
                    }
            }
}

/* The library's own reference operand, group scales and channel epilogue
 * (scheme.h's vtable, which qjit_reference_gemm runs) against the model. */
static void check_library_operand(const char *what, const uint8_t *buf, size_t bytes, const quant *q)
{
    qjit__weights_view v;
    ck_assert_int_eq(qjit__weights_view_init(NULL, buf, bytes, 1, &v), QJIT_OK);
    const qjit__scheme *s = qjit__scheme_get(q->scheme);
    ck_assert(s != NULL && v.scheme == s);
    int64_t N = q->N, K = q->K;
    int8_t *wq = qt_xmalloc((size_t)(N * K));
    uint8_t *scratch = qt_xmalloc((size_t)(N * K));
    /* In two halves where possible, so the row offset is exercised. */
    int64_t half = N >= 32 ? N / 32 * 16 : N;
    s->operand(&v, 0, half, wq, scratch);
    if (half < N)
        s->operand(&v, half, N - half, wq + half * K, scratch);
    for (int64_t n = 0; n < N; n++) {
        for (int64_t k = 0; k < K; k++)
            REQUIRE(wq[n * K + k] == operand(q, n, k), "%s: library operand [%lld, %lld] = %d, want %d", what,
                    (long long)n, (long long)k, wq[n * K + k], operand(q, n, k));
        float scale;
        int32_t zero;
        qjit__channel(&v, n, &scale, &zero);
        REQUIRE(qt_bits_of(scale) == qt_bits_of(q->scale[n]) && zero == (per_channel_qoq(q) ? q->zero[n] : 0),
                "%s: library channel %lld: %a, %d", what, (long long)n, (double)scale, zero);
        ck_assert((s->group_scale != NULL) == (q->scheme == IS));
        if (s->group_scale)
            for (int64_t gi = 0; gi < q->groups; gi++)
                REQUIRE(s->group_scale(&v, n, gi) == is_scale(q, n, gi), "%s: library S[%lld, %lld]", what,
                        (long long)n, (long long)gi);
    }
    free(wq);
    free(scratch);
}

/*------------------------------------------------------------------------
 * Quantizing through the library
 *------------------------------------------------------------------------*/

/* A buffer of exactly the packed size, filled with PATTERN so that bytes
 * the library leaves alone show. */
static uint8_t *packed_buffer(qjit_scheme s, int group, int64_t N, int64_t K, size_t *bytes)
{
    ck_assert_int_eq(qjit_packed_size(s, group, N, K, bytes), QJIT_OK);
    uint8_t *buf = qt_xmalloc(*bytes);
    memset(buf, PATTERN, *bytes);
    return buf;
}

/* Options with alpha and layer_name set, the rest as qjit_quantize_options_init leaves them. */
static qjit_quantize_options quant_options(uint32_t alpha, const char *layer_name)
{
    qjit_quantize_options o;
    qjit_quantize_options_init(&o);
    o.alpha = alpha;
    o.layer_name = layer_name;
    return o;
}

/* Quantizes W into a fresh buffer of exactly the packed size. */
static uint8_t *pack_weights(qjit_scheme s, int group, const void *W, qjit_dtype dtype, int64_t N, int64_t K,
                             const qjit_quantize_options *opts, size_t *bytes)
{
    uint8_t *buf = packed_buffer(s, group, N, K, bytes);
    size_t written = 0;
    qjit_status st = qjit_quantize_weights_ex(NULL, s, group, W, dtype, N, K, opts, buf, *bytes, &written);
    ck_assert_msg(st == QJIT_OK, "qjit_quantize_weights %s g=%d: %s", sname(s), group, qjit_status_name(st));
    ck_assert_uint_eq(written, *bytes);
    return buf;
}

/* Quantizes FP32 weights through the library and reads the buffer back
 * into a fresh *q (quant_free it); returns the buffer. */
static uint8_t *pack_decode(qjit_scheme s, int group, const float *W, int64_t N, int64_t K,
                            const qjit_quantize_options *opts, quant *q)
{
    size_t bytes;
    uint8_t *buf = pack_weights(s, group, W, QJIT_DTYPE_F32, N, K, opts, &bytes);
    *q = quant_alloc(s, group, N, K);
    decode(buf, q);
    return buf;
}

/* The whole check of one layer: the library's status and buffer against
 * the expected ones byte for byte, then the model's properties, error
 * bounds, the lane view and the library's operand. */
static void check_layer(const char *what, qjit_scheme s, int group, const float *W, int64_t N, int64_t K,
                        uint32_t alpha)
{
    quant want = quant_alloc(s, group, N, K);
    qjit_status expect = expect_quant(W, alpha, &want);
    qjit_quantize_options opts = quant_options(alpha, NULL);
    size_t bytes;
    uint8_t *buf = packed_buffer(s, group, N, K, &bytes);
    size_t written = 0;
    qjit_status st = qjit_quantize_weights_ex(NULL, s, group, W, QJIT_DTYPE_F32, N, K, &opts, buf, bytes, &written);
    ck_assert_msg(st == expect, "%s: qjit_quantize_weights gave %s, the spec says %s", what, qjit_status_name(st),
                  qjit_status_name(expect));
    if (st != QJIT_OK) {
        for (size_t i = 0; i < bytes; i++)
            REQUIRE(buf[i] == PATTERN, "%s: refused, but byte %zu written", what, i);
        free(buf);
        quant_free(&want);
        return;
    }
    ck_assert_uint_eq(written, bytes);
    check_header(what, buf, bytes, s, group, N, K);
    quant got = quant_alloc(s, group, N, K);
    decode(buf, &got);
    compare_quant(what, &got, &want);
    size_t ebytes;
    uint8_t *ebuf = encode(&want, &ebytes);
    ck_assert_uint_eq(ebytes, bytes);
    for (size_t i = 0; i < bytes; i++)
        REQUIRE(buf[i] == ebuf[i], "%s: byte %zu is 0x%02x, the spec's buffer has 0x%02x", what, i, buf[i], ebuf[i]);
    check_properties(what, W, &want);
    check_error_bounds(what, W, &want);
    check_lane_view(what, buf, &got);
    check_library_operand(what, buf, bytes, &got);
    qjit_weights_info info;
    ck_assert_int_eq(qjit_weights_inspect(NULL, buf, bytes, &info), QJIT_OK);
    ck_assert(info.scheme == s && info.group == group && info.N == N && info.K == K && info.bytes == bytes);
    ck_assert_uint_eq(info.payload_bytes, expect_sections(s, group, N, K).payload);
    ck_assert(info.alpha == (s == IS ? ldexp(1.0, want.param) : 0.0));
    free(ebuf);
    free(buf);
    quant_free(&got);
    quant_free(&want);
}

static const struct { int64_t N, K; } shapes[] = {{16, 256}, {48, 768}, {32, 1024}, {16, 320}, {64, 192}};
#define SHAPE_COUNT (sizeof shapes / sizeof shapes[0])

/* Every scheme and group on random and adversarial weights: byte for byte
 * what the spec computes, within the derived error bounds. */
START_TEST(quantize_matches_spec)
{
    const qt_config c = qt_configs[_i];
    qt_rng r = qt_rng_make(100 + (uint64_t)_i);
    int layers = 0;
    for (size_t si = 0; si < SHAPE_COUNT; si++) {
        int64_t N = shapes[si].N, K = shapes[si].K;
        if (c.group && K % c.group)
            continue;
        for (int kind = 0; kind < W_KIND_COUNT; kind++) {
            float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
            make_weights((weight_kind)kind, &r, N, K, W);
            char what[160];
            snprintf(what, sizeof what, "%s g=%d %s N=%lld K=%lld seed=%llu", sname(c.scheme), c.group,
                     kind_names[kind], (long long)N, (long long)K, (unsigned long long)qt_seed());
            check_layer(what, c.scheme, c.group, W, N, K, 0);
            free(W);
            layers++;
        }
    }
    ck_assert_int_ge(layers, 2 * W_KIND_COUNT);
}
END_TEST

/* FP32-only extremes: subnormal floats (scales themselves subnormal or
 * underflowing to 0) and huge floats up to FLT_MAX, where a scale or an
 * integer scale may overflow. The library must either refuse (w4a8-is
 * with QJIT_OVERFLOW, as the spec's bound says) or write a buffer that
 * meets every check. */
START_TEST(quantize_fp32_extremes)
{
    const qt_config c = qt_one_per_scheme[_i];
    qt_rng r = qt_rng_make(200 + (uint64_t)_i);
    const double scales[] = {1e-39, 1e-41, 3e-44, 1e-45, 1e20, 1e30, 3e38};
    int64_t N = 16, K = 128;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++) {
        for (int64_t j = 0; j < N * K; j++) {
            double v = qt_normal(&r) * scales[i];
            W[j] = (float)fmax(fmin(v, FLT_MAX), -FLT_MAX);
        }
        char what[128];
        snprintf(what, sizeof what, "%s g=%d fp32 scale %g seed=%llu", sname(c.scheme), c.group, scales[i],
                 (unsigned long long)qt_seed());
        check_layer(what, c.scheme, c.group, W, N, K, 0);
    }
    free(W);
}
END_TEST

/* Every FP16 value up to a row maximum, sixteen maxima (one per row): the
 * quotients must be float divisions then roundf (a reciprocal multiply or
 * a double division rounds differently on some of these). */
START_TEST(quantize_all_fp16_values)
{
    const qt_config c = qt_one_per_scheme[_i];
    qt_rng r = qt_rng_make(300 + (uint64_t)_i);
    uint16_t maxima[16] = {0x3C00, 0x7BFF, 0x0001, 0x03FF, 0x5640, 0x2E66, 0x57F0, 0x4B00};
    for (int i = 8; i < 16; i++)
        maxima[i] = (uint16_t)(0x0400 + qt_next(&r) % (0x7BFF - 0x0400));
    int64_t K = 0;
    for (uint32_t h = 0; h < 0x7C00; h++)
        K += 2;                               /* room for every finite half of both signs */
    K = (K + 256 + 255) / 256 * 256;
    int64_t N = 16;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    for (int n = 0; n < 16; n++) {
        float amax = qjit__half_to_float(maxima[n]);
        int64_t k = 0;
        float *w = W + n * K;
        w[k++] = amax;
        for (uint32_t h = 0; h < 65536; h++) {
            float v = qjit__half_to_float((uint16_t)h);
            if (isfinite(v) && fabsf(v) <= amax)
                w[k++] = v;
        }
        while (k < K)
            w[k++] = 0.0f;
    }
    char what[96];
    snprintf(what, sizeof what, "%s g=%d all halves", sname(c.scheme), c.group);
    check_layer(what, c.scheme, c.group, W, N, K, 0);
    free(W);
}
END_TEST

/* The hand-worked layers: all zero but for the first n weights of row 0. */
static void hand_layer(float *W, size_t size, const float *row0, size_t n)
{
    memset(W, 0, size * sizeof *W);
    memcpy(W, row0, n * sizeof *row0);
}

/* Expects the stored codes of row 0's first n weights (Q4, or the INT8
 * weight for w8a8) to be want; w4a8-is's offset of 8 is taken off both in
 * the message, which then shows Q4 itself. */
static void expect_row0(const char *what, const quant *q, const float *row0, const int *want, int n)
{
    int offset = q->scheme == IS || q->scheme == W4A4 ? 8 : 0;
    for (int i = 0; i < n; i++) {
        int got = q->scheme == W8A8 ? q->q8[i] : q->q4[i];
        ck_assert_msg(got == want[i], "%s: W = %g -> %s%d, want %d", what, (double)row0[i],
                      q->scheme == W8A8 ? "" : "Q4 ", got - offset, want[i] - offset);
    }
}

/* Rows whose scale is exactly 1 (or 2^0 for w4a8-is), so the quotients
 * are the weights themselves and halves must round away from zero. The
 * expected values are worked out by hand, not by the model. */
START_TEST(round_half_away_from_zero)
{
    enum { N = 16, K = 128 };
    static float W[N * K];
    quant q;

    /* w4a8-lqq, one row, per channel: max 119 gives s0 = 1, Q8 = round(W). */
    const float l1[] = {119.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.49999997f, -118.5f};
    const int want_l1[] = {119, 1, -1, 2, -2, 3, -3, 0, -119};
    hand_layer(W, N * K, l1, 9);
    uint8_t *buf = pack_decode(LQQ, 0, W, N, K, NULL, &q);
    ck_assert(q.scale[0] == 1.0f);
    /* U8 spans [9, 247]: s = ceil(238 / 15) = 16, a = 9. */
    ck_assert_int_eq(q.p0[0], 16);
    ck_assert_int_eq(q.p1[0], 9);
    /* W = 0: U8 = 128, (128 - 9) / 16 = 7.44 -> 7; W = 0.5: Q8 = 1, 120 / 16 =
     * 7.5 -> 8 (level 2 rounds halves away too); W = -118.5: Q8 = -119 -> 0. */
    ck_assert_int_eq(q.q4[9], 7);
    ck_assert_int_eq(q.q4[1], 8);
    ck_assert_int_eq(q.q4[8], 0);
    ck_assert_int_eq(q.q4[0], 15);                /* 238 / 16 = 14.875 -> 15 */
    for (int i = 0; i < 9; i++) {
        /* Q8' = 16 Q4 + 9 - 128 is within s/2 = 8 of the hand-rounded Q8. */
        ck_assert_msg(abs(operand(&q, 0, i) - want_l1[i]) <= 8, "lqq: W = %g -> Q8' %d", (double)W[i],
                      operand(&q, 0, i));
    }
    /* W = 119: U8' = 15 * 16 + 9 = 249, Q8' = 249 ^ 0x80 = 121. */
    ck_assert_int_eq(operand(&q, 0, 0), 121);
    quant_free(&q);
    free(buf);
}
END_TEST

/* The hand-worked cases of the other schemes. */
START_TEST(round_half_away_other_schemes)
{
    enum { N = 16, K = 128 };
    static float W[N * K];
    uint8_t *buf;
    quant q;

    /* w4a8-qoq groups of 64: row 0 has max 119, so s0 = 1 and Q8 = round(W):
     * 8 -> 8, -8 -> -8, 24 -> 24. Group 0 spans [-119, 119]: s1 = 16, z =
     * round(119 / 16 = 7.44) = 7, Q4 = round(Q8 / 16) + 7: 119 -> 14,
     * 8 -> round(0.5) + 7 = 8, -8 -> 6, 24 -> round(1.5) + 7 = 9, -24 -> 5,
     * 0.5 -> Q8 1 -> 7, -119 -> 0; zs = 112. Group 1 is all zero: s1 = 1,
     * z = 0. */
    const float qg[] = {119.0f, 8.0f, -8.0f, 24.0f, -24.0f, 0.5f, -119.0f};
    const int want_qg[] = {14, 8, 6, 9, 5, 7, 0};
    hand_layer(W, N * K, qg, 7);
    buf = pack_decode(QOQ, 64, W, N, K, NULL, &q);
    ck_assert(q.scale[0] == 1.0f);
    ck_assert_int_eq(q.p0[0], 16);
    ck_assert_int_eq(q.p1[0], 112);
    ck_assert_int_eq(q.p0[1], 1);
    ck_assert_int_eq(q.p1[1], 0);
    expect_row0("qoq g=64", &q, qg, want_qg, 7);
    ck_assert_int_eq(operand(&q, 0, 0), 14 * 16 - 112);
    ck_assert_int_eq(operand(&q, 0, 6), -112);
    quant_free(&q);
    free(buf);

    /* w4a8-qoq per channel: row 0 spans [-6.5, 8.5], so sw = 15 / 15 = 1,
     * zw = round(6.5) = 7 (away from zero; to even would give 6), Q4 =
     * clamp(round(W) + 7, 0, 15): 8.5 -> 16 -> 15 (the clamp), -6.5 -> 0,
     * 0.5 -> 8, -0.5 -> 6, 2.5 -> 10, 0 -> 7. */
    const float qc[] = {8.5f, -6.5f, 0.5f, -0.5f, 2.5f, 0.0f};
    const int want_qc[] = {15, 0, 8, 6, 10, 7};
    hand_layer(W, N * K, qc, 6);
    buf = pack_decode(QOQ, 0, W, N, K, NULL, &q);
    ck_assert(q.scale[0] == 1.0f);
    ck_assert_int_eq(q.zero[0], 7);
    expect_row0("qoq g=0", &q, qc, want_qc, 6);
    /* An all-zero row: sw = 1, zw = 0, Q4 = 0. */
    ck_assert(q.scale[1] == 1.0f);
    ck_assert_int_eq(q.zero[1], 0);
    ck_assert_int_eq(q.q4[K], 0);
    quant_free(&q);
    free(buf);

    /* w4a8-is, groups of 64, alpha = 1 given: row 0's group has max 7, so
     * sg = 1 and Q4 = round(W): 0.5 -> 1, -0.5 -> -1, 2.5 -> 3, -2.5 -> -3,
     * 3.5 -> 4, -7 -> -7; stored + 8. Rows 1..3 have maxima 17.5, 3.5 and
     * 10.5: sg = 2.5, 0.5, 1.5 exactly, S = round(sg) = 3, 1, 2 (halves
     * away). Group 1 of every row and rows 4.. are zero: S = 0, Q4 = 8. */
    const float ig[] = {7.0f, 0.5f, -0.5f, 2.5f, -2.5f, 3.5f, -7.0f};
    const int want_ig[] = {15, 9, 7, 11, 5, 12, 1};
    hand_layer(W, N * K, ig, 7);
    W[1 * K] = 17.5f;
    W[2 * K] = -3.5f;
    W[3 * K + 5] = 10.5f;
    const qjit_quantize_options o = quant_options(1, NULL);
    buf = pack_decode(IS, 64, W, N, K, &o, &q);
    ck_assert_int_eq(q.param, 0);
    expect_row0("is", &q, ig, want_ig, 7);
    ck_assert_int_eq(is_scale(&q, 0, 0), 1);
    ck_assert_int_eq(is_scale(&q, 1, 0), 3);
    ck_assert_int_eq(is_scale(&q, 2, 0), 1);
    ck_assert_int_eq(is_scale(&q, 3, 0), 2);
    ck_assert_int_eq(is_scale(&q, 0, 1), 0);
    ck_assert_int_eq(is_scale(&q, 9, 0), 0);
    ck_assert_int_eq(q.q4[K + 1], 8);
    ck_assert_int_eq(q.q4[2 * K], 1);            /* -3.5 / 0.5 = -7 */
    ck_assert(q.scale[0] == 1.0f);
    quant_free(&q);
    free(buf);
    /* The heuristic on the same layer: min sg = 0.5 gives alpha = 2, so
     * S = 2, 5, 1, 3 and the scale 1/2. */
    buf = pack_decode(IS, 64, W, N, K, NULL, &q);
    ck_assert_int_eq(q.param, 1);
    ck_assert_int_eq(is_scale(&q, 0, 0), 2);
    ck_assert_int_eq(is_scale(&q, 1, 0), 5);
    ck_assert_int_eq(is_scale(&q, 2, 0), 1);
    ck_assert_int_eq(is_scale(&q, 3, 0), 3);
    ck_assert(q.scale[5] == 0.5f);
    quant_free(&q);
    free(buf);

    /* w8a8: max 127 gives sw = 1, Wq = round(W). */
    const float w8[] = {127.0f, 0.5f, -0.5f, 1.5f, -1.5f, 126.5f, -126.5f, 0.49999997f};
    const int want_w8[] = {127, 1, -1, 2, -2, 127, -127, 0};
    hand_layer(W, N * K, w8, 8);
    buf = pack_decode(W8A8, 0, W, N, K, NULL, &q);
    ck_assert(q.scale[0] == 1.0f);
    expect_row0("w8a8", &q, w8, want_w8, 8);
    ck_assert(q.scale[1] == 1.0f);               /* an all-zero row */
    quant_free(&q);
    free(buf);
}
END_TEST

/*------------------------------------------------------------------------
 * Brute force over every group range
 *------------------------------------------------------------------------*/

/* One row of the brute-force layers: its first group of 64 spans exactly
 * [lo - bias, hi - bias], evenly, and its second alternates +-119, so the
 * row's maximum is 119 and its level-1 scale s0 is 1 (Q8 = W). */
static void range_row(float *w, int lo, int hi, int bias)
{
    for (int i = 0; i < 64; i++)
        w[i] = (float)(lo + (hi - lo) * i / 63 - bias);
    for (int i = 64; i < 128; i++)
        w[i] = i % 2 ? 119.0f : -119.0f;
}

/* Sends the first `rows` range rows of the N x K layer W through the
 * library in groups of 64, the rows after them (which the callers do not
 * check) made copies of row 0. Returns the buffer; *q holds it decoded. */
static uint8_t *range_batch(qjit_scheme s, float *W, int rows, int64_t N, int64_t K, quant *q)
{
    for (int64_t rr = rows; rr < N; rr++)
        memcpy(W + rr * K, W, sizeof(float) * (size_t)K);
    return pack_decode(s, 64, W, N, K, NULL, q);
}

/* w4a8-lqq, on paper: for every U8 range 9 <= lo <= hi <= 247 and every
 * value in it, U8' = Q4 s + a stays <= 255 (no carry out of a byte in the
 * kernel's one IMAD), and |Q8' - Q8| <= s / 2 <= 8. Q8' lands in
 * [-119, 127]: U8' >= a >= 9 below, and rounding up by s / 2 = 8 reaches
 * 255 (a = 15, s = 16, U8 = 247: Q4 = round(14.5) = 15, U8' = 255). */
START_TEST(brute_force_lqq_ranges)
{
    long pairs = 0;
    int lowest = 127, highest = -128;
    for (int lo = 9; lo <= 247; lo++)
        for (int hi = lo; hi <= 247; hi++) {
            int s = (hi - lo + 14) / 15 > 1 ? (hi - lo + 14) / 15 : 1;
            REQUIRE(s <= 16, "s = %d for [%d, %d]", s, lo, hi);
            for (int u = lo; u <= hi; u++) {
                int q4 = rdiv(u - lo, s);
                REQUIRE(q4 <= 15, "Q4 = %d for u=%d in [%d,%d]", q4, u, lo, hi);
                REQUIRE(q4 * s + lo <= 255, "overflow: u=%d in [%d,%d], s=%d, Q4=%d", u, lo, hi, s, q4);
                int d8 = (int8_t)(uint8_t)((q4 * s + lo) ^ 0x80);
                REQUIRE(2 * abs(d8 - (u - 128)) <= s, "u=%d -> %d", u, d8);
                lowest = d8 < lowest ? d8 : lowest;
                highest = d8 > highest ? d8 : highest;
            }
            pairs++;
        }
    ck_assert_int_eq(pairs, 239 * 240 / 2);
    ck_assert_int_eq(lowest, -119);
    ck_assert_int_eq(highest, 127);

    /* Through the library: a row per pair whose first group of 64 holds
     * exactly the range [lo, hi] (as Q8 = U8 - 128) and whose second holds
     * +-119, so s0 = 1 and Q8 = W; 16 pairs per call. */
    int64_t K = 128, N = 16;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    int row = 0, los[16], his[16];
    long checked = 0;
    for (int lo = 9; lo <= 247; lo++)
        for (int hi = lo; hi <= 247; hi++) {
            los[row] = lo;
            his[row] = hi;
            range_row(W + row * K, lo, hi, 128);
            if (++row < 16 && !(lo == 247 && hi == 247))
                continue;
            quant q;
            uint8_t *buf = range_batch(LQQ, W, row, N, K, &q);
            for (int rr = 0; rr < row; rr++) {
                int s = q.p0[rr * 2], a = q.p1[rr * 2];
                int want_s = (int)ceil((his[rr] - los[rr]) / 15.0);
                REQUIRE(a == los[rr] && s == (want_s < 1 ? 1 : want_s), "[%d, %d]: s = %d, a = %d", los[rr], his[rr],
                        s, a);
                for (int i = 0; i < 64; i++) {
                    int u = (int)W[rr * K + i] + 128;
                    REQUIRE(q.q4[rr * K + i] == rdiv(u - a, s), "[%d, %d]: u = %d -> Q4 %d", los[rr], his[rr], u,
                            q.q4[rr * K + i]);
                    REQUIRE(q.q4[rr * K + i] * s + a <= 255, "library overflow for [%d,%d]", los[rr], his[rr]);
                }
                checked++;
            }
            quant_free(&q);
            free(buf);
            row = 0;
        }
    ck_assert_int_eq(checked, pairs);
    free(W);
}
END_TEST

/* w4a8-qoq: Q8' = Q4 s1 - z s1 for every group of level-1 values there
 * can be: every (lo, hi) in [-119, 119] and every value in range (the
 * other values of a group do not change s1 or z), with the clamp. Q8'
 * must fit INT8, equal the byte-wise ((Q4 s1) - zs) mod 256 read as INT8
 * and the kernel's (Q4 s1 + (128 - zs) mod 256) ^ 0x80 without a carry out
 * of the byte, and lie within s1 / 2 of Q8.
 *
 * The observed range is printed and pinned. It is [-126, 126], not the
 * [-121, 126] that QServe's paper quotes: with z rounded half
 * away from zero, lo = -119, hi = 77 gives s1 = ceil(196 / 15) = 14,
 * z = round(8.5) = 9, and Q8 = -119 maps to Q4 = round(-8.5) + 9 = 0,
 * Q8' = -126 (symmetrically lo = -90, hi = 119 reaches 126). Both edges
 * still fit INT8, which is what the kernel needs. */
START_TEST(brute_force_qoq_ranges)
{
    long pairs = 0, clamped = 0;
    int lowest = 127, highest = -128;
    for (int lo = -119; lo <= 119; lo++)
        for (int hi = lo; hi <= 119; hi++) {
            int s1 = (int)ceil((hi - lo) / 15.0);
            s1 = s1 < 1 ? 1 : s1;
            REQUIRE(s1 <= 16, "s1 = %d", s1);
            int z = rdiv(-lo, s1), zs = z * s1;
            REQUIRE(zs >= -128 && zs <= 127, "z s1 = %d does not fit a byte", zs);
            for (int v = lo; v <= hi; v++) {
                int raw = rdiv(v, s1) + z, q4 = clampi(raw, 0, 15);
                clamped += raw != q4;
                REQUIRE(q4 * s1 <= 255, "Q4 s1 = %d overflows a byte", q4 * s1);
                int d8 = q4 * s1 - zs;
                REQUIRE(d8 >= -128 && d8 <= 127, "Q8' = %d for v=%d in [%d, %d]", d8, v, lo, hi);
                int bytewise = (int8_t)(uint8_t)(((q4 * s1) - (uint8_t)zs) & 0xFF);
                REQUIRE(bytewise == d8, "byte-wise %d != %d for v=%d in [%d, %d]", bytewise, d8, v, lo, hi);
                /* The kernel's form: Q4 s1 + c, c = (128 - zs) mod 256 from
                 * the stored byte, must not carry out of the byte. */
                int c = (128 - (uint8_t)zs) & 0xFF, u8 = q4 * s1 + c;
                REQUIRE(u8 <= 255 && (int8_t)(uint8_t)(u8 ^ 0x80) == d8, "Q4 s1 + c = %d (c = %d) for v=%d in [%d, %d]",
                        u8, c, v, lo, hi);
                REQUIRE(2 * abs(d8 - v) <= s1, "|Q8' - Q8| = %d > s1/2 for v=%d in [%d, %d]", abs(d8 - v), v, lo, hi);
                lowest = d8 < lowest ? d8 : lowest;
                highest = d8 > highest ? d8 : highest;
            }
            pairs++;
        }
    printf("w4a8-qoq: Q8' = Q4 s1 - z s1 over all %ld level-1 ranges lies in [%d, %d] (%ld values clamped)\n", pairs,
           lowest, highest, clamped);
    ck_assert_int_eq(pairs, 239 * 240 / 2);
    ck_assert_int_ge(lowest, -128);
    ck_assert_int_le(highest, 127);
    ck_assert_int_eq(lowest, -126);
    ck_assert_int_eq(highest, 126);
    ck_assert_int_gt(clamped, 0);                /* the clamp is reached, so it was tested */

    /* Through the library, as for w4a8-lqq: the first group of a row holds
     * exactly [lo, hi], the second +-119 (so s0 = 1, Q8 = W). A stride over
     * the pairs keeps it quick; every lo and hi appears. */
    int64_t K = 128, N = 16;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    int row = 0, los[16], his[16];
    long checked = 0;
    for (int lo = -119; lo <= 119; lo++)
        for (int hi = lo; hi <= 119; hi += 1 + (lo + 119) % 3) {
            los[row] = lo;
            his[row] = hi;
            range_row(W + row * K, lo, hi, 0);
            if (++row < 16 && !(lo == 119))
                continue;
            quant q;
            uint8_t *buf = range_batch(QOQ, W, row, N, K, &q);
            for (int rr = 0; rr < row; rr++) {
                int s1 = (int)ceil((his[rr] - los[rr]) / 15.0);
                s1 = s1 < 1 ? 1 : s1;
                int z = rdiv(-los[rr], s1);
                REQUIRE(q.p0[rr * 2] == s1 && q.p1[rr * 2] == (uint8_t)(z * s1), "[%d, %d]: s1 = %d, zs = %d",
                        los[rr], his[rr], q.p0[rr * 2], q.p1[rr * 2]);
                for (int i = 0; i < 64; i++) {
                    int v = (int)W[rr * K + i], d8 = operand(&q, rr, i);
                    REQUIRE(q.q4[rr * K + i] == clampi(rdiv(v, s1) + z, 0, 15), "[%d, %d]: %d -> Q4 %d", los[rr],
                            his[rr], v, q.q4[rr * K + i]);
                    REQUIRE(d8 >= lowest && d8 <= highest && 2 * abs(d8 - v) <= s1, "[%d, %d]: %d -> Q8' %d", los[rr],
                            his[rr], v, d8);
                }
                checked++;
            }
            quant_free(&q);
            free(buf);
            row = 0;
        }
    ck_assert_int_gt(checked, 5000);
    free(W);
}
END_TEST

/* w4a8-is stores Q4 in [-8, 7] as Q4 + 8; the kernel converts a word of
 * four nibble values to four INT8 with ((u + 0x78787878) ^ 0x80808080):
 * every byte of every word of values 0..15, no carries between bytes. */
START_TEST(is_offset_binary_conversion)
{
    for (uint32_t x = 0; x < 65536; x++) {
        uint32_t u = (x & 15) | ((x >> 4) & 15) << 8 | ((x >> 8) & 15) << 16 | ((x >> 12) & 15) << 24;
        uint32_t r = (u + 0x78787878u) ^ 0x80808080u;
        for (int j = 0; j < 4; j++) {
            int stored = (int)(u >> (8 * j)) & 15;
            REQUIRE((int8_t)(uint8_t)(r >> (8 * j)) == stored - 8, "word 0x%08x byte %d: %d, want %d", u, j,
                    (int8_t)(uint8_t)(r >> (8 * j)), stored - 8);
        }
    }
}
END_TEST

/*------------------------------------------------------------------------
 * w4a8-is: the amplifier
 *------------------------------------------------------------------------*/

typedef struct log_capture {
    char text[4096];
    int lines;
} log_capture;

static void capture_log(void *ud, const char *line)
{
    log_capture *c = ud;
    size_t used = strlen(c->text);
    snprintf(c->text + used, sizeof c->text - used, "%s\n", line);
    c->lines++;
}

/* A 16 x K layer of groups of 64 whose first group has max|W| = 7 sg_min,
 * one group max|W| = 7 sg_max, some zero groups, the rest in between. */
static void is_layer(qt_rng *r, int64_t K, float sg_min, float sg_max, float *W)
{
    for (int64_t n = 0; n < 16; n++)
        for (int64_t k = 0; k < K; k++) {
            int64_t gi = n * (K / 64) + k / 64;
            float amax = gi == 0 ? 7.0f * sg_min : gi == 1 ? 7.0f * sg_max : gi % 5 == 2 ? 0.0f
                         : 7.0f * (sg_min + (sg_max - sg_min) * (float)qt_uniform(r));
            W[n * K + k] = k % 64 == 3 ? -amax : amax * (float)(2 * qt_uniform(r) - 1);
        }
}

/* The heuristic: the smallest 2^e (e >= 0) with min nonzero sg 2^e >= 1,
 * at the boundaries (sg_min exactly a power of two) and around them. */
START_TEST(is_alpha_heuristic)
{
    qt_rng r = qt_rng_make(400);
    static const struct { float sg_min; int e; } cases[] = {
        {0.25f, 2}, {0.26f, 2}, {0.24f, 3}, {0.5f, 1}, {1.0f, 0}, {1.5f, 0}, {3.0f, 0}, {0.001f, 10},
        {0x1p-20f, 20}, {0x1.8p-21f, 21}, {0x1p-30f, 30}, {0x1p-33f, 30},
    };
    int64_t K = 256;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(16 * K));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        is_layer(&r, K, cases[i].sg_min, 4.0f * cases[i].sg_min, W);
        /* The boundary cases are exact (7 sg and 7 sg / 7 are exact in
         * float for powers of two and 1.5 2^-21); the others are far
         * from a boundary. */
        float sg = group_sg(W, 64);
        int e_expect = cases[i].e;
        size_t bytes;
        uint8_t *buf = pack_weights(IS, 64, W, QJIT_DTYPE_F32, 16, K, NULL, &bytes);
        qjit_weights_info info;
        ck_assert_int_eq(qjit_weights_inspect(NULL, buf, bytes, &info), QJIT_OK);
        ck_assert_msg(info.alpha == ldexp(1.0, e_expect), "sg_min %a: alpha %g, want 2^%d", (double)sg, info.alpha,
                      e_expect);
        if (e_expect < 30)
            ck_assert_msg(ldexpf(sg, e_expect) >= 1.0f && (e_expect == 0 || ldexpf(sg, e_expect - 1) < 1.0f),
                          "sg_min %a, e %d is not the smallest", (double)sg, e_expect);
        char what[64];
        snprintf(what, sizeof what, "is alpha sg_min %g", (double)cases[i].sg_min);
        check_layer(what, IS, 64, W, 16, K, 0);
        free(buf);
    }
    free(W);
}
END_TEST

/* A layer whose heuristic alpha would overflow the INT32 bound: alpha is
 * lowered (logged), the stored S keep 127 x 8 x K x max S within INT32,
 * and inspect reports the lowered alpha; once with alpha going below 1. */
START_TEST(is_alpha_lowered)
{
    qt_rng r = qt_rng_make(401);
    qjit_context *ctx = qt_bare_context();
    log_capture cap;
    memset(&cap, 0, sizeof cap);
    ctx->log = capture_log;
    ctx->log_ud = &cap;
    int64_t K = 128;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(16 * K));
    /* sg_min = 0.001: heuristic 2^10; sg_max = 100: S = 102400 there, and
     * 1016 x 128 x S <= 2^31 - 1 needs S <= 16513: 100 x 2^7 = 12800 fits,
     * 2^8 does not. */
    is_layer(&r, K, 0.001f, 100.0f, W);
    int e = 0, heuristic = 0;
    ck_assert_int_eq(expect_is_exponent(W, 16, K, 64, 0, &e, &heuristic), QJIT_OK);
    ck_assert_int_eq(heuristic, 10);
    ck_assert_int_eq(e, 7);
    size_t bytes;
    uint8_t *buf = packed_buffer(IS, 64, 16, K, &bytes);
    const qjit_quantize_options o = quant_options(0, "blk.7.attn_q");
    ck_assert_int_eq(qjit_quantize_weights_ex(ctx, IS, 64, W, QJIT_DTYPE_F32, 16, K, &o, buf, bytes, NULL), QJIT_OK);
    qjit_weights_info info;
    ck_assert_int_eq(qjit_weights_inspect(ctx, buf, bytes, &info), QJIT_OK);
    ck_assert(info.alpha == 128.0);
    quant q = quant_alloc(IS, 64, 16, K);
    decode(buf, &q);
    int max_s = 0;
    for (int64_t i = 0; i < 16 * q.groups; i++)
        max_s = is_scale(&q, i / q.groups, i % q.groups) > max_s ? is_scale(&q, i / q.groups, i % q.groups) : max_s;
    ck_assert_int_eq(max_s, 12800);
    ck_assert(SUM_BOUND * (double)K * max_s <= INT32_BOUND);
    ck_assert_msg(cap.lines == 1 && strstr(cap.text, "blk.7.attn_q") && strstr(cap.text, "lowered") &&
                      strstr(cap.text, "2^10") && strstr(cap.text, "2^7"),
                  "log: '%s'", cap.text);
    quant_free(&q);
    check_layer("is lowered", IS, 64, W, 16, K, 0);

    /* FP16's largest weights at K = 256: sg = 65504 / 7, S <= 8256 needs
     * alpha = 2^-1 (S = 4679). Fed as FP16 bits too. */
    K = 256;
    W = realloc(W, sizeof(float) * (size_t)(16 * K));
    is_layer(&r, K, 1.0f, 65504.0f / 7.0f, W);
    for (int64_t i = 0; i < 16 * K; i++)
        W[i] = qjit__half_to_float(qjit__float_to_half(W[i]));
    ck_assert_int_eq(expect_is_exponent(W, 16, K, 64, 0, &e, NULL), QJIT_OK);
    ck_assert_int_eq(e, -1);
    uint16_t *H = qt_xmalloc(sizeof(uint16_t) * (size_t)(16 * K));
    for (int64_t i = 0; i < 16 * K; i++)
        H[i] = qjit__float_to_half(W[i]);
    free(buf);
    buf = pack_weights(IS, 64, H, QJIT_DTYPE_F16, 16, K, NULL, &bytes);
    ck_assert_int_eq(qjit_weights_inspect(NULL, buf, bytes, &info), QJIT_OK);
    ck_assert(info.alpha == 0.5);
    check_layer("is lowered below 1", IS, 64, W, 16, K, 0);
    free(H);
    free(buf);
    free(W);
}
END_TEST

static int all_pattern(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != PATTERN)
            return 0;
    return 1;
}

/* A given alpha that could overflow INT32 is refused, naming the layer and
 * the bound, with nothing written; so is an alpha that is not a power of
 * two or above 2^30; and a layer no alpha can bound. */
START_TEST(is_alpha_refused)
{
    qt_rng r = qt_rng_make(402);
    qjit_context *ctx = qt_bare_context();
    int64_t K = 128;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(16 * K));
    is_layer(&r, K, 0.001f, 100.0f, W);
    size_t bytes;
    uint8_t *out = packed_buffer(IS, 64, 16, K, &bytes);
    qjit_quantize_options o = quant_options(0, "blk.3.ffn_up");
    /* alpha = 2^10: S = 102400, bound 1016 x 128 x 102400 = 13316915200. */
    o.alpha = 1024;
    memset(out, PATTERN, bytes);
    size_t written = 4242;
    ck_assert_int_eq(qjit_quantize_weights_ex(ctx, IS, 64, W, QJIT_DTYPE_F32, 16, K, &o, out, bytes, &written),
                     QJIT_OVERFLOW);
    ck_assert(all_pattern(out, bytes));
    ck_assert_uint_eq(written, 4242);
    ck_assert_msg(strstr(ctx->last_error, "blk.3.ffn_up") && strstr(ctx->last_error, "13316915200") &&
                      strstr(ctx->last_error, "102400") && strstr(ctx->last_error, "2^7"),
                  "message: '%s'", ctx->last_error);
    /* Just fitting: 2^7 is accepted, 2^8 is not. */
    o.alpha = 128;
    ck_assert_int_eq(qjit_quantize_weights_ex(ctx, IS, 64, W, QJIT_DTYPE_F32, 16, K, &o, out, bytes, NULL), QJIT_OK);
    o.alpha = 256;
    memset(out, PATTERN, bytes);
    ck_assert_int_eq(qjit_quantize_weights_ex(ctx, IS, 64, W, QJIT_DTYPE_F32, 16, K, &o, out, bytes, NULL),
                     QJIT_OVERFLOW);
    ck_assert(all_pattern(out, bytes));
    /* No layer name: the message says "the layer". */
    o.layer_name = NULL;
    ck_assert_int_eq(qjit_quantize_weights_ex(ctx, IS, 64, W, QJIT_DTYPE_F32, 16, K, &o, out, bytes, NULL),
                     QJIT_OVERFLOW);
    ck_assert_msg(strstr(ctx->last_error, "the layer") != NULL, "'%s'", ctx->last_error);

    const uint32_t bad[] = {3, 6, 1000, 0x80000001u, 1u << 31, 0xFFFFFFFFu};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.alpha = bad[i];
        memset(out, PATTERN, bytes);
        ck_assert_msg(qjit_quantize_weights_ex(ctx, IS, 64, W, QJIT_DTYPE_F32, 16, K, &o, out, bytes, NULL) ==
                          QJIT_INVALID_ARGUMENT,
                      "alpha %u accepted", bad[i]);
        ck_assert(all_pattern(out, bytes));
    }
    /* Every power of two up to 2^30 on a layer small enough for all. */
    is_layer(&r, K, 1e-6f, 1e-5f, W);
    for (int e = 0; e <= 30; e++) {
        o.alpha = 1u << e;
        char what[32];
        snprintf(what, sizeof what, "is alpha 2^%d", e);
        check_layer(what, IS, 64, W, 16, K, o.alpha);
    }
    /* Weights of 1e15: even alpha = 2^-30 leaves S = 133 000, over the
     * bound: refused whatever the options. */
    for (int64_t i = 0; i < 16 * K; i++)
        W[i] = i % 3 ? 1e15f : -1e15f;
    o.alpha = 0;
    memset(out, PATTERN, bytes);
    ck_assert_int_eq(qjit_quantize_weights_ex(ctx, IS, 64, W, QJIT_DTYPE_F32, 16, K, &o, out, bytes, NULL),
                     QJIT_OVERFLOW);
    ck_assert(all_pattern(out, bytes));
    free(out);
    free(W);
}
END_TEST

/* All-zero groups have S = 0 and Q4 = 0 (stored 8); an all-zero layer has
 * alpha 1. Options meant for w4a8-is change nothing for the others. */
START_TEST(is_zero_groups_and_foreign_options)
{
    int64_t K = 192;
    float *W = calloc((size_t)(16 * K), sizeof(float));
    quant q;
    uint8_t *buf = pack_decode(IS, 64, W, 16, K, NULL, &q);
    ck_assert_int_eq(q.param, 0);
    for (int64_t n = 0; n < 16; n++) {
        ck_assert(q.scale[n] == 1.0f);
        for (int64_t gi = 0; gi < 3; gi++)
            ck_assert_int_eq(is_scale(&q, n, gi), 0);
        for (int64_t k = 0; k < K; k++)
            ck_assert_int_eq(q.q4[n * K + k], 8);
    }
    quant_free(&q);
    free(buf);
    check_layer("is zero layer", IS, 64, W, 16, K, 0);

    qt_rng r = qt_rng_make(403);
    make_weights(W_NORMAL, &r, 16, K, W);
    const qjit_quantize_options o = quant_options(3, "x");
    for (int i = 0; i < QT_NONE_PER_SCHEME; i++) {
        if (qt_one_per_scheme[i].scheme == IS)
            continue;
        size_t b1, b2;
        const qt_config c = qt_one_per_scheme[i];
        uint8_t *p1 = pack_weights(c.scheme, c.group, W, QJIT_DTYPE_F32, 16, K, NULL, &b1);
        uint8_t *p2 = pack_weights(c.scheme, c.group, W, QJIT_DTYPE_F32, 16, K, &o, &b2);
        ck_assert(b1 == b2 && memcmp(p1, p2, b1) == 0);
        free(p1);
        free(p2);
    }
    free(W);
}
END_TEST

/*------------------------------------------------------------------------
 * Packing
 *------------------------------------------------------------------------*/

/* Positions worked out by hand from layout.h:
 *   block = nb * (K/64) + kb;  r = n % 16, c = k % 64
 *   g = r % 8, high = r >= 8; kk = c / 32, h = (c / 16) % 2, t = (c / 4) % 4, j = c % 4
 *   4-bit: byte = block * 512 + (4 g + t) * 16 + (2 kk + h) * 4 + j, nibble high
 *   8-bit: byte = block * 1024 + kk * 512 + (4 g + t) * 16 + (2 h + high) * 4 + j */
static const struct { int n, k; size_t byte4; int high; size_t byte8; } hand_cases[] = {
    {0, 0, 0, 0, 0},              /* lane 0, word 0, byte 0 */
    {8, 0, 0, 1, 4},              /* row g + 8: high nibble; 8-bit word 1 */
    {3, 5, 209, 0, 209},          /* g=3, t=1, j=1: lane 13 -> 13*16 + 1 */
    {1, 16, 68, 0, 72},           /* g=1, h=1: 4-bit word 1 of lane 4, 8-bit word 2 */
    {13, 45, 377, 1, 885},        /* g=5 high, kk=1 h=0 t=3 j=1: lane 23; 8-bit 512 + 368 + 4 + 1 */
    {25, 114, 1614, 1, 3662},     /* block 3, g=1 high, kk=1 h=1 t=0 j=2: 1536 + 64 + 12 + 2;
                                     8-bit 3072 + 512 + 64 + 12 + 2 */
    {31, 127, 2047, 1, 4095},     /* the very last weight */
    {7, 95, 1015, 0, 1531},       /* block 1, g=7 low, kk=0 h=1 t=3 j=3: 512 + 496 + 4 + 3; 1024 + 496 + 8 + 3 */
    {20, 33, 1289, 0, 2817},      /* block 2, g=4 low, kk=1 h=0 t=0 j=1: 1024 + 256 + 8 + 1; 2048 + 512 + 256 + 1 */
};

START_TEST(layout_hand_checked)
{
    enum { N = 32, K = 128 };
    static uint8_t q4[N * K], qw[N * K / 2], back4[N * K];
    static int8_t q8[N * K], back8[N * K];
    static uint8_t w8[N * K];
    for (size_t c = 0; c < sizeof hand_cases / sizeof hand_cases[0]; c++) {
        int n = hand_cases[c].n, k = hand_cases[c].k;
        memset(q4, 0, sizeof q4);
        memset(q8, 0, sizeof q8);
        q4[n * K + k] = 0xB;
        q8[n * K + k] = -77;
        for (int nb = 0; nb < N / 16; nb++) {
            qjit__pack4_slab(q4 + nb * 16 * K, K, qw + nb * (K / 64) * 512);
            qjit__pack8_slab(q8 + nb * 16 * K, K, w8 + nb * (K / 64) * 1024);
        }
        for (size_t i = 0; i < sizeof qw; i++) {
            uint8_t want = i == hand_cases[c].byte4 ? (hand_cases[c].high ? 0xB0 : 0x0B) : 0;
            ck_assert_msg(qw[i] == want, "Q4[%d,%d]: byte %zu is 0x%02x, want 0x%02x", n, k, i, qw[i], want);
        }
        for (size_t i = 0; i < sizeof w8; i++) {
            uint8_t want = i == hand_cases[c].byte8 ? (uint8_t)-77 : 0;
            ck_assert_msg(w8[i] == want, "W8[%d,%d]: byte %zu is 0x%02x, want 0x%02x", n, k, i, w8[i], want);
        }
        /* The test's own addresses agree with the hand. */
        int high;
        ck_assert_uint_eq(addr4(n, k, K, &high), hand_cases[c].byte4);
        ck_assert_int_eq(high, hand_cases[c].high);
        ck_assert_uint_eq(addr8(n, k, K), hand_cases[c].byte8);
        /* And the library's unpackers put the value back, nowhere else. */
        qjit__unpack4_rows(qw, N, K, back4);
        qjit__unpack8_rows(w8, N, K, back8);
        ck_assert(memcmp(back4, q4, sizeof q4) == 0);
        ck_assert(memcmp(back8, q8, sizeof q8) == 0);
    }

    /* Group entries: (nb, gi) at (nb * groups + gi) * 32; row r at byte
     * 4 (r % 8) + 2 (r / 8), its two parameters there and one after. */
    uint8_t p0[N * 2], p1[N * 2], gp[128];
    for (int i = 0; i < N * 2; i++) {
        p0[i] = (uint8_t)(100 + i);      /* row i / 2, group i % 2 */
        p1[i] = (uint8_t)(200 - i);
    }
    memset(gp, 0, sizeof gp);
    qjit__gparams_pack_slab(p0, p1, 2, gp);
    qjit__gparams_pack_slab(p0 + 32, p1 + 32, 2, gp + 64);
    /* row 10, group 1: nb 0, entry 1 at 32, g = 2, high half: bytes 32 + 10, 32 + 11 */
    ck_assert_int_eq(gp[42], 100 + 21);
    ck_assert_int_eq(gp[43], 200 - 21);
    /* row 3, group 0: entry 0, g = 3 low: bytes 12, 13 */
    ck_assert_int_eq(gp[12], 100 + 6);
    ck_assert_int_eq(gp[13], 200 - 6);
    /* row 31, group 1: nb 1, entry 3 at 96, g = 7 high: bytes 96 + 30, 96 + 31 */
    ck_assert_int_eq(gp[126], 100 + 63);
    ck_assert_int_eq(gp[127], 200 - 63);
    /* row 16, group 0: nb 1, entry 2 at 64, g = 0 low: bytes 64, 65 */
    ck_assert_int_eq(gp[64], 100 + 32);
    ck_assert_int_eq(gp[65], 200 - 32);
    for (int n = 0; n < N; n++)
        for (int gi = 0; gi < 2; gi++) {
            uint8_t a, b;
            qjit__gparams_row(gp + (n / 16 * 2 + gi) * 32, n % 16, &a, &b);
            ck_assert(a == p0[n * 2 + gi] && b == p1[n * 2 + gi]);
            ck_assert_uint_eq(gentry(n, gi, 2) + 0, (size_t)((n / 16 * 2 + gi) * 32 + 4 * (n % 8) + 2 * (n % 16 / 8)));
            ck_assert(gp[gentry(n, gi, 2)] == a && gp[gentry(n, gi, 2) + 1] == b);
        }
}
END_TEST

START_TEST(pack_unpack_round_trip)
{
    qt_rng r = qt_rng_make(5);
    for (int trial = 0; trial < 40; trial++) {
        int64_t N = 16 * (1 + (int64_t)(qt_next(&r) % 10)), K = 64 * (1 + (int64_t)(qt_next(&r) % 16));
        int64_t groups = 1 + (int64_t)(qt_next(&r) % 8);
        size_t elems = (size_t)(N * K);
        uint8_t *q4 = qt_xmalloc(elems), *qw = qt_xmalloc(elems / 2), *back4 = qt_xmalloc(elems);
        int8_t *q8 = qt_xmalloc(elems), *back8 = qt_xmalloc(elems);
        uint8_t *w8 = qt_xmalloc(elems);
        for (size_t i = 0; i < elems; i++) {
            q4[i] = (uint8_t)(qt_next(&r) & 15);
            q8[i] = (int8_t)qt_next(&r);
        }
        memset(qw, PATTERN, elems / 2);
        memset(w8, PATTERN, elems);
        for (int64_t nb = 0; nb < N / 16; nb++) {
            qjit__pack4_slab(q4 + nb * 16 * K, K, qw + nb * (K / 64) * 512);
            qjit__pack8_slab(q8 + nb * 16 * K, K, w8 + nb * (K / 64) * 1024);
        }
        /* Every byte written (no pattern left where values are random
         * enough) and every element where layout.h puts it. */
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < K; k++) {
                int high;
                uint8_t byte = qw[addr4(n, k, K, &high)];
                REQUIRE((high ? byte >> 4 : byte & 15) == q4[n * K + k], "pack4 [%lld, %lld]", (long long)n,
                        (long long)k);
                REQUIRE((int8_t)w8[addr8(n, k, K)] == q8[n * K + k], "pack8 [%lld, %lld]", (long long)n, (long long)k);
            }
        qjit__unpack4_rows(qw, N, K, back4);
        qjit__unpack8_rows(w8, N, K, back8);
        ck_assert_msg(memcmp(q4, back4, elems) == 0, "4-bit round trip N=%lld K=%lld", (long long)N, (long long)K);
        ck_assert_msg(memcmp(q8, back8, elems) == 0, "8-bit round trip N=%lld K=%lld", (long long)N, (long long)K);
        /* A row range from the middle. */
        if (N > 16) {
            qjit__unpack4_rows(qw + (K / 64) * 512, 16, K, back4);
            ck_assert(memcmp(back4, q4 + 16 * K, (size_t)(16 * K)) == 0);
        }
        uint8_t *p0 = qt_xmalloc((size_t)(16 * groups)), *p1 = qt_xmalloc((size_t)(16 * groups));
        uint8_t *gp = qt_xmalloc((size_t)(32 * groups));
        for (int64_t i = 0; i < 16 * groups; i++) {
            p0[i] = (uint8_t)qt_next(&r);
            p1[i] = (uint8_t)qt_next(&r);
        }
        qjit__gparams_pack_slab(p0, p1, groups, gp);
        for (int64_t n = 0; n < 16; n++)
            for (int64_t gi = 0; gi < groups; gi++) {
                size_t e = gentry(n, gi, groups);
                REQUIRE(gp[e] == p0[n * groups + gi] && gp[e + 1] == p1[n * groups + gi], "gparams [%lld, %lld]",
                        (long long)n, (long long)gi);
            }
        free(q4); free(qw); free(back4); free(q8); free(back8); free(w8); free(p0); free(p1); free(gp);
    }
}
END_TEST

/*------------------------------------------------------------------------
 * Input: FP16, bad values, bad sizes, options
 *------------------------------------------------------------------------*/

START_TEST(fp16_input_equals_fp32)
{
    const qt_config c = qt_configs[_i];
    qt_rng r = qt_rng_make(600 + (uint64_t)_i);
    for (int kind = 0; kind < W_KIND_COUNT; kind++) {
        int64_t N = 32, K = 512;
        float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
        uint16_t *H = qt_xmalloc(sizeof(uint16_t) * (size_t)(N * K));
        make_weights((weight_kind)kind, &r, N, K, W);
        for (int64_t i = 0; i < N * K; i++)
            H[i] = qjit__float_to_half(W[i]);
        size_t b32, b16;
        uint8_t *p32 = pack_weights(c.scheme, c.group, W, QJIT_DTYPE_F32, N, K, NULL, &b32);
        uint8_t *p16 = pack_weights(c.scheme, c.group, H, QJIT_DTYPE_F16, N, K, NULL, &b16);
        ck_assert_uint_eq(b16, b32);
        ck_assert_msg(memcmp(p16, p32, b32) == 0, "%s g=%d: FP16 and FP32 input differ (%s)", sname(c.scheme),
                      c.group, kind_names[kind]);
        free(W); free(H); free(p32); free(p16);
    }
}
END_TEST

START_TEST(nonfinite_rejected)
{
    const qt_config c = qt_one_per_scheme[_i];
    qjit_context *ctx = qt_bare_context();
    qt_rng r = qt_rng_make(700 + (uint64_t)_i);
    int64_t N = 32, K = 128;
    size_t bytes;
    ck_assert_int_eq(qjit_packed_size(c.scheme, c.group, N, K, &bytes), QJIT_OK);
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    uint16_t *H = qt_xmalloc(sizeof(uint16_t) * (size_t)(N * K));
    uint8_t *out = qt_xmalloc(bytes);
    const float bad32[] = {NAN, -NAN, INFINITY, -INFINITY};
    const uint16_t bad16[] = {0x7E00, 0x7C01, 0xFFFF, 0x7C00, 0xFC00};
    for (int trial = 0; trial < 9; trial++) {
        make_weights(W_NORMAL, &r, N, K, W);
        for (int64_t i = 0; i < N * K; i++)
            H[i] = qjit__float_to_half(W[i]);
        int64_t n = (int64_t)(qt_next(&r) % (uint64_t)N), k = (int64_t)(qt_next(&r) % (uint64_t)K);
        qjit_dtype dtype = trial < 4 ? QJIT_DTYPE_F32 : QJIT_DTYPE_F16;
        if (trial < 4)
            W[n * K + k] = bad32[trial];
        else
            H[n * K + k] = bad16[trial - 4];
        memset(out, PATTERN, bytes);
        size_t written = 12345;
        qjit_status st = qjit_quantize_weights(ctx, c.scheme, c.group, dtype == QJIT_DTYPE_F32 ? (void *)W : (void *)H,
                                               dtype, N, K, out, bytes, &written);
        ck_assert_int_eq(st, QJIT_INVALID_ARGUMENT);
        ck_assert_msg(all_pattern(out, bytes), "output written despite bad input (trial %d)", trial);
        ck_assert_uint_eq(written, 12345);
        char where[64];
        snprintf(where, sizeof where, "[%lld, %lld]", (long long)n, (long long)k);
        ck_assert_msg(strstr(ctx->last_error, where) != NULL, "message '%s' does not name %s", ctx->last_error,
                      where);
    }
    free(W); free(H); free(out);
}
END_TEST

/* Refuses and writes nothing: one call of each entry point. */
static void expect_refused(const char *what, qjit_status want, qjit_scheme s, int group, const void *W,
                           qjit_dtype dtype, int64_t N, int64_t K, const qjit_quantize_options *o, int out_null,
                           size_t capacity)
{
    static uint8_t out[8192];
    memset(out, PATTERN, sizeof out);
    size_t written = 777;
    qjit_status st = qjit_quantize_weights_ex(NULL, s, group, W, dtype, N, K, o, out_null ? NULL : out,
                                              capacity ? capacity : sizeof out, &written);
    ck_assert_msg(st == want, "%s: %s, want %s", what, qjit_status_name(st), qjit_status_name(want));
    ck_assert_msg(all_pattern(out, sizeof out), "%s: written", what);
    ck_assert_uint_eq(written, 777);
}

START_TEST(bad_sizes_rejected)
{
    static const struct { int64_t N, K; int group; } bad[] = {
        {0, 64, 0}, {-16, 64, 0}, {16, 0, 0}, {16, -64, 0}, {15, 64, 0}, {24, 64, 0}, {16, 32, 0},
        {16, 96, 0}, {16, 64, -64}, {16, 64, 32}, {16, 192, 96}, {16, 192, 128}, {16, 128, 256},
        {16, 128, 1}, {16, 64, 16},
    };
    static float W[16 * 256];
    W[0] = 1.0f;
    for (int si = 0; si < QT_NONE_PER_SCHEME; si++) {
        qjit_scheme s = qt_one_per_scheme[si].scheme;
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            /* w4a8-is refuses g = 0 anyway: its shape cases take g = 64,
             * which leaves each of them bad. */
            int group = bad[i].group;
            if (s == IS && group == 0)
                group = 64;
            size_t bytes = 777;
            ck_assert_msg(qjit_packed_size(s, group, bad[i].N, bad[i].K, &bytes) == QJIT_INVALID_ARGUMENT,
                          "%s packed_size accepted N=%lld K=%lld group=%d", sname(s), (long long)bad[i].N,
                          (long long)bad[i].K, group);
            ck_assert_uint_eq(bytes, 777);
            char what[96];
            snprintf(what, sizeof what, "%s N=%lld K=%lld g=%d", sname(s), (long long)bad[i].N, (long long)bad[i].K,
                     group);
            expect_refused(what, QJIT_INVALID_ARGUMENT, s, group, W, QJIT_DTYPE_F32, bad[i].N, bad[i].K, NULL, 0, 0);
        }
    }
    /* Groups a scheme does not take. */
    static const struct { qjit_scheme s; int group; } wrong[] = {
        {W8A8, 64}, {W8A8, 128}, {W8A8, 32}, {IS, 0}, {IS, 32}, {IS, -128}, {LQQ, 32}, {QOQ, 32}, {LQQ, 96},
    };
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        size_t bytes = 777;
        ck_assert_msg(qjit_packed_size(wrong[i].s, wrong[i].group, 16, 256, &bytes) == QJIT_INVALID_ARGUMENT,
                      "%s g=%d accepted", sname(wrong[i].s), wrong[i].group);
        ck_assert_uint_eq(bytes, 777);
        expect_refused("wrong group", QJIT_INVALID_ARGUMENT, wrong[i].s, wrong[i].group, W, QJIT_DTYPE_F32, 16, 256,
                       NULL, 0, 0);
    }
    /* Unknown schemes. */
    const int unknown[] = {0, 6, -1, 99};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        size_t bytes = 777;
        ck_assert_int_eq(qjit_packed_size((qjit_scheme)unknown[i], 0, 16, 64, &bytes), QJIT_INVALID_ARGUMENT);
        ck_assert_uint_eq(bytes, 777);
        expect_refused("unknown scheme", QJIT_INVALID_ARGUMENT, (qjit_scheme)unknown[i], 0, W, QJIT_DTYPE_F32, 16, 64,
                       NULL, 0, 0);
    }
    /* Sizes whose product cannot exist, or beyond 2^31. */
    size_t bytes;
    ck_assert_int_ne(qjit_packed_size(LQQ, 0, (int64_t)1 << 40, (int64_t)1 << 40, &bytes), QJIT_OK);
    ck_assert_int_ne(qjit_packed_size(LQQ, 64, INT64_MAX - 15, 64, &bytes), QJIT_OK);
    ck_assert_int_eq(qjit_packed_size(W8A8, 0, (int64_t)1 << 32, 64, &bytes), QJIT_OVERFLOW);
    ck_assert_int_eq(qjit_packed_size(LQQ, 0, 16, 64, NULL), QJIT_INVALID_ARGUMENT);
    /* NULL pointers, an unknown dtype, bad options. */
    expect_refused("W NULL", QJIT_INVALID_ARGUMENT, LQQ, 0, NULL, QJIT_DTYPE_F32, 16, 64, NULL, 0, 0);
    expect_refused("out NULL", QJIT_INVALID_ARGUMENT, LQQ, 0, W, QJIT_DTYPE_F32, 16, 64, NULL, 1, 0);
    expect_refused("dtype 4", QJIT_INVALID_ARGUMENT, LQQ, 0, W, (qjit_dtype)4, 16, 64, NULL, 0, 0);
    expect_refused("dtype 0", QJIT_INVALID_ARGUMENT, W8A8, 0, W, (qjit_dtype)0, 16, 64, NULL, 0, 0);
    qjit_quantize_options o;
    qjit_quantize_options_init(&o);
    ck_assert_uint_eq(o.struct_size, sizeof o);
    ck_assert_uint_eq(o.alpha, 0);
    ck_assert_ptr_null(o.layer_name);
    o.struct_size = 0;
    expect_refused("struct_size 0", QJIT_INVALID_ARGUMENT, IS, 64, W, QJIT_DTYPE_F32, 16, 64, &o, 0, 0);
    o.struct_size = sizeof o + 1;
    expect_refused("struct_size too large", QJIT_INVALID_ARGUMENT, LQQ, 0, W, QJIT_DTYPE_F32, 16, 64, &o, 0, 0);
    o.struct_size = (size_t)-1;
    expect_refused("struct_size huge", QJIT_INVALID_ARGUMENT, W8A8, 0, W, QJIT_DTYPE_F32, 16, 64, &o, 0, 0);
    /* An older, shorter options struct: the fields past it take defaults,
     * so a bad alpha beyond struct_size is never read. */
    qjit_quantize_options_init(&o);
    o.struct_size = offsetof(qjit_quantize_options, alpha);
    o.alpha = 3;
    uint8_t *p = pack_weights(IS, 64, W, QJIT_DTYPE_F32, 16, 64, &o, &bytes);
    free(p);
    qjit_quantize_options_init(NULL);            /* documented as harmless */

    /* Hand-computed sizes: header 64 + 32 n + 16 rounded to 256; sections
     * each at the next multiple of 256. */
    static const struct { qjit_scheme s; int group; int64_t N, K; size_t bytes; } sizes[] = {
        {LQQ, 0, 16, 64, 256 + 768 + 64},            /* qweight 512 @0, gparams 32 @512, scale 64 @768 */
        {LQQ, 64, 32, 256, 256 + 4352 + 128},        /* 4096 @0, 256 @4096, 128 @4352 */
        {QOQ, 0, 16, 64, 256 + 768 + 64},            /* 512 @0, 0 @512, scale 64 @512, zero 64 @768 */
        {QOQ, 64, 16, 128, 256 + 1536},              /* 1024 @0, 64 @1024, 64 @1280, zero 0 @1536 */
        {IS, 64, 16, 128, 256 + 1280 + 64},          /* 1024 @0, 64 @1024, 64 @1280 */
        {W8A8, 0, 16, 64, 256 + 1024 + 64},          /* 1024 @0, 64 @1024 */
        {IS, 256, 48, 512, 256 + 12288 + 256 + 192}, /* 12288 @0, 192 @12288, 192 @12544 */
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ck_assert_int_eq(qjit_packed_size(sizes[i].s, sizes[i].group, sizes[i].N, sizes[i].K, &bytes), QJIT_OK);
        ck_assert_msg(bytes == sizes[i].bytes, "%s g=%d %lldx%lld: %zu bytes, want %zu", sname(sizes[i].s),
                      sizes[i].group, (long long)sizes[i].N, (long long)sizes[i].K, bytes, sizes[i].bytes);
        sections sc = expect_sections(sizes[i].s, sizes[i].group, sizes[i].N, sizes[i].K);
        ck_assert_uint_eq(sc.header + sc.payload, bytes);
    }
}
END_TEST

START_TEST(capacity_too_small)
{
    const qt_config c = qt_one_per_scheme[_i];
    qt_rng r = qt_rng_make(800 + (uint64_t)_i);
    int64_t N = 32, K = 192;
    float *W = normal_weights(&r, N, K);
    size_t need;
    ck_assert_int_eq(qjit_packed_size(c.scheme, c.group, N, K, &need), QJIT_OK);
    uint8_t *out = qt_xmalloc(need + 100);
    const size_t caps[] = {0, 1, 63, 64, 255, 256, need / 2, need - 4 * (size_t)N, need - 1};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        memset(out, PATTERN, need + 100);
        size_t written = 99;
        qjit_status st =
            qjit_quantize_weights(NULL, c.scheme, c.group, W, QJIT_DTYPE_F32, N, K, out, caps[i], &written);
        ck_assert_int_eq(st, QJIT_OVERFLOW);
        ck_assert_msg(all_pattern(out, need + 100), "written with capacity %zu", caps[i]);
        ck_assert_uint_eq(written, 99);
    }
    /* More than enough: exactly `need` bytes written, the rest untouched;
     * written may be NULL. */
    memset(out, PATTERN, need + 100);
    size_t written = 0;
    ck_assert_int_eq(qjit_quantize_weights(NULL, c.scheme, c.group, W, QJIT_DTYPE_F32, N, K, out, need + 100, &written),
                     QJIT_OK);
    ck_assert_uint_eq(written, need);
    ck_assert(all_pattern(out + need, 100));
    ck_assert_int_eq(qjit_weights_inspect(NULL, out, need, NULL), QJIT_OK);
    ck_assert_int_eq(qjit_quantize_weights(NULL, c.scheme, c.group, W, QJIT_DTYPE_F32, N, K, out, need, NULL), QJIT_OK);
    free(W); free(out);
}
END_TEST

/* Every allocation of the quantizer failing in turn: QJIT_OUT_OF_MEMORY
 * with nothing written and nothing leaked, or the same buffer as without
 * faults. */
START_TEST(allocation_failures)
{
    const qt_config c = qt_one_per_scheme[_i];
    qt_rng r = qt_rng_make(900 + (uint64_t)_i);
    qjit_context *ctx = qt_bare_context();
    qt_alloc_counts alloc = {-1, 0, 0, 0};
    qt_use_counting_alloc(ctx, &alloc);
    int64_t N = 32, K = 256;
    float *W = normal_weights(&r, N, K);
    size_t bytes;
    uint8_t *good = pack_weights(c.scheme, c.group, W, QJIT_DTYPE_F32, N, K, NULL, &bytes);
    uint8_t *out = qt_xmalloc(bytes);
    int saw_oom = 0, saw_ok = 0;
    for (long budget = 0; budget < 8; budget++) {
        alloc.fail_after = budget;
        memset(out, PATTERN, bytes);
        size_t written = 5;
        qjit_status st = qjit_quantize_weights(ctx, c.scheme, c.group, W, QJIT_DTYPE_F32, N, K, out, bytes, &written);
        ck_assert_msg(st == QJIT_OK || st == QJIT_OUT_OF_MEMORY, "budget %ld: %s", budget, qjit_status_name(st));
        if (st == QJIT_OK) {
            ck_assert(memcmp(out, good, bytes) == 0 && written == bytes);
            saw_ok = 1;
        } else {
            ck_assert_msg(all_pattern(out, bytes) && written == 5, "budget %ld: written after a failure", budget);
            ck_assert(strstr(ctx->last_error, "memory") != NULL);
            saw_oom = 1;
        }
        ck_assert_msg(alloc.live == 0, "budget %ld: %ld blocks leaked", budget, alloc.live);
        ck_assert_int_eq(alloc.size_mismatches, 0);
    }
    ck_assert(saw_oom && saw_ok);
    free(W); free(good); free(out);
}
END_TEST

START_TEST(scheme_names)
{
    static const struct { qjit_scheme s; const char *name; } names[] = {
        {LQQ, "w4a8-lqq"}, {QOQ, "w4a8-qoq"}, {IS, "w4a8-is"}, {W8A8, "w8a8"}, {W4A4, "w4a4"},
        {QJIT_SCHEME_W4AX, "w4ax"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        ck_assert_str_eq(qjit_scheme_name(names[i].s), names[i].name);
        qjit_scheme s = (qjit_scheme)0;
        ck_assert_int_eq(qjit_scheme_from_name(names[i].name, &s), QJIT_OK);
        ck_assert_int_eq(s, names[i].s);
    }
    static const struct { const char *name; qjit_scheme s; } spellings[] = {
        {"LQQ", LQQ}, {"W4A8_LQQ", LQQ}, {"qoq", QOQ}, {"QServe", QOQ}, {"is", IS}, {"Integer-Scale", IS},
        {"INT8", W8A8}, {"W8A8", W8A8}, {"w4a8_is", IS}, {"INT4", W4A4}, {"W4A4", W4A4},
    };
    for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++) {
        qjit_scheme s = (qjit_scheme)0;
        ck_assert_msg(qjit_scheme_from_name(spellings[i].name, &s) == QJIT_OK && s == spellings[i].s, "'%s'",
                      spellings[i].name);
    }
    const char *bad[] = {"", "w4a2", "lqq ", "w4a8-lqqq", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        qjit_scheme s = (qjit_scheme)77;
        ck_assert_int_eq(qjit_scheme_from_name(bad[i], &s), QJIT_INVALID_ARGUMENT);
        ck_assert_int_eq(s, 77);
    }
    qjit_scheme s;
    ck_assert_int_eq(qjit_scheme_from_name(NULL, &s), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_scheme_from_name("lqq", NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_null(qjit_scheme_name((qjit_scheme)0));
    ck_assert_ptr_null(qjit_scheme_name((qjit_scheme)8));
    /* The registry lists each scheme once, under its own value. */
    ck_assert_int_eq(qjit__nschemes, 7);
    for (int i = 0; i < qjit__nschemes; i++)
        ck_assert(qjit__scheme_get(qjit__schemes[i]->id) == qjit__schemes[i]);
}
END_TEST

/*------------------------------------------------------------------------
 * The buffer: corruption, other schemes, version 1, the kernels' sections
 *------------------------------------------------------------------------*/

/* Rewrites the header hash so that a deliberately bad field is the only
 * thing wrong with the header (the hash covers bytes 0 .. 72 + 32 n - 1). */
static void reseal(uint8_t *buf)
{
    size_t tail = 64 + 32 * (size_t)qt_le32(buf + 40);
    qt_put_le(buf + tail + 8, qjit__hash64(buf, tail + 8, 0), 8);
}

/* A packed N x K layer of config c from seed: its weights *W, the buffer
 * (*bytes) and a scratch copy of it with `spare` more bytes in *buf. */
static uint8_t *packed_layer(qt_config c, uint64_t seed, int64_t N, int64_t K, size_t spare, float **W, size_t *bytes,
                             uint8_t **buf)
{
    qt_rng r = qt_rng_make(seed);
    *W = normal_weights(&r, N, K);
    uint8_t *good = pack_weights(c.scheme, c.group, *W, QJIT_DTYPE_F32, N, K, NULL, bytes);
    *buf = qt_xmalloc(*bytes + spare);
    return good;
}

START_TEST(corruption_detected)
{
    const qt_config c = qt_configs[_i];
    qjit_context *ctx = qt_bare_context();
    int64_t N = 48, K = 512;
    float *W;
    size_t bytes;
    uint8_t *buf, *good = packed_layer(c, 1000 + (uint64_t)_i, N, K, 16, &W, &bytes, &buf);
    qt_rng r = qt_rng_make(5000 + (uint64_t)_i);   /* the positions and bits to flip */
    sections sc = expect_sections(c.scheme, c.group, N, K);

    /* One flipped bit, anywhere: every header byte (the padding too), the
     * edges of each section, and random positions. */
    size_t positions[256 + 32 + 300];
    size_t count = 0;
    for (size_t i = 0; i < sc.header; i++)
        positions[count++] = i;
    for (int i = 0; i < sc.n; i++)
        if (sc.bytes[i]) {
            positions[count++] = sc.header + sc.offset[i];
            positions[count++] = sc.header + sc.offset[i] + sc.bytes[i] - 1;
        }
    positions[count++] = bytes - 1;
    while (count < sizeof positions / sizeof positions[0])
        positions[count++] = sc.header + (size_t)(qt_next(&r) % (bytes - sc.header));
    for (size_t i = 0; i < count; i++) {
        memcpy(buf, good, bytes);
        uint8_t flip = (uint8_t)(1u << (qt_next(&r) % 8));
        buf[positions[i]] ^= flip;
        ctx->last_error[0] = '\0';
        qjit_status st = qjit_weights_inspect(ctx, buf, bytes, NULL);
        ck_assert_msg(st == QJIT_CORRUPT_WEIGHTS || st == QJIT_INVALID_ARGUMENT, "%s g=%d: flip 0x%02x at byte %zu: %s",
                      sname(c.scheme), c.group, flip, positions[i], qjit_status_name(st));
        ck_assert(ctx->last_error[0] != '\0');
        if (positions[i] >= sc.header) {
            /* A payload flip passes when the payload hash is not checked,
             * and the reference GEMM refuses it too. */
            qjit__weights_view v;
            ck_assert_int_eq(qjit__weights_view_init(ctx, buf, bytes, 0, &v), QJIT_OK);
            ck_assert_int_eq(qjit__weights_view_init(ctx, buf, bytes, 1, &v), QJIT_CORRUPT_WEIGHTS);
        }
    }
    int8_t xq[512] = {1};
    float sx = 1.0f;
    int32_t acc[48];
    memcpy(buf, good, bytes);
    buf[bytes / 2] ^= 4;
    ck_assert_int_eq(qjit_reference_gemm(ctx, buf, bytes, 1, xq, &sx, acc, NULL), QJIT_CORRUPT_WEIGHTS);

    /* Truncated, extended. */
    const size_t lengths[] = {bytes - 1, bytes - 4 * (size_t)N, bytes - 256, sc.header, sc.header - 1, 65, 64};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
        ck_assert_msg(qjit_weights_inspect(ctx, good, lengths[i], NULL) == QJIT_CORRUPT_WEIGHTS, "length %zu",
                      lengths[i]);
    memcpy(buf, good, bytes);
    memset(buf + bytes, 0, 16);
    ck_assert_int_eq(qjit_weights_inspect(ctx, buf, bytes + 1, NULL), QJIT_CORRUPT_WEIGHTS);
    ck_assert(strstr(ctx->last_error, "trailing") != NULL);
    ck_assert_int_eq(qjit_weights_inspect(ctx, buf, bytes + 16, NULL), QJIT_CORRUPT_WEIGHTS);
    /* Shorter than any header, or no buffer: an argument error (packed.h). */
    ck_assert_int_eq(qjit_weights_inspect(ctx, good, 63, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_weights_inspect(ctx, good, 0, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_weights_inspect(ctx, NULL, bytes, NULL), QJIT_INVALID_ARGUMENT);

    /* Headers with a valid checksum but a bad field. */
    struct { size_t offset; uint64_t value; int width; const char *what; } fields[] = {
        {8, 3, 4, "version 3"},     {8, 0, 4, "version 0"},     {12, 0, 4, "scheme 0"},
        {12, 5, 4, "scheme 5"},     {16, 40, 8, "N % 16"},      {16, 32, 8, "N smaller"},
        {16, (uint64_t)-48, 8, "negative N"},                   {24, 576, 8, "K larger"},
        {24, 480, 8, "K % 64"},     {32, 32, 4, "group % 64"},  {32, (uint32_t)-64, 4, "negative group"},
        {32, (uint64_t)(c.group ? 0 : 64), 4, "other group"},   {36, 1, 4, "flags"},
        {40, (uint64_t)sc.n + 1, 4, "nsections + 1"},           {40, 0, 4, "nsections 0"},
        {40, 9, 4, "nsections 9"},  {44, 512, 4, "header_bytes"}, {52, 1, 4, "reserved"},
        {56, sc.payload + 1, 8, "payload_bytes + 1"},           {56, 0, 8, "payload_bytes 0"},
        {64 + 16, 256, 8, "section 0 offset"},                  {64 + 24, sc.bytes[0] - 1, 8, "section 0 bytes"},
        {64 + 32 + 24, sc.bytes[1] + 32, 8, "section 1 bytes"},
        {64 + 32 * (size_t)(sc.n - 1) + 16, sc.offset[sc.n - 1] + 256, 8, "last section offset"},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        memcpy(buf, good, bytes);
        qt_put_le(buf + fields[i].offset, fields[i].value, fields[i].width);
        if (memcmp(buf, good, bytes) == 0)
            continue;                           /* the "bad" value is this buffer's own */
        reseal(buf);
        qjit_status st = qjit_weights_inspect(ctx, buf, bytes, NULL);
        ck_assert_msg(st == QJIT_CORRUPT_WEIGHTS, "%s g=%d: bad %s accepted (%s)", sname(c.scheme), c.group,
                      fields[i].what, qjit_status_name(st));
    }
    /* A renamed section, even to another section's name. */
    memcpy(buf, good, bytes);
    memcpy(buf + 64, "scale\0\0", 7);
    reseal(buf);
    ck_assert_int_eq(qjit_weights_inspect(ctx, buf, bytes, NULL), QJIT_CORRUPT_WEIGHTS);
    memcpy(buf, good, bytes);
    memset(buf + 64, 'q', 16);                  /* no NUL at all */
    reseal(buf);
    ck_assert_int_eq(qjit_weights_inspect(ctx, buf, bytes, NULL), QJIT_CORRUPT_WEIGHTS);
    /* Bad magic, even with a resealed header. */
    memcpy(buf, good, bytes);
    buf[7] = '2';
    reseal(buf);
    ck_assert_int_eq(qjit_weights_inspect(ctx, buf, bytes, NULL), QJIT_CORRUPT_WEIGHTS);
    ck_assert(strstr(ctx->last_error, "magic") != NULL);

    ck_assert_int_eq(qjit_weights_inspect(ctx, good, bytes, NULL), QJIT_OK);
    free(W); free(good); free(buf);
}
END_TEST

/* A buffer rewritten with valid checksums but meaningless epilogue values
 * (a NaN, infinite, negative or zero channel scale; a zero point outside
 * [0, 15]) is refused when it is read, not run into NaN outputs: they were
 * accepted before. */
START_TEST(meaningless_values_refused)
{
    const qt_config c = qt_configs[_i];
    qjit_context *ctx = qt_bare_context();
    float *W;
    size_t bytes;
    uint8_t *buf, *good = packed_layer(c, 1200 + (uint64_t)_i, 32, 256, 0, &W, &bytes, &buf);
    uint32_t n = qt_le32(good + 40), hbytes = qt_le32(good + 44);
    size_t tail = 64 + 32 * (size_t)n;
    /* Each section: name, offset (from the payload), bytes. */
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = good + 64 + 32 * (size_t)i;
        int is_scale = !strcmp((const char *)e, "scale"), is_zero = !strcmp((const char *)e, "zero");
        size_t off = hbytes + (size_t)qt_le64(e + 16), len = (size_t)qt_le64(e + 24);
        if (!(is_scale || (is_zero && len)))
            continue;
        const uint32_t nan = 0x7FC00000u, inf = 0x7F800000u, neg = 0xBF800000u, zero = 0u;
        const uint32_t bad_scale[] = {nan, inf, neg, zero}, bad_zero[] = {16u, 0xFFFFFFFFu};
        const uint32_t *vals = is_scale ? bad_scale : bad_zero;
        size_t nvals = is_scale ? 4 : 2;
        for (size_t v = 0; v < nvals; v++) {
            memcpy(buf, good, bytes);
            qt_put_le(buf + off + 4 * 5, vals[v], 4);        /* channel 5 */
            qt_put_le(buf + tail, qjit__hash64(buf + hbytes, bytes - hbytes, 0), 8);
            reseal(buf);
            qjit_status st = qjit_weights_inspect(ctx, buf, bytes, NULL);
            ck_assert_msg(st == QJIT_CORRUPT_WEIGHTS && strstr(ctx->last_error, "channel 5"),
                          "%s g=%d: %s value 0x%08x accepted (%s: %s)", sname(c.scheme), c.group, is_scale ? "scale" :
                          "zero", vals[v], qjit_status_name(st), ctx->last_error);
        }
    }
    ck_assert_int_eq(qjit_weights_inspect(ctx, good, bytes, NULL), QJIT_OK);
    free(W); free(good); free(buf);
}
END_TEST

/* Fields packed.h pins that no checksum protects once a header is
 * resealed: the layer parameter must be 0 for schemes without one, and a
 * section name is NUL-padded (no bytes after its NUL). A buffer that
 * breaks them is not one qjit wrote. */
START_TEST(resealed_reserved_fields_refused)
{
    const qt_config c = qt_one_per_scheme[_i];
    qt_rng r = qt_rng_make(1100 + (uint64_t)_i);
    int64_t N = 16, K = 128;
    float *W = normal_weights(&r, N, K);
    size_t bytes;
    uint8_t *good = pack_weights(c.scheme, c.group, W, QJIT_DTYPE_F32, N, K, NULL, &bytes);
    uint8_t *buf = qt_xmalloc(bytes);
    int failures = 0;
    char report[512] = "";
    if (c.scheme != IS) {
        memcpy(buf, good, bytes);
        qt_put_le(buf + 48, 7, 4);
        reseal(buf);
        if (qjit_weights_inspect(NULL, buf, bytes, NULL) != QJIT_CORRUPT_WEIGHTS) {
            failures++;
            strcat(report, " param=7 accepted;");
        }
    }
    memcpy(buf, good, bytes);
    buf[64 + 14] = 'X';                          /* "qweight\0\0\0\0\0\0\0X\0" */
    reseal(buf);
    if (qjit_weights_inspect(NULL, buf, bytes, NULL) != QJIT_CORRUPT_WEIGHTS) {
        failures++;
        strcat(report, " a byte after the NUL of a section name accepted;");
    }
    ck_assert_msg(failures == 0, "%s g=%d:%s", sname(c.scheme), c.group, report);
    free(W); free(good); free(buf);
}
END_TEST

/* A buffer of one scheme relabelled as another (scheme field rewritten,
 * header resealed) is refused wherever the sections differ in number,
 * name or size. w4a8-lqq and w4a8-is (both with groups) have the same
 * three sections of the same sizes, so no structural check can tell them
 * apart: only the header checksum catches a scheme field that changed by
 * accident, and a deliberately resealed one is a valid buffer of the other
 * scheme. There inspect must report the scheme actually written. */
START_TEST(other_scheme_refused)
{
    qt_rng r = qt_rng_make(1200);
    int64_t N = 32, K = 256;
    float *W = normal_weights(&r, N, K);
    const qjit_scheme all[] = {LQQ, QOQ, IS, W8A8, W4A4};
    const int nall = (int)(sizeof all / sizeof all[0]);
    for (int i = 0; i < QT_NCONFIGS; i++) {
        size_t bytes;
        uint8_t *good = pack_weights(qt_configs[i].scheme, qt_configs[i].group, W, QJIT_DTYPE_F32, N, K, NULL, &bytes);
        uint8_t *buf = qt_xmalloc(bytes);
        sections mine = expect_sections(qt_configs[i].scheme, qt_configs[i].group, N, K);
        for (int j = 0; j < nall; j++) {
            if (all[j] == qt_configs[i].scheme)
                continue;
            memcpy(buf, good, bytes);
            qt_put_le(buf + 12, (uint32_t)all[j], 4);
            /* Without resealing: the header checksum. */
            ck_assert_int_eq(qjit_weights_inspect(NULL, buf, bytes, NULL), QJIT_CORRUPT_WEIGHTS);
            reseal(buf);
            qjit_weights_info info;
            qjit_status st = qjit_weights_inspect(NULL, buf, bytes, &info);
            /* Would the other scheme, with this group, have exactly these sections? */
            int same = 0;
            size_t other_bytes;
            /* ... and would it take the header's layer parameter (w4a8-is's
             * exponent; 0 for the others)? */
            int param_ok = qt_le32(buf + 48) == 0 || all[j] == IS;
            if (param_ok && qjit_packed_size(all[j], qt_configs[i].group, N, K, &other_bytes) == QJIT_OK) {
                sections theirs = expect_sections(all[j], qt_configs[i].group, N, K);
                same = theirs.n == mine.n;
                for (int s = 0; same && s < mine.n; s++)
                    same = !strcmp(theirs.name[s], mine.name[s]) && theirs.bytes[s] == mine.bytes[s];
            }
            if (same) {
                ck_assert_msg(st == QJIT_OK, "%s g=%d as %s: %s", sname(qt_configs[i].scheme), qt_configs[i].group,
                              sname(all[j]), qjit_status_name(st));
                ck_assert_int_eq(info.scheme, all[j]);
                ck_assert_int_eq(info.group, qt_configs[i].group);
            } else {
                ck_assert_msg(st == QJIT_CORRUPT_WEIGHTS, "%s g=%d accepted as %s", sname(qt_configs[i].scheme),
                              qt_configs[i].group, sname(all[j]));
            }
            /* lqq <-> is with groups are the only pairs whose sections
             * coincide; is -> lqq is still refused unless is's exponent
             * happens to be 0 (lqq takes no layer parameter). */
            int pair = (qt_configs[i].scheme == LQQ && all[j] == IS && qt_configs[i].group) ||
                       (qt_configs[i].scheme == IS && all[j] == LQQ && qt_le32(good + 48) == 0);
            ck_assert_int_eq(same, pair);
        }
        /* Unchanged, it reports itself. */
        qjit_weights_info info;
        ck_assert_int_eq(qjit_weights_inspect(NULL, good, bytes, &info), QJIT_OK);
        ck_assert_int_eq(info.scheme, qt_configs[i].scheme);
        free(good);
        free(buf);
    }
    free(W);
}
END_TEST

/* Version 1 (packed.h): the 64-byte header of qjit 0.1 and the sections
 * back to back. Built here from a version-2 buffer; the reference GEMM must
 * give the same accumulators and outputs for both. */
static uint8_t *to_version1(const uint8_t *v2, int group, int64_t N, int64_t K, size_t *bytes)
{
    sections sc = expect_sections(LQQ, group, N, K);
    size_t payload = sc.bytes[0] + sc.bytes[1] + sc.bytes[2];
    uint8_t *b = calloc(64 + payload, 1);
    ck_assert(b != NULL);
    size_t at = 64;
    for (int i = 0; i < 3; i++) {
        memcpy(b + at, v2 + sc.header + sc.offset[i], sc.bytes[i]);
        at += sc.bytes[i];
    }
    memcpy(b, "QJITWTS1", 8);
    qt_put_le(b + 8, 1, 4);
    qt_put_le(b + 12, LQQ, 4);
    qt_put_le(b + 16, (uint64_t)N, 8);
    qt_put_le(b + 24, (uint64_t)K, 8);
    qt_put_le(b + 32, (uint32_t)group, 4);
    qt_put_le(b + 40, payload, 8);
    qt_put_le(b + 48, qjit__hash64(b + 64, payload, 0), 8);
    qt_put_le(b + 56, qjit__hash64(b, 56, 0), 8);
    *bytes = 64 + payload;
    return b;
}

static void reseal_v1(uint8_t *b) { qt_put_le(b + 56, qjit__hash64(b, 56, 0), 8); }

START_TEST(version1_still_read)
{
    qt_rng r = qt_rng_make(1300);
    const int groups[] = {0, 64, 128};
    for (int gi = 0; gi < 3; gi++) {
        /* N = 48, K = 384: 3 x 6 entries of gparams (576 bytes), so version
         * 2 pads before the scale and version 1 must not. */
        int64_t N = 48, K = 384, M = 5;
        int group = groups[gi];
        float *W = normal_weights(&r, N, K);
        size_t b2, b1;
        uint8_t *v2 = pack_weights(LQQ, group, W, QJIT_DTYPE_F32, N, K, NULL, &b2);
        uint8_t *v1 = to_version1(v2, group, N, K, &b1);
        ck_assert_uint_lt(b1, b2);
        qjit_weights_info info;
        ck_assert_int_eq(qjit_weights_inspect(NULL, v1, b1, &info), QJIT_OK);
        ck_assert(info.scheme == LQQ && info.group == group && info.N == N && info.K == K);
        ck_assert_uint_eq(info.bytes, b1);
        ck_assert_uint_eq(info.payload_bytes, b1 - 64);
        ck_assert(info.alpha == 0.0);

        int8_t *Xq = qt_xmalloc((size_t)(M * K));
        float sx[5];
        for (int64_t i = 0; i < M * K; i++)
            Xq[i] = (int8_t)((int)(qt_next(&r) % 255) - 127);
        for (int m = 0; m < M; m++)
            sx[m] = (float)qt_uniform(&r) + 0.01f;
        int32_t *a1 = qt_xmalloc(sizeof(int32_t) * (size_t)(M * N));
        int32_t *a2 = qt_xmalloc(sizeof(int32_t) * (size_t)(M * N));
        float *y1 = qt_xmalloc(sizeof(float) * (size_t)(M * N)), *y2 = qt_xmalloc(sizeof(float) * (size_t)(M * N));
        ck_assert_int_eq(qjit_reference_gemm(NULL, v1, b1, M, Xq, sx, a1, y1), QJIT_OK);
        ck_assert_int_eq(qjit_reference_gemm(NULL, v2, b2, M, Xq, sx, a2, y2), QJIT_OK);
        ck_assert_msg(memcmp(a1, a2, sizeof(int32_t) * (size_t)(M * N)) == 0, "g=%d: accumulators differ", group);
        ck_assert_msg(memcmp(y1, y2, sizeof(float) * (size_t)(M * N)) == 0, "g=%d: outputs differ", group);
        /* Not everything zero: the comparison means something. */
        int nonzero = 0;
        for (int64_t i = 0; i < M * N; i++)
            nonzero += a1[i] != 0;
        ck_assert_int_gt(nonzero, M * N / 2);

        /* Version 1 is checked as strictly: any header byte, a payload
         * byte, the length, another scheme, flags. */
        uint8_t *buf = qt_xmalloc(b1 + 1);
        for (size_t i = 0; i < 64; i++) {
            memcpy(buf, v1, b1);
            buf[i] ^= (uint8_t)(1u << (i % 8));
            ck_assert_msg(qjit_weights_inspect(NULL, buf, b1, NULL) == QJIT_CORRUPT_WEIGHTS, "v1 header byte %zu", i);
        }
        memcpy(buf, v1, b1);
        buf[64 + (size_t)(qt_next(&r) % (b1 - 64))] ^= 0x20;
        ck_assert_int_eq(qjit_weights_inspect(NULL, buf, b1, NULL), QJIT_CORRUPT_WEIGHTS);
        ck_assert_int_eq(qjit_weights_inspect(NULL, v1, b1 - 1, NULL), QJIT_CORRUPT_WEIGHTS);
        memcpy(buf, v1, b1);
        buf[b1] = 0;
        ck_assert_int_eq(qjit_weights_inspect(NULL, buf, b1 + 1, NULL), QJIT_CORRUPT_WEIGHTS);
        const struct { size_t off; uint32_t v; } bad[] = {{12, IS}, {12, QOQ}, {36, 1}, {32, 32}};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            memcpy(buf, v1, b1);
            qt_put_le(buf + bad[i].off, bad[i].v, 4);
            reseal_v1(buf);
            ck_assert_int_eq(qjit_weights_inspect(NULL, buf, b1, NULL), QJIT_CORRUPT_WEIGHTS);
        }
        memcpy(buf, v1, b1);
        qt_put_le(buf + 40, b1 - 63, 8);
        reseal_v1(buf);
        ck_assert_int_eq(qjit_weights_inspect(NULL, buf, b1, NULL), QJIT_CORRUPT_WEIGHTS);
        free(buf); free(W); free(v1); free(v2); free(Xq); free(a1); free(a2); free(y1); free(y2);
    }
}
END_TEST

/* The sections the host writes are the ones the kernels bind: for every
 * scheme and group, the buffer's section table (names and sizes, in order)
 * equals the layer plan that templates/dispatch.lua and the scheme's Lua
 * module state. Also with a group equal to K, which the host and the
 * templates must read the same way. */
START_TEST(sections_match_templates)
{
    qjit_context_options o;
    qjit_context_options_init(&o);
    o.arch = "sm_90a";
    o.template_path = "";
    qjit_context *ctx = NULL;
    ck_assert_int_eq(qjit_context_create(&o, &ctx), QJIT_OK);
    qt_rng r = qt_rng_make(1400);
    int64_t N = 128, K = 512;
    float *W = normal_weights(&r, N, K);
    qt_config all[QT_NCONFIGS + 3];
    memcpy(all, qt_configs, sizeof qt_configs);
    all[QT_NCONFIGS] = (qt_config){LQQ, 512};
    all[QT_NCONFIGS + 1] = (qt_config){IS, 512};
    all[QT_NCONFIGS + 2] = (qt_config){QOQ, 512};
    char problems[2048] = "";
    for (int i = 0; i < QT_NCONFIGS + 3; i++) {
        size_t bytes;
        uint8_t *buf = pack_weights(all[i].scheme, all[i].group, W, QJIT_DTYPE_F32, N, K, NULL, &bytes);
        qjit__layer_plan plan;
        const qjit__plan_request req = {sname(all[i].scheme), all[i].group, N, K, "sm_90a", 132, NULL, 0, 0, 0, NULL, 0, NULL};
        pthread_mutex_lock(&ctx->lock);
        qjit_status st = qjit__plan_layer(ctx, &req, &plan);
        pthread_mutex_unlock(&ctx->lock);
        ck_assert_msg(st == QJIT_OK, "plan %s g=%d: %s", sname(all[i].scheme), all[i].group, qjit_last_error(ctx));
        uint32_t n = qt_le32(buf + 40);
        int agree = plan.nsections == (int)n;
        for (uint32_t s = 0; agree && s < n; s++) {
            const uint8_t *e = buf + 64 + 32 * s;
            agree = strncmp(plan.sections[s].name, (const char *)e, 16) == 0 &&
                    plan.sections[s].bytes == qt_le64(e + 24);
        }
        if (!agree) {
            size_t used = strlen(problems);
            snprintf(problems + used, sizeof problems - used, "\n  %s g=%d: buffer", sname(all[i].scheme),
                     all[i].group);
            for (uint32_t s = 0; s < n; s++) {
                used = strlen(problems);
                snprintf(problems + used, sizeof problems - used, " %.16s=%llu", (const char *)buf + 64 + 32 * s,
                         (unsigned long long)qt_le64(buf + 64 + 32 * s + 24));
            }
            used = strlen(problems);
            snprintf(problems + used, sizeof problems - used, "; plan");
            for (int s = 0; s < plan.nsections; s++) {
                used = strlen(problems);
                snprintf(problems + used, sizeof problems - used, " %s=%llu", plan.sections[s].name,
                         (unsigned long long)plan.sections[s].bytes);
            }
        }
        qjit__plan_release(ctx, &plan);
        free(buf);
    }
    ck_assert_msg(problems[0] == '\0', "the host's sections differ from the kernels':%s", problems);
    free(W);
    qjit_context_destroy(ctx);
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("quant");
    const qt_test tests[] = {
        {"quantize", quantize_matches_spec, QT_NCONFIGS},
        {"fp32_extremes", quantize_fp32_extremes, QT_NONE_PER_SCHEME},
        {"all_fp16", quantize_all_fp16_values, QT_NONE_PER_SCHEME},
        {"rounding_lqq", round_half_away_from_zero, 1},
        {"rounding", round_half_away_other_schemes, 1},
        {"brute_force_lqq", brute_force_lqq_ranges, 1},
        {"brute_force_qoq", brute_force_qoq_ranges, 1},
        {"is_offset_binary", is_offset_binary_conversion, 1},
        {"is_alpha_heuristic", is_alpha_heuristic, 1},
        {"is_alpha_lowered", is_alpha_lowered, 1},
        {"is_alpha_refused", is_alpha_refused, 1},
        {"is_zero_groups", is_zero_groups_and_foreign_options, 1},
        {"layout", layout_hand_checked, 1},
        {"pack_round_trip", pack_unpack_round_trip, 1},
        {"fp16_input", fp16_input_equals_fp32, QT_NCONFIGS},
        {"nonfinite", nonfinite_rejected, QT_NONE_PER_SCHEME},
        {"bad_sizes", bad_sizes_rejected, 1},
        {"capacity", capacity_too_small, QT_NONE_PER_SCHEME},
        {"allocation_failures", allocation_failures, QT_NONE_PER_SCHEME},
        {"scheme_names", scheme_names, 1},
        {"corruption", corruption_detected, QT_NCONFIGS},
        {"resealed_fields", resealed_reserved_fields_refused, QT_NONE_PER_SCHEME},
        {"meaningless_values", meaningless_values_refused, QT_NCONFIGS},
        {"other_scheme", other_scheme_refused, 1},
        {"version1", version1_still_read, 1},
        {"sections_match_templates", sections_match_templates, 1},
    };
    qt_add_tests(s, tests, sizeof tests / sizeof tests[0], 120);
    return s;
}
