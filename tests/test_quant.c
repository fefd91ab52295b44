/* test_quant.c -- the LQQ weight quantizer, the dual-MMA packed layout and
 * the packed-weight buffer (runtime/quant_lqq.c, runtime/quant.h). */
#define _GNU_SOURCE
#include "harness.h"
#include "context.h"
#include "hash.h"
#include "quant.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LQQ QJIT_SCHEME_W4A8_LQQ
#define PATTERN 0xA5

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
    W_KIND_COUNT
} weight_kind;

static const char *const kind_names[W_KIND_COUNT] = {
    "normal", "zero rows", "outlier", "constant", "alternating", "tiny", "fp16 max", "equal groups"};

/* Fills W (N x K) with values that are all representable in FP16, so the same
 * matrix can be fed as FP16 and as FP32. */
static void make_weights(weight_kind kind, qt_rng *r, int64_t N, int64_t K, float *W)
{
    for (int64_t n = 0; n < N; n++) {
        double sigma = exp(qt_uniform(r) * 8.0 - 6.0);   /* e^-6 .. e^2 */
        double c = (qt_uniform(r) < 0.5 ? -1 : 1) * (0.01 + 100 * qt_uniform(r));
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

/*------------------------------------------------------------------------
 * Unpacked quantization and its invariants
 *------------------------------------------------------------------------*/

typedef struct quantized {
    int64_t N, K;
    int G, groups;
    int8_t *Q8;
    uint8_t *Q4, *s, *a;
    float *s0;
} quantized;

static quantized quantize(const float *W, int64_t N, int64_t K, int group)
{
    quantized q = {.N = N, .K = K, .G = group ? group : (int)K};
    q.groups = (int)(K / q.G);
    q.Q8 = qt_xmalloc((size_t)(N * K));
    q.Q4 = qt_xmalloc((size_t)(N * K));
    q.s = qt_xmalloc((size_t)(N * q.groups));
    q.a = qt_xmalloc((size_t)(N * q.groups));
    q.s0 = qt_xmalloc(sizeof(float) * (size_t)N);
    qjit_status st = qjit__lqq_quantize(NULL, W, N, K, group, q.Q8, q.Q4, q.s, q.a, q.s0);
    ck_assert_msg(st == QJIT_OK, "qjit__lqq_quantize: %s", qjit_status_name(st));
    return q;
}

static void quantized_free(quantized *q)
{
    free(q->Q8);
    free(q->Q4);
    free(q->s);
    free(q->a);
    free(q->s0);
}

/* Q8' as the spec defines it: ((Q4 s + a) & 0xFF) ^ 0x80, read as int8. */
static int dequant(int q4, int s, int a) { return (int)(int8_t)(uint8_t)(((q4 * s + a) & 0xFF) ^ 0x80); }

/* Checks every property of the two levels. The float slack is derived, not
 * guessed: with r = W / s0, the float quotient is off by at most
 * |r| 2^-24 <= (amax / s0) 2^-24, and clamping to 119 costs at most
 * amax / s0 - 119 (nonzero only when s0 rounded below amax / 119, which for a
 * normal s0 is < 119 * 2^-24 units, and more for a subnormal s0). So, with
 * every term computed exactly in double:
 *     |W - Q8 s0| <= s0 / 2 + amax 2^-24 + max(0, amax - 119 s0)   (level 1)
 *     |W - Q8' s0| <= that + 8 s0                                   (total)  */
static void check_invariants(const char *what, const float *W, const quantized *q)
{
    int64_t N = q->N, K = q->K;
    for (int64_t n = 0; n < N; n++) {
        const float *w = W + n * K;
        double amax = 0;
        for (int64_t k = 0; k < K; k++)
            amax = fmax(amax, fabs((double)w[k]));
        double s0 = q->s0[n];
        REQUIRE(s0 > 0 && isfinite(s0), "%s: s0[%lld] = %g", what, (long long)n, s0);
        if (amax == 0)
            REQUIRE(s0 == 1.0, "%s: zero row %lld has s0 = %g, want 1", what, (long long)n, s0);
        else if ((float)amax / 119.0f != 0.0f)
            REQUIRE(q->s0[n] == (float)amax / 119.0f, "%s: s0[%lld] = %a, want max|W|/119 = %a", what,
                    (long long)n, s0, (double)((float)amax / 119.0f));
        double slack = amax * 0x1p-24 + fmax(0.0, amax - 119.0 * s0);
        /* The largest |W| must land on +-119 unless the row is zero, its scale
         * underflowed (then the row counts as zero, see quant_lqq.c), or s0
         * is subnormal: then amax / s0 is only 119 to within s0's few bits. */
        int saw_max = amax == 0 || (float)amax / 119.0f < FLT_MIN;
        for (int64_t k = 0; k < K; k++) {
            int q8 = q->Q8[n * K + k];
            REQUIRE(q8 >= -119 && q8 <= 119, "%s: Q8[%lld,%lld] = %d", what, (long long)n, (long long)k, q8);
            if ((float)amax / 119.0f != 0.0f) {
                /* exactly the float formula: clamp(roundf(W / s0)), a division */
                volatile float quotient = w[k] / q->s0[n];
                float want = fminf(fmaxf(roundf(quotient), -119.0f), 119.0f);
                REQUIRE(q8 == (int)want, "%s: Q8[%lld,%lld] = %d, clamp(roundf(W/s0)) = %d", what, (long long)n,
                        (long long)k, q8, (int)want);
            }
            double err1 = fabs((double)w[k] - q8 * s0);
            REQUIRE(err1 <= 0.5 * s0 + slack, "%s: level-1 error %g > s0/2 + %g at [%lld,%lld] (W=%a s0=%a Q8=%d)",
                    what, err1, slack, (long long)n, (long long)k, (double)w[k], s0, q8);
            if (fabs((double)w[k]) == amax && q8 == (w[k] > 0 ? 119 : -119))
                saw_max = 1;
        }
        REQUIRE(saw_max, "%s: row %lld: the largest |W| does not map to +-119", what, (long long)n);

        for (int gi = 0; gi < q->groups; gi++) {
            const int8_t *q8 = q->Q8 + n * K + (int64_t)gi * q->G;
            const uint8_t *q4 = q->Q4 + n * K + (int64_t)gi * q->G;
            int s = q->s[n * q->groups + gi], a = q->a[n * q->groups + gi];
            int lo = 255, hi = 0;
            for (int i = 0; i < q->G; i++) {
                lo = q8[i] + 128 < lo ? q8[i] + 128 : lo;
                hi = q8[i] + 128 > hi ? q8[i] + 128 : hi;
            }
            int want_s = (hi - lo + 14) / 15 > 1 ? (hi - lo + 14) / 15 : 1;
            REQUIRE(a == lo && a >= 9 && a <= 247, "%s: a[%lld,%d] = %d, min U8 = %d", what, (long long)n, gi, a, lo);
            REQUIRE(s == want_s && s >= 1 && s <= 16, "%s: s[%lld,%d] = %d, want %d", what, (long long)n, gi, s,
                    want_s);
            for (int i = 0; i < q->G; i++) {
                int64_t k = (int64_t)gi * q->G + i;
                int d = q8[i] + 128 - a, v = q4[i];
                REQUIRE(v >= 0 && v <= 15, "%s: Q4[%lld,%lld] = %d", what, (long long)n, (long long)k, v);
                /* round half away from zero of d / s: -s < 2 (Q4 s - d) <= s */
                REQUIRE(-s < 2 * (v * s - d) && 2 * (v * s - d) <= s, "%s: Q4[%lld,%lld] = %d is not round(%d/%d)",
                        what, (long long)n, (long long)k, v, d, s);
                REQUIRE(v * s + a <= 255, "%s: Q4 s + a = %d overflows at [%lld,%lld]", what, v * s + a,
                        (long long)n, (long long)k);
                int d8 = dequant(v, s, a);
                /* a <= U8' <= 255 gives Q8' in [-119, 127]; see brute_force_u8_ranges */
                REQUIRE(d8 >= -119 && d8 <= 127, "%s: Q8' = %d at [%lld,%lld]", what, d8, (long long)n, (long long)k);
                int diff = abs(d8 - q8[i]);
                REQUIRE(diff <= 8 && diff <= (s + 1) / 2, "%s: |Q8' - Q8| = %d (s = %d) at [%lld,%lld]", what, diff, s,
                        (long long)n, (long long)k);
                double err = fabs((double)W[n * K + k] - d8 * s0);
                REQUIRE(err <= 8.5 * s0 + slack, "%s: total error %g > 8.5 s0 at [%lld,%lld]", what, err,
                        (long long)n, (long long)k);
            }
        }
    }
}

static const struct { int64_t N, K; int group; } shapes[] = {
    {16, 64, 0},   {16, 64, 64},  {32, 128, 0},  {32, 128, 64},  {48, 256, 128},
    {64, 512, 256}, {16, 192, 64}, {16, 192, 0},  {80, 1024, 128}, {32, 4096, 0},
};
#define SHAPE_COUNT (sizeof shapes / sizeof shapes[0])

START_TEST(quantize_random_and_adversarial)
{
    qt_rng r = qt_rng_make(1);
    for (size_t si = 0; si < SHAPE_COUNT; si++)
        for (int kind = 0; kind < W_KIND_COUNT; kind++) {
            int64_t N = shapes[si].N, K = shapes[si].K;
            float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
            make_weights((weight_kind)kind, &r, N, K, W);
            quantized q = quantize(W, N, K, shapes[si].group);
            char what[128];
            snprintf(what, sizeof what, "%s N=%lld K=%lld g=%d seed=%llu", kind_names[kind], (long long)N,
                     (long long)K, shapes[si].group, (unsigned long long)qt_seed());
            check_invariants(what, W, &q);
            quantized_free(&q);
            free(W);
        }
}
END_TEST

/* FP32-only extremes: subnormal floats (s0 itself subnormal, or underflowing
 * to 0), huge floats near FLT_MAX. */
START_TEST(quantize_fp32_extremes)
{
    qt_rng r = qt_rng_make(2);
    const double scales[] = {1e-39, 1e-41, 3e-44, 1e-45, 1e30, 3e38};
    int64_t N = 16, K = 128;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++) {
        for (int64_t j = 0; j < N * K; j++) {
            double v = qt_normal(&r) * scales[i];
            W[j] = (float)fmax(fmin(v, FLT_MAX), -FLT_MAX);
        }
        quantized q = quantize(W, N, K, 64);
        char what[96];
        snprintf(what, sizeof what, "fp32 scale %g seed=%llu", scales[i], (unsigned long long)qt_seed());
        check_invariants(what, W, &q);
        quantized_free(&q);
    }
    free(W);
}
END_TEST

/* For every U8 range 9 <= lo <= hi <= 247, on paper and through the library:
 * no value of the range overflows 255 after dequantization.
 *
 * The range of Q8' this finds is exactly [-119, 127], not the [-121, 126] that
 * ALGORITHMS.md quotes: that figure belongs to QoQ's subtraction-after-
 * multiplication (section 3). Under LQQ, U8' >= a >= 9 bounds it below, and
 * rounding up by s/2 = 8 reaches 255 (e.g. a = 15, s = 16, U8 = 247:
 * Q4 = round(232/16 = 14.5) = 15, U8' = 255, Q8' = 127), still without a
 * carry out of the byte. */
START_TEST(brute_force_u8_ranges)
{
    long pairs = 0;
    int lowest = 127, highest = -128;
    for (int lo = 9; lo <= 247; lo++)
        for (int hi = lo; hi <= 247; hi++) {
            int s = (hi - lo + 14) / 15 > 1 ? (hi - lo + 14) / 15 : 1;
            REQUIRE(s <= 16, "s = %d for [%d, %d]", s, lo, hi);
            for (int u = lo; u <= hi; u++) {
                int q4 = (2 * (u - lo) + s) / (2 * s);
                REQUIRE(q4 <= 15, "Q4 = %d for u=%d in [%d,%d]", q4, u, lo, hi);
                REQUIRE(q4 * s + lo <= 255, "overflow: u=%d in [%d,%d], s=%d, Q4=%d", u, lo, hi, s, q4);
                int d8 = dequant(q4, s, lo);
                REQUIRE(abs(d8 - (u - 128)) <= 8 && 2 * abs(d8 - (u - 128)) <= s, "u=%d -> %d", u, d8);
                lowest = d8 < lowest ? d8 : lowest;
                highest = d8 > highest ? d8 : highest;
            }
            pairs++;
        }
    ck_assert_int_eq(pairs, 239 * 240 / 2);
    ck_assert_int_eq(lowest, -119);
    ck_assert_int_eq(highest, 127);

    /* Through qjit__lqq_quantize: row = one 64-group holding exactly the range
     * [lo, hi] (as Q8 = U8 - 128), then a group holding +-119 so s0 = 1 and
     * Q8 = W exactly. One row per pair, 16 pairs per call. */
    int64_t K = 128, N = 16;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    uint8_t *Q4 = qt_xmalloc((size_t)(N * K)), s[32], a[32];
    int row = 0, los[16], his[16];
    for (int lo = 9; lo <= 247; lo++)
        for (int hi = lo; hi <= 247; hi++) {
            los[row] = lo;
            his[row] = hi;
            float *w = W + row * K;
            for (int i = 0; i < 64; i++)
                w[i] = (float)(lo + (hi - lo) * i / 63 - 128);
            for (int i = 64; i < 128; i++)
                w[i] = i % 2 ? 119.0f : -119.0f;
            if (++row < 16 && !(lo == 247 && hi == 247))
                continue;
            ck_assert_int_eq(qjit__lqq_quantize(NULL, W, row, K, 64, NULL, Q4, s, a, NULL), QJIT_OK);
            for (int rr = 0; rr < row; rr++) {
                REQUIRE(a[2 * rr] == los[rr], "a = %d for [%d,%d]", a[2 * rr], los[rr], his[rr]);
                for (int i = 0; i < 64; i++)
                    REQUIRE(Q4[rr * K + i] * s[2 * rr] + a[2 * rr] <= 255, "library overflow for [%d,%d]", los[rr],
                            his[rr]);
            }
            row = 0;
        }
    free(W);
    free(Q4);
}
END_TEST

/* Every FP16 value up to a row maximum, for several maxima: the quotient
 * W / s0 must be a float division (a reciprocal multiply or a double
 * division rounds differently on some of these), then roundf. */
START_TEST(quantize_all_fp16_values)
{
    qt_rng r = qt_rng_make(10);
    uint16_t maxima[12] = {0x3C00, 0x7BFF, 0x0001, 0x03FF, 0x5640, 0x2E66};
    for (int i = 6; i < 12; i++)
        maxima[i] = (uint16_t)(0x0400 + qt_next(&r) % (0x7BFF - 0x0400));
    for (int i = 0; i < 12; i++) {
        float amax = qjit__half_to_float(maxima[i]);
        int64_t K = 0;
        float *W = qt_xmalloc(sizeof(float) * 65536);
        W[K++] = amax;
        for (uint32_t h = 0; h < 65536; h++) {
            float v = qjit__half_to_float((uint16_t)h);
            if (isfinite(v) && fabsf(v) <= amax)
                W[K++] = v;
        }
        while (K % 64)
            W[K++] = 0.0f;
        quantized q = quantize(W, 1, K, 64);
        char what[64];
        snprintf(what, sizeof what, "all halves up to %a", (double)amax);
        check_invariants(what, W, &q);
        quantized_free(&q);
        free(W);
    }
}
END_TEST

START_TEST(round_half_away_from_zero)
{
    /* A row with max 119 has s0 = 1, so Q8 = round(W): halves go outward. */
    float W[64] = {119.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.49999997f, -118.5f};
    int8_t Q8[64];
    uint8_t Q4[64], s, a;
    float s0;
    ck_assert_int_eq(qjit__lqq_quantize(NULL, W, 1, 64, 0, Q8, Q4, &s, &a, &s0), QJIT_OK);
    ck_assert(s0 == 1.0f);
    const int want[9] = {119, 1, -1, 2, -2, 3, -3, 0, -119};
    for (int i = 0; i < 9; i++)
        ck_assert_msg(Q8[i] == want[i], "round(%g) = %d, want %d", (double)W[i], Q8[i], want[i]);
    /* U8 spans [9, 247]: s = ceil(238 / 15) = 16, a = 9; U8 = 128 (W = 0) is
     * d = 119 -> 119 / 16 = 7.44 -> 7; W = 1 (U8 = 129, d = 120 = 7.5 s) -> 8. */
    ck_assert_int_eq(s, 16);
    ck_assert_int_eq(a, 9);
    ck_assert_int_eq(Q4[9], 7);
    ck_assert_int_eq(Q4[1], 8);
}
END_TEST

/*------------------------------------------------------------------------
 * Packing
 *------------------------------------------------------------------------*/

START_TEST(pack_unpack_round_trip)
{
    qt_rng r = qt_rng_make(3);
    for (size_t si = 0; si < SHAPE_COUNT; si++) {
        int64_t N = shapes[si].N, K = shapes[si].K;
        int G = shapes[si].group ? shapes[si].group : (int)K, groups = (int)(K / G);
        size_t elems = (size_t)(N * K), params = (size_t)(N * groups);
        uint8_t *Q4 = qt_xmalloc(elems), *s = qt_xmalloc(params), *a = qt_xmalloc(params);
        for (size_t i = 0; i < elems; i++)
            Q4[i] = (uint8_t)(qt_next(&r) & 15);
        for (size_t i = 0; i < params; i++) {
            s[i] = (uint8_t)qt_next(&r);
            a[i] = (uint8_t)qt_next(&r);
        }
        uint8_t *qw = qt_xmalloc(elems / 2), *gp = qt_xmalloc(params * 2);
        memset(qw, PATTERN, elems / 2);
        memset(gp, PATTERN, params * 2);
        qjit__lqq_pack(N, K, shapes[si].group, Q4, s, a, qw, gp);
        uint8_t *Q4b = qt_xmalloc(elems), *sb = qt_xmalloc(params), *ab = qt_xmalloc(params);
        qjit__lqq_unpack(N, K, shapes[si].group, qw, gp, Q4b, sb, ab);
        ck_assert_msg(memcmp(Q4, Q4b, elems) == 0, "Q4 round trip, shape %zu", si);
        ck_assert_msg(memcmp(s, sb, params) == 0, "s round trip, shape %zu", si);
        ck_assert_msg(memcmp(a, ab, params) == 0, "a round trip, shape %zu", si);
        free(Q4); free(s); free(a); free(qw); free(gp); free(Q4b); free(sb); free(ab);
    }
}
END_TEST

/* Positions worked out by hand from quant.h's BLOCK LAYOUT:
 *   block = nb * (K/64) + kb;  r = n % 16, c = k % 64
 *   g = r % 8, nibble = r >= 8; kk = c / 32, h = (c / 16) % 2, t = (c / 4) % 4, j = c % 4
 *   byte = block * 512 + (4 g + t) * 16 + (2 kk + h) * 4 + j            */
static const struct { int n, k; size_t byte; int high; } hand_cases[] = {
    {0, 0, 0, 0},          /* lane 0, word 0, byte 0 */
    {8, 0, 0, 1},          /* row g + 8 of the same weight: the high nibble */
    {3, 5, 209, 0},        /* g=3, t=1, j=1: lane 13 -> 13*16 + 1 */
    {1, 16, 68, 0},        /* g=1, h=1 t=0 j=0: word 1 of lane 4 -> 4*16 + 4 */
    {13, 45, 377, 1},      /* g=5 high, kk=1 h=0 t=3 j=1: lane 23, word 2 -> 368 + 8 + 1 */
    {25, 114, 1614, 1},    /* nb=1 kb=1 (block 3), g=1 high, kk=1 h=1 t=0 j=2: 1536 + 64 + 12 + 2 */
    {31, 127, 2047, 1},    /* the very last nibble: block 3, lane 31, word 3, byte 3 */
    {7, 95, 1015, 0},      /* block 1, g=7, kk=0 h=1 t=3 j=3: 512 + 31*16 + 4 + 3 */
    {20, 33, 1289, 0},     /* block 2 (nb=1 kb=0), g=4, kk=1 h=0 t=0 j=1: 1024 + 16*16 + 8 + 1 */
};

START_TEST(layout_hand_checked)
{
    int64_t N = 32, K = 128;
    uint8_t Q4[32 * 128], s[64], a[64], qw[2048], gp[128], base[2048];
    memset(s, 1, sizeof s);
    memset(a, 9, sizeof a);
    memset(Q4, 0, sizeof Q4);
    qjit__lqq_pack(N, K, 64, Q4, s, a, base, gp);
    for (size_t i = 0; i < sizeof base; i++)
        ck_assert_int_eq(base[i], 0);
    for (size_t c = 0; c < sizeof hand_cases / sizeof hand_cases[0]; c++) {
        int n = hand_cases[c].n, k = hand_cases[c].k;
        memset(Q4, 0, sizeof Q4);
        Q4[n * K + k] = 0xB;
        qjit__lqq_pack(N, K, 64, Q4, s, a, qw, gp);
        for (size_t i = 0; i < sizeof qw; i++) {
            uint8_t want = i == hand_cases[c].byte ? (hand_cases[c].high ? 0xB0 : 0x0B) : 0;
            ck_assert_msg(qw[i] == want, "Q4[%d,%d]: byte %zu is 0x%02x, want 0x%02x", n, k, i, qw[i], want);
        }
    }

    /* gparams: entry (nb, gi) at (nb * 2 + gi) * 32; row n -> 4 (n%8) + (n%16 >= 8 ? 2 : 0). */
    memset(Q4, 0, sizeof Q4);
    for (int i = 0; i < 64; i++) {
        s[i] = (uint8_t)(100 + i);      /* s of row i / 2, group i % 2 */
        a[i] = (uint8_t)(200 - i);
    }
    qjit__lqq_pack(N, K, 64, Q4, s, a, qw, gp);
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
}
END_TEST

/* What a GPU lane does: one 16-byte load, four words, the two-instruction
 * dequantization r = (q4x4 * s + a * 0x01010101) ^ 0x80808080 on each nibble
 * half, bytes taken as the MMA fragment (row g / g + 8, k = 16 h + 4 t + j). */
START_TEST(lane_view_dequantization)
{
    qt_rng r = qt_rng_make(4);
    int64_t N = 48, K = 320;
    int group = 64;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    make_weights(W_NORMAL, &r, N, K, W);
    quantized q = quantize(W, N, K, group);
    size_t bytes;
    ck_assert_int_eq(qjit_packed_size(LQQ, group, N, K, &bytes), QJIT_OK);
    uint8_t *buf = qt_xmalloc(bytes);
    ck_assert_int_eq(qjit_quantize_weights(NULL, LQQ, group, W, QJIT_DTYPE_F32, N, K, buf, bytes, NULL), QJIT_OK);
    qjit__weights_view v;
    ck_assert_int_eq(qjit__weights_view_init(NULL, buf, bytes, 1, &v), QJIT_OK);
    const uint8_t *qw = v.payload + v.qweight_offset, *gp = v.payload + v.gparams_offset;
    int8_t *Wq = qt_xmalloc((size_t)(N * K));
    qjit__lqq_dequantize(&v, Wq);

    for (int64_t nb = 0; nb < N / 16; nb++)
        for (int64_t kb = 0; kb < K / 64; kb++)
            for (int lane = 0; lane < 32; lane++) {
                int g = lane / 4, t = lane % 4;
                const uint8_t *e = gp + (nb * (K / group) + kb * 64 / group) * 32 + 4 * g;
                for (int kk = 0; kk < 2; kk++)
                    for (int h = 0; h < 2; h++) {
                        const uint8_t *p = qw + (nb * (K / 64) + kb) * 512 + lane * 16 + (2 * kk + h) * 4;
                        uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                                     (uint32_t)p[3] << 24;
                        uint32_t rlo = ((w & 0x0F0F0F0Fu) * e[0] + e[1] * 0x01010101u) ^ 0x80808080u;
                        uint32_t rhi = (((w >> 4) & 0x0F0F0F0Fu) * e[2] + e[3] * 0x01010101u) ^ 0x80808080u;
                        for (int j = 0; j < 4; j++) {
                            int64_t k = kb * 64 + 32 * kk + 16 * h + 4 * t + j;
                            int64_t n_lo = nb * 16 + g, n_hi = n_lo + 8;
                            int8_t lo = (int8_t)(uint8_t)(rlo >> (8 * j)), hi = (int8_t)(uint8_t)(rhi >> (8 * j));
                            int glo = (int)(n_lo * q.groups + k / q.G), ghi = (int)(n_hi * q.groups + k / q.G);
                            REQUIRE(lo == dequant(q.Q4[n_lo * K + k], q.s[glo], q.a[glo]) && lo == Wq[n_lo * K + k],
                                    "lane %d word %d byte %d (row %lld, k %lld): %d", lane, 2 * kk + h, j,
                                    (long long)n_lo, (long long)k, lo);
                            REQUIRE(hi == dequant(q.Q4[n_hi * K + k], q.s[ghi], q.a[ghi]) && hi == Wq[n_hi * K + k],
                                    "lane %d word %d byte %d (row %lld, k %lld): %d", lane, 2 * kk + h, j,
                                    (long long)n_hi, (long long)k, hi);
                        }
                    }
            }
    free(W); free(buf); free(Wq);
    quantized_free(&q);
}
END_TEST

/*------------------------------------------------------------------------
 * The packed buffer
 *------------------------------------------------------------------------*/

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Quantizes W into a fresh buffer of exactly the packed size. */
static uint8_t *pack_weights(const void *W, qjit_dtype dtype, int64_t N, int64_t K, int group, size_t *bytes)
{
    ck_assert_int_eq(qjit_packed_size(LQQ, group, N, K, bytes), QJIT_OK);
    uint8_t *buf = qt_xmalloc(*bytes);
    size_t written = 0;
    qjit_status st = qjit_quantize_weights(NULL, LQQ, group, W, dtype, N, K, buf, *bytes, &written);
    ck_assert_msg(st == QJIT_OK, "qjit_quantize_weights: %s", qjit_status_name(st));
    ck_assert_uint_eq(written, *bytes);
    return buf;
}

START_TEST(buffer_matches_unpacked)
{
    qt_rng r = qt_rng_make(5);
    for (size_t si = 0; si < SHAPE_COUNT; si++) {
        int64_t N = shapes[si].N, K = shapes[si].K;
        int group = shapes[si].group;
        float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
        make_weights((weight_kind)(si % W_KIND_COUNT), &r, N, K, W);
        quantized q = quantize(W, N, K, group);
        size_t bytes;
        uint8_t *buf = pack_weights(W, QJIT_DTYPE_F32, N, K, group, &bytes);

        size_t qweight = (size_t)(N * K / 2), gparams = (size_t)(N / 16 * q.groups * 32);
        ck_assert_uint_eq(bytes, 64 + qweight + gparams + 4 * (size_t)N);
        ck_assert(memcmp(buf, "QJITWTS1", 8) == 0);
        ck_assert_uint_eq(le32(buf + 8), 1);
        ck_assert_uint_eq(le32(buf + 12), 1);
        ck_assert_uint_eq(le64(buf + 16), (uint64_t)N);
        ck_assert_uint_eq(le64(buf + 24), (uint64_t)K);
        ck_assert_int_eq((int32_t)le32(buf + 32), group);
        ck_assert_uint_eq(le32(buf + 36), 0);
        ck_assert_uint_eq(le64(buf + 40), bytes - 64);
        ck_assert(le64(buf + 48) == qjit__hash64(buf + 64, bytes - 64, 0));
        ck_assert(le64(buf + 56) == qjit__hash64(buf, 56, 0));

        uint8_t *Q4 = qt_xmalloc((size_t)(N * K)), *s = qt_xmalloc((size_t)(N * q.groups)), *a = qt_xmalloc((size_t)(N * q.groups));
        qjit__lqq_unpack(N, K, group, buf + 64, buf + 64 + qweight, Q4, s, a);
        ck_assert_msg(memcmp(Q4, q.Q4, (size_t)(N * K)) == 0, "packed Q4 differs, shape %zu", si);
        ck_assert_msg(memcmp(s, q.s, (size_t)(N * q.groups)) == 0, "packed s differs, shape %zu", si);
        ck_assert_msg(memcmp(a, q.a, (size_t)(N * q.groups)) == 0, "packed a differs, shape %zu", si);
        for (int64_t n = 0; n < N; n++) {
            uint32_t bits;
            memcpy(&bits, &q.s0[n], 4);
            ck_assert_uint_eq(le32(buf + 64 + qweight + gparams + 4 * n), bits);
        }

        qjit_weights_info info;
        ck_assert_int_eq(qjit_weights_inspect(NULL, buf, bytes, &info), QJIT_OK);
        ck_assert_int_eq(info.scheme, LQQ);
        ck_assert_int_eq(info.group, group);
        ck_assert_int_eq(info.N, N);
        ck_assert_int_eq(info.K, K);
        ck_assert_uint_eq(info.bytes, bytes);

        qjit__weights_view v;
        ck_assert_int_eq(qjit__weights_view_init(NULL, buf, bytes, 1, &v), QJIT_OK);
        ck_assert_int_eq(v.group_size, q.G);
        ck_assert_uint_eq(v.qweight_offset, 0);
        ck_assert_uint_eq(v.gparams_offset, qweight);
        ck_assert_uint_eq(v.s0_offset, qweight + gparams);
        ck_assert(v.payload == buf + 64);
        int8_t *Wq = qt_xmalloc((size_t)(N * K));
        qjit__lqq_dequantize(&v, Wq);
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < K; k++) {
                int gi = (int)(n * q.groups + k / q.G);
                REQUIRE(Wq[n * K + k] == dequant(q.Q4[n * K + k], q.s[gi], q.a[gi]), "W'[%lld,%lld]", (long long)n,
                        (long long)k);
            }
        free(Wq); free(Q4); free(s); free(a); free(buf); free(W);
        quantized_free(&q);
    }
}
END_TEST

START_TEST(fp16_input_equals_fp32)
{
    qt_rng r = qt_rng_make(6);
    for (int kind = 0; kind < W_KIND_COUNT; kind++) {
        int64_t N = 32, K = 256;
        float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
        uint16_t *H = qt_xmalloc(sizeof(uint16_t) * (size_t)(N * K));
        make_weights((weight_kind)kind, &r, N, K, W);
        for (int64_t i = 0; i < N * K; i++)
            H[i] = qjit__float_to_half(W[i]);
        size_t b32, b16;
        uint8_t *p32 = pack_weights(W, QJIT_DTYPE_F32, N, K, 128, &b32);
        uint8_t *p16 = pack_weights(H, QJIT_DTYPE_F16, N, K, 128, &b16);
        ck_assert_uint_eq(b16, b32);
        ck_assert_msg(memcmp(p16, p32, b32) == 0, "FP16 and FP32 input differ (%s)", kind_names[kind]);
        free(W); free(H); free(p32); free(p16);
    }
}
END_TEST

static int all_pattern(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != PATTERN)
            return 0;
    return 1;
}

START_TEST(nonfinite_rejected)
{
    qjit_context *ctx = qt_bare_context();
    qt_rng r = qt_rng_make(7);
    int64_t N = 32, K = 128;
    size_t bytes;
    ck_assert_int_eq(qjit_packed_size(LQQ, 64, N, K, &bytes), QJIT_OK);
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
        qjit_status st = qjit_quantize_weights(ctx, LQQ, 64, dtype == QJIT_DTYPE_F32 ? (void *)W : (void *)H,
                                               dtype, N, K, out, bytes, &written);
        ck_assert_int_eq(st, QJIT_INVALID_ARGUMENT);
        ck_assert_msg(all_pattern(out, bytes), "output written despite bad input (trial %d)", trial);
        ck_assert_uint_eq(written, 12345);
        char where[64];
        snprintf(where, sizeof where, "[%lld, %lld]", (long long)n, (long long)k);
        ck_assert_msg(strstr(ctx->last_error, where) != NULL, "message '%s' does not name %s", ctx->last_error,
                      where);
        if (trial < 4) {
            /* the unpacked quantizer rejects it too */
            int8_t *Q8 = qt_xmalloc((size_t)(N * K));
            memset(Q8, PATTERN, (size_t)(N * K));
            ck_assert_int_eq(qjit__lqq_quantize(ctx, W, N, K, 64, Q8, NULL, NULL, NULL, NULL), QJIT_INVALID_ARGUMENT);
            ck_assert(all_pattern((uint8_t *)Q8, (size_t)(N * K)));
            ck_assert_msg(strstr(ctx->last_error, where) != NULL, "'%s'", ctx->last_error);
            free(Q8);
        }
    }
    free(W); free(H); free(out);
}
END_TEST

START_TEST(bad_sizes_rejected)
{
    static const struct { int64_t N, K; int group; } bad[] = {
        {0, 64, 0}, {-16, 64, 0}, {16, 0, 0}, {16, -64, 0}, {15, 64, 0}, {24, 64, 0}, {16, 32, 0},
        {16, 96, 0}, {16, 64, -64}, {16, 64, 32}, {16, 192, 96}, {16, 192, 128}, {16, 128, 256},
        {16, 128, 1}, {16, 64, 16},
    };
    float W[16 * 256] = {1.0f};
    uint8_t out[4096];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t bytes = 777, written = 777;
        ck_assert_msg(qjit_packed_size(LQQ, bad[i].group, bad[i].N, bad[i].K, &bytes) == QJIT_INVALID_ARGUMENT,
                      "packed_size accepted N=%lld K=%lld group=%d", (long long)bad[i].N, (long long)bad[i].K,
                      bad[i].group);
        ck_assert_uint_eq(bytes, 777);
        memset(out, PATTERN, sizeof out);
        ck_assert_msg(qjit_quantize_weights(NULL, LQQ, bad[i].group, W, QJIT_DTYPE_F32, bad[i].N, bad[i].K, out,
                                            sizeof out, &written) == QJIT_INVALID_ARGUMENT,
                      "quantize accepted case %zu", i);
        ck_assert(all_pattern(out, sizeof out));
        ck_assert_uint_eq(written, 777);
    }
    size_t bytes;
    /* sizes whose product cannot exist */
    ck_assert_int_ne(qjit_packed_size(LQQ, 0, (int64_t)1 << 40, (int64_t)1 << 40, &bytes), QJIT_OK);
    ck_assert_int_ne(qjit_packed_size(LQQ, 64, INT64_MAX - 15, 64, &bytes), QJIT_OK);
    ck_assert_int_eq(qjit_packed_size(LQQ, 0, 16, 64, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_packed_size((qjit_scheme)2, 0, 16, 64, &bytes), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_packed_size(LQQ, 0, 16, 64, &bytes), QJIT_OK);
    ck_assert_uint_eq(bytes, 64 + 512 + 32 + 64);
    ck_assert_int_eq(qjit_packed_size(LQQ, 64, 32, 256, &bytes), QJIT_OK);
    ck_assert_uint_eq(bytes, 64 + 32 * 256 / 2 + 2 * 4 * 32 + 128);

    memset(out, PATTERN, sizeof out);
    ck_assert_int_eq(qjit_quantize_weights(NULL, (qjit_scheme)0, 0, W, QJIT_DTYPE_F32, 16, 64, out, sizeof out, NULL),
                     QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_quantize_weights(NULL, LQQ, 0, W, (qjit_dtype)3, 16, 64, out, sizeof out, NULL),
                     QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_quantize_weights(NULL, LQQ, 0, NULL, QJIT_DTYPE_F32, 16, 64, out, sizeof out, NULL),
                     QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_quantize_weights(NULL, LQQ, 0, W, QJIT_DTYPE_F32, 16, 64, NULL, sizeof out, NULL),
                     QJIT_INVALID_ARGUMENT);
    ck_assert(all_pattern(out, sizeof out));
    ck_assert_int_eq(qjit__lqq_quantize(NULL, W, 16, 64, 48, NULL, NULL, NULL, NULL, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit__lqq_quantize(NULL, W, 0, 64, 0, NULL, NULL, NULL, NULL, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit__lqq_quantize(NULL, NULL, 16, 64, 0, NULL, NULL, NULL, NULL, NULL), QJIT_INVALID_ARGUMENT);
}
END_TEST

START_TEST(capacity_too_small)
{
    qt_rng r = qt_rng_make(8);
    int64_t N = 32, K = 192;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    make_weights(W_NORMAL, &r, N, K, W);
    size_t need;
    ck_assert_int_eq(qjit_packed_size(LQQ, 64, N, K, &need), QJIT_OK);
    uint8_t *out = qt_xmalloc(need + 100);
    const size_t caps[] = {0, 1, 63, 64, need / 2, need - 4 * (size_t)N, need - 1};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        memset(out, PATTERN, need + 100);
        size_t written = 99;
        ck_assert_int_eq(qjit_quantize_weights(NULL, LQQ, 64, W, QJIT_DTYPE_F32, N, K, out, caps[i], &written),
                         QJIT_OVERFLOW);
        ck_assert_msg(all_pattern(out, need + 100), "written with capacity %zu", caps[i]);
        ck_assert_uint_eq(written, 99);
    }
    /* more than enough: exactly `need` bytes written, the rest untouched */
    memset(out, PATTERN, need + 100);
    size_t written = 0;
    ck_assert_int_eq(qjit_quantize_weights(NULL, LQQ, 64, W, QJIT_DTYPE_F32, N, K, out, need + 100, &written), QJIT_OK);
    ck_assert_uint_eq(written, need);
    ck_assert(all_pattern(out + need, 100));
    ck_assert_int_eq(qjit_weights_inspect(NULL, out, need, NULL), QJIT_OK);
    free(W); free(out);
}
END_TEST

/* Rewrites the header hash so that a deliberately bad field is the only
 * thing wrong with the header. */
static void reseal_header(uint8_t *buf) { put_le(buf + 56, qjit__hash64(buf, 56, 0), 8); }

START_TEST(corruption_detected)
{
    qjit_context *ctx = qt_bare_context();
    qt_rng r = qt_rng_make(9);
    int64_t N = 48, K = 320;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    make_weights(W_NORMAL, &r, N, K, W);
    size_t bytes;
    uint8_t *good = pack_weights(W, QJIT_DTYPE_F32, N, K, 64, &bytes);
    uint8_t *buf = qt_xmalloc(bytes + 16);

    /* One flipped byte, anywhere: every header byte, the edges of each
     * payload section, and random positions. */
    size_t qweight = (size_t)(N * K / 2), gparams = (size_t)(N / 16 * (K / 64) * 32);
    size_t positions[64 + 10 + 200];
    size_t count = 0;
    for (size_t i = 0; i < 64; i++)
        positions[count++] = i;
    const size_t edges[] = {64, 65, 64 + qweight - 1, 64 + qweight, 64 + qweight + gparams - 1,
                            64 + qweight + gparams, bytes - 4, bytes - 1};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        positions[count++] = edges[i];
    while (count < sizeof positions / sizeof positions[0])
        positions[count++] = 64 + (size_t)(qt_next(&r) % (bytes - 64));
    for (size_t i = 0; i < count; i++) {
        memcpy(buf, good, bytes);
        uint8_t flip = (uint8_t)(1u << (qt_next(&r) % 8));
        buf[positions[i]] ^= flip;
        qjit_status st = qjit_weights_inspect(ctx, buf, bytes, NULL);
        ck_assert_msg(st == QJIT_CORRUPT_WEIGHTS, "flip 0x%02x at byte %zu: %s", flip, positions[i],
                      qjit_status_name(st));
        ck_assert(ctx->last_error[0] != '\0');
        if (positions[i] >= 64) {
            /* a payload flip passes when the payload hash is not checked */
            qjit__weights_view v;
            ck_assert_int_eq(qjit__weights_view_init(ctx, buf, bytes, 0, &v), QJIT_OK);
            ck_assert_int_eq(qjit__weights_view_init(ctx, buf, bytes, 1, &v), QJIT_CORRUPT_WEIGHTS);
        }
    }

    /* Truncated, extended. */
    const size_t lengths[] = {bytes - 1, bytes - 4 * (size_t)N, bytes - 512, 65, 64};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
        ck_assert_msg(qjit_weights_inspect(ctx, good, lengths[i], NULL) == QJIT_CORRUPT_WEIGHTS, "length %zu",
                      lengths[i]);
    memcpy(buf, good, bytes);
    buf[bytes] = 0;
    ck_assert_int_eq(qjit_weights_inspect(ctx, buf, bytes + 1, NULL), QJIT_CORRUPT_WEIGHTS);
    ck_assert(strstr(ctx->last_error, "trailing") != NULL);
    ck_assert_int_eq(qjit_weights_inspect(ctx, buf, bytes + 16, NULL), QJIT_CORRUPT_WEIGHTS);
    /* Shorter than a header, or no buffer: an argument error (quant.h). */
    ck_assert_int_eq(qjit_weights_inspect(ctx, good, 63, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_weights_inspect(ctx, good, 0, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_weights_inspect(ctx, NULL, bytes, NULL), QJIT_INVALID_ARGUMENT);

    /* Headers with a valid checksum but a bad field. */
    struct { size_t offset; uint64_t value; int width; const char *what; } fields[] = {
        {8, 2, 4, "version"},      {12, 2, 4, "scheme"},         {12, 0, 4, "scheme"},
        {16, 40, 8, "N % 16"},     {16, 32, 8, "N smaller"},     {16, (uint64_t)-48, 8, "negative N"},
        {24, 352, 8, "K % 64"},    {24, 384, 8, "K larger"},     {32, 32, 4, "group % 64"},
        {32, 128, 4, "K % group"}, {32, (uint32_t)-64, 4, "negative group"}, {32, 0, 4, "group 0"},
        {36, 1, 4, "flags"},       {40, 0, 8, "payload_bytes"},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        memcpy(buf, good, bytes);
        put_le(buf + fields[i].offset, fields[i].value, fields[i].width);
        reseal_header(buf);
        ck_assert_msg(qjit_weights_inspect(ctx, buf, bytes, NULL) == QJIT_CORRUPT_WEIGHTS, "bad %s accepted",
                      fields[i].what);
    }
    /* A consistent header for a different payload size: the buffer length decides. */
    memcpy(buf, good, bytes);
    put_le(buf + 40, le64(buf + 40) + 1, 8);
    reseal_header(buf);
    ck_assert_int_eq(qjit_weights_inspect(ctx, buf, bytes, NULL), QJIT_CORRUPT_WEIGHTS);
    /* Bad magic, even with a resealed header. */
    memcpy(buf, good, bytes);
    buf[7] = '2';
    reseal_header(buf);
    ck_assert_int_eq(qjit_weights_inspect(ctx, buf, bytes, NULL), QJIT_CORRUPT_WEIGHTS);
    ck_assert(strstr(ctx->last_error, "magic") != NULL);

    ck_assert_int_eq(qjit_weights_inspect(ctx, good, bytes, NULL), QJIT_OK);
    free(W); free(good); free(buf);
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("quant");
    struct { const char *name; const TTest *test; } tests[] = {
        {"quantize", quantize_random_and_adversarial},
        {"fp32_extremes", quantize_fp32_extremes},
        {"brute_force", brute_force_u8_ranges},
        {"all_fp16", quantize_all_fp16_values},
        {"rounding", round_half_away_from_zero},
        {"pack_round_trip", pack_unpack_round_trip},
        {"layout", layout_hand_checked},
        {"lane_view", lane_view_dequantization},
        {"buffer", buffer_matches_unpacked},
        {"fp16_input", fp16_input_equals_fp32},
        {"nonfinite", nonfinite_rejected},
        {"bad_sizes", bad_sizes_rejected},
        {"capacity", capacity_too_small},
        {"corruption", corruption_detected},
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, tests[i].test);
        qt_add(s, tc, 0);
    }
    return s;
}
