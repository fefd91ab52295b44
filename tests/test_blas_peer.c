/* test_blas_peer.c -- the cuBLASLt peers of `qjit bench` (bench/blas_peer.c).
 * Without a GPU: names and sizes, the shape and alignment checks, a missing
 * library reported cleanly, NULL handles. On a GPU (tagged "gpu"): each kind
 * against a CPU reference, INT32 bit for bit, BF16 outputs within a stated
 * bound, outputs poisoned first; and the benchmark's shapes find an
 * algorithm. Where cuBLASLt itself is absent the GPU tests say so and pass. */
#define _GNU_SOURCE
#include "harness.h"
#include "blas_peer.h"
#include "context.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* LeakSanitizer builds: a cublasLtCreate that fails (no GPU) leaks a small
 * allocation inside libcublasLt; that one is the library's, not ours. */
#if defined(__GNUC__)
__attribute__((visibility("default"), used))
#endif
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libcublasLt.so\n";
}

/* Plausible device addresses for the checks that never reach the GPU. */
#define FAKE_W ((CUdeviceptr)0x7f0000000000ull)
#define FAKE_X ((CUdeviceptr)0x7f0000100000ull)
#define FAKE_Y ((CUdeviceptr)0x7f0000200000ull)

START_TEST(names_and_sizes)
{
    ck_assert_str_eq(qb_kind_name(QB_BF16), "cublas-bf16");
    ck_assert_str_eq(qb_kind_name(QB_INT8), "cublas-int8");
    ck_assert_str_eq(qb_kind_name(QB_FP8), "cublas-fp8");
    ck_assert_str_eq(qb_kind_name((qb_kind)7), "cublas-?");
    ck_assert_uint_eq(qb_in_bytes(QB_BF16), 2);
    ck_assert_uint_eq(qb_in_bytes(QB_INT8), 1);
    ck_assert_uint_eq(qb_in_bytes(QB_FP8), 1);
    ck_assert_uint_eq(qb_out_bytes(QB_BF16), 2);
    ck_assert_uint_eq(qb_out_bytes(QB_INT8), 4);
    ck_assert_uint_eq(qb_out_bytes(QB_FP8), 2);
    ck_assert_uint_eq(qb_in_bytes((qb_kind)-1), 0);
    ck_assert_uint_eq(qb_out_bytes((qb_kind)3), 0);
}
END_TEST

/* Runs qb_gemm_check and asserts the outcome and, on failure, a phrase. */
static void expect_check(qb_kind kind, int M, int N, int K, CUdeviceptr W, CUdeviceptr X, CUdeviceptr Y,
                         const char *phrase)
{
    char err[512] = "";
    int rc = qb_gemm_check(kind, M, N, K, W, X, Y, err, sizeof err);
    if (!phrase) {
        ck_assert_msg(rc == 0, "%s M=%d N=%d K=%d refused: %s", qb_kind_name(kind), M, N, K, err);
        return;
    }
    ck_assert_msg(rc == -1, "%s M=%d N=%d K=%d accepted, expected \"%s\"", qb_kind_name(kind), M, N, K, phrase);
    ck_assert_msg(strstr(err, phrase), "message \"%s\" lacks \"%s\"", err, phrase);
    ck_assert_msg(strstr(err, qb_kind_name(kind)) || strstr(err, "unknown kind"), "message \"%s\" names no kind",
                  err);
}

START_TEST(shape_and_alignment_checks)
{
    for (int k = 0; k < QB_KIND_COUNT; k++) {
        expect_check((qb_kind)k, 1, 4096, 4096, FAKE_W, FAKE_X, FAKE_Y, NULL);
        expect_check((qb_kind)k, 16, 11008, 4096, FAKE_W, FAKE_X, FAKE_Y, NULL);
        expect_check((qb_kind)k, 0, 4096, 4096, FAKE_W, FAKE_X, FAKE_Y, "positive");
        expect_check((qb_kind)k, 16, -8, 4096, FAKE_W, FAKE_X, FAKE_Y, "positive");
        expect_check((qb_kind)k, 16, 4096, 0, FAKE_W, FAKE_X, FAKE_Y, "positive");
        expect_check((qb_kind)k, 16, 4096, 4096, 0, FAKE_X, FAKE_Y, "W NULL");
        expect_check((qb_kind)k, 16, 4096, 4096, FAKE_W, 0, FAKE_Y, "X NULL");
        expect_check((qb_kind)k, 16, 4096, 4096, FAKE_W, FAKE_X, 0, "Y NULL");
        expect_check((qb_kind)k, 16, 4096, 4096, FAKE_W + 1, FAKE_X, FAKE_Y, "W (0x7f0000000001) is not");
    }
    /* M is free in every kind: it is cuBLASLt's n. */
    expect_check(QB_FP8, 7, 4096, 4096, FAKE_W, FAKE_X, FAKE_Y, NULL);
    expect_check(QB_INT8, 7, 4096, 4096, FAKE_W, FAKE_X, FAKE_Y, NULL);
    /* FP8: 16-byte rows of A and B (K), N a multiple of 16. */
    expect_check(QB_FP8, 16, 4096, 4104, FAKE_W, FAKE_X, FAKE_Y, "K a multiple of 16");
    expect_check(QB_FP8, 16, 4104, 4096, FAKE_W, FAKE_X, FAKE_Y, "N a multiple of 16");
    expect_check(QB_FP8, 16, 4096, 4096, FAKE_W, FAKE_X + 8, FAKE_Y, "16-byte aligned");
    /* INT8 (IMMA, regular order): multiples of 4 and 4-byte pointers. */
    expect_check(QB_INT8, 16, 4096, 4098, FAKE_W, FAKE_X, FAKE_Y, "K a multiple of 4");
    expect_check(QB_INT8, 16, 4098, 4096, FAKE_W, FAKE_X, FAKE_Y, "N a multiple of 4");
    expect_check(QB_INT8, 16, 4096, 4096, FAKE_W, FAKE_X, FAKE_Y + 2, "4-byte aligned");
    expect_check(QB_INT8, 16, 4096, 4100, FAKE_W, FAKE_X + 4, FAKE_Y + 4, NULL);
    /* BF16: any size, element-aligned pointers. */
    expect_check(QB_BF16, 3, 4099, 4097, FAKE_W, FAKE_X + 2, FAKE_Y + 6, NULL);
    expect_check(QB_BF16, 3, 4099, 4097, FAKE_W, FAKE_X, FAKE_Y + 1, "2-byte aligned");
    expect_check((qb_kind)5, 16, 4096, 4096, FAKE_W, FAKE_X, FAKE_Y, "unknown kind 5");
    /* A NULL or empty error buffer is allowed. */
    ck_assert_int_eq(qb_gemm_check(QB_FP8, 0, 1, 1, FAKE_W, FAKE_X, FAKE_Y, NULL, 0), -1);
    char one[1] = {'x'};
    ck_assert_int_eq(qb_gemm_check(QB_FP8, 0, 1, 1, FAKE_W, FAKE_X, FAKE_Y, one, 0), -1);
    ck_assert_int_eq(one[0], 'x');
}
END_TEST

/* prepare checks its input before it needs the library. */
START_TEST(prepare_refuses_before_the_library)
{
    char err[512] = "";
    qb_gemm *g = (qb_gemm *)&err; /* must be reset to NULL */
    ck_assert_int_eq(qb_gemm_prepare(NULL, QB_FP8, 16, 4096, 4095, FAKE_W, FAKE_X, FAKE_Y, 0, 0, &g, err,
                                     sizeof err), -1);
    ck_assert_ptr_null(g);
    ck_assert_ptr_nonnull(strstr(err, "K a multiple of 16"));
    ck_assert_int_eq(qb_gemm_prepare(NULL, QB_BF16, 16, 4096, 4096, FAKE_W, FAKE_X, FAKE_Y, FAKE_W + 16, 1024,
                                     &g, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "256-byte aligned"));
    ck_assert_int_eq(qb_gemm_prepare(NULL, QB_BF16, 16, 4096, 4096, FAKE_W, FAKE_X, FAKE_Y, 0, 1024, &g, err,
                                     sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "workspace"));
    ck_assert_int_eq(qb_gemm_prepare(NULL, QB_INT8, 16, 4096, 4096, FAKE_W, FAKE_X, FAKE_Y, 0, 0, &g, err,
                                     sizeof err), -1);
    ck_assert_msg(strstr(err, "cuBLASLt is not loaded") && strstr(err, "cublas-int8 (M=16 N=4096 K=4096)"),
                  "%s", err);
    ck_assert_int_eq(qb_gemm_prepare(NULL, QB_INT8, 16, 4096, 4096, FAKE_W, FAKE_X, FAKE_Y, 0, 0, NULL, err,
                                     sizeof err), -1);
    ck_assert_int_eq(qb_gemm_run(NULL, NULL, err, sizeof err), -1);
    ck_assert_uint_eq(qb_gemm_workspace(NULL), 0);
    qb_gemm_destroy(NULL);
    qb_blas_close(NULL);
    ck_assert_ptr_nonnull(strstr(qb_blas_describe(NULL), "not loaded"));
    ck_assert_int_eq(qb_blas_open(NULL, err, sizeof err), -1);
}
END_TEST

START_TEST(missing_library_is_reported)
{
    setenv("QJIT_CUBLASLT", "/nonexistent/qjit-test/libcublasLt.so.99", 1);
    char err[1024] = "";
    qb_blas *b = (qb_blas *)&err;
    ck_assert_int_eq(qb_blas_open(&b, err, sizeof err), -1);
    ck_assert_ptr_null(b);
    ck_assert_msg(strstr(err, "cuBLASLt") && strstr(err, "QJIT_CUBLASLT") &&
                  strstr(err, "/nonexistent/qjit-test/libcublasLt.so.99"), "%s", err);
    ck_assert_msg(strlen(err) < 256, "message too long for a 256-byte buffer: %s", err);
    /* A library that is not cuBLASLt: the first entry point it lacks is named. */
    setenv("QJIT_CUBLASLT", "libm.so.6", 1);
    ck_assert_int_eq(qb_blas_open(&b, err, sizeof err), -1);
    ck_assert_ptr_null(b);
    ck_assert_msg(strstr(err, "libm.so.6 lacks cublasLtCreate"), "%s", err);
}
END_TEST

/* The default search either loads the library and makes a handle or says
 * why not (here, without a GPU, cublasLtCreate's status); never anything
 * else. Runs in its own process, as every test does. */
START_TEST(default_open_succeeds_or_explains)
{
    unsetenv("QJIT_CUBLASLT");
    char err[1024] = "";
    qb_blas *b = NULL;
    if (qb_blas_open(&b, err, sizeof err) == 0) {
        ck_assert_ptr_nonnull(b);
        ck_assert_msg(strncmp(qb_blas_describe(b), "cuBLASLt 1", 10) == 0, "%s", qb_blas_describe(b));
        printf("default_open: %s\n", qb_blas_describe(b));
        qb_blas_close(b);
    } else {
        ck_assert_ptr_null(b);
        ck_assert_msg(strstr(err, "cuBLASLt not found") || strstr(err, "cublasLtCreate") || strstr(err, "lacks"),
                      "%s", err);
        ck_assert_msg(strlen(err) < 256, "message too long for a 256-byte buffer: %s", err);
        printf("default_open: %s\n", err);
    }
}
END_TEST

/* ---- on the GPU ---- */

typedef struct gpu {
    qjit_context *ctx;
    qjit__driver *d;
    qb_blas *b;                  /* NULL: no cuBLASLt here, tests pass vacuously */
    CUdeviceptr workspace;
    size_t workspace_bytes;
} gpu;

#define CU(call) ck_assert_int_eq((int)(call), (int)CUDA_SUCCESS)

static int gpu_open(gpu *g)
{
    memset(g, 0, sizeof *g);
    ck_assert_int_eq(qjit_context_create(NULL, &g->ctx), QJIT_OK);
    pthread_mutex_lock(&g->ctx->lock);
    qjit_status st = qjit__context_driver(g->ctx);
    pthread_mutex_unlock(&g->ctx->lock);
    ck_assert_msg(st == QJIT_OK, "%s", qjit_last_error(g->ctx));
    g->d = &g->ctx->driver;
    char err[1024] = "";
    if (qb_blas_open(&g->b, err, sizeof err) != 0) {
        ck_assert_msg(strstr(err, "not found") || strstr(err, "cannot be loaded"),
                      "cuBLASLt is there but does not open: %s", err);
        printf("skipped: %s\n", err);
        return 0;
    }
    g->workspace_bytes = 32u << 20;
    CU(g->d->MemAlloc(&g->workspace, g->workspace_bytes));
    return 1;
}

static void gpu_close(gpu *g)
{
    if (g->workspace)
        g->d->MemFree(g->workspace);
    qb_blas_close(g->b);
    qjit_context_destroy(g->ctx);
}

static uint16_t bf16_from_float(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7FFF + ((u >> 16) & 1); /* round to nearest even; inputs are finite */
    return (uint16_t)(u >> 16);
}

static double bf16_to_double(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static double e4m3_to_double(uint8_t v)
{
    int e = (v >> 3) & 15, m = v & 7;
    double mag = e ? ldexp(1.0 + m / 8.0, e - 7) : ldexp(m / 8.0, -6);
    return (v & 0x80) ? -mag : mag;
}

/* Random inputs of `kind` (bytes, and their values for the reference). */
static void fill_inputs(qb_kind kind, qt_rng *r, size_t n, uint8_t *bytes, double *values)
{
    for (size_t i = 0; i < n; i++) {
        if (kind == QB_BF16) {
            uint16_t h = bf16_from_float((float)qt_normal(r));
            memcpy(bytes + 2 * i, &h, 2);
            values[i] = bf16_to_double(h);
        } else if (kind == QB_INT8) {
            int8_t q = (int8_t)(int)(qt_next(r) % 256 - 128);
            bytes[i] = (uint8_t)q;
            values[i] = q;
        } else {
            /* Exponents 2^-3 .. 2^3, any mantissa and sign: never NaN. */
            uint64_t x = qt_next(r);
            uint8_t v = (uint8_t)((x & 0x80) | ((4 + (x >> 8) % 7) << 3) | ((x >> 16) & 7));
            bytes[i] = v;
            values[i] = e4m3_to_double(v);
        }
    }
}

/* cuBLASLt may offer no algorithm for a handful of tokens (PyTorch pads
 * _int_mm's M to 32 for that reason): the benchmark prints "n/a" then. At
 * M >= 32 every kind must have one. */
static int small_m_refusal(int M, const char *err)
{
    return M < 32 && strstr(err, "no algorithm") != NULL;
}

/* Y = X * W^T on the GPU through the peer, compared with the CPU: INT32 bit
 * for bit; BF16 within its rounding (2^-8 relative) plus the FP32 (BF16) or
 * FP8 tensor-core accumulation (2^-14 / 2^-11 of the sum of |terms|). */
static void check_kind(gpu *g, qb_kind kind, int M, int N, int K, uint64_t stream_id)
{
    qjit__driver *d = g->d;
    const size_t in = qb_in_bytes(kind), out = qb_out_bytes(kind);
    const size_t xn = (size_t)M * K, wn = (size_t)N * K, yn = (size_t)M * N;
    uint8_t *X = malloc(xn * in), *W = malloc(wn * in), *Y = malloc(yn * out);
    double *xv = malloc(xn * sizeof(double)), *wv = malloc(wn * sizeof(double));
    qt_rng r = qt_rng_make(stream_id);
    fill_inputs(kind, &r, xn, X, xv);
    fill_inputs(kind, &r, wn, W, wv);
    CUdeviceptr dX, dW, dY;
    CUstream stream;
    CU(d->MemAlloc(&dX, xn * in));
    CU(d->MemAlloc(&dW, wn * in));
    CU(d->MemAlloc(&dY, yn * out));
    CU(d->StreamCreate(&stream, 0));
    CU(d->MemcpyHtoD(dX, X, xn * in));
    CU(d->MemcpyHtoD(dW, W, wn * in));
    CU(d->MemsetD8(dY, 0xFF, yn * out)); /* poison: BF16 NaN, INT32 -1 */
    char err[1024] = "";
    qb_gemm *gm = NULL;
    int rc = qb_gemm_prepare(g->b, kind, M, N, K, dW, dX, dY, g->workspace, g->workspace_bytes, &gm, err,
                             sizeof err);
    if (rc != 0 && small_m_refusal(M, err)) {
        printf("%s M=%-4d N=%-4d K=%-4d n/a: %s\n", qb_kind_name(kind), M, N, K, err);
        goto done;
    }
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_msg(qb_gemm_run(gm, stream, err, sizeof err) == 0, "%s", err);
    CU(d->StreamSynchronize(stream));
    CU(d->MemcpyDtoH(Y, dY, yn * out));
    long long bad = 0;
    double worst = 0;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double ref = 0, sumabs = 0;
            for (int k = 0; k < K; k++) {
                double t = xv[(size_t)m * K + k] * wv[(size_t)n * K + k];
                ref += t;
                sumabs += fabs(t);
            }
            size_t i = (size_t)m * N + n;
            if (kind == QB_INT8) {
                int32_t y;
                memcpy(&y, Y + 4 * i, 4);
                if ((double)y != ref && bad++ == 0)
                    fprintf(stderr, "%s M=%d N=%d K=%d: Y[%d,%d] = %d, reference %.0f\n", qb_kind_name(kind), M,
                            N, K, m, n, y, ref);
                continue;
            }
            uint16_t h;
            memcpy(&h, Y + 2 * i, 2);
            double y = bf16_to_double(h);
            double bound = fabs(ref) * 0x1p-8 + sumabs * (kind == QB_FP8 ? 0x1p-11 : 0x1p-14);
            double e = fabs(y - ref);
            if (!(e <= bound) && bad++ == 0)
                fprintf(stderr, "%s M=%d N=%d K=%d: Y[%d,%d] = %g, reference %g, bound %g\n", qb_kind_name(kind),
                        M, N, K, m, n, y, ref, bound);
            if (sumabs > 0 && e / sumabs > worst)
                worst = e / sumabs;
        }
    printf("%s M=%-4d N=%-4d K=%-4d workspace %zu: %s (worst |err| / sum|terms| %.2g)\n", qb_kind_name(kind), M,
           N, K, qb_gemm_workspace(gm), bad ? "MISMATCH" : "ok", worst);
    ck_assert_msg(bad == 0, "%s M=%d N=%d K=%d: %lld of %zu outputs off the reference", qb_kind_name(kind), M, N,
                  K, bad, yn);
done:
    qb_gemm_destroy(gm);
    d->StreamDestroy(stream);
    d->MemFree(dX);
    d->MemFree(dW);
    d->MemFree(dY);
    free(X); free(W); free(Y); free(xv); free(wv);
}

static const int CHECK_MS[] = {1, 16, 33, 128};

START_TEST(matches_cpu_reference)
{
    gpu g;
    if (!gpu_open(&g)) {
        gpu_close(&g);
        return;
    }
    printf("%s on %s\n", qb_blas_describe(g.b), g.d->name);
    /* N != K != M, so any transposed operand shows. */
    for (size_t m = 0; m < sizeof CHECK_MS / sizeof CHECK_MS[0]; m++)
        check_kind(&g, (qb_kind)_i, CHECK_MS[m], 384, 320, 100 * (uint64_t)_i + m);
    gpu_close(&g);
}
END_TEST

/* The benchmark's shapes (Llama-2-7B layers) get an algorithm and run for
 * every kind and token count (at M < 32 a refusal is printed, not failed). */
START_TEST(bench_shapes_have_an_algorithm)
{
    gpu g;
    if (!gpu_open(&g)) {
        gpu_close(&g);
        return;
    }
    static const int MS[] = {1, 16, 128, 1024};
    static const struct { int N, K; } NK[] = {{4096, 4096}, {11008, 4096}, {4096, 11008}};
    qjit__driver *d = g.d;
    CUdeviceptr dX, dW, dY;
    CU(d->MemAlloc(&dX, 1024u * 11008 * 2));
    CU(d->MemAlloc(&dW, 11008u * 4096 * 2));
    CU(d->MemAlloc(&dY, 1024u * 11008 * 4));
    CU(d->MemsetD8(dX, 0, 1024u * 11008 * 2));
    CU(d->MemsetD8(dW, 0, 11008u * 4096 * 2));
    int failed = 0;
    for (int k = 0; k < QB_KIND_COUNT; k++)
        for (size_t s = 0; s < sizeof NK / sizeof NK[0]; s++)
            for (size_t m = 0; m < sizeof MS / sizeof MS[0]; m++) {
                char err[1024] = "";
                qb_gemm *gm = NULL;
                int rc = qb_gemm_prepare(g.b, (qb_kind)k, MS[m], NK[s].N, NK[s].K, dW, dX, dY, g.workspace,
                                         g.workspace_bytes, &gm, err, sizeof err);
                if (rc == 0)
                    rc = qb_gemm_run(gm, NULL, err, sizeof err);
                if (rc) {
                    printf("%s: %s\n", small_m_refusal(MS[m], err) ? "n/a" : "FAILED", err);
                    failed += !small_m_refusal(MS[m], err);
                }
                qb_gemm_destroy(gm);
            }
    CU(d->CtxSynchronize());
    d->MemFree(dX);
    d->MemFree(dW);
    d->MemFree(dY);
    gpu_close(&g);
    ck_assert_msg(failed == 0, "%d benchmark points failed (printed above)", failed);
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("blas_peer");
    TCase *cpu = tcase_create("host");
    tcase_add_test(cpu, names_and_sizes);
    tcase_add_test(cpu, shape_and_alignment_checks);
    tcase_add_test(cpu, prepare_refuses_before_the_library);
    tcase_add_test(cpu, missing_library_is_reported);
    tcase_add_test(cpu, default_open_succeeds_or_explains);
    qt_add(s, cpu, 0);
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 300);
    tcase_add_loop_test(dev, matches_cpu_reference, 0, QB_KIND_COUNT);
    tcase_add_test(dev, bench_shapes_have_an_algorithm);
    qt_add(s, dev, 1);
    return s;
}
