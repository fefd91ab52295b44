/* test_gpu.c -- kernels on the GPU (tagged "gpu"), for every scheme, group
 * and pipeline: the activation quantization and the GEMM's INT32
 * accumulators bit-exact against the CPU reference, the FP16 output within
 * FP16 rounding of it, outputs poisoned before each run and fully
 * overwritten; bad forward input changes nothing. */
#define _GNU_SOURCE
#include "harness.h"
#include "context.h"
#include "fp16.h"
#include "module.h"
#include "record.h"
#include "qjit.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    qjit_context *ctx;
    qjit__driver *d;
    void *blob;
    size_t bytes;
    qjit_linear *lin;
    int64_t N, K;
    qjit_scheme scheme;
    int group;
    qjit_dtype dtype;            /* the layer's tokens and outputs: FP16 (0 too) or BF16 */
    float *bias;                 /* the layer's bias (N floats), or NULL: none */
} fixture;

/* A layer of `scheme` with groups of `group` (0: per channel) on random
 * weights with an outlier column and an all-zero row, as real layers have;
 * f->lin uses the dispatch table (NULL with no_layer). */
static void setup_layer(fixture *f, qjit_scheme scheme, int64_t N, int64_t K, int group, uint64_t stream,
                        int no_layer, const qjit_quantize_options *qo)
{
    memset(f, 0, sizeof *f);
    qjit_context_options o;
    qjit_context_options_init(&o);
    o.template_path = "";
    ck_assert_int_eq(qjit_context_create(&o, &f->ctx), QJIT_OK);
    char arch[16];
    ck_assert_msg(qjit_context_arch(f->ctx, arch, sizeof arch) == QJIT_OK, "%s", qjit_last_error(f->ctx));
    f->d = &f->ctx->driver;
    f->N = N;
    f->K = K;
    qt_rng r = qt_rng_make(stream);
    float *W = malloc(sizeof(float) * (size_t)(N * K));
    for (int64_t i = 0; i < N * K; i++)
        W[i] = (float)(0.05 * qt_normal(&r));
    /* An outlier column and an all-zero row, as real layers have. */
    for (int64_t n = 0; n < N; n++)
        W[n * K + (K / 3)] *= 20.0f;
    for (int64_t k = 0; k < K; k++)
        W[(N / 2) * K + k] = 0.0f;
    f->scheme = scheme;
    f->group = group;
    ck_assert_int_eq(qjit_packed_size_ex(f->ctx, scheme, group, N, K, qo, &f->bytes), QJIT_OK);
    f->blob = malloc(f->bytes);
    qjit_status st = qjit_quantize_weights_ex(f->ctx, scheme, group, W, QJIT_DTYPE_F32, N, K, qo, f->blob, f->bytes,
                                              &f->bytes);
    ck_assert_msg(st == QJIT_OK, "quantize %s g=%d: %s", qjit_scheme_name(scheme), group, qjit_last_error(f->ctx));
    free(W);
    if (no_layer)
        return;
    st = qjit_linear_create(f->ctx, f->blob, f->bytes, NULL, &f->lin);
    ck_assert_msg(st == QJIT_OK, "linear_create: %s", qjit_last_error(f->ctx));
}

static void setup_scheme(fixture *f, qjit_scheme scheme, int64_t N, int64_t K, int group, uint64_t stream,
                         int no_layer)
{
    setup_layer(f, scheme, N, K, group, stream, no_layer, NULL);
}

static void setup(fixture *f, int64_t N, int64_t K, int group, uint64_t stream)
{
    setup_scheme(f, QJIT_SCHEME_W4A8_LQQ, N, K, group, stream, 0);
}

static void teardown(fixture *f)
{
    qjit_linear_destroy(f->lin);
    qjit_context_destroy(f->ctx);
    free(f->blob);
    free(f->bias);
}

#define CU(call) ck_assert_int_eq((int)(call), (int)CUDA_SUCCESS)

/* Tokens with their 4-bit values packed two per byte (act-quant pack=2)
 * back to one value per byte (q: M rows of K bytes, the packed rows at its
 * start): a row is its first k8 values one per byte (a two-part layer's
 * INT8 part; 0 for one part), then (K - k8) / 2 bytes, in each 32 values
 * byte b holding value b in its low nibble and value b + 16 in its high
 * one, as INT4. */
static void unpack_tokens(int8_t *q, int64_t M, int64_t K, int64_t k8)
{
    const size_t rb = (size_t)(k8 + (K - k8) / 2);
    int8_t *packed = malloc(rb * (size_t)M);
    memcpy(packed, q, rb * (size_t)M);
    for (int64_t m = 0; m < M; m++) {
        const int8_t *in = packed + rb * (size_t)m;
        int8_t *out = q + (size_t)(m * K);
        memcpy(out, in, (size_t)k8);
        for (int64_t g = 0; g < (K - k8) / 32; g++)
            for (int b = 0; b < 16; b++) {
                const uint8_t v = (uint8_t)in[k8 + 16 * g + b];
                out[k8 + 32 * g + b] = (int8_t)((int8_t)(v << 4) >> 4);
                out[k8 + 32 * g + b + 16] = (int8_t)((int8_t)v >> 4);
            }
    }
    free(packed);
}

/* The tokens entry at M, against forward's run of the same X (dX; its
 * tokens, xq_bytes of them, in workspace dW, whose first section holds
 * ws_xq_bytes; forward's output Y):
 * qjit_linear_quantize writes
 * into poisoned buffers of the stated format exactly the workspace's tokens,
 * and forward_tokens on them gives Y bit for bit, on the layer's workspace
 * and on a poisoned one of the caller's (its split-K counters zeroed by the
 * call). A GEMM that quantizes its own tokens refuses both. */
static void check_tokens_path(fixture *f, int64_t M, const char *key, CUdeviceptr dX, CUdeviceptr dW,
                              size_t ws_bytes, size_t ws_xq_bytes, size_t xq_bytes, const uint16_t *Y)
{
    qjit__driver *d = f->d;
    const size_t yn = (size_t)(M * f->N);
    qjit_tokens_format tf;
    qjit_tokens_format_init(&tf);
    qjit_status st = qjit_linear_tokens_format(f->lin, M, &tf);
    if (strstr(key, "actq=fused")) {
        ck_assert_int_eq(st, QJIT_INVALID_ARGUMENT);
        ck_assert_ptr_nonnull(strstr(qjit_last_error(f->ctx), "quantizes its own tokens"));
        return;
    }
    ck_assert_msg(st == QJIT_OK, "tokens_format M=%lld: %s", (long long)M, qjit_last_error(f->ctx));
    ck_assert_int_eq((size_t)tf.row_bytes * (size_t)M, xq_bytes);
    qjit_activation_info ai;
    qjit_activation_info_init(&ai);
    ck_assert_int_eq(qjit_weights_activation(f->ctx, f->blob, f->bytes, &ai), QJIT_OK);
    ck_assert_int_eq(tf.scales, ai.parts);
    const size_t sx_bytes = (size_t)M * 4 * (size_t)tf.scales, rs_bytes = tf.rowsum ? (size_t)M * 4 : 0;
    CUdeviceptr dq, ds, dr = 0, dY2, dW2;
    CU(d->MemAlloc(&dq, xq_bytes));
    CU(d->MemAlloc(&ds, sx_bytes));
    if (rs_bytes)
        CU(d->MemAlloc(&dr, rs_bytes));
    CU(d->MemAlloc(&dY2, yn * 2));
    CU(d->MemAlloc(&dW2, ws_bytes));
    CU(d->MemsetD8(dq, 0x6B, xq_bytes));
    CU(d->MemsetD8(ds, 0x6B, sx_bytes));
    if (rs_bytes)
        CU(d->MemsetD8(dr, 0x6B, rs_bytes));
    qjit_tokens t;
    qjit_tokens_init(&t);
    t.xq = (void *)dq;
    t.sx = (float *)ds;
    t.rowsum = (int32_t *)dr;
    st = qjit_linear_quantize(f->lin, M, (void *)dX, &t, NULL);
    ck_assert_msg(st == QJIT_OK, "quantize M=%lld: %s", (long long)M, qjit_last_error(f->ctx));
    CU(d->CtxSynchronize());
    /* The workspace's sections: xq, sx, then the row sums, 256-byte aligned. */
    const size_t sx_at = (ws_xq_bytes + 255) & ~(size_t)255, rs_at = sx_at + ((sx_bytes + 255) & ~(size_t)255);
    size_t most = xq_bytes > sx_bytes ? xq_bytes : sx_bytes;
    unsigned char *a = malloc(most), *b = malloc(most);
    const struct { CUdeviceptr mine; size_t at, bytes; const char *name; } parts[] = {
        {dq, 0, xq_bytes, "xq"}, {ds, sx_at, sx_bytes, "sx"}, {dr, rs_at, rs_bytes, "rowsum"}};
    for (int i = 0; i < 3; i++) {
        if (!parts[i].bytes)
            continue;
        CU(d->MemcpyDtoH(a, parts[i].mine, parts[i].bytes));
        CU(d->MemcpyDtoH(b, dW + parts[i].at, parts[i].bytes));
        ck_assert_msg(memcmp(a, b, parts[i].bytes) == 0, "M=%lld: qjit_linear_quantize's %s differs from forward's",
                      (long long)M, parts[i].name);
    }
    free(a);
    free(b);
    uint16_t *Y2 = malloc(yn * 2);
    for (int own = 1; own >= 0; own--) {
        CU(d->MemsetD8(dY2, 0xFF, yn * 2));
        CU(d->MemsetD8(dW2, 0x5A, ws_bytes));    /* a caller's workspace of garbage */
        st = qjit_linear_forward_tokens(f->lin, M, &t, (void *)dY2, own ? NULL : (void *)dW2, own ? 0 : ws_bytes, NULL);
        ck_assert_msg(st == QJIT_OK, "forward_tokens M=%lld: %s", (long long)M, qjit_last_error(f->ctx));
        CU(d->CtxSynchronize());
        CU(d->MemcpyDtoH(Y2, dY2, yn * 2));
        ck_assert_msg(memcmp(Y, Y2, yn * 2) == 0, "M=%lld: forward_tokens (%s workspace) differs from forward",
                      (long long)M, own ? "the layer's" : "a caller's");
    }
    free(Y2);
    d->MemFree(dq);
    d->MemFree(ds);
    if (dr)
        d->MemFree(dr);
    d->MemFree(dY2);
    d->MemFree(dW2);
}

/* Runs forward and forward_acc at M and compares everything with the CPU. */
static void check_m(fixture *f, int64_t M, uint64_t stream)
{
    qjit__driver *d = f->d;
    const int64_t N = f->N, K = f->K;
    /* A layer of two activation parts (w4ax): two scales per token, two
     * planes of sums. */
    qjit_activation_info ai;
    qjit_activation_info_init(&ai);
    ck_assert_int_eq(qjit_weights_activation(f->ctx, f->blob, f->bytes, &ai), QJIT_OK);
    const size_t parts = (size_t)ai.parts;
    size_t xn = (size_t)(M * K), yn = (size_t)(M * N), ws_bytes;
    ck_assert_int_eq(qjit_linear_workspace_size(f->lin, M, &ws_bytes), QJIT_OK);
    uint16_t *X = malloc(xn * 2), *Y = malloc(yn * 2);
    int8_t *Xq = malloc(xn), *Xq_gpu = malloc(xn);
    float *sx = malloc((size_t)M * 4 * parts), *sx_gpu = malloc((size_t)M * 4 * parts), *Yref = malloc(yn * 4);
    int32_t *acc = malloc(yn * 4 * parts), *acc_ref = malloc(yn * 4 * parts);
    qt_rng r = qt_rng_make(stream);
    const int bf16 = f->dtype == QJIT_DTYPE_BF16;
    for (size_t i = 0; i < xn; i++) {
        const float v = (float)(qt_normal(&r) * (i % 97 == 0 ? 8.0 : 1.0));
        X[i] = bf16 ? qjit__float_to_bf16(v) : qjit__float_to_half(v);
    }
    for (int64_t k = 0; k < K; k++)                /* an all-zero token row */
        X[(size_t)((M - 1) / 2) * K + k] = M > 2 ? 0 : X[(size_t)((M - 1) / 2) * K + k];
    ck_assert_int_eq(qjit_reference_quantize_activations_dtype(f->ctx, f->blob, f->bytes, M,
                                                               bf16 ? QJIT_DTYPE_BF16 : QJIT_DTYPE_F16, X, Xq, sx),
                     QJIT_OK);
    ck_assert_int_eq(qjit_reference_gemm(f->ctx, f->blob, f->bytes, M, Xq, sx, acc_ref, Yref), QJIT_OK);
    /* A bias: added to the FP32 value before rounding, as the epilogue does. */
    for (size_t i = 0; f->bias && i < yn; i++)
        Yref[i] += f->bias[i % (size_t)N];

    CUdeviceptr dX, dY, dA, dW;
    qjit__driver_bind(f->ctx, d);
    CU(d->MemAlloc(&dX, xn * 2));
    CU(d->MemAlloc(&dY, yn * 2));
    CU(d->MemAlloc(&dA, yn * 4 * parts));
    CU(d->MemAlloc(&dW, ws_bytes));
    CU(d->MemcpyHtoD(dX, X, xn * 2));
    CU(d->MemsetD8(dY, 0xFF, yn * 2));            /* poison: FP16 NaN */
    CU(d->MemsetD8(dA, 0xA5, yn * 4 * parts));
    CU(d->MemsetD8(dW, 0x5A, ws_bytes));
    qjit_status st = qjit_linear_forward_acc(f->lin, M, (void *)dX, (int32_t *)dA, (void *)dW, ws_bytes, NULL);
    ck_assert_msg(st == QJIT_OK, "forward_acc M=%lld: %s", (long long)M, qjit_last_error(f->ctx));
    st = qjit_linear_forward(f->lin, M, (void *)dX, (void *)dY, NULL, 0, NULL);
    ck_assert_msg(st == QJIT_OK, "forward M=%lld: %s", (long long)M, qjit_last_error(f->ctx));
    CU(d->CtxSynchronize());
    CU(d->MemcpyDtoH(acc, dA, yn * 4 * parts));
    CU(d->MemcpyDtoH(Y, dY, yn * 2));
    /* A GEMM on the INT4 MMA (mma=s4) reads its 4-bit tokens two per byte
     * (act-quant pack=2), unpacked here by the layout the docs give, so they
     * compare with the reference value for value. One part: half the
     * bytes; two: the workspace keeps K bytes a token. */
    char key[512];
    ck_assert_int_eq(qjit_linear_variant(f->lin, M, key, sizeof key), QJIT_OK);
    const int packed = strstr(key, "mma=s4") != NULL;
    const size_t xq_bytes = packed && parts == 1 ? xn / 2 : xn;
    CU(d->MemcpyDtoH(Xq_gpu, dW, xq_bytes));
    CU(d->MemcpyDtoH(sx_gpu, dW + ((xq_bytes + 255) & ~(size_t)255), (size_t)M * 4 * parts));
    /* The tokens' own bytes: packed rows of a two-part layer are shorter
     * than the K bytes a row the workspace keeps. */
    const size_t tok_bytes = !packed ? xn : (size_t)M * (size_t)(ai.a8_channels + (K - ai.a8_channels) / 2);
    check_tokens_path(f, M, key, dX, dW, ws_bytes, xq_bytes, tok_bytes, Y);
    if (packed)
        unpack_tokens(Xq_gpu, M, K, parts == 2 ? ai.a8_channels : 0);

    ck_assert_msg(memcmp(sx, sx_gpu, (size_t)M * 4 * parts) == 0, "sx differs from the CPU reference (M=%lld)",
                  (long long)M);
    for (size_t i = 0; i < xn; i++)
        ck_assert_msg(Xq[i] == Xq_gpu[i], "Xq[%zu]: gpu %d cpu %d (M=%lld)", i, Xq_gpu[i], Xq[i], (long long)M);
    long long mismatches = 0, exact_half = 0;
    size_t first = 0;
    for (size_t i = 0; i < yn * parts; i++)
        if (acc[i] != acc_ref[i] && mismatches++ == 0)
            first = i;
    ck_assert_msg(mismatches == 0,
                  "M=%lld N=%lld K=%lld: %lld accumulators differ; first [%zu,%zu] (part %zu): gpu %d cpu %d",
                  (long long)M, (long long)N, (long long)K, mismatches, first % yn / (size_t)N, first % (size_t)N,
                  first / yn, acc[first], acc_ref[first]);
    /* FP16 (BF16) output: within FP16 (BF16) rounding of the FP32 reference
     * (relative 2^-11 (2^-8), absolute 2^-24 near zero); every element
     * written. */
    for (size_t i = 0; i < yn; i++) {
        float y = bf16 ? qjit__bf16_to_float(Y[i]) : qjit__half_to_float(Y[i]);
        ck_assert_msg(!isnan(y), "Y[%zu] not written (M=%lld)", i, (long long)M);
        double bound = fabs(Yref[i]) * (bf16 ? 0x1p-8 : 0x1p-11) + 0x1p-24;
        /* Past FP16's range (|Y| >= 65520 rounds to infinity) only the sign is left. */
        if (!bf16 && fabs(Yref[i]) >= 65520.0)
            ck_assert_msg(isinf(y) && (y < 0) == (Yref[i] < 0), "Y[%zu,%zu] = %g, reference %g overflows FP16 (M=%lld)",
                          i / (size_t)N, i % (size_t)N, y, Yref[i], (long long)M);
        else
            ck_assert_msg(fabs(y - Yref[i]) <= bound, "Y[%zu,%zu] = %g, reference %g (M=%lld)", i / (size_t)N,
                          i % (size_t)N, y, Yref[i], (long long)M);
        exact_half += Y[i] == (bf16 ? qjit__float_to_bf16(Yref[i]) : qjit__float_to_half(Yref[i]));
    }
    const char *pipe = strstr(key, "pipe=");
    printf("%-8s g=%-3d M=%-5lld N=%-5lld K=%-5lld acc exact, %s = rounded reference %lld/%zu  %.*s%s\n",
           qjit_scheme_name(f->scheme), f->group, (long long)M, (long long)N, (long long)K, bf16 ? "BF16" : "FP16",
           exact_half, yn,
           pipe ? (int)strcspn(pipe, ";") : 0, pipe ? pipe : "", packed ? " mma=s4" : "");
    d->MemFree(dX);
    d->MemFree(dY);
    d->MemFree(dA);
    d->MemFree(dW);
    free(X); free(Y); free(Xq); free(Xq_gpu); free(sx); free(sx_gpu); free(Yref); free(acc); free(acc_ref);
}

/* A token count in every bucket of the table: the decode and few-token
 * tiles (M <= 8, 16, 32), 33..64, 65..128, 129..256, 257..512 (the
 * 4096-wide layers' one-wave tile and the 8-bit weights' 256x128 one, both
 * with a producer warpgroup) and past 512. */
static const int64_t MS[] = {1, 7, 16, 24, 33, 128, 200, 300, 1000};

/* QJIT_TEST_SCHEMES (comma-separated names) narrows the scheme-looped
 * tests to those schemes, for reruns on a GPU machine. */
static int wanted(qjit_scheme s)
{
    const char *only = getenv("QJIT_TEST_SCHEMES");
    if (!only || !*only)
        return 1;
    const char *name = qjit_scheme_name(s);
    for (const char *p = only; *p;) {
        size_t n = strcspn(p, ",");
        if (n == strlen(name) && !strncmp(p, name, n))
            return 1;
        p += n + (p[n] == ',');
    }
    printf("%s: not in QJIT_TEST_SCHEMES, not run\n", name);
    return 0;
}

/* QJIT_TEST_PIPES (comma-separated texts, e.g. "pipe=tma,pipe=wgmma")
 * narrows the pipeline-looped tests to the forced variants that contain
 * one of them, likewise. */
static int wanted_pipe(const char *variant)
{
    const char *only = getenv("QJIT_TEST_PIPES");
    if (!only || !*only)
        return 1;
    for (const char *p = only; *p;) {
        size_t n = strcspn(p, ",");
        for (const char *v = variant; n && *v; v++)
            if (!strncmp(v, p, n))
                return 1;
        p += n + (p[n] == ',');
    }
    printf("%s: contains none of QJIT_TEST_PIPES, not run\n", variant);
    return 0;
}

/* Every scheme with every group it takes of per channel, 64 and 128. */
static const struct { qjit_scheme scheme; int group; } SCHEME_GROUPS[] = {
    {QJIT_SCHEME_W4A8_LQQ, 128}, {QJIT_SCHEME_W4A8_LQQ, 64}, {QJIT_SCHEME_W4A8_LQQ, 0},
    {QJIT_SCHEME_W4A8_QOQ, 128}, {QJIT_SCHEME_W4A8_QOQ, 64}, {QJIT_SCHEME_W4A8_QOQ, 0},
    {QJIT_SCHEME_W4A8_IS, 128},  {QJIT_SCHEME_W4A8_IS, 64},  {QJIT_SCHEME_W8A8, 0},
    {QJIT_SCHEME_W4A4, 0},
};
#define NSG ((int)(sizeof SCHEME_GROUPS / sizeof SCHEME_GROUPS[0]))

/* Llama-2-7B layers, each scheme at its usual group (128; per channel for w4a4 and
 * w8a8), through the dispatch table at every M. */
static const struct { int64_t N, K; } LLAMA[] = {{4096, 4096}, {11008, 4096}, {4096, 11008}};
static const qjit_scheme SCHEMES[] = {QJIT_SCHEME_W4A8_LQQ, QJIT_SCHEME_W4A8_QOQ, QJIT_SCHEME_W4A8_IS,
                                      QJIT_SCHEME_W8A8, QJIT_SCHEME_W4A4};

START_TEST(llama_layers_bit_exact)
{
    const int si = _i / 3, li = _i % 3;
    if (!wanted(SCHEMES[si]))
        return;
    fixture f;
    setup_scheme(&f, SCHEMES[si], LLAMA[li].N, LLAMA[li].K, (SCHEMES[si] == QJIT_SCHEME_W8A8 || SCHEMES[si] == QJIT_SCHEME_W4A4) ? 0 : 128, 100 + _i, 0);
    for (size_t m = 0; m < sizeof MS / sizeof MS[0]; m++)
        check_m(&f, MS[m], 1000 * _i + m);
    teardown(&f);
}
END_TEST

/* Odd multiples of the packing units (and a K past the activation kernel's
 * register cache), every scheme and group, through the dispatch table. */
static const struct { int64_t N, K; } ODD[] = {{16 * 7, 64 * 10}, {16 * 13, 64 * 6}, {16 * 21, 128 * 3},
                                               {16 * 3, 128 * 325}};
#define NODD ((int)(sizeof ODD / sizeof ODD[0]))

START_TEST(odd_shapes_bit_exact)
{
    const int sg = _i / NODD, oi = _i % NODD;
    if (!wanted(SCHEME_GROUPS[sg].scheme))
        return;
    fixture f;
    setup_scheme(&f, SCHEME_GROUPS[sg].scheme, ODD[oi].N, ODD[oi].K, SCHEME_GROUPS[sg].group, 200 + _i, 0);
    for (size_t m = 0; m < sizeof MS / sizeof MS[0]; m++)
        check_m(&f, MS[m], 2000 * _i + m);
    teardown(&f);
}
END_TEST

/* Every pipeline forced, for every scheme and group: the portable and
 * decode pipes everywhere, the warpgroup-MMA ones (cp.async and TMA rings)
 * on sm_90a; split-K through the workspace and through clusters; fused
 * quantization. A 320 x 1536 layer: the last N tile is partial, groups end
 * inside K tiles and split-K slices start inside groups. */
static const char *const PIPES[] = {
    "tile=32x128x128;warps=1x4;stages=3;split=3",
    "tile=64x64x64;warps=2x2;stages=4;split=1",
    "tile=16x32x64;warps=1x8;stages=4;pipe=decode",
    "tile=8x16x64;warps=1x16;stages=2;pipe=decode",
    "tile=16x64x128;warps=1x4;stages=3;split=2;actq=fused",
    "tile=64x128x128;warps=1x8;stages=4;split=3;pipe=wgmma",
    "tile=64x128x128;warps=2x4;stages=5;split=2;pipe=tma",
    "tile=128x128x128;warps=1x8;stages=4;split=2;pipe=tma;reduce=cluster",
    "tile=32x64x128;warps=1x4;stages=8;split=2;pipe=wgmma;reduce=cluster",
    /* Clusters of 3 and 4: a region of sums per peer (lib/split_k.cu). */
    "tile=64x128x128;warps=2x4;stages=4;split=3;pipe=tma;reduce=cluster",
    "tile=128x64x128;warps=1x4;stages=8;split=4;pipe=tma;reduce=cluster",
    /* Slices of 2 and 3 K tiles: an odd count ends the two-tile main loop
     * of a per-group rescale (fold2) on its first tile. */
    "tile=128x64x128;warps=1x4;stages=6;split=5;pipe=tma",
    "tile=64x128x128;warps=1x8;stages=4;split=5;pipe=wgmma",
    /* The TMA ring filled by a warpgroup of its own, its registers given to
     * the MMA warpgroups; '?': run where the scheme's sums fit the tile. */
    "tile=64x128x128;warps=2x4;stages=8;split=2;pipe=tma;producer=wg",
    "tile=128x128x128;warps=1x8;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg",
    "tile=128x64x128;warps=1x4;stages=6;split=5;pipe=tma;producer=wg",
    "?tile=128x256x128;warps=1x8;stages=4;split=2;pipe=tma;producer=wg",
    "?tile=256x128x128;warps=2x4;stages=4;split=3;pipe=tma;producer=wg",
    /* The table's 64-row tiles with it at 33..128 tokens (dispatch.lua's
     * narrow), the split-2 pairs in clusters. */
    "tile=64x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg",
    "?tile=128x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg;wu8=1",
    /* ... and its 32-token tile at M <= 32 past 8192 rows. */
    "tile=32x64x128;warps=1x4;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg",
    /* Persistent: a CTA per place on the SMs walking output tiles (here one
     * or two each; persistent_tiles_bit_exact: many, in bands). */
    "?tile=256x128x128;warps=2x4;stages=3;pipe=tma;producer=wg;persist=1",
    "tile=128x64x128;warps=1x4;stages=6;pipe=tma;producer=wg;persist=1",
    /* Explicit dequantization: a warpgroup writes the INT8 weights to
     * shared memory for the MMA warpgroups ('?': the schemes that take it). */
    "?tile=128x256x128;warps=1x8;stages=4;pipe=tma;producer=wg;excp=1",
    "?tile=128x128x128;warps=1x8;stages=4;pipe=tma;producer=wg;persist=1;excp=1",
    /* Two MMA warpgroups taking whole tiles in turn. */
    "?tile=128x128x128;warps=2x4;stages=4;pipe=tma;producer=wg;persist=1;pingpong=1",
    /* Unsigned weights into the MMAs, the row sums' share taken off in the
     * epilogue ('?': the schemes with the unsigned form, w4a8-lqq). */
    "?tile=64x128x128;warps=1x8;stages=4;split=3;pipe=wgmma;wu8=1",
    "?tile=64x128x128;warps=2x4;stages=5;split=2;pipe=tma;wu8=1",
    "?tile=128x128x128;warps=1x8;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg;wu8=1",
    /* 256 tokens a warpgroup (the MMA's N = 256): each MMA warpgroup
     * dequantizes its 64 weight rows once for all the tile's tokens. */
    "?tile=256x128x128;warps=1x8;stages=5;split=3;pipe=tma;producer=wg;wu8=1",
};
#define NPIPES ((int)(sizeof PIPES / sizeof PIPES[0]))

/* f's layer with `variant` forced; 0 (after the teardown) where the GPU
 * lacks the pipe (warpgroup MMA: sm_90a) or, for a variant marked '?',
 * where the plan refuses it for f's scheme (the refusal then has to name
 * what does not fit -- registers, or shared memory for a scheme's wider
 * weights -- or that the scheme takes no explicit dequantization or has no
 * unsigned form of its weights). */
static int create_forced(fixture *f, const char *variant)
{
    const int optional = variant[0] == '?';
    variant += optional;
    char arch[16];
    ck_assert_int_eq(qjit_context_arch(f->ctx, arch, sizeof arch), QJIT_OK);
    if ((strstr(variant, "pipe=wgmma") || strstr(variant, "pipe=tma")) && strcmp(arch, "sm_90a")) {
        printf("%s: needs sm_90a, not run on %s\n", variant, arch);
        teardown(f);
        return 0;
    }
    qjit_linear_options lo;
    qjit_linear_options_init(&lo);
    lo.variant = variant;
    lo.dtype = f->dtype;
    lo.bias = f->bias;
    qjit_status st = qjit_linear_create(f->ctx, f->blob, f->bytes, &lo, &f->lin);
    if (optional && st == QJIT_INVALID_KEY &&
        (strstr(qjit_last_error(f->ctx), "registers") || strstr(qjit_last_error(f->ctx), "bytes of shared memory") ||
         strstr(qjit_last_error(f->ctx), "does not take explicit dequantization") ||
         strstr(qjit_last_error(f->ctx), "has no unsigned form"))) {
        printf("%s g=%d %s: refused (%s)\n", qjit_scheme_name(f->scheme), f->group, variant, qjit_last_error(f->ctx));
        teardown(f);
        return 0;
    }
    ck_assert_msg(st == QJIT_OK, "%s g=%d %s: %s", qjit_scheme_name(f->scheme), f->group, variant,
                  qjit_last_error(f->ctx));
    return 1;
}

START_TEST(every_pipeline_bit_exact)
{
    const int sg = _i / NPIPES, pi = _i % NPIPES;
    if (!wanted(SCHEME_GROUPS[sg].scheme) || !wanted_pipe(PIPES[pi]))
        return;
    fixture f;
    setup_scheme(&f, SCHEME_GROUPS[sg].scheme, 320, 1536, SCHEME_GROUPS[sg].group, 300 + _i, 1);
    if (!create_forced(&f, PIPES[pi]))
        return;
    check_m(&f, 5, 3000 * _i + 1);
    check_m(&f, 77, 3000 * _i + 2);
    check_m(&f, 300, 3000 * _i + 3);
    teardown(&f);
}
END_TEST

/* A persistent kernel's CTAs each walk several output tiles, the ring
 * running on across them: a 2048 x 1024 layer (8 K tiles) in 64 x 64
 * tiles (32 along N, 16 along M at M = 1000: 512 tiles) on one CTA per SM
 * (8 stages, 132 CTAs: about 4 tiles each) in bands of 3 token tiles (the
 * last one narrower), and on two per SM (5 stages: the ring's slots
 * turn over out of step with the output tiles) in bands of 1; and in
 * 256 x 128 tiles with the band the kernel picks, with the MMA warpgroups
 * dequantizing and with a warpgroup that dequantizes for them (excp);
 * and with the two MMA warpgroups taking whole tiles in turn (pingpong:
 * 64 x 64, about two tiles each a CTA, and 128 x 128). */
static const char *const PERSIST_PIPES[] = {
    "tile=64x64x128;warps=1x4;stages=8;pipe=tma;producer=wg;persist=1;band=3",
    "tile=64x64x128;warps=1x4;stages=5;pipe=tma;producer=wg;persist=1;band=1",
    "?tile=256x128x128;warps=2x4;stages=3;pipe=tma;producer=wg;persist=1",
    "?tile=256x128x128;warps=2x4;stages=3;pipe=tma;producer=wg;persist=1;excp=1",
    "?tile=64x64x128;warps=1x8;stages=8;pipe=tma;producer=wg;persist=1;pingpong=1;band=3",
    "?tile=128x128x128;warps=1x8;stages=4;pipe=tma;producer=wg;persist=1;pingpong=1",
    "?tile=64x64x128;warps=1x4;stages=8;pipe=tma;producer=wg;persist=1;band=3;wu8=1",
    "?tile=256x128x128;warps=1x8;stages=3;pipe=tma;producer=wg;persist=1;wu8=1",
};
#define NPERSIST ((int)(sizeof PERSIST_PIPES / sizeof PERSIST_PIPES[0]))

START_TEST(persistent_tiles_bit_exact)
{
    const int sg = _i / NPERSIST, pi = _i % NPERSIST;
    if (!wanted(SCHEME_GROUPS[sg].scheme) || !wanted_pipe(PERSIST_PIPES[pi]))
        return;
    fixture f;
    setup_scheme(&f, SCHEME_GROUPS[sg].scheme, 2048, 1024, SCHEME_GROUPS[sg].group, 700 + _i, 1);
    if (!create_forced(&f, PERSIST_PIPES[pi]))
        return;
    check_m(&f, 77, 5000 * _i + 1);
    check_m(&f, 1000, 5000 * _i + 2);
    teardown(&f);
}
END_TEST

/* sk=1: the tiles of a persistent kernel's last, partial wave split along
 * K, the slices' sums meeting in the workspace. On 132 SMs (H100, H200; one
 * CTA an SM for these tiles) the kernel's plan takes every form: a 2048 x
 * 4096 layer (32 K tiles) at M = 640 in 64 x 64 tiles (320 tiles: 264 whole,
 * then 56 in 2 slices), in 128 x 256 and 256 x 128 tiles (40 and 48 tiles,
 * a single wave in 3 and 2 slices) and at M = 77 (a single wave); a 1536 x
 * 4096 layer at M = 5 and 300 (4 slices a tile; 64 x 64 tiles at M = 300:
 * 120, whole); a 5632 x 2048 layer at M = 1000 in 128 x 256 and 256 x 128
 * tiles (176: 132 whole, 44 in 2 slices; 64 x 64: 1408, whole). Each layer
 * runs twice per M, so the arrival counters must be left zeroed. With the
 * MMA warpgroups dequantizing and with a dequantization warpgroup (excp). */
static const char *const SK_PIPES[] = {
    "tile=64x64x128;warps=1x4;stages=8;pipe=tma;producer=wg;persist=1;sk=1;band=3",
    "?tile=128x256x128;warps=1x8;stages=4;pipe=tma;producer=wg;persist=1;sk=1",
    "?tile=256x128x128;warps=2x4;stages=3;pipe=tma;producer=wg;persist=1;sk=1;excp=1",
    "?tile=128x256x128;warps=1x8;stages=4;pipe=tma;producer=wg;persist=1;sk=1;wu8=1",
    "?tile=256x128x128;warps=1x8;stages=3;pipe=tma;producer=wg;persist=1;sk=1",
    "?tile=256x128x128;warps=1x8;stages=3;pipe=tma;producer=wg;persist=1;sk=1;wu8=1",
};
#define NSK ((int)(sizeof SK_PIPES / sizeof SK_PIPES[0]))
static const struct { int64_t N, K, m[2]; } SK_LAYERS[] = {
    {2048, 4096, {640, 77}}, {1536, 4096, {5, 300}}, {5632, 2048, {1000, 77}}};
#define NSK_LAYERS ((int)(sizeof SK_LAYERS / sizeof SK_LAYERS[0]))

START_TEST(split_last_wave_bit_exact)
{
    const int sg = _i / (NSK * NSK_LAYERS), pi = _i / NSK_LAYERS % NSK, li = _i % NSK_LAYERS;
    if (!wanted(SCHEME_GROUPS[sg].scheme) || !wanted_pipe(SK_PIPES[pi]))
        return;
    fixture f;
    setup_scheme(&f, SCHEME_GROUPS[sg].scheme, SK_LAYERS[li].N, SK_LAYERS[li].K, SCHEME_GROUPS[sg].group, 900 + _i, 1);
    if (!create_forced(&f, SK_PIPES[pi]))
        return;
    for (int rep = 0; rep < 2; rep++)
        for (int j = 0; j < 2; j++)
            check_m(&f, SK_LAYERS[li].m[j], 7000 * _i + 10 * rep + j);
    teardown(&f);
}
END_TEST

/* The sparsity budget: layers with a residual of every block shape, budgets
 * 0.01 .. 1, groups 64, 128 and per channel, on every pipeline forced (a
 * 384 x 1536 layer: blocks of 128 rows straddle 64-row tiles, 128-k blocks
 * straddle 64-k tiles and split-K slices) and through the dispatch table on
 * Llama layers up to M = 4096; calibration rows weigh half of them. */
static const struct { qjit_scheme scheme; int group; double rho; int bn, bk; } SPARSE[] = {
    {QJIT_SCHEME_W4A8_LQQ, 128, 0.1, 64, 64},  {QJIT_SCHEME_W4A8_LQQ, 64, 0.05, 16, 128},
    {QJIT_SCHEME_W4A8_LQQ, 0, 0.5, 128, 64},   {QJIT_SCHEME_W4A8_QOQ, 128, 0.01, 32, 128},
    {QJIT_SCHEME_W4A8_QOQ, 64, 1.0, 64, 64},   {QJIT_SCHEME_W4A8_LQQ, 128, 1.0, 128, 128},
};
#define NSPARSE ((int)(sizeof SPARSE / sizeof SPARSE[0]))

static void setup_sparse(fixture *f, int c, int64_t N, int64_t K, uint64_t stream, int no_layer)
{
    qjit_quantize_options qo;
    qjit_quantize_options_init(&qo);
    qo.sparsity = SPARSE[c].rho;
    qo.block_n = SPARSE[c].bn;
    qo.block_k = SPARSE[c].bk;
    float *calib = NULL;
    if (c % 2 == 0) {
        qt_rng r = qt_rng_make(stream ^ 0xCA1Bu);
        calib = malloc(sizeof(float) * (size_t)(16 * K));
        for (int64_t i = 0; i < 16 * K; i++)
            calib[i] = (float)(qt_normal(&r) * (i % K == K / 5 ? 30.0 : 1.0));
        qo.calib = calib;
        qo.calib_dtype = QJIT_DTYPE_F32;
        qo.calib_rows = 16;
    }
    setup_layer(f, SPARSE[c].scheme, N, K, SPARSE[c].group, stream, no_layer, &qo);
    free(calib);
    qjit_residual_info ri;
    qjit_residual_info_init(&ri);
    ck_assert_int_eq(qjit_weights_residual(f->ctx, f->blob, f->bytes, &ri), QJIT_OK);
    ck_assert_msg(ri.blocks > 0 && ri.block_n == SPARSE[c].bn && ri.block_k == SPARSE[c].bk,
                  "config %d: %lld blocks of %dx%d", c, (long long)ri.blocks, ri.block_n, ri.block_k);
    printf("%s g=%d rho=%g: %lld of %lld blocks of %dx%d carry a residual\n", qjit_scheme_name(SPARSE[c].scheme),
           SPARSE[c].group, SPARSE[c].rho, (long long)ri.blocks, (long long)ri.total_blocks, ri.block_n, ri.block_k);
}

/* Sparse layers also run the TMA pipe with the residual in a ring of its
 * own: one slot (a K tile that follows one with a residual waits for it to
 * be folded) and two, at split 3 (4 K tiles a slice); the decode pipe's
 * 8x16 twin at 4 stages, too many to keep the dense kernel's two CTAs an
 * SM (a ring of four residual steps; PIPES' 2 stages keep them, one step
 * under launch bounds); and the few-token TMA tiles the table takes for
 * sparse weights at M <= 32 (16 tokens at 8 and 6 stages, 32 at 8, at
 * split 2 and, past 8192 rows, 1; a producer warpgroup). */
static const char *const SPARSE_PIPES[] = {
    "tile=128x128x128;warps=1x8;stages=4;split=2;pipe=tma;rslots=1",
    "tile=64x64x128;warps=1x4;stages=6;split=3;pipe=tma;rslots=2",
    "tile=8x16x64;warps=1x16;stages=4;pipe=decode",
    "tile=16x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg",
    "tile=16x64x128;warps=1x4;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg",
    "tile=32x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg",
    "tile=32x64x128;warps=1x4;stages=8;pipe=tma;producer=wg",
    /* The residual's blocks in a ring of their own (rpieces): the table's
     * twin (128x256, persistent), rings of one K tile's most (a tile that
     * carries all its blocks waits for the one before to be read) handed
     * on across output tiles, a ring that wraps every other tile (16x64:
     * 4 blocks a tile in 8 places). */
    "?tile=128x256x128;warps=1x8;stages=4;pipe=tma;producer=wg;persist=1;sk=1;rpieces=32",
    "tile=64x64x128;warps=1x4;stages=8;pipe=tma;producer=wg;persist=1;rpieces=8",
    "tile=128x128x128;warps=1x8;stages=6;pipe=tma;producer=wg;rpieces=16",
    "tile=16x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg;rpieces=8",
    "?tile=256x128x128;warps=2x4;stages=3;pipe=tma;producer=wg;persist=1;rpieces=16",   /* two warpgroups a row */
};
#define NSPIPES (NPIPES + (int)(sizeof SPARSE_PIPES / sizeof SPARSE_PIPES[0]))

START_TEST(sparse_every_pipeline_bit_exact)
{
    const int c = _i / NSPIPES, pi = _i % NSPIPES;
    const char *variant = pi < NPIPES ? PIPES[pi] : SPARSE_PIPES[pi - NPIPES];
    if (!wanted(SPARSE[c].scheme) || !wanted_pipe(variant))
        return;
    fixture f;
    setup_sparse(&f, c, 384, 1536, 400 + _i, 1);
    if (strstr(variant, "excp=1")) {
        /* Explicit dequantization is for dense weights: refused, saying so.
         * (The producer warpgroup takes the residual: its second warp looks
         * it up; unsigned weights take it in one add.) */
        qjit_linear_options lo;
        qjit_linear_options_init(&lo);
        lo.variant = variant + (variant[0] == '?');
        lo.dtype = f.dtype;
        lo.bias = f.bias;
        ck_assert_int_eq(qjit_linear_create(f.ctx, f.blob, f.bytes, &lo, &f.lin), QJIT_INVALID_KEY);
        ck_assert_msg(strstr(qjit_last_error(f.ctx), "a kernel with a residual (sparsity="), "%s: %s", variant,
                      qjit_last_error(f.ctx));
        ck_assert_ptr_null(f.lin);
        teardown(&f);
        return;
    }
    if (!create_forced(&f, variant))
        return;
    char key[512];
    ck_assert_int_eq(qjit_linear_variant(f.lin, 5, key, sizeof key), QJIT_OK);
    ck_assert_msg(strstr(key, "sparsity=") && strstr(key, "rblock="), "not a sparse kernel: %s", key);
    check_m(&f, 1, 4000 * _i + 1);
    check_m(&f, 77, 4000 * _i + 2);
    check_m(&f, 300, 4000 * _i + 3);
    teardown(&f);
}
END_TEST

START_TEST(sparse_llama_layers_bit_exact)
{
    static const int CONFIGS[] = {0, 3, 1};
    static const int64_t SIZES[][2] = {{4096, 4096}, {11008, 4096}, {4096, 11008}};
    const int c = CONFIGS[_i];
    if (!wanted(SPARSE[c].scheme))
        return;
    fixture f;
    setup_sparse(&f, c, SIZES[_i][0], SIZES[_i][1], 500 + _i, 0);
    for (size_t m = 0; m < sizeof MS / sizeof MS[0]; m++)
        check_m(&f, MS[m], 5000 * _i + m);
    if (_i == 0)
        check_m(&f, 4096, 5000 * _i + 99);
    teardown(&f);
}
END_TEST

/* 16 calibration rows of K channels for a w4ax layer (INT8 share > 0):
 * every 97th channel an outlier, as the tokens the tests then make. */
static void w4ax_calibrate(qjit_quantize_options *qo, float *calib, int64_t K, qt_rng *r)
{
    for (int64_t i = 0; i < 16 * K; i++)
        calib[i] = (float)(qt_normal(r) * (i % K % 97 == 5 ? 40.0 : 1.0));
    if (qo->a8_fraction > 0) {
        qo->calib = calib;
        qo->calib_dtype = QJIT_DTYPE_F32;
        qo->calib_rows = 16;
    }
}

/* INT8 shares the w4ax tests run at. */
static const double W4AX_SHARES[] = {0.0, 0.1, 0.25, 1.0};

/* f: an N x K layer of a two-part scheme (w4ax, or w4ax-s) keeping `share`
 * of its channels in INT8, chosen on calibration rows from rng `seed`. */
static void setup_two_part(fixture *f, qjit_scheme scheme, int64_t N, int64_t K, double share, uint64_t seed,
                           uint64_t stream, int no_layer)
{
    qjit_quantize_options qo;
    qjit_quantize_options_init(&qo);
    qo.a8_fraction = share;
    qt_rng r = qt_rng_make(seed);
    float *calib = malloc(sizeof(float) * (size_t)(16 * K));
    w4ax_calibrate(&qo, calib, K, &r);
    setup_layer(f, scheme, N, K, 0, stream, no_layer, &qo);
    free(calib);
}

static void setup_w4ax(fixture *f, int64_t N, int64_t K, double share, uint64_t seed, uint64_t stream, int no_layer)
{
    setup_two_part(f, QJIT_SCHEME_W4AX, N, K, share, seed, stream, no_layer);
}

/* A two-part layer's activation kernels (act-quant bits=8+4), launched on
 * their own over K channels: each token gathered into the layer's channel
 * order, the first k8 positions INT8 and the rest INT4 (w4ax), or
 * quantized in place, the INT8 channels those of the layer's set (w4ax-s,
 * inplace=1), bit for bit the CPU reference's
 * (qjit_reference_quantize_activations_for: a scale per part, or w4ax-s's
 * one) at M = 1, 7, 300 and the INT8 share W4AX_SHARES[si] (calibration
 * rows with outlier channels choose the INT8 blocks). The tokens' outliers
 * sit where the calibration had them, 30x, or in odd tokens `odd_gain`
 * (300x passes 127 INT4 steps: w4ax-s's INT8 part then sets the scale);
 * one token is all zero. Keys with pack=2 write the INT4 part two values a
 * byte (unpacked here); cache=C gathers from a copy of the row in shared
 * memory; ctas=P spreads each token over P CTAs, each storing every Pth
 * round of positions. */
/* The CTAs per token a key names (ctas=P; 1 if none). */
static unsigned ctas_of(const char *key)
{
    const char *c = strstr(key, "ctas=");
    return c ? (unsigned)atoi(c + 5) : 1u;
}

static void check_activation_kernels(qjit_scheme scheme, int si, int64_t K, const char *const *keys, int nkeys,
                                     double odd_gain, uint64_t seed, uint64_t stream)
{
    fixture f;
    setup_two_part(&f, scheme, 64, K, W4AX_SHARES[si], seed, stream, 1);
    qt_rng r = qt_rng_make(seed + 1);
    qjit_activation_info ai;
    qjit_activation_info_init(&ai);
    ck_assert_int_eq(qjit_weights_activation(f.ctx, f.blob, f.bytes, &ai), QJIT_OK);
    ck_assert_int_eq(ai.a8_channels, (int64_t)ceil(W4AX_SHARES[si] * K / 128) * 128);
    const size_t parts = (size_t)ai.parts;
    uint32_t *perm = malloc(sizeof(uint32_t) * (size_t)K);
    ck_assert_int_eq(qjit_weights_channel_order(f.ctx, f.blob, f.bytes, perm), QJIT_OK);
    /* The INT8 channels' set of an in-place kernel: bit k % 8 of byte k / 8. */
    uint8_t *is8 = malloc((size_t)K), *set = calloc((size_t)K / 8, 1);
    ck_assert_int_eq(qjit_weights_int8_set(f.ctx, f.blob, f.bytes, is8), QJIT_OK);
    for (int64_t k = 0; k < K; k++)
        set[k / 8] |= (uint8_t)(is8[k] << (k % 8));
    const qjit__kernel *kerns[8];
    ck_assert_int_le(nkeys, 8);
    for (int i = 0; i < nkeys; i++)
        ck_assert_msg(qjit__kernel_get(f.ctx, keys[i], &kerns[i]) == QJIT_OK, "%s", qjit_last_error(f.ctx));
    qjit__driver *d = f.d;
    CUdeviceptr dP, dS, dC;
    CU(d->MemAlloc(&dP, sizeof(uint32_t) * (size_t)K));
    CU(d->MemAlloc(&dS, (size_t)K / 8));
    CU(d->MemAlloc(&dC, 16));
    CU(d->MemcpyHtoD(dP, perm, sizeof(uint32_t) * (size_t)K));
    CU(d->MemcpyHtoD(dS, set, (size_t)K / 8));
    static const int64_t MS_ACT[] = {1, 7, 300};
    for (size_t t = 0; t < sizeof MS_ACT / sizeof MS_ACT[0]; t++) {
        const int64_t M = MS_ACT[t];
        const size_t xn = (size_t)(M * K), sn = (size_t)M * parts;
        uint16_t *X = malloc(xn * 2);
        int8_t *Xq = malloc(xn), *Xq_gpu = malloc(xn);
        float *sx = malloc(sizeof(float) * sn), *sx_gpu = malloc(sizeof(float) * sn);
        for (size_t i = 0; i < xn; i++) {
            const int64_t m = (int64_t)i / K;
            const double gain = (int64_t)i % K % 97 == 5 ? (m % 2 ? odd_gain : 30.0) : 1.0;
            X[i] = qjit__float_to_half((float)(qt_normal(&r) * gain * (m == M / 2 ? 0.0 : 1.0)));
        }
        ck_assert_int_eq(qjit_reference_quantize_activations_for(f.ctx, f.blob, f.bytes, M, X, Xq, sx), QJIT_OK);
        CUdeviceptr dX, dXq, dsx;
        CU(d->MemAlloc(&dX, xn * 2));
        CU(d->MemAlloc(&dXq, xn));
        CU(d->MemAlloc(&dsx, sizeof(float) * sn));
        CU(d->MemcpyHtoD(dX, X, xn * 2));
        int m32 = (int)M, k32 = (int)K, k8 = (int)ai.a8_channels, ncounters = 0;
        void *args_order[] = {&dX, &dP, &dXq, &dsx, &m32, &k32, &k8, &dC, &ncounters};
        void *args_set[] = {&dX, &dS, &dXq, &dsx, &m32, &k32, &dC, &ncounters};
        for (int kv = 0; kv < nkeys; kv++) {
            void **args = strstr(keys[kv], "inplace=1") ? args_set : args_order;
            CU(d->MemsetD8(dXq, 0x5A, xn));
            CU(d->MemsetD8(dsx, 0x5A, sizeof(float) * sn));
            /* ctas=P: P CTAs a token along z. */
            CU(d->LaunchKernel(kerns[kv]->function, (unsigned)M, 1, ctas_of(keys[kv]),
                               kerns[kv]->facts.threads, 1, 1, (unsigned)kerns[kv]->facts.smem, NULL, args, NULL));
            CU(d->CtxSynchronize());
            CU(d->MemcpyDtoH(Xq_gpu, dXq, xn));
            CU(d->MemcpyDtoH(sx_gpu, dsx, sizeof(float) * sn));
            if (strstr(keys[kv], "pack=2"))
                unpack_tokens(Xq_gpu, M, K, k8);
            ck_assert_msg(!memcmp(sx, sx_gpu, sizeof(float) * sn), "share %g M=%lld %s: scales differ",
                          W4AX_SHARES[si], (long long)M, keys[kv]);
            for (size_t i = 0; i < xn; i++)
                ck_assert_msg(Xq[i] == Xq_gpu[i], "share %g M=%lld %s: Xq[%zu] %d, reference %d", W4AX_SHARES[si],
                              (long long)M, keys[kv], i, Xq_gpu[i], Xq[i]);
        }
        d->MemFree(dX);
        d->MemFree(dXq);
        d->MemFree(dsx);
        free(X); free(Xq); free(Xq_gpu); free(sx); free(sx_gpu);
    }
    printf("%s activations, INT8 share %g (%lld channels), K = %lld: bit-exact at M = 1, 7, 300, %d kernels\n",
           qjit_scheme_name(scheme), W4AX_SHARES[si], (long long)ai.a8_channels, (long long)K, nkeys);
    d->MemFree(dP);
    d->MemFree(dS);
    d->MemFree(dC);
    free(perm);
    free(is8);
    free(set);
    teardown(&f);
}

/* One-part activation kernels, bit for bit the CPU reference of the
 * scheme (INT8 for w4a8-lqq, INT4 for w4a4, one and two values a byte), one
 * CTA a token and ctas=P of them (each storing every Pth round of 8 or 32
 * channels a thread; rounds that do not divide among the CTAs, rows kept in
 * registers and rows read twice), at M = 1, 7, 300, K = 1536 and 20480,
 * with outlier channels and an all-zero token. */
START_TEST(one_part_activation_kernels_bit_exact)
{
    static const struct { qjit_scheme scheme; const char *key; } CASES[] = {
        {QJIT_SCHEME_W4A8_LQQ, "kernel=act-quant;bits=8;threads=512"},
        {QJIT_SCHEME_W4A8_LQQ, "kernel=act-quant;bits=8;ctas=3;threads=64"},
        {QJIT_SCHEME_W4A8_LQQ, "kernel=act-quant;bits=8;ctas=7;threads=512"},
        {QJIT_SCHEME_W4A4, "kernel=act-quant;bits=4;ctas=5;threads=32"},
        {QJIT_SCHEME_W4A4, "kernel=act-quant;bits=4;pack=2;ctas=2;threads=32"},
    };
    static const int64_t KS[] = {1536, 20480};
    const qjit_scheme scheme = CASES[_i].scheme;
    for (size_t ki = 0; ki < 2; ki++) {
        const int64_t K = KS[ki];
        fixture f;
        setup_scheme(&f, scheme, 64, K, 0, 970 + _i, 1);
        const qjit__kernel *k;
        ck_assert_msg(qjit__kernel_get(f.ctx, CASES[_i].key, &k) == QJIT_OK, "%s", qjit_last_error(f.ctx));
        const unsigned P = ctas_of(CASES[_i].key);
        const int packed = strstr(CASES[_i].key, "pack=2") != NULL;
        qjit__driver *d = f.d;
        qt_rng r = qt_rng_make(0xAC7u + (uint64_t)_i);
        static const int64_t MS_ACT[] = {1, 7, 300};
        for (size_t t = 0; t < 3; t++) {
            const int64_t M = MS_ACT[t];
            const size_t xn = (size_t)(M * K);
            uint16_t *X = malloc(xn * 2);
            int8_t *Xq = malloc(xn), *Xq_gpu = malloc(xn);
            float *sx = malloc(sizeof(float) * (size_t)M), *sx_gpu = malloc(sizeof(float) * (size_t)M);
            for (size_t i = 0; i < xn; i++) {
                const int64_t m = (int64_t)i / K;
                const double gain = (int64_t)i % K % 97 == 5 ? 30.0 : 1.0;
                X[i] = qjit__float_to_half((float)(qt_normal(&r) * gain * (m == M / 2 ? 0.0 : 1.0)));
            }
            ck_assert_int_eq(qjit_reference_quantize_activations_for(f.ctx, f.blob, f.bytes, M, X, Xq, sx), QJIT_OK);
            CUdeviceptr dX, dXq, dsx, dC;
            CU(d->MemAlloc(&dX, xn * 2));
            CU(d->MemAlloc(&dXq, xn));
            CU(d->MemAlloc(&dsx, sizeof(float) * (size_t)M));
            CU(d->MemAlloc(&dC, 16));
            CU(d->MemcpyHtoD(dX, X, xn * 2));
            CU(d->MemsetD8(dXq, 0x5A, xn));
            CU(d->MemsetD8(dsx, 0x5A, sizeof(float) * (size_t)M));
            int m32 = (int)M, k32 = (int)K, ncounters = 0;
            void *args[] = {&dX, &dXq, &dsx, &m32, &k32, &dC, &ncounters};
            CU(d->LaunchKernel(k->function, (unsigned)M, 1, P, k->facts.threads, 1, 1, (unsigned)k->facts.smem, NULL,
                               args, NULL));
            CU(d->CtxSynchronize());
            CU(d->MemcpyDtoH(Xq_gpu, dXq, packed ? xn / 2 : xn));
            CU(d->MemcpyDtoH(sx_gpu, dsx, sizeof(float) * (size_t)M));
            if (packed)
                unpack_tokens(Xq_gpu, M, K, 0);
            ck_assert_msg(!memcmp(sx, sx_gpu, sizeof(float) * (size_t)M), "%s K=%lld M=%lld: scales differ",
                          CASES[_i].key, (long long)K, (long long)M);
            for (size_t i = 0; i < xn; i++)
                ck_assert_msg(Xq[i] == Xq_gpu[i], "%s K=%lld M=%lld: Xq[%zu] %d, reference %d", CASES[_i].key,
                              (long long)K, (long long)M, i, Xq_gpu[i], Xq[i]);
            d->MemFree(dX);
            d->MemFree(dXq);
            d->MemFree(dsx);
            d->MemFree(dC);
            free(X); free(Xq); free(Xq_gpu); free(sx); free(sx_gpu);
        }
        teardown(&f);
    }
    printf("%s: bit-exact at K = 1536, 20480, M = 1, 7, 300\n", CASES[_i].key);
}
END_TEST

/* w4ax's: one and two 4-bit values a byte, gathered from memory and from a
 * copy of the row in shared memory, one CTA a token and several. */
START_TEST(w4ax_activation_kernel_bit_exact)
{
    static const char *const KEYS[] = {"kernel=act-quant;bits=8+4;threads=256",
                                       "kernel=act-quant;bits=8+4;pack=2;threads=256",
                                       "kernel=act-quant;bits=8+4;cache=2048;threads=512",
                                       "kernel=act-quant;bits=8+4;pack=2;cache=4096;threads=512",
                                       "kernel=act-quant;bits=8+4;cache=2048;ctas=3;threads=128",
                                       "kernel=act-quant;bits=8+4;pack=2;ctas=2;threads=64",
                                       "kernel=act-quant;bits=8+4;cache=1024;ctas=5;threads=64"};
    check_activation_kernels(QJIT_SCHEME_W4AX, _i, 1536, KEYS, 7, 30.0, 0xA4A8u + (uint64_t)_i, 900 + _i);
}
END_TEST

/* w4ax layers through the dispatch table (decode and multistage tiles
 * for few tokens, warpgroup-MMA ones past them on sm_90a, two sums per
 * output), bit-exact in both planes: INT8 shares 0, 10 %, 25 % and 100 %
 * (calibration rows with outlier channels choose the INT8 blocks), Llama
 * and odd shapes, M = 1 .. 1000 and 4096. */
START_TEST(w4ax_layers_bit_exact)
{
    static const struct { int64_t N, K; double share; } CASES[] = {
        {4096, 4096, 0.1}, {11008, 4096, 0.25}, {16 * 21, 128 * 3, 0.0}, {16 * 7, 128 * 10, 1.0},
        /* A row longer than the activation kernel keeps in registers (512
         * threads x 32 positions): gathered twice. */
        {16 * 3, 128 * 160, 0.1}};
    fixture f;
    setup_w4ax(&f, CASES[_i].N, CASES[_i].K, CASES[_i].share, 0xA8A4u + (uint64_t)_i, 950 + _i, 0);
    for (size_t m = 0; m < sizeof MS / sizeof MS[0]; m++)
        check_m(&f, MS[m], 9500 * _i + m);
    if (_i == 0)
        check_m(&f, 4096, 9599);
    teardown(&f);
}
END_TEST

/* w4ax on every pipeline that takes two parts, forced: the decode pipe,
 * the warpgroup-MMA pipes (cp.async and TMA rings, one and two CTAs' worth of sums per
 * thread; with stash=1 one set of sums, the INT8 part's stored in a stash
 * slot at split 1, in the partials past it) and a multistage tile, split-K
 * slices that start and end inside either part (a 320 x 1536 layer: 12 K
 * tiles, the INT8 part 0, 2, 3 or 12 of them), bit-exact in both planes. */
static const char *const W4AX_PIPES[] = {
    "tile=64x128x128;warps=1x8;stages=4;split=3;pipe=wgmma",
    "tile=32x64x128;warps=1x4;stages=8;split=2;pipe=wgmma",
    "tile=64x128x128;warps=2x4;stages=5;split=2;pipe=tma",
    "tile=128x128x128;warps=1x8;stages=6;split=1;pipe=tma",
    "tile=128x64x128;warps=1x4;stages=6;split=5;pipe=tma",
    "tile=64x64x128;warps=1x4;stages=8;split=4;pipe=tma",
    "tile=64x128x128;warps=1x8;stages=4;split=3;pipe=wgmma;stash=1",
    "tile=64x128x128;warps=2x4;stages=5;split=2;pipe=tma;stash=1",
    "tile=128x128x128;warps=1x8;stages=4;split=1;pipe=tma;stash=1",
    "tile=128x128x128;warps=1x8;stages=6;split=1;pipe=wgmma;stash=1",
    "tile=128x64x128;warps=1x4;stages=6;split=5;pipe=tma;stash=1",
    "tile=32x128x128;warps=1x4;stages=3;split=3",
    /* The decode pipe: each warp's K slice (1 to 3 steps) may cross the
     * part boundary. */
    "tile=16x32x64;warps=1x8;stages=4;pipe=decode",
    "tile=8x16x64;warps=1x16;stages=2;pipe=decode",
    /* The INT4 part on the INT4 MMA (mma=s4, what sm_80/86/89 run), its
     * tokens two per byte; K tiles of 128 and 64. */
    "tile=32x128x128;warps=1x4;stages=3;split=3;mma=s4",
    "tile=64x64x64;warps=2x2;stages=4;split=2;mma=s4",
};
#define NW4AX_PIPES ((int)(sizeof W4AX_PIPES / sizeof W4AX_PIPES[0]))

/* w4a4 on the INT4 tensor-core MMA (mma=s4, m16n8k64 .s4, the tokens
 * packed two per byte by the activation kernel): what sm_80/86/89 run,
 * forced here on every GPU (sm_90 executes it, widened by ptxas). Tiles
 * with K steps of 64 and 128 (token rows of 32 and 64 bytes in a stage),
 * one to eight warps along the tokens, split-K; a 320 x 1536 layer, odd
 * shapes (K = 640 and 41600: a row the activation kernel reads twice) and
 * a Llama layer up to 4096 tokens. */
static const char *const S4_PIPES[] = {
    "tile=32x128x128;warps=1x4;stages=3;split=3;mma=s4",
    "tile=64x64x64;warps=2x2;stages=4;split=1;mma=s4",
    "tile=16x64x128;warps=1x4;stages=4;split=2;mma=s4",
    "tile=128x128x64;warps=2x4;stages=4;split=1;mma=s4",
};
#define NS4_PIPES ((int)(sizeof S4_PIPES / sizeof S4_PIPES[0]))
static const struct { int64_t N, K; } S4_SHAPES[] = {{320, 1536}, {16 * 7, 64 * 10}, {16 * 3, 128 * 325}};
#define NS4_SHAPES ((int)(sizeof S4_SHAPES / sizeof S4_SHAPES[0]))

START_TEST(int4_mma_bit_exact)
{
    const int si = _i / NS4_PIPES, pi = _i % NS4_PIPES;
    fixture f;
    setup_scheme(&f, QJIT_SCHEME_W4A4, S4_SHAPES[si].N, S4_SHAPES[si].K, 0, 1300 + _i, 1);
    if (!create_forced(&f, S4_PIPES[pi]))
        return;
    char key[512];
    ck_assert_int_eq(qjit_linear_variant(f.lin, 5, key, sizeof key), QJIT_OK);
    ck_assert_msg(strstr(key, "mma=s4") != NULL, "not the INT4 MMA: %s", key);
    check_m(&f, 1, 13000 + 3 * _i);
    check_m(&f, 77, 13001 + 3 * _i);
    check_m(&f, 300, 13002 + 3 * _i);
    teardown(&f);
}
END_TEST

START_TEST(int4_mma_llama_layer)
{
    fixture f;
    setup_scheme(&f, QJIT_SCHEME_W4A4, 4096, 4096, 0, 1399, 1);
    if (!create_forced(&f, "tile=128x128x64;warps=2x4;stages=4;split=1;mma=s4"))
        return;
    for (size_t m = 0; m < sizeof MS / sizeof MS[0]; m++)
        check_m(&f, MS[m], 13900 + m);
    check_m(&f, 4096, 13999);
    teardown(&f);
}
END_TEST

START_TEST(w4ax_every_pipeline_bit_exact)
{
    const int si = _i / NW4AX_PIPES, pi = _i % NW4AX_PIPES;
    if (!wanted_pipe(W4AX_PIPES[pi]))
        return;
    fixture f;
    setup_w4ax(&f, 320, 1536, W4AX_SHARES[si], 0xA8A5u + (uint64_t)_i, 960 + _i, 1);
    if (!create_forced(&f, W4AX_PIPES[pi]))
        return;
    printf("w4ax INT8 share %g: %s\n", W4AX_SHARES[si], W4AX_PIPES[pi]);
    check_m(&f, 5, 9600 + 3 * _i);
    check_m(&f, 77, 9601 + 3 * _i);
    check_m(&f, 300, 9602 + 3 * _i);
    teardown(&f);
}
END_TEST

/* w4ax-s's (scales=1, inplace=1): one scale per token, max(max8 / 127,
 * max4 / 7), in the caller's order, with outliers under and past 127 INT4
 * steps; rows kept in registers (512 and 128 threads) and read twice (32
 * threads: 16 rounds of a 4096-channel row), one CTA a token and several
 * (rounds that do not divide among them). */
START_TEST(w4axs_activation_kernel_bit_exact)
{
    static const char *const KEYS[] = {"kernel=act-quant;bits=8+4;scales=1;inplace=1;threads=512",
                                       "kernel=act-quant;bits=8+4;scales=1;inplace=1;ctas=3;threads=128",
                                       "kernel=act-quant;bits=8+4;scales=1;inplace=1;threads=32",
                                       "kernel=act-quant;bits=8+4;scales=1;inplace=1;ctas=5;threads=32",
                                       "kernel=act-quant;bits=8+4;scales=1;inplace=1;ctas=8;threads=512"};
    check_activation_kernels(QJIT_SCHEME_W4AX_S, _i, 4096, KEYS, 5, 300.0, 0xA4ABu + (uint64_t)_i, 930 + _i);
}
END_TEST

/* w4ax-s layers through the dispatch table (w4a4's kernels, one sum per
 * output), bit-exact: INT8 shares 0, 10 %, 25 %, 100 %, Llama and odd
 * shapes, M = 1 .. 1000 and 4096 (and a row of 20480 channels). */
START_TEST(w4axs_layers_bit_exact)
{
    static const struct { int64_t N, K; double share; } CASES[] = {
        {4096, 4096, 0.1}, {11008, 4096, 0.25}, {16 * 21, 128 * 3, 0.0}, {16 * 7, 128 * 10, 1.0},
        {16 * 3, 128 * 160, 0.1}};
    fixture f;
    setup_two_part(&f, QJIT_SCHEME_W4AX_S, CASES[_i].N, CASES[_i].K, CASES[_i].share, 0xA8ABu + (uint64_t)_i,
                   970 + _i, 0);
    for (size_t m = 0; m < sizeof MS / sizeof MS[0]; m++)
        check_m(&f, MS[m], 9700 * _i + m);
    if (_i == 0)
        check_m(&f, 4096, 9799);
    teardown(&f);
}
END_TEST

/* w4ax-s on every pipeline, forced (its GEMMs are one-part ones: the
 * cluster reduction too), a 320 x 1536 layer at INT8 shares 0, 10 %, 25 %,
 * 100 %. */
static const char *const W4AXS_PIPES[] = {
    "tile=32x128x128;warps=1x4;stages=3;split=3",
    "tile=16x64x128;warps=1x4;stages=4;split=2;reduce=cluster",
    "tile=16x32x64;warps=1x8;stages=4;pipe=decode",
    "tile=8x16x64;warps=1x16;stages=2;pipe=decode",
    "tile=32x64x128;warps=1x4;stages=8;split=2;pipe=wgmma;reduce=cluster",
    /* Clusters of 3 and 4: a region of sums per peer (lib/split_k.cu). */
    "tile=64x128x128;warps=2x4;stages=4;split=3;pipe=tma;reduce=cluster",
    "tile=128x64x128;warps=1x4;stages=8;split=4;pipe=tma;reduce=cluster",
    "tile=64x128x128;warps=1x8;stages=4;split=3;pipe=wgmma",
    "tile=128x128x128;warps=1x8;stages=4;split=1;pipe=tma",
    "tile=128x128x128;warps=1x8;stages=4;split=2;pipe=tma;reduce=cluster",
    "tile=64x64x128;warps=1x4;stages=8;split=4;pipe=tma",
};
#define NW4AXS_PIPES ((int)(sizeof W4AXS_PIPES / sizeof W4AXS_PIPES[0]))

START_TEST(w4axs_every_pipeline_bit_exact)
{
    const int si = _i / NW4AXS_PIPES, pi = _i % NW4AXS_PIPES;
    if (!wanted_pipe(W4AXS_PIPES[pi]))
        return;
    fixture f;
    setup_two_part(&f, QJIT_SCHEME_W4AX_S, 320, 1536, W4AX_SHARES[si], 0xA8ACu + (uint64_t)_i, 990 + _i, 1);
    if (!create_forced(&f, W4AXS_PIPES[pi]))
        return;
    printf("w4ax-s INT8 share %g: %s\n", W4AX_SHARES[si], W4AXS_PIPES[pi]);
    check_m(&f, 5, 9900 + 3 * _i);
    check_m(&f, 77, 9901 + 3 * _i);
    check_m(&f, 300, 9902 + 3 * _i);
    teardown(&f);
}
END_TEST

/* BF16 layers (qjit_linear_options.dtype): every scheme and group on a
 * Llama layer through the dispatch table at every M, and every pipeline
 * forced (the activation kernels and the epilogues of each, fused
 * quantization included) -- accumulators exact, BF16 outputs within BF16
 * rounding of the reference, the tokens entry identical. */
static void setup_bf16(fixture *f, qjit_scheme scheme, int64_t N, int64_t K, int group, uint64_t stream)
{
    setup_scheme(f, scheme, N, K, group, stream, 1);
    f->dtype = QJIT_DTYPE_BF16;
}

START_TEST(bf16_layers_bit_exact)
{
    /* Every scheme and group, then the two-part schemes (10 % INT8). */
    static const qjit_scheme two[] = {QJIT_SCHEME_W4AX, QJIT_SCHEME_W4AX_S};
    const qjit_scheme scheme = _i < NSG ? SCHEME_GROUPS[_i].scheme : two[_i - NSG];
    if (!wanted(scheme))
        return;
    fixture f;
    if (_i < NSG) {
        setup_bf16(&f, scheme, 4096, 4096, SCHEME_GROUPS[_i].group, 500 + _i);
    } else {
        setup_two_part(&f, scheme, 4096, 4096, 0.1, 50 + _i, 500 + _i, 1);
        f.dtype = QJIT_DTYPE_BF16;
    }
    qjit_linear_options lo;
    qjit_linear_options_init(&lo);
    lo.dtype = QJIT_DTYPE_BF16;
    ck_assert_int_eq(qjit_linear_create(f.ctx, f.blob, f.bytes, &lo, &f.lin), QJIT_OK);
    char key[512];
    ck_assert_int_eq(qjit_linear_variant(f.lin, 1, key, sizeof key), QJIT_OK);
    ck_assert_ptr_nonnull(strstr(key, "dtype=bf16"));
    for (size_t m = 0; m < sizeof MS / sizeof MS[0]; m++)
        check_m(&f, MS[m], 5000 * _i + m);
    teardown(&f);
}
END_TEST

START_TEST(bf16_every_pipeline_bit_exact)
{
    const int sg = _i / NPIPES, pi = _i % NPIPES;
    if (!wanted(SCHEME_GROUPS[sg].scheme) || !wanted_pipe(PIPES[pi]))
        return;
    fixture f;
    setup_bf16(&f, SCHEME_GROUPS[sg].scheme, 320, 1536, SCHEME_GROUPS[sg].group, 600 + _i);
    if (!create_forced(&f, PIPES[pi]))
        return;
    check_m(&f, 5, 6000 * _i + 1);
    check_m(&f, 300, 6000 * _i + 2);
    teardown(&f);
}
END_TEST

/* A layer of one dtype refuses a forced variant of the other, and a
 * dtype that is neither. */
/* A bias for f's layer: N values of a few units, one exactly zero. */
static void give_bias(fixture *f, uint64_t stream)
{
    qt_rng r = qt_rng_make(stream);
    f->bias = malloc(sizeof(float) * (size_t)f->N);
    for (int64_t n = 0; n < f->N; n++)
        f->bias[n] = n == 3 ? 0.0f : (float)(2.0 * qt_normal(&r));
}

/* bias=1: every scheme and group through the dispatch table (FP16; BF16
 * for the odd ones), then the two-part schemes: the output is the
 * reference plus the bias, rounded once; the accumulators take none. */
START_TEST(bias_layers_bit_exact)
{
    static const qjit_scheme two[] = {QJIT_SCHEME_W4AX, QJIT_SCHEME_W4AX_S};
    const qjit_scheme scheme = _i < NSG ? SCHEME_GROUPS[_i].scheme : two[_i - NSG];
    if (!wanted(scheme))
        return;
    fixture f;
    if (_i < NSG)
        setup_scheme(&f, scheme, 4096, 4096, SCHEME_GROUPS[_i].group, 700 + _i, 1);
    else
        setup_two_part(&f, scheme, 4096, 4096, 0.1, 70 + _i, 700 + _i, 1);
    f.dtype = _i % 2 ? QJIT_DTYPE_BF16 : QJIT_DTYPE_F16;
    give_bias(&f, 710 + _i);
    qjit_linear_options lo;
    qjit_linear_options_init(&lo);
    lo.dtype = f.dtype;
    lo.bias = f.bias;
    ck_assert_int_eq(qjit_linear_create(f.ctx, f.blob, f.bytes, &lo, &f.lin), QJIT_OK);
    char key[512];
    ck_assert_int_eq(qjit_linear_variant(f.lin, 1, key, sizeof key), QJIT_OK);
    ck_assert_ptr_nonnull(strstr(key, "bias=1"));
    for (size_t m = 0; m < sizeof MS / sizeof MS[0]; m++)
        check_m(&f, MS[m], 7000 * _i + m);
    teardown(&f);
}
END_TEST

/* bias=1 on every pipeline forced (w4a8-lqq, g = 128). */
START_TEST(bias_every_pipeline_bit_exact)
{
    if (!wanted(QJIT_SCHEME_W4A8_LQQ) || !wanted_pipe(PIPES[_i]))
        return;
    fixture f;
    setup_scheme(&f, QJIT_SCHEME_W4A8_LQQ, 320, 1536, 128, 800 + _i, 1);
    give_bias(&f, 810 + _i);
    if (!create_forced(&f, PIPES[_i]))
        return;
    check_m(&f, 5, 8000 * _i + 1);
    check_m(&f, 300, 8000 * _i + 2);
    teardown(&f);
}
END_TEST

START_TEST(bf16_options_are_checked)
{
    fixture f;
    setup_scheme(&f, QJIT_SCHEME_W4A8_LQQ, 256, 512, 128, 77, 1);
    qjit_linear_options lo;
    qjit_linear_options_init(&lo);
    lo.dtype = QJIT_DTYPE_F32;
    ck_assert_int_eq(qjit_linear_create(f.ctx, f.blob, f.bytes, &lo, &f.lin), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_null(f.lin);
    lo.dtype = QJIT_DTYPE_F16;
    lo.variant = "tile=16x64x128;warps=1x4;dtype=bf16";
    ck_assert_int_eq(qjit_linear_create(f.ctx, f.blob, f.bytes, &lo, &f.lin), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "bf16 tokens"));
    ck_assert_ptr_null(f.lin);
    teardown(&f);
}
END_TEST

/* w4a8-is with group scales near the INT32 bound: weights spanning eight
 * orders of magnitude, so the amplifier is lowered until 127 x 8 x K x max S
 * fits. The accumulators, sums of S-scaled group sums, must still be exact
 * on every pipe. */
START_TEST(integer_scale_near_the_bound)
{
    fixture f;
    setup_scheme(&f, QJIT_SCHEME_W4A8_IS, 256, 4096, 64, 77, 1);
    qt_rng r = qt_rng_make(78);
    float *W = malloc(sizeof(float) * (size_t)(f.N * f.K));
    for (int64_t i = 0; i < f.N * f.K; i++)
        W[i] = (float)(qt_normal(&r) * pow(10.0, -4.0 + 8.0 * (double)((i / 64) % 97) / 96.0));
    ck_assert_int_eq(qjit_quantize_weights(f.ctx, f.scheme, f.group, W, QJIT_DTYPE_F32, f.N, f.K, f.blob, f.bytes,
                                           &f.bytes), QJIT_OK);
    free(W);
    qjit_weights_info info;
    ck_assert_int_eq(qjit_weights_inspect(f.ctx, f.blob, f.bytes, &info), QJIT_OK);
    printf("w4a8-is near the bound: alpha = %g\n", info.alpha);
    char arch[16];
    ck_assert_int_eq(qjit_context_arch(f.ctx, arch, sizeof arch), QJIT_OK);
    static const char *const variants[] = {NULL, "tile=32x128x128;warps=1x4;stages=3;split=3",
                                           "tile=16x32x64;warps=1x8;stages=4;pipe=decode",
                                           "tile=128x128x128;warps=1x8;stages=4;split=2;pipe=tma"};
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        if (variants[v] && strstr(variants[v], "pipe=tma") && strcmp(arch, "sm_90a"))
            continue;
        qjit_linear_options lo;
        qjit_linear_options_init(&lo);
        lo.variant = variants[v];
        ck_assert_msg(qjit_linear_create(f.ctx, f.blob, f.bytes, &lo, &f.lin) == QJIT_OK, "%s",
                      qjit_last_error(f.ctx));
        check_m(&f, 3, 4000 + v);
        check_m(&f, 200, 4100 + v);
        qjit_linear_destroy(f.lin);
        f.lin = NULL;
    }
    teardown(&f);
}
END_TEST

/* Threads share one fresh layer: their first calls race to resolve the
 * same kernels; each then runs on its own stream and workspace. */
typedef struct worker {
    fixture *f;
    int64_t M;
    uint64_t seed;
    long long mismatches;
    qjit_status st;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    fixture *f = w->f;
    qjit__driver *d = f->d;
    const int64_t M = w->M, N = f->N, K = f->K;
    size_t xn = (size_t)(M * K), yn = (size_t)(M * N), ws_bytes;
    qjit_linear_workspace_size(f->lin, M, &ws_bytes);
    uint16_t *X = malloc(xn * 2);
    int8_t *Xq = malloc(xn);
    float *sx = malloc((size_t)M * 4);
    int32_t *acc = malloc(yn * 4), *ref = malloc(yn * 4);
    qt_rng r = qt_rng_make(w->seed);
    for (size_t i = 0; i < xn; i++)
        X[i] = qjit__float_to_half((float)qt_normal(&r));
    qjit_reference_quantize_activations(NULL, M, K, X, Xq, sx);
    qjit_reference_gemm(NULL, f->blob, f->bytes, M, Xq, sx, ref, NULL);
    CUdeviceptr dX = 0, dA = 0, dW = 0;
    CUstream stream = NULL;
    d->CtxSetCurrent(d->context);
    d->StreamCreate(&stream, 0);
    d->MemAlloc(&dX, xn * 2);
    d->MemAlloc(&dA, yn * 4);
    d->MemAlloc(&dW, ws_bytes);
    d->MemcpyHtoD(dX, X, xn * 2);
    d->MemsetD8(dA, 0xA5, yn * 4);
    for (int rep = 0; rep < 3 && w->st == QJIT_OK; rep++)
        w->st = qjit_linear_forward_acc(f->lin, M, (void *)dX, (int32_t *)dA, (void *)dW, ws_bytes, stream);
    d->StreamSynchronize(stream);
    d->MemcpyDtoH(acc, dA, yn * 4);
    for (size_t i = 0; i < yn; i++)
        w->mismatches += acc[i] != ref[i];
    d->MemFree(dX);
    d->MemFree(dA);
    d->MemFree(dW);
    d->StreamDestroy(stream);
    free(X); free(Xq); free(sx); free(acc); free(ref);
    return NULL;
}

START_TEST(concurrent_forward_calls)
{
    fixture f;
    setup(&f, 1024, 2048, 128, 11);
    enum { THREADS = 6 };
    static const int64_t ms[THREADS] = {1, 16, 16, 100, 300, 1};
    worker w[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){&f, ms[i], 500 + (uint64_t)i, 0, QJIT_OK};
        ck_assert_int_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++) {
        ck_assert_msg(w[i].st == QJIT_OK, "thread %d: %s", i, qjit_status_name(w[i].st));
        ck_assert_msg(w[i].mismatches == 0, "thread %d (M=%lld): %lld accumulators differ", i, (long long)w[i].M,
                      w[i].mismatches);
    }
    teardown(&f);
}
END_TEST

/* A forced variant (odd split-K, another tile) runs at every M, exact (on
 * sm_90a also wgmma and TMA ones); one of another group is refused at create. */
START_TEST(forced_variant)
{
    fixture f;
    setup(&f, 512, 1024, 128, 21);
    qjit_linear_options lo;
    qjit_linear_options_init(&lo);
    lo.variant = "g=128;tile=32x128x128;warps=1x4;stages=3;split=3";
    qjit_linear *lin = NULL;
    qjit_status st = qjit_linear_create(f.ctx, f.blob, f.bytes, &lo, &lin);
    ck_assert_msg(st == QJIT_OK, "%s", qjit_last_error(f.ctx));
    char key[512];
    ck_assert_int_eq(qjit_linear_variant(lin, 1000, key, sizeof key), QJIT_OK);
    ck_assert_ptr_nonnull(strstr(key, "split=3;"));
    ck_assert_ptr_nonnull(strstr(key, "tile=32x128x128"));
    qjit_linear *dispatched = f.lin;
    f.lin = lin;
    check_m(&f, 5, 31);
    check_m(&f, 77, 32);
    f.lin = dispatched;
    qjit_linear_destroy(lin);
    /* On sm_90a, a warpgroup-MMA variant with two warpgroups along the
     * tokens, two 64-row blocks each, and an odd split. */
    /* The same through the TMA pipe: a split whose slices are shorter
     * than the ring, and a 3-stage ring that wraps (mbarrier parity). */
    /* And split-K reduced in clusters. */
    static const char *const sm90a_variants[] = {
        "g=128;tile=64x128x128;warps=2x4;stages=5;split=3;pipe=wgmma",
        "g=128;tile=64x128x128;warps=2x4;stages=5;split=3;pipe=tma",
        "g=128;tile=128x128x128;warps=1x8;stages=4;split=3;pipe=tma",
        "g=128;tile=64x256x128;warps=1x8;stages=3;split=1;pipe=tma",
        /* Split-K over distributed shared memory: clusters of 2, 3 and 8
         * CTAs (slices of one K tile at 8), fused quantization with it. */
        "g=128;tile=16x64x128;warps=1x4;stages=4;split=2;reduce=cluster",
        "g=128;tile=32x128x128;warps=1x4;stages=3;split=3;reduce=cluster",
        "g=128;tile=64x128x128;warps=1x8;stages=4;split=8;pipe=wgmma;reduce=cluster",
        "g=128;tile=128x128x128;warps=1x8;stages=4;split=4;pipe=tma;reduce=cluster",
        "g=128;tile=16x64x128;warps=1x4;stages=4;split=4;reduce=cluster;actq=fused",
    };
    char arch[16];
    ck_assert_int_eq(qjit_context_arch(f.ctx, arch, sizeof arch), QJIT_OK);
    for (size_t i = 0; !strcmp(arch, "sm_90a") && i < sizeof sm90a_variants / sizeof sm90a_variants[0]; i++) {
        lo.variant = sm90a_variants[i];
        st = qjit_linear_create(f.ctx, f.blob, f.bytes, &lo, &lin);
        ck_assert_msg(st == QJIT_OK, "%s: %s", lo.variant, qjit_last_error(f.ctx));
        f.lin = lin;
        check_m(&f, 5, 33);
        check_m(&f, 77, 34);
        check_m(&f, 300, 35);
        f.lin = dispatched;
        qjit_linear_destroy(lin);
    }
    lo.variant = "g=64;tile=32x128x128;warps=1x4";
    lin = (qjit_linear *)0x1;
    ck_assert_int_eq(qjit_linear_create(f.ctx, f.blob, f.bytes, &lo, &lin), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_null(lin);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "g=128"));
    teardown(&f);
}
END_TEST

/* A context of the built-in templates on a cache folder of its own. */
static qjit_context *cache_context(const char *dir)
{
    qjit_context_options o;
    qjit_context_options_init(&o);
    o.template_path = "";
    o.cache_dir = dir;
    qjit_context *ctx = NULL;
    ck_assert_int_eq(qjit_context_create(&o, &ctx), QJIT_OK);
    return ctx;
}

/* check_m on another layer (and its context) of the fixture's weights. */
static void check_m_with(fixture *f, qjit_context *ctx, qjit_linear *lin, int64_t M, uint64_t seed)
{
    qjit_linear *own = f->lin;
    qjit_context *own_ctx = f->ctx;
    f->lin = lin;
    f->ctx = ctx;
    check_m(f, M, seed);
    f->lin = own;
    f->ctx = own_ctx;
}

/* A tuning record in the layer's cache takes the table's place: its bucket
 * edges and variants run, bit-exact; one whose variant does not fit the
 * layer is logged and the table used (a damaged one: test_cache). */
START_TEST(tuning_record_takes_the_table_place)
{
    fixture f;
    setup(&f, 512, 1024, 128, 41);
    char *tmp = qt_tempdir("record");
    qjit_context *ctx = cache_context(tmp);
    const qjit__record_layer layer = {"w4a8-lqq", 128, 512, 1024, "f16", 0, 0, 0, 0};
    qjit__record_device dev;
    pthread_mutex_lock(&ctx->lock);
    ck_assert_int_eq(qjit__record_device_now(ctx, &dev), QJIT_OK);
    ck_assert_int_eq(qjit__record_store(ctx, tmp, &layer, &dev,
                                        "6 kernel=gemm;scheme=w4a8-lqq;g=128;tile=16x64x128;warps=1x4;stages=4;split=2\n"
                                        "0 kernel=gemm;scheme=w4a8-lqq;g=128;tile=32x128x128;warps=1x4;stages=3;split=3\n",
                                        NULL), QJIT_OK);
    pthread_mutex_unlock(&ctx->lock);
    qjit_linear *lin = NULL;
    ck_assert_msg(qjit_linear_create(ctx, f.blob, f.bytes, NULL, &lin) == QJIT_OK, "%s", qjit_last_error(ctx));
    char key[512], table[512];
    ck_assert_int_eq(qjit_linear_variant(lin, 6, key, sizeof key), QJIT_OK);
    ck_assert_msg(strstr(key, "split=2;") && strstr(key, "tile=16x64x128"), "%s", key);
    ck_assert_int_eq(qjit_linear_variant(lin, 7, key, sizeof key), QJIT_OK);
    ck_assert_msg(strstr(key, "split=3;") && strstr(key, "tile=32x128x128"), "%s", key);
    check_m_with(&f, ctx, lin, 5, 51);
    check_m_with(&f, ctx, lin, 77, 52);
    qjit_linear_destroy(lin);
    /* A variant of another group: logged, the table used. */
    pthread_mutex_lock(&ctx->lock);
    ck_assert_int_eq(qjit__record_store(ctx, tmp, &layer, &dev,
                                        "0 kernel=gemm;scheme=w4a8-lqq;g=64;tile=32x128x128;warps=1x4;stages=3\n",
                                        NULL), QJIT_OK);
    pthread_mutex_unlock(&ctx->lock);
    ck_assert_msg(qjit_linear_create(ctx, f.blob, f.bytes, NULL, &lin) == QJIT_OK, "%s", qjit_last_error(ctx));
    for (int64_t m = 1; m <= 300; m = m * 3 + 1) {
        ck_assert_int_eq(qjit_linear_variant(lin, m, key, sizeof key), QJIT_OK);
        ck_assert_int_eq(qjit_linear_variant(f.lin, m, table, sizeof table), QJIT_OK);
        ck_assert_str_eq(key, table);
    }
    qjit_linear_destroy(lin);
    qjit_context_destroy(ctx);
    qt_rmtree(tmp);
    free(tmp);
    teardown(&f);
}
END_TEST

/* qjit_tune_layer end to end on a small layer: a record stored whose
 * buckets end at the points asked for, every point at least as fast as the
 * table by the tuner's own measure, and a layer created afterwards runs
 * the record's variants, bit-exact; a dry run stores nothing. */
START_TEST(tuning_a_layer_end_to_end)
{
    fixture f;
    setup(&f, 512, 1024, 128, 43);
    char *tmp = qt_tempdir("tune");
    qjit_context *ctx = cache_context(tmp);
    const int64_t ms[] = {1, 6, 40, 200};
    qjit_tune_options to;
    qjit_tune_options_init(&to);
    to.ms = ms;
    to.n_ms = 4;
    to.reps = 5;
    to.store = 0;
    qjit_tune_report r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    ck_assert_msg(qjit_tune_layer(ctx, f.blob, f.bytes, &to, &r) == QJIT_OK, "%s", qjit_last_error(ctx));
    ck_assert_int_eq(r.stored, 0);
    char key[512], table[512];
    qjit_linear *lin = NULL;
    ck_assert_msg(qjit_linear_create(ctx, f.blob, f.bytes, NULL, &lin) == QJIT_OK, "%s", qjit_last_error(ctx));
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(qjit_linear_variant(lin, ms[i], key, sizeof key), QJIT_OK);
        ck_assert_int_eq(qjit_linear_variant(f.lin, ms[i], table, sizeof table), QJIT_OK);
        ck_assert_str_eq(key, table);
    }
    qjit_linear_destroy(lin);
    to.store = 1;
    ck_assert_msg(qjit_tune_layer(ctx, f.blob, f.bytes, &to, &r) == QJIT_OK, "%s", qjit_last_error(ctx));
    ck_assert_int_eq(r.stored, 1);
    ck_assert_int_eq(r.npoints, 4);
    ck_assert_int_gt(r.candidates, 4);
    printf("tuned 512x1024: %d candidates, %d buckets, %.3fx over the table\n", r.candidates, r.nbuckets, r.speedup);
    for (int i = 0; i < r.npoints; i++) {
        ck_assert_int_eq(r.points[i].M, ms[i]);
        ck_assert_int_eq(qjit_linear_variant(f.lin, ms[i], table, sizeof table), QJIT_OK);
        ck_assert(r.points[i].tuned_us > 0 && r.points[i].static_us > 0);
        /* The buckets are timed again as the record runs them, apart from
         * the table's timing: a point that runs a kernel other than the
         * table's may come out a little slower by noise (the tuner gives a
         * point its own bucket only past 1 %), never by what a worse kernel
         * costs. Where the record runs the table's own kernel the two times
         * differ by noise alone (on a GPU shared with other test lanes, by
         * 10 % and more at a few microseconds), so they are not compared. */
        if (strcmp(r.buckets[r.points[i].bucket].key, table) != 0)
            ck_assert_msg(r.points[i].tuned_us <= 1.05 * r.points[i].static_us,
                          "M = %lld: tuned %.2f us (%s), table %.2f us (%s)", (long long)ms[i],
                          r.points[i].tuned_us, r.buckets[r.points[i].bucket].key, r.points[i].static_us, table);
    }
    ck_assert_msg(qjit_linear_create(ctx, f.blob, f.bytes, NULL, &lin) == QJIT_OK, "%s", qjit_last_error(ctx));
    for (int i = 0; i < r.npoints; i++) {
        ck_assert_int_eq(qjit_linear_variant(lin, ms[i], key, sizeof key), QJIT_OK);
        ck_assert_str_eq(key, r.buckets[r.points[i].bucket].key);
    }
    check_m_with(&f, ctx, lin, 6, 61);
    check_m_with(&f, ctx, lin, 77, 62);
    check_m_with(&f, ctx, lin, 300, 63);
    qjit_linear_destroy(lin);
    qjit_context_destroy(ctx);
    qt_rmtree(tmp);
    free(tmp);
    teardown(&f);
}
END_TEST

/* actq=fused: one launch per forward, the GEMM quantizing its own tokens.
 * Every forced variant runs M = 1 (one quantizer), 13, 77 and 300 (more
 * rows than quantizer CTAs: each quantizes several) on a poisoned
 * workspace, then one is captured into a CUDA graph and replayed on new
 * tokens: a replay must not take an earlier call's flags for its own. */
START_TEST(fused_quantization)
{
    fixture f;
    setup(&f, 512, 1024, 128, 23);
    qjit_linear_options lo;
    qjit_linear_options_init(&lo);
    static const char *const variants[] = {
        "g=128;tile=16x64x128;warps=1x4;stages=3;split=3;actq=fused",
        "g=128;tile=32x128x64;warps=2x4;stages=4;split=1;actq=fused",
        "g=128;tile=8x16x64;warps=1x16;stages=4;pipe=decode;actq=fused",
        "g=128;tile=16x32x64;warps=1x2;stages=3;pipe=decode;actq=fused",
    };
    qjit_linear *dispatched = f.lin, *first = NULL;
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        qjit_linear *lin = NULL;
        lo.variant = variants[i];
        qjit_status st = qjit_linear_create(f.ctx, f.blob, f.bytes, &lo, &lin);
        ck_assert_msg(st == QJIT_OK, "%s: %s", lo.variant, qjit_last_error(f.ctx));
        f.lin = lin;
        check_m(&f, 1, 40 + i);
        check_m(&f, 13, 50 + i);
        check_m(&f, 77, 60 + i);
        check_m(&f, 300, 70 + i);
        if (i == 0)
            first = lin;
        else
            qjit_linear_destroy(lin);
    }
    f.lin = first;               /* the split-K fused variant, for the graph */
    qjit__driver *d = f.d;
    const int64_t M = 5, N = f.N, K = f.K;
    size_t xn = (size_t)(M * K), yn = (size_t)(M * N), ws_bytes;
    ck_assert_int_eq(qjit_linear_workspace_size(f.lin, M, &ws_bytes), QJIT_OK);
    uint16_t *X = malloc(xn * 2);
    int8_t *Xq = malloc(xn);
    float *sx = malloc((size_t)M * 4), *Yref = malloc(yn * 4);
    int32_t *acc = malloc(yn * 4), *acc_ref = malloc(yn * 4);
    CUdeviceptr dX, dA, dW;
    CUstream s;
    CU(d->MemAlloc(&dX, xn * 2));
    CU(d->MemAlloc(&dA, yn * 4));
    CU(d->MemAlloc(&dW, ws_bytes));
    CU(d->MemsetD8(dW, 0x5A, ws_bytes));
    CU(d->StreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUgraph graph;
    CUgraphExec exec;
    CU(d->StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    qjit_status st = qjit_linear_forward_acc(f.lin, M, (void *)dX, (int32_t *)dA, (void *)dW, ws_bytes, s);
    CU(d->StreamEndCapture(s, &graph));
    ck_assert_msg(st == QJIT_OK, "captured forward: %s", qjit_last_error(f.ctx));
    CU(d->GraphInstantiate(&exec, graph, 0));
    for (int round = 0; round < 4; round++) {
        qt_rng r = qt_rng_make(80 + (uint64_t)round);
        for (size_t i = 0; i < xn; i++)
            X[i] = qjit__float_to_half((float)qt_normal(&r));
        ck_assert_int_eq(qjit_reference_quantize_activations(f.ctx, M, K, X, Xq, sx), QJIT_OK);
        ck_assert_int_eq(qjit_reference_gemm(f.ctx, f.blob, f.bytes, M, Xq, sx, acc_ref, Yref), QJIT_OK);
        CU(d->MemcpyHtoD(dX, X, xn * 2));
        CU(d->MemsetD8(dA, 0xA5, yn * 4));
        if (round == 2) {
            /* An uncaptured call in between leaves its own epoch in the flags. */
            st = qjit_linear_forward_acc(f.lin, M, (void *)dX, (int32_t *)dA, (void *)dW, ws_bytes, s);
            ck_assert_msg(st == QJIT_OK, "%s", qjit_last_error(f.ctx));
        } else {
            CU(d->GraphLaunch(exec, s));
        }
        CU(d->StreamSynchronize(s));
        CU(d->MemcpyDtoH(acc, dA, yn * 4));
        ck_assert_msg(memcmp(acc, acc_ref, yn * 4) == 0, "round %d (%s): accumulators differ from the reference",
                      round, round == 2 ? "direct call" : "graph replay");
    }
    CU(d->GraphExecDestroy(exec));
    CU(d->GraphDestroy(graph));
    CU(d->StreamDestroy(s));
    d->MemFree(dX);
    d->MemFree(dA);
    d->MemFree(dW);
    free(X); free(Xq); free(sx); free(Yref); free(acc); free(acc_ref);
    qjit_linear_destroy(first);
    f.lin = dispatched;
    teardown(&f);
}
END_TEST

/* Ends the capture on s, replays its graph once and reads the yb bytes at dY. */
static void end_and_replay(qjit__driver *d, CUstream s, CUdeviceptr dY, unsigned char *got, size_t yb)
{
    CUgraph g;
    CUgraphExec ge;
    CU(d->StreamEndCapture(s, &g));
    CU(d->GraphInstantiate(&ge, g, 0));
    CU(d->GraphLaunch(ge, s));
    CU(d->StreamSynchronize(s));
    CU(d->MemcpyDtoH(got, dY, yb));
    d->GraphExecDestroy(ge);
    d->GraphDestroy(g);
}

/* A call that would grow the layer's workspace while its stream is being
 * captured is refused with a clear error and enqueues nothing (the capture
 * stays usable, its graph writes nothing); grown outside the capture, the
 * same call captures and replays bit for bit. The capture is relaxed so
 * that loading the kernel of a new M (not the subject) is allowed. */
START_TEST(workspace_growth_under_capture)
{
    fixture f;
    setup_layer(&f, QJIT_SCHEME_W4A8_LQQ, 1024, 2048, 128, 31, 1, NULL);
    qjit_linear_options lo;
    qjit_linear_options_init(&lo);
    lo.max_tokens = 16;
    ck_assert_int_eq(qjit_linear_create(f.ctx, f.blob, f.bytes, &lo, &f.lin), QJIT_OK);
    qjit__driver *d = f.d;
    const int64_t M = 512;
    const size_t yb = (size_t)(M * f.N) * 2;
    uint16_t *X = malloc((size_t)(M * f.K) * 2);
    unsigned char *want = malloc(yb), *got = malloc(yb), *poison = malloc(yb);
    qt_rng r = qt_rng_make(32);
    for (int64_t i = 0; i < M * f.K; i++)
        X[i] = qjit__float_to_half((float)qt_normal(&r));
    memset(poison, 0x7F, yb);
    CUdeviceptr dX, dY;
    CUstream s;
    CU(d->MemAlloc(&dX, (size_t)(M * f.K) * 2));
    CU(d->MemAlloc(&dY, yb));
    CU(d->MemcpyHtoD(dX, X, (size_t)(M * f.K) * 2));
    CU(d->MemsetD8(dY, 0x7F, yb));
    CU(d->StreamCreate(&s, CU_STREAM_NON_BLOCKING));

    CU(d->StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    ck_assert_int_eq(qjit_linear_forward(f.lin, M, (void *)dX, (void *)dY, NULL, 0, s), QJIT_INVALID_ARGUMENT);
    ck_assert_msg(strstr(qjit_last_error(f.ctx), "being captured") && strstr(qjit_last_error(f.ctx), "max_tokens"),
                  "%s", qjit_last_error(f.ctx));
    end_and_replay(d, s, dY, got, yb);
    ck_assert_msg(!memcmp(got, poison, yb), "the refused call wrote its output");

    /* Grown by a direct call, the call captures and replays exactly. */
    ck_assert_int_eq(qjit_linear_forward(f.lin, M, (void *)dX, (void *)dY, NULL, 0, s), QJIT_OK);
    CU(d->StreamSynchronize(s));
    CU(d->MemcpyDtoH(want, dY, yb));
    CU(d->MemsetD8(dY, 0x7F, yb));
    CU(d->StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    ck_assert_int_eq(qjit_linear_forward(f.lin, M, (void *)dX, (void *)dY, NULL, 0, s), QJIT_OK);
    end_and_replay(d, s, dY, got, yb);
    ck_assert_msg(!memcmp(got, want, yb), "the replay differs from the direct call");
    d->StreamDestroy(s);
    d->MemFree(dX);
    d->MemFree(dY);
    free(X); free(want); free(got); free(poison);
    teardown(&f);
}
END_TEST

START_TEST(bad_forward_input_changes_nothing)
{
    fixture f;
    setup(&f, 256, 512, 128, 7);
    qjit__driver *d = f.d;
    CUdeviceptr dX, dY;
    CU(d->MemAlloc(&dX, 64 * 512 * 2));
    CU(d->MemAlloc(&dY, 64 * 256 * 2 + 16));
    CU(d->MemsetD8(dX, 0x11, 64 * 512 * 2));
    CU(d->MemsetD8(dY, 0x77, 64 * 256 * 2 + 16));
    ck_assert_int_eq(qjit_linear_forward(f.lin, 0, (void *)dX, (void *)dY, NULL, 0, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_linear_forward(f.lin, -5, (void *)dX, (void *)dY, NULL, 0, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_linear_forward(f.lin, 4, NULL, (void *)dY, NULL, 0, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_linear_forward(f.lin, 4, (void *)dX, NULL, NULL, 0, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_linear_forward(f.lin, 4, (void *)dX, (void *)(dY + 2), NULL, 0, NULL),
                     QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "aligned"));
    ck_assert_int_eq(qjit_linear_forward(f.lin, 4, (void *)dX, (void *)dY, (void *)dX, 16, NULL),
                     QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_linear_forward(NULL, 4, (void *)dX, (void *)dY, NULL, 0, NULL), QJIT_INVALID_ARGUMENT);
    /* The tokens entry: dX stands in for the tokens (4 x 512 bytes and
     * their scales fit in it). */
    qjit_tokens t;
    qjit_tokens_init(&t);
    t.xq = (void *)dX;
    t.sx = (float *)(dX + 4096);
    qjit_tokens_format tf;
    qjit_tokens_format_init(&tf);
    ck_assert_int_eq(qjit_linear_tokens_format(f.lin, 4, &tf), QJIT_OK);
    ck_assert_int_eq(tf.row_bytes, 512);
    ck_assert_int_eq(tf.scales, 1);
    ck_assert_int_eq(tf.rowsum, 0);
    ck_assert_int_eq(tf.pack, 1);
    tf.struct_size = 0;
    ck_assert_int_eq(qjit_linear_tokens_format(f.lin, 4, &tf), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_linear_tokens_format(f.lin, 0, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_linear_forward_tokens(f.lin, 4, NULL, (void *)dY, NULL, 0, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_linear_forward_tokens(f.lin, 4, &t, NULL, NULL, 0, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_linear_forward_tokens(f.lin, 0, &t, (void *)dY, NULL, 0, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_linear_forward_tokens(f.lin, 4, &t, (void *)dY, (void *)dX, 16, NULL),
                     QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_linear_quantize(f.lin, 4, NULL, &t, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_linear_quantize(f.lin, 4, (void *)(dX + 2), &t, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_linear_quantize(NULL, 4, (void *)dX, &t, NULL), QJIT_INVALID_ARGUMENT);
    qjit_tokens bad = t;
    bad.struct_size = 0;
    ck_assert_int_eq(qjit_linear_forward_tokens(f.lin, 4, &bad, (void *)dY, NULL, 0, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "struct_size"));
    bad = t;
    bad.xq = NULL;
    ck_assert_int_eq(qjit_linear_forward_tokens(f.lin, 4, &bad, (void *)dY, NULL, 0, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "qjit_tokens.xq is NULL"));
    bad = t;
    bad.sx = (float *)(dX + 4100);
    ck_assert_int_eq(qjit_linear_forward_tokens(f.lin, 4, &bad, (void *)dY, NULL, 0, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "qjit_tokens.sx is not 16-byte aligned"));
    bad = t;
    bad.rowsum = (int32_t *)(dX + 8192);       /* LQQ with groups takes no row sums */
    ck_assert_int_eq(qjit_linear_forward_tokens(f.lin, 4, &bad, (void *)dY, NULL, 0, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "qjit_tokens.rowsum is given"));
    ck_assert_int_eq(qjit_linear_quantize(f.lin, 4, (void *)dX, &bad, NULL), QJIT_INVALID_ARGUMENT);
    CU(d->CtxSynchronize());
    unsigned char *host = malloc(64 * 256 * 2 + 16);
    CU(d->MemcpyDtoH(host, dY, 64 * 256 * 2 + 16));
    for (size_t i = 0; i < 64 * 256 * 2 + 16; i++)
        ck_assert_msg(host[i] == 0x77, "byte %zu of Y changed by a refused call", i);
    free(host);
    d->MemFree(dX);
    d->MemFree(dY);
    teardown(&f);
}
END_TEST

/* Every host allocation of qjit_linear_create, and of the first forward at
 * a size (which loads its bucket's kernels from the cache), may fail: the
 * call says QJIT_OUT_OF_MEMORY (or needed nothing more and succeeded),
 * leaves *out NULL, leaks nothing, and the same call then succeeds on the
 * same context with the output of an undisturbed layer, bit for bit. One
 * scheme per row of the spec, a per-channel one with its row sums among
 * them. Every allocation of a forward is refused in turn; those of create
 * (thousands, most in the Lua plan) at a stride that visits ~200 points
 * (QJIT_FAULT_EVERY=1: every one). */
typedef struct oom_gpu {
    fixture *f;
    CUdeviceptr dX, dY;
    int64_t M;
} oom_gpu;

/* op 0: create under faults; op 1: forward under faults. Returns the
 * status of the call under faults; *calls: the allocations it asked for. */
static qjit_status oom_gpu_round(oom_gpu *g, int op, long fail_at, const uint16_t *Yref, long *calls)
{
    fixture *f = g->f;
    qt_alloc_counts counts = {-1, 0, 0, 0};
    qjit_context *ctx = qt_counting_context(NULL, NULL, &counts);
    ck_assert_ptr_nonnull(ctx);
    qjit_linear *lin = (qjit_linear *)0x1;
    qjit_status st;
    if (op == 0) {
        long before = counts.calls;
        counts.fail_after = fail_at;
        st = qjit_linear_create(ctx, f->blob, f->bytes, NULL, &lin);
        counts.fail_after = -1;
        *calls = counts.calls - before;
        ck_assert_msg(st == QJIT_OK || st == QJIT_OUT_OF_MEMORY, "%s create, allocation %ld refused: %s (%s)",
                      qjit_scheme_name(f->scheme), fail_at, qjit_status_name(st), qjit_last_error(ctx));
        if (st) {
            ck_assert_ptr_null(lin);
            qjit_status again = qjit_linear_create(ctx, f->blob, f->bytes, NULL, &lin);
            ck_assert_msg(again == QJIT_OK, "%s: create after allocation %ld was refused: %s (%s)",
                          qjit_scheme_name(f->scheme), fail_at, qjit_status_name(again), qjit_last_error(ctx));
        }
    } else {
        ck_assert_int_eq(qjit_linear_create(ctx, f->blob, f->bytes, NULL, &lin), QJIT_OK);
        long before = counts.calls;
        counts.fail_after = fail_at;
        st = qjit_linear_forward(lin, g->M, (void *)g->dX, (void *)g->dY, NULL, 0, NULL);
        counts.fail_after = -1;
        *calls = counts.calls - before;
        ck_assert_msg(st == QJIT_OK || st == QJIT_OUT_OF_MEMORY, "%s forward M=%lld, allocation %ld refused: %s (%s)",
                      qjit_scheme_name(f->scheme), (long long)g->M, fail_at, qjit_status_name(st),
                      qjit_last_error(ctx));
    }
    /* The layer now works and gives the undisturbed layer's output. */
    size_t yn = (size_t)(g->M * f->N);
    CU(f->d->MemsetD8(g->dY, 0xFF, yn * 2));
    qjit_status again = qjit_linear_forward(lin, g->M, (void *)g->dX, (void *)g->dY, NULL, 0, NULL);
    ck_assert_msg(again == QJIT_OK, "%s op %d: forward after allocation %ld was refused: %s (%s)",
                  qjit_scheme_name(f->scheme), op, fail_at, qjit_status_name(again), qjit_last_error(ctx));
    CU(f->d->CtxSynchronize());
    uint16_t *Y = malloc(yn * 2);
    CU(f->d->MemcpyDtoH(Y, g->dY, yn * 2));
    ck_assert_msg(memcmp(Y, Yref, yn * 2) == 0, "%s op %d, allocation %ld refused: the output differs",
                  qjit_scheme_name(f->scheme), op, fail_at);
    free(Y);
    qjit_linear_destroy(lin);
    qjit_context_destroy(ctx);
    ck_assert_msg(counts.live == 0, "%s op %d, allocation %ld refused: %ld blocks leaked",
                  qjit_scheme_name(f->scheme), op, fail_at, counts.live);
    ck_assert_int_eq(counts.size_mismatches, 0);
    return st;
}

START_TEST(failed_allocations_in_create_and_forward)
{
    static const struct { qjit_scheme scheme; int group; int64_t M; } rows[] = {
        {QJIT_SCHEME_W4A8_LQQ, 128, 4},
        {QJIT_SCHEME_W4A8_QOQ, 0, 64},
        {QJIT_SCHEME_W4A8_IS, 128, 300},
        {QJIT_SCHEME_W8A8, 0, 16},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (!wanted(rows[i].scheme))
            continue;
        fixture f;      /* keeps the primary context and the cache entries warm */
        setup_scheme(&f, rows[i].scheme, 512, 1024, rows[i].group, 90 + i, 0);
        oom_gpu g = {&f, 0, 0, rows[i].M};
        size_t xn = (size_t)(g.M * f.K), yn = (size_t)(g.M * f.N);
        uint16_t *X = malloc(xn * 2), *Yref = malloc(yn * 2);
        qt_rng r = qt_rng_make(95 + i);
        for (size_t j = 0; j < xn; j++)
            X[j] = qjit__float_to_half((float)qt_normal(&r));
        CU(f.d->MemAlloc(&g.dX, xn * 2));
        CU(f.d->MemAlloc(&g.dY, yn * 2));
        CU(f.d->MemcpyHtoD(g.dX, X, xn * 2));
        ck_assert_int_eq(qjit_linear_forward(f.lin, g.M, (void *)g.dX, (void *)g.dY, NULL, 0, NULL), QJIT_OK);
        CU(f.d->CtxSynchronize());
        CU(f.d->MemcpyDtoH(Yref, g.dY, yn * 2));
        for (int op = 0; op < 2; op++) {
            long total = 0, refused = 0, step = 1;
            oom_gpu_round(&g, op, -1, Yref, &total);
            if (op == 0)
                step = qt_fault_stride(total > 200 ? total / 200 | 1 : 1);   /* odd: the points fall on every phase */
            for (long fail_at = 0; fail_at <= total; fail_at += step) {
                long calls;
                if (oom_gpu_round(&g, op, fail_at, Yref, &calls) == QJIT_OK)
                    break;
                refused++;
            }
            ck_assert_msg(refused > 0, "%s op %d refused no allocation (%ld asked)", qjit_scheme_name(f.scheme), op,
                          total);
            printf("%s %s: %ld allocations, %ld refused in turn (every %ld), each reported, none leaked\n",
                   qjit_scheme_name(f.scheme), op ? "first forward" : "linear_create", total, refused, step);
        }
        f.d->MemFree(g.dX);
        f.d->MemFree(g.dY);
        free(X);
        free(Yref);
        teardown(&f);
    }
}
END_TEST

START_TEST(variant_for_another_arch_is_refused)
{
    fixture f;
    setup(&f, 256, 512, 128, 9);
    const qjit__kernel *k = NULL;
    qjit_status st = qjit__kernel_get(f.ctx, "scheme=w4a8-lqq;arch=sm_80", &k);
    ck_assert_msg(st == QJIT_UNSUPPORTED_ARCH || st == QJIT_DEVICE_TOO_OLD, "got %s: %s", qjit_status_name(st),
                  qjit_last_error(f.ctx));
    ck_assert_ptr_null(k);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "sm_80"));
    teardown(&f);
}
END_TEST

/* QJIT_TEST_SHARD=I/N: this process runs the I-th (from 0) of N shares of
 * every case -- a loop test's iterations and the single tests dealt in
 * turn (the loops run scheme by scheme: dealt, a share of one scheme's
 * iterations is a share of its work) -- so that one long case runs as N
 * processes at once (bench/gpu-lanes.sh). */
static int shard_i, shard_n = 1, shard_dealt;

static void shard_init(void)
{
    const char *env = getenv("QJIT_TEST_SHARD");
    if (!env || !*env)
        return;
    int i, n, used = 0;
    if (sscanf(env, "%d/%d%n", &i, &n, &used) != 2 || env[used] || n < 1 || i < 0 || i >= n) {
        fprintf(stderr, "QJIT_TEST_SHARD=%s: want I/N with 0 <= I < N (e.g. 0/4)\n", env);
        exit(2);
    }
    shard_i = i;
    shard_n = n;
    printf("shard %d of %d\n", i, n);
}

static void add_loop(TCase *tc, const TTest *t, int start, int end)
{
    if (shard_n == 1) {
        tcase_add_loop_test(tc, t, start, end);
        return;
    }
    for (int i = start + shard_i; i < end; i += shard_n)
        tcase_add_loop_test(tc, t, i, i + 1);
}

static void add_one(TCase *tc, const TTest *t)
{
    if (shard_dealt++ % shard_n == shard_i)
        tcase_add_test(tc, t);
}

Suite *qjit_test_suite(void)
{
    /* Cases that can run as separate processes at once (CK_RUN_CASE): on a
     * GPU machine with many cores the suite's CPU references and compiles
     * then overlap. */
    shard_init();
    Suite *s = suite_create("gpu");
    TCase *llama = tcase_create("llama"), *odd = tcase_create("odd"), *pipes_a = tcase_create("pipes_a");
    TCase *pipes_b = tcase_create("pipes_b"), *misc = tcase_create("misc"), *sparse = tcase_create("sparse");
    TCase *sparse_llama = tcase_create("sparse_llama"), *w4ax = tcase_create("w4ax");
    TCase *int4_mma = tcase_create("int4_mma"), *w4axs = tcase_create("w4axs"), *bf16 = tcase_create("bf16");
    TCase *bias = tcase_create("bias"), *tuning = tcase_create("tuning"), *sk = tcase_create("sk");
    TCase *oom = tcase_create("oom");   /* every allocation refused in turn: minutes a scheme */
    add_loop(llama, llama_layers_bit_exact, 0, 15);
    add_loop(odd, odd_shapes_bit_exact, 0, NSG * NODD);
    add_loop(pipes_a, every_pipeline_bit_exact, 0, NSG * NPIPES / 2);
    add_loop(pipes_b, every_pipeline_bit_exact, NSG * NPIPES / 2, NSG * NPIPES);
    add_loop(pipes_b, persistent_tiles_bit_exact, 0, NSG * NPERSIST);
    add_loop(sk, split_last_wave_bit_exact, 0, NSG * NSK * NSK_LAYERS);
    add_loop(sparse, sparse_every_pipeline_bit_exact, 0, NSPARSE * NSPIPES);
    add_loop(sparse_llama, sparse_llama_layers_bit_exact, 0, 3);
    add_one(misc, integer_scale_near_the_bound);
    add_loop(misc, one_part_activation_kernels_bit_exact, 0, 5);
    add_one(misc, bad_forward_input_changes_nothing);
    add_one(misc, concurrent_forward_calls);
    add_one(misc, workspace_growth_under_capture);
    add_one(misc, forced_variant);
    add_one(tuning, tuning_record_takes_the_table_place);
    add_one(tuning, tuning_a_layer_end_to_end);
    add_one(misc, fused_quantization);
    add_one(misc, variant_for_another_arch_is_refused);
    add_one(oom, failed_allocations_in_create_and_forward);
    add_loop(w4ax, w4ax_activation_kernel_bit_exact, 0, 4);
    add_loop(w4ax, w4ax_layers_bit_exact, 0, 5);
    add_loop(w4ax, w4ax_every_pipeline_bit_exact, 0, 4 * NW4AX_PIPES);
    add_loop(int4_mma, int4_mma_bit_exact, 0, NS4_SHAPES * NS4_PIPES);
    add_one(int4_mma, int4_mma_llama_layer);
    add_loop(w4axs, w4axs_activation_kernel_bit_exact, 0, 4);
    add_loop(w4axs, w4axs_layers_bit_exact, 0, 5);
    add_loop(w4axs, w4axs_every_pipeline_bit_exact, 0, 4 * NW4AXS_PIPES);
    add_one(bf16, bf16_options_are_checked);
    add_loop(bf16, bf16_layers_bit_exact, 0, NSG + 2);
    add_loop(bf16, bf16_every_pipeline_bit_exact, 0, NSG * NPIPES);
    add_loop(bias, bias_layers_bit_exact, 0, NSG + 2);
    add_loop(bias, bias_every_pipeline_bit_exact, 0, NPIPES);
    TCase *all[] = {llama, odd, pipes_a, pipes_b, misc, sparse, sparse_llama, w4ax, int4_mma, w4axs, bf16, bias, tuning,
                    sk, oom};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        tcase_set_timeout(all[i], 600);
        qt_add(s, all[i], 1);
    }
    return s;
}
