/* test_residual.c -- the sparsity budget on the host (runtime/residual.c):
 * options refused with a reason, the budget honoured to the block, the
 * selection against a brute-force ranking, the CPU reference against the
 * definition (acc = sum Xq (Q8' + R8) on kept blocks), a budget of 1 against
 * the INT8 level, corrupted or foreign residuals refused, and the layer
 * refusing what its kernels do not compute. */
#define _GNU_SOURCE
#include "harness.h"
#include "core.h"
#include "hash.h"
#include "packed.h"
#include "residual.h"
#include "scheme.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Weights with heavy tails, and activations with a few outlier channels. */
static float *weights(int64_t N, int64_t K, uint64_t stream)
{
    qt_rng r = qt_rng_make(stream);
    float *W = qt_xmalloc((size_t)(N * K) * sizeof(float));
    for (int64_t i = 0; i < N * K; i++) {
        double z = qt_normal(&r);
        W[i] = (float)(0.02 * z * (qt_uniform(&r) < 0.02 ? 6.0 : 1.0));
    }
    return W;
}

static float *calibration(int64_t T, int64_t K, uint64_t stream)
{
    qt_rng r = qt_rng_make(stream);
    float *X = qt_xmalloc((size_t)(T * K) * sizeof(float));
    for (int64_t t = 0; t < T; t++)
        for (int64_t k = 0; k < K; k++)
            X[t * K + k] = (float)(qt_normal(&r) * (k % 97 == 5 ? 30.0 : 1.0));
    return X;
}

typedef struct packed {
    uint8_t *b;
    size_t bytes;
} packed;

static qjit_quantize_options sparse_options(double rho)
{
    qjit_quantize_options o;
    qjit_quantize_options_init(&o);
    o.sparsity = rho;
    return o;
}

/* Quantizes or fails the test; the capacity is qjit_packed_size_ex's bound. */
static packed quantize(qjit_scheme scheme, int group, const float *W, int64_t N, int64_t K,
                       const qjit_quantize_options *o)
{
    qjit_context *ctx = qt_bare_context();
    size_t cap = 0;
    ck_assert_int_eq(qjit_packed_size_ex(ctx, scheme, group, N, K, o, &cap), QJIT_OK);
    packed p = {qt_xmalloc(cap), 0};
    qjit_status st = qjit_quantize_weights_ex(ctx, scheme, group, W, QJIT_DTYPE_F32, N, K, o, p.b, cap, &p.bytes);
    ck_assert_msg(st == QJIT_OK, "quantize: %s", qjit_last_error(ctx));
    ck_assert(p.bytes <= cap);
    return p;
}

static qjit_residual_info residual_info(const packed *p)
{
    qjit_residual_info info;
    qjit_residual_info_init(&info);
    ck_assert_int_eq(qjit_weights_residual(qt_bare_context(), p->b, p->bytes, &info), QJIT_OK);
    return info;
}


/*------------------------------------------------------------------------*/

START_TEST(dense_budget_is_the_dense_buffer)
{
    const int64_t N = 64, K = 256;
    float *W = weights(N, K, 1);
    qjit_context *ctx = qt_bare_context();
    size_t cap;
    ck_assert_int_eq(qjit_packed_size(QJIT_SCHEME_W4A8_LQQ, 64, N, K, &cap), QJIT_OK);
    uint8_t *plain = qt_xmalloc(cap);
    size_t n0;
    ck_assert_int_eq(qjit_quantize_weights(ctx, QJIT_SCHEME_W4A8_LQQ, 64, W, QJIT_DTYPE_F32, N, K, plain, cap, &n0),
                     QJIT_OK);
    /* Budget 0 and a caller that knows nothing of the new fields (its
     * struct ends before them) both give the dense buffer, byte for byte. */
    qjit_quantize_options zero = sparse_options(0.0), old = sparse_options(0.5);
    old.struct_size = offsetof(qjit_quantize_options, sparsity);
    const qjit_quantize_options *cases[] = {&zero, &old};
    for (int i = 0; i < 2; i++) {
        packed p = quantize(QJIT_SCHEME_W4A8_LQQ, 64, W, N, K, cases[i]);
        ck_assert_uint_eq(p.bytes, n0);
        ck_assert_msg(!memcmp(p.b, plain, n0), "case %d differs from the dense buffer", i);
        qjit_residual_info info = residual_info(&p);
        ck_assert_int_eq(info.block_n, 0);
        ck_assert_int_eq(info.blocks, 0);
        free(p.b);
    }
    free(plain);
    free(W);
}
END_TEST

/* Each bad option: refused with a message naming it, out untouched. */
START_TEST(bad_options_refused)
{
    const int64_t N = 48, K = 192;
    float *W = weights(N, K, 2);
    float bad_h[192], calib[2 * 192];
    for (int k = 0; k < K; k++)
        bad_h[k] = k == 7 ? -1.0f : 1.0f;
    for (int i = 0; i < 2 * K; i++)
        calib[i] = i == 100 ? NAN : 0.5f;
    struct {
        qjit_scheme scheme;
        int group;
        double rho;
        int bn, bk, calib, hess;
        const char *says;
    } cases[] = {
        {QJIT_SCHEME_W4A8_IS, 64, 0.1, 0, 0, 0, 0, "takes no sparse residual"},
        {QJIT_SCHEME_W8A8, 0, 0.1, 0, 0, 0, 0, "takes no sparse residual"},
        {QJIT_SCHEME_W4A8_QOQ, 0, 0.1, 0, 0, 0, 0, "per channel"},
        {QJIT_SCHEME_W4A8_LQQ, 64, -0.1, 0, 0, 0, 0, "sparsity"},
        {QJIT_SCHEME_W4A8_LQQ, 64, 1.5, 0, 0, 0, 0, "sparsity"},
        {QJIT_SCHEME_W4A8_LQQ, 64, NAN, 0, 0, 0, 0, "sparsity"},
        {QJIT_SCHEME_W4A8_LQQ, 64, 0.1, 48, 0, 0, 0, "block_n"},
        {QJIT_SCHEME_W4A8_LQQ, 64, 0.1, 64, 0, 0, 0, "does not divide N"},
        {QJIT_SCHEME_W4A8_LQQ, 64, 0.1, 0, 96, 0, 0, "block_k"},
        {QJIT_SCHEME_W4A8_LQQ, 64, 0.1, 0, 128, 0, 0, "does not divide K"},
        {QJIT_SCHEME_W4A8_LQQ, 64, 0.1, 0, 0, 1, 1, "not both"},
        {QJIT_SCHEME_W4A8_LQQ, 64, 0.1, 0, 0, 1, 0, "NaN"},
        {QJIT_SCHEME_W4A8_LQQ, 64, 0.1, 0, 0, 0, 1, "hessian_diag[7]"},
    };
    qjit_context *ctx = qt_bare_context();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qjit_quantize_options o = sparse_options(cases[i].rho);
        o.block_n = cases[i].bn;
        o.block_k = cases[i].bk;
        if (cases[i].calib) {
            o.calib = calib;
            o.calib_dtype = QJIT_DTYPE_F32;
            o.calib_rows = 2;
        }
        if (cases[i].hess)
            o.hessian_diag = bad_h;
        size_t cap = 1 << 20, written = 12345;
        uint8_t *out = qt_xmalloc(cap);
        memset(out, 0xAB, cap);
        qjit_status st = qjit_quantize_weights_ex(ctx, cases[i].scheme, cases[i].group, W, QJIT_DTYPE_F32, N, K, &o,
                                                  out, cap, &written);
        ck_assert_msg(st == QJIT_INVALID_ARGUMENT, "case %zu: status %d", i, (int)st);
        ck_assert_msg(strstr(qjit_last_error(ctx), cases[i].says), "case %zu: '%s' lacks '%s'", i,
                      qjit_last_error(ctx), cases[i].says);
        ck_assert_uint_eq(written, 12345);
        for (size_t j = 0; j < cap; j++)
            if (out[j] != 0xAB)
                ck_abort_msg("case %zu wrote byte %zu", i, j);
        free(out);
    }
    free(W);
}
END_TEST

/* ceil(rho x blocks) blocks, exactly, where every block gains (real weights). */
START_TEST(budget_honoured_to_the_block)
{
    struct { int64_t N, K; int bn, bk; double rho; int64_t want; } cases[] = {
        {256, 512, 64, 64, 0.01, 1},  {256, 512, 64, 64, 0.05, 2}, {256, 512, 64, 64, 0.1, 4},
        {256, 512, 64, 64, 0.5, 16},  {256, 512, 64, 64, 1.0, 32}, {256, 512, 16, 128, 0.1, 7},
        {1280, 2048, 64, 64, 0.1, 64},   /* 0.1 x 640 is 64.00000000000001 in doubles */
        {48, 256, 0, 0, 0.25, 3},        /* default block: 16 x 64 for N = 48 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float *W = weights(cases[i].N, cases[i].K, 3 + i);
        qjit_quantize_options o = sparse_options(cases[i].rho);
        o.block_n = cases[i].bn;
        o.block_k = cases[i].bk;
        packed p = quantize(QJIT_SCHEME_W4A8_LQQ, 128, W, cases[i].N, cases[i].K, &o);
        qjit_residual_info info = residual_info(&p);
        ck_assert_msg(info.blocks == cases[i].want, "case %zu: %lld blocks kept, want %lld", i,
                      (long long)info.blocks, (long long)cases[i].want);
        ck_assert_int_eq(info.block_n, cases[i].bn ? cases[i].bn : 16);
        ck_assert_int_eq(info.block_k, cases[i].bk ? cases[i].bk : 64);
        ck_assert_int_eq(info.weighted, 0);
        ck_assert_msg(fabs(info.density - (double)info.blocks / (double)info.total_blocks) < 1e-15, "density");
        free(p.b);
        free(W);
    }
}
END_TEST

/* The ranking on crafted scores: negative and zero never kept, ties to the
 * lower index, the result ascending. */
START_TEST(select_ranks_exactly)
{
    const double scores[] = {3.0, -1.0, 3.0, 0.0, 5.0, 2.0, 3.0};
    qjit__residual_rank rank[7];
    int64_t kept[7];
    ck_assert_int_eq(qjit__residual_select(scores, 7, 3, rank, kept), 3);
    ck_assert(kept[0] == 0 && kept[1] == 2 && kept[2] == 4);
    ck_assert_int_eq(qjit__residual_select(scores, 7, 100, rank, kept), 5);
    ck_assert(kept[0] == 0 && kept[1] == 2 && kept[2] == 4 && kept[3] == 5 && kept[4] == 6);
    ck_assert_int_eq(qjit__residual_select(scores, 7, 0, rank, kept), 0);
    ck_assert_int_eq(qjit__residual_select(scores, 7, 1, rank, kept), 1);
    ck_assert(kept[0] == 4);
}
END_TEST

/* What a test computes itself from W and the dense buffer: Q8' (the
 * operand), Q8 (level 1, recomputed), the row scales. */
typedef struct truth {
    int64_t N, K;
    int8_t *q8p, *q8;
    double *s;
} truth;

static truth compute_truth(qjit_scheme scheme, int group, const float *W, int64_t N, int64_t K)
{
    qjit_quantize_options o = sparse_options(0.0);
    packed d = quantize(scheme, group, W, N, K, &o);
    qjit__weights_view v;
    ck_assert_int_eq(qjit__weights_view_init(qt_bare_context(), d.b, d.bytes, 1, &v), QJIT_OK);
    truth t = {N, K, qt_xmalloc((size_t)(N * K)), qt_xmalloc((size_t)(N * K)), qt_xmalloc((size_t)N * sizeof(double))};
    uint8_t *scratch = qt_xmalloc((size_t)(N * K));
    v.scheme->operand(&v, 0, N, t.q8p, scratch);
    for (int64_t n = 0; n < N; n++) {
        /* Level 1 by the spec: s0 = max|W| / 119, Q8 = clamp(round(W / s0)). */
        float amax = 0.0f;
        for (int64_t k = 0; k < K; k++)
            amax = fmaxf(amax, fabsf(W[n * K + k]));
        float s0 = amax / 119.0f;
        if (s0 == 0.0f)
            s0 = 1.0f;
        for (int64_t k = 0; k < K; k++) {
            float q = roundf(W[n * K + k] / s0);
            t.q8[n * K + k] = (int8_t)(q > 119 ? 119 : q < -119 ? -119 : q);
        }
        float scale;
        int32_t zero;
        qjit__channel(&v, n, &scale, &zero);
        ck_assert(scale == s0);
        t.s[n] = scale;
    }
    free(scratch);
    free(d.b);
    return t;
}

static void truth_free(truth *t)
{
    free(t->q8p);
    free(t->q8);
    free(t->s);
}

static int clamp8(int r) { return r < -8 ? -8 : r > 7 ? 7 : r; }

/* The kept set of a buffer as a bitmap over blocks. */
static char *kept_map(const packed *p, const qjit_residual_info *info, int64_t k_blocks)
{
    char *map = calloc((size_t)info->total_blocks, 1);
    size_t len;
    const uint8_t *rptr = p->b + qt_section_at(p->b, "rptr", &len), *ridx = p->b + qt_section_at(p->b, "ridx", NULL);
    int64_t rows = (int64_t)(len / 4) - 1;
    for (int64_t r = 0; r < rows; r++)
        for (uint32_t j = qt_le32(rptr + 4 * r); j < qt_le32(rptr + 4 * (r + 1)); j++)
            map[r * k_blocks + qt_le32(ridx + 4 * (size_t)j)] = 1;
    return map;
}

/* The kept blocks are the brute-force top ceil(rho x blocks) by the spec's
 * score with H from the calibration rows. */
START_TEST(selection_is_the_brute_force_top_k)
{
    static const struct { qjit_scheme scheme; int group; } cfg[] = {
        {QJIT_SCHEME_W4A8_LQQ, 64}, {QJIT_SCHEME_W4A8_LQQ, 0}, {QJIT_SCHEME_W4A8_QOQ, 128}};
    const int64_t N = 128, K = 768, T = 24;
    const int bn = 32, bk = 64;
    float *W = weights(N, K, 10 + _i), *X = calibration(T, K, 20 + _i);
    truth t = compute_truth(cfg[_i].scheme, cfg[_i].group, W, N, K);
    double *H = qt_xmalloc((size_t)K * sizeof(double));
    for (int64_t k = 0; k < K; k++) {
        H[k] = 0;
        for (int64_t r = 0; r < T; r++)
            H[k] += (double)X[r * K + k] * X[r * K + k];
    }
    const int64_t kbs = K / bk, total = (N / bn) * kbs;
    double *score = calloc((size_t)total, sizeof(double));
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++) {
            double e = W[n * K + k] - t.s[n] * t.q8p[n * K + k];
            double eh = t.s[n] * clamp8(t.q8[n * K + k] - t.q8p[n * K + k]);
            score[(n / bn) * kbs + k / bk] += H[k] * (e * e - (e - eh) * (e - eh));
        }
    /* Brute force: rank by repeated maximum. */
    const int64_t keep = 9;    /* ceil(0.07 x 48) = 4; use rho so that 9 are kept */
    qjit_quantize_options o = sparse_options((double)keep / (double)total);
    o.block_n = bn;
    o.block_k = bk;
    o.calib = X;
    o.calib_dtype = QJIT_DTYPE_F32;
    o.calib_rows = T;
    packed p = quantize(cfg[_i].scheme, cfg[_i].group, W, N, K, &o);
    qjit_residual_info info = residual_info(&p);
    ck_assert_int_eq(info.blocks, keep);
    ck_assert_int_eq(info.weighted, 1);
    char *got = kept_map(&p, &info, kbs), *want = calloc((size_t)total, 1);
    double last = INFINITY, next = -INFINITY;
    for (int64_t i = 0; i < keep; i++) {
        int64_t best = -1;
        for (int64_t b = 0; b < total; b++)
            if (!want[b] && score[b] > 0 && (best < 0 || score[b] > score[best]))
                best = b;
        ck_assert(best >= 0);
        want[best] = 1;
        last = score[best];
    }
    for (int64_t b = 0; b < total; b++)
        if (!want[b] && score[b] > next)
            next = score[b];
    /* The data has no near-tie at the cut, so summation order cannot matter. */
    ck_assert_msg(last - next > 1e-9 * fabs(last), "near tie at the cut: %g vs %g", last, next);
    for (int64_t b = 0; b < total; b++)
        ck_assert_msg(got[b] == want[b], "block %lld: kept %d, brute force %d (score %g)", (long long)b, got[b],
                      want[b], score[b]);
    /* And unweighted (no calibration) the choice differs, and says so. */
    o.calib = NULL;
    o.calib_rows = 0;
    packed u = quantize(cfg[_i].scheme, cfg[_i].group, W, N, K, &o);
    qjit_residual_info ui = residual_info(&u);
    ck_assert_int_eq(ui.weighted, 0);
    char *ugot = kept_map(&u, &ui, kbs);
    ck_assert_msg(memcmp(ugot, got, (size_t)total), "weighting by H changed nothing");
    free(ugot);
    free(u.b);
    free(got);
    free(want);
    free(p.b);
    free(score);
    free(H);
    truth_free(&t);
    free(W);
    free(X);
}
END_TEST

/* acc from the CPU reference = sum_k Xq (Q8' + [kept] clamp(Q8 - Q8')),
 * computed here in int64 from the test's own Q8 and Q8'. */
START_TEST(reference_matches_the_definition)
{
    static const struct { qjit_scheme scheme; int group; double rho; int bn, bk; } cfg[] = {
        {QJIT_SCHEME_W4A8_LQQ, 128, 0.1, 64, 64},  {QJIT_SCHEME_W4A8_LQQ, 0, 0.3, 128, 128},
        {QJIT_SCHEME_W4A8_QOQ, 64, 0.05, 16, 64},  {QJIT_SCHEME_W4A8_QOQ, 128, 1.0, 32, 128},
        {QJIT_SCHEME_W4A8_LQQ, 64, 1.0, 16, 64},
    };
    const int64_t N = 256, K = 512, M = 7;
    float *W = weights(N, K, 30 + _i);
    truth t = compute_truth(cfg[_i].scheme, cfg[_i].group, W, N, K);
    qjit_quantize_options o = sparse_options(cfg[_i].rho);
    o.block_n = cfg[_i].bn;
    o.block_k = cfg[_i].bk;
    packed p = quantize(cfg[_i].scheme, cfg[_i].group, W, N, K, &o);
    qjit_residual_info info = residual_info(&p);
    const int64_t kbs = K / cfg[_i].bk;
    char *kept = kept_map(&p, &info, kbs);
    qt_rng r = qt_rng_make(40 + _i);
    int8_t *Xq = qt_xmalloc((size_t)(M * K));
    float sx[7];
    for (int64_t i = 0; i < M * K; i++)
        Xq[i] = (int8_t)((int)(qt_next(&r) % 255) - 127);
    for (int m = 0; m < M; m++)
        sx[m] = 0.01f;
    int32_t *acc = qt_xmalloc((size_t)(M * N) * sizeof(int32_t));
    ck_assert_int_eq(qjit_reference_gemm(qt_bare_context(), p.b, p.bytes, M, Xq, sx, acc, NULL), QJIT_OK);
    int64_t clamped = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            int64_t want = 0;
            for (int64_t k = 0; k < K; k++) {
                int w = t.q8p[n * K + k];
                if (kept[(n / cfg[_i].bn) * kbs + k / cfg[_i].bk]) {
                    int d = t.q8[n * K + k] - w;
                    clamped += m == 0 && clamp8(d) != d;
                    w += clamp8(d);
                }
                want += (int64_t)Xq[m * K + k] * w;
            }
            ck_assert_msg(acc[m * N + n] == (int32_t)want, "acc[%lld, %lld] = %d, want %lld", (long long)m,
                          (long long)n, acc[m * N + n], (long long)want);
        }
    if (cfg[_i].rho == 1.0) {
        /* A full budget restores the INT8 level but for the clamp, which
         * the two-level quantizers' errors (|Q8 - Q8'| <= 8) rarely reach. */
        ck_assert_int_eq(info.blocks, info.total_blocks);
        ck_assert_msg(clamped * 100 < N * K, "%lld of %lld weights clamped", (long long)clamped, (long long)(N * K));
    }
    free(kept);
    free(acc);
    free(Xq);
    free(p.b);
    truth_free(&t);
    free(W);
}
END_TEST

/* Edits that keep the checksums right but break the residual's meaning. */
START_TEST(corrupted_residual_refused)
{
    const int64_t N = 128, K = 256;
    float *W = weights(N, K, 50);
    qjit_quantize_options o = sparse_options(0.5);
    o.block_n = 32;
    packed p = quantize(QJIT_SCHEME_W4A8_QOQ, 64, W, N, K, &o);
    qjit_context *ctx = qt_bare_context();
    qjit__weights_view v;
    ck_assert_int_eq(qjit__weights_view_init(ctx, p.b, p.bytes, 1, &v), QJIT_OK);
    ck_assert_int_eq(v.residual.blocks, 8);    /* half of 4 x 4 */
    size_t rptr = qt_section_at(p.b, "rptr", NULL), ridx = qt_section_at(p.b, "ridx", NULL);
    enum { FIELD, RPTR_AT, RIDX_AT, TRUNCATE, NAME } kinds;
    (void)kinds;
    struct { int kind; size_t at; uint64_t value; int n; const char *what; } cases[] = {
        {FIELD, 36, 3u | 4u, 4, "unknown flag"},
        {FIELD, 36, 2, 4, "weighted without residual"},
        {FIELD, 52, 0, 4, "residual field zero"},
        {FIELD, 52, 48u | 64u << 16, 4, "48-row blocks"},
        {FIELD, 52, 32u | 96u << 16, 4, "96-column blocks"},
        {FIELD, 40, 4, 4, "section count without the residual"},
        {RPTR_AT, 0, 1, 4, "rptr[0] = 1"},
        {RPTR_AT, 4 * 4, 9, 4, "rptr[N / bn] past the blocks"},
        {RPTR_AT, 4, 7, 4, "row pointers decreasing"},
        {RIDX_AT, 0, 4, 4, "k-block past K"},
        {TRUNCATE, 0, 0, 0, "truncated"},
        {NAME, 0, 0, 0, "section renamed"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *b = qt_xmalloc(p.bytes);
        memcpy(b, p.b, p.bytes);
        size_t bytes = p.bytes;
        switch (cases[i].kind) {
        case FIELD: qt_put_le(b + cases[i].at, cases[i].value, cases[i].n); break;
        case RPTR_AT: qt_put_le(b + rptr + cases[i].at, cases[i].value, 4); break;
        case RIDX_AT:
            /* The first kept block of a row block gets k-block K / 64. */
            qt_put_le(b + ridx + cases[i].at, cases[i].value, 4);
            break;
        case TRUNCATE: bytes -= 1; break;
        case NAME: b[64 + 32 * 4] = 'x'; break;    /* rptr's name, after QoQ's four */
        }
        qt_reseal(b, bytes);
        qjit_status st = qjit__weights_view_init(ctx, b, bytes, 1, &v);
        ck_assert_msg(st == QJIT_CORRUPT_WEIGHTS, "%s: accepted (status %d)", cases[i].what, (int)st);
        free(b);
    }
    /* Two blocks of one row block in the wrong order. */
    uint8_t *b = qt_xmalloc(p.bytes);
    int swapped = 0;
    memcpy(b, p.b, p.bytes);
    for (int64_t r = 0; r < N / 32 && !swapped; r++) {
        uint32_t a = qt_le32(b + rptr + 4 * r), e = qt_le32(b + rptr + 4 * (r + 1));
        if (e - a >= 2) {
            uint32_t x = qt_le32(b + ridx + 4 * a), y = qt_le32(b + ridx + 4 * (a + 1));
            qt_put_le(b + ridx + 4 * a, y, 4);
            qt_put_le(b + ridx + 4 * (a + 1), x, 4);
            swapped = 1;
        }
    }
    ck_assert_msg(swapped, "no row block with two kept blocks to swap");
    qt_reseal(b, p.bytes);
    ck_assert_int_eq(qjit__weights_view_init(ctx, b, p.bytes, 1, &v), QJIT_CORRUPT_WEIGHTS);
    /* A flipped value bit without resealing: the payload checksum. */
    memcpy(b, p.b, p.bytes);
    b[p.bytes - 1] ^= 0x10;
    ck_assert_int_eq(qjit__weights_view_init(ctx, b, p.bytes, 1, &v), QJIT_CORRUPT_WEIGHTS);
    ck_assert_msg(strstr(qjit_last_error(ctx), "checksum"), "%s", qjit_last_error(ctx));
    free(b);
    free(p.b);
    free(W);
}
END_TEST

/* The kernels add R8 to the operand Q8' in INT8: what the quantizer writes
 * always fits; a checksum-valid buffer whose residual would take a kept
 * weight past INT8 (every kept nibble set to R8 = +7 or -8) is refused
 * exactly where some kept Q8' + R8 leaves [-128, 127] (found here by brute
 * force from the scheme's operand), naming the first such weight. */
START_TEST(residual_sums_stay_int8)
{
    const int64_t N = 64, K = 512;
    const struct { qjit_scheme scheme; int group; } cfg[] = {
        {QJIT_SCHEME_W4A8_LQQ, 64}, {QJIT_SCHEME_W4A8_LQQ, 0}, {QJIT_SCHEME_W4A8_QOQ, 128}};
    qjit_context *ctx = qt_bare_context();
    int refused = 0;
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        float *W = weights(N, K, 70 + c);
        qjit_quantize_options o = sparse_options(1);
        packed p = quantize(cfg[c].scheme, cfg[c].group, W, N, K, &o);
        qjit__weights_view v;
        ck_assert_int_eq(qjit__weights_view_init(ctx, p.b, p.bytes, 1, &v), QJIT_OK);
        ck_assert_int_eq(qjit__residual_check_sums(ctx, &v), QJIT_OK);
        /* Every weight is kept (a budget of 1): the operand's extremes. */
        int8_t *wq = qt_xmalloc((size_t)(N * K));
        uint8_t *scratch = qt_xmalloc((size_t)(N * K));
        v.scheme->operand(&v, 0, N, wq, scratch);
        int lo = 127, hi = -128;
        for (int64_t i = 0; i < N * K; i++) {
            lo = wq[i] < lo ? wq[i] : lo;
            hi = wq[i] > hi ? wq[i] : hi;
        }
        size_t len = 0, at = qt_section_at(p.b, "rweight", &len);
        for (int nib = 0; nib < 16; nib += 15) {
            uint8_t *b = qt_xmalloc(p.bytes);
            memcpy(b, p.b, p.bytes);
            memset(b + at, nib | nib << 4, len);
            qt_reseal(b, p.bytes);
            ck_assert_int_eq(qjit__weights_view_init(ctx, b, p.bytes, 1, &v), QJIT_OK);
            int r8 = nib - 8, want_bad = hi + r8 > 127 || lo + r8 < -128;
            qjit_status st = qjit__residual_check_sums(ctx, &v);
            ck_assert_msg((st == QJIT_CORRUPT_WEIGHTS) == want_bad, "config %zu R8 %d (operand %d..%d): status %d",
                          c, r8, lo, hi, (int)st);
            if (want_bad) {
                /* The first such weight in row-major order, whichever
                 * thread checked its rows. */
                int64_t first = 0;
                while (wq[first] + r8 <= 127 && wq[first] + r8 >= -128)
                    first++;
                char where[96];
                snprintf(where, sizeof where, "at row %lld, k %lld takes the operand %d to %d", (long long)(first / K),
                         (long long)(first % K), wq[first], wq[first] + r8);
                ck_assert_msg(strstr(qjit_last_error(ctx), where), "'%s' lacks '%s'", qjit_last_error(ctx), where);
            }
            refused += want_bad;
            free(b);
        }
        free(wq);
        free(scratch);
        free(p.b);
        free(W);
    }
    ck_assert_msg(refused > 0, "no crafted residual left INT8: the check was never exercised");
}
END_TEST

/* A sparse buffer relabelled as another scheme is never accepted. */
START_TEST(sparse_buffer_is_no_other_scheme)
{
    const int64_t N = 64, K = 256;
    float *W = weights(N, K, 60);
    qjit_quantize_options o = sparse_options(0.5);
    packed p = quantize(QJIT_SCHEME_W4A8_LQQ, 64, W, N, K, &o);
    const qjit_scheme others[] = {QJIT_SCHEME_W4A8_QOQ, QJIT_SCHEME_W4A8_IS, QJIT_SCHEME_W8A8};
    for (int i = 0; i < 3; i++) {
        uint8_t *b = qt_xmalloc(p.bytes);
        memcpy(b, p.b, p.bytes);
        qt_put_le(b + 12, (uint64_t)others[i], 4);
        qt_reseal(b, p.bytes);
        qjit__weights_view v;
        ck_assert_msg(qjit__weights_view_init(qt_bare_context(), b, p.bytes, 1, &v) == QJIT_CORRUPT_WEIGHTS,
                      "accepted as scheme %d", (int)others[i]);
        free(b);
    }
    free(p.b);
    free(W);
}
END_TEST

/* The index the kernels read (rmask, built by the layer): for every row
 * block and k-block, its bit is set exactly where the row pointers keep the
 * block, and the word's first entry plus the bits below gives that block's
 * entry -- for block shapes whose k-blocks span one word, several, and a
 * partial last word, at budgets from one block to all of them. */
START_TEST(kernel_index_matches_the_rows)
{
    static const struct { int64_t N, K; int bn, bk; double rho; } cases[] = {
        {64, 256, 16, 64, 0.3},     {128, 4096, 64, 64, 0.1},  {96, 64 * 70, 32, 64, 0.5},
        {256, 128 * 40, 128, 128, 1.0}, {48, 64 * 33, 16, 64, 0.01},
    };
    const int c = _i;
    float *W = weights(cases[c].N, cases[c].K, 80 + (uint64_t)c);
    qjit_quantize_options o = sparse_options(cases[c].rho);
    o.block_n = cases[c].bn;
    o.block_k = cases[c].bk;
    packed p = quantize(QJIT_SCHEME_W4A8_LQQ, 64, W, cases[c].N, cases[c].K, &o);
    qjit__weights_view v;
    ck_assert_int_eq(qjit__weights_view_init(qt_bare_context(), p.b, p.bytes, 1, &v), QJIT_OK);
    const qjit__residual_view *rv = &v.residual;
    ck_assert_int_gt(rv->blocks, 0);
    int64_t words = (rv->k_blocks + 31) / 32;
    ck_assert_uint_eq(qjit__residual_mask_bytes(rv), (size_t)(rv->row_blocks * words * 8));
    uint32_t *mask = qt_xmalloc(qjit__residual_mask_bytes(rv));
    qjit__residual_mask(rv, mask);
    int64_t found = 0;
    for (int64_t r = 0; r < rv->row_blocks; r++) {
        int64_t first, count = qjit__residual_row(&v, r * rv->block_n, &first);
        for (int64_t kb = 0; kb < rv->k_blocks; kb++) {
            const uint32_t *e = mask + 2 * (r * words + kb / 32);
            uint32_t bit = 1u << (kb % 32);
            int64_t j = -1;
            for (int64_t i = first; i < first + count; i++)
                if (qjit__residual_kblock(&v, i) == kb)
                    j = i;
            ck_assert_msg(!!(e[0] & bit) == (j >= 0), "row block %lld k-block %lld: bit %d, kept %d", (long long)r,
                          (long long)kb, !!(e[0] & bit), j >= 0);
            if (j >= 0) {
                ck_assert_int_eq((int64_t)e[1] + __builtin_popcount(e[0] & (bit - 1)), j);
                found++;
            }
        }
    }
    ck_assert_int_eq(found, rv->blocks);
    if (cases[c].rho == 1.0)
        ck_assert_int_eq(found, rv->row_blocks * rv->k_blocks);
    free(mask);
    free(p.b);
    free(W);
}
END_TEST

/* Every allocation of a sparse quantization refused in turn: reported,
 * nothing leaked, the output untouched; then the same call succeeds. */
START_TEST(allocation_failures)
{
    const int64_t N = 64, K = 256;
    float *W = weights(N, K, 80), *X = calibration(4, K, 81);
    qjit_quantize_options o = sparse_options(0.2);
    o.calib = X;
    o.calib_dtype = QJIT_DTYPE_F32;
    o.calib_rows = 4;
    packed good = quantize(QJIT_SCHEME_W4A8_LQQ, 64, W, N, K, &o);
    size_t cap;
    ck_assert_int_eq(qjit_packed_size_ex(NULL, QJIT_SCHEME_W4A8_LQQ, 64, N, K, &o, &cap), QJIT_OK);
    uint8_t *out = qt_xmalloc(cap);
    qjit_context *ctx = qt_bare_context();
    qt_alloc_counts alloc = {-1, 0, 0, 0};
    qt_use_counting_alloc(ctx, &alloc);
    int refused = 0;
    for (long budget = 0;; budget++) {
        alloc.fail_after = budget;
        memset(out, 0xAB, cap);
        size_t written = 5;
        qjit_status st = qjit_quantize_weights_ex(ctx, QJIT_SCHEME_W4A8_LQQ, 64, W, QJIT_DTYPE_F32, N, K, &o, out,
                                                  cap, &written);
        ck_assert_msg(alloc.live == 0, "budget %ld: %ld blocks leaked", budget, alloc.live);
        ck_assert_int_eq(alloc.size_mismatches, 0);
        if (st == QJIT_OK) {
            ck_assert(written == good.bytes && memcmp(out, good.b, written) == 0);
            break;
        }
        ck_assert_msg(st == QJIT_OUT_OF_MEMORY, "budget %ld: %s", budget, qjit_status_name(st));
        ck_assert_msg(written == 5, "budget %ld: written set after a failure", budget);
        for (size_t j = 0; j < cap; j++)
            REQUIRE(out[j] == 0xAB, "budget %ld: output byte %zu written after a failure", budget, j);
        refused++;
    }
    ck_assert_msg(refused >= 6, "only %d allocations refused", refused);
    free(out);
    free(good.b);
    free(W);
    free(X);
}
END_TEST

/* The reference's allocations refused in turn on a sparse buffer: each
 * call reports or succeeds exactly, nothing leaks. */
START_TEST(reference_allocation_failures)
{
    const int64_t N = 128, K = 256, M = 5;
    float *W = weights(N, K, 90);
    qjit_quantize_options o = sparse_options(0.3);
    packed p = quantize(QJIT_SCHEME_W4A8_LQQ, 64, W, N, K, &o);
    int8_t Xq[5 * 256];
    float sx[5] = {1, 1, 1, 1, 1};
    for (int i = 0; i < M * K; i++)
        Xq[i] = (int8_t)(i * 37 % 251 - 125);
    int32_t want[5 * 128], got[5 * 128];
    qjit_context *ctx = qt_bare_context();
    ck_assert_int_eq(qjit_reference_gemm(ctx, p.b, p.bytes, M, Xq, sx, want, NULL), QJIT_OK);
    qt_alloc_counts alloc = {-1, 0, 0, 0};
    qt_use_counting_alloc(ctx, &alloc);
    int refused = 0;
    for (long budget = 0;; budget++) {
        alloc.fail_after = budget;
        memset(got, 0x5A, sizeof got);
        qjit_status st = qjit_reference_gemm(ctx, p.b, p.bytes, M, Xq, sx, got, NULL);
        ck_assert_msg(alloc.live == 0, "budget %ld: %ld blocks leaked", budget, alloc.live);
        if (st == QJIT_OK) {
            /* Exact, also when a worker's panels could not be allocated
             * and the others took its share. */
            ck_assert_msg(!memcmp(got, want, sizeof got), "budget %ld: other accumulators", budget);
            break;
        }
        ck_assert_int_eq(st, QJIT_OUT_OF_MEMORY);
        refused++;
    }
    ck_assert_msg(refused >= 1, "no allocation refused");
    free(p.b);
    free(W);
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("residual");
    const qt_test tests[] = {
        {"dense_budget", dense_budget_is_the_dense_buffer, 1},
        {"bad_options", bad_options_refused, 1},
        {"budget", budget_honoured_to_the_block, 1},
        {"select", select_ranks_exactly, 1},
        {"brute_force_top_k", selection_is_the_brute_force_top_k, 3},
        {"reference", reference_matches_the_definition, 5},
        {"corrupted", corrupted_residual_refused, 1},
        {"sums_stay_int8", residual_sums_stay_int8, 1},
        {"other_scheme", sparse_buffer_is_no_other_scheme, 1},
        {"kernel_index", kernel_index_matches_the_rows, 5},
        {"allocation_failures", allocation_failures, 1},
        {"reference_allocation_failures", reference_allocation_failures, 1},
    };
    qt_add_tests(s, tests, sizeof tests / sizeof tests[0], 120);
    return s;
}
