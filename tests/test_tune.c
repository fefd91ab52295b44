/* test_tune.c -- the tuner without a GPU (runtime/tune.h): buckets chosen
 * from measurements, a whole tuning run on simulated timings (candidates
 * from the real templates, a variant that is not bit-exact left out, the
 * record stored and planned), tuners of several processes on one cache,
 * and the public entry's refusals. */
#define _GNU_SOURCE
#include "context.h"
#include "core.h"
#include "harness.h"
#include "plan.h"
#include "record.h"
#include "tune.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*--- buckets from measurements ---------------------------------------------*/

/* t[k][i] of nk keys at np points, as rows. */
#define T(k, i) t[(k) * np + (i)]

START_TEST(one_key_faster_everywhere_is_one_bucket)
{
    enum { np = 6, nk = 3 };
    double t[nk * np];
    int stat[np] = {0, 0, 0, 1, 1, 1}, pick[np];
    for (int i = 0; i < np; i++) {
        T(0, i) = 10 + i;
        T(1, i) = 11 + i;
        T(2, i) = 9 + i;          /* 5..10 % faster than either table key */
    }
    ck_assert_int_eq(qjit__tune_buckets(t, nk, np, stat, 8, 0.01, NULL, NULL, pick), 1);
    for (int i = 0; i < np; i++)
        ck_assert_int_eq(pick[i], 2);
}
END_TEST

START_TEST(two_regimes_split_where_they_cross)
{
    enum { np = 8, nk = 3 };
    double t[nk * np];
    int stat[np] = {0}, pick[np];
    for (int i = 0; i < np; i++) {
        T(0, i) = 100;            /* the table: one key for all */
        T(1, i) = i < 3 ? 50 : 99.5;   /* small M */
        T(2, i) = i < 3 ? 99.5 : 60;   /* large M */
    }
    ck_assert_int_eq(qjit__tune_buckets(t, nk, np, stat, 8, 0.01, NULL, NULL, pick), 2);
    for (int i = 0; i < np; i++)
        ck_assert_int_eq(pick[i], i < 3 ? 1 : 2);
    /* One bucket allowed: the key best over all points. */
    ck_assert_int_eq(qjit__tune_buckets(t, nk, np, stat, 1, 0.01, NULL, NULL, pick), 1);
    for (int i = 0; i < np; i++)
        ck_assert_int_eq(pick[i], 2);
}
END_TEST

/* A key never serves a point where it is slower than the table's, nor one
 * where it was not measured or failed; the table's key keeps a point unless
 * beaten by more than the margin; excluded keys serve nothing. */
START_TEST(a_key_serves_only_where_it_beats_the_table)
{
    enum { np = 4, nk = 3 };
    double t[nk * np] = {
        10, 10, 10, 10,           /* the table */
        5,  5,  10.5, 5,          /* much faster, but slower at point 2 */
        9.95, 0, -1, 9.95,        /* within the margin; unmeasured at 1; failed at 2 */
    };
    int stat[np] = {0, 0, 0, 0}, pick[np];
    ck_assert_int_eq(qjit__tune_buckets(t, nk, np, stat, 8, 0.01, NULL, NULL, pick), 3);
    ck_assert_int_eq(pick[0], 1);
    ck_assert_int_eq(pick[1], 1);
    ck_assert_int_eq(pick[2], 0);
    ck_assert_int_eq(pick[3], 1);
    unsigned char excluded[nk] = {0, 1, 0};
    ck_assert_int_eq(qjit__tune_buckets(t, nk, np, stat, 8, 0.01, excluded, NULL, pick), 1);
    for (int i = 0; i < np; i++)
        ck_assert_int_eq(pick[i], 0);
    /* Point 1 marked to take the table's key: it does, in a run of its own. */
    const unsigned char own[np] = {0, QJIT__TUNE_OWN, 0, 0};
    ck_assert_int_eq(qjit__tune_buckets(t, nk, np, stat, 8, 0.01, NULL, own, pick), 3);
    ck_assert_int_eq(pick[0], 1);
    ck_assert_int_eq(pick[1], 0);
    ck_assert_int_eq(pick[2], 0);
    ck_assert_int_eq(pick[3], 1);
    /* Nothing that may serve point 2: no buckets. */
    excluded[0] = 1;
    ck_assert_int_eq(qjit__tune_buckets(t, nk, np, stat, 8, 0.01, excluded, NULL, pick), 0);
}
END_TEST

/* The table's key of each point may differ (its own buckets); bucket
 * limits hold, fewer buckets win ties. */
START_TEST(bucket_limit_and_ties)
{
    enum { np = 10, nk = 10 };
    double t[nk * np];
    int stat[np], pick[np];
    for (int k = 0; k < nk; k++)
        for (int i = 0; i < np; i++)
            T(k, i) = k == i ? 50 : 100;   /* each point its own winner */
    for (int i = 0; i < np; i++)
        stat[i] = i;
    /* Every key is its point's table key: one run per key... */
    int nb = qjit__tune_buckets(t, nk, np, stat, 8, 0.01, NULL, NULL, pick);
    ck_assert_int_eq(nb, 0);     /* ...but ten runs do not fit in 8, and no key serves another's point */
    for (int i = 0; i < np; i++)
        stat[i] = 0;
    for (int i = 0; i < np; i++)
        T(0, i) = 100;
    nb = qjit__tune_buckets(t, nk, np, stat, 8, 0.01, NULL, NULL, pick);
    ck_assert_int_eq(nb, 8);
    int runs = 1;
    for (int i = 1; i < np; i++)
        runs += pick[i] != pick[i - 1];
    ck_assert_int_eq(runs, 8);
    /* Equal times everywhere: one run. */
    for (int k = 0; k < nk; k++)
        for (int i = 0; i < np; i++)
            T(k, i) = 100;
    ck_assert_int_eq(qjit__tune_buckets(t, nk, np, stat, 8, 0.01, NULL, NULL, pick), 1);
}
END_TEST

/*--- a run on simulated timings --------------------------------------------*/

typedef struct sim {
    uint64_t salt;               /* another process's noise */
    const char *wrong;           /* a key "not bit-exact", or NULL */
    int timed, checked, wrong_checked, validated;
    char last_key[1024];
    int switches;                /* how often the key timed changed (calls come grouped) */
    int64_t slow_m;              /* a point where every key but the table's runs twice as slow in a record */
    char table[1024];
} sim;

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* A time that depends on the key and M: each key a speed of its own, best
 * where M matches its tile's tokens, so different keys win at different
 * M. */
static double sim_time(void *ud, const char *key, int64_t M)
{
    sim *s = ud;
    s->timed++;
    if (strcmp(key, s->last_key)) {
        s->switches++;
        snprintf(s->last_key, sizeof s->last_key, "%s", key);
    }
    uint64_t h = fnv(key);
    double speed = 0.8 + 0.4 * (double)(h % 1000) / 1000.0, drift = ((double)((h >> 10) % 200) - 100) / 1000.0;
    double noise = 1 + 0.002 * (double)((h ^ s->salt ^ (uint64_t)M) % 5);
    const char *tile = strstr(key, "tile=");
    double bm = tile ? atof(tile + 5) : 64, fit = fabs(log2((M < 8 ? 8.0 : (double)M) / bm));
    return (10.0 + 0.05 * (double)M) * speed * (1 + drift * log2((double)M + 1) / 12) * (1 + 0.15 * fit) * noise;
}

/* The record's buckets at M: its bucket's key as timed alone, but 10 %
 * slower at M <= 16 where the bucket runs on past 16 tokens (as an
 * activation kernel chosen by bucket edges may be). */
static double sim_time_picks(void *ud, const char *picks, int64_t M)
{
    sim *s = ud;
    s->validated++;
    char key[1024];
    long long max_m = 0;
    for (const char *at = picks; *at;) {
        const char *nl = strchr(at, '\n');
        size_t len = nl ? (size_t)(nl - at) : strlen(at);
        if (sscanf(at, "%lld %1023s", &max_m, key) != 2)
            return -1;
        if (max_m == 0 || M <= max_m)
            break;
        at += len + (nl != NULL);
    }
    double us = sim_time(ud, key, M);
    if (M == s->slow_m && strcmp(key, s->table))
        us *= 2;
    return M <= 16 && (max_m == 0 || max_m > 16) ? 1.1 * us : us;
}

static int sim_check(void *ud, const char *key, int64_t M)
{
    sim *s = ud;
    (void)M;
    s->checked++;
    if (s->wrong && !strcmp(key, s->wrong)) {
        s->wrong_checked++;
        return 1;
    }
    return 0;
}

static qjit_context *tune_ctx(const char *cache)
{
    qjit_context_options o;
    qjit_context_options_init(&o);
    o.arch = "sm_90a";
    o.template_path = "";
    o.cache_dir = cache;
    qjit_context *ctx = NULL;
    if (qjit_context_create(&o, &ctx) != QJIT_OK)
        return NULL;
    return ctx;
}

static qjit__record_device sim_device(qjit_context *ctx)
{
    qjit__record_device d;
    if (qt_record_device(ctx, &d) != QJIT_OK)
        d.templates[0] = '\0';
    return d;
}

static qjit__plan_request layer_req(int64_t N, int64_t K)
{
    const qjit__plan_request r = {"w4a8-lqq", 128, N, K, "sm_90a", 132, NULL, 0, 0, 0, "f16", 0, NULL};
    return r;
}

static qjit_status sim_tune(qjit_context *ctx, const qjit__plan_request *req, sim *s, int store, qjit_tune_report *rep)
{
    const qjit__record_device dev = sim_device(ctx);
    const qjit__tune_ops ops = {NULL, sim_time, sim_check, sim_time_picks, s};
    qjit_tune_options o;
    qjit_tune_options_init(&o);
    o.store = store;
    memset(rep, 0, sizeof *rep);
    rep->struct_size = sizeof *rep;
    return qjit__tune_run(ctx, req, &dev, &ops, &o, rep);
}

/* The report's promises: every point at least as fast as the table
 * (strict: unless a table's key was found wrong), the buckets' edges at
 * points and increasing, the last unbounded. */
static void check_report(const qjit_tune_report *r, int strict)
{
    ck_assert_int_ge(r->npoints, 20);
    ck_assert_int_ge(r->nbuckets, 1);
    ck_assert_int_le(r->nbuckets, QJIT_TUNE_MAX_BUCKETS);
    ck_assert_int_eq(r->buckets[r->nbuckets - 1].max_m, 0);
    for (int b = 0; b + 1 < r->nbuckets; b++)
        ck_assert(r->buckets[b].max_m > 0 && (b == 0 || r->buckets[b].max_m > r->buckets[b - 1].max_m));
    for (int i = 0; i < r->npoints; i++) {
        const qjit_tune_point *p = &r->points[i];
        ck_assert_msg(p->tuned_us > 0 && (!strict || p->tuned_us <= p->static_us), "M = %lld: %.3f > %.3f", (long long)p->M,
                      p->tuned_us, p->static_us);
        ck_assert(i == 0 || p->M > r->points[i - 1].M);
        const qjit_tune_bucket *b = &r->buckets[p->bucket];
        ck_assert(b->max_m == 0 || p->M <= b->max_m);
        ck_assert(p->bucket == 0 || p->M > r->buckets[p->bucket - 1].max_m);
    }
    ck_assert(!strict || r->speedup >= 1.0);
}

START_TEST(a_run_chooses_checks_and_records)
{
    char *tmp = qt_tempdir("tune");
    qjit_context *ctx = tune_ctx(tmp);
    ck_assert_ptr_nonnull(ctx);
    const qjit__plan_request req = layer_req(4096, 11008);
    const qjit__record_device dev = sim_device(ctx);
    const qjit__record_layer layer = {"w4a8-lqq", 128, 4096, 11008, "f16", 0, 0, 0, 0};
    sim s = {1, NULL, 0, 0, 0, 0, "", 0, 0, ""};
    qjit_tune_report r1, r2;
    /* Measure only: nothing stored. */
    ck_assert_int_eq(sim_tune(ctx, &req, &s, 0, &r1), QJIT_OK);
    check_report(&r1, 1);
    ck_assert_int_eq(r1.stored, 0);
    ck_assert_int_eq(r1.timings + s.validated, s.timed);
    ck_assert_int_ge(s.validated, r1.npoints);
    /* The tokens the activation kernel spreads end a bucket where it ran
     * slower past them: every point at least as fast as the table,
     * timed as the record runs. */
    int ends16 = 0;
    for (int b = 0; b < r1.nbuckets; b++)
        ends16 |= r1.buckets[b].max_m == 16;
    ck_assert(ends16 || r1.buckets[0].max_m > 16);
    ck_assert_int_gt(r1.candidates, 40);
    ck_assert_int_gt(r1.speedup * 1000, 1000);   /* the simulation has faster keys than the table's */
    ck_assert_int_le(s.switches, r1.candidates + 40);   /* grouped by key: two passes at most per key */
    char *picks = NULL;
    ck_assert_int_eq(qjit__record_load(ctx, ctx->cache_dir, &layer, &dev, &picks), QJIT_NOT_FOUND);
    printf("simulated tuning: %d candidates, %lld timings, %d buckets, %.3fx\n", r1.candidates, (long long)r1.timings,
           r1.nbuckets, r1.speedup);
    /* Now the key that gains most over the table is found wrong by its
     * check: left out, the record made of others, every one checked. */
    int most = 0;
    for (int i = 1; i < r1.npoints; i++)
        if (r1.points[i].static_us / r1.points[i].tuned_us > r1.points[most].static_us / r1.points[most].tuned_us)
            most = i;
    ck_assert(r1.points[most].tuned_us < r1.points[most].static_us);
    char wrong[QJIT_TUNE_KEY_BYTES];
    snprintf(wrong, sizeof wrong, "%s", r1.buckets[r1.points[most].bucket].key);
    sim s2 = {1, wrong, 0, 0, 0, 0, "", 0, 0, ""};
    ck_assert_int_eq(sim_tune(ctx, &req, &s2, 1, &r2), QJIT_OK);
    check_report(&r2, 0);
    ck_assert_int_eq(r2.stored, 1);
    ck_assert_int_eq(s2.wrong_checked, 1);
    ck_assert_int_ge(s2.checked, 2);
    for (int b = 0; b < r2.nbuckets; b++)
        ck_assert_str_ne(r2.buckets[b].key, wrong);
    ck_assert_int_eq(qjit__record_load(ctx, ctx->cache_dir, &layer, &dev, &picks), QJIT_OK);
    ck_assert_ptr_null(strstr(picks, wrong));
    /* The record is what the report says, and the layer plans with it. */
    char line[QJIT_TUNE_KEY_BYTES + 32];
    for (int b = 0; b < r2.nbuckets; b++) {
        snprintf(line, sizeof line, "%lld %s\n", (long long)r2.buckets[b].max_m, r2.buckets[b].key);
        ck_assert_msg(strstr(picks, line), "bucket %d missing from the record:\n%s", b, picks);
    }
    qjit__plan_request pr = req;
    pr.picks = picks;
    qjit__layer_plan plan;
    pthread_mutex_lock(&ctx->lock);
    ck_assert_int_eq(qjit__plan_layer(ctx, &pr, &plan), QJIT_OK);
    pthread_mutex_unlock(&ctx->lock);
    ck_assert_int_eq(plan.nbuckets, r2.nbuckets);
    for (int b = 0; b < r2.nbuckets; b++)
        ck_assert_int_eq(plan.buckets[b].max_m, r2.buckets[b].max_m);
    qjit__plan_release(ctx, &plan);
    qjit__strfree(ctx, picks);
    /* The kernels the record runs, for pre-compilation without the GPU:
     * every bucket's GEMM and an activation kernel; a record that does not
     * plan (a variant of another group) is skipped. */
    const qjit__record_layer other = {"w4a8-lqq", 128, 4096, 4096, "f16", 0, 0, 0, 0};
    ck_assert_int_eq(qjit__record_store(ctx, ctx->cache_dir, &other, &dev,
                                        "0 kernel=gemm;scheme=w4a8-lqq;g=64;tile=32x128x128;warps=1x4;stages=3\n",
                                        NULL), QJIT_OK);
    char *keys = NULL;
    ck_assert_int_eq(qjit_record_variants(ctx, "sm_90a", &keys), QJIT_OK);
    for (int b = 0; b < r2.nbuckets; b++)
        ck_assert_msg(strstr(keys, r2.buckets[b].key), "bucket %d's variant not listed:\n%s", b, keys);
    ck_assert_ptr_nonnull(strstr(keys, "kernel=act-quant"));
    ck_assert_ptr_null(strstr(keys, "g=64"));
    int lines = 0;
    for (const char *c = keys; *c; c++)
        lines += *c == '\n';
    ck_assert_int_le(lines, 2 * r2.nbuckets);
    qjit_free(ctx, keys);
    ck_assert_int_eq(qjit_record_variants(ctx, "sm_99z", &keys), QJIT_UNSUPPORTED_ARCH);
    qjit_context_destroy(ctx);
    qt_rmtree(tmp);
    free(tmp);
}
END_TEST

/* A point whose chosen key runs slower as the record runs it than it was
 * timed alone (whatever its bucket's edges) takes the table's key. */
START_TEST(a_point_slower_in_the_record_takes_the_table_key)
{
    char *tmp = qt_tempdir("tune");
    qjit_context *ctx = tune_ctx(tmp);
    ck_assert_ptr_nonnull(ctx);
    const qjit__plan_request req = layer_req(4096, 11008);
    qjit__layer_plan plan;
    pthread_mutex_lock(&ctx->lock);
    ck_assert_int_eq(qjit__plan_layer(ctx, &req, &plan), QJIT_OK);
    pthread_mutex_unlock(&ctx->lock);
    sim s = {3, NULL, 0, 0, 0, 0, "", 0, 64, ""};
    for (int b = 0; b < plan.nbuckets; b++)
        if (plan.buckets[b].max_m == 0 || 64 <= plan.buckets[b].max_m) {
            snprintf(s.table, sizeof s.table, "%s", plan.buckets[b].gemm.key);
            break;
        }
    qjit__plan_release(ctx, &plan);
    ck_assert(s.table[0]);
    qjit_tune_report r;
    ck_assert_int_eq(sim_tune(ctx, &req, &s, 0, &r), QJIT_OK);
    check_report(&r, 1);
    int at = -1;
    for (int i = 0; i < r.npoints; i++)
        if (r.points[i].M == 64)
            at = i;
    ck_assert_int_ge(at, 0);
    ck_assert_str_eq(r.buckets[r.points[at].bucket].key, s.table);
    /* Without the slow point the simulation picks another key there. */
    sim fast = {3, NULL, 0, 0, 0, 0, "", 0, 0, ""};
    ck_assert_int_eq(sim_tune(ctx, &req, &fast, 0, &r), QJIT_OK);
    ck_assert_str_ne(r.buckets[r.points[at].bucket].key, s.table);
    qjit_context_destroy(ctx);
    qt_rmtree(tmp);
    free(tmp);
}
END_TEST

/* Token counts of the caller's: each a point, bucket edges at them. */
START_TEST(a_run_on_the_callers_points)
{
    char *tmp = qt_tempdir("tune");
    qjit_context *ctx = tune_ctx(tmp);
    ck_assert_ptr_nonnull(ctx);
    const qjit__plan_request req = layer_req(12288, 4096);
    const qjit__record_device dev = sim_device(ctx);
    const int64_t ms[] = {64, 1, 16, 16, 1024};
    sim s = {7, NULL, 0, 0, 0, 0, "", 0, 0, ""};
    const qjit__tune_ops ops = {NULL, sim_time, sim_check, sim_time_picks, &s};
    qjit_tune_options o;
    qjit_tune_options_init(&o);
    o.ms = ms;
    o.n_ms = 5;
    qjit_tune_report r;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(qjit__tune_run(ctx, &req, &dev, &ops, &o, &r), QJIT_OK);
    ck_assert_int_eq(r.npoints, 4);
    ck_assert_int_eq(r.points[0].M, 1);
    ck_assert_int_eq(r.points[3].M, 1024);
    for (int b = 0; b + 1 < r.nbuckets; b++)
        ck_assert(r.buckets[b].max_m == 1 || r.buckets[b].max_m == 16 || r.buckets[b].max_m == 64);
    const int64_t bad[] = {0};
    o.ms = bad;
    o.n_ms = 1;
    ck_assert_int_eq(qjit__tune_run(ctx, &req, &dev, &ops, &o, &r), QJIT_INVALID_ARGUMENT);
    qjit_context_destroy(ctx);
    qt_rmtree(tmp);
    free(tmp);
}
END_TEST

/*--- tuners of several processes on one cache ------------------------------*/

#define TUNERS 4
#define SHARED_LAYERS 2

static int64_t layer_n(int i)
{
    return 4096 + 1024 * i;
}

/* Each process tunes the shared layers and one of its own on the same
 * cache, at once, each with timings of its own: every record is there,
 * whole, and plans; no entry is damaged. */
START_TEST(tuners_share_a_cache)
{
    char *tmp = qt_tempdir("tune");
    int gate[2];
    ck_assert_int_eq(pipe(gate), 0);
    pid_t pids[TUNERS];
    for (int w = 0; w < TUNERS; w++) {
        pids[w] = fork();
        ck_assert_int_ge(pids[w], 0);
        if (pids[w] == 0) {
            close(gate[1]);
            char go;
            if (read(gate[0], &go, 1) < 0)
                _exit(3);
            qjit_context *ctx = tune_ctx(tmp);
            if (!ctx)
                _exit(4);
            int bad = 0;
            const int layers[] = {0, 1, SHARED_LAYERS + w};
            for (int j = 0; j < 3; j++) {
                const qjit__plan_request req = layer_req(layer_n(layers[(j + w) % 3]), 4096);
                sim s = {(uint64_t)w * 7919, NULL, 0, 0, 0, 0, "", 0, 0, ""};
                qjit_tune_report r;
                if (sim_tune(ctx, &req, &s, 1, &r) != QJIT_OK || !r.stored) {
                    fprintf(stderr, "tuner %d: %s\n", w, qjit_last_error(ctx));
                    bad = 1;
                }
            }
            qjit_context_destroy(ctx);
            _exit(bad);
        }
    }
    close(gate[0]);
    close(gate[1]);
    for (int w = 0; w < TUNERS; w++) {
        int status = 0;
        ck_assert_int_eq(waitpid(pids[w], &status, 0), pids[w]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "tuner %d failed", w);
    }
    qjit_context *ctx = tune_ctx(tmp);
    ck_assert_ptr_nonnull(ctx);
    const qjit__record_device dev = sim_device(ctx);
    for (int i = 0; i < SHARED_LAYERS + TUNERS; i++) {
        const qjit__record_layer layer = {"w4a8-lqq", 128, layer_n(i), 4096, "f16", 0, 0, 0, 0};
        char *picks = NULL;
        ck_assert_msg(qjit__record_load(ctx, ctx->cache_dir, &layer, &dev, &picks) == QJIT_OK, "layer %d: %s", i,
                      qjit_last_error(ctx));
        qjit__plan_request pr = layer_req(layer_n(i), 4096);
        pr.picks = picks;
        qjit__layer_plan plan;
        pthread_mutex_lock(&ctx->lock);
        ck_assert_int_eq(qjit__plan_layer(ctx, &pr, &plan), QJIT_OK);
        pthread_mutex_unlock(&ctx->lock);
        qjit__plan_release(ctx, &plan);
        qjit__strfree(ctx, picks);
    }
    size_t bad = 99;
    ck_assert_int_eq(qjit_cache_list(ctx, NULL, NULL, &bad), QJIT_OK);
    ck_assert_int_eq(bad, 0);
    qjit_context_destroy(ctx);
    qt_rmtree(tmp);
    free(tmp);
}
END_TEST

/*--- the public entry ------------------------------------------------------*/

/* Bad options and buffers are refused before the GPU is touched; without
 * one, the call says so. */
START_TEST(public_entry_refuses_bad_input)
{
    char *tmp = qt_tempdir("tune");
    qjit_context *ctx = tune_ctx(tmp);
    ck_assert_ptr_nonnull(ctx);
    const size_t bytes = 64 * 1024;
    uint8_t *junk = calloc(1, bytes);
    qjit_tune_options o;
    qjit_tune_options_init(&o);
    ck_assert_int_eq(o.reps, 20);
    ck_assert_int_eq(o.store, 1);
    ck_assert_int_eq(qjit_tune_layer(NULL, junk, bytes, &o, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_tune_layer(ctx, junk, bytes, &o, NULL), QJIT_CORRUPT_WEIGHTS);
    ck_assert_int_eq(qjit_tune_layer(ctx, NULL, 0, &o, NULL), QJIT_INVALID_ARGUMENT);
    o.reps = -1;
    ck_assert_int_eq(qjit_tune_layer(ctx, junk, bytes, &o, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), "reps"));
    qjit_tune_options_init(&o);
    const int64_t ms[] = {8, 70000};
    o.ms = ms;
    o.n_ms = 2;
    ck_assert_int_eq(qjit_tune_layer(ctx, junk, bytes, &o, NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), "ms[1]"));
    qjit_tune_options_init(&o);
    o.struct_size = sizeof o + 8;
    ck_assert_int_eq(qjit_tune_layer(ctx, junk, bytes, &o, NULL), QJIT_INVALID_ARGUMENT);
    qjit_tune_options_init(&o);
    o.dtype = (qjit_dtype)99;
    ck_assert_int_eq(qjit_tune_layer(ctx, junk, bytes, &o, NULL), QJIT_INVALID_ARGUMENT);
    qjit_tune_report r;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(qjit_tune_layer(ctx, junk, bytes, NULL, &r), QJIT_INVALID_ARGUMENT);   /* struct_size 0 */
    /* A shape the scheme cannot take. */
    ck_assert_int_eq(qjit_tune_shape(ctx, QJIT_SCHEME_W4A8_LQQ, 128, 4096, 100, NULL, NULL), QJIT_INVALID_ARGUMENT);
    /* A good layer: on this machine, no GPU (the test's own process may
     * have one: then it runs, elsewhere). */
    if (!qt_has_gpu()) {
        qjit_status st = qjit_tune_shape(ctx, QJIT_SCHEME_W4A8_LQQ, 128, 256, 256, NULL, NULL);
        ck_assert_msg(st == QJIT_NO_DRIVER || st == QJIT_NO_DEVICE || st == QJIT_CUDA, "%s", qjit_status_name(st));
    }
    free(junk);
    qjit_context_destroy(ctx);
    qt_rmtree(tmp);
    free(tmp);
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("tune");
    TCase *buckets = tcase_create("buckets");
    tcase_add_test(buckets, one_key_faster_everywhere_is_one_bucket);
    tcase_add_test(buckets, two_regimes_split_where_they_cross);
    tcase_add_test(buckets, a_key_serves_only_where_it_beats_the_table);
    tcase_add_test(buckets, bucket_limit_and_ties);
    qt_add(s, buckets, 0);
    TCase *runs = tcase_create("runs");
    tcase_add_test(runs, a_run_chooses_checks_and_records);
    tcase_add_test(runs, a_run_on_the_callers_points);
    tcase_add_test(runs, a_point_slower_in_the_record_takes_the_table_key);
    tcase_add_test(runs, public_entry_refuses_bad_input);
    tcase_set_timeout(runs, 300);
    qt_add(s, runs, 0);
    TCase *stress = tcase_create("stress");
    tcase_add_test(stress, tuners_share_a_cache);
    tcase_set_timeout(stress, 600);
    qt_add(s, stress, 0);
    return s;
}
