/* tune.c -- the tuner's core (tune.h): candidates per point, timings,
 * buckets from the measurements, checks, the record. The GPU's operations
 * are tune_gpu.c's. */
#define _GNU_SOURCE
#include "tune.h"
#include "context.h"
#include "core.h"
#include "lua_vm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Token counts measured when none are given (with the table's edges). */
static const int64_t DEFAULT_MS[] = {1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
                                     2048, 4096};
/* Another key must beat the table's by more than this at a point to serve
 * it: timing noise of a median of 20 calls is well under it. */
#define MARGIN 0.01

typedef struct tkey {
    char *key;
    uint32_t want;               /* the points it is timed at (bit i: point i) */
    int failed;                  /* could not run, or not bit-exact */
    int checked;                 /* bit-exact (checked once) */
} tkey;

typedef struct tuner {
    qjit_context *ctx;
    const qjit__plan_request *req;
    const qjit__tune_ops *ops;
    const qjit_tune_options *opts;
    double t0, phase_t0;
    int np;
    int64_t pts[QJIT_TUNE_MAX_POINTS];
    int stat[QJIT_TUNE_MAX_POINTS];        /* the table's key at each point */
    unsigned char ends[QJIT_TUNE_MAX_POINTS]; /* QJIT__TUNE_END / _OWN marks (qjit__tune_buckets) */
    tkey *keys;
    int nkeys, cap;
    double *t;                             /* nkeys x np; 0: not timed; < 0: failed */
    int tcap;
    double last_report;
} tuner;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void qjit_tune_options_init(qjit_tune_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->dtype = QJIT_DTYPE_F16;
    opts->reps = 20;
    opts->store = 1;
}

/*--- progress --------------------------------------------------------------*/

/* Geomean over the points timed of the table's time over the best one. */
static double best_speedup(const tuner *t)
{
    double sum = 0;
    int n = 0;
    for (int i = 0; i < t->np; i++) {
        double s = t->t[(size_t)t->stat[i] * (size_t)t->np + (size_t)i], best = s;
        for (int k = 0; k < t->nkeys && s > 0; k++) {
            double v = t->t[(size_t)k * (size_t)t->np + (size_t)i];
            if (v > 0 && v < best && !t->keys[k].failed)
                best = v;
        }
        if (s > 0) {
            sum += log(s / best);
            n++;
        }
    }
    return n ? exp(sum / n) : 0;
}

void qjit__tune_progress(void *tuner_, qjit_tune_phase phase, int64_t done, int64_t total)
{
    tuner *t = tuner_;
    if (!t->opts->progress)
        return;
    double now = now_s();
    if (done > 0 && done < total && now - t->last_report < 0.2)
        return;
    t->last_report = now;
    const double spent = now - t->phase_t0;
    qjit_tune_progress p = {phase, done, total, now - t->t0, done > 0 ? spent * (double)(total - done) / (double)done : -1,
                            t->t ? best_speedup(t) : 0};
    t->opts->progress(t->opts->progress_ud, &p);
}

/*--- the points and their candidates ---------------------------------------*/

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

qjit_status qjit__tune_check_ms(qjit_context *ctx, const qjit_tune_options *opts)
{
    if (!opts->ms)
        return QJIT_OK;
    if (opts->n_ms == 0 || opts->n_ms > QJIT_TUNE_MAX_POINTS)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_tune_options.n_ms = %zu: 1 to %d token counts", opts->n_ms,
                           QJIT_TUNE_MAX_POINTS);
    for (size_t i = 0; i < opts->n_ms; i++)
        if (opts->ms[i] < 1 || opts->ms[i] > QJIT__TUNE_MAX_M)
            return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_tune_options.ms[%zu] = %lld is not in 1..%d", i,
                               (long long)opts->ms[i], QJIT__TUNE_MAX_M);
    return QJIT_OK;
}

/* The sorted, distinct points: the caller's, or the default list with the
 * table's bucket edges. */
static qjit_status make_points(tuner *t, const qjit__layer_plan *table)
{
    int64_t v[QJIT_TUNE_MAX_POINTS * 2];
    int n = 0;
    qjit_status st = qjit__tune_check_ms(t->ctx, t->opts);
    if (st)
        return st;
    if (t->opts->ms) {
        for (size_t i = 0; i < t->opts->n_ms; i++)
            v[n++] = t->opts->ms[i];
    } else {
        for (size_t i = 0; i < sizeof DEFAULT_MS / sizeof DEFAULT_MS[0]; i++)
            v[n++] = DEFAULT_MS[i];
        for (int b = 0; b < table->nbuckets; b++)
            if (table->buckets[b].max_m > 0 && table->buckets[b].max_m <= 4096)
                v[n++] = table->buckets[b].max_m;
    }
    qsort(v, (size_t)n, sizeof v[0], cmp_i64);
    t->np = 0;
    for (int i = 0; i < n; i++)
        if (!t->np || v[i] != t->pts[t->np - 1]) {
            if (t->np == QJIT_TUNE_MAX_POINTS)
                return qjit__error(t->ctx, QJIT_INVALID_ARGUMENT, "more than %d distinct token counts to tune",
                                   QJIT_TUNE_MAX_POINTS);
            t->pts[t->np++] = v[i];
        }
    return QJIT_OK;
}

/* The index of key (added, to be timed at point i, if new); -1 when out of
 * memory. */
static int add_key(tuner *t, const char *key, int i)
{
    for (int k = 0; k < t->nkeys; k++)
        if (!strcmp(t->keys[k].key, key)) {
            t->keys[k].want |= 1u << i;
            return k;
        }
    if (t->nkeys == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        tkey *keys = qjit__realloc(t->ctx, t->keys, (size_t)t->cap * sizeof *keys, (size_t)cap * sizeof *keys);
        if (!keys)
            return -1;
        t->keys = keys;
        t->cap = cap;
    }
    tkey *k = &t->keys[t->nkeys];
    memset(k, 0, sizeof *k);
    if (!(k->key = qjit__strdup(t->ctx, key)))
        return -1;
    k->want = 1u << i;
    return t->nkeys++;
}

/* The table's bucket of M. */
static const qjit__bucket_plan *table_bucket(const qjit__layer_plan *table, int64_t M)
{
    for (int b = 0; b < table->nbuckets; b++)
        if (table->buckets[b].max_m == 0 || M <= table->buckets[b].max_m)
            return &table->buckets[b];
    return &table->buckets[table->nbuckets - 1];
}

/* Every point's candidates (the table's key first). Caller holds ctx->lock. */
static qjit_status gather(tuner *t, const qjit__layer_plan *table)
{
    const qjit__plan_request *r = t->req;
    qjit__lua *L;
    qjit_status st = qjit__context_lua(t->ctx, &L);
    char group[16], N[24], K[24], sms[16], bias[4], rbn[16], rbk[16], rblocks[24], max_m[24];
    snprintf(group, sizeof group, "%d", r->group);
    snprintf(N, sizeof N, "%lld", (long long)r->N);
    snprintf(K, sizeof K, "%lld", (long long)r->K);
    snprintf(sms, sizeof sms, "%d", r->sms);
    snprintf(bias, sizeof bias, "%d", r->bias);
    snprintf(rbn, sizeof rbn, "%d", r->rblock_n);
    snprintf(rbk, sizeof rbk, "%d", r->rblock_k);
    snprintf(rblocks, sizeof rblocks, "%lld", (long long)r->rblocks);
    for (int i = 0; !st && i < t->np; i++) {
        if ((t->stat[i] = add_key(t, table_bucket(table, t->pts[i])->gemm.key, i)) < 0)
            return qjit__error(t->ctx, QJIT_OUT_OF_MEMORY, "out of memory");
        snprintf(max_m, sizeof max_m, "%lld", (long long)t->pts[i]);
        const char *args[] = {r->scheme, group, N, K, r->arch, sms, max_m, r->dtype ? r->dtype : "f16", bias,
                              rbn, rbk, rblocks};
        qjit__lua_result res;
        if ((st = qjit__lua_call(L, "dispatch.lua", "candidates", 12, args, &res)))
            break;
        for (char *save = NULL, *k = strtok_r(res.text, "\n", &save); k && !st; k = strtok_r(NULL, "\n", &save))
            if (add_key(t, k, i) < 0)
                st = qjit__error(t->ctx, QJIT_OUT_OF_MEMORY, "out of memory");
        qjit__lua_result_release(L, &res);
    }
    return st;
}

/* The kernels every candidate launches (its GEMM and activation kernels),
 * each once. Caller holds ctx->lock. */
static qjit_status kernels_of(tuner *t, char ***out, int *n, int *out_cap)
{
    int cap = 4 * t->nkeys + 8, m = 0;
    char **v = qjit__calloc(t->ctx, (size_t)cap * sizeof *v);
    if (!v)
        return qjit__error(t->ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    qjit_status st = QJIT_OK;
    for (int k = 0; k < t->nkeys && !st; k++) {
        qjit__plan_request r = *t->req;
        r.variant = t->keys[k].key;
        qjit__layer_plan p;
        if (qjit__plan_layer(t->ctx, &r, &p) != QJIT_OK) {
            qjit__log(t->ctx, "tune: candidate %s left out: %s", t->keys[k].key, qjit_last_error(t->ctx));
            t->keys[k].failed = 1;
            qjit__plan_release(t->ctx, &p);
            continue;
        }
        for (int b = 0; b < p.nbuckets && !st; b++) {
            const char *ks[2] = {p.buckets[b].gemm.key, p.buckets[b].has_quant ? p.buckets[b].quant.key : NULL};
            for (int j = 0; j < 2 && !st; j++) {
                int seen = !ks[j];
                for (int i = 0; i < m && !seen; i++)
                    seen = !strcmp(v[i], ks[j]);
                if (seen)
                    continue;
                if (m == cap) {
                    char **w = qjit__realloc(t->ctx, v, (size_t)cap * sizeof *v, (size_t)cap * 2 * sizeof *v);
                    if (!w) {
                        st = qjit__error(t->ctx, QJIT_OUT_OF_MEMORY, "out of memory");
                        break;
                    }
                    v = w;
                    cap *= 2;
                }
                if (!(v[m] = qjit__strdup(t->ctx, ks[j])))
                    st = qjit__error(t->ctx, QJIT_OUT_OF_MEMORY, "out of memory");
                else
                    m++;
            }
        }
        qjit__plan_release(t->ctx, &p);
    }
    *out = v;
    *n = m;
    *out_cap = cap;
    return st;
}

/*--- timing ----------------------------------------------------------------*/

static double *cell(tuner *t, int k, int i)
{
    return &t->t[(size_t)k * (size_t)t->np + (size_t)i];
}

/* Times key k at every point of `want` not timed yet; `step` counts. */
static void time_key(tuner *t, int k, uint32_t want, int64_t *step, int64_t total)
{
    for (int i = 0; i < t->np; i++) {
        if (!(want >> i & 1) || *cell(t, k, i) != 0)
            continue;
        double us = t->keys[k].failed ? -1 : t->ops->time(t->ops->ud, t->keys[k].key, t->pts[i]);
        *cell(t, k, i) = us > 0 ? us : -1;
        if (us <= 0)
            t->keys[k].failed = 1;
        qjit__tune_progress(t, QJIT_TUNE_TIME, ++*step, total);
    }
}

static int64_t bits(uint32_t v)
{
    int64_t n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* Every candidate at its points (the table's keys first, so that the best
 * speedup has a base), then every point's winner at every point. */
static void time_all(tuner *t)
{
    int64_t step = 0, total = 0;
    for (int k = 0; k < t->nkeys; k++)
        total += bits(t->keys[k].want);
    uint32_t all = t->np == 32 ? 0xffffffffu : (1u << t->np) - 1;
    /* Winners will be timed everywhere: an estimate of that to come. */
    total += (int64_t)t->np * (t->np - 1);
    t->phase_t0 = now_s();
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < t->nkeys; k++) {
            int is_stat = 0;
            for (int i = 0; i < t->np; i++)
                is_stat |= t->stat[i] == k;
            if (is_stat == (pass == 0))
                time_key(t, k, t->keys[k].want, &step, total);
        }
    unsigned char *win = qjit__calloc(t->ctx, (size_t)t->nkeys);
    for (int i = 0; win && i < t->np; i++) {
        int best = t->stat[i];
        for (int k = 0; k < t->nkeys; k++) {
            double v = *cell(t, k, i), b = *cell(t, best, i);
            if (v > 0 && (b <= 0 || v < b))
                best = k;
        }
        win[best] = 1;
        win[t->stat[i]] = 1;
    }
    int64_t cross = 0;
    for (int k = 0; win && k < t->nkeys; k++)
        if (win[k] && !t->keys[k].failed)
            for (int i = 0; i < t->np; i++)
                cross += *cell(t, k, i) == 0;
    total = step + cross;
    for (int k = 0; win && k < t->nkeys; k++)
        if (win[k])
            time_key(t, k, all, &step, total);
    qjit__free(t->ctx, win, (size_t)t->nkeys);
}

/*--- buckets from the measurements -----------------------------------------*/

int qjit__tune_buckets(const double *t, int nkeys, int np, const int *stat, int max_buckets, double margin,
                       const unsigned char *excluded, const unsigned char *ends, int *pick)
{
    if (np < 1 || np > QJIT_TUNE_MAX_POINTS || max_buckets < 1 || nkeys < 1)
        return 0;
    /* Per key, prefix sums over the points of its cost and of the points it
     * may not serve. */
    const size_t w = (size_t)np + 1;
    double *sum = malloc(sizeof(double) * (size_t)nkeys * w);
    int *bad = malloc(sizeof(int) * (size_t)nkeys * w);
    if (!sum || !bad) {
        free(sum);
        free(bad);
        return 0;
    }
    for (int k = 0; k < nkeys; k++) {
        sum[(size_t)k * w] = 0;
        bad[(size_t)k * w] = 0;
        for (int i = 0; i < np; i++) {
            /* A table's key that is excluded (not bit-exact) bounds nothing. */
            double v = t[(size_t)k * (size_t)np + (size_t)i], s = t[(size_t)stat[i] * (size_t)np + (size_t)i];
            if (excluded && excluded[stat[i]])
                s = 0;
            int no = (excluded && excluded[k]) || v <= 0 ||
                     (k != stat[i] && ((s > 0 && v > s) || (ends && (ends[i] & QJIT__TUNE_OWN))));
            double c = no ? 0 : log(v) + (k == stat[i] ? log1p(-margin) : 0);
            sum[(size_t)k * w + (size_t)i + 1] = sum[(size_t)k * w + (size_t)i] + c;
            bad[(size_t)k * w + (size_t)i + 1] = bad[(size_t)k * w + (size_t)i] + no;
        }
    }
    /* best[b][j]: the least cost of points 0..j-1 in b runs; from[b][j]: where
     * its last run starts and its key. */
    /* ended[i]: how many of points 0..i-1 end a run. */
    int ended[QJIT_TUNE_MAX_POINTS + 1] = {0};
    for (int i = 0; i < np; i++)
        ended[i + 1] = ended[i] + (ends && (ends[i] & QJIT__TUNE_END));
    enum { B = QJIT_TUNE_MAX_BUCKETS };
    if (max_buckets > B)
        max_buckets = B;
    double best[B + 1][QJIT_TUNE_MAX_POINTS + 1];
    int from[B + 1][QJIT_TUNE_MAX_POINTS + 1] = {{0}}, with[B + 1][QJIT_TUNE_MAX_POINTS + 1] = {{0}};
    for (int b = 0; b <= max_buckets; b++)
        for (int j = 0; j <= np; j++)
            best[b][j] = INFINITY;
    best[0][0] = 0;
    for (int b = 1; b <= max_buckets; b++)
        for (int j = 1; j <= np; j++)
            for (int i = b - 1; i < j; i++) {
                if (!isfinite(best[b - 1][i]) || ended[j - 1] != ended[i])
                    continue;
                for (int k = 0; k < nkeys; k++) {
                    if (bad[(size_t)k * w + (size_t)j] != bad[(size_t)k * w + (size_t)i])
                        continue;
                    double c = best[b - 1][i] + sum[(size_t)k * w + (size_t)j] - sum[(size_t)k * w + (size_t)i];
                    if (c < best[b][j] - 1e-12) {
                        best[b][j] = c;
                        from[b][j] = i;
                        with[b][j] = k;
                    }
                }
            }
    free(sum);
    free(bad);
    int nb = 0;
    for (int b = 1; b <= max_buckets; b++)
        if (isfinite(best[b][np]) && (!nb || best[b][np] < best[nb][np] - 1e-9))
            nb = b;
    for (int b = nb, j = np; b > 0; b--) {
        for (int i = from[b][j]; i < j; i++)
            pick[i] = with[b][j];
        j = from[b][j];
    }
    return nb;
}

/*--- the run ---------------------------------------------------------------*/

/* Whether point i is the last of its bucket: the next point takes another
 * key, or a bucket must end at it. */
static int run_ends_at(const tuner *t, const int *pick, int i)
{
    return i + 1 == t->np || pick[i + 1] != pick[i] || (t->ends[i] & QJIT__TUNE_END);
}

/* The runs of pick as dispatch's picks text ("MAX_M KEY" lines, the last
 * 0), and the report's buckets. */
static char *picks_text(tuner *t, const int *pick, qjit_tune_report *rep, size_t *size)
{
    size_t len = 1;
    for (int i = 0; i < t->np; i++)
        len += strlen(t->keys[pick[i]].key) + 24;
    char *text = qjit__alloc(t->ctx, len), *at = text;
    if (!text)
        return NULL;
    *size = len;
    rep->nbuckets = 0;
    for (int i = 0; i < t->np; i++) {
        if (!run_ends_at(t, pick, i))
            continue;
        const int64_t max_m = i + 1 < t->np ? t->pts[i] : 0;
        at += sprintf(at, "%lld %s\n", (long long)max_m, t->keys[pick[i]].key);
        qjit_tune_bucket *b = &rep->buckets[rep->nbuckets++];
        b->max_m = max_m;
        snprintf(b->key, sizeof b->key, "%s", t->keys[pick[i]].key);
    }
    return text;
}

/* Chooses the buckets and checks their keys until every one is bit-exact;
 * pick[] holds the choice. */
static qjit_status choose(tuner *t, int *pick, int *nb)
{
    unsigned char *excluded = qjit__calloc(t->ctx, (size_t)t->nkeys);
    if (!excluded)
        return qjit__error(t->ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    qjit_status st = QJIT_OK;
    for (;;) {
        for (int k = 0; k < t->nkeys; k++)
            excluded[k] = (unsigned char)t->keys[k].failed;
        if (!(*nb = qjit__tune_buckets(t->t, t->nkeys, t->np, t->stat, QJIT_TUNE_MAX_BUCKETS, MARGIN, excluded, t->ends,
                                       pick))) {
            st = qjit__error(t->ctx, QJIT_INTERNAL, "tune: no variant ran and checked bit-exact at every point "
                             "(QJIT_LOG=1 says why each failed)");
            break;
        }
        /* Each run's key at the run's largest point. */
        int again = 0, runs = 0, checks = 0;
        for (int i = 0; i < t->np; i++)
            runs += run_ends_at(t, pick, i);
        t->phase_t0 = now_s();
        for (int i = 0; i < t->np && !again; i++) {
            if (!run_ends_at(t, pick, i))
                continue;
            tkey *k = &t->keys[pick[i]];
            if (k->checked)
                continue;
            int rc = t->ops->check ? t->ops->check(t->ops->ud, k->key, t->pts[i]) : 0;
            qjit__tune_progress(t, QJIT_TUNE_CHECK, ++checks, runs);
            if (rc) {
                qjit__log(t->ctx, "tune: %s %s at M = %lld; left out", k->key, rc > 0 ? "is NOT bit-exact" : "failed its check",
                          (long long)t->pts[i]);
                k->failed = again = 1;
            } else {
                k->checked = 1;
            }
        }
        if (!again)
            break;
    }
    qjit__free(t->ctx, excluded, (size_t)t->nkeys);
    return st;
}

static void report_points(tuner *t, const int *pick, const double *tuned, qjit_tune_report *rep)
{
    rep->npoints = t->np;
    rep->monotone = 1;
    double sum = 0;
    for (int i = 0, b = 0; i < t->np; i++) {
        qjit_tune_point *p = &rep->points[i];
        p->M = t->pts[i];
        p->static_us = *cell(t, t->stat[i], i);
        p->tuned_us = tuned[i];
        p->bucket = b;
        if (run_ends_at(t, pick, i))
            b++;
        if (p->static_us > 0)
            sum += log(p->static_us / p->tuned_us);
        if (i && p->tuned_us < 0.99 * rep->points[i - 1].tuned_us)
            rep->monotone = 0;
    }
    rep->speedup = exp(sum / t->np);
}

/* The record's meta lines: each point's times. */
static char *meta_text(tuner *t, const qjit_tune_report *rep, size_t *size)
{
    *size = 64 * (size_t)rep->npoints + 64;
    char *text = qjit__alloc(t->ctx, *size), *at = text;
    if (!text)
        return NULL;
    at += sprintf(at, "speedup=%.4f\n", rep->speedup);
    for (int i = 0; i < rep->npoints; i++)
        at += sprintf(at, "m%lld=%.3f,%.3f\n", (long long)rep->points[i].M, rep->points[i].static_us,
                      rep->points[i].tuned_us);
    return text;
}

static void release(tuner *t)
{
    for (int k = 0; k < t->nkeys; k++)
        qjit__strfree(t->ctx, t->keys[k].key);
    qjit__free(t->ctx, t->keys, (size_t)t->cap * sizeof *t->keys);
    qjit__free(t->ctx, t->t, (size_t)t->tcap * sizeof *t->t);
}

qjit_status qjit__tune_run(qjit_context *ctx, const qjit__plan_request *req, const qjit__record_device *dev,
                           const qjit__tune_ops *ops, const qjit_tune_options *opts, qjit_tune_report *rep)
{
    tuner t = {ctx, req, ops, opts, now_s(), 0, 0, {0}, {0}, {0}, NULL, 0, 0, NULL, 0, 0};
    t.phase_t0 = t.t0;
    qjit__layer_plan table;
    char **kernels = NULL;
    int nkernels = 0, kcap = 0;
    pthread_mutex_lock(&ctx->lock);
    qjit_status st = qjit__plan_layer(ctx, req, &table);
    if (!st && !(st = make_points(&t, &table)))
        st = gather(&t, &table);
    if (!st)
        st = kernels_of(&t, &kernels, &nkernels, &kcap);
    qjit__plan_release(ctx, &table);
    pthread_mutex_unlock(&ctx->lock);
    rep->candidates = t.nkeys;
    double at = now_s();
    if (!st && ops->prepare)
        st = ops->prepare(ops->ud, kernels, nkernels, &t);
    rep->compile_seconds = now_s() - at;
    for (int i = 0; i < nkernels; i++)
        qjit__strfree(ctx, kernels[i]);
    qjit__free(ctx, kernels, (size_t)kcap * sizeof *kernels);
    if (!st && !(t.t = qjit__calloc(ctx, sizeof *t.t * (size_t)t.nkeys * (size_t)t.np)))
        st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    t.tcap = t.nkeys * t.np;
    int pick[QJIT_TUNE_MAX_POINTS], nb = 0;
    at = now_s();
    if (!st)
        time_all(&t);
    rep->time_seconds = now_s() - at;
    for (int k = 0; k < t.nkeys; k++)
        for (int i = 0; i < t.np && t.t; i++)
            rep->timings += *cell(&t, k, i) > 0;
    at = now_s();
    double tuned[QJIT_TUNE_MAX_POINTS];
    char *picks = NULL, *meta = NULL;
    size_t picks_size = 0, meta_size = 0;
    if (!st)
        st = choose(&t, pick, &nb);
    /* The buckets as the record will run them, timed at every point: the
     * activation kernel of a bucket follows its edges, so a point slower
     * than the table's where its bucket runs past it gets a bucket that
     * ends at it; one still slower (or whose bucket already ends there)
     * takes the table's key; and the buckets are chosen again (a few
     * rounds). */
    for (int round = 0; !st; round++) {
        qjit__free(ctx, picks, picks_size);
        if (!(picks = picks_text(&t, pick, rep, &picks_size))) {
            st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
            break;
        }
        int more = 0;
        unsigned char ends_before[QJIT_TUNE_MAX_POINTS];
        memcpy(ends_before, t.ends, sizeof ends_before);
        t.phase_t0 = now_s();
        for (int i = 0; i < t.np; i++) {
            tuned[i] = ops->time_picks ? ops->time_picks(ops->ud, picks, t.pts[i]) : *cell(&t, pick[i], i);
            qjit__tune_progress(&t, QJIT_TUNE_CHECK, i + 1, t.np);
            if (tuned[i] <= 0) {
                st = qjit__error(ctx, QJIT_INTERNAL, "tune: the chosen buckets failed to run at M = %lld "
                                 "(QJIT_LOG=1 says why)", (long long)t.pts[i]);
                break;
            }
            const double s = *cell(&t, t.stat[i], i);
            if (s <= 0 || tuned[i] <= s * (1 + MARGIN) || pick[i] == t.stat[i] || (t.ends[i] & QJIT__TUNE_OWN))
                continue;
            t.ends[i] |= run_ends_at(&t, pick, i) ? QJIT__TUNE_OWN : QJIT__TUNE_END;
            more = 1;
        }
        if (st || !more || round == 4) {
            memcpy(t.ends, ends_before, sizeof ends_before);   /* the marks of the buckets timed */
            break;
        }
        /* Where no choice fits the new edges (more runs than a record
         * holds), the buckets before, as timed. */
        int before[QJIT_TUNE_MAX_POINTS];
        memcpy(before, pick, sizeof before);
        if (choose(&t, pick, &nb) != QJIT_OK) {
            memcpy(pick, before, sizeof before);
            memcpy(t.ends, ends_before, sizeof ends_before);
            break;
        }
    }
    rep->check_seconds = now_s() - at;
    for (int k = 0; k < t.nkeys; k++)
        rep->failed += t.keys[k].failed && !t.keys[k].checked;
    if (!st) {
        report_points(&t, pick, tuned, rep);
        if (!(meta = meta_text(&t, rep, &meta_size)))
            st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    }
    if (!st && opts->store) {
        /* Planned once before it is stored: a record the layer cannot plan
         * is never written. */
        qjit__plan_request r = *req;
        r.picks = picks;
        qjit__layer_plan p;
        pthread_mutex_lock(&ctx->lock);
        st = qjit__plan_layer(ctx, &r, &p);
        qjit__plan_release(ctx, &p);
        if (!st) {
            const qjit__record_layer layer = {req->scheme, req->group, req->N, req->K, req->dtype ? req->dtype : "f16",
                                              req->bias, req->rblock_n, req->rblock_k, req->rblocks};
            st = qjit__record_store(ctx, ctx->cache_dir, &layer, dev, picks, meta);
        }
        pthread_mutex_unlock(&ctx->lock);
        rep->stored = st == QJIT_OK;
    }
    qjit__free(ctx, picks, picks_size);
    qjit__free(ctx, meta, meta_size);
    release(&t);
    rep->total_seconds = now_s() - t.t0;
    return st;
}

/*--- the kernels records name ----------------------------------------------*/

typedef struct variant_list {
    qjit_context *ctx;
    const char *arch;
    char *text;                  /* keys, one a line */
    size_t len, cap;
    qjit_status st;
} variant_list;

static int has_line(const variant_list *v, const char *key)
{
    const size_t n = strlen(key);
    for (const char *at = v->text; at && (at = strstr(at, key)); at += n)
        if ((at == v->text || at[-1] == '\n') && at[n] == '\n')
            return 1;
    return 0;
}

static void add_line(variant_list *v, const char *key)
{
    const size_t n = strlen(key);
    if (v->st || has_line(v, key))
        return;
    if (v->len + n + 2 > v->cap) {
        size_t cap = 2 * (v->len + n + 2) + 4096;
        char *t = qjit__realloc(v->ctx, v->text, v->cap, cap);
        if (!t) {
            v->st = qjit__error(v->ctx, QJIT_OUT_OF_MEMORY, "out of memory");
            return;
        }
        v->text = t;
        v->cap = cap;
    }
    memcpy(v->text + v->len, key, n);
    v->len += n;
    v->text[v->len++] = '\n';
    v->text[v->len] = '\0';
}

/* Each record's layer planned with its picks for the arch: its kernels.
 * Caller holds ctx->lock. */
static int record_kernels(void *ud, const qjit__record_entry *r)
{
    variant_list *v = ud;
    const qjit__plan_request req = {r->layer.scheme, r->layer.group, r->layer.N, r->layer.K, v->arch, r->sms, NULL,
                                    r->layer.rblock_n, r->layer.rblock_k, r->layer.rblocks, r->layer.dtype,
                                    r->layer.bias, r->picks};
    qjit__layer_plan p;
    if (qjit__plan_layer(v->ctx, &req, &p) != QJIT_OK) {
        qjit__log(v->ctx, "tuning record of %s g=%d %lldx%lld does not plan for %s; skipped: %s", r->layer.scheme,
                  r->layer.group, (long long)r->layer.N, (long long)r->layer.K, v->arch, qjit_last_error(v->ctx));
    } else {
        for (int b = 0; b < p.nbuckets; b++) {
            if (p.buckets[b].has_quant)
                add_line(v, p.buckets[b].quant.key);
            add_line(v, p.buckets[b].gemm.key);
        }
    }
    qjit__plan_release(v->ctx, &p);
    return v->st != QJIT_OK;
}

qjit_status qjit_record_variants(qjit_context *ctx, const char *arch, char **keys)
{
    if (!ctx || !keys)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_record_variants: NULL argument");
    *keys = NULL;
    char target[16];
    if (arch && !qjit__normalize_arch(arch, target))
        return qjit__error(ctx, QJIT_UNSUPPORTED_ARCH, "'%s' is not an architecture name (e.g. sm_90a)", arch);
    pthread_mutex_lock(&ctx->lock);
    qjit_status st = arch ? QJIT_OK : qjit__context_arch_locked(ctx, target);
    variant_list v = {ctx, target, NULL, 0, 0, QJIT_OK};
    if (!st)
        st = qjit__record_each(ctx, ctx->cache_dir, record_kernels, &v);
    pthread_mutex_unlock(&ctx->lock);
    if (!st)
        st = v.st;
    if (!st && !(*keys = qjit__strdup(ctx, v.text ? v.text : "")))
        st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    qjit__free(ctx, v.text, v.cap);
    return st;
}
