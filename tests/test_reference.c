/* test_reference.c -- FP16 conversions (runtime/fp16.c) and the CPU
 * reference of activation quantization and the W4A8 GEMM (runtime/reference.c). */
#define _GNU_SOURCE
#include "harness.h"
#include "context.h"
#include "quant.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LQQ QJIT_SCHEME_W4A8_LQQ

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

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
    ck_assert(isnan(qjit__half_to_float(qjit__float_to_half(float_of(0x7F800001u)))));   /* low payload only */
    ck_assert(isnan(qjit__half_to_float(qjit__float_to_half(float_of(0xFFC00000u)))));

    /* Random floats around the half range, and every exact midpoint between
     * neighbouring halves, against the oracle. */
    qt_rng r = qt_rng_make(11);
    for (int i = 0; i < 300000; i++) {
        uint32_t exponent = 95 + (uint32_t)(qt_next(&r) % 50);     /* 2^-32 .. 2^17 */
        uint32_t u = (uint32_t)(qt_next(&r) & 0x807FFFFFu) | exponent << 23;
        float f = float_of(u);
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
    qt_rng r = qt_rng_make(12);
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
        ck_assert_int_eq(qjit_reference_quantize_activations(NULL, M, K, X, Xq, sx), QJIT_OK);
        for (int64_t m = 0; m < M; m++) {
            double amax = 0;
            for (int64_t k = 0; k < K; k++)
                amax = fmax(amax, fabs((double)qjit__half_to_float(X[m * K + k])));
            if (amax == 0)
                REQUIRE(sx[m] == 1.0f, "zero row %lld: sx = %g", (long long)m, (double)sx[m]);
            else
                REQUIRE(sx[m] == (float)amax / 127.0f, "row %lld: sx = %a, want %a", (long long)m, (double)sx[m],
                        (double)((float)amax / 127.0f));
            /* Float slack, derived as for the weights: quotient rounding
             * (amax 2^-24) plus clamping where sx rounded below amax / 127. */
            double slack = amax * 0x1p-24 + fmax(0.0, amax - 127.0 * (double)sx[m]);
            int saw_max = amax == 0;
            for (int64_t k = 0; k < K; k++) {
                double x = qjit__half_to_float(X[m * K + k]);
                int q = Xq[m * K + k];
                REQUIRE(q >= -127 && q <= 127, "Xq[%lld,%lld] = %d", (long long)m, (long long)k, q);
                if (amax == 0)
                    REQUIRE(q == 0, "zero row %lld has Xq = %d", (long long)m, q);
                double err = fabs(x - q * (double)sx[m]);
                REQUIRE(err <= 0.5 * sx[m] + slack, "|x - Xq sx| = %g > sx/2 at [%lld,%lld] (x=%a sx=%a q=%d)", err,
                        (long long)m, (long long)k, x, (double)sx[m], q);
                /* exactly the float formula: clamp(roundf(x / sx)) */
                volatile float quotient = (float)x / sx[m];
                float want = fminf(fmaxf(roundf(quotient), -127.0f), 127.0f);
                REQUIRE(q == (int)want, "Xq[%lld,%lld] = %d, formula gives %d", (long long)m, (long long)k, q, (int)want);
                if (fabs(x) == amax && q == (x > 0 ? 127 : -127))
                    saw_max = 1;
            }
            REQUIRE(saw_max, "row %lld: its largest |x| does not map to +-127", (long long)m);
        }
        free(X); free(Xq); free(sx);
    }
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
            ck_assert_uint_eq(bits_of(sx[j]), 0x5A5A5A5Au);
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

/*------------------------------------------------------------------------
 * GEMM
 *------------------------------------------------------------------------*/

typedef struct layer {
    int64_t N, K;
    int group;
    uint8_t *packed;
    size_t bytes;
    int8_t *Wd;          /* W'[n,k], decoded here from the buffer by the spec */
    float *s0;
} layer;

static layer make_layer(qt_rng *r, int64_t N, int64_t K, int group)
{
    layer L = {.N = N, .K = K, .group = group};
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    for (int64_t n = 0; n < N; n++) {
        double sigma = exp(qt_uniform(r) * 6 - 3);
        for (int64_t k = 0; k < K; k++)
            W[n * K + k] = (float)(qt_normal(r) * sigma);
        if (n % 5 == 2)
            W[n * K + (int64_t)(qt_next(r) % (uint64_t)K)] = (float)(40 * sigma);   /* an outlier */
    }
    ck_assert_int_eq(qjit_packed_size(LQQ, group, N, K, &L.bytes), QJIT_OK);
    L.packed = qt_xmalloc(L.bytes);
    ck_assert_int_eq(qjit_quantize_weights(NULL, LQQ, group, W, QJIT_DTYPE_F32, N, K, L.packed, L.bytes, NULL),
                     QJIT_OK);
    free(W);

    /* Decode through unpack and the spec's formula, not through the
     * dequantizer the reference uses. */
    int G = group ? group : (int)K, groups = (int)(K / G);
    size_t qweight = (size_t)(N * K / 2), gparams = (size_t)(N / 16 * groups * 32);
    uint8_t *Q4 = qt_xmalloc((size_t)(N * K)), *s = qt_xmalloc((size_t)(N * groups)), *a = qt_xmalloc((size_t)(N * groups));
    qjit__lqq_unpack(N, K, group, L.packed + 64, L.packed + 64 + qweight, Q4, s, a);
    L.Wd = qt_xmalloc((size_t)(N * K));
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++) {
            int gi = (int)(n * groups + k / G);
            L.Wd[n * K + k] = (int8_t)(uint8_t)(((Q4[n * K + k] * s[gi] + a[gi]) & 0xFF) ^ 0x80);
        }
    L.s0 = qt_xmalloc(sizeof(float) * (size_t)N);
    memcpy(L.s0, L.packed + 64 + qweight + gparams, sizeof(float) * (size_t)N);   /* little-endian host */
    free(Q4); free(s); free(a);
    return L;
}

static void layer_free(layer *L)
{
    free(L->packed);
    free(L->Wd);
    free(L->s0);
}

static void make_xq(qt_rng *r, int64_t M, int64_t K, int8_t *Xq, float *sx)
{
    for (int64_t i = 0; i < M * K; i++)
        Xq[i] = (int8_t)((int)(qt_next(r) % 255) - 127);
    for (int64_t m = 0; m < M; m++)
        sx[m] = (float)(exp(qt_uniform(r) * 10 - 5) / 127);
}

/* Runs the reference on poisoned outputs and checks every element against
 * a naive GEMM: acc bit for bit (computed in int64, so no overflow hides);
 * Y bit for bit against float(acc) * (sx * s0), and within a stated relative
 * bound of the exact double product: three float roundings, so
 * |Y - acc sx s0| <= 3 2^-24 |acc sx s0| (+1e-38 absolute for underflow). */
static void check_gemm(const char *what, const layer *L, int64_t M, const int8_t *Xq, const float *sx)
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
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int64_t want = 0;
            for (int64_t k = 0; k < K; k++)
                want += (int64_t)Xq[m * K + k] * L->Wd[n * K + k];
            REQUIRE(want >= INT32_MIN && want <= INT32_MAX, "%s: test overflow", what);
            REQUIRE(acc[m * N + n] == want, "%s: acc[%lld,%lld] = %d, want %lld (seed %llu)", what, (long long)m,
                    (long long)n, acc[m * N + n], (long long)want, (unsigned long long)qt_seed());
            float y = Y[m * N + n];
            float formula = (float)acc[m * N + n] * (sx[m] * L->s0[n]);
            REQUIRE(bits_of(y) == bits_of(formula), "%s: Y[%lld,%lld] = %a, float(acc) * (sx * s0) = %a", what,
                    (long long)m, (long long)n, (double)y, (double)formula);
            double exact = (double)want * sx[m] * L->s0[n];
            REQUIRE(fabs(y - exact) <= 3 * 0x1p-24 * fabs(exact) + 1e-38, "%s: Y[%lld,%lld] = %a vs %a", what,
                    (long long)m, (long long)n, (double)y, exact);
            ymax = fmax(ymax, fabs(exact));
        }
    ck_assert_msg(ymax > 0, "%s: all outputs zero, the test proves nothing", what);

    /* The outputs one at a time match the outputs asked for separately. */
    int32_t *acc2 = qt_xmalloc(sizeof(int32_t) * (size_t)(M * N));
    float *Y2 = qt_xmalloc(sizeof(float) * (size_t)(M * N));
    ck_assert_int_eq(qjit_reference_gemm(NULL, L->packed, L->bytes, M, Xq, sx, acc2, NULL), QJIT_OK);
    ck_assert_int_eq(qjit_reference_gemm(NULL, L->packed, L->bytes, M, Xq, sx, NULL, Y2), QJIT_OK);
    ck_assert_msg(memcmp(acc, acc2, sizeof(int32_t) * (size_t)(M * N)) == 0, "%s: acc-only run differs", what);
    ck_assert_msg(memcmp(Y, Y2, sizeof(float) * (size_t)(M * N)) == 0, "%s: Y-only run differs", what);

    /* Row by row (M = 1, a single register block row, other threading). */
    for (int64_t m = 0; m < M; m++) {
        ck_assert_int_eq(qjit_reference_gemm(NULL, L->packed, L->bytes, 1, Xq + m * K, sx + m, acc2 + m * N, Y2 + m * N),
                         QJIT_OK);
    }
    ck_assert_msg(memcmp(acc, acc2, sizeof(int32_t) * (size_t)(M * N)) == 0, "%s: row-by-row acc differs", what);
    ck_assert_msg(memcmp(Y, Y2, sizeof(float) * (size_t)(M * N)) == 0, "%s: row-by-row Y differs", what);
    free(acc); free(Y); free(acc2); free(Y2);
}

START_TEST(gemm_matches_naive)
{
    static const struct { int64_t M, N, K; int group; } shapes[] = {
        {1, 16, 64, 0},      {7, 48, 192, 64},   {33, 80, 320, 64},  {1, 144, 576, 192},
        {5, 16, 64, 64},     {33, 208, 448, 0},  {64, 272, 1024, 128}, {3, 1040, 128, 64},
        {9, 16, 8256, 0},    {2, 528, 320, 320},
    };
    qt_rng r = qt_rng_make(14);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int64_t M = shapes[i].M, K = shapes[i].K;
        layer L = make_layer(&r, shapes[i].N, K, shapes[i].group);
        int8_t *Xq = qt_xmalloc((size_t)(M * K));
        float *sx = qt_xmalloc(sizeof(float) * (size_t)M);
        make_xq(&r, M, K, Xq, sx);
        char what[96];
        snprintf(what, sizeof what, "M=%lld N=%lld K=%lld g=%d", (long long)M, (long long)L.N, (long long)K, L.group);
        check_gemm(what, &L, M, Xq, sx);
        free(Xq); free(sx);
        layer_free(&L);
    }
}
END_TEST

/* The largest accumulators there are: Xq = +-127 against weights at +-119..127. */
START_TEST(gemm_extreme_accumulators)
{
    int64_t M = 6, N = 32, K = 64 * 65;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++)
            W[n * K + k] = n % 2 ? -1.0f : (k % 64 == 0 ? 0.9f : 1.0f);
    layer L = {.N = N, .K = K, .group = 64};
    ck_assert_int_eq(qjit_packed_size(LQQ, 64, N, K, &L.bytes), QJIT_OK);
    L.packed = qt_xmalloc(L.bytes);
    ck_assert_int_eq(qjit_quantize_weights(NULL, LQQ, 64, W, QJIT_DTYPE_F32, N, K, L.packed, L.bytes, NULL), QJIT_OK);
    qjit__weights_view v;
    ck_assert_int_eq(qjit__weights_view_init(NULL, L.packed, L.bytes, 1, &v), QJIT_OK);
    L.Wd = qt_xmalloc((size_t)(N * K));
    qjit__lqq_dequantize(&v, L.Wd);
    L.s0 = qt_xmalloc(sizeof(float) * (size_t)N);
    memcpy(L.s0, v.payload + v.s0_offset, sizeof(float) * (size_t)N);
    int8_t *Xq = qt_xmalloc((size_t)(M * K));
    float sx[6] = {1, 2, 0.5f, 1e-3f, 3, 7};
    for (int64_t m = 0; m < M; m++)
        for (int64_t k = 0; k < K; k++)
            Xq[m * K + k] = (int8_t)(m % 2 ? -127 : 127);
    check_gemm("extreme", &L, M, Xq, sx);
    free(W); free(Xq);
    layer_free(&L);
}
END_TEST

/* End to end on FP16 activations: quantized output close to the float GEMM. */
START_TEST(gemm_end_to_end_accuracy)
{
    qt_rng r = qt_rng_make(15);
    int64_t M = 8, N = 64, K = 512;
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    uint16_t *X = qt_xmalloc(sizeof(uint16_t) * (size_t)(M * K));
    for (int64_t i = 0; i < N * K; i++)
        W[i] = (float)qt_normal(&r) * 0.02f;
    for (int64_t i = 0; i < M * K; i++)
        X[i] = qjit__float_to_half((float)qt_normal(&r));
    size_t bytes;
    ck_assert_int_eq(qjit_packed_size(LQQ, 128, N, K, &bytes), QJIT_OK);
    uint8_t *packed = qt_xmalloc(bytes);
    ck_assert_int_eq(qjit_quantize_weights(NULL, LQQ, 128, W, QJIT_DTYPE_F32, N, K, packed, bytes, NULL), QJIT_OK);
    int8_t *Xq = qt_xmalloc((size_t)(M * K));
    float sx[8], *Y = qt_xmalloc(sizeof(float) * (size_t)(M * N));
    ck_assert_int_eq(qjit_reference_quantize_activations(NULL, M, K, X, Xq, sx), QJIT_OK);
    ck_assert_int_eq(qjit_reference_gemm(NULL, packed, bytes, M, Xq, sx, NULL, Y), QJIT_OK);
    double num = 0, den = 0;
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double y = 0;
            for (int64_t k = 0; k < K; k++)
                y += (double)qjit__half_to_float(X[m * K + k]) * W[n * K + k];
            num += (Y[m * N + n] - y) * (Y[m * N + n] - y);
            den += y * y;
        }
    /* 4 bits over a group's range of about +-3 sigma is a step of about
     * 0.4 sigma, an error of step / sqrt(12) ~ 0.11 sigma per weight; the
     * output's relative error is about the same (8-bit activations add ~1%). */
    double rel = sqrt(num / den);
    ck_assert_msg(rel < 0.15, "relative Frobenius error %g", rel);
    ck_assert_msg(rel > 1e-4, "suspiciously exact (%g): is the quantization skipped?", rel);
    free(W); free(X); free(packed); free(Xq); free(Y);
}
END_TEST

START_TEST(gemm_bad_arguments)
{
    qjit_context *ctx = qt_bare_context();
    qt_rng r = qt_rng_make(16);
    layer L = make_layer(&r, 32, 128, 64);
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
    L.packed[64 + (qt_next(&r) % (L.bytes - 64))] ^= 0x10;
    ck_assert_int_eq(qjit_reference_gemm(ctx, L.packed, L.bytes, 2, Xq, sx, acc, Y), QJIT_CORRUPT_WEIGHTS);
    ck_assert(strstr(ctx->last_error, "checksum") != NULL);
    for (size_t i = 0; i < 64; i++) {
        ck_assert_uint_eq((uint32_t)acc[i], 0x5A5A5A5Au);
        ck_assert_uint_eq(bits_of(Y[i]), 0x5A5A5A5Au);
    }
    layer_free(&L);
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("reference");
    struct { const char *name; const TTest *test; } tests[] = {
        {"half_to_float", half_to_float_all},
        {"float_to_half", float_to_half_rounding},
        {"activations", activations_quantize},
        {"activations_all_fp16", activations_all_fp16_values},
        {"activations_rounding", activations_round_half_away},
        {"activations_bad", activations_bad_input},
        {"gemm", gemm_matches_naive},
        {"gemm_extreme", gemm_extreme_accumulators},
        {"gemm_accuracy", gemm_end_to_end_accuracy},
        {"gemm_bad", gemm_bad_arguments},
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, tests[i].test);
        qt_add(s, tc, 0);
    }
    return s;
}
