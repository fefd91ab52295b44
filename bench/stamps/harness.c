/* bench/stamps/harness.c -- qjit_stamps N K M VARIANT [REPS [RHO]]: runs one random w4a8-lqq layer (g = 128)
 * at M tokens, its GEMM alone (tokens quantized once before, as `qjit bench` times "tok us"), with the GEMM
 * variant VARIANT forced ("-": the dispatch table's), REPS times (default 16), with a sparse residual on a share
 * RHO of its 64 x 64 blocks (default 0: dense; chosen on the unweighted error), each launch after a 512 MB write that flushes L2; prints each launch's
 * event time, and for the last four the per-CTA stamps an instrumented template tree wrote over Y
 * (bench/stamps/instrument.py; QJIT_TEMPLATE_PATH names it) as QS/QT lines for bench/stamps/phases.py. With the
 * library's own templates it prints the event times alone. Through the public API only. */
#include <qjit.h>
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#define CK(x)                                                                                                  \
    do {                                                                                                       \
        CUresult r_ = (x);                                                                                     \
        if (r_ != CUDA_SUCCESS) {                                                                              \
            fprintf(stderr, "qjit_stamps: %s failed (CUresult %d)\n", #x, (int)r_);                            \
            exit(1);                                                                                           \
        }                                                                                                      \
    } while (0)
#define QK(x)                                                                                                  \
    do {                                                                                                       \
        qjit_status s_ = (x);                                                                                  \
        if (s_ != QJIT_OK) {                                                                                   \
            fprintf(stderr, "qjit_stamps: %s: %s: %s\n", #x, qjit_status_string(s_), qjit_last_error(ctx));   \
            exit(1);                                                                                           \
        }                                                                                                      \
    } while (0)
int main(int argc, char **argv)
{
    if (argc < 5 || argc > 7) {
        fprintf(stderr, "usage: qjit_stamps N K M VARIANT [REPS [RHO]]\n");
        return 2;
    }
    const long long N = atoll(argv[1]), K = atoll(argv[2]), M = atoll(argv[3]);
    const char *variant = strcmp(argv[4], "-") ? argv[4] : NULL;
    const int reps = argc > 5 ? atoi(argv[5]) : 16;
    const double rho = argc > 6 ? atof(argv[6]) : 0.0;
    if (N <= 0 || K <= 0 || M <= 0 || N * K > (1LL << 31) || M * K > (1LL << 31) || reps < 1 || reps > 1000 ||
        !(rho >= 0.0 && rho <= 1.0)) {
        fprintf(stderr, "qjit_stamps: N, K, M must be positive (N x K and M x K at most 2^31), REPS 1..1000, "
                        "RHO in [0, 1]\n");
        return 2;
    }
    CK(cuInit(0));
    CUdevice dev;
    CK(cuDeviceGet(&dev, 0));
    CUcontext cc;
    CK(cuDevicePrimaryCtxRetain(&cc, dev));   /* the context qjit uses */
    CK(cuCtxSetCurrent(cc));
    qjit_context *ctx = NULL;
    QK(qjit_context_create(NULL, &ctx));
    size_t cap = 0, wr = 0;
    qjit_quantize_options qo;
    qjit_quantize_options_init(&qo);
    qo.sparsity = rho;
    QK(qjit_packed_size_ex(ctx, QJIT_SCHEME_W4A8_LQQ, 128, N, K, &qo, &cap));
    float *W = malloc(sizeof(float) * (size_t)(N * K));
    void *packed = malloc(cap);
    uint16_t *Xh = malloc(sizeof(uint16_t) * (size_t)(M * K));
    const size_t y_bytes = 2 * (size_t)(M * N);
    uint32_t *buf = malloc(y_bytes);
    if (!W || !packed || !Xh || !buf) {
        fprintf(stderr, "qjit_stamps: out of host memory\n");
        return 1;
    }
    srand(1);
    for (long long i = 0; i < N * K; ++i)
        W[i] = ((rand() & 0xFFFF) - 32768) / 32768.0f * 0.05f;
    for (long long i = 0; i < M * K; ++i)
        Xh[i] = qjit_half_from_float(((rand() & 0xFFFF) - 32768) / 32768.0f);
    QK(qjit_quantize_weights_ex(ctx, QJIT_SCHEME_W4A8_LQQ, 128, W, QJIT_DTYPE_F32, N, K, &qo, packed, cap, &wr));
    qjit_linear_options lo;
    qjit_linear_options_init(&lo);
    lo.variant = variant;
    qjit_linear *lin = NULL;
    QK(qjit_linear_create(ctx, packed, wr, &lo, &lin));
    char key[1024];
    QK(qjit_linear_variant(lin, M, key, sizeof key));
    printf("variant %s\n", key);
    qjit_tokens_format tf;
    qjit_tokens_format_init(&tf);
    QK(qjit_linear_tokens_format(lin, M, &tf));
    const size_t flush_bytes = (size_t)512 << 20;
    CUdeviceptr X, Y, xq, sx, rs, flush;
    CK(cuMemAlloc(&X, sizeof(uint16_t) * (size_t)(M * K)));
    CK(cuMemAlloc(&Y, y_bytes));
    CK(cuMemAlloc(&flush, flush_bytes));
    CK(cuMemAlloc(&xq, (size_t)(tf.row_bytes * M)));
    CK(cuMemAlloc(&sx, sizeof(float) * (size_t)(M * tf.scales)));
    CK(cuMemAlloc(&rs, sizeof(int32_t) * (size_t)M));
    CK(cuMemcpyHtoD(X, Xh, sizeof(uint16_t) * (size_t)(M * K)));
    qjit_tokens tk;
    qjit_tokens_init(&tk);
    tk.xq = (void *)xq;
    tk.sx = (float *)sx;
    tk.rowsum = tf.rowsum ? (int32_t *)rs : NULL;
    QK(qjit_linear_quantize(lin, M, (void *)X, &tk, NULL));
    CK(cuCtxSynchronize());
    CUevent e0, e1;
    CK(cuEventCreate(&e0, 0));
    CK(cuEventCreate(&e1, 0));
    for (int r = 0; r < reps; ++r) {
        CK(cuMemsetD32Async(flush, (unsigned)r, flush_bytes / 4, NULL));
        CK(cuEventRecord(e0, NULL));
        QK(qjit_linear_forward_tokens(lin, M, &tk, (void *)Y, NULL, 0, NULL));
        CK(cuEventRecord(e1, NULL));
        CK(cuCtxSynchronize());
        float ms = 0;
        CK(cuEventElapsedTime(&ms, e0, e1));
        printf("rep %d event %.2f us\n", r, ms * 1000);
        if (r < reps - 4)
            continue;
        /* An instrumented kernel's stamps: a marker, the grid, 36 words a CTA (32 stamps, the globaltimer at
         * its start and end), as many CTAs as Y holds. */
        CK(cuMemcpyDtoH(buf, Y, y_bytes));
        if (buf[0] != 0x51535453u)
            continue;
        const uint32_t gx = buf[1], gy = buf[2], gz = buf[3];
        const uint64_t total = (uint64_t)gx * gy * gz, room = (y_bytes / 4 - 4) / 36;
        printf("rep %d grid %u %u %u\n", r, gx, gy, gz);
        for (uint64_t i = 0; i < total && i < room && i < 2048; ++i) {
            const uint32_t *o = buf + 4 + i * 36;
            const unsigned long long g0 = o[32] | (unsigned long long)o[33] << 32;
            const unsigned long long g1 = o[34] | (unsigned long long)o[35] << 32;
            printf("QS 0.0.0.0.0 %d %llu %u %u %u %llu %llu A", r, (unsigned long long)i, gx, gy, gz, g0, g1);
            for (int q = 0; q < 8; ++q)
                printf(" %u", o[q]);
            printf("\nQT 0.0.0.0.0 %d %llu B", r, (unsigned long long)i);
            for (int q = 8; q < 32; ++q)
                printf(" %u", o[q]);
            printf("\n");
        }
    }
    cuEventDestroy(e0);
    cuEventDestroy(e1);
    cuMemFree(X);
    cuMemFree(Y);
    cuMemFree(flush);
    cuMemFree(xq);
    cuMemFree(sx);
    cuMemFree(rs);
    free(W);
    free(packed);
    free(Xh);
    free(buf);
    qjit_linear_destroy(lin);
    qjit_context_destroy(ctx);
    return 0;
}
