/* tune.c -- `qjit tune`: tuning records for a set of layers on the GPU in
 * hand (qjit_tune_shape), shipped with --export / --import. A client of
 * qjit.h alone. */
#define _GNU_SOURCE
#include "bench_args.h"
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SHAPES 64

static const char usage[] =
    "usage: qjit tune (--shapes NxK,... | --shapes-file FILE) [options]\n"
    "       qjit tune --import FILE | --export FILE [--cache-dir DIR]\n"
    "Measures, on this GPU, which GEMM variant serves each layer best at each token count\n"
    "and stores the M buckets found as a tuning record in the cache folder; layers created\n"
    "afterwards on a GPU of the same model, SM count and driver (and this qjit and its\n"
    "templates) use the record instead of the static table. Every recorded variant is\n"
    "checked bit-exact against the CPU reference first.\n"
    "  --shapes NxK,...     layers to tune (N output, K input channels)\n"
    "  --shapes-file FILE   the same from a file (NxK items, '#' comments)\n"
    "  --scheme NAME        w4a8-lqq (default), w4a8-qoq, w4a8-is, w8a8, w4a4, w4ax, w4ax-s\n"
    "  --group G            weight group size (0: per channel); default 128 where the\n"
    "                       scheme takes it, else per channel\n"
    "  --m LIST             token counts to measure (default: 1..4096 in 20 steps and the\n"
    "                       table's bucket edges); buckets end at these points\n"
    "  --dtype f16|bf16     the layers' tokens and outputs (default f16)\n"
    "  --bias               tune layers that have a bias (records of their own)\n"
    "  --reps N             timed calls per point, median (default 20)\n"
    "  --threads N          compile threads (default: every CPU)\n"
    "  --dry-run            measure and report, store nothing\n"
    "  --export FILE        afterwards, write every record of the cache into FILE\n"
    "  --import FILE        first, store the records of FILE (from --export) in the cache\n"
    "  --cache-dir DIR      the cache folder (default $QJIT_CACHE_DIR, ~/.cache/qjit)\n";

typedef struct tune_args {
    long long shapes[MAX_SHAPES][2];
    int nshapes;
    qjit_scheme scheme;
    int group;                   /* -1: the default */
    long long ms[QJIT_TUNE_MAX_POINTS];
    int nms;
    qjit_dtype dtype;
    int bias, reps, threads, dry_run;
    const char *export_file, *import_file, *cache_dir;
} tune_args;

static int parse(int argc, char **argv, tune_args *a)
{
    memset(a, 0, sizeof *a);
    a->scheme = QJIT_SCHEME_W4A8_LQQ;
    a->group = -1;
    a->dtype = QJIT_DTYPE_F16;
    char err[512] = "";
    for (int i = 1; i < argc && !err[0]; i++) {
        const char *o = argv[i];
        const int flag = !strcmp(o, "--bias") || !strcmp(o, "--dry-run");
        if (!flag && i + 1 >= argc) {
            snprintf(err, sizeof err, "%s needs a value", o);
            break;
        }
        const char *v = flag ? NULL : argv[++i];
        long long n;
        char *end;
        if (!strcmp(o, "--shapes")) {
            if ((a->nshapes = qb_parse_shapes(v, a->shapes, MAX_SHAPES, err, sizeof err)) < 0)
                break;
        } else if (!strcmp(o, "--shapes-file")) {
            if ((a->nshapes = qb_read_shapes_file(v, a->shapes, MAX_SHAPES, err, sizeof err)) < 0)
                break;
        } else if (!strcmp(o, "--scheme")) {
            if (qjit_scheme_from_name(v, &a->scheme) != QJIT_OK)
                snprintf(err, sizeof err, "--scheme: unknown scheme '%s'", v);
        } else if (!strcmp(o, "--group")) {
            n = strtoll(v, &end, 10);
            if (*end || end == v || n < 0 || n > 4096)
                snprintf(err, sizeof err, "--group takes 0 (per channel) or a group size, not '%s'", v);
            a->group = (int)n;
        } else if (!strcmp(o, "--m")) {
            if ((a->nms = qb_parse_ints(v, 1, a->ms, QJIT_TUNE_MAX_POINTS, err, sizeof err)) < 0)
                break;
        } else if (!strcmp(o, "--dtype")) {
            if (strcmp(v, "f16") && strcmp(v, "bf16"))
                snprintf(err, sizeof err, "--dtype takes f16 or bf16, not '%s'", v);
            a->dtype = strcmp(v, "bf16") ? QJIT_DTYPE_F16 : QJIT_DTYPE_BF16;
        } else if (!strcmp(o, "--reps") || !strcmp(o, "--threads")) {
            n = strtoll(v, &end, 10);
            if (*end || end == v || n < (o[2] == 'r') || n > 1000)
                snprintf(err, sizeof err, "%s takes a count (%s..1000), not '%s'", o, o[2] == 'r' ? "1" : "0", v);
            *(o[2] == 'r' ? &a->reps : &a->threads) = (int)n;
        } else if (!strcmp(o, "--bias")) {
            a->bias = 1;
        } else if (!strcmp(o, "--dry-run")) {
            a->dry_run = 1;
        } else if (!strcmp(o, "--export")) {
            a->export_file = v;
        } else if (!strcmp(o, "--import")) {
            a->import_file = v;
        } else if (!strcmp(o, "--cache-dir")) {
            a->cache_dir = v;
        } else {
            snprintf(err, sizeof err, "unknown option '%s'", o);
        }
    }
    if (!err[0] && !a->nshapes && !a->export_file && !a->import_file)
        snprintf(err, sizeof err, "nothing to do: give --shapes, --shapes-file, --import or --export");
    if (err[0]) {
        fprintf(stderr, "qjit tune: %s\n%s", err, usage);
        return -1;
    }
    return 0;
}

/* The group of the run: the one asked for, else 128 where the scheme
 * takes it on every shape, else per channel. */
static int group_of(const tune_args *a)
{
    return a->group >= 0 ? a->group : cli_scheme_group(a->scheme, 128, (const long long (*)[2])a->shapes, a->nshapes);
}

static const char *phase_name(qjit_tune_phase p)
{
    return p == QJIT_TUNE_COMPILE ? "compiling" : p == QJIT_TUNE_TIME ? "timing" : "checking";
}

/* One line on the terminal, rewritten in place. */
static void show_progress(void *ud, const qjit_tune_progress *p)
{
    const char *layer = ud;
    char left[32] = "";
    if (p->seconds_left >= 0)
        snprintf(left, sizeof left, ", %.0f s left", p->seconds_left);
    char best[32] = "";
    if (p->best_speedup > 0)
        snprintf(best, sizeof best, ", best so far %.3fx", p->best_speedup);
    fprintf(stderr, "\r\033[K%s: %s %lld/%lld%s%s (%.0f s)", layer, phase_name(p->phase), (long long)p->done,
            (long long)p->total, best, left, p->elapsed_seconds);
    fflush(stderr);
}

static void print_report(const tune_args *a, int group, long long N, long long K, const qjit_tune_report *r)
{
    printf("\n%s g=%d %lldx%lld%s%s: %d candidates (%d failed), %lld timings; compile %.1f s, time %.1f s, check %.1f s, "
           "total %.1f s%s\n", qjit_scheme_name(a->scheme), group, N, K, a->dtype == QJIT_DTYPE_BF16 ? " bf16" : "",
           a->bias ? " bias" : "", r->candidates, r->failed, (long long)r->timings, r->compile_seconds,
           r->time_seconds, r->check_seconds, r->total_seconds, r->stored ? "; record stored" : "");
    printf("%8s %12s %12s %8s %7s\n", "M", "table us", "tuned us", "speedup", "bucket");
    for (int i = 0; i < r->npoints; i++) {
        const qjit_tune_point *p = &r->points[i];
        printf("%8lld %12.2f %12.2f %7.3fx %7d\n", (long long)p->M, p->static_us, p->tuned_us,
               p->static_us / p->tuned_us, p->bucket);
    }
    printf("geomean %.3fx over the table; latency %s in M\n", r->speedup,
           r->monotone ? "non-decreasing" : "NOT non-decreasing");
    for (int b = 0; b < r->nbuckets; b++) {
        char edge[32];
        if (r->buckets[b].max_m)
            snprintf(edge, sizeof edge, "M <= %lld", (long long)r->buckets[b].max_m);
        else
            snprintf(edge, sizeof edge, "any larger M");
        printf("  bucket %d (%s): %s\n", b, edge, r->buckets[b].key);
    }
}

int cmd_tune(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return 0;
        }
    tune_args a;
    if (parse(argc, argv, &a))
        return 2;
    /* Every layer and token count checked before any work. */
    const int group = group_of(&a);
    for (int i = 0; i < a.nshapes; i++) {
        size_t bytes;
        if (qjit_packed_size(a.scheme, group, a.shapes[i][0], a.shapes[i][1], &bytes) != QJIT_OK) {
            fprintf(stderr, "qjit tune: layer %lldx%lld cannot be packed with %s at group %d (N a multiple of 16, "
                    "K of 64 and of the group; the scheme's groups)\n", a.shapes[i][0], a.shapes[i][1],
                    qjit_scheme_name(a.scheme), group);
            return 2;
        }
    }
    for (int j = 0; j < a.nms; j++)
        if (a.ms[j] > 65536) {
            fprintf(stderr, "qjit tune: --m: %lld is more than 65536 tokens\n", a.ms[j]);
            return 2;
        }
    qjit_context *ctx = cli_context(NULL, a.cache_dir);
    if (!ctx)
        return 1;
    int rc = 0;
    qjit_status st;
    if (a.import_file) {
        size_t n = 0, bad = 0;
        if ((st = qjit_records_import(ctx, a.import_file, &n, &bad)))
            rc = cli_fail(ctx, st, "importing tuning records");
        else
            printf("%zu tuning record(s) of %s stored in %s, %zu damaged and skipped\n", n, a.import_file,
                   qjit_context_cache_dir(ctx), bad);
        rc |= bad != 0;
    }
    const int tty = isatty(2);
    double geo = 0, seconds = 0;
    int tuned = 0;
    for (int i = 0; i < a.nshapes && !rc; i++) {
        char layer[96];
        snprintf(layer, sizeof layer, "%s g=%d %lldx%lld", qjit_scheme_name(a.scheme), group, a.shapes[i][0],
                 a.shapes[i][1]);
        int64_t ms[QJIT_TUNE_MAX_POINTS];
        for (int j = 0; j < a.nms; j++)
            ms[j] = a.ms[j];
        qjit_tune_options o;
        qjit_tune_options_init(&o);
        o.ms = a.nms ? ms : NULL;
        o.n_ms = (size_t)a.nms;
        o.dtype = a.dtype;
        o.bias = a.bias;
        o.reps = a.reps;
        o.threads = a.threads;
        o.store = !a.dry_run;
        o.progress = tty ? show_progress : NULL;
        o.progress_ud = layer;
        qjit_tune_report r;
        memset(&r, 0, sizeof r);
        r.struct_size = sizeof r;
        st = qjit_tune_shape(ctx, a.scheme, group, a.shapes[i][0], a.shapes[i][1], &o, &r);
        if (tty)
            fprintf(stderr, "\r\033[K");
        if (st) {
            rc = cli_fail(ctx, st, layer);
            break;
        }
        print_report(&a, group, a.shapes[i][0], a.shapes[i][1], &r);
        fflush(stdout);
        geo += log(r.speedup);
        seconds += r.total_seconds;
        tuned++;
    }
    if (tuned)
        printf("\n%d layer(s) tuned in %.1f s; geomean %.3fx over the table\n", tuned, seconds, exp(geo / tuned));
    if (!rc && a.export_file) {
        size_t n = 0;
        if ((st = qjit_records_export(ctx, a.export_file, &n)))
            rc = cli_fail(ctx, st, "exporting tuning records");
        else
            printf("%zu tuning record(s) of %s written to %s\n", n, qjit_context_cache_dir(ctx), a.export_file);
    }
    qjit_context_destroy(ctx);
    return rc;
}
