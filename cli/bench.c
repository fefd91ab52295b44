/* bench.c -- `qjit bench`: qjit against cuBLASLt (BF16, INT8, FP8) in one
 * process on one GPU, on the same shapes, timed the same way: CUDA events
 * around each call, L2 flushed before each call, warm-up, median of many
 * repetitions, random inputs. Every qjit point is checked against the CPU
 * reference (INT32 accumulators, exact, on sampled rows) before it is timed.
 * Also: the measured copy bandwidth (the 4-bit floor), two INT8 peaks
 * (cuBLAS INT8 at 8192^3; a bare wgmma loop, bench_peak.c), the host cost of a
 * cached forward call (direct, split into its driver launches alone and
 * qjit's dispatch; and per forward under CUDA graph replay), and
 * cold-compile / cache-load time per variant. Only the public API (qjit.h)
 * and the command's own driver table (libcuda.h). */
#define _GNU_SOURCE
#include "bench.h"
#include "cli.h"
#include "accuracy.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: qjit bench [--scheme S,...|all] [--shapes NxK,...] [--shapes-file F] [--m M,...]\n"
    "                  [--group G] [--variant KEY]... [--reps R] [--no-peers] [--csv FILE]\n"
    "                  [--json FILE] [--seed S] [--sparsity RHO,...] [--a8 SHARE] [--layers L]\n"
    "                  [--dtype f16|bf16]\n"
    "Runs quantized layers of each scheme and the cuBLASLt peers (BF16, INT8->INT32, FP8\n"
    "E4M3) on the same shapes in one process: each layer as forward (the activation\n"
    "kernel and the GEMM: 'qjit us') and as the GEMM alone on tokens quantized before the\n"
    "call (qjit_linear_forward_tokens: 'tok us'), the way the peers take their inputs,\n"
    "both checked bit-exact first. Defaults: scheme w4a8-lqq; the Llama-2-7B/70B\n"
    "shapes 12288x4096, 4096x4096, 22016x4096, 4096x11008, 10240x8192, 8192x8192,\n"
    "57344x8192, 8192x28672 and M = 1,4,16,32,64,128,256,512,1024,4096; group 128 (for\n"
    "schemes that take it: w8a8 is per channel, w4a8-is needs groups); 50 repetitions.\n"
    "--scheme takes names (w4a8-lqq, w4a8-qoq, w4a8-is, w8a8, w4a4, w4ax, w4ax-s, or lqq,\n"
    "qoq, is, int8, int4) or all (every scheme but w4ax, w4ax-s). w4ax and w4ax-s layers\n"
    "keep the share --a8 of their channels in INT8 (default 0.1), chosen on LLM-like\n"
    "calibration rows; each is also timed against w4a4 when it runs.\n"
    "A shapes file holds one NxK per line (# comments allowed). Each --variant KEY adds\n"
    "rows running that GEMM variant at every M (for tuning); the summary covers the\n"
    "dispatch table's own choices: per scheme its speedup over the best cuBLAS path, each\n"
    "scheme's time against w4a8-lqq's, w8a8 against cuBLAS INT8 and the fractions it\n"
    "reaches of two INT8 tensor-core peaks, both measured in the same run: cuBLAS INT8 at\n"
    "8192^3 (a whole GEMM; not with --no-peers), and a plain loop of m64n256k32 wgmmas on\n"
    "operands in shared memory, two warpgroups per SM (the tensor cores' own; sm_90a only,\n"
    "else 'not measured').\n"
    "--dtype bf16 runs BF16 layers (tokens and outputs; the default is FP16).\n"
    "--sparsity adds, per budget, the layers quantized with a sparse 4-bit residual on\n"
    "that share of weight blocks (chosen with LLM-like calibration rows; schemes that take\n"
    "one: w4a8-lqq, w4a8-qoq with groups), each timed against the dense layer (which\n"
    "always runs): the summary gives the latency over dense per budget (geomean, worst).\n"
    "Ends with cold-compile time per variant (a child `qjit compile` into an empty cache,\n"
    "the driver's compute cache off) and cache-load time. Ctrl-C or SIGTERM stops after\n"
    "the point in hand; the table, summary and files cover the points timed so far.\n"
    "--layers L times a model's step instead: the shapes are one layer's linears, called\n"
    "in order over L layers that each hold their own weights, M tokens a call, as one\n"
    "CUDA graph replayed and as eager calls; per scheme on tokens quantized before the\n"
    "call and quantizing inside, and the cuBLAS peers on the same step. Defaults there:\n"
    "Llama-2-7B's four linears (12288x4096, 4096x4096, 22016x4096, 4096x11008) at M = 1,\n"
    "2, 4, 8, 16, 32, 64 (e.g. --layers 32 is its decode step). One --variant there forces\n"
    "that GEMM variant on every layer and M (rows marked *).\n";

#define MAX_SCHEMES 7

/* SIGINT / SIGTERM (Ctrl-C, timeout(1)) during the layers: no new point is
 * started, and the table, summary and CSV / JSON of the points timed so far
 * are written (without the cold-compile pass); a second signal ends the
 * process at once. */
static volatile sig_atomic_t g_stop;

static void on_stop(int sig)
{
    g_stop = 1;
    signal(sig, SIG_DFL);
}

typedef struct point {
    qjit_scheme scheme;
    int group;
    long long N, K, M;
    double us, tops, floor_frac;
    double tok_us;                /* the GEMM alone on tokens quantized before the call (0: not timed) */
    double peer_us[NPEERS];       /* 0: not available */
    int checked;                  /* rows compared, exact */
    int forced;                   /* 1: a --variant row, not the dispatch table's choice */
    double rho, density;          /* the sparsity budget (0: dense) and the share of blocks kept */
    char key[400];
} point;

int bench_cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

double bench_time_calls(bench *b, bench_call_fn fn, void *ud)
{
    float *t = malloc(sizeof(float) * (size_t)b->reps);
    for (int i = 0; i < 3; i++)
        if (fn(ud))
            goto fail;
    for (int i = 0; i < b->reps; i++) {
        b->d->MemsetD8Async(b->flush, (unsigned char)i, b->flush_bytes, NULL);
        b->d->EventRecord(b->e0, NULL);
        if (fn(ud))
            goto fail;
        b->d->EventRecord(b->e1, NULL);
        if (b->d->EventSynchronize(b->e1) != CUDA_SUCCESS)
            goto fail;
        b->d->EventElapsedTime(&t[i], b->e0, b->e1);
    }
    qsort(t, (size_t)b->reps, sizeof *t, bench_cmp_float);
    double us = t[b->reps / 2] * 1000.0;
    free(t);
    return us;
fail:
    free(t);
    return -1;
}

typedef struct copy_ud {
    bench *b;
    CUdeviceptr src, dst;
    size_t bytes;
} copy_ud;

static int do_copy(void *ud)
{
    copy_ud *c = ud;
    return c->b->d->MemcpyDtoDAsync(c->dst, c->src, c->bytes, NULL) != CUDA_SUCCESS;
}

/* Device-to-device copy of 1 GiB, counting bytes read plus written. */
static int measure_copy(bench *b)
{
    copy_ud c = {b, 0, 0, (size_t)1 << 30};
    if (b->d->MemAlloc(&c.src, c.bytes) || b->d->MemAlloc(&c.dst, c.bytes))
        return 1;
    b->d->MemsetD8(c.src, 0x3C, c.bytes);
    double us = bench_time_calls(b, do_copy, &c);
    b->d->MemFree(c.src);
    b->d->MemFree(c.dst);
    if (us <= 0)
        return 1;
    b->copy_gbs = 2.0 * (double)c.bytes / (us * 1e-6) / 1e9;
    return 0;
}

typedef struct fwd_ud {
    qjit_linear *lin;
    long long M;
    CUdeviceptr X, Y;
} fwd_ud;

static int do_forward(void *ud)
{
    fwd_ud *f = ud;
    return qjit_linear_forward(f->lin, f->M, (void *)f->X, (void *)f->Y, NULL, 0, NULL) != QJIT_OK;
}

typedef struct tok_ud {
    qjit_linear *lin;
    long long M;
    const qjit_tokens *t;
    CUdeviceptr Y;
} tok_ud;

static int do_tokens(void *ud)
{
    tok_ud *u = ud;
    return qjit_linear_forward_tokens(u->lin, u->M, u->t, (void *)u->Y, NULL, 0, NULL) != QJIT_OK;
}

/* The GEMM alone, on X (dX) quantized once before (qjit_linear_quantize),
 * as the cuBLAS peers take their inputs: checked first to give forward's
 * output on the same X bit for bit. Returns its time in us, 0 if M's GEMM
 * quantizes its own tokens, -1 if the outputs differ or a call fails. */
static double time_tokens(bench *b, qjit_linear *lin, long long M, long long N, long long K, CUdeviceptr dX,
                          CUdeviceptr dY)
{
    qjit_tokens_format tf;
    qjit_tokens_format_init(&tf);
    if (qjit_linear_tokens_format(lin, M, &tf) != QJIT_OK)
        return 0;
    const size_t yb = 2 * (size_t)(M * N);
    CUdeviceptr dq = 0, ds = 0, dr = 0, dY2 = 0;
    unsigned char *y1 = malloc(yb), *y2 = malloc(yb);
    double us = -1;
    qjit_tokens t;
    qjit_tokens_init(&t);
    if (!y1 || !y2 || b->d->MemAlloc(&dq, (size_t)(M * tf.row_bytes)) ||
        b->d->MemAlloc(&ds, 4 * (size_t)(M * tf.scales)) || (tf.rowsum && b->d->MemAlloc(&dr, 4 * (size_t)M)) ||
        b->d->MemAlloc(&dY2, yb))
        goto done;
    t.xq = (void *)dq;
    t.sx = (float *)ds;
    t.rowsum = (int32_t *)dr;
    if (qjit_linear_quantize(lin, M, (void *)dX, &t, NULL) ||
        qjit_linear_forward(lin, M, (void *)dX, (void *)dY, NULL, 0, NULL) ||
        qjit_linear_forward_tokens(lin, M, &t, (void *)dY2, NULL, 0, NULL) || b->d->CtxSynchronize() ||
        b->d->MemcpyDtoH(y1, dY, yb) || b->d->MemcpyDtoH(y2, dY2, yb))
        goto done;
    if (memcmp(y1, y2, yb)) {
        fprintf(stderr, "qjit bench: %lldx%lld M=%lld: the GEMM on quantized tokens differs from forward\n", N, K, M);
        goto done;
    }
    tok_ud u = {lin, M, &t, dY2};
    us = bench_time_calls(b, do_tokens, &u);
done:
    free(y1);
    free(y2);
    b->d->MemFree(dq);
    b->d->MemFree(ds);
    if (dr)
        b->d->MemFree(dr);
    b->d->MemFree(dY2);
    return us;
}

typedef struct peer_ud {
    qb_gemm *g;
} peer_ud;

static int do_peer(void *ud)
{
    char err[256];
    return qb_gemm_run(((peer_ud *)ud)->g, NULL, err, sizeof err) != 0;
}

uint16_t bench_token(bench *b, uint64_t *seed)
{
    float x = cli_normal(seed);
    return b->dtype == QJIT_DTYPE_BF16 ? qjit_bf16_from_float(x) : qjit_half_from_float(x);
}

int bench_fill_device(bench *b, CUdeviceptr dst, size_t n, int kind, uint64_t *seed)
{
    size_t chunk = (size_t)16 << 20;
    unsigned char *host = malloc(chunk);
    if (!host)
        return 1;
    for (size_t i = 0; i < chunk; i += 2) {
        uint64_t r = cli_random(seed);
        if (kind == QB_BF16) {          /* |x| in [2^-3, 2^3), random sign and mantissa */
            uint16_t v = (uint16_t)((r & 0x8000) | ((uint16_t)(124 + (r >> 16) % 6) << 7) | ((r >> 32) & 0x7F));
            memcpy(host + i, &v, 2);
        } else {                        /* INT8 any; FP8 E4M3 without the NaN codes */
            host[i] = (unsigned char)r;
            host[i + 1] = (unsigned char)(r >> 8);
            if (kind == QB_FP8) {
                if ((host[i] & 0x7F) == 0x7F) host[i] ^= 1;
                if ((host[i + 1] & 0x7F) == 0x7F) host[i + 1] ^= 1;
            }
        }
    }
    int rc = 0;
    for (size_t off = 0; off < n && !rc; off += chunk)
        rc = b->d->MemcpyHtoD(dst + off, host, n - off < chunk ? n - off : chunk) != CUDA_SUCCESS;
    free(host);
    return rc;
}

int bench_check_point(bench *b, qjit_linear *lin, const void *blob, size_t bytes, int parts, long long M, long long N,
                      long long K, const uint16_t *X, CUdeviceptr dX, int max_rows)
{
    int rows = M < max_rows ? (int)M : max_rows, rc = rows;
    size_t ws;
    qjit_linear_workspace_size(lin, M, &ws);
    const size_t plane = (size_t)rows * (size_t)N;
    int8_t *Xq = malloc((size_t)(M * K)), *Xs = malloc((size_t)rows * (size_t)K);
    float *sx = malloc(sizeof(float) * (size_t)(M * parts)), *ss = malloc(sizeof(float) * (size_t)(rows * parts));
    int32_t *ref = malloc(sizeof(int32_t) * plane * (size_t)parts);
    int32_t *row = malloc(sizeof(int32_t) * (size_t)N);
    CUdeviceptr dA = 0, dW = 0;
    if (!Xq || !Xs || !sx || !ss || !ref || !row ||
        b->d->MemAlloc(&dA, sizeof(int32_t) * (size_t)(M * N) * (size_t)parts) || b->d->MemAlloc(&dW, ws)) {
        rc = -1;
        goto done;
    }
    qjit_reference_quantize_activations_dtype(b->ctx, blob, bytes, M, b->dtype, X, Xq, sx);
    for (int r = 0; r < rows; r++) {
        long long m = rows == 1 ? 0 : (M - 1) * r / (rows - 1);
        memcpy(Xs + (size_t)r * (size_t)K, Xq + (size_t)m * (size_t)K, (size_t)K);
        memcpy(ss + (size_t)r * (size_t)parts, sx + (size_t)m * (size_t)parts, sizeof(float) * (size_t)parts);
    }
    qjit_reference_gemm(b->ctx, blob, bytes, rows, Xs, ss, ref, NULL);
    if (qjit_linear_forward_acc(lin, M, (void *)dX, (int32_t *)dA, (void *)dW, ws, NULL) ||
        b->d->CtxSynchronize()) {
        fprintf(stderr, "qjit bench: forward_acc failed: %s\n", qjit_last_error(b->ctx));
        rc = -1;
        goto done;
    }
    for (int pt = 0; pt < parts && rc > 0; pt++)
        for (int r = 0; r < rows && rc > 0; r++) {
            long long m = rows == 1 ? 0 : (M - 1) * r / (rows - 1);
            b->d->MemcpyDtoH(row, dA + sizeof(int32_t) * ((size_t)pt * (size_t)(M * N) + (size_t)(m * N)),
                             sizeof(int32_t) * (size_t)N);
            const int32_t *want = ref + (size_t)pt * plane + (size_t)r * (size_t)N;
            for (long long n = 0; n < N; n++)
                if (row[n] != want[n]) {
                    fprintf(stderr, "qjit bench: WRONG result at M=%lld N=%lld K=%lld: acc[%lld,%lld] (part %d) = %d, "
                                    "reference %d\n", M, N, K, m, n, pt, row[n], want[n]);
                    rc = -1;
                    break;
                }
        }
done:
    if (dA) b->d->MemFree(dA);
    if (dW) b->d->MemFree(dW);
    free(Xq); free(Xs); free(sx); free(ss); free(ref); free(row);
    return rc;
}

/* The peers' times for this (shape, M), measured the first time any scheme
 * asks (si, mi: the shape's and M's indexes in the run). */
static void run_peers(bench *b, int si, int mi, long long M, long long N, long long K, point *p)
{
    for (int k = 0; k < NPEERS; k++)
        p->peer_us[k] = 0;
    if (!b->blas)
        return;
    if (b->peer_done[si][mi]) {
        memcpy(p->peer_us, b->peer_cache[si][mi], sizeof p->peer_us);
        return;
    }
    for (int k = 0; k < NPEERS; k++) {
        CUdeviceptr W = 0, X = 0, Y = 0, ws = 0;
        size_t in = qb_in_bytes((qb_kind)k), out = qb_out_bytes((qb_kind)k), wsb = (size_t)32 << 20;
        qb_gemm *g = NULL;
        char err[512];
        uint64_t seed = b->seed + 77 * (uint64_t)k;
        if (b->d->MemAlloc(&W, (size_t)(N * K) * in) || b->d->MemAlloc(&X, (size_t)(M * K) * in) ||
            b->d->MemAlloc(&Y, (size_t)(M * N) * out) || b->d->MemAlloc(&ws, wsb) ||
            bench_fill_device(b, W, (size_t)(N * K) * in, k, &seed) || bench_fill_device(b, X, (size_t)(M * K) * in, k, &seed)) {
            fprintf(stderr, "qjit bench: %s: out of device memory at M=%lld N=%lld K=%lld\n",
                    qb_kind_name((qb_kind)k), M, N, K);
        } else if (qb_gemm_prepare(b->blas, (qb_kind)k, (int)M, (int)N, (int)K, W, X, Y, ws, wsb, &g, err, sizeof err)) {
            fprintf(stderr, "qjit bench: %s\n", err);
        } else {
            peer_ud u = {g};
            double us = bench_time_calls(b, do_peer, &u);
            p->peer_us[k] = us > 0 ? us : 0;
            qb_gemm_destroy(g);
        }
        if (W) b->d->MemFree(W);
        if (X) b->d->MemFree(X);
        if (Y) b->d->MemFree(Y);
        if (ws) b->d->MemFree(ws);
    }
    memcpy(b->peer_cache[si][mi], p->peer_us, sizeof p->peer_us);
    b->peer_done[si][mi] = 1;
}

/* The INT8 tensor cores' ceiling as cuBLAS reaches it: INT8 x INT8 -> INT32
 * at M = N = K = 8192, in TOPS (0 if it cannot run). */
static double int8_peak(bench *b)
{
    const int n = 8192;
    point p;
    memset(&p, 0, sizeof p);
    CUdeviceptr W = 0, X = 0, Y = 0, ws = 0;
    qb_gemm *g = NULL;
    char err[512];
    uint64_t seed = b->seed + 99;
    double tops = 0;
    size_t wsb = (size_t)32 << 20;
    if (b->d->MemAlloc(&W, (size_t)n * n) || b->d->MemAlloc(&X, (size_t)n * n) ||
        b->d->MemAlloc(&Y, (size_t)n * n * 4) || b->d->MemAlloc(&ws, wsb) ||
        bench_fill_device(b, W, (size_t)n * n, QB_INT8, &seed) || bench_fill_device(b, X, (size_t)n * n, QB_INT8, &seed)) {
        fprintf(stderr, "qjit bench: the INT8 peak could not be measured (device memory)\n");
    } else if (qb_gemm_prepare(b->blas, QB_INT8, n, n, n, W, X, Y, ws, wsb, &g, err, sizeof err)) {
        fprintf(stderr, "qjit bench: the INT8 peak could not be measured: %s\n", err);
    } else {
        peer_ud u = {g};
        double us = bench_time_calls(b, do_peer, &u);
        tops = us > 0 ? qb_tops(n, n, n, us) : 0;
        qb_gemm_destroy(g);
    }
    if (W) b->d->MemFree(W);
    if (X) b->d->MemFree(X);
    if (Y) b->d->MemFree(Y);
    if (ws) b->d->MemFree(ws);
    return tops;
}

/* tops as a fraction of peak ("0.87"), or "n/a" where the peak was not
 * measured (0). */
static void peak_fraction(char out[16], double tops, double peak)
{
    if (peak > 0)
        snprintf(out, 16, "%.2f", tops / peak);
    else
        snprintf(out, 16, "n/a");
}

/* Microseconds from t0 to t1 (CLOCK_MONOTONIC). */
static double elapsed_us(struct timespec t0, struct timespec t1)
{
    return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1000.0;
}

/* The median of 20 host timings (sorts them). */
static double median20(double t[20])
{
    for (int i = 1; i < 20; i++)
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            double x = t[j]; t[j] = t[j - 1]; t[j - 1] = x;
        }
    return t[10];
}

/* Host time of one call of fn: enqueue time of 100 calls, then a wait for
 * the GPU (not counted). */
static double enqueue_us(bench *b, bench_call_fn fn, void *ud)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 100; i++)
        fn(ud);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    b->d->CtxSynchronize();
    return elapsed_us(t0, t1) / 100.0;
}

/* Host cost of one call of fn: enqueue time of 100 calls, median of 20. */
static double host_cost_us(bench *b, bench_call_fn fn, void *ud)
{
    double t[20];
    for (int rep = 0; rep < 20; rep++)
        t[rep] = enqueue_us(b, fn, ud);
    return median20(t);
}

/* A direct forward's output into `direct` (M x N 16-bit values, what a
 * replay must write), then `calls` forwards captured into a graph on a new
 * non-blocking stream, as a serving engine captures them. Returns NULL, or
 * why not; *s and *g are set (or left NULL) for the caller to destroy. */
static const char *capture_forwards(bench *b, fwd_ud *f, int calls, unsigned char *direct, size_t bytes, CUstream *s,
                                    CUgraph *g)
{
    const cli_cuda *d = b->d;
    if (do_forward(f) || d->CtxSynchronize() != CUDA_SUCCESS || d->MemcpyDtoH(direct, f->Y, bytes) != CUDA_SUCCESS)
        return "a forward failed";
    if (d->StreamCreate(s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
        d->StreamBeginCapture(*s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) != CUDA_SUCCESS)
        return "capture failed";
    int ok = 1;
    for (int i = 0; i < calls; i++)
        ok &= qjit_linear_forward(f->lin, f->M, (void *)f->X, (void *)f->Y, NULL, 0, *s) == QJIT_OK;
    return d->StreamEndCapture(*s, g) == CUDA_SUCCESS && ok ? NULL : "capture failed";
}

/* Host cost per forward when the caller captures its forwards in a CUDA
 * graph, as serving engines do for decode steps: GRAPH_CALLS forwards in one
 * graph, host time of one graph launch / GRAPH_CALLS, median of 20. The
 * replay's output must equal, bit for bit, what a direct call wrote.
 * Returns -1 (and says why) if capture or replay fails or differs. */
#define GRAPH_CALLS 64
static double graph_host_cost_us(bench *b, fwd_ud *f, long long N)
{
    const cli_cuda *d = b->d;
    size_t ybytes = (size_t)(f->M * N) * 2;
    unsigned char *direct = malloc(ybytes), *replay = malloc(ybytes);
    CUstream s = NULL;
    CUgraph g = NULL;
    CUgraphExec ge = NULL;
    double result = -1;
    const char *why = "out of host memory";
    if (!direct || !replay || (why = capture_forwards(b, f, GRAPH_CALLS, direct, ybytes, &s, &g)))
        goto out;
    why = "capture failed";
    if (d->GraphInstantiate(&ge, g, 0) != CUDA_SUCCESS)
        goto out;
    why = "replay failed";
    if (d->MemsetD8(f->Y, 0xFF, ybytes) != CUDA_SUCCESS || d->GraphLaunch(ge, s) != CUDA_SUCCESS ||
        d->StreamSynchronize(s) != CUDA_SUCCESS || d->MemcpyDtoH(replay, f->Y, ybytes) != CUDA_SUCCESS)
        goto out;
    why = "the replay's output differs from a direct call's";
    if (memcmp(direct, replay, ybytes))
        goto out;
    double t[20];
    for (int rep = 0; rep < 20; rep++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        d->GraphLaunch(ge, s);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        d->StreamSynchronize(s);
        t[rep] = elapsed_us(t0, t1) / GRAPH_CALLS;
    }
    result = median20(t);
out:
    if (result < 0)
        fprintf(stderr, "qjit bench: host cost under graph replay not measured: %s\n", why);
    if (ge)
        d->GraphExecDestroy(ge);
    if (g)
        d->GraphDestroy(g);
    if (s)
        d->StreamDestroy(s);
    free(direct);
    free(replay);
    return result;
}

/* The kernel launches one forward makes, read from a capture of it, to be
 * made again with nothing of qjit between them: each kernel's function,
 * grid, block, dynamic shared memory and argument values (kernelParams: the
 * very values captured, held by the graph, so valid while it lives), and the
 * attributes the forward launched it with: PDL (programmatic stream
 * serialization) where its edge from the kernel before is programmatic, its
 * cluster where it has one. */
#define MAX_LAUNCHES 8
#define MAX_NODES 16
typedef struct launches {
    const cli_cuda *d;
    int n;
    CUDA_KERNEL_NODE_PARAMS k[MAX_LAUNCHES];
    CUlaunchAttribute attr[MAX_LAUNCHES][2];
    unsigned nattr[MAX_LAUNCHES];
} launches;

/* The launches on the legacy stream, as forward makes them there
 * (runtime/linear.c): cuLaunchKernelEx where a kernel has attributes, else
 * cuLaunchKernel. 0 on success. */
static int do_launches(void *ud)
{
    launches *l = ud;
    for (int i = 0; i < l->n; i++) {
        const CUDA_KERNEL_NODE_PARAMS *k = &l->k[i];
        CUresult r;
        if (l->nattr[i]) {
            CUlaunchConfig cfg = {k->gridDimX, k->gridDimY, k->gridDimZ, k->blockDimX, k->blockDimY, k->blockDimZ,
                                  k->sharedMemBytes, NULL, l->attr[i], l->nattr[i]};
            r = l->d->LaunchKernelEx(&cfg, k->func, k->kernelParams, k->extra);
        } else {
            r = l->d->LaunchKernel(k->func, k->gridDimX, k->gridDimY, k->gridDimZ, k->blockDimX, k->blockDimY,
                                   k->blockDimZ, k->sharedMemBytes, NULL, k->kernelParams, k->extra);
        }
        if (r != CUDA_SUCCESS)
            return 1;
    }
    return 0;
}

/* Where node is in nodes[0..n); n if nowhere. */
static size_t node_index(const CUgraphNode *nodes, size_t n, CUgraphNode node)
{
    size_t i = 0;
    while (i < n && nodes[i] != node)
        i++;
    return i;
}

/* Fills l->attr[l->n] for the kernel `node`: PDL if an edge into it is
 * programmatic, its cluster if it has one of more than one block. Returns
 * NULL, or why it cannot. */
static const char *launch_attributes(cli_cuda *d, CUgraphNode node, const CUgraphNode *to,
                                     const CUgraphEdgeData *edge, size_t ne, launches *l)
{
    CUlaunchAttribute *a = l->attr[l->n];
    unsigned na = 0;
    for (size_t e = 0; e < ne; e++)
        if (to[e] == node && edge[e].type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC) {
            memset(&a[na], 0, sizeof a[na]);
            a[na].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            a[na++].value.programmaticStreamSerializationAllowed = 1;
            break;
        }
    CUkernelNodeAttrValue cluster;
    memset(&cluster, 0, sizeof cluster);
    CUresult r = d->GraphKernelNodeGetAttribute(node, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &cluster);
    if (r != CUDA_SUCCESS)
        return cli_cuda_error(d, r, "cuGraphKernelNodeGetAttribute (cluster dimension)");
    if (cluster.clusterDim.x * cluster.clusterDim.y * cluster.clusterDim.z > 1) {
        memset(&a[na], 0, sizeof a[na]);
        a[na].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        a[na++].value = cluster;
    }
    l->nattr[l->n] = na;
    return NULL;
}

/* Reads into l the launches of g, the capture of one forward, walking its
 * nodes in the order of capture. Returns NULL, or why it cannot. */
static const char *read_launches(cli_cuda *d, CUgraph g, launches *l)
{
    CUgraphNode nodes[MAX_NODES], from[MAX_NODES], to[MAX_NODES];
    CUgraphEdgeData edge[MAX_NODES];
    size_t n = 0, ne = 0;
    CUresult r;
    if (!d->GraphKernelNodeGetParams)
        return "the CUDA driver lacks cuGraphKernelNodeGetParams_v2";
    if ((r = d->GraphGetNodes(g, NULL, &n)) != CUDA_SUCCESS)
        return cli_cuda_error(d, r, "cuGraphGetNodes");
    if (n > MAX_NODES)
        return "the capture of one forward holds more nodes than expected";
    if ((r = d->GraphGetNodes(g, nodes, &n)) != CUDA_SUCCESS)
        return cli_cuda_error(d, r, "cuGraphGetNodes");
    /* The edges say which launches were programmatic (PDL) and that the
     * nodes are listed in the order of capture. A driver without
     * cuGraphGetEdges_v2 (older than CUDA 12.3) cannot say: there the
     * kernels are launched without PDL, in the order cuGraphGetNodes lists
     * them (the order of creation). */
    if (d->GraphGetEdges) {
        if ((r = d->GraphGetEdges(g, NULL, NULL, NULL, &ne)) != CUDA_SUCCESS)
            return cli_cuda_error(d, r, "cuGraphGetEdges");
        if (ne > MAX_NODES)
            return "the capture of one forward holds more edges than expected";
        if ((r = d->GraphGetEdges(g, from, to, edge, &ne)) != CUDA_SUCCESS)
            return cli_cuda_error(d, r, "cuGraphGetEdges");
        for (size_t e = 0; e < ne; e++)
            if (node_index(nodes, n, from[e]) >= node_index(nodes, n, to[e]))
                return "cuGraphGetNodes does not list the nodes in the order of capture";
    }
    l->n = 0;
    for (size_t i = 0; i < n; i++) {
        CUgraphNodeType type;
        if ((r = d->GraphNodeGetType(nodes[i], &type)) != CUDA_SUCCESS)
            return cli_cuda_error(d, r, "cuGraphNodeGetType");
        /* A captured forward clears its GEMM's token flags with a memset
         * (it passes the one epoch a direct call never does); a direct
         * forward does not. Launched again without it, a GEMM that
         * quantizes its own tokens (actq=fused) publishes that same epoch
         * each time, so none of its CTAs waits forever; the next direct
         * forward publishes a fresh one. */
        if (type == CU_GRAPH_NODE_TYPE_MEMSET)
            continue;
        if (type != CU_GRAPH_NODE_TYPE_KERNEL)
            return "the capture of one forward holds a node that is neither a kernel nor a memset";
        if (l->n == MAX_LAUNCHES)
            return "the capture of one forward holds more kernels than expected";
        CUDA_KERNEL_NODE_PARAMS *k = &l->k[l->n];
        if ((r = d->GraphKernelNodeGetParams(nodes[i], k)) != CUDA_SUCCESS)
            return cli_cuda_error(d, r, "cuGraphKernelNodeGetParams");
        if (!k->func)
            return "a captured kernel node names no CUfunction";
        const char *why = launch_attributes(d, nodes[i], to, edge, ne, l);
        if (why)
            return why;
        l->n++;
    }
    return l->n ? NULL : "the capture of one forward holds no kernel";
}

/* Host cost of a cached forward call (first shape, the dispatch table's
 * variant) at one M: the whole call, and the driver launches it makes on
 * their own (launch_us < 0: not measured); the difference is qjit's
 * dispatch. */
typedef struct host_cost {
    long long M;                  /* 0: not measured */
    double forward_us, launch_us, dispatch_us;
    int launches;
} host_cost;

/* The host cost of the driver launches alone that one forward makes
 * (read_launches), on the legacy stream as the forward's, into h: their
 * output must equal a direct forward's bit for bit first; then 20 rounds,
 * each timing 100 forwards and 100 times their launches alone as
 * host_cost_us does, so that both see the same state of the machine:
 * medians of each and of their difference per round (the dispatch). Sets
 * h->launch_us to -1 (and says why) if the capture, the node walk or the
 * launches fail or differ. */
static void split_host_cost(bench *b, fwd_ud *f, long long N, host_cost *h)
{
    cli_cuda *d = b->d;
    size_t ybytes = (size_t)(f->M * N) * 2;
    unsigned char *direct = malloc(ybytes), *raw = malloc(ybytes);
    CUstream s = NULL;
    CUgraph g = NULL;
    launches l;
    memset(&l, 0, sizeof l);
    l.d = d;
    h->launch_us = -1;
    const char *why = "out of host memory";
    if (!direct || !raw || (why = capture_forwards(b, f, 1, direct, ybytes, &s, &g)) || (why = read_launches(d, g, &l)))
        goto out;
    if (!d->GraphGetEdges)
        fprintf(stderr, "qjit bench: the CUDA driver lacks cuGraphGetEdges_v2 (older than CUDA 12.3): a forward's "
                "launches alone are made without PDL\n");
    why = "the launches failed";
    if (d->MemsetD8(f->Y, 0xFF, ybytes) != CUDA_SUCCESS || do_launches(&l) || d->CtxSynchronize() != CUDA_SUCCESS ||
        d->MemcpyDtoH(raw, f->Y, ybytes) != CUDA_SUCCESS)
        goto out;
    why = "their output differs from a direct call's";
    if (memcmp(direct, raw, ybytes))
        goto out;
    double tf[20], tl[20], td[20];
    for (int rep = 0; rep < 20; rep++) {
        tf[rep] = enqueue_us(b, do_forward, f);
        tl[rep] = enqueue_us(b, do_launches, &l);
        td[rep] = tf[rep] - tl[rep];
    }
    h->forward_us = median20(tf);
    h->launch_us = median20(tl);
    h->dispatch_us = median20(td);
    h->launches = l.n;
out:
    if (h->launch_us < 0)
        fprintf(stderr, "qjit bench: M=%lld: the host cost of a forward's driver launches alone not measured: %s\n",
                f->M, why);
    /* The graph goes last: it holds the launches' arguments. */
    if (g)
        d->GraphDestroy(g);
    if (s)
        d->StreamDestroy(s);
    free(direct);
    free(raw);
}

static void measure_host_cost(bench *b, fwd_ud *f, long long N, host_cost *h)
{
    h->M = f->M;
    split_host_cost(b, f, N, h);
    if (h->launch_us < 0)    /* not split: the forward alone */
        h->forward_us = host_cost_us(b, do_forward, f);
}

/* "host cost of a cached forward call (M=1, first shape): 6.01 us = 5.60 us
 * in 2 driver launches + 0.41 us dispatch" (medians; the dispatch is the
 * median of the rounds' differences, so the three need not add up). Where
 * dispatch is within the noise it may come out negative ("- 0.05 us
 * dispatch"). */
static void print_host_cost(const host_cost *h)
{
    printf("host cost of a cached forward call (M=%lld, first shape): %.2f us", h->M, h->forward_us);
    double dispatch = h->dispatch_us;
    if (h->launch_us > 0)
        printf(" = %.2f us in %d driver launch%s %c %.2f us dispatch\n", h->launch_us, h->launches,
               h->launches == 1 ? "" : "es", dispatch < 0 ? '-' : '+', dispatch < 0 ? -dispatch : dispatch);
    else
        printf(" (its driver launches alone: not measured)\n");
}

/* The split of h as JSON fields named with suffix ("" or "_large"); null
 * where not measured. */
static void json_host_split(FILE *f, const char *suffix, const host_cost *h)
{
    if (h->launch_us > 0)
        fprintf(f, "\"launch_cost%s_us\": %.3f, \"dispatch_cost%s_us\": %.3f, \"launches%s\": %d", suffix,
                h->launch_us, suffix, h->dispatch_us, suffix, h->launches);
    else
        fprintf(f, "\"launch_cost%s_us\": null, \"dispatch_cost%s_us\": null, \"launches%s\": null", suffix, suffix,
                suffix);
}

float *bench_layer_weights(bench *b, long long N, long long K)
{
    float *W = malloc(sizeof(float) * (size_t)(N * K));
    if (W)
        cli_fill_normal(W, (size_t)(N * K), b->seed + (uint64_t)(N * 131 + K), 0.02f);
    return W;
}

void *bench_quantize(bench *b, qjit_scheme scheme, const float *W, long long N, long long K, int group, double rho,
                     const uint16_t *calib, size_t *bytes)
{
    /* A budget: the residual's blocks chosen as a user would, weighted by
     * calibration rows with the statistics of LLM activations. */
    qjit_quantize_options qo;
    qjit_quantize_options_init(&qo);
    qo.sparsity = rho;
    /* w4ax, w4ax-s: their INT8 channels chosen on the same calibration rows. */
    if (qa_two_part(scheme))
        qo.a8_fraction = b->a8;
    if (rho > 0 || qo.a8_fraction > 0) {
        qo.calib = calib;
        qo.calib_dtype = QJIT_DTYPE_F16;
        qo.calib_rows = QA_CALIB_ROWS;
    }
    void *blob = NULL;
    qjit_status st = QJIT_OK;
    if (!W || (st = qjit_packed_size_ex(b->ctx, scheme, group, N, K, &qo, bytes)) || !(blob = malloc(*bytes)) ||
        (st = qjit_quantize_weights_ex(b->ctx, scheme, group, W, QJIT_DTYPE_F32, N, K, &qo, blob, *bytes, bytes))) {
        fprintf(stderr, "qjit bench: cannot quantize %lldx%lld with %s: %s: %s\n", N, K, qjit_scheme_name(scheme),
                qjit_status_name(st ? st : QJIT_OUT_OF_MEMORY), st ? qjit_last_error(b->ctx) : "out of host memory");
        free(blob);
        return NULL;
    }
    return blob;
}

/* Checks, times and compares the layer `blob` (N x K, quantized with
 * `scheme`) at every M (with the dispatch table, or with `variant` forced).
 * si: the shape's index in the run. */
static void run_layer(bench *b, qjit_scheme scheme, int si, const void *blob, size_t bytes, long long N, long long K,
                      int group, double rho, const char *variant, const long long *ms, int nms, int first,
                      point *pts, int *npts, int *wrong, host_cost host[2], double *graph_us)
{
    qjit_linear *lin = NULL;
    qjit_linear_options lo;
    qjit_linear_options_init(&lo);
    lo.max_tokens = 4096;
    lo.variant = variant;
    lo.dtype = b->dtype;
    uint64_t seed = b->seed + (uint64_t)(N * 131 + K) + 7 * (uint64_t)scheme;
    qjit_status st = qjit_linear_create(b->ctx, blob, bytes, &lo, &lin);
    if (st) {
        fprintf(stderr, "qjit bench: %lldx%lld%s%s: %s: %s\n", N, K, variant ? " with " : "", variant ? variant : "",
                qjit_status_name(st), qjit_last_error(b->ctx));
        return;
    }
    qjit_residual_info ri;
    qjit_residual_info_init(&ri);
    qjit_weights_residual(b->ctx, blob, bytes, &ri);
    /* The 4-bit floor: the packed weight bytes over the measured copy
     * bandwidth (bytes read plus written per second). */
    qjit_weights_info wi;
    qjit_weights_inspect(b->ctx, blob, bytes, &wi);
    qjit_activation_info ai;    /* its activation parts: planes of sums to check */
    qjit_activation_info_init(&ai);
    qjit_weights_activation(b->ctx, blob, bytes, &ai);
    double floor_us = qb_floor_us((double)wi.payload_bytes, b->copy_gbs);
    for (int mi = 0; mi < nms && !g_stop; mi++) {
        long long M = ms[mi];
        point *p = &pts[*npts];
        memset(p, 0, sizeof *p);
        p->N = N; p->K = K; p->M = M;
        p->scheme = scheme;
        p->group = group;
        p->forced = variant != NULL;
        p->rho = rho;
        p->density = ri.density;
        qjit_linear_variant(lin, M, p->key, sizeof p->key);
        uint16_t *X = malloc(sizeof(uint16_t) * (size_t)(M * K));
        CUdeviceptr dX = 0, dY = 0;
        for (size_t i = 0; i < (size_t)(M * K); i++)
            X[i] = bench_token(b, &seed);
        if (b->d->MemAlloc(&dX, 2 * (size_t)(M * K)) || b->d->MemAlloc(&dY, 2 * (size_t)(M * N))) {
            fprintf(stderr, "qjit bench: out of device memory at M=%lld\n", M);
            free(X);
            continue;
        }
        b->d->MemcpyHtoD(dX, X, 2 * (size_t)(M * K));
        p->checked = bench_check_point(b, lin, blob, bytes, ai.parts, M, N, K, X, dX, 16);
        free(X);
        if (p->checked < 0) {
            (*wrong)++;
        } else {
            fwd_ud f = {lin, M, dX, dY};
            p->us = bench_time_calls(b, do_forward, &f);
            p->tok_us = time_tokens(b, lin, M, N, K, dX, dY);
            p->tops = qb_tops((double)M, (double)N, (double)K, p->us);
            p->floor_frac = floor_us / p->us;
            /* Host cost at M = 1, and at the first M past 64 (other
             * kernels: on sm_90a, the TMA pipe and its per-call map). */
            if (first && !variant && M == 1) {
                measure_host_cost(b, &f, N, &host[0]);
                *graph_us = graph_host_cost_us(b, &f, N);
            }
            if (first && !variant && M > 64 && !host[1].M)
                measure_host_cost(b, &f, N, &host[1]);
            run_peers(b, si, mi, M, N, K, p);
            double best = qb_best_peer(p->peer_us, NPEERS);
            printf("%-8s %3d %6lld %6lld %5lld %9.2f %8.2f %7.1f %6.2f %9.2f %9.2f %9.2f %7.2f %6d %5g%s\n",
                   qjit_scheme_name(scheme), group, N, K, M, p->us, p->tok_us, p->tops, p->floor_frac, p->peer_us[0],
                   p->peer_us[1], p->peer_us[2], best > 0 ? best / p->us : 0, p->checked, rho,
                   variant ? "  (forced)" : "");
            if (p->tok_us < 0) {
                (*wrong)++;
                p->tok_us = 0;
            }
            fflush(stdout);
            (*npts)++;
        }
        b->d->MemFree(dX);
        b->d->MemFree(dY);
    }
    qjit_linear_destroy(lin);
}

/* A cold compile of `key` into the empty folder `dir`, timed by a child
 * `qjit compile` that starts with the driver's compute cache off
 * (CUDA_CACHE_DISABLE=1): in this process the driver would serve a source
 * it has compiled before from ~/.nv/ComputeCache, and every variant of the
 * run has just been compiled. Returns the child's "total s", or -1. */
static double cold_compile_seconds(const char *key, const char *arch, const char *dir)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || strchr(key, '\'') || strchr(dir, '\'') || memchr(self, '\'', (size_t)n))
        return -1;
    self[n] = 0;
    char cmd[8192];
    if (snprintf(cmd, sizeof cmd, "CUDA_CACHE_DISABLE=1 '%s' compile '%s' --arch '%s' --cache-dir '%s' 2>/dev/null",
                 self, key, arch, dir) >= (int)sizeof cmd)
        return -1;
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[8192];
    double seconds = -1, gen;
    while (fgets(line, sizeof line, p))
        if (!strncmp(line, "compiled ", 9) && sscanf(line + 9, "%lf %lf", &gen, &seconds) != 2)
            seconds = -1;
    return pclose(p) == 0 ? seconds : -1;
}

/* Cold compile (empty cache folder, a child process, the driver's compute
 * cache off) and cache load (a fresh context here, same folder) of every
 * distinct variant the run used. */
static void compile_times(bench *b, const point *pts, int npts, const char *arch, FILE *json)
{
    printf("\n%9s %9s  %s\n", "cold s", "load ms",
           "variant (compiled into an empty cache by a child process, compute cache off; then loaded from it)");
    int first = 1;
    for (int i = 0; i < npts; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(pts[j].key, pts[i].key);
        if (seen)
            continue;
        char dir[] = "/tmp/qjit-bench-XXXXXX";
        if (!mkdtemp(dir))
            continue;
        double cold_s = cold_compile_seconds(pts[i].key, arch, dir);
        qjit_context *warm = cli_context(arch, dir);
        qjit_compile_info wi;
        memset(&wi, 0, sizeof wi);
        if (cold_s >= 0 && warm && qjit_compile(warm, pts[i].key, NULL, &wi) == QJIT_OK && wi.from_cache) {
            printf("%9.3f %9.2f  %s\n", cold_s, wi.total_seconds * 1e3, pts[i].key);
            if (json)
                fprintf(json, "%s  {\"variant\": \"%s\", \"cold_s\": %.4f, \"load_ms\": %.3f}", first ? "" : ",\n",
                        pts[i].key, cold_s, wi.total_seconds * 1e3);
            first = 0;
        } else {
            printf("%9s %9s  %s (the child compile failed)\n", "-", "-", pts[i].key);
        }
        if (warm)
            qjit_cache_clear(warm, NULL);
        qjit_context_destroy(warm);
        rmdir(dir);
    }
    (void)b;
}

/* The schemes of --scheme (names, aliases or "all"), checked before any
 * GPU work; w4a8-lqq alone if none is given. Returns the count, or -1 with
 * a message. */
static int parse_schemes(const char *text, qjit_scheme out[MAX_SCHEMES])
{
    static const qjit_scheme all[] = {QJIT_SCHEME_W4A8_LQQ, QJIT_SCHEME_W4A8_QOQ, QJIT_SCHEME_W4A8_IS,
                                      QJIT_SCHEME_W8A8, QJIT_SCHEME_W4A4};
    if (!text) {
        out[0] = QJIT_SCHEME_W4A8_LQQ;
        return 1;
    }
    if (!strcmp(text, "all")) {
        memcpy(out, all, sizeof all);
        return (int)(sizeof all / sizeof all[0]);
    }
    int n = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, ",");
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), p);
        qjit_scheme s;
        if (len == 0 || len >= sizeof name || qjit_scheme_from_name(name, &s) != QJIT_OK) {
            fprintf(stderr, "qjit bench: --scheme: '%.*s' is not a scheme (w4a8-lqq, w4a8-qoq, w4a8-is, w8a8, w4a4, "
                    "w4ax, w4ax-s, all)\n",
                    (int)len, p);
            return -1;
        }
        for (int i = 0; i < n; i++)
            if (out[i] == s) {
                fprintf(stderr, "qjit bench: --scheme: %s given twice\n", qjit_scheme_name(s));
                return -1;
            }
        if (n == MAX_SCHEMES)
            return -1;
        out[n++] = s;
        p += len;
        if (*p == ',')
            p++;
    }
    return n;
}

/* Geomean of a over b for the dispatched points of scheme s at M (m < 0:
 * every M) whose partner in `pts` has scheme t at the same shape and M;
 * *min gets the smallest ratio. ratio = partner.us / point.us (> 1: s is
 * faster). */
static double ratio_vs(const point *pts, int npts, qjit_scheme s, qjit_scheme t, long long m, double *min)
{
    double *r = calloc((size_t)npts + 1, sizeof *r);
    int n = 0;
    *min = 0;
    for (int i = 0; r && i < npts; i++) {
        if (pts[i].scheme != s || pts[i].forced || pts[i].rho > 0 || (m >= 0 && pts[i].M != m))
            continue;
        for (int j = 0; j < npts; j++)
            if (pts[j].scheme == t && !pts[j].forced && pts[j].rho == 0 && pts[j].N == pts[i].N && pts[j].K == pts[i].K &&
                pts[j].M == pts[i].M && pts[i].us > 0) {
                r[n] = pts[j].us / pts[i].us;
                if (*min == 0 || r[n] < *min)
                    *min = r[n];
                n++;
                break;
            }
    }
    double g = n ? qb_geomean(r, n) : 0;
    free(r);
    return g;
}

/* Does scheme s take budget rho at this group and shape? (A residual is
 * for the two-level 4-bit schemes with groups: the others run dense only.) */
static int takes_budget(qjit_context *ctx, qjit_scheme s, int group, long long N, long long K, double rho)
{
    qjit_quantize_options o;
    qjit_quantize_options_init(&o);
    o.sparsity = rho;
    size_t bytes;
    return qjit_packed_size_ex(ctx, s, group, N, K, &o, &bytes) == QJIT_OK;
}

/* Latency of scheme s's layers with budget rho over the dense ones (same
 * shape, M and variant): geomean and worst over every point, and per M. */
static void sparsity_summary(const point *pts, int npts, qjit_scheme s, double rho, const long long *ms, int nms)
{
    double *r = calloc((size_t)npts + 1, sizeof *r);
    for (int mi = -1; r && mi < nms; mi++) {
        int n = 0, over10 = 0;
        double worst = 0, density = 0;
        for (int i = 0; i < npts; i++) {
            if (pts[i].scheme != s || pts[i].rho != rho || (mi >= 0 && pts[i].M != ms[mi]))
                continue;
            for (int j = 0; j < npts; j++)
                if (pts[j].scheme == s && pts[j].rho == 0 && pts[j].forced == pts[i].forced && pts[j].N == pts[i].N &&
                    pts[j].K == pts[i].K && pts[j].M == pts[i].M && pts[j].us > 0 && pts[i].us > 0 &&
                    (pts[i].forced == 0 || !strcmp(strstr(pts[j].key, "tile="), strstr(pts[i].key, "tile=")))) {
                    r[n] = pts[i].us / pts[j].us;
                    worst = r[n] > worst ? r[n] : worst;
                    over10 += r[n] > 1.10;
                    density += pts[i].density;
                    n++;
                    break;
                }
        }
        if (!n)
            continue;
        if (mi < 0)
            printf("\nsparsity %s rho=%g (%.1f%% of blocks kept): latency over dense %+.1f%% geomean, worst %+.1f%%, "
                   "%d of %d points over +10%%\n", qjit_scheme_name(s), rho, 100 * density / n,
                   100 * (qb_geomean(r, n) - 1), 100 * (worst - 1), over10, n);
        else
            printf("  M=%-5lld %+.1f%% geomean, worst %+.1f%%\n", ms[mi], 100 * (qb_geomean(r, n) - 1),
                   100 * (worst - 1));
    }
    free(r);
}

/* The --variant rows against one another: per forced variant (its key) and
 * M, the geomean over the shapes of its rate as the GEMM alone (tokens
 * quantized before the call; the forward where that was not timed), that
 * rate's share of the wgmma peak, and its speed against the dispatch
 * table's kernel on the same points (> 1: the variant is faster). */
static void variant_summary(const point *pts, int npts, const long long *ms, int nms, double wgmma_peak)
{
    double *rate = calloc((size_t)npts + 1, sizeof *rate), *vs = calloc((size_t)npts + 1, sizeof *vs);
    int header = 0;
    for (int i = 0; rate && vs && i < npts; i++) {
        int first = pts[i].forced;
        for (int j = 0; first && j < i; j++)
            first = !(pts[j].forced && !strcmp(pts[j].key, pts[i].key));
        if (!first)
            continue;
        if (!header++)
            printf("\nforced variants (--variant): the GEMM alone (tokens in), geomean over the shapes; share of the wgmma "
                   "peak; against the dispatch table's kernel (table us / variant us, > 1: faster)\n");
        printf("  %s\n", pts[i].key);
        for (int mi = 0; mi < nms; mi++) {
            int n = 0, nv = 0;
            for (int j = 0; j < npts; j++) {
                if (!pts[j].forced || pts[j].M != ms[mi] || strcmp(pts[j].key, pts[i].key))
                    continue;
                const double us = pts[j].tok_us > 0 ? pts[j].tok_us : pts[j].us;
                if (us <= 0)
                    continue;
                rate[n++] = 2.0 * (double)pts[j].N * (double)pts[j].K * (double)pts[j].M / us / 1e6;
                for (int t = 0; t < npts; t++)
                    if (!pts[t].forced && pts[t].scheme == pts[j].scheme && pts[t].group == pts[j].group &&
                        pts[t].rho == pts[j].rho && pts[t].N == pts[j].N && pts[t].K == pts[j].K && pts[t].M == pts[j].M) {
                        const double tus = pts[j].tok_us > 0 ? pts[t].tok_us : pts[t].us;
                        if (tus > 0)
                            vs[nv++] = tus / us;
                        break;
                    }
            }
            if (!n)
                continue;
            char of_wgmma[16];
            const double tops = qb_geomean(rate, n);
            peak_fraction(of_wgmma, tops, wgmma_peak);
            printf("    M=%-5lld %6.0f TOPS = %s of the wgmma peak", ms[mi], tops, of_wgmma);
            if (nv)
                printf("; %.3fx the table's", qb_geomean(vs, nv));
            printf("\n");
        }
    }
    free(rate);
    free(vs);
}

/* May `path` be written: an existing file writable, or a new one in a
 * writable folder? 0, or -1 with the reason printed. */
static int check_output(const char *option, const char *path)
{
    if (!path)
        return 0;
    if (access(path, F_OK) == 0) {
        if (access(path, W_OK) == 0)
            return 0;
    } else {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash == dir)
            dir[1] = '\0';
        else if (slash)
            *slash = '\0';
        else
            snprintf(dir, sizeof dir, ".");
        if (access(dir, W_OK) == 0)
            return 0;
    }
    fprintf(stderr, "qjit bench: %s '%s' cannot be written: %s\n", option, path, strerror(errno));
    return -1;
}

/* The values of the options, checked before any GPU work: the group, every
 * shape with every scheme, every --variant key, the output paths. 0, or -1
 * with the reason printed. */
static int check_values(const qb_bench_args *a, const qjit_scheme *schemes, int nschemes)
{
    if (a->group != 0 && a->group % 64 != 0) {
        fprintf(stderr, "qjit bench: --group %d: a group is 0 (per channel) or a multiple of 64\n", a->group);
        return -1;
    }
    for (int c = 0; c < nschemes; c++) {
        int group = cli_scheme_group(schemes[c], a->group, (const long long (*)[2])a->shapes, a->nshapes);
        for (int i = 0; i < a->nshapes; i++) {
            size_t bytes;
            if (qjit_packed_size(schemes[c], group, a->shapes[i][0], a->shapes[i][1], &bytes) != QJIT_OK) {
                fprintf(stderr, "qjit bench: shape %lldx%lld cannot be packed with %s and group %d (N must be a "
                        "multiple of 16, K of 64 and of the group)\n", a->shapes[i][0], a->shapes[i][1],
                        qjit_scheme_name(schemes[c]), group);
                return -1;
            }
        }
    }
    if (a->nvariants) {
        /* Fields and values only: the GPU's target fills a missing arch later. */
        qjit_context *ctx = cli_context("sm_90a", NULL);
        if (!ctx)
            return -1;
        /* A variant naming no budget takes each layer's (dispatch fills it
         * in), so it is checked as a sparse key when the run has budgets:
         * sparse-only fields (rslots) are then accepted. */
        char canon[1024], check[1024];
        double rho = a->sparsity[a->nsparsity - 1];
        for (int v = 0; v < a->nvariants; v++) {
            const char *key = a->variants[v];
            if (rho > 0 && !strstr(key, "sparsity=") && !strstr(key, "rho=")) {
                snprintf(check, sizeof check, "sparsity=%.6g;%s", rho, key);
                key = check;
            }
            if (qjit_key_canonicalize(ctx, key, canon, sizeof canon) != QJIT_OK) {
                fprintf(stderr, "qjit bench: --variant '%s': %s\n", a->variants[v], qjit_last_error(ctx));
                qjit_context_destroy(ctx);
                return -1;
            }
        }
        qjit_context_destroy(ctx);
    }
    return check_output("--csv", a->csv_path) || check_output("--json", a->json_path) ? -1 : 0;
}

int cmd_bench(int argc, char **argv)
{
    /* Every option is checked before the GPU is touched: a typo costs
     * nothing and runs nothing. */
    qb_bench_args args;
    char perr[1024];
    if (qb_parse_bench_args(argc, argv, &args, perr, sizeof perr)) {
        fprintf(stderr, "qjit bench: %s\n%s", perr, usage);
        return 2;
    }
    if (args.help) {
        fputs(usage, stdout);
        return 0;
    }
    qjit_scheme schemes[MAX_SCHEMES];
    int nschemes = parse_schemes(args.schemes, schemes);
    if (nschemes < 1 || check_values(&args, schemes, nschemes))
        return 2;
    long long (*shapes)[2] = args.shapes, *ms = args.ms;
    int nshapes = args.nshapes, nms = args.nms, nvariants = args.nvariants;
    const char *const *variants = args.variants;
    const char *csv_path = args.csv_path, *json_path = args.json_path;
    bench b;
    memset(&b, 0, sizeof b);
    b.reps = args.reps;
    b.seed = args.seed;
    b.a8 = args.a8;
    b.dtype = args.bf16 ? QJIT_DTYPE_BF16 : QJIT_DTYPE_F16;
    b.ctx = cli_context(NULL, NULL);
    if (!b.ctx)
        return 1;
    char arch[16];
    cli_cuda cu;
    memset(&cu, 0, sizeof cu);
    b.d = &cu;
    qjit_status st = cli_gpu(b.ctx, &cu, arch);
    if (st) {
        int rc = cli_fail_because(st, "bench (it needs a GPU)", cu.error);
        cli_cuda_close(&cu);
        qjit_context_destroy(b.ctx);
        return rc;
    }
    char err[256] = "";
    if (args.peers && qb_blas_open(&b.blas, err, sizeof err)) {
        fprintf(stderr, "qjit bench: cuBLASLt peers unavailable: %s\n", err);
        b.blas = NULL;
    }
    b.peer_cache = calloc(QB_MAX_SHAPES, sizeof *b.peer_cache);
    b.peer_done = calloc(QB_MAX_SHAPES, sizeof *b.peer_done);
    b.flush_bytes = (size_t)256 << 20;
    if (!b.peer_cache || !b.peer_done || b.d->MemAlloc(&b.flush, b.flush_bytes) || b.d->EventCreate(&b.e0, 0) ||
        b.d->EventCreate(&b.e1, 0) || measure_copy(&b)) {
        fprintf(stderr, "qjit bench: device setup failed\n");
        return 1;
    }
    /* Without the peers (--no-peers) there is no cuBLAS to measure it with. */
    b.int8_peak_tops = b.blas ? int8_peak(&b) : 0;
    char peak[64] = "not measured (--no-peers)";
    if (b.blas)
        snprintf(peak, sizeof peak, "%.0f TOPS (8192^3)", b.int8_peak_tops);
    /* The tensor cores' own ceiling, which no GEMM's loads or epilogue lower. */
    char why[256], wgmma_peak[320];
    b.wgmma_peak_tops = bench_wgmma_peak(&b, why, sizeof why);
    if (b.wgmma_peak_tops > 0)
        snprintf(wgmma_peak, sizeof wgmma_peak, "%.0f TOPS (m64n256k32 loop)", b.wgmma_peak_tops);
    else
        snprintf(wgmma_peak, sizeof wgmma_peak, "not measured (%s)", why);
    printf("device: %s (%s, %d SMs); copy bandwidth %.0f GB/s (read+write); cuBLAS INT8 peak %s; "
           "wgmma INT8 peak %s; L2 flushed before every call; median of %d; %s layers\n", b.d->name, arch,
           b.d->sm_count, b.copy_gbs, peak, wgmma_peak, b.reps, b.dtype == QJIT_DTYPE_BF16 ? "BF16" : "FP16");
    printf("peers: %s\n\n", b.blas ? "cublas-bf16, cublas-int8 (int32 out), cublas-fp8 (e4m3, bf16 out)" : "none");
    if (args.layers > 0) {
        int wrong = bench_stack(&b, &args, schemes, nschemes);
        qb_blas_close(b.blas);
        b.d->MemFree(b.flush);
        free(b.peer_cache);
        free(b.peer_done);
        qjit_context_destroy(b.ctx);
        cli_cuda_close(&cu);
        return wrong ? 1 : 0;
    }

    point *pts = calloc((size_t)(nschemes * nshapes * nms * (1 + nvariants) * args.nsparsity), sizeof *pts);
    int npts = 0, wrong = 0;
    host_cost host[2];            /* at M = 1, and at the first M past 64 */
    memset(host, 0, sizeof host);
    double graph_us = 0;
    printf("%-8s %3s %6s %6s %5s %9s %8s %7s %6s %9s %9s %9s %7s %6s %5s\n", "scheme", "g", "N", "K", "M", "qjit us",
           "tok us", "TOPS", "floor", "bf16 us", "int8 us", "fp8 us", "best x", "rows", "rho");
    g_stop = 0;
    void (*old_int)(int) = signal(SIGINT, on_stop), (*old_term)(int) = signal(SIGTERM, on_stop);
    for (int s = 0; s < nshapes && !g_stop; s++) {
        float *W = bench_layer_weights(&b, shapes[s][0], shapes[s][1]);
        /* Calibration rows for the budgets' residual blocks and two-part layers' INT8 channels. */
        int need_calib = args.nsparsity > 1;
        for (int c = 0; c < nschemes; c++)
            need_calib |= qa_two_part(schemes[c]) && args.a8 > 0;
        uint16_t *calib = need_calib ? malloc(sizeof(uint16_t) * QA_CALIB_ROWS * (size_t)shapes[s][1]) : NULL;
        if (!W || (need_calib && !calib))
            fprintf(stderr, "qjit bench: out of host memory for the %lldx%lld layer\n", shapes[s][0], shapes[s][1]);
        else if (calib)
            qa_gen_calibration(calib, QA_CALIB_ROWS, shapes[s][1], b.seed + (uint64_t)s);
        for (int c = 0; c < nschemes && W && (calib || !need_calib) && !g_stop; c++) {
            int group = cli_scheme_group(schemes[c], args.group, (const long long (*)[2])shapes, nshapes);
            for (int r = 0; r < args.nsparsity && !g_stop; r++) {
                if (r > 0 && !takes_budget(b.ctx, schemes[c], group, shapes[s][0], shapes[s][1], args.sparsity[r]))
                    continue;
                /* Quantized once for the table's row and every forced
                 * variant's (a sparse layer's block choice takes seconds). */
                size_t bytes = 0;
                void *blob = bench_quantize(&b, schemes[c], W, shapes[s][0], shapes[s][1], group, args.sparsity[r],
                                            calib, &bytes);
                for (int v = -1; v < nvariants && blob && !g_stop; v++)
                    run_layer(&b, schemes[c], s, blob, bytes, shapes[s][0], shapes[s][1], group, args.sparsity[r],
                              v < 0 ? NULL : variants[v], ms, nms, c == 0 && s == 0 && r == 0, pts, &npts, &wrong,
                              host, &graph_us);
                free(blob);
            }
        }
        free(W);
        free(calib);
    }
    const int stopped = g_stop;
    signal(SIGINT, old_int);
    signal(SIGTERM, old_term);
    if (stopped)
        printf("\ninterrupted: the summary and files cover the %d point(s) timed before the signal\n", npts);

    /* Summary: per scheme, speedup over the best peer (geomean, minimum, per M). */
    double *sp = calloc((size_t)npts + 1, sizeof *sp);
    double *v = calloc((size_t)npts + 1, sizeof *v), *fl = calloc((size_t)npts + 1, sizeof *fl);
    double *f8 = calloc((size_t)npts + 1, sizeof *f8);
    for (int i = 0; i < npts; i++) {
        double best = qb_best_peer(pts[i].peer_us, NPEERS);
        sp[i] = best > 0 && !pts[i].forced && pts[i].rho == 0 ? best / pts[i].us : 0;
    }
    for (int c = 0; c < nschemes && v && fl && f8; c++) {
        int n = 0;
        double minsp = 0;
        for (int i = 0; i < npts; i++)
            if (pts[i].scheme == schemes[c] && sp[i] > 0) {
                v[n++] = sp[i];
                if (minsp == 0 || sp[i] < minsp)
                    minsp = sp[i];
            }
        const int peers = n > 0;    /* 0: no peer timed (--no-peers): no speedups to give */
        if (peers)
            printf("\nsummary %s: geomean speedup over the best cuBLAS path %.2fx (min %.2fx) over %d points\n",
                   qjit_scheme_name(schemes[c]), qb_geomean(v, n), minsp, n);
        else
            printf("\nsummary %s: no cuBLAS peer timed (--no-peers), so no speedups\n", qjit_scheme_name(schemes[c]));
        for (int mi = 0; mi < nms; mi++) {
            n = 0;
            double mmin = 0;
            for (int i = 0; i < npts; i++)
                if (pts[i].scheme == schemes[c] && pts[i].M == ms[mi] && !pts[i].forced && pts[i].rho == 0) {
                    v[n] = sp[i];
                    fl[n] = pts[i].floor_frac;
                    f8[n] = pts[i].peer_us[QB_FP8] > 0 ? pts[i].peer_us[QB_FP8] / pts[i].us : 0;
                    if (sp[i] > 0 && (mmin == 0 || sp[i] < mmin))
                        mmin = sp[i];
                    n++;
                }
            if (n && peers)
                printf("  M=%-5lld geomean: %.2fx best cuBLAS (min %.2fx), %.2fx cuBLAS FP8, %.2f of the weight-bytes "
                       "floor\n", ms[mi], qb_geomean(v, n), mmin, qb_geomean(f8, n), qb_geomean(fl, n));
            else if (n)
                printf("  M=%-5lld geomean: %.2f of the weight-bytes floor\n", ms[mi], qb_geomean(fl, n));
            /* The same on tokens quantized before the call, as the peers
             * take theirs. */
            n = 0;
            mmin = 0;
            for (int i = 0; i < npts; i++)
                if (pts[i].scheme == schemes[c] && pts[i].M == ms[mi] && !pts[i].forced && pts[i].rho == 0 &&
                    pts[i].tok_us > 0) {
                    double best = qb_best_peer(pts[i].peer_us, NPEERS);
                    v[n] = best > 0 ? best / pts[i].tok_us : 0;
                    fl[n] = pts[i].floor_frac * pts[i].us / pts[i].tok_us;
                    f8[n] = pts[i].peer_us[QB_FP8] > 0 ? pts[i].peer_us[QB_FP8] / pts[i].tok_us : 0;
                    if (v[n] > 0 && (mmin == 0 || v[n] < mmin))
                        mmin = v[n];
                    n++;
                }
            if (n && peers)
                printf("  %-7s tokens in: %.2fx best cuBLAS (min %.2fx), %.2fx cuBLAS FP8, %.2f of the floor\n", "",
                       qb_geomean(v, n), mmin, qb_geomean(f8, n), qb_geomean(fl, n));
            else if (n)
                printf("  %-7s tokens in: %.2f of the floor\n", "", qb_geomean(fl, n));
        }
    }
    /* Each scheme against w4a8-lqq: the price (or gain) of its arithmetic. */
    int have_lqq = 0;
    for (int c = 0; c < nschemes; c++)
        have_lqq |= schemes[c] == QJIT_SCHEME_W4A8_LQQ;
    for (int c = 0; c < nschemes && have_lqq; c++) {
        if (schemes[c] == QJIT_SCHEME_W4A8_LQQ)
            continue;
        double mn, g = ratio_vs(pts, npts, schemes[c], QJIT_SCHEME_W4A8_LQQ, -1, &mn);
        printf("\n%s against w4a8-lqq (lqq us / %s us; > 1: faster): geomean %.3f, min %.3f\n",
               qjit_scheme_name(schemes[c]), qjit_scheme_name(schemes[c]), g, mn);
        for (int mi = 0; mi < nms; mi++) {
            g = ratio_vs(pts, npts, schemes[c], QJIT_SCHEME_W4A8_LQQ, ms[mi], &mn);
            if (g > 0)
                printf("  M=%-5lld geomean %.3f, min %.3f\n", ms[mi], g, mn);
        }
    }
    /* w4ax and w4ax-s against w4a4: what their INT8 blocks cost (w4ax's two
     * sums, the activation kernel's gather). */
    int have_w4a4 = 0;
    for (int c = 0; c < nschemes; c++)
        have_w4a4 |= schemes[c] == QJIT_SCHEME_W4A4;
    for (int c = 0; c < nschemes && have_w4a4; c++) {
        if (!qa_two_part(schemes[c]))
            continue;
        const char *name = qjit_scheme_name(schemes[c]);
        double mn, g = ratio_vs(pts, npts, schemes[c], QJIT_SCHEME_W4A4, -1, &mn);
        printf("\n%s against w4a4 (w4a4 us / %s us; > 1: faster): geomean %.3f, min %.3f\n", name, name, g, mn);
        for (int mi = 0; mi < nms; mi++) {
            g = ratio_vs(pts, npts, schemes[c], QJIT_SCHEME_W4A4, ms[mi], &mn);
            if (g > 0)
                printf("  M=%-5lld geomean %.3f, min %.3f\n", ms[mi], g, mn);
        }
    }
    /* w8a8 is cuBLAS INT8's arithmetic plus an epilogue: against it, and
     * against the INT8 tensor cores' two measured ceilings (cuBLAS's, the
     * wgmma loop's). */
    for (int c = 0; c < nschemes; c++) {
        if (schemes[c] != QJIT_SCHEME_W8A8)
            continue;
        printf("\nw8a8 against cuBLAS INT8 (int8 us / w8a8 us):\n");
        for (int mi = 0; mi < nms; mi++) {
            int n = 0, nt = 0;
            double mmin = 0, tmin = 0, tops = 0;
            for (int i = 0; i < npts; i++)
                if (pts[i].scheme == QJIT_SCHEME_W8A8 && pts[i].M == ms[mi] && !pts[i].forced &&
                    pts[i].peer_us[QB_INT8] > 0) {
                    v[n] = pts[i].peer_us[QB_INT8] / pts[i].us;
                    if (mmin == 0 || v[n] < mmin)
                        mmin = v[n];
                    tops = tops > pts[i].tops ? tops : pts[i].tops;
                    n++;
                    if (pts[i].tok_us > 0) {   /* tokens quantized before the call, as cuBLAS takes them */
                        fl[nt] = pts[i].peer_us[QB_INT8] / pts[i].tok_us;
                        tmin = tmin == 0 || fl[nt] < tmin ? fl[nt] : tmin;
                        nt++;
                    }
                }
            if (n) {
                char of_cublas[16], of_wgmma[16];
                peak_fraction(of_cublas, tops, b.int8_peak_tops);
                peak_fraction(of_wgmma, tops, b.wgmma_peak_tops);
                printf("  M=%-5lld geomean %.3f, min %.3f; best %.0f TOPS = %s of the cuBLAS INT8 peak, %s of the "
                       "wgmma peak\n", ms[mi], qb_geomean(v, n), mmin, tops, of_cublas, of_wgmma);
            }
            if (nt)
                printf("  %-7s tokens in: geomean %.3f, min %.3f\n", "", qb_geomean(fl, nt), tmin);
        }
    }
    variant_summary(pts, npts, ms, nms, b.wgmma_peak_tops);
    for (int c = 0; c < nschemes; c++)
        for (int r = 1; r < args.nsparsity; r++)
            sparsity_summary(pts, npts, schemes[c], args.sparsity[r], ms, nms);
    free(v);
    free(fl);
    free(f8);
    printf("\n");
    if (host[0].forward_us > 0)
        print_host_cost(&host[0]);
    else
        printf("host cost of a cached forward call: not measured (needs M = 1 in --m)\n");
    if (host[1].forward_us > 0)
        print_host_cost(&host[1]);
    if (graph_us > 0)
        printf("host cost per forward captured in a CUDA graph of %d (M=1, first shape): %.3f us\n", GRAPH_CALLS,
               graph_us);
    if (wrong)
        printf("%d point(s) gave WRONG results and were not timed\n", wrong);

    if (csv_path) {
        FILE *f = fopen(csv_path, "w");
        if (f) {
            fprintf(f, "N,K,M,qjit_us,tops,floor_frac,cublas_bf16_us,cublas_int8_us,cublas_fp8_us,speedup_best,variant,"
                       "forced,scheme,group,sparsity,density,tokens_us\n");
            for (int i = 0; i < npts; i++)
                fprintf(f, "%lld,%lld,%lld,%.3f,%.2f,%.3f,%.3f,%.3f,%.3f,%.3f,%s,%d,%s,%d,%g,%.6f,%.3f\n", pts[i].N,
                        pts[i].K, pts[i].M, pts[i].us, pts[i].tops, pts[i].floor_frac, pts[i].peer_us[0],
                        pts[i].peer_us[1], pts[i].peer_us[2], sp[i], pts[i].key, pts[i].forced,
                        qjit_scheme_name(pts[i].scheme), pts[i].group, pts[i].rho, pts[i].density, pts[i].tok_us);
            fclose(f);
        }
    }
    if (!json_path && !stopped)
        compile_times(&b, pts, npts, arch, NULL);
    if (json_path) {
        FILE *f = fopen(json_path, "w");
        if (f) {
            fprintf(f, "{\"device\": \"%s\", \"arch\": \"%s\", \"copy_gbs\": %.1f, \"int8_peak_tops\": %.1f, "
                       "\"wgmma_peak_tops\": %.1f, \"reps\": %d, \"host_cost_us\": %.3f, ",
                    b.d->name, arch, b.copy_gbs, b.int8_peak_tops, b.wgmma_peak_tops, b.reps, host[0].forward_us);
            json_host_split(f, "", &host[0]);
            fprintf(f, ",\n \"host_cost_large_m\": %lld, \"host_cost_large_us\": %.3f, ", host[1].M,
                    host[1].forward_us);
            json_host_split(f, "_large", &host[1]);
            fprintf(f, ", \"graph_host_cost_us\": %.3f,\n \"points\": [\n", graph_us > 0 ? graph_us : 0);
            for (int i = 0; i < npts; i++)
                fprintf(f, "  {\"scheme\": \"%s\", \"group\": %d, \"N\": %lld, \"K\": %lld, \"M\": %lld, "
                           "\"qjit_us\": %.3f, \"tops\": %.2f, \"floor_frac\": %.3f, \"cublas_bf16_us\": %.3f, "
                           "\"cublas_int8_us\": %.3f, \"cublas_fp8_us\": %.3f, \"speedup_best\": %.3f, "
                           "\"variant\": \"%s\", \"forced\": %d, \"sparsity\": %g, \"density\": %.6f, \"tokens_us\": %.3f}%s\n",
                        qjit_scheme_name(pts[i].scheme), pts[i].group, pts[i].N, pts[i].K, pts[i].M, pts[i].us,
                        pts[i].tops, pts[i].floor_frac, pts[i].peer_us[0], pts[i].peer_us[1], pts[i].peer_us[2], sp[i],
                        pts[i].key, pts[i].forced, pts[i].rho, pts[i].density, pts[i].tok_us, i + 1 < npts ? "," : "");
            fprintf(f, "],\n \"compile\": [\n");
            if (!stopped)
                compile_times(&b, pts, npts, arch, f);
            fprintf(f, "\n]}\n");
            fclose(f);
        }
    }
    free(sp);
    free(pts);
    free(b.peer_cache);
    free(b.peer_done);
    qb_blas_close(b.blas);
    b.d->MemFree(b.flush);
    qjit_context_destroy(b.ctx);
    cli_cuda_close(&cu);
    return wrong ? 1 : 0;
}
