/* tune_gpu.c -- qjit_tune_layer and qjit_tune_shape: the tuner's core
 * (tune.c) with the GPU's operations: the candidates' kernels compiled on
 * every CPU (one context per thread), each timed as `qjit bench` times a
 * call (legacy stream, L2 flushed before each call, three calls to warm,
 * the median), the chosen ones checked bit-exact on their INT32
 * accumulators against the CPU reference, the chosen buckets timed again
 * as the record will run them. */
#define _GNU_SOURCE
#include "compile_many.h"
#include "context.h"
#include "core.h"
#include "fp16.h"
#include "packed.h"
#include "parallel.h"
#include "scheme.h"
#include "tune.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLUSH_BYTES ((size_t)256 << 20)   /* more than any L2 of the parts qjit targets */
#define CHECK_ROWS 8                      /* rows checked per variant, the first and last included */
#define MAX_REPS 1000
#define MAX_THREADS 256

typedef struct gpu {
    qjit_context *ctx;
    const qjit__driver *d;
    const void *packed;
    size_t bytes;
    int64_t N, K, max_m;
    int parts;                   /* activation parts (1, or 2): planes of the accumulators */
    qjit_dtype dtype;
    const float *bias;           /* N values, or NULL */
    int reps, threads;
    char arch[16];
    uint16_t *x;                 /* max_m x K tokens on the host (dtype bits) */
    CUdeviceptr X, Y, flush;
    CUevent e0, e1;
    float *times;                /* reps */
    qjit_linear *lin;            /* the layer of lin_key, or NULL if it failed */
    char *lin_key;
    int lin_picks;               /* 1: lin_key is picks text */
} gpu;

/*--- compiling, on every CPU -----------------------------------------------*/

static void compile_progress(void *tuner, int done, int n)
{
    qjit__tune_progress(tuner, QJIT_TUNE_COMPILE, done, n);
}

/* A key that does not compile is logged and left out of the timing (its
 * layer will not create). */
static qjit_status gpu_prepare(void *ud, char *const *keys, int n, void *tuner)
{
    gpu *g = ud;
    qjit_compile_result *r = qjit__calloc(g->ctx, sizeof *r * (size_t)(n > 0 ? n : 1));
    if (!r)
        return qjit__error(g->ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    qjit__tune_progress(tuner, QJIT_TUNE_COMPILE, 0, n);
    qjit__compile_many(g->ctx, (const char *const *)keys, n, g->arch, g->threads, r, compile_progress, tuner);
    qjit__tune_progress(tuner, QJIT_TUNE_COMPILE, n, n);
    for (int i = 0; i < n; i++)
        if (r[i].status != QJIT_OK)
            qjit__log(g->ctx, "tune: %s did not compile: %s", keys[i], r[i].error);
    qjit__free(g->ctx, r, sizeof *r * (size_t)(n > 0 ? n : 1));
    return QJIT_OK;
}

/*--- timing ----------------------------------------------------------------*/

/* The layer with GEMM variant key forced, or (picks) with the buckets of
 * that picks text; the last one is kept. */
static qjit_linear *layer_of(gpu *g, const char *key, int picks)
{
    if (g->lin_key && g->lin_picks == picks && !strcmp(g->lin_key, key))
        return g->lin;
    g->lin_picks = picks;
    qjit_linear_destroy(g->lin);
    g->lin = NULL;
    qjit__strfree(g->ctx, g->lin_key);
    if (!(g->lin_key = qjit__strdup(g->ctx, key)))
        return NULL;
    qjit_linear_options o;
    qjit_linear_options_init(&o);
    o.variant = picks ? NULL : key;
    o.dtype = g->dtype;
    o.bias = g->bias;
    o.eager = 1;
    o.max_tokens = g->max_m;
    if (qjit__linear_create_picks(g->ctx, g->packed, g->bytes, &o, picks ? key : NULL, &g->lin) != QJIT_OK) {
        qjit__log(g->ctx, "tune: %s left out: %s", key, qjit_last_error(g->ctx));
        g->lin = NULL;
    }
    return g->lin;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static double time_layer(gpu *g, const char *key, int picks, int64_t M)
{
    qjit_linear *lin = layer_of(g, key, picks);
    if (!lin)
        return -1;
    const qjit__driver *d = g->d;
    for (int i = 0; i < 3; i++)
        if (qjit_linear_forward(lin, M, (void *)g->X, (void *)g->Y, NULL, 0, NULL))
            goto fail;
    for (int i = 0; i < g->reps; i++) {
        if (d->MemsetD8Async(g->flush, (unsigned char)i, FLUSH_BYTES, NULL) || d->EventRecord(g->e0, NULL) ||
            qjit_linear_forward(lin, M, (void *)g->X, (void *)g->Y, NULL, 0, NULL) ||
            d->EventRecord(g->e1, NULL) || d->EventSynchronize(g->e1) ||
            d->EventElapsedTime(&g->times[i], g->e0, g->e1))
            goto fail;
    }
    qsort(g->times, (size_t)g->reps, sizeof *g->times, cmp_float);
    return 1000.0 * g->times[g->reps / 2];
fail:
    qjit__log(g->ctx, "tune: %s failed at M = %lld: %s", key, (long long)M, qjit_last_error(g->ctx));
    d->CtxSynchronize();
    return -1;
}

static double gpu_time(void *ud, const char *key, int64_t M)
{
    return time_layer(ud, key, 0, M);
}

static double gpu_time_picks(void *ud, const char *picks, int64_t M)
{
    return time_layer(ud, picks, 1, M);
}

/*--- checking --------------------------------------------------------------*/

static int gpu_check(void *ud, const char *key, int64_t M)
{
    gpu *g = ud;
    qjit_linear *lin = layer_of(g, key, 0);
    if (!lin)
        return -1;
    const int rows = M < CHECK_ROWS ? (int)M : CHECK_ROWS, parts = g->parts;
    const size_t N = (size_t)g->N, K = (size_t)g->K, plane = (size_t)rows * N;
    int8_t *xq = qjit__alloc(g->ctx, (size_t)M * K), *xs = qjit__alloc(g->ctx, (size_t)rows * K);
    float *sx = qjit__alloc(g->ctx, sizeof(float) * (size_t)M * (size_t)parts);
    float *ss = qjit__alloc(g->ctx, sizeof(float) * (size_t)rows * (size_t)parts);
    int32_t *ref = qjit__alloc(g->ctx, sizeof(int32_t) * plane * (size_t)parts);
    int32_t *got = qjit__alloc(g->ctx, sizeof(int32_t) * N);
    const size_t acc_bytes = sizeof(int32_t) * (size_t)M * N * (size_t)parts;
    CUdeviceptr acc = 0;
    int rc = -1;
    if (!xq || !xs || !sx || !ss || !ref || !got || g->d->MemAlloc(&acc, acc_bytes))
        goto done;
    if (qjit_reference_quantize_activations_dtype(g->ctx, g->packed, g->bytes, M, g->dtype, g->x, xq, sx))
        goto done;
    for (int r = 0; r < rows; r++) {
        int64_t m = rows == 1 ? 0 : (M - 1) * r / (rows - 1);
        memcpy(xs + (size_t)r * K, xq + (size_t)m * K, K);
        memcpy(ss + (size_t)r * (size_t)parts, sx + (size_t)m * (size_t)parts, sizeof(float) * (size_t)parts);
    }
    if (qjit_reference_gemm(g->ctx, g->packed, g->bytes, rows, xs, ss, ref, NULL) ||
        g->d->MemsetD8(acc, 0xA5, acc_bytes) ||
        qjit_linear_forward_acc(lin, M, (void *)g->X, (int32_t *)acc, NULL, 0, NULL) || g->d->CtxSynchronize())
        goto done;
    rc = 0;
    for (int p = 0; p < parts && !rc; p++)
        for (int r = 0; r < rows && !rc; r++) {
            int64_t m = rows == 1 ? 0 : (M - 1) * r / (rows - 1);
            if (g->d->MemcpyDtoH(got, acc + sizeof(int32_t) * ((size_t)p * (size_t)M * N + (size_t)m * N),
                                 sizeof(int32_t) * N)) {
                rc = -1;
                break;
            }
            const int32_t *want = ref + (size_t)p * plane + (size_t)r * N;
            for (size_t n = 0; n < N; n++)
                if (got[n] != want[n]) {
                    qjit__log(g->ctx, "tune: %s at M = %lld: acc[%lld, %zu] (part %d) = %d, the reference %d", key,
                              (long long)M, (long long)m, n, p, got[n], want[n]);
                    rc = 1;
                    break;
                }
        }
done:
    if (rc < 0)
        qjit__log(g->ctx, "tune: could not check %s at M = %lld: %s", key, (long long)M, qjit_last_error(g->ctx));
    if (acc)
        g->d->MemFree(acc);
    qjit__free(g->ctx, xq, (size_t)M * K);
    qjit__free(g->ctx, xs, (size_t)rows * K);
    qjit__free(g->ctx, sx, sizeof(float) * (size_t)M * (size_t)parts);
    qjit__free(g->ctx, ss, sizeof(float) * (size_t)rows * (size_t)parts);
    qjit__free(g->ctx, ref, sizeof(int32_t) * plane * (size_t)parts);
    qjit__free(g->ctx, got, sizeof(int32_t) * N);
    return rc;
}

/*--- setting up ------------------------------------------------------------*/

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A standard normal value (Box-Muller). */
static float normal(uint64_t *s)
{
    double u = ((double)(next_random(s) >> 11) + 0.5) / 9007199254740992.0;
    double v = (double)(next_random(s) >> 11) / 9007199254740992.0;
    return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
}

static qjit_status gpu_open(gpu *g)
{
    const qjit__driver *d = g->d;
    const size_t xs = (size_t)g->max_m * (size_t)g->K, ys = (size_t)g->max_m * (size_t)g->N;
    if (!(g->x = qjit__alloc(g->ctx, 2 * xs)) || !(g->times = qjit__alloc(g->ctx, sizeof(float) * (size_t)g->reps)))
        return qjit__error(g->ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < xs; i++) {
        float v = normal(&seed);
        g->x[i] = g->dtype == QJIT_DTYPE_BF16 ? qjit__float_to_bf16(v) : qjit__float_to_half(v);
    }
    CUresult r;
    if ((r = d->MemAlloc(&g->X, 2 * xs)) || (r = d->MemAlloc(&g->Y, 2 * ys)) ||
        (r = d->MemAlloc(&g->flush, FLUSH_BYTES)) || (r = d->MemcpyHtoD(g->X, g->x, 2 * xs)) ||
        (r = d->EventCreate(&g->e0, 0)) || (r = d->EventCreate(&g->e1, 0)))
        return qjit__cuda_error(g->ctx, d, r, "setting up the tuning buffers");
    return QJIT_OK;
}

static void gpu_close(gpu *g)
{
    const qjit__driver *d = g->d;
    qjit_linear_destroy(g->lin);
    qjit__strfree(g->ctx, g->lin_key);
    if (d && d->loaded) {
        if (g->X) d->MemFree(g->X);
        if (g->Y) d->MemFree(g->Y);
        if (g->flush) d->MemFree(g->flush);
        if (g->e0) d->EventDestroy(g->e0);
        if (g->e1) d->EventDestroy(g->e1);
    }
    qjit__free(g->ctx, g->x, 2 * (size_t)g->max_m * (size_t)g->K);
    qjit__free(g->ctx, g->times, sizeof(float) * (size_t)g->reps);
}

static qjit_status check_options(qjit_context *ctx, const qjit_tune_options *in, qjit_tune_options *o)
{
    qjit_tune_options_init(o);
    if (in) {
        if (in->struct_size == 0 || in->struct_size > sizeof *o)
            return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_tune_options.struct_size is %zu (call "
                               "qjit_tune_options_init first)", in->struct_size);
        memcpy(o, in, in->struct_size);
    }
    if (o->dtype == 0)
        o->dtype = QJIT_DTYPE_F16;
    if (o->dtype != QJIT_DTYPE_F16 && o->dtype != QJIT_DTYPE_BF16)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_tune_options.dtype = %d: QJIT_DTYPE_F16 or "
                           "QJIT_DTYPE_BF16", (int)o->dtype);
    if (o->reps == 0)
        o->reps = 20;
    if (o->reps < 1 || o->reps > MAX_REPS)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_tune_options.reps = %d is not in 1..%d", o->reps, MAX_REPS);
    if (o->threads < 0 || o->threads > MAX_THREADS)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_tune_options.threads = %d is not in 0..%d", o->threads,
                           MAX_THREADS);
    if (o->bias != 0 && o->bias != 1)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_tune_options.bias = %d is not 0 or 1", o->bias);
    return qjit__tune_check_ms(ctx, o);
}

qjit_status qjit_tune_layer(qjit_context *ctx, const void *packed, size_t bytes, const qjit_tune_options *opts_in,
                            qjit_tune_report *report)
{
    if (!ctx)
        return QJIT_INVALID_ARGUMENT;
    qjit_tune_report local;
    if (report && (report->struct_size == 0 || report->struct_size > sizeof local))
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_tune_report.struct_size is %zu (sizeof(qjit_tune_report))",
                           report->struct_size);
    memset(&local, 0, sizeof local);
    local.struct_size = sizeof local;
    qjit_tune_options o;
    qjit__weights_view v;
    qjit_status st = check_options(ctx, opts_in, &o);
    if (st || (st = qjit__weights_view_init(ctx, packed, bytes, 1, &v)))
        return st;
    gpu g;
    memset(&g, 0, sizeof g);
    g.ctx = ctx;
    g.packed = packed;
    g.bytes = bytes;
    g.N = v.N;
    g.K = v.K;
    g.parts = v.scheme->two_part ? 2 : 1;
    g.dtype = o.dtype;
    g.reps = o.reps;
    g.threads = o.threads;
    /* The largest point (the core checks each). */
    g.max_m = o.ms ? 1 : 4096;
    for (size_t i = 0; o.ms && i < o.n_ms; i++)
        if (o.ms[i] > g.max_m)
            g.max_m = o.ms[i];
    qjit__record_device dev;
    pthread_mutex_lock(&ctx->lock);
    st = qjit__context_driver(ctx);
    if (!st)
        st = qjit__context_arch_locked(ctx, g.arch);
    if (!st)
        st = qjit__record_device_now(ctx, &dev);
    pthread_mutex_unlock(&ctx->lock);
    g.d = &ctx->driver;
    float *bias = NULL;
    if (!st && o.bias && !(bias = qjit__alloc(ctx, sizeof(float) * (size_t)v.N)))
        st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    for (int64_t n = 0; bias && n < v.N; n++)
        bias[n] = 0.01f * (float)(n % 7) - 0.03f;
    g.bias = bias;
    if (!st && !(st = qjit__driver_bind(ctx, &ctx->driver)))
        st = gpu_open(&g);
    if (!st) {
        const qjit__plan_request req = {v.scheme->name, v.group, v.N, v.K, g.arch, ctx->driver.sm_count, NULL,
                                        v.residual.block_n, v.residual.block_k, v.residual.blocks,
                                        o.dtype == QJIT_DTYPE_BF16 ? "bf16" : "f16", o.bias, NULL};
        const qjit__tune_ops ops = {gpu_prepare, gpu_time, gpu_check, gpu_time_picks, &g};
        st = qjit__tune_run(ctx, &req, &dev, &ops, &o, &local);
    }
    gpu_close(&g);
    qjit__free(ctx, bias, sizeof(float) * (size_t)v.N);
    if (report)
        memcpy(report, &local, report->struct_size);
    return st;
}

/* Random weights of a shape, 16 rows at a time on every CPU (each run of
 * rows its own stream, so the values do not depend on the CPUs). */
typedef struct random_rows {
    float *w;
    int64_t N, K;
    uint64_t seed;
} random_rows;

static void random_slab(void *arg, int64_t slab, void *scratch)
{
    (void)scratch;
    const random_rows *r = arg;
    uint64_t seed = r->seed ^ ((uint64_t)slab * 0x9E3779B97F4A7C15ull);
    const int64_t rows = r->N - slab * 16 < 16 ? r->N - slab * 16 : 16;
    float *w = r->w + (size_t)slab * 16 * (size_t)r->K;
    for (size_t i = 0; i < (size_t)rows * (size_t)r->K; i++)
        w[i] = 0.02f * normal(&seed);
}

qjit_status qjit_tune_shape(qjit_context *ctx, qjit_scheme scheme, int group, int64_t N, int64_t K,
                            const qjit_tune_options *opts, qjit_tune_report *report)
{
    if (!ctx)
        return QJIT_INVALID_ARGUMENT;
    size_t bytes = 0, capacity = 0;
    qjit_quantize_options qo;
    qjit_quantize_options_init(&qo);
    const qjit__scheme *S = qjit__scheme_get(scheme);
    const int two_part = S && S->two_part;
    const int64_t calib_rows = 16;
    if (two_part)
        qo.a8_fraction = 0.1;
    qjit_status st = qjit_packed_size_ex(ctx, scheme, group, N, K, &qo, &capacity);
    if (st)
        return st;
    const size_t wn = (size_t)N * (size_t)K, cn = two_part ? (size_t)calib_rows * (size_t)K : 0;
    float *w = qjit__alloc(ctx, sizeof(float) * wn), *calib = cn ? qjit__alloc(ctx, sizeof(float) * cn) : NULL;
    void *packed = qjit__alloc(ctx, capacity);
    if (!w || !packed || (cn && !calib)) {
        st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory for a %lldx%lld layer", (long long)N, (long long)K);
        goto done;
    }
    uint64_t seed = 0x2545F4914F6CDD1Dull ^ (uint64_t)(N * 131 + K);
    random_rows rows = {w, N, K, seed};
    if ((st = qjit__parallel_for(ctx, (N + 15) / 16, 0, random_slab, &rows)))
        goto done;
    for (size_t i = 0; i < cn; i++)   /* a few channels of outliers, as LLM activations have */
        calib[i] = normal(&seed) * ((i % (size_t)K) % 97 == 0 ? 20.0f : 1.0f);
    if (two_part) {
        qo.calib = calib;
        qo.calib_dtype = QJIT_DTYPE_F32;
        qo.calib_rows = calib_rows;
    }
    if (!(st = qjit_quantize_weights_ex(ctx, scheme, group, w, QJIT_DTYPE_F32, N, K, &qo, packed, capacity, &bytes)))
        st = qjit_tune_layer(ctx, packed, bytes, opts, report);
done:
    qjit__free(ctx, w, sizeof(float) * wn);
    qjit__free(ctx, calib, sizeof(float) * cn);
    qjit__free(ctx, packed, capacity);
    return st;
}
