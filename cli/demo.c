/* demo.c -- `qjit demo`: the main job. With a GPU: quantize a random
 * Llama-2-7B-sized layer, run forward at several M, check every output
 * against the CPU reference and time it. Without one: pre-compile the default
 * variant set for sm_90a into the cache. */
#define _GNU_SOURCE
#include "accuracy.h"
#include "args.h"
#include "bench_args.h"
#include "cli.h"
#include "libcuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: qjit demo [--scheme S] [--n N] [--k K] [--group G] [--m M,M,...] [--sparsity RHO] [--seed S]\n"
    "                 [--cache-dir DIR]\n"
    "Quantizes a random N x K layer (default 11008 x 4096, group 128) with a scheme (default\n"
    "w4a8-lqq; also w4a8-qoq, w4a8-is, w8a8, w4a4), runs forward at each M (default 1,16,128,1024),\n"
    "checks the INT32 accumulators bit for bit and the FP16 output against the CPU reference,\n"
    "and prints times. --sparsity RHO (w4a8-lqq, w4a8-qoq with groups) adds a 4-bit residual\n"
    "on that share of weight blocks, chosen with LLM-like calibration rows: the layer runs the\n"
    "sparse kernels, checked the same way, timed next to the dense layer. Without a GPU it\n"
    "pre-compiles the default variant set for sm_90a into the cache instead.\n";

static int precompile(const char *cache_dir)
{
    qjit_context *ctx = cli_context("sm_90a", cache_dir);
    if (!ctx)
        return 1;
    char *list = NULL;
    const char **keys = NULL;
    int rc = 0, n = 0, failed = 0;
    double total = 0, wall = 0;
    qjit_status st = qjit_default_variants(ctx, "sm_90a", &list);
    if (st) {
        rc = cli_fail(ctx, st, "listing the default variants");
    } else if (!(rc = cli_append_lines(list, &keys, &n))) {
        printf("no GPU here: pre-compiling the default variant set for sm_90a into %s\n",
               qjit_context_cache_dir(ctx));
        cli_compile_header();
        rc = cli_compile_keys(ctx, keys, n, "sm_90a", 0, &failed, &total, &wall);
        if (failed)
            printf("%d of %d variants for sm_90a FAILED to compile (%.2f s)\n", failed, n, total);
        else
            printf("%d variants for sm_90a in %.2f s (%.2f s wall); run `qjit demo` on a GPU machine to execute them\n",
                   n, total, wall);
    }
    free(keys);
    qjit_free(ctx, list);
    qjit_context_destroy(ctx);
    return rc;
}

typedef struct run_result {
    double us, max_rel, compile_s, hit_s;
    int from_cache;
    long long acc_mismatch;
    char key[512];
    const char *why;              /* on failure: the reason, where it is not the context's last error */
} run_result;

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

#define CHECK_CU(call, what)                                                                                         \
    do {                                                                                                             \
        CUresult r_ = (call);                                                                                        \
        if (r_ != CUDA_SUCCESS) {                                                                                    \
            res->why = cli_cuda_error(d, r_, what);                                                                  \
            st = QJIT_CUDA;                                                                                          \
            goto done;                                                                                               \
        }                                                                                                            \
    } while (0)

/* Checks and times the layer at M. On failure, res->why says why (NULL:
 * the context's last error does). */
static qjit_status run_m(qjit_context *ctx, cli_cuda *d, qjit_linear *lin, const void *blob, size_t blob_bytes,
                         int parts, int64_t M, int64_t N, int64_t K, uint64_t *seed, const char *cache_dir,
                         run_result *res)
{
    qjit_status st = QJIT_OK;
    /* parts: a layer of two activation parts (w4ax) has two scales per
     * token and two planes of sums. */
    size_t xn = (size_t)M * (size_t)K, yn = (size_t)M * (size_t)N;
    uint16_t *X = malloc(xn * 2), *Y = malloc(yn * 2);
    int8_t *Xq = malloc(xn);
    float *sx = malloc((size_t)M * 4 * parts), *Yref = malloc(yn * 4);
    int32_t *acc = malloc(yn * 4 * parts), *acc_ref = malloc(yn * 4 * parts);
    CUdeviceptr dX = 0, dY = 0, dA = 0;
    CUevent e0 = NULL, e1 = NULL;
    memset(res, 0, sizeof *res);
    if (!X || !Y || !Xq || !sx || !Yref || !acc || !acc_ref) {
        res->why = "out of host memory";
        st = QJIT_OUT_OF_MEMORY;
        goto done;
    }
    for (size_t i = 0; i < xn; i++)
        X[i] = qjit_half_from_float(cli_normal(seed));
    if ((st = qjit_reference_quantize_activations_for(ctx, blob, blob_bytes, M, X, Xq, sx)) ||
        (st = qjit_reference_gemm(ctx, blob, blob_bytes, M, Xq, sx, acc_ref, Yref)))
        goto done;
    if ((st = qjit_linear_variant(lin, M, res->key, sizeof res->key)))
        goto done;
    /* Compile (or find) the variant, then time a cache hit from a fresh
     * context, as a new process would see it. */
    qjit_compile_info info;
    if ((st = qjit_compile(ctx, res->key, NULL, &info)))
        goto done;
    res->from_cache = info.from_cache;
    res->compile_s = info.total_seconds;
    char arch[16];
    qjit_context *fresh = qjit_context_arch(ctx, arch, sizeof arch) == QJIT_OK ? cli_context(arch, cache_dir) : NULL;
    if (fresh) {
        qjit_compile_info hit;
        if (qjit_compile(fresh, res->key, NULL, &hit) == QJIT_OK && hit.from_cache)
            res->hit_s = hit.total_seconds;
        qjit_context_destroy(fresh);
    }
    if ((st = cli_cuda_bind(d))) {
        res->why = d->error;
        goto done;
    }
    CHECK_CU(d->MemAlloc(&dX, xn * 2), "cuMemAlloc");
    CHECK_CU(d->MemAlloc(&dY, yn * 2), "cuMemAlloc");
    CHECK_CU(d->MemAlloc(&dA, yn * 4 * parts), "cuMemAlloc");
    CHECK_CU(d->MemcpyHtoD(dX, X, xn * 2), "cuMemcpyHtoD");
    CHECK_CU(d->MemsetD8(dY, 0xFF, yn * 2), "cuMemsetD8");   /* poison: 0xFFFF is a NaN */
    CHECK_CU(d->MemsetD8(dA, 0xA5, yn * 4 * parts), "cuMemsetD8");
    if ((st = qjit_linear_forward_acc(lin, M, (void *)dX, (int32_t *)dA, NULL, 0, NULL)) ||
        (st = qjit_linear_forward(lin, M, (void *)dX, (void *)dY, NULL, 0, NULL)))
        goto done;
    CHECK_CU(d->CtxSynchronize(), "kernel execution");
    CHECK_CU(d->MemcpyDtoH(acc, dA, yn * 4 * parts), "cuMemcpyDtoH");
    CHECK_CU(d->MemcpyDtoH(Y, dY, yn * 2), "cuMemcpyDtoH");
    double ymax = 0;
    for (size_t i = 0; i < yn; i++)
        ymax = fmax(ymax, fabs(Yref[i]));
    for (size_t i = 0; i < yn * parts; i++)
        res->acc_mismatch += acc[i] != acc_ref[i];
    for (size_t i = 0; i < yn; i++) {
        float y = qjit_float_from_half(Y[i]);
        double err = isnan(y) ? INFINITY : fabs((double)y - Yref[i]) / (ymax > 0 ? ymax : 1);
        if (err > res->max_rel)
            res->max_rel = err;
    }
    /* Timing: warm, then the median of 50 event-timed calls. */
    CHECK_CU(d->EventCreate(&e0, 0), "cuEventCreate");
    CHECK_CU(d->EventCreate(&e1, 0), "cuEventCreate");
    float times[50];
    for (int i = 0; i < 5; i++)
        qjit_linear_forward(lin, M, (void *)dX, (void *)dY, NULL, 0, NULL);
    for (int i = 0; i < 50; i++) {
        d->EventRecord(e0, NULL);
        qjit_linear_forward(lin, M, (void *)dX, (void *)dY, NULL, 0, NULL);
        d->EventRecord(e1, NULL);
        CHECK_CU(d->EventSynchronize(e1), "timing");
        d->EventElapsedTime(&times[i], e0, e1);
    }
    qsort(times, 50, sizeof times[0], cmp_float);
    res->us = times[25] * 1000.0;
done:
    if (e0)
        d->EventDestroy(e0);
    if (e1)
        d->EventDestroy(e1);
    if (dX)
        d->MemFree(dX);
    if (dY)
        d->MemFree(dY);
    if (dA)
        d->MemFree(dA);
    free(X); free(Y); free(Xq); free(sx); free(Yref); free(acc); free(acc_ref);
    return st;
}

/* The options of `qjit demo`, parsed by args.h's rules. */
typedef struct demo_args {
    long long N, K;
    int group, group_given;
    qjit_scheme scheme;
    uint64_t seed;
    const char *cache_dir;
    long long ms[32];
    int nms;
    double sparsity;
} demo_args;

/* One whole-text integer in [min, max]. */
static int demo_int(const char *text, long long min, long long max, long long *out, char *msg, size_t msglen)
{
    long long v[1];
    if (qb_parse_ints(text, min, v, 1, msg, msglen) < 0)
        return -1;
    if (v[0] > max) {
        qa_say(msg, msglen, "'%s' must be at most %lld", text, max);
        return -1;
    }
    *out = v[0];
    return 0;
}

static int demo_take(void *args, const char *o, const char *v, char *msg, size_t msglen)
{
    demo_args *a = args;
    long long x;
    if (!strcmp(o, "--n"))
        return demo_int(v, 16, 1 << 20, &a->N, msg, msglen);
    if (!strcmp(o, "--k"))
        return demo_int(v, 64, 1 << 20, &a->K, msg, msglen);
    if (!strcmp(o, "--group")) {
        if (demo_int(v, 0, 1 << 20, &x, msg, msglen))
            return -1;
        a->group = (int)x;
        a->group_given = 1;
        return 0;
    }
    if (!strcmp(o, "--scheme")) {
        if (qjit_scheme_from_name(v, &a->scheme) == QJIT_OK)
            return 0;
        qa_say(msg, msglen, "'%s' is not a scheme (w4a8-lqq, w4a8-qoq, w4a8-is, w8a8, w4a4)", v);
        return -1;
    }
    if (!strcmp(o, "--m"))
        return (a->nms = qb_parse_ints(v, 1, a->ms, 32, msg, msglen)) < 0 ? -1 : 0;
    if (!strcmp(o, "--seed"))
        return qa_parse_seed(v, &a->seed, msg, msglen);
    if (!strcmp(o, "--sparsity")) {
        qa_budgets l = {&a->sparsity, 0, 1};
        return qa_each_item(v, "", qa_budget_item, &l, msg, msglen);
    }
    a->cache_dir = v;
    return 0;
}

int cmd_demo(int argc, char **argv)
{
    static const qa_option options[] = {{"--scheme", QA_NAME}, {"--n", QA_VALUE},    {"--k", QA_VALUE},
                                        {"--group", QA_VALUE},  {"--m", QA_VALUE},    {"--seed", QA_VALUE},
                                        {"--cache-dir", QA_NAME}, {"--sparsity", QA_VALUE}};
    static const qa_command cmd = {options, sizeof options / sizeof *options, demo_take};
    demo_args a = {11008, 4096, 128, 0, QJIT_SCHEME_W4A8_LQQ, (uint64_t)time(NULL), NULL, {1, 16, 128, 1024}, 4, 0};
    char msg[512], err[1024];
    int prc = qa_parse_options(argc, argv, &cmd, &a, msg, sizeof msg, err, sizeof err);
    if (prc < 0) {
        fprintf(stderr, "qjit demo: %s\n%s", err, usage);
        return 2;
    }
    if (prc > 0) {
        fputs(usage, stdout);
        return 0;
    }
    /* A scheme with per-channel weights only (w8a8, w4a4, w4ax, w4ax-s): group 0
     * unless one is asked for. */
    size_t probe_bytes;
    if (!a.group_given && qjit_packed_size(a.scheme, a.group, 16, 128, &probe_bytes) != QJIT_OK &&
        qjit_packed_size(a.scheme, 0, 16, 128, &probe_bytes) == QJIT_OK)
        a.group = 0;
    /* The layer is checked before anything runs or compiles. */
    size_t bytes = 0, dense_bytes = 0;
    qjit_quantize_options qo;
    qjit_quantize_options_init(&qo);
    qo.sparsity = a.sparsity;
    if (a.sparsity > 0) {
        qjit_context *probe = cli_context("sm_90a", NULL);
        qjit_status pst = probe ? qjit_packed_size_ex(probe, a.scheme, a.group, a.N, a.K, &qo, &bytes) : QJIT_INTERNAL;
        if (pst) {
            fprintf(stderr, "qjit demo: --sparsity %g: %s\n", a.sparsity, probe ? qjit_last_error(probe) : "no context");
            qjit_context_destroy(probe);
            return 2;
        }
        qjit_context_destroy(probe);
    }
    if (qjit_packed_size(a.scheme, a.group, a.N, a.K, &dense_bytes) != QJIT_OK) {
        fprintf(stderr, "qjit demo: a %lld x %lld layer with %s and group %d cannot be packed (N must be a multiple "
                "of 16, K of 64 and of the group; the scheme must take the group: w8a8 0 only, w4a8-is 64, 128, ..., "
                "the others 0 or a multiple of 64)\n", a.N, a.K, qjit_scheme_name(a.scheme), a.group);
        return 2;
    }
    if (a.sparsity == 0)
        bytes = dense_bytes;
    int64_t N = a.N, K = a.K;
    int group = a.group;
    qjit_scheme scheme = a.scheme;
    uint64_t seed = a.seed;
    const char *cache_dir = a.cache_dir;
    qjit_context *ctx = cli_context(NULL, cache_dir);
    if (!ctx)
        return 1;
    char arch[16];
    cli_cuda cu;
    memset(&cu, 0, sizeof cu);
    qjit_status st = cli_gpu(ctx, &cu, arch);
    if (st) {
        int rc = 0;
        if (st == QJIT_NO_DRIVER || st == QJIT_NO_DEVICE)
            printf("no usable GPU (%s): %.*s\n", qjit_status_name(st), (int)strcspn(cu.error, "\n"), cu.error);
        else
            rc = cli_fail_because(st, "finding the GPU", cu.error);
        cli_cuda_close(&cu);
        qjit_context_destroy(ctx);
        return rc ? rc : precompile(cache_dir);
    }
    printf("device: %s (%s), seed %llu\n", cu.name, arch, (unsigned long long)seed);
    float *W = malloc((size_t)N * (size_t)K * sizeof *W);
    uint16_t *calib = a.sparsity > 0 ? malloc(sizeof(uint16_t) * QA_CALIB_ROWS * (size_t)K) : NULL;
    void *blob = NULL, *dense_blob = NULL;
    qjit_linear *lin = NULL, *dense = NULL;
    int rc = 1;
    /* bytes, dense_bytes: sized when the options were checked */
    if (!W || !(blob = malloc(bytes)) || (a.sparsity > 0 && (!calib || !(dense_blob = malloc(dense_bytes)))))
        goto done;
    cli_fill_normal(W, (size_t)N * (size_t)K, seed, 0.02f);
    cli_random(&seed);
    if (calib) {
        /* The residual's blocks chosen as a user would: weighted by
         * calibration rows with LLM activations' outlier channels. */
        qa_gen_calibration(calib, QA_CALIB_ROWS, K, seed);
        qo.calib = calib;
        qo.calib_dtype = QJIT_DTYPE_F16;
        qo.calib_rows = QA_CALIB_ROWS;
    }
    /* The layer's activation parts (the dense twin has the same scheme). */
    qjit_activation_info ai;
    qjit_activation_info_init(&ai);
    if ((st = qjit_quantize_weights_ex(ctx, scheme, group, W, QJIT_DTYPE_F32, N, K, &qo, blob, bytes, &bytes)) ||
        (st = qjit_weights_activation(ctx, blob, bytes, &ai)) || (st = qjit_linear_create(ctx, blob, bytes, NULL, &lin)) ||
        (dense_blob && ((st = qjit_quantize_weights(ctx, scheme, group, W, QJIT_DTYPE_F32, N, K, dense_blob,
                                                    dense_bytes, &dense_bytes)) ||
                        (st = qjit_linear_create(ctx, dense_blob, dense_bytes, NULL, &dense))))) {
        rc = cli_fail(ctx, st, "preparing the layer");
        goto done;
    }
    printf("layer: N=%lld K=%lld group=%d, %s, %.1f MB packed\n", (long long)N, (long long)K, group,
           qjit_scheme_name(scheme), bytes / 1e6);
    if (dense) {
        qjit_residual_info ri;
        qjit_residual_info_init(&ri);
        qjit_weights_residual(ctx, blob, bytes, &ri);
        printf("sparse residual (budget %g): %lld of %lld blocks of %dx%d (%.1f%%), %.1f MB, chosen by %s error; the "
               "dense layer (%.1f MB) is timed beside it\n", a.sparsity, (long long)ri.blocks,
               (long long)ri.total_blocks, ri.block_n, ri.block_k, 100 * ri.density, ri.bytes / 1e6,
               ri.weighted ? "calibration-weighted" : "unweighted", dense_bytes / 1e6);
    }
    printf("\n%6s %10s %10s %10s %8s %12s %10s%s  %s\n", "M", "compile s", "hit s", "us/call", "TOPS", "max rel err",
           "acc", dense ? "   dense us  over" : "", "variant");
    rc = 0;
    for (int mi = 0; mi < a.nms; mi++) {
        const int64_t M = a.ms[mi];
        run_result r;
        st = run_m(ctx, &cu, lin, blob, bytes, ai.parts, M, N, K, &seed, cache_dir, &r);
        if (st) {
            rc = cli_fail_because(st, "forward", r.why ? r.why : qjit_last_error(ctx));
            break;
        }
        int ok = r.acc_mismatch == 0 && r.max_rel < 1e-3;
        /* The dense layer at the same M, checked the same way. */
        run_result rd;
        char over[32] = "";
        if (dense) {
            if ((st = run_m(ctx, &cu, dense, dense_blob, dense_bytes, ai.parts, M, N, K, &seed, cache_dir, &rd))) {
                rc = cli_fail_because(st, "forward (dense)", rd.why ? rd.why : qjit_last_error(ctx));
                break;
            }
            ok = ok && rd.acc_mismatch == 0 && rd.max_rel < 1e-3;
            snprintf(over, sizeof over, " %10.2f %+4.0f%%", rd.us, 100 * (r.us / rd.us - 1));
        }
        printf("%6lld %9.3f%s %10.4f %10.2f %8.1f %12.2e %10s%s  %s\n", (long long)M, r.compile_s,
               r.from_cache ? "*" : " ", r.hit_s, r.us, 2.0 * M * N * K / (r.us * 1e-6) / 1e12, r.max_rel,
               r.acc_mismatch || (dense && rd.acc_mismatch) ? "MISMATCH" : "exact", over, r.key);
        if (!ok)
            rc = 1;
    }
    printf("\n(* compile column: the variant was already in the cache; hit s: load from a fresh context;\n"
           " max rel err: |Y - Yref| / max|Yref| of the FP16 output; acc: INT32 accumulators vs CPU)\n");
done:
    qjit_linear_destroy(lin);
    qjit_linear_destroy(dense);
    free(blob);
    free(dense_blob);
    free(calib);
    free(W);
    qjit_context_destroy(ctx);
    cli_cuda_close(&cu);
    return rc;
}
