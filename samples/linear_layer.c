/* linear_layer.c -- how an inference engine embeds qjit: quantize a layer's
 * weights once, create the linear layer, then call forward on the engine's
 * own device buffers and stream. Error handling is the status + message
 * pattern every qjit call follows. Needs a GPU to run.
 *
 *   sample_linear [N K M]        (default 4096 4096 16) */
#include <cuda.h>
#include <qjit.h>
#include <stdio.h>
#include <stdlib.h>

#define QJIT_TRY(ctx, call)                                                                   \
    do {                                                                                      \
        qjit_status s_ = (call);                                                              \
        if (s_ != QJIT_OK) {                                                                  \
            fprintf(stderr, "%s: %s\n%s\n", #call, qjit_status_name(s_), qjit_last_error(ctx)); \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)

int main(int argc, char **argv)
{
    long long N = argc > 3 ? atoll(argv[1]) : 4096, K = argc > 3 ? atoll(argv[2]) : 4096;
    long long M = argc > 3 ? atoll(argv[3]) : 16;
    qjit_context *ctx;
    QJIT_TRY(NULL, qjit_context_create(NULL, &ctx));

    /* Offline step: quantize and pack (usually done once and stored). */
    float *W = malloc(sizeof(float) * (size_t)(N * K));
    for (long long i = 0; i < N * K; i++)
        W[i] = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
    size_t bytes;
    QJIT_TRY(ctx, qjit_packed_size(QJIT_SCHEME_W4A8_LQQ, 128, N, K, &bytes));
    void *packed = malloc(bytes);
    QJIT_TRY(ctx, qjit_quantize_weights(ctx, QJIT_SCHEME_W4A8_LQQ, 128, W, QJIT_DTYPE_F32, N, K, packed, bytes, &bytes));

    /* Load time: upload; kernels compile (or load from the cache) on first use. */
    qjit_linear *lin;
    QJIT_TRY(ctx, qjit_linear_create(ctx, packed, bytes, NULL, &lin));

    /* The engine's buffers and stream (here made with the driver API). */
    CUdeviceptr X, Y;
    CUstream stream;
    if (cuMemAlloc(&X, (size_t)(M * K) * 2) || cuMemAlloc(&Y, (size_t)(M * N) * 2) ||
        cuMemsetD16(X, 0x3C00, (size_t)(M * K)) || cuStreamCreate(&stream, 0)) {
        fprintf(stderr, "CUDA setup failed\n");
        return 1;
    }
    QJIT_TRY(ctx, qjit_linear_forward(lin, M, (void *)X, (void *)Y, NULL, 0, stream));
    cuStreamSynchronize(stream);
    char key[512];
    QJIT_TRY(ctx, qjit_linear_variant(lin, M, key, sizeof key));
    printf("ran Y[%lld x %lld] = X[%lld x %lld] W^T with %s\n", M, N, M, K, key);

    cuStreamDestroy(stream);
    cuMemFree(X);
    cuMemFree(Y);
    qjit_linear_destroy(lin);
    qjit_context_destroy(ctx);
    free(packed);
    free(W);
    return 0;
}
