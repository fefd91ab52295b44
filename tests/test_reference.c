/* test_reference.c -- FP16 conversions (base/fp16.c, and qjit.h's face of
 * them) and the CPU reference (runtime/reference.c): per-token activation
 * quantization, and the quantized GEMM over every scheme's packed weights,
 * against a naive GEMM
 * on the operand this file decodes itself from the documented formats
 * (runtime/packed.h, runtime/layout.h, each scheme file's header). */
#define _GNU_SOURCE
#include "harness.h"
#include "context.h"
#include "fp16.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LQQ QJIT_SCHEME_W4A8_LQQ
#define QOQ QJIT_SCHEME_W4A8_QOQ
#define IS QJIT_SCHEME_W4A8_IS
#define W8A8 QJIT_SCHEME_W8A8

/*------------------------------------------------------------------------
 * FP16
 *------------------------------------------------------------------------*/

/* The value of a finite half, from the definition (for the oracle below). */
static double half_value(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

START_TEST(half_to_float_all)
{
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t h = (uint16_t)i;
        float f = qjit__half_to_float(h);
        int e = (h >> 10) & 31, m = h & 1023;
        if (e == 31 && m != 0) {
            REQUIRE(isnan(f), "0x%04x should be NaN", h);
            uint16_t back = qjit__float_to_half(f);
            REQUIRE(((back >> 10) & 31) == 31 && (back & 1023) != 0, "NaN 0x%04x came back as 0x%04x", h, back);
            REQUIRE(back == h, "NaN payload 0x%04x came back as 0x%04x", h, back);
            continue;
        }
        if (e == 31)
            REQUIRE(isinf(f) && (f < 0) == ((h & 0x8000) != 0), "0x%04x should be %sInf", h, h & 0x8000 ? "-" : "+");
        else
            REQUIRE((double)f == half_value(h), "0x%04x -> %a, want %a", h, (double)f, half_value(h));
        REQUIRE((signbit(f) != 0) == ((h & 0x8000) != 0), "sign of 0x%04x", h);
        uint16_t back = qjit__float_to_half(f);
        REQUIRE(back == h, "0x%04x -> %a -> 0x%04x", h, (double)f, back);
    }
}
END_TEST

/* Oracle: the nearest half by binary search over the ordered magnitudes
 * (0x0000 .. 0x7C00, with Inf standing at 2^16 as IEEE's overflow rule puts
 * it), ties to the even bit pattern. Independent of fp16.c's bit tricks. */
static uint16_t oracle_half(float f)
{
    if (isnan(f))
        return 0x7E00;
    double a = fabs((double)f);
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    if (a >= 65536.0)
        return sign | 0x7C00;
    unsigned lo = 0, hi = 0x7C00;   /* value(lo) <= a < value(hi) */
    while (hi - lo > 1) {
        unsigned mid = (lo + hi) / 2;
        if (half_value((uint16_t)mid) <= a)
            lo = mid;
        else
            hi = mid;
    }
    double vlo = half_value((uint16_t)lo), vhi = hi == 0x7C00 ? 65536.0 : half_value((uint16_t)hi);
    double dlo = a - vlo, dhi = vhi - a;
    unsigned pick = dlo < dhi ? lo : dhi < dlo ? hi : (lo % 2 == 0 ? lo : hi);
    return (uint16_t)(sign | pick);
}

START_TEST(float_to_half_rounding)
{
    static const struct { float f; uint16_t h; } cases[] = {
        {0.0f, 0x0000},
        {-0.0f, 0x8000},
        {1.0f, 0x3C00},
        {-2.0f, 0xC000},
        {65504.0f, 0x7BFF},                      /* largest half */
        {65519.99f, 0x7BFF},                     /* below the overflow midpoint */
        {65520.0f, 0x7C00},                      /* the midpoint ties to even: Inf */
        {-65520.0f, 0xFC00},
        {1e10f, 0x7C00},
        {INFINITY, 0x7C00},
        {-INFINITY, 0xFC00},
        {0x1p-14f, 0x0400},                      /* smallest normal */
        {0x1p-24f, 0x0001},                      /* smallest subnormal */
        {0x1p-25f, 0x0000},                      /* half of it: tie to even 0 */
        {0x1.000002p-25f, 0x0001},               /* just above the tie */
        {0x1.8p-24f, 0x0002},                    /* 1.5 units: tie to even 2 */
        {0x1.4p-23f, 0x0002},                    /* 2.5 units: tie to even 2 */
        {0x1.ff8p-15f, 0x03FF},                  /* largest subnormal, 1023 units */
        {0x1.ffcp-15f, 0x0400},                  /* 1023.5 units: tie to even 0x400 */
        {0x1.ffbfep-15f, 0x03FF},                /* just below that tie */
        {1.0f + 0x1p-11f, 0x3C00},               /* tie between 1 and 1 + 2^-10: even */
        {1.0f + 0x1.8p-10f, 0x3C02},             /* tie between 0x3C01 and 0x3C02: even */
        {0x1.002002p+0f, 0x3C01},                /* 1 + 2^-11 + 2^-23: just above the tie */
        {0.1f, 0x2E66},
        {-3.14159265f, 0xC248},
        {1e-10f, 0x0000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t h = qjit__float_to_half(cases[i].f);
        ck_assert_msg(h == cases[i].h, "%a -> 0x%04x, want 0x%04x", (double)cases[i].f, h, cases[i].h);
        ck_assert_msg(oracle_half(cases[i].f) == cases[i].h, "oracle disagrees on %a", (double)cases[i].f);
    }
    ck_assert(isnan(qjit__half_to_float(qjit__float_to_half(NAN))));
    ck_assert(isnan(qjit__half_to_float(qjit__float_to_half(qt_float_of(0x7F800001u)))));   /* low payload only */
    ck_assert(isnan(qjit__half_to_float(qjit__float_to_half(qt_float_of(0xFFC00000u)))));

    /* Random floats around the half range, and every exact midpoint between
     * neighbouring halves, against the oracle. */
    qt_rng r = qt_rng_make(11);
    for (int i = 0; i < 300000; i++) {
        uint32_t exponent = 95 + (uint32_t)(qt_next(&r) % 50);     /* 2^-32 .. 2^17 */
        uint32_t u = (uint32_t)(qt_next(&r) & 0x807FFFFFu) | exponent << 23;
        float f = qt_float_of(u);
        REQUIRE(qjit__float_to_half(f) == oracle_half(f), "%a (0x%08x) -> 0x%04x, oracle 0x%04x", (double)f, u,
                qjit__float_to_half(f), oracle_half(f));
    }
    for (uint32_t h = 0; h < 0x7C00; h++) {
        double mid = (half_value((uint16_t)h) + (h + 1 == 0x7C00 ? 65536.0 : half_value((uint16_t)(h + 1)))) / 2;
        float f = (float)mid;                   /* exact: a half midpoint has at most 12 significant bits */
        REQUIRE((double)f == mid, "midpoint %a not exact", mid);
        uint16_t want = (uint16_t)(h % 2 == 0 ? h : h + 1);
        REQUIRE(qjit__float_to_half(f) == want, "midpoint above 0x%04x -> 0x%04x, want 0x%04x", h,
                qjit__float_to_half(f), want);
        REQUIRE(qjit__float_to_half(-f) == (want | 0x8000), "negative midpoint above 0x%04x", h);
    }
}
END_TEST

/* qjit.h's conversions are fp16.c's: every FP16 and BF16 bit pattern, and
 * floats of every exponent (NaN, Inf and ties included). */
START_TEST(public_conversions)
{
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t h = (uint16_t)i;
        float f = qjit_float_from_half(h), b = qjit_float_from_bf16(h);
        uint32_t fu, fw, bu, bw;
        float want_f = qjit__half_to_float(h), want_b = qjit__bf16_to_float(h);
        memcpy(&fu, &f, 4);
        memcpy(&fw, &want_f, 4);
        memcpy(&bu, &b, 4);
        memcpy(&bw, &want_b, 4);
        REQUIRE(fu == fw, "qjit_float_from_half(0x%04x) = 0x%08x, fp16.c 0x%08x", h, fu, fw);
        REQUIRE(bu == bw, "qjit_float_from_bf16(0x%04x) = 0x%08x, fp16.c 0x%08x", h, bu, bw);
        REQUIRE(qjit_half_from_float(f) == qjit__float_to_half(f), "qjit_half_from_float(%a)", (double)f);
        REQUIRE(qjit_bf16_from_float(b) == qjit__float_to_bf16(b), "qjit_bf16_from_float(%a)", (double)b);
    }
    qt_rng r = qt_rng_make(12);
    for (int i = 0; i < 300000; i++) {
        float f = qt_float_of((uint32_t)qt_next(&r));
        REQUIRE(qjit_half_from_float(f) == qjit__float_to_half(f), "qjit_half_from_float(%a)", (double)f);
        REQUIRE(qjit_bf16_from_float(f) == qjit__float_to_bf16(f), "qjit_bf16_from_float(%a)", (double)f);
    }
    ck_assert_uint_eq(qjit_half_from_float(65520.0f), 0x7C00);      /* ties to even: Inf */
    ck_assert_uint_eq(qjit_bf16_from_float(1.0f + 0x1p-8f), 0x3F80); /* tie between 1 and 1 + 2^-7: even */
    ck_assert(isnan(qjit_float_from_bf16(qjit_bf16_from_float(NAN))));
}
END_TEST

/*------------------------------------------------------------------------
 * Activations
 *------------------------------------------------------------------------*/

/* Rows of varied kinds: normal at a random scale, all zero, one FP16-max
 * outlier, FP16 subnormals only, constant. */
static void make_activations(qt_rng *r, int64_t M, int64_t K, uint16_t *X)
{
    for (int64_t m = 0; m < M; m++) {
        int kind = (int)(m % 5);
        double sigma = exp(qt_uniform(r) * 12.0 - 8.0);
        int64_t spot = (int64_t)(qt_next(r) % (uint64_t)K);
        for (int64_t k = 0; k < K; k++) {
            double v;
            switch (kind) {
            case 0: v = qt_normal(r) * sigma; break;
            case 1: v = 0.0; break;
            case 2: v = k == spot ? -65504.0 : qt_normal(r) * 3.0; break;
            case 3: v = qt_normal(r) * 2e-6; break;
            default: v = 0.75 * (1 + (double)(m % 3)); break;
            }
            X[m * K + k] = qjit__float_to_half((float)fmax(fmin(v, 65504.0), -65504.0));
        }
    }
}

START_TEST(activations_quantize)
{
    /* _i 0: INT8 (the default entry point), 1: INT4 (limit 7). */
    const int bits = _i ? 4 : 8;
    const float limit = _i ? 7.0f : 127.0f;
    qt_rng r = qt_rng_make(12 + (uint64_t)_i);
    static const int64_t shapes[][2] = {{1, 64}, {7, 192}, {33, 320}, {20, 4096}, {5, 1}, {3, 100}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        int64_t M = shapes[si][0], K = shapes[si][1];
        uint16_t *X = qt_xmalloc(sizeof(uint16_t) * (size_t)(M * K));
        int8_t *Xq = qt_xmalloc((size_t)(M * K));
        float *sx = qt_xmalloc(sizeof(float) * (size_t)M);
        make_activations(&r, M, K, X);
        memset(Xq, 0x7F, (size_t)(M * K));
        for (int64_t m = 0; m < M; m++)
            sx[m] = NAN;
        ck_assert_int_eq(bits == 8 ? qjit_reference_quantize_activations(NULL, M, K, X, Xq, sx)
                                   : qjit_reference_quantize_activations_bits(NULL, bits, M, K, X, Xq, sx),
                         QJIT_OK);
        for (int64_t m = 0; m < M; m++) {
            double amax = 0;
            for (int64_t k = 0; k < K; k++)
                amax = fmax(amax, fabs((double)qjit__half_to_float(X[m * K + k])));
            if (amax == 0)
                REQUIRE(sx[m] == 1.0f, "zero row %lld: sx = %g", (long long)m, (double)sx[m]);
            else
                REQUIRE(sx[m] == (float)amax / limit, "row %lld: sx = %a, want %a", (long long)m, (double)sx[m],
                        (double)((float)amax / limit));
            /* Float slack, derived as for the weights: quotient rounding
             * (amax 2^-24) plus clamping where sx rounded below amax / limit. */
            double slack = amax * 0x1p-24 + fmax(0.0, amax - limit * (double)sx[m]);
            int saw_max = amax == 0;
            for (int64_t k = 0; k < K; k++) {
                double x = qjit__half_to_float(X[m * K + k]);
                int q = Xq[m * K + k];
                REQUIRE(q >= -limit && q <= limit, "Xq[%lld,%lld] = %d", (long long)m, (long long)k, q);
                if (amax == 0)
                    REQUIRE(q == 0, "zero row %lld has Xq = %d", (long long)m, q);
                double err = fabs(x - q * (double)sx[m]);
                REQUIRE(err <= 0.5 * sx[m] + slack, "|x - Xq sx| = %g > sx/2 at [%lld,%lld] (x=%a sx=%a q=%d)", err,
                        (long long)m, (long long)k, x, (double)sx[m], q);
                /* exactly the float formula: clamp(roundf(x / sx)) */
                volatile float quotient = (float)x / sx[m];
                float want = fminf(fmaxf(roundf(quotient), -limit), limit);
                REQUIRE(q == (int)want, "Xq[%lld,%lld] = %d, formula gives %d", (long long)m, (long long)k, q, (int)want);
                if (fabs(x) == amax && q == (x > 0 ? (int)limit : -(int)limit))
                    saw_max = 1;
            }
            REQUIRE(saw_max, "row %lld: its largest |x| does not map to +-%d", (long long)m, (int)limit);
        }
        free(X); free(Xq); free(sx);
    }
    /* Only 8 and 4 bits; a refusal writes nothing. */
    uint16_t one = 0x3C00;
    int8_t q1 = 99;
    float s1 = -1;
    ck_assert_int_eq(qjit_reference_quantize_activations_bits(NULL, _i ? 16 : 3, 1, 1, &one, &q1, &s1),
                     QJIT_INVALID_ARGUMENT);
    ck_assert(q1 == 99 && s1 == -1);
}
END_TEST

/* Every FP16 value up to a row maximum, for several maxima, against the
 * exact float formula: catches a reciprocal multiply or a double division
 * in place of the float division (they round differently on some inputs). */
START_TEST(activations_all_fp16_values)
{
    qt_rng r = qt_rng_make(17);
    uint16_t maxima[12] = {0x3C00, 0x7BFF, 0x0001, 0x03FF, 0x57F0, 0x2E66};
    uint16_t *X = qt_xmalloc(sizeof(uint16_t) * 65536);
    int8_t *Xq = qt_xmalloc(65536);
    for (int i = 6; i < 12; i++)
        maxima[i] = (uint16_t)(0x0400 + qt_next(&r) % (0x7BFF - 0x0400));
    for (int i = 0; i < 12; i++) {
        float amax = qjit__half_to_float(maxima[i]), sx;
        int64_t K = 0;
        X[K++] = (uint16_t)(maxima[i] | 0x8000);
        for (uint32_t h = 0; h < 65536; h++) {
            float v = qjit__half_to_float((uint16_t)h);
            if (isfinite(v) && fabsf(v) <= amax)
                X[K++] = (uint16_t)h;
        }
        ck_assert_int_eq(qjit_reference_quantize_activations(NULL, 1, K, X, Xq, &sx), QJIT_OK);
        ck_assert(sx == amax / 127.0f);
        ck_assert_int_eq(Xq[0], -127);
        for (int64_t k = 0; k < K; k++) {
            volatile float quotient = qjit__half_to_float(X[k]) / sx;
            float want = fminf(fmaxf(roundf(quotient), -127.0f), 127.0f);
            REQUIRE(Xq[k] == (int)want, "max %a: x = %a -> %d, formula %d", (double)amax,
                    (double)qjit__half_to_float(X[k]), Xq[k], (int)want);
        }
    }
    free(X);
    free(Xq);
}
END_TEST

START_TEST(activations_round_half_away)
{
    /* max 127 makes sx exactly 1, so Xq = round(x) on halves exact in FP16 */
    const float x[] = {127.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 126.5f, -126.5f, 0.25f, -0.75f};
    const int want[] = {127, 1, -1, 2, -2, 3, -3, 127, -127, 0, -1};
    enum { K = sizeof x / sizeof x[0] };
    uint16_t X[K];
    int8_t Xq[K];
    float sx;
    for (int k = 0; k < K; k++)
        X[k] = qjit__float_to_half(x[k]);
    ck_assert_int_eq(qjit_reference_quantize_activations(NULL, 1, K, X, Xq, &sx), QJIT_OK);
    ck_assert(sx == 1.0f);
    for (int k = 0; k < K; k++)
        ck_assert_msg(Xq[k] == want[k], "round(%g) = %d, want %d", (double)x[k], Xq[k], want[k]);
}
END_TEST

/* templates/lib/act_div.cu's steps, in C (the build has -ffp-contract=off,
 * so each operation rounds as written): the GPU activation kernels'
 * round(x / s) without a division a value. */
typedef struct act_div {
    float s, r, p;
} act_div;

/* a + b rounded towards zero (__fadd_rz): the double sum is exact for the
 * operands used here (a below 2^8 with b = 0.5, or an integer with b =
 * 2^23), except for a below 2^-29 with b = 0.5, where any rounding of it
 * still truncates to 0.5. */
static float add_rz(float a, float b)
{
    double e = (double)a + (double)b;
    float f = (float)e;
    if (fabs((double)f) > fabs(e))
        f = nextafterf(f, 0.0f);
    return f;
}

static act_div act_div_of(float s, int bf16)
{
    act_div d = {s, 0.0f, 1.0f};
    if (bf16) {   /* p = 2^(127 - e), e the biased exponent (p s in [1, 2), or normal for a subnormal s) */
        uint32_t u, e;
        memcpy(&u, &s, 4);
        e = u >> 23 & 0xFFu;
        u = (254u - e) << 23;
        memcpy(&d.p, &u, 4);
        d.s = s * d.p;
    }
    if (s > FLT_MAX) {
        d.s = 1.0f;
        d.p = 1.0f;
    } else {
        d.r = 1.0f / d.s;
    }
    return d;
}

/* The FMAs on the hardware where it has them (libm's fmaf is exact but slow). */
#if defined(__GNUC__) && defined(__x86_64__)
#define ACT_FMA_TARGET __attribute__((target("fma")))
#else
#define ACT_FMA_TARGET
#endif

static ACT_FMA_TARGET int act_quantize(float x, act_div d, int bf16, float limit)
{
    if (bf16)
        x = x * d.p;
    const float q0 = x * d.r, q = fmaf(fmaf(-q0, d.s, x), d.r, q0);
    const float v = q > -limit ? q : -limit;   /* fmaxf: NaN -> -limit */
    const float y = add_rz(fabsf(v), 0.5f), t = y < limit ? y : limit;
    const float n = add_rz(t, 8388608.0f) - 8388608.0f;
    return (int)copysignf(n, v);
}

/* What the kernels computed before (and the reference computes, for finite
 * tokens): an IEEE division and roundf, clamped (fmaxf first: NaN ->
 * -limit). */
static int act_divide(float x, float s, float limit)
{
    volatile float quotient = x / s;
    const float v = roundf(quotient), c = v > -limit ? v : -limit;
    return (int)(c < limit ? c : limit);
}

/* Every step-th scale (1: all). */
static ACT_FMA_TARGET long act_division_sweep(int bf16, const float *vals, int n, int step, long *pairs)
{
    long bad = 0;
    for (int li = 0; li < 2; li++) {
        const float lim = li ? 7.0f : 127.0f;   /* the part's limit the scale came from */
        for (int a = 1; a < n; a += step) {
            /* a row's scale: its largest |x| over a part's limit */
            const float s = vals[a] / lim;
            const act_div d = act_div_of(s, bf16);
            for (int h = 0; h < n && vals[h] <= 130.0f * s; h++) {
                const float x = vals[h];
                (*pairs)++;
                /* Equal after the clamp to 127, equal after any smaller
                 * one; the 7 and the sign are checked on a sample. */
                const int got = act_quantize(x, d, bf16, 127.0f), want = act_divide(x, s, 127.0f);
                if (got != want || (h % 61 == 0 && (act_quantize(-x, d, bf16, 7.0f) != act_divide(-x, s, 7.0f) ||
                                                    act_quantize(-x, d, bf16, 127.0f) != -want))) {
                    if (bad++ < 5)
                        fprintf(stderr, "%s: s = %a, x = %a: %d, the division %d\n", bf16 ? "BF16" : "FP16",
                                (double)s, (double)x, got, want);
                }
            }
        }
    }
    return bad;
}

/* Every value and scale a token row of FP16 (_i = 0) or BF16 (_i = 1) can
 * give: each positive finite value over each limit as the scale (one-part
 * rows, and the parts' scales of two-part ones), each value up to 130
 * times it, each limit; then the non-finite rows the kernels may be given.
 * The 2.2e9 pairs take ~30 s optimized; an unoptimized build (the
 * sanitizer pass, there for memory and undefined behaviour, not for this
 * arithmetic) takes every 97th scale. */
START_TEST(act_division_is_exact)
{
    const int bf16 = _i;
    float *vals = qt_xmalloc(sizeof(float) * 0x7F80);
    int n = 0;
    for (uint32_t h = 0; h < (bf16 ? 0x7F80u : 0x7C00u); h++)   /* 0 and the positive finite values, ascending */
        vals[n++] = bf16 ? qjit__bf16_to_float((uint16_t)h) : qjit__half_to_float((uint16_t)h);
#ifdef __OPTIMIZE__
    const int step = 1;
#else
    const int step = 97;
#endif
    long pairs = 0, bad = act_division_sweep(bf16, vals, n, step, &pairs);
    ck_assert_msg(bad == 0, "%ld of %ld (value, scale) pairs differ from the division", bad, pairs);
    ck_assert(pairs > 1000000000L / 2 / step);
    /* An infinite scale (a row with an infinite value): 0, NaN for the infinite value (-limit). */
    const act_div dinf = act_div_of(INFINITY, bf16);
    for (int h = 0; h < n; h += 7)
        ck_assert_int_eq(act_quantize(vals[h], dinf, bf16, 127.0f), act_divide(vals[h], INFINITY, 127.0f));
    ck_assert_int_eq(act_quantize(INFINITY, dinf, bf16, 127.0f), act_divide(INFINITY, INFINITY, 127.0f));
    ck_assert_int_eq(act_quantize(-INFINITY, dinf, bf16, 7.0f), -7);
    /* A NaN value, or a NaN scale: -limit, as the clamp of roundf(NaN). */
    ck_assert_int_eq(act_quantize(NAN, act_div_of(1.0f, bf16), bf16, 127.0f), -127);
    ck_assert_int_eq(act_quantize(1.0f, act_div_of(NAN, bf16), bf16, 7.0f), -7);
    free(vals);
}
END_TEST

START_TEST(activations_bad_input)
{
    qjit_context *ctx = qt_bare_context();
    int64_t M = 4, K = 64;
    uint16_t X[4 * 64];
    int8_t Xq[4 * 64];
    float sx[4];
    qt_rng r = qt_rng_make(13);
    const uint16_t bad[] = {0x7E00, 0x7C00, 0xFC00, 0xFD01};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        make_activations(&r, M, K, X);
        int64_t m = (int64_t)(qt_next(&r) % 4), k = (int64_t)(qt_next(&r) % 64);
        X[m * K + k] = bad[i];
        memset(Xq, 0x5A, sizeof Xq);
        memset(sx, 0x5A, sizeof sx);
        ck_assert_int_eq(qjit_reference_quantize_activations(ctx, M, K, X, Xq, sx), QJIT_INVALID_ARGUMENT);
        char where[48];
        snprintf(where, sizeof where, "[%lld, %lld]", (long long)m, (long long)k);
        ck_assert_msg(strstr(ctx->last_error, where) != NULL, "'%s' does not name %s", ctx->last_error, where);
        for (size_t j = 0; j < sizeof Xq; j++)
            ck_assert_int_eq((uint8_t)Xq[j], 0x5A);
        for (size_t j = 0; j < 4; j++)
            ck_assert_uint_eq(qt_bits_of(sx[j]), 0x5A5A5A5Au);
    }
    make_activations(&r, M, K, X);
    ck_assert_int_eq(qjit_reference_quantize_activations(ctx, 0, K, X, Xq, sx), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_reference_quantize_activations(ctx, M, 0, X, Xq, sx), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_reference_quantize_activations(ctx, -1, K, X, Xq, sx), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_reference_quantize_activations(ctx, M, K, NULL, Xq, sx), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_reference_quantize_activations(ctx, M, K, X, NULL, sx), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_reference_quantize_activations(ctx, M, K, X, Xq, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_reference_quantize_activations(ctx, M, K, X, Xq, sx), QJIT_OK);
}
END_TEST


/* BF16: the conversions (all 65536 patterns widen exactly and round-trip;
 * float -> bf16 rounds to nearest even), the layer's activation
 * quantization of BF16 tokens equal to that of the same values given as
 * FP16 (values both formats hold exactly), BF16 NaN and infinity refused,
 * unknown dtypes refused; weights given as BF16 pack like their FP32 values. */
START_TEST(bf16_tokens_and_weights)
{
    for (uint32_t b = 0; b < 65536; b++) {
        const float f = qjit__bf16_to_float((uint16_t)b);
        uint32_t bits;
        memcpy(&bits, &f, 4);
        ck_assert_uint_eq(bits, b << 16);
        if (!isnan(f))
            ck_assert_uint_eq(qjit__float_to_bf16(f), b);
        else
            ck_assert(isnan(qjit__bf16_to_float(qjit__float_to_bf16(f))));
    }
    ck_assert_uint_eq(qjit__float_to_bf16(1.0f + 0x1p-8f), 0x3F80u);           /* a tie: to even */
    ck_assert_uint_eq(qjit__float_to_bf16(1.0f + 0x1p-8f + 0x1p-16f), 0x3F81u);
    ck_assert_uint_eq(qjit__float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82u);         /* a tie: to even, up */

    qjit_context *ctx = qt_bare_context();
    const int64_t N = 64, K = 256, M = 5;
    qt_rng r = qt_rng_make(29);
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    uint16_t *Wb = qt_xmalloc(2 * (size_t)(N * K));
    for (int64_t i = 0; i < N * K; i++) {
        Wb[i] = qjit__float_to_bf16((float)(0.05 * qt_normal(&r)));
        W[i] = qjit__bf16_to_float(Wb[i]);
    }
    size_t bytes;
    ck_assert_int_eq(qjit_packed_size(QJIT_SCHEME_W4A8_LQQ, 128, N, K, &bytes), QJIT_OK);
    uint8_t *a = qt_xmalloc(bytes), *b = qt_xmalloc(bytes);
    ck_assert_int_eq(qjit_quantize_weights(ctx, QJIT_SCHEME_W4A8_LQQ, 128, W, QJIT_DTYPE_F32, N, K, a, bytes, NULL),
                     QJIT_OK);
    ck_assert_int_eq(qjit_quantize_weights(ctx, QJIT_SCHEME_W4A8_LQQ, 128, Wb, QJIT_DTYPE_BF16, N, K, b, bytes, NULL),
                     QJIT_OK);
    ck_assert_int_eq(memcmp(a, b, bytes), 0);
    ck_assert_int_eq(qjit_quantize_weights(ctx, QJIT_SCHEME_W4A8_LQQ, 128, Wb, (qjit_dtype)9, N, K, b, bytes, NULL),
                     QJIT_INVALID_ARGUMENT);

    /* Tokens: small integers times powers of two, exact in FP16 and BF16. */
    uint16_t Xh[5 * 256], Xb[5 * 256];
    int8_t q1[5 * 256], q2[5 * 256];
    float s1[5], s2[5];
    for (int64_t i = 0; i < M * K; i++) {
        const float v = (float)((int)(qt_next(&r) % 255) - 127) * 0x1p-6f;
        Xh[i] = qjit__float_to_half(v);
        Xb[i] = qjit__float_to_bf16(v);
        ck_assert(qjit__half_to_float(Xh[i]) == qjit__bf16_to_float(Xb[i]));
    }
    ck_assert_int_eq(qjit_reference_quantize_activations_dtype(ctx, a, bytes, M, QJIT_DTYPE_F16, Xh, q1, s1), QJIT_OK);
    ck_assert_int_eq(qjit_reference_quantize_activations_dtype(ctx, a, bytes, M, QJIT_DTYPE_BF16, Xb, q2, s2), QJIT_OK);
    ck_assert_int_eq(memcmp(q1, q2, sizeof q1), 0);
    ck_assert_int_eq(memcmp(s1, s2, sizeof s1), 0);
    /* BF16 NaN and infinity (FP16 would read these bits as finite). */
    const uint16_t bad[] = {0x7FC0, 0x7F80, 0xFF80, 0x7F81};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint16_t saved = Xb[7];
        Xb[7] = bad[i];
        memset(q2, 0x5A, sizeof q2);
        ck_assert_int_eq(qjit_reference_quantize_activations_dtype(ctx, a, bytes, M, QJIT_DTYPE_BF16, Xb, q2, s2),
                         QJIT_INVALID_ARGUMENT);
        ck_assert_ptr_nonnull(strstr(ctx->last_error, "BF16"));
        ck_assert_int_eq((uint8_t)q2[0], 0x5A);
        Xb[7] = saved;
    }
    ck_assert_int_eq(qjit_reference_quantize_activations_dtype(ctx, a, bytes, M, QJIT_DTYPE_F32, Xb, q2, s2),
                     QJIT_INVALID_ARGUMENT);
    free(W); free(Wb); free(a); free(b);
}
END_TEST

/*------------------------------------------------------------------------
 * GEMM: the test's own decoder of a packed buffer
 *------------------------------------------------------------------------*/

/* A quantized layer and what the kernels compute from it, decoded here. */
typedef struct layer {
    qjit_scheme scheme;
    int group, G;
    int64_t N, K, groups;
    uint8_t *packed;
    size_t bytes;
    int8_t *op;          /* N x K: the INT8 MMA operand (w4a8-is: the group's INT4 values) */
    int32_t *S;          /* N x groups: w4a8-is's integer scales, else NULL */
    float *scale;        /* N: the epilogue's per-channel scale */
    int32_t *zero;       /* N: w4a8-qoq per channel's zero point, else 0 */
} layer;

/* The payload of the section called `name`, from packed.h's version-2
 * header: a table of {name[16], offset, bytes} at 64, the payload at
 * header_bytes. */
static const uint8_t *section(const uint8_t *b, const char *name, uint64_t *bytes)
{
    uint32_t n = qt_le32(b + 40);
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = b + 64 + 32 * i;
        if (strncmp((const char *)e, name, 16) == 0) {
            *bytes = qt_le64(e + 24);
            return b + qt_le32(b + 44) + qt_le64(e + 16);
        }
    }
    ck_abort_msg("no section %s", name);
    return NULL;
}

/* layout.h, element by element. */
static size_t block_pos(int64_t n, int64_t k, int64_t K, int bits, int *high)
{
    int64_t block = n / 16 * (K / 64) + k / 64;
    int r = (int)(n % 16), c = (int)(k % 64);
    int g = r % 8, kk = c / 32, h = (c / 16) % 2, t = (c / 4) % 4, j = c % 4;
    *high = r >= 8;
    if (bits == 4)
        return (size_t)block * 512 + (size_t)(4 * g + t) * 16 + (size_t)(2 * kk + h) * 4 + (size_t)j;
    return (size_t)block * 1024 + (size_t)kk * 512 + (size_t)(4 * g + t) * 16 + (size_t)(2 * h + *high) * 4 +
           (size_t)j;
}

static void decode_layer(layer *L)
{
    const uint8_t *b = L->packed;
    ck_assert(memcmp(b, "QJITWTS1", 8) == 0 && qt_le32(b + 8) == 2);
    L->scheme = (qjit_scheme)qt_le32(b + 12);
    L->N = (int64_t)qt_le64(b + 16);
    L->K = (int64_t)qt_le64(b + 24);
    L->group = (int32_t)qt_le32(b + 32);
    L->G = L->group ? L->group : (int)L->K;
    L->groups = L->K / L->G;
    int64_t N = L->N, K = L->K;
    uint64_t qbytes, gbytes = 0, sbytes, zbytes = 0;
    const uint8_t *qw = section(b, "qweight", &qbytes), *sc = section(b, "scale", &sbytes);
    const uint8_t *gp = L->scheme != W8A8 && L->scheme != QJIT_SCHEME_W4A4 ? section(b, "gparams", &gbytes) : NULL;
    const uint8_t *zp = L->scheme == QOQ ? section(b, "zero", &zbytes) : NULL;
    ck_assert_uint_eq(sbytes, 4 * (uint64_t)N);
    L->op = qt_xmalloc((size_t)(N * K));
    L->S = L->scheme == IS ? qt_xmalloc(sizeof(int32_t) * (size_t)(N * L->groups)) : NULL;
    L->scale = qt_xmalloc(sizeof(float) * (size_t)N);
    L->zero = calloc((size_t)N, sizeof(int32_t));
    ck_assert(L->zero != NULL);
    for (int64_t n = 0; n < N; n++) {
        uint32_t u = qt_le32(sc + 4 * n);
        memcpy(&L->scale[n], &u, 4);
        if (zbytes)
            L->zero[n] = (int32_t)qt_le32(zp + 4 * n);
        for (int64_t k = 0; k < K; k++) {
            int high;
            int64_t gi = k / L->G;
            const uint8_t *e = gbytes ? gp + (size_t)((n / 16) * L->groups + gi) * 32 + 4 * (n % 8) + 2 * (n % 16 / 8)
                                      : NULL;
            int v;
            if (L->scheme == W8A8) {
                v = (int8_t)qw[block_pos(n, k, K, 8, &high)];
            } else {
                uint8_t byte = qw[block_pos(n, k, K, 4, &high)];
                int q4 = high ? byte >> 4 : byte & 15;
                if (L->scheme == LQQ)
                    v = (int8_t)(uint8_t)(((q4 * e[0] + e[1]) & 0xFF) ^ 0x80);     /* (Q4 s + a) ^ 0x80 */
                else if (L->scheme == QOQ && L->group)
                    v = (int8_t)(uint8_t)((q4 * e[0] - e[1]) & 0xFF);            /* Q4 s1 - z s1, mod 256 */
                else if (L->scheme == QOQ)
                    v = q4;                                                      /* zero point in the epilogue */
                else
                    v = q4 - 8;                                                  /* offset binary (is, w4a4) */
                if (L->scheme == IS && k % L->G == 0)
                    L->S[n * L->groups + gi] = e[0] | e[1] << 8;
            }
            L->op[n * K + k] = (int8_t)v;
        }
    }
}

static layer quantize_layer(qjit_scheme s, int group, const float *W, int64_t N, int64_t K,
                            const qjit_quantize_options *opts)
{
    layer L;
    memset(&L, 0, sizeof L);
    ck_assert_int_eq(qjit_packed_size(s, group, N, K, &L.bytes), QJIT_OK);
    L.packed = qt_xmalloc(L.bytes);
    qjit_status st = qjit_quantize_weights_ex(NULL, s, group, W, QJIT_DTYPE_F32, N, K, opts, L.packed, L.bytes, NULL);
    ck_assert_msg(st == QJIT_OK, "quantize %s g=%d: %s", qjit_scheme_name(s), group, qjit_status_name(st));
    decode_layer(&L);
    ck_assert(L.scheme == s && L.group == group && L.N == N && L.K == K);
    return L;
}

/* Random weights at a per-row scale, with an outlier in every fifth row. */
static layer make_layer(qt_rng *r, qjit_scheme s, int group, int64_t N, int64_t K)
{
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    for (int64_t n = 0; n < N; n++) {
        double sigma = exp(qt_uniform(r) * 6 - 3);
        for (int64_t k = 0; k < K; k++)
            W[n * K + k] = (float)(qt_normal(r) * sigma);
        if (n % 5 == 2)
            W[n * K + (int64_t)(qt_next(r) % (uint64_t)K)] = (float)(40 * sigma);
    }
    layer L = quantize_layer(s, group, W, N, K, NULL);
    free(W);
    return L;
}

static void layer_free(layer *L)
{
    free(L->packed);
    free(L->op);
    free(L->S);
    free(L->scale);
    free(L->zero);
}

static void make_xq(qt_rng *r, int64_t M, int64_t K, int8_t *Xq, float *sx)
{
    for (int64_t i = 0; i < M * K; i++)
        Xq[i] = (int8_t)((int)(qt_next(r) % 255) - 127);
    for (int64_t m = 0; m < M; m++)
        sx[m] = (float)(exp(qt_uniform(r) * 10 - 5) / 127);
}

/* The naive GEMM, in int64 so nothing overflows unseen: the accumulator
 * the kernels hold (for w4a8-is, each group's sum times its integer scale)
 * and the epilogue's integer (minus zw sum_k Xq for w4a8-qoq per channel). */
static void naive(const layer *L, const int8_t *x, int64_t n, int64_t *acc, int64_t *epi)
{
    int64_t K = L->K, sum = 0, rowsum = 0;
    const int8_t *w = L->op + n * K;
    for (int64_t gi = 0; gi < L->groups; gi++) {
        int64_t part = 0;
        for (int64_t k = gi * L->G; k < (gi + 1) * L->G; k++)
            part += (int64_t)x[k] * w[k];
        sum += L->S ? part * L->S[n * L->groups + gi] : part;
    }
    for (int64_t k = 0; k < K; k++)
        rowsum += x[k];
    *acc = sum;
    *epi = sum - (int64_t)L->zero[n] * rowsum;
}

/* Runs the reference on poisoned outputs and checks every element against
 * the naive GEMM: acc bit for bit as the INT32 the GPU holds (the exact
 * sum modulo 2^32; `wraps` says whether sums beyond INT32 are expected);
 * Y bit for bit against float(epilogue integer) * (sx * scale), and when
 * nothing wrapped within a stated relative bound of the exact double
 * product: three float roundings, |Y - e sx s| <= 3 2^-24 |e sx s| (+1e-38
 * absolute for underflow). */
static void check_gemm(const char *what, const layer *L, int64_t M, const int8_t *Xq, const float *sx, int wraps)
{
    int64_t N = L->N, K = L->K;
    int32_t *acc = qt_xmalloc(sizeof(int32_t) * (size_t)(M * N));
    float *Y = qt_xmalloc(sizeof(float) * (size_t)(M * N));
    memset(acc, 0xEE, sizeof(int32_t) * (size_t)(M * N));
    for (int64_t i = 0; i < M * N; i++)
        Y[i] = NAN;
    qjit_status st = qjit_reference_gemm(NULL, L->packed, L->bytes, M, Xq, sx, acc, Y);
    ck_assert_msg(st == QJIT_OK, "%s: %s", what, qjit_status_name(st));
    double ymax = 0;
    int wrapped = 0;
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int64_t want, epi;
            naive(L, Xq + m * K, n, &want, &epi);
            int out_of_range = want < INT32_MIN || want > INT32_MAX || epi < INT32_MIN || epi > INT32_MAX;
            wrapped |= out_of_range;
            REQUIRE(wraps || !out_of_range, "%s: sum %lld beyond INT32 in a layer that must not wrap", what,
                    (long long)want);
            int32_t want32 = (int32_t)(uint32_t)(uint64_t)want, epi32 = (int32_t)(uint32_t)(uint64_t)epi;
            REQUIRE(acc[m * N + n] == want32, "%s: acc[%lld,%lld] = %d, want %d (seed %llu)", what, (long long)m,
                    (long long)n, acc[m * N + n], want32, (unsigned long long)qt_seed());
            float y = Y[m * N + n], ss = sx[m] * L->scale[n];
            volatile float formula = (float)epi32 * ss;
            REQUIRE(qt_bits_of(y) == qt_bits_of(formula), "%s: Y[%lld,%lld] = %a, float(%d) * (sx * s) = %a", what,
                    (long long)m, (long long)n, (double)y, epi32, (double)formula);
            if (!out_of_range) {
                double exact = (double)epi * sx[m] * L->scale[n];
                REQUIRE(fabs(y - exact) <= 3 * 0x1p-24 * fabs(exact) + 1e-38, "%s: Y[%lld,%lld] = %a vs %a", what,
                        (long long)m, (long long)n, (double)y, exact);
                ymax = fmax(ymax, fabs(exact));
            }
        }
    ck_assert_msg(wraps || ymax > 0, "%s: all outputs zero, the test proves nothing", what);
    ck_assert_msg(wrapped == wraps, "%s: the sums %s INT32, the test meant them %s", what,
                  wrapped ? "leave" : "stay in", wraps ? "to leave it" : "to stay in it");

    /* The outputs one at a time match the outputs asked for together. */
    int32_t *acc2 = qt_xmalloc(sizeof(int32_t) * (size_t)(M * N));
    float *Y2 = qt_xmalloc(sizeof(float) * (size_t)(M * N));
    ck_assert_int_eq(qjit_reference_gemm(NULL, L->packed, L->bytes, M, Xq, sx, acc2, NULL), QJIT_OK);
    ck_assert_int_eq(qjit_reference_gemm(NULL, L->packed, L->bytes, M, Xq, sx, NULL, Y2), QJIT_OK);
    ck_assert_msg(memcmp(acc, acc2, sizeof(int32_t) * (size_t)(M * N)) == 0, "%s: acc-only run differs", what);
    ck_assert_msg(memcmp(Y, Y2, sizeof(float) * (size_t)(M * N)) == 0, "%s: Y-only run differs", what);

    /* Row by row (M = 1: the leftover-token kernel, other threading). */
    for (int64_t m = 0; m < M; m++)
        ck_assert_int_eq(qjit_reference_gemm(NULL, L->packed, L->bytes, 1, Xq + m * K, sx + m, acc2 + m * N,
                                             Y2 + m * N),
                         QJIT_OK);
    ck_assert_msg(memcmp(acc, acc2, sizeof(int32_t) * (size_t)(M * N)) == 0, "%s: row-by-row acc differs", what);
    ck_assert_msg(memcmp(Y, Y2, sizeof(float) * (size_t)(M * N)) == 0, "%s: row-by-row Y differs", what);
    free(acc); free(Y); free(acc2); free(Y2);
}

START_TEST(gemm_matches_naive)
{
    static const struct { int64_t M, N, K; } shapes[] = {
        {1, 16, 256},   {7, 48, 768},   {33, 80, 512},  {5, 16, 256},   {64, 272, 1024},
        {3, 1040, 256}, {9, 16, 8192},  {2, 528, 512},  {4, 32, 320},   {6, 16, 192},
    };
    const qt_config c = qt_configs[_i];
    qt_rng r = qt_rng_make(14 + 100 * (uint64_t)_i);
    int ran = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int64_t M = shapes[i].M, K = shapes[i].K;
        if (c.group && K % c.group)
            continue;
        layer L = make_layer(&r, c.scheme, c.group, shapes[i].N, K);
        int8_t *Xq = qt_xmalloc((size_t)(M * K));
        float *sx = qt_xmalloc(sizeof(float) * (size_t)M);
        make_xq(&r, M, K, Xq, sx);
        char what[128];
        snprintf(what, sizeof what, "%s g=%d M=%lld N=%lld K=%lld", qjit_scheme_name(c.scheme), c.group,
                 (long long)M, (long long)L.N, (long long)K);
        check_gemm(what, &L, M, Xq, sx, 0);
        free(Xq); free(sx);
        layer_free(&L);
        ran++;
    }
    ck_assert_int_ge(ran, 6);
}
END_TEST

/* The largest accumulators each scheme can make: Xq = +-127 against the
 * largest operands it produces, over K = 64 x 65 (more than one 64-wide
 * block, a K that is no power of two):
 *   lqq, qoq groups: weights +-1 with 0.9 at each group start, operands
 *     up to 127 / 112..119;
 *   qoq per channel: +-1 rows (Q4 = 15 or 0 with zw = 15: the zero-point
 *     term is as large as the sum);
 *   is: alpha 2^8 given, sg = 127/64 so S = 508, the largest with
 *     1016 x 4160 x S <= 2^31 - 1; Q4 = -7 everywhere: |acc| = 127 x 7 x
 *     4160 x 508 = 1878705920;
 *   w8a8: +-1, operands +-127;
 *   w4a4: +-1, operands +-7 (against Xq = +-127: the reference sums what
 *     it is given; INT4 activations only make the sums smaller). */
START_TEST(gemm_extreme_accumulators)
{
    const qt_config c = qt_one_per_scheme[_i];
    int64_t M = 6, N = 32, K = 64 * 65;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    qjit_quantize_options o;
    qjit_quantize_options_init(&o);
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++) {
            float v = n % 2 ? -1.0f : (k % 64 == 0 ? 0.9f : 1.0f);
            if (c.scheme == IS)
                v = n % 2 ? -13.890625f : 13.890625f;      /* 7 x 127/64 */
            W[n * K + k] = v;
        }
    if (c.scheme == IS)
        o.alpha = 256;
    layer L = quantize_layer(c.scheme, c.group, W, N, K, &o);
    if (c.scheme == IS) {
        for (int64_t i = 0; i < N * L.groups; i++)
            ck_assert_int_eq(L.S[i], 508);
        ck_assert(1016.0 * (double)K * 508 <= 2147483647.0);
    }
    int8_t *Xq = qt_xmalloc((size_t)(M * K));
    float sx[6] = {1, 2, 0.5f, 1e-3f, 3, 7};
    for (int64_t m = 0; m < M; m++)
        for (int64_t k = 0; k < K; k++)
            Xq[m * K + k] = (int8_t)(m % 2 ? -127 : 127);
    int64_t peak = 0;
    for (int64_t n = 0; n < N; n++) {
        int64_t a, e;
        naive(&L, Xq, n, &a, &e);
        peak = llabs(a) > peak ? llabs(a) : peak;
    }
    /* The construction reaches what the comment says. */
    const int64_t want_peak[] = {127LL * 127 * 64 * 65, 127LL * 15 * K, 127LL * 127 * 64 * 65, 1878705920LL,
                                 127LL * 127 * K, 127LL * 7 * K};
    ck_assert_msg(peak >= want_peak[_i] * 9 / 10 && peak <= want_peak[_i], "%s: peak %lld", qjit_scheme_name(c.scheme),
                  (long long)peak);
    char what[64];
    snprintf(what, sizeof what, "extreme %s g=%d", qjit_scheme_name(c.scheme), c.group);
    check_gemm(what, &L, M, Xq, sx, 0);
    free(W); free(Xq);
    layer_free(&L);
}
END_TEST

/* Beyond INT32: sums of more than 2^31 wrap modulo 2^32 as the GPU's INT32
 * accumulator does (reference.c adds 65536-wide chunks). w8a8 with +-1
 * weights (operand 127) and w4a8-lqq per channel with one -113/119 per row
 * (U8 range [15, 247]: s = 16, a = 15, so 1.0 dequantizes to 255 ^ 0x80 =
 * 127), over K = 2112 x 64 = 135168: 127 x 127 x K > 2^31. */
START_TEST(gemm_wraps_like_int32)
{
    const qt_config cs[] = {{W8A8, 0}, {LQQ, 0}};
    const qt_config c = cs[_i];
    int64_t M = 2, N = 16, K = 2112 * 64;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++)
            W[n * K + k] = c.scheme == LQQ && k == 5 ? -113.0f / 119.0f : (n % 3 ? 1.0f : -1.0f);
    layer L = quantize_layer(c.scheme, c.group, W, N, K, NULL);
    ck_assert_int_eq(L.op[K + 1], 127);
    int8_t *Xq = qt_xmalloc((size_t)(M * K));
    float sx[2] = {1.0f, 0.25f};
    for (int64_t i = 0; i < M * K; i++)
        Xq[i] = (int8_t)(i < K ? 127 : -127);
    check_gemm(c.scheme == LQQ ? "wrap lqq" : "wrap w8a8", &L, M, Xq, sx, 1);
    free(W); free(Xq);
    layer_free(&L);
}
END_TEST

/* End to end on FP16 activations: the quantized output against the FP32
 * (here double) GEMM of the unquantized weights, W ~ N(0, 0.02^2),
 * X ~ N(0, 1), K = 512, as a relative Frobenius error. The expected error
 * is about one step / sqrt(12) of each operand, relative to its sigma:
 *   activations: sx = max|x| / 127 ~ 3.1 / 127: 0.007 (all schemes);
 *   w8a8: sw ~ 3.1 sigma / 127: 0.007; total ~ 0.010, bound 0.02;
 *   lqq, qoq g=128: a group of 128 spans ~5.2 sigma = ~200 level-1 units
 *     (s0 ~ 3.1 sigma / 119), s = 14 units = 0.36 sigma: 0.105; bound 0.15;
 *   lqq g=0: the row spans ~6.2 sigma = ~238 units, s = 16: 0.12; bound 0.18;
 *   qoq g=0: sw = 6.2 sigma / 15: 0.12; bound 0.18;
 *   is g=128, alpha 1024: sg = ~2.6 sigma / 7: 0.107, plus S = sg alpha
 *     ~ 7.6 rounded (up to 6.6%): ~0.115; bound 0.16;
 *   is g=128, heuristic alpha: the smallest sg ~ 2 sigma / 7 = 0.0057
 *     gives alpha = 2^8 and S of only 1.5 .. 2.5, rounded by up to a
 *     third: measured ~0.17; bound 0.25.
 * The lower bound catches a quantization that was skipped. */
START_TEST(gemm_end_to_end_accuracy)
{
    static const struct { qjit_scheme s; int group; uint32_t alpha; double bound; } cases[] = {
        {W8A8, 0, 0, 0.02}, {LQQ, 128, 0, 0.15}, {LQQ, 0, 0, 0.18}, {QOQ, 128, 0, 0.15}, {QOQ, 0, 0, 0.18},
        {IS, 128, 1024, 0.16}, {IS, 128, 0, 0.25},
    };
    qt_rng r = qt_rng_make(15);
    int64_t M = 8, N = 64, K = 512;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    uint16_t *X = qt_xmalloc(sizeof(uint16_t) * (size_t)(M * K));
    for (int64_t i = 0; i < N * K; i++)
        W[i] = (float)qt_normal(&r) * 0.02f;
    for (int64_t i = 0; i < M * K; i++)
        X[i] = qjit__float_to_half((float)qt_normal(&r));
    int8_t *Xq = qt_xmalloc((size_t)(M * K));
    float sx[8], *Y = qt_xmalloc(sizeof(float) * (size_t)(M * N));
    ck_assert_int_eq(qjit_reference_quantize_activations(NULL, M, K, X, Xq, sx), QJIT_OK);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        qjit_quantize_options o;
        qjit_quantize_options_init(&o);
        o.alpha = cases[c].alpha;
        layer L = quantize_layer(cases[c].s, cases[c].group, W, N, K, &o);
        for (int64_t i = 0; i < M * N; i++)
            Y[i] = NAN;
        ck_assert_int_eq(qjit_reference_gemm(NULL, L.packed, L.bytes, M, Xq, sx, NULL, Y), QJIT_OK);
        double num = 0, den = 0;
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double y = 0;
                for (int64_t k = 0; k < K; k++)
                    y += (double)qjit__half_to_float(X[m * K + k]) * W[n * K + k];
                num += (Y[m * N + n] - y) * (Y[m * N + n] - y);
                den += y * y;
            }
        double rel = sqrt(num / den);
        printf("accuracy %s g=%d alpha=%u: relative Frobenius error %.4f (bound %.2f)\n", qjit_scheme_name(cases[c].s),
               cases[c].group, cases[c].alpha, rel, cases[c].bound);
        ck_assert_msg(rel < cases[c].bound, "%s g=%d alpha=%u: relative Frobenius error %g > %g",
                      qjit_scheme_name(cases[c].s), cases[c].group, cases[c].alpha, rel, cases[c].bound);
        ck_assert_msg(rel > 1e-3, "%s: suspiciously exact (%g): is the quantization skipped?",
                      qjit_scheme_name(cases[c].s), rel);
        layer_free(&L);
    }
    free(W); free(X); free(Xq); free(Y);
}
END_TEST

START_TEST(gemm_bad_arguments)
{
    const qt_config c = qt_one_per_scheme[_i];
    qjit_context *ctx = qt_bare_context();
    qt_rng r = qt_rng_make(16 + (uint64_t)_i);
    layer L = make_layer(&r, c.scheme, c.group, 32, 128);
    int8_t Xq[2 * 128];
    float sx[2];
    make_xq(&r, 2, 128, Xq, sx);
    int32_t acc[64];
    float Y[64];
    memset(acc, 0x5A, sizeof acc);
    memset(Y, 0x5A, sizeof Y);
    ck_assert_int_eq(qjit_reference_gemm(ctx, NULL, L.bytes, 2, Xq, sx, acc, Y), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_reference_gemm(ctx, L.packed, L.bytes, 0, Xq, sx, acc, Y), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_reference_gemm(ctx, L.packed, L.bytes, -3, Xq, sx, acc, Y), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_reference_gemm(ctx, L.packed, L.bytes, 2, NULL, sx, acc, Y), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_reference_gemm(ctx, L.packed, L.bytes, 2, Xq, NULL, acc, Y), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_reference_gemm(ctx, L.packed, 10, 2, Xq, sx, acc, Y), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_reference_gemm(ctx, L.packed, L.bytes - 1, 2, Xq, sx, acc, Y), QJIT_CORRUPT_WEIGHTS);
    ck_assert_int_eq(qjit_reference_gemm(ctx, L.packed, 300, 2, Xq, sx, acc, Y), QJIT_CORRUPT_WEIGHTS);
    /* An absurd M for the layer: its M x N outputs cannot be addressed. */
    ck_assert_int_eq(qjit_reference_gemm(ctx, L.packed, L.bytes, INT64_MAX / 8, Xq, sx, acc, Y), QJIT_OVERFLOW);
    uint32_t header = qt_le32(L.packed + 44);
    L.packed[header + (qt_next(&r) % (L.bytes - header))] ^= 0x10;
    ck_assert_int_eq(qjit_reference_gemm(ctx, L.packed, L.bytes, 2, Xq, sx, acc, Y), QJIT_CORRUPT_WEIGHTS);
    ck_assert(strstr(ctx->last_error, "checksum") != NULL);
    /* Nothing asked for: still verified. */
    ck_assert_int_eq(qjit_reference_gemm(ctx, L.packed, L.bytes, 2, Xq, sx, NULL, NULL), QJIT_CORRUPT_WEIGHTS);
    for (size_t i = 0; i < 64; i++) {
        ck_assert_uint_eq((uint32_t)acc[i], 0x5A5A5A5Au);
        ck_assert_uint_eq(qt_bits_of(Y[i]), 0x5A5A5A5Au);
    }
    layer_free(&L);
}
END_TEST

/* Every allocation of the reference GEMM failing in turn: it reports
 * QJIT_OUT_OF_MEMORY with the outputs untouched, or (when only a helper
 * thread's buffers are missing) computes the same result with fewer
 * threads; it never leaks. */
START_TEST(gemm_allocation_failures)
{
    const qt_config c = qt_one_per_scheme[_i];
    qt_rng r = qt_rng_make(18 + (uint64_t)_i);
    qjit_context *ctx = qt_bare_context();
    qt_alloc_counts alloc = {-1, 0, 0, 0};
    qt_use_counting_alloc(ctx, &alloc);
    int64_t M = 5, N = 256, K = 256;
    layer L = make_layer(&r, c.scheme, c.group, N, K);
    int8_t *Xq = qt_xmalloc((size_t)(M * K));
    float sx[5];
    make_xq(&r, M, K, Xq, sx);
    int32_t *want = qt_xmalloc(sizeof(int32_t) * (size_t)(M * N)), *acc = qt_xmalloc(sizeof(int32_t) * (size_t)(M * N));
    float *Yw = qt_xmalloc(sizeof(float) * (size_t)(M * N)), *Y = qt_xmalloc(sizeof(float) * (size_t)(M * N));
    ck_assert_int_eq(qjit_reference_gemm(NULL, L.packed, L.bytes, M, Xq, sx, want, Yw), QJIT_OK);
    int saw_oom = 0, saw_ok = 0;
    for (long budget = 0; budget < 12; budget++) {
        alloc.fail_after = budget;
        memset(acc, 0x5A, sizeof(int32_t) * (size_t)(M * N));
        memset(Y, 0x5A, sizeof(float) * (size_t)(M * N));
        qjit_status st = qjit_reference_gemm(ctx, L.packed, L.bytes, M, Xq, sx, acc, Y);
        ck_assert_msg(st == QJIT_OK || st == QJIT_OUT_OF_MEMORY, "budget %ld: %s", budget, qjit_status_name(st));
        if (st == QJIT_OK) {
            ck_assert(memcmp(acc, want, sizeof(int32_t) * (size_t)(M * N)) == 0);
            ck_assert(memcmp(Y, Yw, sizeof(float) * (size_t)(M * N)) == 0);
            saw_ok = 1;
        } else {
            for (int64_t i = 0; i < M * N; i++)
                REQUIRE((uint32_t)acc[i] == 0x5A5A5A5Au && qt_bits_of(Y[i]) == 0x5A5A5A5Au,
                        "budget %ld: output %lld written after a failure", budget, (long long)i);
            ck_assert(strstr(ctx->last_error, "memory") != NULL);
            saw_oom = 1;
        }
        ck_assert_msg(alloc.live == 0, "budget %ld: %ld blocks leaked", budget, alloc.live);
        ck_assert_int_eq(alloc.size_mismatches, 0);
    }
    ck_assert(saw_oom && saw_ok);
    free(Xq); free(want); free(acc); free(Yw); free(Y);
    layer_free(&L);
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("reference");
    const qt_test tests[] = {
        {"half_to_float", half_to_float_all, 1},
        {"float_to_half", float_to_half_rounding, 1},
        {"public_conversions", public_conversions, 1},
        {"activations", activations_quantize, 2},
        {"activations_all_fp16", activations_all_fp16_values, 1},
        {"activations_rounding", activations_round_half_away, 1},
        {"activations_bad", activations_bad_input, 1},
        {"activations_division", act_division_is_exact, 2},
        {"bf16", bf16_tokens_and_weights, 1},
        {"gemm", gemm_matches_naive, QT_NCONFIGS},
        {"gemm_extreme", gemm_extreme_accumulators, QT_NONE_PER_SCHEME},
        {"gemm_wraps", gemm_wraps_like_int32, 2},
        {"gemm_accuracy", gemm_end_to_end_accuracy, 1},
        {"gemm_bad", gemm_bad_arguments, QT_NONE_PER_SCHEME},
        {"gemm_allocation_failures", gemm_allocation_failures, QT_NONE_PER_SCHEME},
    };
    qt_add_tests(s, tests, sizeof tests / sizeof tests[0], 120);
    return s;
}
