/* test_w4ax.c -- w4ax and w4ax-s on the host (runtime/scheme_w4ax.c): the
 * channel order against a brute-force ranking, the packed layer against
 * w4a4's of the permuted weights (w4ax-s: of the weights, with the INT8
 * channels' set), the two-part activations (two scales, or w4ax-s's one in
 * the caller's order) and reference GEMM against their definitions,
 * refusals and corrupted buffers. */
#include "harness.h"
#include "fp16.h"
#include "packed.h"
#include "scheme.h"
#include "qjit.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W4AX QJIT_SCHEME_W4AX

/* Calibration rows (f32) whose channels have magnitudes of their own: a
 * few outliers 10-40x, the rest about 1, some channels tied. */
static float *calibration(qt_rng *r, int64_t rows, int64_t K)
{
    float *c = qt_xmalloc(sizeof(float) * (size_t)(rows * K));
    double *gain = qt_xmalloc(sizeof(double) * (size_t)K);
    for (int64_t k = 0; k < K; k++)
        gain[k] = qt_uniform(r) < 0.06 ? 10.0 + 30.0 * qt_uniform(r) : 0.5 + qt_uniform(r);
    for (int64_t t = 0; t < rows; t++)
        for (int64_t k = 0; k < K; k++)
            c[t * K + k] = (float)(qt_normal(r) * gain[k]);
    free(gain);
    return c;
}

static float *normal_weights(qt_rng *r, int64_t N, int64_t K)
{
    float *W = qt_xmalloc(sizeof(float) * (size_t)(N * K));
    for (int64_t i = 0; i < N * K; i++)
        W[i] = (float)(0.02 * qt_normal(r));
    return W;
}

static qjit_quantize_options w4ax_options(const float *calib, int64_t rows, double a8)
{
    qjit_quantize_options o;
    qjit_quantize_options_init(&o);
    o.a8_fraction = a8;
    o.calib = calib;
    o.calib_dtype = QJIT_DTYPE_F32;
    o.calib_rows = calib ? rows : 0;
    return o;
}

static uint8_t *pack(qjit_context *ctx, qjit_scheme s, const float *W, int64_t N, int64_t K,
                     const qjit_quantize_options *o, size_t *bytes)
{
    ck_assert_int_eq(qjit_packed_size_ex(ctx, s, 0, N, K, o, bytes), QJIT_OK);
    uint8_t *b = qt_xmalloc(*bytes);
    size_t written = 0;
    qjit_status st = qjit_quantize_weights_ex(ctx, s, 0, W, QJIT_DTYPE_F32, N, K, o, b, *bytes, &written);
    ck_assert_msg(st == QJIT_OK, "%s", qjit_last_error(ctx));
    ck_assert_uint_eq(written, *bytes);
    return b;
}

/* The order puts exactly the a8 channels of largest magnitude (ties: the
 * lower k) first, each part ascending: against a brute-force rank. */
START_TEST(order_is_the_top_channels)
{
    qt_rng r = qt_rng_make(0x4A8u + (uint64_t)_i);
    const int64_t K = 384;
    float amax[384];
    for (int64_t k = 0; k < K; k++)   /* few distinct values: many ties */
        amax[k] = (float)(qt_next(&r) % 17) * (_i % 2 ? 1.0f : 0.25f);
    uint32_t perm[384];
    void *scratch = qt_xmalloc(qjit__w4ax_order_scratch(K));
    for (int64_t a8 = 0; a8 <= K; a8 += 128) {
        qjit__w4ax_order(amax, K, a8, perm, scratch);
        int seen[384] = {0};
        for (int64_t j = 0; j < K; j++) {
            ck_assert_uint_lt(perm[j], K);
            ck_assert_int_eq(seen[perm[j]]++, 0);
            if (j > 0 && j != a8)
                ck_assert_uint_gt(perm[j], perm[j - 1]);
        }
        for (int64_t k = 0; k < K; k++) {
            int64_t above = 0;    /* channels ranked before k */
            for (int64_t i = 0; i < K; i++)
                above += amax[i] > amax[k] || (amax[i] == amax[k] && i < k);
            int64_t pos = 0;
            while (perm[pos] != (uint32_t)k)
                pos++;
            ck_assert_msg((above < a8) == (pos < a8), "a8 %lld: channel %lld (rank %lld) at %lld", (long long)a8,
                          (long long)k, (long long)above, (long long)pos);
        }
    }
    free(scratch);
}
END_TEST

/* A packed w4ax layer: its INT8 blocks and order from the calibration
 * rows, and weights, scales and operand exactly w4a4's of the weights with
 * their columns in that order. */
START_TEST(layer_is_w4a4_of_the_permuted_weights)
{
    static const double fractions[] = {0.0, 0.1, 0.25, 1.0};
    qt_rng r = qt_rng_make(0x5EEDu);
    const int64_t N = 48, K = 1024, rows = 16;
    float *W = normal_weights(&r, N, K), *calib = calibration(&r, rows, K);
    qjit_context *ctx = qt_bare_context();
    for (size_t f = 0; f < sizeof fractions / sizeof fractions[0]; f++) {
        qjit_quantize_options o = w4ax_options(calib, rows, fractions[f]);
        size_t bytes;
        uint8_t *b = pack(ctx, W4AX, W, N, K, &o, &bytes);
        int64_t blocks = (int64_t)ceil(fractions[f] * (double)(K / 128) - 1e-9);
        qjit_activation_info ai;
        qjit_activation_info_init(&ai);
        ck_assert_int_eq(qjit_weights_activation(ctx, b, bytes, &ai), QJIT_OK);
        ck_assert_int_eq(ai.parts, 2);
        ck_assert_int_eq(ai.bits, 4);
        ck_assert_int_eq(ai.permuted, 1);
        ck_assert_int_eq(ai.a8_channels, blocks * 128);
        /* The order from the calibration magnitudes. */
        float amax[1024] = {0};
        for (int64_t t = 0; t < rows; t++)
            for (int64_t k = 0; k < K; k++)
                amax[k] = fabsf(calib[t * K + k]) > amax[k] ? fabsf(calib[t * K + k]) : amax[k];
        uint32_t want[1024];
        void *scratch = qt_xmalloc(qjit__w4ax_order_scratch(K));
        qjit__w4ax_order(amax, K, blocks * 128, want, scratch);
        free(scratch);
        size_t len = 0, at = qt_section_at(b, "perm", &len);
        ck_assert_uint_eq(len, 4 * (size_t)K);
        for (int64_t j = 0; j < K; j++)
            ck_assert_uint_eq(qt_le32(b + at + 4 * j), want[j]);
        /* w4a4 of the permuted columns: the same qweight and scale bytes. */
        float *Wp = qt_xmalloc(sizeof(float) * (size_t)(N * K));
        for (int64_t n = 0; n < N; n++)
            for (int64_t j = 0; j < K; j++)
                Wp[n * K + j] = W[n * K + want[j]];
        size_t bytes4;
        uint8_t *b4 = pack(ctx, QJIT_SCHEME_W4A4, Wp, N, K, NULL, &bytes4);
        for (int s = 0; s < 2; s++) {
            const char *name = s ? "scale" : "qweight";
            size_t l1, l2, a1 = qt_section_at(b, name, &l1), a2 = qt_section_at(b4, name, &l2);
            ck_assert_uint_eq(l1, l2);
            ck_assert_msg(!memcmp(b + a1, b4 + a2, l1), "fraction %g: %s differs from w4a4's", fractions[f], name);
        }
        free(Wp);
        free(b4);
        free(b);
    }
    free(W);
    free(calib);
}
END_TEST

/* Tokens quantized for the layer: per token, the INT8 part (its first
 * a8_channels, the layer's order) over max|x| / 127 and the INT4 part over
 * max|x| / 7; the reference GEMM's two INT32 planes and its output, from
 * their definitions. */
START_TEST(two_parts_match_their_definition)
{
    qt_rng r = qt_rng_make(0xA8A4u + (uint64_t)_i);
    const int64_t N = 32, K = 512, M = 7, rows = 8;
    float *W = normal_weights(&r, N, K), *calib = calibration(&r, rows, K);
    qjit_context *ctx = qt_bare_context();
    qjit_quantize_options o = w4ax_options(calib, rows, _i ? 0.5 : 0.1);
    size_t bytes;
    uint8_t *b = pack(ctx, W4AX, W, N, K, &o, &bytes);
    qjit_activation_info ai;
    qjit_activation_info_init(&ai);
    ck_assert_int_eq(qjit_weights_activation(ctx, b, bytes, &ai), QJIT_OK);
    const int64_t a8 = ai.a8_channels;
    ck_assert_int_eq(a8, _i ? 256 : 128);
    uint16_t *X = qt_xmalloc(sizeof(uint16_t) * (size_t)(M * K));
    float xf[7 * 512];
    for (int64_t i = 0; i < M * K; i++) {
        /* FP16 values, outliers where the calibration had them. */
        X[i] = qjit__float_to_half((float)(qt_normal(&r) * (i % K < 8 ? 20.0 : 1.0)));
        xf[i] = qjit__half_to_float(X[i]);
    }
    int8_t *Xq = qt_xmalloc((size_t)(M * K));
    float sx[2 * 7];
    ck_assert_int_eq(qjit_reference_quantize_activations_for(ctx, b, bytes, M, X, Xq, sx), QJIT_OK);
    size_t at = qt_section_at(b, "perm", NULL);
    for (int64_t m = 0; m < M; m++)
        for (int part = 0; part < 2; part++) {
            int64_t j0 = part ? a8 : 0, j1 = part ? K : a8;
            float limit = part ? 7.0f : 127.0f, amax = 0.0f;
            for (int64_t j = j0; j < j1; j++)
                amax = fmaxf(amax, fabsf(xf[m * K + qt_le32(b + at + 4 * j)]));
            float s = amax == 0.0f ? 1.0f : amax / limit;
            ck_assert_msg(sx[2 * m + part] == s, "token %lld part %d: scale %g, want %g", (long long)m, part,
                          (double)sx[2 * m + part], (double)s);
            for (int64_t j = j0; j < j1; j++) {
                float q = roundf(xf[m * K + qt_le32(b + at + 4 * j)] / s);
                q = q > limit ? limit : q < -limit ? -limit : q;
                ck_assert_int_eq(Xq[m * K + j], (int)q);
            }
        }
    /* The GEMM: operand Q4 (stored - 8) in the layer's order, two sums. */
    int32_t *acc = qt_xmalloc(sizeof(int32_t) * (size_t)(2 * M * N));
    float *Y = qt_xmalloc(sizeof(float) * (size_t)(M * N));
    ck_assert_int_eq(qjit_reference_gemm(ctx, b, bytes, M, Xq, sx, acc, Y), QJIT_OK);
    size_t sa = qt_section_at(b, "scale", NULL);
    qjit__weights_view v;
    ck_assert_int_eq(qjit__weights_view_init(ctx, b, bytes, 1, &v), QJIT_OK);
    int8_t *wq = qt_xmalloc((size_t)(N * K));
    uint8_t *scratch = qt_xmalloc((size_t)(N * K));
    v.scheme->operand(&v, 0, N, wq, scratch);
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int32_t s8 = 0, s4 = 0;
            for (int64_t j = 0; j < K; j++)
                *(j < a8 ? &s8 : &s4) += Xq[m * K + j] * wq[n * K + j];
            ck_assert_int_eq(acc[m * N + n], s8);
            ck_assert_int_eq(acc[M * N + m * N + n], s4);
            float sw = qt_float_of(qt_le32(b + sa + 4 * n));
            float y = fmaf((float)s8, sx[2 * m] * sw, (float)s4 * (sx[2 * m + 1] * sw));
            ck_assert_msg(qt_bits_of(Y[m * N + n]) == qt_bits_of(y), "Y[%lld, %lld] = %g, want %g", (long long)m,
                          (long long)n, (double)Y[m * N + n], (double)y);
        }
    free(wq);
    free(scratch);
    free(acc);
    free(Y);
    free(Xq);
    free(X);
    free(b);
    free(W);
    free(calib);
}
END_TEST

/* w4ax-s: w4ax's INT8 channels (as a set) over w4a4's weights in the
 * caller's order; per token one scale, max(max8 / 127, max4 / 7) over the
 * two parts (1 for an all-zero token), the INT8 channels clamped to +-127
 * and the others to +-7, in the caller's order; one INT32 plane, Y =
 * float(acc) (sx sw). Tokens whose outliers stay under 127 INT4 steps (the
 * INT8 part at the INT4 part's step), pass them (the INT8 part sets the
 * scale), an all-zero token and one with only INT4 values. Without INT8
 * blocks it is w4a4 to the bit. */
START_TEST(shared_scale_matches_its_definition)
{
    static const double shares[] = {0.0, 0.1, 0.5};
    qt_rng r = qt_rng_make(0x5A4Eu + (uint64_t)_i);
    const int64_t N = 32, K = 512, M = 9, rows = 8;
    float *W = normal_weights(&r, N, K), *calib = calibration(&r, rows, K);
    qjit_context *ctx = qt_bare_context();
    qjit_quantize_options o = w4ax_options(calib, rows, shares[_i]);
    size_t bytes, bytes2, bytes4;
    uint8_t *b = pack(ctx, QJIT_SCHEME_W4AX_S, W, N, K, &o, &bytes), *b2 = pack(ctx, W4AX, W, N, K, &o, &bytes2);
    uint8_t *b4 = pack(ctx, QJIT_SCHEME_W4A4, W, N, K, NULL, &bytes4);
    /* w4a4's weights and scales, byte for byte (the caller's order). */
    static const char *const names[] = {"qweight", "scale"};
    for (int i = 0; i < 2; i++) {
        size_t l1, l2, a1 = qt_section_at(b, names[i], &l1), a2 = qt_section_at(b4, names[i], &l2);
        ck_assert_uint_eq(l1, l2);
        ck_assert_msg(!memcmp(b + a1, b4 + a2, l1), "%s differs from w4a4's", names[i]);
    }
    qjit_activation_info ai;
    qjit_activation_info_init(&ai);
    ck_assert_int_eq(qjit_weights_activation(ctx, b, bytes, &ai), QJIT_OK);
    ck_assert_int_eq(ai.parts, 1);
    ck_assert_int_eq(ai.bits, 4);
    ck_assert_int_eq(ai.permuted, 0);
    const int64_t a8 = ai.a8_channels;
    ck_assert_int_eq(a8, (int64_t)ceil(shares[_i] * (double)(K / 128) - 1e-9) * 128);
    /* The INT8 channels: w4ax's order's first a8, in the set section and
     * through qjit_weights_int8_set (for both schemes). */
    uint8_t is8[512], is8_w4ax[512], want[512] = {0};
    size_t set_len, set_at = qt_section_at(b, "a8set", &set_len), at2 = qt_section_at(b2, "perm", NULL);
    ck_assert_uint_eq(set_len, (size_t)K / 8);
    for (int64_t j = 0; j < a8; j++)
        want[qt_le32(b2 + at2 + 4 * j)] = 1;
    ck_assert_int_eq(qjit_weights_int8_set(ctx, b, bytes, is8), QJIT_OK);
    ck_assert_int_eq(qjit_weights_int8_set(ctx, b2, bytes2, is8_w4ax), QJIT_OK);
    for (int64_t k = 0; k < K; k++) {
        ck_assert_int_eq(b[set_at + k / 8] >> (k % 8) & 1, want[k]);
        ck_assert_int_eq(is8[k], want[k]);
        ck_assert_int_eq(is8_w4ax[k], want[k]);
    }
    ck_assert_int_eq(qjit_weights_int8_set(ctx, b, bytes, NULL), QJIT_INVALID_ARGUMENT);
    uint16_t *X = qt_xmalloc(sizeof(uint16_t) * (size_t)(M * K));
    float *xf = qt_xmalloc(sizeof(float) * (size_t)(M * K));
    for (int64_t m = 0; m < M; m++)
        for (int64_t k = 0; k < K; k++) {
            /* Token m's outliers 4x .. 100x on some INT8 channels. */
            double gain = is8[k] && k % 5 == 0 ? 4.0 + 12.0 * (double)m : 1.0;
            double v = m == 3 ? 0.0 : m == 5 && is8[k] ? 0.0 : qt_normal(&r) * gain;
            X[m * K + k] = qjit__float_to_half((float)v);
        }
    for (int64_t i = 0; i < M * K; i++)
        xf[i] = qjit__half_to_float(X[i]);
    int8_t *Xq = qt_xmalloc((size_t)(M * K));
    float sx[9];
    ck_assert_int_eq(qjit_reference_quantize_activations_for(ctx, b, bytes, M, X, Xq, sx), QJIT_OK);
    int int8_sets_scale = 0;
    for (int64_t m = 0; m < M; m++) {
        float m8 = 0.0f, m4 = 0.0f;
        for (int64_t k = 0; k < K; k++)
            *(is8[k] ? &m8 : &m4) = fmaxf(*(is8[k] ? &m8 : &m4), fabsf(xf[m * K + k]));
        float s = m8 == 0.0f && m4 == 0.0f ? 1.0f : fmaxf(m8 / 127.0f, m4 / 7.0f);
        int8_sets_scale += m8 / 127.0f > m4 / 7.0f;
        ck_assert_msg(sx[m] == s, "token %lld: scale %g, want %g", (long long)m, (double)sx[m], (double)s);
        for (int64_t k = 0; k < K; k++) {
            float limit = is8[k] ? 127.0f : 7.0f, q = roundf(xf[m * K + k] / s);
            q = q > limit ? limit : q < -limit ? -limit : q;
            ck_assert_int_eq(Xq[m * K + k], (int)q);
        }
    }
    if (a8 > 0)
        ck_assert_msg(int8_sets_scale > 0 && int8_sets_scale < M - 2, "the INT8 part sets %d tokens' scales",
                      int8_sets_scale);
    /* No INT8 blocks: w4a4's activations (the order is the caller's). */
    if (a8 == 0) {
        int8_t *Xq4 = qt_xmalloc((size_t)(M * K));
        float sx4[9];
        ck_assert_int_eq(qjit_reference_quantize_activations_bits(ctx, 4, M, K, X, Xq4, sx4), QJIT_OK);
        ck_assert(!memcmp(Xq4, Xq, (size_t)(M * K)) && !memcmp(sx4, sx, sizeof sx));
        free(Xq4);
    }
    /* The GEMM: one plane over the caller's order. */
    int32_t *acc = qt_xmalloc(sizeof(int32_t) * (size_t)(M * N));
    float *Y = qt_xmalloc(sizeof(float) * (size_t)(M * N));
    ck_assert_int_eq(qjit_reference_gemm(ctx, b, bytes, M, Xq, sx, acc, Y), QJIT_OK);
    size_t sa = qt_section_at(b, "scale", NULL);
    qjit__weights_view v;
    ck_assert_int_eq(qjit__weights_view_init(ctx, b, bytes, 1, &v), QJIT_OK);
    int8_t *wq = qt_xmalloc((size_t)(N * K));
    uint8_t *scratch = qt_xmalloc((size_t)(N * K));
    v.scheme->operand(&v, 0, N, wq, scratch);
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int32_t sum = 0;
            for (int64_t j = 0; j < K; j++)
                sum += Xq[m * K + j] * wq[n * K + j];
            ck_assert_int_eq(acc[m * N + n], sum);
            float y = (float)sum * (sx[m] * qt_float_of(qt_le32(b + sa + 4 * n)));
            ck_assert_msg(qt_bits_of(Y[m * N + n]) == qt_bits_of(y), "Y[%lld, %lld] = %g, want %g", (long long)m,
                          (long long)n, (double)Y[m * N + n], (double)y);
        }
    free(wq);
    free(scratch);
    free(acc);
    free(Y);
    free(Xq);
    free(X);
    free(xf);
    free(b);
    free(b2);
    free(b4);
    free(W);
    free(calib);
}
END_TEST

/* Options and shapes w4ax cannot take are refused with the reason, and
 * nothing is written. */
START_TEST(refusals)
{
    qt_rng r = qt_rng_make(0xBADu);
    const int64_t N = 16, K = 256;
    float *W = normal_weights(&r, N, K), *calib = calibration(&r, 4, K);
    qjit_context *ctx = qt_bare_context();
    size_t bytes;
    ck_assert_int_eq(qjit_packed_size(W4AX, 0, N, 192, &bytes), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_packed_size_ex(ctx, W4AX, 0, N, 192, NULL, &bytes), QJIT_INVALID_ARGUMENT);
    ck_assert_msg(strstr(qjit_last_error(ctx), "blocks of 128 channels"), "%s", qjit_last_error(ctx));
    ck_assert_int_eq(qjit_packed_size_ex(ctx, W4AX, 128, N, K, NULL, &bytes), QJIT_INVALID_ARGUMENT);
    ck_assert_msg(strstr(qjit_last_error(ctx), "per-channel weights only"), "%s", qjit_last_error(ctx));
    static const struct { double a8; int calib; const char *words; } bad[] = {
        {1.5, 1, "must be a share in [0, 1]"}, {-0.1, 1, "must be a share in [0, 1]"},
        {NAN, 1, "must be a share in [0, 1]"}, {0.1, 0, "needs calibration rows"},
    };
    ck_assert_int_eq(qjit_packed_size_ex(ctx, W4AX, 0, N, K, NULL, &bytes), QJIT_OK);
    uint8_t *out = qt_xmalloc(bytes), *zero = calloc(1, bytes);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        qjit_quantize_options o = w4ax_options(bad[i].calib ? calib : NULL, 4, bad[i].a8);
        memset(out, 0, bytes);
        size_t written = 77;
        ck_assert_int_eq(qjit_quantize_weights_ex(ctx, W4AX, 0, W, QJIT_DTYPE_F32, N, K, &o, out, bytes, &written),
                         QJIT_INVALID_ARGUMENT);
        ck_assert_msg(strstr(qjit_last_error(ctx), bad[i].words), "%s", qjit_last_error(ctx));
        ck_assert_msg(!memcmp(out, zero, bytes), "refusal %zu wrote to the buffer", i);
        ck_assert_uint_eq(written, 77);
    }
    /* NaN in the calibration rows. */
    calib[5] = NAN;
    qjit_quantize_options o = w4ax_options(calib, 4, 0.5);
    ck_assert_int_eq(qjit_quantize_weights_ex(ctx, W4AX, 0, W, QJIT_DTYPE_F32, N, K, &o, out, bytes, NULL),
                     QJIT_INVALID_ARGUMENT);
    ck_assert_msg(strstr(qjit_last_error(ctx), "is NaN"), "%s", qjit_last_error(ctx));
    /* No INT8 blocks: no calibration needed, the order is the caller's. */
    o = w4ax_options(NULL, 0, 0.0);
    ck_assert_int_eq(qjit_quantize_weights_ex(ctx, W4AX, 0, W, QJIT_DTYPE_F32, N, K, &o, out, bytes, NULL), QJIT_OK);
    size_t at = qt_section_at(out, "perm", NULL);
    for (int64_t j = 0; j < K; j++)
        ck_assert_uint_eq(qt_le32(out + at + 4 * j), j);
    free(out);
    free(zero);
    free(W);
    free(calib);
}
END_TEST

/* A checksum-valid buffer whose order is no permutation, or whose INT8
 * blocks are more than K holds, is refused; a w4ax buffer is no w4a4 one. */
START_TEST(corrupted_order_refused)
{
    qt_rng r = qt_rng_make(0xC0Bu);
    const int64_t N = 16, K = 512, rows = 4;
    float *W = normal_weights(&r, N, K), *calib = calibration(&r, rows, K);
    qjit_context *ctx = qt_bare_context();
    qjit_quantize_options o = w4ax_options(calib, rows, 0.25);
    size_t bytes;
    uint8_t *good = pack(ctx, W4AX, W, N, K, &o, &bytes), *b = qt_xmalloc(bytes);
    size_t at = qt_section_at(good, "perm", NULL);
    qjit__weights_view v;
    static const struct { int64_t pos; uint32_t value; const char *words; } bad[] = {
        {3, 7, "held twice"}, {511, 512, "past K"}, {0, 0xFFFFFFFFu, "past K"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memcpy(b, good, bytes);
        uint32_t value = bad[i].value == 7 ? qt_le32(good + at + 4 * 7) : bad[i].value;
        qt_put_le(b + at + 4 * bad[i].pos, value, 4);
        qt_reseal(b, bytes);
        ck_assert_int_eq(qjit__weights_view_init(ctx, b, bytes, 1, &v), QJIT_CORRUPT_WEIGHTS);
        ck_assert_msg(strstr(qjit_last_error(ctx), bad[i].words), "%s", qjit_last_error(ctx));
    }
    /* Still a permutation, but a part out of ascending order: two INT4
     * positions swapped, then two INT8 ones. */
    for (int part = 0; part < 2; part++) {
        memcpy(b, good, bytes);
        const int64_t j = part ? 5 : 300;
        uint32_t x = qt_le32(good + at + 4 * j), y = qt_le32(good + at + 4 * (j + 1));
        qt_put_le(b + at + 4 * j, y, 4);
        qt_put_le(b + at + 4 * (j + 1), x, 4);
        qt_reseal(b, bytes);
        ck_assert_int_eq(qjit__weights_view_init(ctx, b, bytes, 1, &v), QJIT_CORRUPT_WEIGHTS);
        ck_assert_msg(strstr(qjit_last_error(ctx), "ascending order"), "%s", qjit_last_error(ctx));
    }
    /* INT8 blocks past K / 128 in the header. */
    memcpy(b, good, bytes);
    qt_put_le(b + 48, (uint64_t)(K / 128 + 1), 4);
    qt_reseal(b, bytes);
    ck_assert_int_eq(qjit__weights_view_init(ctx, b, bytes, 1, &v), QJIT_CORRUPT_WEIGHTS);
    ck_assert_msg(strstr(qjit_last_error(ctx), "INT8 blocks"), "%s", qjit_last_error(ctx));
    /* The same bytes claiming to be w4a4: the section table says otherwise. */
    memcpy(b, good, bytes);
    qt_put_le(b + 12, QJIT_SCHEME_W4A4, 4);
    qt_reseal(b, bytes);
    ck_assert_int_eq(qjit__weights_view_init(ctx, b, bytes, 1, &v), QJIT_CORRUPT_WEIGHTS);
    ck_assert_int_eq(qjit__weights_view_init(ctx, good, bytes, 1, &v), QJIT_OK);
    free(b);
    free(good);
    free(W);
    free(calib);
}
END_TEST

/* A checksum-valid w4ax-s buffer whose INT8 channels' set does not hold
 * exactly the layer's INT8 channels is refused; w4ax-s and w4ax buffers are
 * not taken for each other. */
START_TEST(corrupted_set_refused)
{
    qt_rng r = qt_rng_make(0xC0Cu);
    const int64_t N = 16, K = 512, rows = 4;
    float *W = normal_weights(&r, N, K), *calib = calibration(&r, rows, K);
    qjit_context *ctx = qt_bare_context();
    qjit_quantize_options o = w4ax_options(calib, rows, 0.25);
    size_t bytes;
    uint8_t *good = pack(ctx, QJIT_SCHEME_W4AX_S, W, N, K, &o, &bytes), *b = qt_xmalloc(bytes);
    size_t at = qt_section_at(good, "a8set", NULL);
    qjit__weights_view v;
    ck_assert_int_eq(qjit__weights_view_init(ctx, good, bytes, 1, &v), QJIT_OK);
    /* A channel added (the first not in the set), then one taken away. */
    for (int add = 0; add < 2; add++) {
        memcpy(b, good, bytes);
        int64_t k = 0;
        while ((good[at + k / 8] >> (k % 8) & 1) == add)
            k++;
        b[at + k / 8] ^= (uint8_t)(1u << (k % 8));
        qt_reseal(b, bytes);
        ck_assert_int_eq(qjit__weights_view_init(ctx, b, bytes, 1, &v), QJIT_CORRUPT_WEIGHTS);
        ck_assert_msg(strstr(qjit_last_error(ctx), add ? "holds 129 channels" : "holds 127 channels"), "%s",
                      qjit_last_error(ctx));
    }
    /* The same bytes claiming to be w4ax: its section table says otherwise. */
    memcpy(b, good, bytes);
    qt_put_le(b + 12, W4AX, 4);
    qt_reseal(b, bytes);
    ck_assert_int_eq(qjit__weights_view_init(ctx, b, bytes, 1, &v), QJIT_CORRUPT_WEIGHTS);
    free(b);
    free(good);
    free(W);
    free(calib);
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("w4ax");
    const qt_test tests[] = {
        {"order", order_is_the_top_channels, 4},
        {"layer", layer_is_w4a4_of_the_permuted_weights, 1},
        {"two_parts", two_parts_match_their_definition, 2},
        {"shared_scale", shared_scale_matches_its_definition, 3},
        {"refusals", refusals, 1},
        {"corrupted", corrupted_order_refused, 1},
        {"corrupted_set", corrupted_set_refused, 1},
    };
    qt_add_tests(s, tests, sizeof tests / sizeof tests[0], 120);
    return s;
}
