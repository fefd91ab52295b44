/* consumer.c -- a program using an installed qjit, without a GPU: the
 * template search path it reports (argv[1]: the folder it must end in), a
 * key canonicalized, its source generated and compiled for sm_90a by NVRTC
 * into the cache ($QJIT_CACHE_DIR), a layer quantized and run through the CPU
 * reference. Exit 0 and "consumer: ok" when all of it works. */
#include <qjit.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(qjit_context *ctx, const char *what)
{
    fprintf(stderr, "consumer: %s: %s\n", what, qjit_last_error(ctx));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: consumer TEMPLATE_DIR\n");
        return 2;
    }
    qjit_context_options o;
    qjit_context_options_init(&o);
    o.arch = "sm_90a";
    qjit_context *ctx;
    if (qjit_context_create(&o, &ctx) != QJIT_OK)
        return fail(NULL, "context");
    const char *path = qjit_context_templates(ctx);
    printf("consumer: qjit %s, templates %s\n", qjit_version_string(), path);
    if (strcmp(path, argv[1])) {
        fprintf(stderr, "consumer: the templates are %s, not the installed %s\n", path, argv[1]);
        return 1;
    }
    char key[512];
    if (qjit_key_canonicalize(ctx, "scheme=w4a8-lqq;g=128;tile=16x64x128;warps=1x4;stages=4;split=2", key, sizeof key))
        return fail(ctx, "canonicalize");
    char *src = NULL;
    size_t len = 0;
    if (qjit_generate(ctx, key, &src, &len) || len < 1000 || !strstr(src, key))
        return fail(ctx, "generate");
    qjit_free(ctx, src);
    qjit_compile_info info;
    if (qjit_compile(ctx, key, NULL, &info))
        return fail(ctx, "compile");
    enum { N = 128, K = 256, M = 3 };
    size_t bytes;
    if (qjit_packed_size(QJIT_SCHEME_W4A8_LQQ, 128, N, K, &bytes))
        return fail(ctx, "packed size");
    float *W = malloc(sizeof(float) * N * K);
    uint16_t X[M * K];
    int8_t Xq[M * K];
    float sx[M];
    int32_t *acc = malloc(sizeof(int32_t) * M * N);
    void *blob = malloc(bytes);
    for (int i = 0; i < N * K; i++)
        W[i] = (float)((i * 37 % 101) - 50) / 500.0f;
    for (int i = 0; i < M * K; i++)
        X[i] = (uint16_t)(0x3C00 | (i * 13 % 512));   /* FP16 values in [1, 2) */
    if (qjit_quantize_weights(ctx, QJIT_SCHEME_W4A8_LQQ, 128, W, QJIT_DTYPE_F32, N, K, blob, bytes, &bytes))
        return fail(ctx, "quantize");
    if (qjit_reference_quantize_activations(ctx, M, K, X, Xq, sx) ||
        qjit_reference_gemm(ctx, blob, bytes, M, Xq, sx, acc, NULL))
        return fail(ctx, "reference");
    long long nonzero = 0;
    for (int i = 0; i < M * N; i++)
        nonzero += acc[i] != 0;
    printf("consumer: %s compiled (%s), reference GEMM %lld of %d sums nonzero; ok\n", key,
           info.from_cache ? "cached" : "NVRTC", nonzero, M * N);
    free(W);
    free(acc);
    free(blob);
    qjit_context_destroy(ctx);
    return nonzero > 0 ? 0 : 1;
}
