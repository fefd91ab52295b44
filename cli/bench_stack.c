/* bench_stack.c -- `qjit bench --layers L`: what an engine sees of a model's
 * step. The shape list is one layer's linears; L layers of them, each with
 * its own weights in its own device memory (so no layer's weights are in L2
 * when it runs), are called in order, M tokens each, and the whole step is
 * timed as one CUDA graph replayed and as eager calls, for:
 *   - each scheme on tokens quantized before the call (the GEMMs alone, the
 *     way an engine fusing the quantization upstream runs them, and the way
 *     the cuBLAS peers take their inputs), and quantizing inside (forward);
 *   - the cuBLAS peers (FP8, INT8, BF16) on the same step, same graph form.
 * Before any timing, each shape's kernel at each M is checked against the
 * CPU reference (INT32 accumulators, exact, on sampled rows) and every form
 * of the step (eager, replayed; tokens in, forward) must write the same
 * outputs bit for bit. The floor is the step's weight bytes over the
 * measured copy bandwidth. */
#define _GNU_SOURCE
#include "bench.h"
#include "cli.h"
#include "accuracy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STACK_ROWS 4      /* rows per shape and M checked against the CPU reference */

/* Enqueues one whole step on stream s; 0 on success. */
typedef int (*step_fn)(void *ud, CUstream s);

/* Captures one step as `fn` on s into a graph and instantiates it; 0 on
 * success. *g and *ge are set (or left NULL) for the caller to destroy. */
static int capture_step(const cli_cuda *d, CUstream s, step_fn fn, void *ud, CUgraph *g, CUgraphExec *ge)
{
    if (d->StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) != CUDA_SUCCESS)
        return -1;
    int bad = fn(ud, s);
    bad |= d->StreamEndCapture(s, g) != CUDA_SUCCESS;
    return bad || d->GraphInstantiate(ge, *g, 0) != CUDA_SUCCESS ? -1 : 0;
}

/* Times a step as eager calls and as one captured graph replayed: median of
 * b->reps of each, the L2 flushed before each (outside the timed span).
 * The graph's outputs are those of the eager step, checked by the caller. */
static int time_step(bench *b, CUstream s, step_fn fn, void *ud, double *graph_us, double *eager_us)
{
    const cli_cuda *d = b->d;
    float *t = malloc(sizeof(float) * (size_t)b->reps);
    CUgraph g = NULL;
    CUgraphExec ge = NULL;
    int rc = -1;
    *graph_us = *eager_us = 0;
    if (!t)
        return -1;
    for (int form = 0; form < 2; form++) {      /* 0: eager, 1: graph */
        if (form == 1 && capture_step(d, s, fn, ud, &g, &ge)) {
            fprintf(stderr, "qjit bench: the step could not be captured in a CUDA graph\n");
            goto out;
        }
        for (int i = -2; i < b->reps; i++) {     /* two untimed */
            d->MemsetD8Async(b->flush, (unsigned char)i, b->flush_bytes, s);
            d->EventRecord(b->e0, s);
            if (form ? d->GraphLaunch(ge, s) != CUDA_SUCCESS : fn(ud, s) != 0)
                goto out;
            d->EventRecord(b->e1, s);
            if (d->EventSynchronize(b->e1) != CUDA_SUCCESS)
                goto out;
            if (i >= 0)
                d->EventElapsedTime(&t[i], b->e0, b->e1);
        }
        qsort(t, (size_t)b->reps, sizeof *t, bench_cmp_float);
        *(form ? graph_us : eager_us) = t[b->reps / 2] * 1000.0;
    }
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "qjit bench: a step failed to run\n");
    if (ge)
        d->GraphExecDestroy(ge);
    if (g)
        d->GraphDestroy(g);
    free(t);
    return rc;
}

/* One step's buffers per shape, shared by its L layers: inputs, quantized
 * tokens, outputs (what an engine would hold for its activations). */
typedef struct stack {
    bench *b;
    int L, S;
    long long M;
    const long long (*shapes)[2];
    qjit_linear **lin;            /* L x S, layer-major; NULL for the peers */
    qb_gemm **peer;               /* L x S; NULL for qjit */
    CUdeviceptr X[QB_MAX_SHAPES], Y[QB_MAX_SHAPES];
    qjit_tokens tok[QB_MAX_SHAPES];
} stack;

/* An empty step of a's shapes and layers; returns the largest M of the run. */
static long long stack_init(stack *k, bench *b, const qb_bench_args *a)
{
    memset(k, 0, sizeof *k);
    k->b = b;
    k->L = a->layers;
    k->S = a->nshapes;
    k->shapes = (const long long (*)[2])a->shapes;
    long long maxm = 0;
    for (int i = 0; i < a->nms; i++)
        maxm = a->ms[i] > maxm ? a->ms[i] : maxm;
    return maxm;
}

static int step_forward(void *ud, CUstream s)
{
    stack *k = ud;
    for (int l = 0; l < k->L; l++)
        for (int i = 0; i < k->S; i++)
            if (qjit_linear_forward(k->lin[l * k->S + i], k->M, (void *)k->X[i], (void *)k->Y[i], NULL, 0, s))
                return 1;
    return 0;
}

static int step_tokens(void *ud, CUstream s)
{
    stack *k = ud;
    for (int l = 0; l < k->L; l++)
        for (int i = 0; i < k->S; i++)
            if (qjit_linear_forward_tokens(k->lin[l * k->S + i], k->M, &k->tok[i], (void *)k->Y[i], NULL, 0, s))
                return 1;
    return 0;
}

static int step_peer(void *ud, CUstream s)
{
    stack *k = ud;
    char err[512];
    for (int l = 0; l < k->L; l++)
        for (int i = 0; i < k->S; i++)
            if (qb_gemm_run(k->peer[l * k->S + i], s, err, sizeof err)) {
                fprintf(stderr, "qjit bench: %s\n", err);
                return 1;
            }
    return 0;
}

/* The outputs of every shape (M x N 16-bit values each) into one host buffer. */
static int read_outputs(stack *k, unsigned char *host)
{
    size_t off = 0;
    for (int i = 0; i < k->S; i++) {
        size_t n = 2 * (size_t)(k->M * k->shapes[i][0]);
        if (k->b->d->MemcpyDtoH(host + off, k->Y[i], n) != CUDA_SUCCESS)
            return -1;
        off += n;
    }
    return 0;
}

/* Runs the step once as `fn`, eagerly or replayed from a graph, on outputs
 * filled with 0xFF first, and reads the outputs into `out`. */
static int run_once(stack *k, CUstream s, step_fn fn, int graph, unsigned char *out, const char *what)
{
    const cli_cuda *d = k->b->d;
    CUgraph g = NULL;
    CUgraphExec ge = NULL;
    int bad = 0;
    for (int i = 0; i < k->S; i++)
        bad |= d->MemsetD8Async(k->Y[i], 0xFF, 2 * (size_t)(k->M * k->shapes[i][0]), s) != CUDA_SUCCESS;
    if (graph) {
        bad |= capture_step(d, s, fn, k, &g, &ge) || d->GraphLaunch(ge, s) != CUDA_SUCCESS;
    } else {
        bad |= fn(k, s);
    }
    bad |= d->StreamSynchronize(s) != CUDA_SUCCESS;
    if (ge)
        d->GraphExecDestroy(ge);
    if (g)
        d->GraphDestroy(g);
    if (bad || read_outputs(k, out)) {
        fprintf(stderr, "qjit bench: M=%lld: the step (%s, %s) failed: %s\n", k->M, what, graph ? "graph" : "eager",
                qjit_last_error(k->b->ctx));
        return -1;
    }
    return 0;
}

/* The step as `fn`, eager and replayed, must write `want` bit for bit. */
static int same_outputs(stack *k, CUstream s, step_fn fn, const unsigned char *want, unsigned char *got, size_t bytes,
                        const char *what)
{
    for (int graph = 0; graph < 2; graph++) {
        if (run_once(k, s, fn, graph, got, what))
            return -1;
        if (memcmp(want, got, bytes)) {
            fprintf(stderr, "qjit bench: M=%lld: the step's outputs (%s, %s) differ from forward's, eager\n", k->M,
                    what, graph ? "graph" : "eager");
            return -1;
        }
    }
    return 0;
}

/* One printed row: a path through the step at one M. */
typedef struct row {
    char path[40];
    int peer;                     /* qb_kind, or -1 for a qjit scheme */
    qjit_scheme scheme;
    int tokens;                   /* qjit: 1 tokens in, 0 forward */
    long long M;
    double graph_us, eager_us;
    double floor_us;              /* qjit: the scheme's weight bytes over the copy bandwidth */
    int rows;                     /* qjit: rows checked exact per shape (the fewest) */
} row;

static void print_row(const row *r)
{
    printf("%-22s %5lld %10.1f %10.1f", r->path, r->M, r->graph_us, r->eager_us);
    if (r->peer < 0)
        printf(" %9.1f %6.2f %5d\n", r->floor_us, r->graph_us > 0 ? r->floor_us / r->graph_us : 0, r->rows);
    else
        printf(" %9s %6s %5s\n", "-", "-", "-");
    fflush(stdout);
}

/* Device memory free now, in bytes (0 if unknown). */
static size_t free_bytes(bench *b)
{
    size_t fr = 0, total = 0;
    return b->d->MemGetInfo(&fr, &total) == CUDA_SUCCESS ? fr : 0;
}

/* The peer `kind` on the step at every M: its L x S weight matrices in one
 * allocation (random values), inputs and outputs per shape for the largest M. */
static void run_peer(bench *b, const qb_bench_args *a, CUstream s, qb_kind kind, row *rows, int *nrows)
{
    const int L = a->layers, S = a->nshapes;
    const size_t in = qb_in_bytes(kind), out = qb_out_bytes(kind), wsb = (size_t)32 << 20;
    stack k;
    const long long maxm = stack_init(&k, b, a);
    size_t wbytes = 0, per[QB_MAX_SHAPES];
    for (int i = 0; i < S; i++) {
        per[i] = (size_t)(a->shapes[i][0] * a->shapes[i][1]) * in;
        wbytes += per[i] * (size_t)L;
    }
    CUdeviceptr W = 0, ws = 0;
    uint64_t seed = b->seed + 1000 + (uint64_t)kind;
    size_t fr = free_bytes(b);
    if (fr && wbytes + ((size_t)1 << 30) > fr) {
        printf("%-22s not run: its %.1f GB of weights do not fit in the %.1f GB free\n", qb_kind_name(kind),
               (double)wbytes / 1e9, (double)fr / 1e9);
        return;
    }
    k.peer = calloc((size_t)(L * S), sizeof *k.peer);
    int bad = !k.peer || b->d->MemAlloc(&W, wbytes) || b->d->MemAlloc(&ws, wsb) ||
              bench_fill_device(b, W, wbytes, kind, &seed);
    for (int i = 0; i < S && !bad; i++)
        bad = b->d->MemAlloc(&k.X[i], (size_t)(maxm * a->shapes[i][1]) * in) ||
              b->d->MemAlloc(&k.Y[i], (size_t)(maxm * a->shapes[i][0]) * out) ||
              bench_fill_device(b, k.X[i], (size_t)(maxm * a->shapes[i][1]) * in, kind, &seed);
    if (bad)
        printf("%-22s not run: out of memory\n", qb_kind_name(kind));
    for (int mi = 0; mi < a->nms && !bad; mi++) {
        k.M = a->ms[mi];
        char err[512] = "";
        int ok = 1;
        size_t off = 0;
        for (int l = 0; l < L && ok; l++)
            for (int i = 0; i < S && ok; i++) {
                ok = !qb_gemm_prepare(b->blas, kind, (int)k.M, (int)a->shapes[i][0], (int)a->shapes[i][1], W + off,
                                      k.X[i], k.Y[i], ws, wsb, &k.peer[l * S + i], err, sizeof err);
                off += per[i];
            }
        row *r = &rows[*nrows];
        memset(r, 0, sizeof *r);
        snprintf(r->path, sizeof r->path, "%s", qb_kind_name(kind));
        r->peer = kind;
        r->M = k.M;
        if (!ok)
            printf("%-22s %5lld n/a: %s\n", r->path, k.M, err);
        else if (!time_step(b, s, step_peer, &k, &r->graph_us, &r->eager_us)) {
            print_row(r);
            (*nrows)++;
        }
        for (int j = 0; j < L * S; j++) {
            qb_gemm_destroy(k.peer[j]);
            k.peer[j] = NULL;
        }
    }
    for (int i = 0; i < S; i++) {
        if (k.X[i]) b->d->MemFree(k.X[i]);
        if (k.Y[i]) b->d->MemFree(k.Y[i]);
    }
    if (W) b->d->MemFree(W);
    if (ws) b->d->MemFree(ws);
    free(k.peer);
}

/* One scheme's L x S layers (each shape quantized once, uploaded L times),
 * checked and timed at every M in both forms. Returns results found wrong. */
static int run_scheme(bench *b, const qb_bench_args *a, CUstream s, qjit_scheme scheme, row *rows, int *nrows)
{
    const int L = a->layers, S = a->nshapes;
    const char *name = qjit_scheme_name(scheme);
    int group = cli_scheme_group(scheme, a->group, a->shapes, a->nshapes), wrong = 0;
    void *blob[QB_MAX_SHAPES] = {0};
    size_t bytes[QB_MAX_SHAPES] = {0};
    int parts[QB_MAX_SHAPES];
    double payload = 0;
    stack k;
    const long long maxm = stack_init(&k, b, a);
    k.lin = calloc((size_t)(L * S), sizeof *k.lin);
    size_t ybytes = 0;
    for (int i = 0; i < S; i++)
        ybytes += 2 * (size_t)(maxm * a->shapes[i][0]);
    unsigned char *want = malloc(ybytes), *got = malloc(ybytes);
    int bad = !k.lin || !want || !got;
    /* Quantize each shape once (what an engine would load), then L layers
     * of it, each its own upload. */
    for (int i = 0; i < S && !bad; i++) {
        long long N = a->shapes[i][0], K = a->shapes[i][1];
        float *W = bench_layer_weights(b, N, K);
        uint16_t *calib = NULL;
        if (qa_two_part(scheme) && b->a8 > 0 && (calib = malloc(sizeof(uint16_t) * QA_CALIB_ROWS * (size_t)K)))
            qa_gen_calibration(calib, QA_CALIB_ROWS, K, b->seed + (uint64_t)i);
        blob[i] = (!qa_two_part(scheme) || b->a8 == 0 || calib) ?
                  bench_quantize(b, scheme, W, N, K, group, 0, calib, &bytes[i]) : NULL;
        free(W);
        free(calib);
        qjit_weights_info wi;
        qjit_activation_info ai;
        qjit_activation_info_init(&ai);
        bad = !blob[i] || qjit_weights_inspect(b->ctx, blob[i], bytes[i], &wi) ||
              qjit_weights_activation(b->ctx, blob[i], bytes[i], &ai);
        parts[i] = ai.parts;
        payload += bad ? 0 : (double)wi.payload_bytes * L;
    }
    qjit_linear_options lo;
    qjit_linear_options_init(&lo);
    lo.max_tokens = maxm;
    lo.dtype = b->dtype;
    lo.variant = a->nvariants ? a->variants[0] : NULL;     /* one GEMM variant forced at every M (tuning) */
    size_t fr = free_bytes(b);
    if (!bad && fr && payload + (double)((size_t)1 << 30) > (double)fr) {
        printf("%-22s not run: its %.1f GB of weights do not fit in the %.1f GB free\n", name, payload / 1e9,
               (double)fr / 1e9);
        bad = 1;
    }
    for (int j = 0; j < L * S && !bad; j++) {
        qjit_status st = qjit_linear_create(b->ctx, blob[j % S], bytes[j % S], &lo, &k.lin[j]);
        if (st) {
            fprintf(stderr, "qjit bench: %s layer %d (%lldx%lld): %s: %s\n", name, j / S, a->shapes[j % S][0],
                    a->shapes[j % S][1], qjit_status_name(st), qjit_last_error(b->ctx));
            bad = 1;
        }
    }
    for (int i = 0; i < S && !bad; i++)
        bad = b->d->MemAlloc(&k.X[i], 2 * (size_t)(maxm * a->shapes[i][1])) ||
              b->d->MemAlloc(&k.Y[i], 2 * (size_t)(maxm * a->shapes[i][0]));
    const double floor_us = qb_floor_us(payload, b->copy_gbs);
    if (!bad)
        printf("%-22s weights %.2f GB in %d layers: floor %.1f us%s%s\n", name, payload / 1e9, L, floor_us,
               lo.variant ? "; * forced: " : "", lo.variant ? lo.variant : "");
    uint64_t seed = b->seed + 2000 + (uint64_t)scheme;
    for (int mi = 0; mi < a->nms && !bad; mi++) {
        long long M = k.M = a->ms[mi];
        size_t yb = 0;
        for (int i = 0; i < S; i++)
            yb += 2 * (size_t)(M * a->shapes[i][0]);
        /* Tokens, and each shape's kernel at M against the CPU reference. */
        int checked = STACK_ROWS, tokens = 1;
        CUdeviceptr tq[QB_MAX_SHAPES] = {0}, ts[QB_MAX_SHAPES] = {0}, tr[QB_MAX_SHAPES] = {0};
        for (int i = 0; i < S && checked > 0; i++) {
            long long K = a->shapes[i][1];
            uint16_t *X = malloc(sizeof(uint16_t) * (size_t)(M * K));
            if (!X) {
                checked = -1;
                break;
            }
            for (size_t j = 0; j < (size_t)(M * K); j++)
                X[j] = bench_token(b, &seed);
            int c = b->d->MemcpyHtoD(k.X[i], X, 2 * (size_t)(M * K)) != CUDA_SUCCESS ? -1 :
                    bench_check_point(b, k.lin[i], blob[i], bytes[i], parts[i], M, a->shapes[i][0], K, X, k.X[i],
                                      STACK_ROWS);
            free(X);
            checked = c < checked ? c : checked;
            qjit_tokens_format tf;
            qjit_tokens_format_init(&tf);
            qjit_tokens_init(&k.tok[i]);
            if (qjit_linear_tokens_format(k.lin[i], M, &tf) != QJIT_OK) {
                tokens = 0;     /* M's GEMM quantizes its own tokens */
                continue;
            }
            if (b->d->MemAlloc(&tq[i], (size_t)(M * tf.row_bytes)) || b->d->MemAlloc(&ts[i], 4 * (size_t)(M * tf.scales)) ||
                (tf.rowsum && b->d->MemAlloc(&tr[i], 4 * (size_t)M))) {
                checked = -1;
                break;
            }
            k.tok[i].xq = (void *)tq[i];
            k.tok[i].sx = (float *)ts[i];
            k.tok[i].rowsum = (int32_t *)tr[i];
            if (qjit_linear_quantize(k.lin[i], M, (void *)k.X[i], &k.tok[i], s) != QJIT_OK) {
                fprintf(stderr, "qjit bench: %s M=%lld: quantize: %s\n", name, M, qjit_last_error(b->ctx));
                checked = -1;
            }
        }
        /* Every form writes forward's outputs, eager, bit for bit. */
        if (checked > 0 && (run_once(&k, s, step_forward, 0, want, "forward") ||
                            same_outputs(&k, s, step_forward, want, got, yb, "forward") ||
                            (tokens && same_outputs(&k, s, step_tokens, want, got, yb, "tokens in"))))
            checked = -1;
        if (checked < 0) {
            printf("%-22s %5lld WRONG or failed: not timed\n", name, M);
            wrong++;
        }
        for (int t = tokens ? 1 : 0; t >= 0 && checked > 0; t--) {
            row *r = &rows[*nrows];
            memset(r, 0, sizeof *r);
            snprintf(r->path, sizeof r->path, "%s %s%s", name, t ? "tokens in" : "forward", lo.variant ? "*" : "");
            r->peer = -1;
            r->scheme = scheme;
            r->tokens = t;
            r->M = M;
            r->floor_us = floor_us;
            r->rows = checked;
            if (!time_step(b, s, t ? step_tokens : step_forward, &k, &r->graph_us, &r->eager_us)) {
                print_row(r);
                (*nrows)++;
            } else {
                wrong++;
            }
        }
        for (int i = 0; i < S; i++) {
            if (tq[i]) b->d->MemFree(tq[i]);
            if (ts[i]) b->d->MemFree(ts[i]);
            if (tr[i]) b->d->MemFree(tr[i]);
        }
    }
    if (bad)
        wrong++;
    for (int i = 0; i < S; i++) {
        if (k.X[i]) b->d->MemFree(k.X[i]);
        if (k.Y[i]) b->d->MemFree(k.Y[i]);
        free(blob[i]);
    }
    for (int j = 0; k.lin && j < L * S; j++)
        qjit_linear_destroy(k.lin[j]);
    free(k.lin);
    free(want);
    free(got);
    return wrong;
}

/* The row of `path` kind at M: a peer (kind >= 0) or a scheme's form. */
static const row *find_row(const row *rows, int n, int peer, qjit_scheme scheme, int tokens, long long M)
{
    for (int i = 0; i < n; i++)
        if (rows[i].M == M && rows[i].peer == peer && (peer >= 0 || (rows[i].scheme == scheme && rows[i].tokens == tokens)))
            return &rows[i];
    return NULL;
}

int bench_stack(bench *b, const qb_bench_args *a, const qjit_scheme *schemes, int nschemes)
{
    CUstream s = NULL;
    if (b->d->StreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        fprintf(stderr, "qjit bench: cannot create a stream\n");
        return 1;
    }
    printf("step: %d layers x %d linears (", a->layers, a->nshapes);
    for (int i = 0; i < a->nshapes; i++)
        printf("%s%lldx%lld", i ? ", " : "", a->shapes[i][0], a->shapes[i][1]);
    printf("), each layer its own weights, M tokens a call, %s; one CUDA graph replayed ('graph us') and eager "
           "calls ('eager us'), median of %d, L2 flushed before each\n\n", b->dtype == QJIT_DTYPE_BF16 ? "BF16" : "FP16",
           b->reps);
    printf("%-22s %5s %10s %10s %9s %6s %5s\n", "path", "M", "graph us", "eager us", "floor us", "floor", "rows");
    int cap = (NPEERS + 2 * nschemes) * a->nms, nrows = 0, wrong = 0;
    row *rows = calloc((size_t)cap, sizeof *rows);
    if (!rows) {
        b->d->StreamDestroy(s);
        return 1;
    }
    static const qb_kind order[NPEERS] = {QB_FP8, QB_INT8, QB_BF16};
    for (int p = 0; p < NPEERS && b->blas; p++)
        run_peer(b, a, s, order[p], rows, &nrows);
    for (int c = 0; c < nschemes; c++)
        wrong += run_scheme(b, a, s, schemes[c], rows, &nrows);

    for (int c = 0; c < nschemes; c++) {
        printf("\nsummary %s, the step in one graph:\n", qjit_scheme_name(schemes[c]));
        for (int mi = 0; mi < a->nms; mi++) {
            long long M = a->ms[mi];
            const row *f8 = find_row(rows, nrows, QB_FP8, 0, 0, M), *i8 = find_row(rows, nrows, QB_INT8, 0, 0, M);
            for (int t = 1; t >= 0; t--) {
                const row *r = find_row(rows, nrows, -1, schemes[c], t, M);
                if (!r)
                    continue;
                printf("  M=%-4lld %-9s %8.1f us, %.2f of the floor", M, t ? "tokens in" : "forward", r->graph_us,
                       r->floor_us / r->graph_us);
                if (f8)
                    printf(", %.2fx cuBLAS FP8", f8->graph_us / r->graph_us);
                if (i8)
                    printf(", %.2fx cuBLAS INT8", i8->graph_us / r->graph_us);
                printf("\n");
            }
        }
    }
    if (wrong)
        printf("\n%d result(s) WRONG or failed: not timed\n", wrong);
    const char *paths[2] = {a->csv_path, a->json_path};
    for (int f = 0; f < 2; f++) {
        FILE *out = paths[f] ? fopen(paths[f], "w") : NULL;
        if (paths[f] && !out)
            fprintf(stderr, "qjit bench: cannot write '%s'\n", paths[f]);
        if (!out)
            continue;
        if (f == 0)
            fprintf(out, "path,M,layers,graph_us,eager_us,floor_us,rows\n");
        else
            fprintf(out, "{\"device\": \"%s\", \"copy_gbs\": %.1f, \"layers\": %d, \"reps\": %d, \"rows\": [\n",
                    b->d->name, b->copy_gbs, a->layers, b->reps);
        for (int i = 0; i < nrows; i++) {
            const row *r = &rows[i];
            if (f == 0)
                fprintf(out, "%s,%lld,%d,%.3f,%.3f,%.3f,%d\n", r->path, r->M, a->layers, r->graph_us, r->eager_us,
                        r->floor_us, r->rows);
            else
                fprintf(out, "  {\"path\": \"%s\", \"M\": %lld, \"graph_us\": %.3f, \"eager_us\": %.3f, "
                             "\"floor_us\": %.3f, \"rows\": %d}%s\n", r->path, r->M, r->graph_us, r->eager_us,
                        r->floor_us, r->rows, i + 1 < nrows ? "," : "");
        }
        if (f == 1)
            fprintf(out, "]}\n");
        fclose(out);
    }
    free(rows);
    b->d->StreamDestroy(s);
    return wrong;
}
