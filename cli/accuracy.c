/* accuracy.c -- the GPU-free half of `qjit quant-error`: options, the
 * generated layer, the double-precision reference, the error metrics and
 * one result row per (scheme, group); see accuracy.h. Only the public API. */
#define _GNU_SOURCE
#include "accuracy.h"
#include "args.h"
#include "cli.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*------------------------------------------------------------------------
 * Options
 *------------------------------------------------------------------------*/

/* A decimal integer spanning exactly [b, e): digits only (no sign, no
 * spaces), in [min, max]. */
static int int_in(const char *b, const char *e, long long min, long long max, long long *v, char *err, size_t errlen)
{
    int len = (int)(e - b), digits = b < e;
    for (const char *p = b; p < e; p++)
        digits = digits && qa_is_digit(*p);
    if (!digits) {
        qa_say(err, errlen, "'%.*s' is not a whole number", len, b);
        return -1;
    }
    long long x = 0;
    for (const char *p = b; p < e; p++) {
        if (x > (LLONG_MAX - (*p - '0')) / 10) {
            qa_say(err, errlen, "'%.*s' is out of range (at most %lld)", len, b, max);
            return -1;
        }
        x = x * 10 + (*p - '0');
    }
    if (x < min) {
        qa_say(err, errlen, "'%.*s' must be at least %lld", len, b, min);
        return -1;
    }
    if (x > max) {
        qa_say(err, errlen, "'%.*s' is out of range (at most %lld)", len, b, max);
        return -1;
    }
    *v = x;
    return 0;
}

/* A dimension: an integer in [multiple, max] that is a multiple of `multiple`. */
static int parse_dim(const char *text, long long multiple, long long max, const char *why, long long *out, char *err,
                     size_t errlen)
{
    long long v;
    if (int_in(text, text + strlen(text), multiple, max, &v, err, errlen))
        return -1;
    if (v % multiple) {
        qa_say(err, errlen, "'%s' is not a multiple of %lld (%s)", text, multiple, why);
        return -1;
    }
    *out = v;
    return 0;
}

static const qjit_scheme ALL_SCHEMES[QA_MAX_SCHEMES] = {QJIT_SCHEME_W4A8_LQQ, QJIT_SCHEME_W4A8_QOQ,
                                                        QJIT_SCHEME_W4A8_IS, QJIT_SCHEME_W8A8,
                                                        QJIT_SCHEME_W4A4,    QJIT_SCHEME_W4AX,
                                                        QJIT_SCHEME_W4AX_S};

typedef struct scheme_list {
    qjit_scheme *v;
    int n;
} scheme_list;

static void add_scheme(scheme_list *l, qjit_scheme s)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == s)
            return;
    l->v[l->n++] = s;    /* at most the distinct schemes */
}

static int scheme_item(const char *b, const char *e, void *ud, char *err, size_t errlen)
{
    scheme_list *l = ud;
    char name[32];
    int len = (int)(e - b);
    if (len == 3 && !strncasecmp(b, "all", 3)) {
        for (int i = 0; i < QA_MAX_SCHEMES; i++)
            add_scheme(l, ALL_SCHEMES[i]);
        return 0;
    }
    qjit_scheme s;
    if ((size_t)len >= sizeof name || (memcpy(name, b, (size_t)len), name[len] = '\0',
                                       qjit_scheme_from_name(name, &s) != QJIT_OK)) {
        qa_say(err, errlen, "unknown scheme '%.*s' (known: w4a8-lqq, w4a8-qoq, w4a8-is, w8a8, w4a4, or lqq, qoq, "
               "is, int8, int4, or all)", len, b);
        return -1;
    }
    add_scheme(l, s);
    return 0;
}

typedef struct group_list {
    int *v;
    int n;
} group_list;

static int group_item(const char *b, const char *e, void *ud, char *err, size_t errlen)
{
    group_list *l = ud;
    long long v;
    if (int_in(b, e, 0, QA_MAX_GROUP, &v, err, errlen))
        return -1;
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == (int)v)
            return 0;
    if (l->n == QA_MAX_GROUPS) {
        qa_say(err, errlen, "more than %d groups (at '%.*s')", QA_MAX_GROUPS, (int)(e - b), b);
        return -1;
    }
    l->v[l->n++] = (int)v;
    return 0;
}

void qa_args_init(qa_args *a)
{
    memset(a, 0, sizeof *a);
    a->n = 4096;
    a->k = 4096;
    a->m = 64;
    a->seed = QA_DEFAULT_SEED;
    memcpy(a->schemes, ALL_SCHEMES, sizeof ALL_SCHEMES);
    a->nschemes = QA_MAX_SCHEMES;
    a->groups[0] = 0;
    a->groups[1] = 64;
    a->groups[2] = 128;
    a->ngroups = 3;
    a->sparsity[0] = 0.0;
    a->nsparsity = 1;
    a->a8[0] = 0.05;
    a->a8[1] = 0.1;
    a->a8[2] = 0.2;
    a->na8 = 3;
}

/* Applies one option of `qjit quant-error` to its qa_args (args.h's take). */
static int quant_error_take(void *args, const char *o, const char *v, char *msg, size_t msglen)
{
    qa_args *a = args;
    if (!strcmp(o, "--n"))
        return parse_dim(v, 16, QA_MAX_DIM, "the packed layouts take output channels in blocks of 16", &a->n, msg,
                         msglen);
    if (!strcmp(o, "--k"))
        return parse_dim(v, 256, QA_MAX_DIM, "so that groups of 64, 128 and 256 all fit", &a->k, msg, msglen);
    if (!strcmp(o, "--m"))
        return int_in(v, v + strlen(v), 1, QA_MAX_M, &a->m, msg, msglen);
    if (!strcmp(o, "--seed"))
        return qa_parse_seed(v, &a->seed, msg, msglen);
    if (!strcmp(o, "--schemes")) {
        /* Straight into the arguments: a refused list fails the whole parse,
         * and qa_parse_args then drops its copy. */
        scheme_list l = {a->schemes, 0};
        int rc = qa_each_item(v, ",", scheme_item, &l, msg, msglen);
        a->nschemes = l.n;
        return rc;
    }
    if (!strcmp(o, "--groups")) {
        group_list l = {a->groups, 0};
        int rc = qa_each_item(v, ",", group_item, &l, msg, msglen);
        a->ngroups = l.n;
        return rc;
    }
    if (!strcmp(o, "--sparsity")) {
        qa_budgets l = {a->sparsity, 0, QA_MAX_SPARSITY};
        int rc = qa_each_item(v, ",", qa_budget_item, &l, msg, msglen);
        a->nsparsity = l.n;
        return rc;
    }
    if (!strcmp(o, "--a8")) {
        qa_budgets l = {a->a8, 0, QA_MAX_SPARSITY};
        int rc = qa_each_item(v, ",", qa_budget_item, &l, msg, msglen);
        a->na8 = l.n;
        return rc;
    }
    if (!strcmp(o, "--rblock")) {
        /* ROWSxCOLS; which shapes a layer takes is the library's call. */
        long long r = 0, c = 0;
        int overflow = 0;
        const char *p = qa_read_ll(v, 0, &r, &overflow), *q = p && (*p == 'x' || *p == 'X') ? qa_read_ll(p + 1, 0, &c, &overflow) : NULL;
        if (!q || *q || r < 1 || c < 1 || r > 1024 || c > 1024) {
            qa_say(msg, msglen, "'%s' is not a residual block ROWSxCOLS (e.g. 64x64, 16x128)", v);
            return -1;
        }
        a->rblock_n = (int)r;
        a->rblock_k = (int)c;
        return 0;
    }
    if (!strcmp(o, "--csv"))
        a->csv_path = v;
    else
        a->json_path = v;
    return 0;
}

int qa_parse_args(int argc, char **argv, qa_args *out, char *err, size_t errlen)
{
    static const qa_option options[] = {
        {"--n", QA_VALUE},       {"--k", QA_VALUE},      {"--m", QA_VALUE},   {"--seed", QA_VALUE},
        {"--schemes", QA_VALUE}, {"--groups", QA_VALUE}, {"--sparsity", QA_VALUE}, {"--rblock", QA_VALUE},
        {"--a8", QA_VALUE},      {"--csv", QA_NAME},     {"--json", QA_NAME}};
    static const qa_command cmd = {options, sizeof options / sizeof *options, quant_error_take};
    qa_args a;    /* filled here, copied out only on success */
    char msg[512];
    qa_args_init(&a);
    int rc = qa_parse_options(argc, argv, &cmd, &a, msg, sizeof msg, err, errlen);
    if (rc < 0)
        return -1;
    a.help = rc;
    *out = a;
    return 0;
}

/*------------------------------------------------------------------------
 * Generators
 *------------------------------------------------------------------------*/

static double uniform01(uint64_t *state)
{
    return (double)(cli_random(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* Student-t with 5 degrees of freedom: z / sqrt(chi2_5 / 5). */
static double student_t5(uint64_t *state)
{
    double z = cli_normal(state), chi2 = 0;
    for (int i = 0; i < 5; i++) {
        double y = cli_normal(state);
        chi2 += y * y;
    }
    return z / sqrt(chi2 / 5.0);
}

static float to_fp16_value(double v)
{
    return qjit_float_from_half(qjit_half_from_float((float)v));
}

int qa_two_part(qjit_scheme s)
{
    return s == QJIT_SCHEME_W4AX || s == QJIT_SCHEME_W4AX_S;
}

int qa_outlier_count(int64_t K)
{
    int64_t n = K / 512;
    return n < 1 ? 1 : n > INT_MAX ? INT_MAX : (int)n;
}

/* Draws the distinct outlier channels and their factors lo + (hi - lo) u
 * into factor[K] (1 elsewhere). */
static void draw_outliers(uint64_t *state, int64_t K, double lo, double hi, double *factor, int64_t *outliers)
{
    for (int64_t k = 0; k < K; k++)
        factor[k] = 1.0;
    int count = qa_outlier_count(K);
    for (int i = 0; i < count && i < K;) {
        int64_t k = (int64_t)(cli_random(state) % (uint64_t)K);
        if (factor[k] != 1.0)
            continue;    /* drawn already: draw again */
        factor[k] = lo + (hi - lo) * uniform01(state);
        if (outliers)
            outliers[i] = k;
        i++;
    }
}

void qa_gen_weights(float *W, int64_t N, int64_t K, uint64_t seed, int64_t *outliers)
{
    uint64_t state = seed ^ QA_WEIGHT_STREAM;
    double *c = malloc((size_t)K * sizeof *c), *r = malloc((size_t)N * sizeof *r);
    if (!c || !r)
        abort();    /* small next to W itself */
    draw_outliers(&state, K, 3.0, 6.0, c, outliers);
    for (int64_t n = 0; n < N; n++)
        r[n] = exp(0.25 * cli_normal(&state) - 0.0625);
    const double scale = 0.02 / sqrt(5.0 / 3.0);
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++)
            W[n * K + k] = to_fp16_value(scale * r[n] * c[k] * student_t5(&state));
    free(c);
    free(r);
}

/* Activations of the channel statistics drawn from seed; the tokens from
 * the stream `tokens` (0: the same state, continued). */
static void gen_tokens(uint16_t *X, int64_t M, int64_t K, uint64_t seed, uint64_t tokens, int64_t *outliers)
{
    uint64_t state = seed ^ QA_ACT_STREAM;
    double *d = malloc((size_t)K * sizeof *d), *a = malloc((size_t)M * sizeof *a);
    if (!d || !a)
        abort();
    draw_outliers(&state, K, 20.0, 50.0, d, outliers);
    state ^= tokens;
    for (int64_t m = 0; m < M; m++)
        a[m] = exp(0.5 * cli_normal(&state));
    for (int64_t m = 0; m < M; m++)
        for (int64_t k = 0; k < K; k++)
            X[m * K + k] = qjit_half_from_float((float)(a[m] * d[k] * cli_normal(&state)));
    free(d);
    free(a);
}

void qa_gen_activations(uint16_t *X, int64_t M, int64_t K, uint64_t seed, int64_t *outliers)
{
    gen_tokens(X, M, K, seed, 0, outliers);
}

void qa_gen_calibration(uint16_t *X, int64_t M, int64_t K, uint64_t seed)
{
    gen_tokens(X, M, K, seed, QA_CALIB_STREAM, NULL);
}

/*------------------------------------------------------------------------
 * Double-precision GEMM and the metrics
 *------------------------------------------------------------------------*/

typedef struct gemm64_job {
    const double *X;
    const float *W;
    double *Y;
    int64_t M, N, K, n0, n1;
} gemm64_job;

static void *gemm64_rows(void *arg)
{
    const gemm64_job *j = arg;
    int64_t K = j->K;
    double *w = malloc((size_t)K * sizeof *w);
    if (!w)
        return (void *)1;
    for (int64_t n = j->n0; n < j->n1; n++) {
        for (int64_t k = 0; k < K; k++)
            w[k] = j->W[n * K + k];
        int64_t m = 0;
        for (; m + 4 <= j->M; m += 4) {    /* four tokens at once: four independent sums */
            const double *x0 = j->X + m * K, *x1 = x0 + K, *x2 = x1 + K, *x3 = x2 + K;
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (int64_t k = 0; k < K; k++) {
                s0 += x0[k] * w[k];
                s1 += x1[k] * w[k];
                s2 += x2[k] * w[k];
                s3 += x3[k] * w[k];
            }
            j->Y[m * j->N + n] = s0;
            j->Y[(m + 1) * j->N + n] = s1;
            j->Y[(m + 2) * j->N + n] = s2;
            j->Y[(m + 3) * j->N + n] = s3;
        }
        for (; m < j->M; m++) {
            const double *x = j->X + m * K;
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += x[k] * w[k];
            j->Y[m * j->N + n] = s;
        }
    }
    free(w);
    return NULL;
}

#define QA_MAX_THREADS 64

int qa_gemm_f64(const double *X, int64_t M, const float *W, int64_t N, int64_t K, double *Y)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int64_t threads = cpus < 1 ? 1 : cpus > QA_MAX_THREADS ? QA_MAX_THREADS : cpus;
    if (threads > N)
        threads = N;
    if (threads < 1)
        return 0;
    gemm64_job jobs[QA_MAX_THREADS];
    pthread_t tid[QA_MAX_THREADS];
    int started[QA_MAX_THREADS] = {0}, rc = 0;
    for (int64_t t = 0; t < threads; t++) {
        jobs[t] = (gemm64_job){X, W, Y, M, N, K, N * t / threads, N * (t + 1) / threads};
        started[t] = t > 0 && pthread_create(&tid[t], NULL, gemm64_rows, &jobs[t]) == 0;
    }
    if (gemm64_rows(&jobs[0]))
        rc = -1;
    for (int64_t t = 1; t < threads; t++) {
        if (started[t]) {
            void *res = NULL;
            pthread_join(tid[t], &res);
            if (res)
                rc = -1;
        } else if (gemm64_rows(&jobs[t])) {    /* no thread: do its rows here */
            rc = -1;
        }
    }
    return rc;
}

void qa_errors(const double *y, const double *ref, size_t count, double *rel, double *max_rel)
{
    double d2 = 0, r2 = 0, dmax = 0, rmax = 0;
    for (size_t i = 0; i < count; i++) {
        double d = fabs(y[i] - ref[i]), r = fabs(ref[i]);
        d2 += d * d;
        r2 += r * r;
        if (d > dmax || d != d)
            dmax = d;
        if (r > rmax)
            rmax = r;
    }
    *rel = r2 > 0 ? sqrt(d2) / sqrt(r2) : d2 > 0 || d2 != d2 ? INFINITY : 0.0;
    *max_rel = rmax > 0 ? dmax / rmax : dmax > 0 || dmax != dmax ? INFINITY : 0.0;
}

/*------------------------------------------------------------------------
 * The layer and its rows
 *------------------------------------------------------------------------*/

static void lib_message(qjit_context *ctx, qjit_status st, char *buf, size_t size)
{
    const char *m = ctx ? qjit_last_error(ctx) : "";
    if (m && *m)
        snprintf(buf, size, "%s", m);
    else
        snprintf(buf, size, "%s (%s)", qjit_status_string(st), qjit_status_name(st));
}

/* The elements of an a x b array of `elem` bytes, or 0 on overflow. */
static size_t array_bytes(int64_t a, int64_t b, size_t elem)
{
    if (a <= 0 || b <= 0 || (uint64_t)a > SIZE_MAX / (uint64_t)b || (size_t)(a * b) > SIZE_MAX / elem)
        return 0;
    return (size_t)(a * b) * elem;
}

void qa_layer_free(qa_layer *L)
{
    free(L->W);
    free(L->X);
    free(L->Xq);
    free(L->sx);
    free(L->Yref);
    free(L->Yact);
    free(L->Xq4);
    free(L->sx4);
    free(L->Yact4);
    free(L->w_outliers);
    free(L->x_outliers);
    free(L->calib);
    memset(L, 0, sizeof *L);
}

/* X as doubles: from FP16 (bits 0), or dequantized from its 8- or 4-bit
 * quantization (Xq sx, Xq4 sx4). */
static double *x_double(const qa_layer *L, int bits)
{
    size_t bytes = array_bytes(L->M, L->K, sizeof(double));
    double *X = bytes ? malloc(bytes) : NULL;
    if (!X)
        return NULL;
    const int8_t *q = bits == 4 ? L->Xq4 : L->Xq;
    const float *s = bits == 4 ? L->sx4 : L->sx;
    for (int64_t m = 0; m < L->M; m++)
        for (int64_t k = 0; k < L->K; k++) {
            size_t i = (size_t)(m * L->K + k);
            X[i] = bits ? (double)q[i] * (double)s[m] : (double)qjit_float_from_half(L->X[i]);
        }
    return X;
}

int qa_layer_make(qa_layer *L, int64_t N, int64_t K, int64_t M, uint64_t seed, qjit_context *ctx, char *err,
                  size_t errlen)
{
    memset(L, 0, sizeof *L);
    L->N = N;
    L->K = K;
    L->M = M;
    L->seed = seed;
    size_t wb = array_bytes(N, K, sizeof(float)), xb = array_bytes(M, K, sizeof(uint16_t)),
           qb = array_bytes(M, K, 1), yb = array_bytes(M, N, sizeof(double));
    if (!wb || !xb || !qb || !yb) {
        qa_say(err, errlen, "the layer N=%lld K=%lld M=%lld is empty or too large", (long long)N, (long long)K,
            (long long)M);
        return -1;
    }
    int outl = qa_outlier_count(K);
    L->W = malloc(wb);
    L->X = malloc(xb);
    L->Xq = malloc(qb);
    L->sx = malloc((size_t)M * sizeof(float));
    L->Yref = malloc(yb);
    L->Yact = malloc(yb);
    L->Xq4 = malloc(qb);
    L->sx4 = malloc((size_t)M * sizeof(float));
    L->Yact4 = malloc(yb);
    L->w_outliers = malloc((size_t)outl * sizeof(int64_t));
    L->x_outliers = malloc((size_t)outl * sizeof(int64_t));
    L->calib = malloc(array_bytes(QA_CALIB_ROWS, K, sizeof(uint16_t)));
    if (!L->W || !L->X || !L->Xq || !L->sx || !L->Yref || !L->Yact || !L->Xq4 || !L->sx4 || !L->Yact4 ||
        !L->w_outliers || !L->x_outliers || !L->calib) {
        qa_say(err, errlen, "out of memory for a %lld x %lld layer with M=%lld", (long long)N, (long long)K,
            (long long)M);
        qa_layer_free(L);
        return -1;
    }
    qa_gen_weights(L->W, N, K, seed, L->w_outliers);
    qa_gen_activations(L->X, M, K, seed, L->x_outliers);
    qa_gen_calibration(L->calib, QA_CALIB_ROWS, K, seed);
    qjit_status st = qjit_reference_quantize_activations(ctx, M, K, L->X, L->Xq, L->sx);
    if (!st)
        st = qjit_reference_quantize_activations_bits(ctx, 4, M, K, L->X, L->Xq4, L->sx4);
    if (st) {
        char m[512];
        lib_message(ctx, st, m, sizeof m);
        qa_say(err, errlen, "quantizing the activations failed: %s", m);
        qa_layer_free(L);
        return -1;
    }
    double *X = x_double(L, 0), *Xa = NULL, *Xa4 = NULL;
    int rc = 0;
    if (!X || qa_gemm_f64(X, M, L->W, N, K, L->Yref) || !(Xa = x_double(L, 8)) ||
        qa_gemm_f64(Xa, M, L->W, N, K, L->Yact) || !(Xa4 = x_double(L, 4)) ||
        qa_gemm_f64(Xa4, M, L->W, N, K, L->Yact4)) {
        qa_say(err, errlen, "out of memory computing the reference products");
        qa_layer_free(L);
        rc = -1;
    }
    free(X);
    free(Xa);
    free(Xa4);
    return rc;
}

/* ||Y - Y_act||_F / ||Y_ref||_F: the error the weights add to the
 * activations' own (Y_act of `bits`-bit activations), in the same units as
 * rel_error. */
/* ||Y - act||_F / ||Y_ref||_F. */
static double share_over(const double *Y, const double *act, const qa_layer *L, size_t count)
{
    double e = 0, r = 0;
    for (size_t i = 0; i < count; i++) {
        e += (Y[i] - act[i]) * (Y[i] - act[i]);
        r += L->Yref[i] * L->Yref[i];
    }
    return r > 0 ? sqrt(e / r) : (e > 0 ? INFINITY : 0);
}

/* A two-part layer (w4ax, w4ax-s) on L's tokens: quantized for the layer
 * (w4ax: its channel order, two scales per token; w4ax-s: the caller's
 * order, one scale), the reference GEMM into Y, and the
 * "activations only" product of those tokens, in double and the caller's
 * order, into *Yact (malloc'ed). */
static qjit_status two_part_gemm(qjit_context *ctx, const qa_layer *L, const void *packed, size_t bytes,
                                 const qjit_activation_info *ai, float *Y, double **Yact)
{
    int64_t M = L->M, K = L->K;
    size_t xb = array_bytes(M, K, 1), sb = array_bytes(M, ai->parts, sizeof(float));
    int8_t *Xq = malloc(xb);
    float *sx = malloc(sb);
    double *Xd = malloc(array_bytes(M, K, sizeof(double)));
    uint32_t *perm = malloc(array_bytes(K, 1, sizeof(uint32_t)));
    *Yact = malloc(array_bytes(M, L->N, sizeof(double)));
    qjit_status st = !Xq || !sx || !Xd || !perm || !*Yact ? QJIT_OUT_OF_MEMORY : QJIT_OK;
    if (!st)
        st = qjit_reference_quantize_activations_for(ctx, packed, bytes, M, L->X, Xq, sx);
    if (!st)
        st = qjit_reference_gemm(ctx, packed, bytes, M, Xq, sx, NULL, Y);
    /* The tokens as the layer holds them, back in the caller's order. */
    if (!st)
        st = qjit_weights_channel_order(ctx, packed, bytes, perm);
    for (int64_t m = 0; !st && m < M; m++)
        for (int64_t j = 0; j < K; j++)
            Xd[m * K + perm[j]] = (double)Xq[m * K + j] *
                                  (double)sx[ai->parts == 2 ? 2 * m + (j < ai->a8_channels ? 0 : 1) : m];
    if (!st && qa_gemm_f64(Xd, M, L->W, L->N, K, *Yact))
        st = QJIT_OUT_OF_MEMORY;
    free(Xq);
    free(sx);
    free(Xd);
    free(perm);
    if (st) {
        free(*Yact);
        *Yact = NULL;
    }
    return st;
}

static double weight_share(const double *Y, const qa_layer *L, int bits, size_t count)
{
    const double *act = bits == 4 ? L->Yact4 : L->Yact;
    double e = 0, r = 0;
    for (size_t i = 0; i < count; i++) {
        e += (Y[i] - act[i]) * (Y[i] - act[i]);
        r += L->Yref[i] * L->Yref[i];
    }
    return r > 0 ? sqrt(e / r) : (e > 0 ? INFINITY : 0);
}

int qa_row_compute(qjit_context *ctx, const qa_layer *L, qjit_scheme scheme, int group, double sparsity,
                   int block_n, int block_k, double a8, qa_row *out, char *err, size_t errlen)
{
    char m[512];
    const char *name = qjit_scheme_name(scheme);
    if (!name)
        name = "?";
    /* The scheme's activations: the layer's INT8 or INT4 tokens. */
    const int bits = qjit_scheme_activation_bits(scheme) == 4 ? 4 : 8;
    qjit_quantize_options o;
    qjit_quantize_options_init(&o);
    o.sparsity = sparsity;
    o.block_n = block_n;
    o.block_k = block_k;
    o.a8_fraction = a8;
    if (sparsity > 0 || a8 > 0) {
        o.calib = L->calib;
        o.calib_dtype = QJIT_DTYPE_F16;
        o.calib_rows = QA_CALIB_ROWS;
    }
    size_t cap = 0, written = 0;
    qjit_status st = qjit_packed_size_ex(ctx, scheme, group, L->N, L->K, &o, &cap);
    if (st) {
        lib_message(ctx, st, m, sizeof m);    /* the same checks as the quantizer's, the same words */
        qa_say(err, errlen, "%s g=%d: %s", name, group, m);
        return -1;
    }
    size_t yb = array_bytes(L->M, L->N, sizeof(float)), db = array_bytes(L->M, L->N, sizeof(double));
    double *Yact_own = NULL;   /* a two-part layer's "activations only" product, its own tokens */
    void *packed = malloc(cap);
    float *Y = yb ? malloc(yb) : NULL;
    double *Yd = db ? malloc(db) : NULL;
    int rc = -1;
    if (!packed || !Y || !Yd) {
        qa_say(err, errlen, "%s g=%d: out of memory (%zu bytes of packed weights)", name, group, cap);
        goto done;
    }
    qjit_weights_info info;
    qjit_residual_info rinfo;
    qjit_residual_info_init(&rinfo);
    const char *what = "quantizing the weights";
    st = qjit_quantize_weights_ex(ctx, scheme, group, L->W, QJIT_DTYPE_F32, L->N, L->K, &o, packed, cap, &written);
    if (!st) {
        what = "reading the packed weights";
        st = qjit_weights_inspect(ctx, packed, written, &info);
    }
    if (!st)
        st = qjit_weights_residual(ctx, packed, written, &rinfo);
    qjit_activation_info ai;
    qjit_activation_info_init(&ai);
    if (!st)
        st = qjit_weights_activation(ctx, packed, written, &ai);
    if (!st && qa_two_part(scheme)) {
        what = "the layer's activations";
        st = two_part_gemm(ctx, L, packed, written, &ai, Y, &Yact_own);
    } else if (!st) {
        what = "the reference GEMM";
        st = bits == 4 ? qjit_reference_gemm(ctx, packed, written, L->M, L->Xq4, L->sx4, NULL, Y)
                       : qjit_reference_gemm(ctx, packed, written, L->M, L->Xq, L->sx, NULL, Y);
    }
    if (st) {
        lib_message(ctx, st, m, sizeof m);
        qa_say(err, errlen, "%s g=%d: %s failed: %s", name, group, what, m);
        goto done;
    }
    size_t count = (size_t)(L->M * L->N);
    for (size_t i = 0; i < count; i++)
        Yd[i] = Y[i];
    double rel, max_rel, weight = Yact_own ? share_over(Yd, Yact_own, L, count) : weight_share(Yd, L, bits, count);
    qa_errors(Yd, L->Yref, count, &rel, &max_rel);
    memset(out, 0, sizeof *out);
    out->scheme = scheme;
    out->group = group;
    out->rel_error = rel;
    out->max_error = max_rel;
    out->weight_error = weight;
    out->act_bits = bits;
    out->payload_bytes = info.payload_bytes;
    out->bits_per_weight = (double)info.payload_bytes * 8.0 / ((double)L->N * (double)L->K);
    out->alpha = info.alpha;
    out->sparsity = sparsity;
    out->density = rinfo.density;
    out->a8 = qa_two_part(scheme) ? a8 : 0.0;
    out->a8_channels = ai.a8_channels;
    rc = 0;
done:
    free(Yact_own);
    free(packed);
    free(Y);
    free(Yd);
    return rc;
}

int qa_row_floor(const qa_layer *L, int bits, qa_row *out, char *err, size_t errlen)
{
    if (bits != 8 && bits != 4) {
        qa_say(err, errlen, "activations are 8 or 4 bits, not %d", bits);
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->act_bits = bits;
    qa_errors(bits == 4 ? L->Yact4 : L->Yact, L->Yref, (size_t)(L->M * L->N), &out->rel_error, &out->max_error);
    return 0;
}

/*------------------------------------------------------------------------
 * The plan
 *------------------------------------------------------------------------*/

const char *qa_group_text(int group, char *buf, size_t size)
{
    if (group == 0)
        snprintf(buf, size, "per-ch");
    else
        snprintf(buf, size, "%d", group);
    return buf;
}

/* Whether the library refuses (scheme, group, options) on N x K: its reason in m. */
static int refused(qjit_context *ctx, qjit_scheme s, int group, int64_t N, int64_t K, const qjit_quantize_options *o,
                   char *m, size_t size)
{
    size_t bytes;
    qjit_status st = qjit_packed_size_ex(ctx, s, group, N, K, o, &bytes);
    if (st)
        lib_message(ctx, st, m, size);
    return st != QJIT_OK;
}

static void add_skip(qa_plan *p, qjit_scheme s, int group, double sparsity, const char *reason)
{
    qa_skip *k = &p->skips[p->nskips++];
    *k = (qa_skip){s, group, sparsity, ""};
    snprintf(k->reason, sizeof k->reason, "%.*s", (int)sizeof k->reason - 1, reason);
}

int qa_make_plan(qjit_context *ctx, const qa_args *a, qa_plan *plan, char *err, size_t errlen)
{
    qa_plan p;
    p.njobs = p.nskips = 0;
    for (int i = 0; i < a->nschemes; i++)
        for (int j = 0; j < a->ngroups; j++) {
            qjit_scheme s = a->schemes[i];
            int group = a->groups[j];
            char m[512];
            /* Does the scheme take the group at all? Ask on a shape every
             * group fits: K = the group itself when it is a multiple of 64,
             * per channel 256 (w4ax's activation blocks are 128 wide). */
            int64_t probe_k = group > 0 && group % 64 == 0 ? group : group == 0 ? 256 : 64;
            if (refused(ctx, s, group, 16, probe_k, NULL, m, sizeof m)) {
                add_skip(&p, s, group, 0, m);
                continue;
            }
            for (int b = 0; b < a->nsparsity; b++) {
                qjit_quantize_options o;
                qjit_quantize_options_init(&o);
                o.sparsity = a->sparsity[b];
                if (o.sparsity > 0) {
                    o.block_n = a->rblock_n;
                    o.block_k = a->rblock_k;
                }
                /* A budget the scheme does not take at this group: a skip.
                 * Asked on 128 rows and K a multiple of 128 as well, which
                 * every residual block shape divides (16..128 x 64 or 128). */
                if (o.sparsity > 0 &&
                    refused(ctx, s, group, 128, probe_k % 128 ? 2 * probe_k : probe_k, &o, m, sizeof m)) {
                    add_skip(&p, s, group, o.sparsity, m);
                    continue;
                }
                /* It does: then a refusal of this shape is the user's to fix. */
                if (refused(ctx, s, group, a->n, a->k, &o, m, sizeof m)) {
                    qa_say(err, errlen, "%s g=%d%s on a %lld x %lld layer: %s", qjit_scheme_name(s), group,
                           o.sparsity > 0 ? " with a residual" : "", a->n, a->k, m);
                    return -1;
                }
                /* w4ax, w4ax-s: a row per INT8 share (dense only: they take no residual). */
                for (int e = 0; e < (qa_two_part(s) && o.sparsity == 0 ? a->na8 : 1); e++)
                    p.jobs[p.njobs++] = (qa_job){s, group, o.sparsity, qa_two_part(s) ? a->a8[e] : 0.0};
            }
        }
    *plan = p;
    return 0;
}
