/* test_compile.c -- the whole generation path without a GPU: NVRTC compiles
 * every default variant for every arch; the disk cache serves hits, heals
 * corrupt entries, follows template edits, survives concurrent writers and
 * refuses folders other users can write; template and NVRTC errors are
 * reported with where to look; ptxas's performance advisories (every wgmma
 * of a kernel serialized) are logged, and no default variant has one. */
#define _GNU_SOURCE
#include "harness.h"
#include "qjit.h"
#include "context.h"
#include "core.h"
#include "generate.h"
#include "compile.h"

#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a context's log said about ptxas's performance advisories, and about
 * registers spilled to local memory. */
typedef struct advisories {
    int count, spills;
    char first[1024], first_spill[1024], last_spill[1024];
} advisories;

static void count_advisories(void *ud, const char *line)
{
    advisories *a = ud;
    if (!strncmp(line, "ptxas spills for ", 17)) {
        if (!a->spills++)
            snprintf(a->first_spill, sizeof a->first_spill, "%s", line);
        snprintf(a->last_spill, sizeof a->last_spill, "%s", line);
    }
    if (strncmp(line, "ptxas advisory for ", 19))
        return;
    if (!a->count++)
        snprintf(a->first, sizeof a->first, "%s", line);
}

/* A context on cache with the templates folder before the built-in ones;
 * with `a`, its log counts ptxas's advisories there (else it is silent). */
static qjit_context *make_logged_ctx(const char *cache, const char *templates, const char *arch, advisories *a)
{
    qjit_context_options o;
    qjit_context_options_init(&o);
    o.arch = arch;
    o.cache_dir = cache;
    o.template_path = templates ? templates : "";
    if (a) {
        o.log = count_advisories;
        o.log_ud = a;
    }
    qjit_context *ctx = NULL;
    ck_assert_int_eq(qjit_context_create(&o, &ctx), QJIT_OK);
    return ctx;
}

static qjit_context *make_ctx(const char *cache, const char *templates, const char *arch)
{
    return make_logged_ctx(cache, templates, arch, NULL);
}

static void compile_ok(qjit_context *ctx, const char *key, qjit_compile_info *info)
{
    qjit_status st = qjit_compile(ctx, key, NULL, info);
    ck_assert_msg(st == QJIT_OK, "%s: %s\n%s", key, qjit_status_name(st), qjit_last_error(ctx));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The parts of a canonical key that choose which template text is emitted
 * (scheme, group, pipe, fused or not, the reduction, split or not, the
 * epilogue): tile, warps and stages only change numbers in it. */
static void template_shape(const char *key, char *out, size_t size)
{
    out[0] = '\0';
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", key);
    char *save = NULL;
    for (char *f = strtok_r(copy, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
        if (!strncmp(f, "tile=", 5) || !strncmp(f, "warps=", 6) || !strncmp(f, "stages=", 7))
            continue;
        if (!strncmp(f, "split=", 6))
            f = strcmp(f, "split=1") ? "split=n" : "split=1";
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s;", f);
    }
}

/* 1 the first time `shape` is seen (it is added to seen's nseen rows of 256
 * bytes, at most 256), 0 after. */
static int first_sight(char seen[][256], int *nseen, const char *shape)
{
    for (int i = 0; i < *nseen; i++)
        if (!strcmp(seen[i], shape))
            return 0;
    ck_assert_int_lt(*nseen, 256);
    snprintf(seen[(*nseen)++], 256, "%s", shape);
    return 1;
}

/* The default set compiles: every variant for sm_90a (the Hopper set the
 * runtime dispatches), and for every other arch one variant of each
 * template shape (template_shape) it has -- every template and scheme
 * compiled for every target (and on sm_90a the cp.async form of the wgmma
 * pipe too). */
START_TEST(default_set_compiles_for_every_arch)
{
    static const char *archs[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"};
    const char *arch = archs[_i];
    char *dir = qt_tempdir("arch");
    advisories adv = {0};
    qjit_context *ctx = make_logged_ctx(dir, NULL, arch, &adv);
    char *list = NULL;
    ck_assert_int_eq(qjit_default_variants(ctx, arch, &list), QJIT_OK);
    double times[256];
    int n = 0, nseen = 0;
    static char seen[256][256];
    char *save = NULL;
    for (char *p = strtok_r(list, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
        if (strcmp(arch, "sm_90a")) {
            char shape[256];
            template_shape(p, shape, sizeof shape);
            if (!first_sight(seen, &nseen, shape))
                continue;
        }
        qjit_compile_info info;
        compile_ok(ctx, p, &info);
        ck_assert_int_eq(info.from_cache, 0);
        if (strstr(p, "kernel=gemm") && n < 256)
            times[n++] = info.compile_seconds;
    }
    /* The default set on sm_90a uses the TMA form of gemm_wgmma.cu; its
     * cp.async form compiles too. */
    if (!strcmp(arch, "sm_90a")) {
        qjit_compile_info info;
        compile_ok(ctx, "kernel=gemm;pipe=wgmma;g=64;tile=128x128x128;warps=2x4;stages=4;split=2", &info);
        compile_ok(ctx, "kernel=gemm;pipe=wgmma;g=0;tile=64x256x128;warps=1x8;stages=4;split=1", &info);
        /* Explicit dequantization (a warpgroup writes INT8 weights for the
         * MMAs to read from shared memory), persistent or a CTA a tile, the
         * group parameters per tile and per channel. */
        compile_ok(ctx, "kernel=gemm;pipe=tma;g=128;tile=256x128x128;warps=2x4;stages=3;producer=wg;persist=1;excp=1", &info);
        compile_ok(ctx, "kernel=gemm;pipe=tma;scheme=w4a8-qoq;g=0;tile=128x256x128;warps=1x8;stages=4;producer=wg;excp=1",
                   &info);
        /* Two MMA warpgroups taking whole tiles in turn. */
        compile_ok(ctx, "kernel=gemm;pipe=tma;g=128;tile=128x128x128;warps=1x8;stages=6;producer=wg;persist=1;pingpong=1",
                   &info);
        /* Stream-K: the last wave's tiles shared out along K, with the MMA
         * warpgroups dequantizing, with a per-group rescale, and with a
         * dequantization warpgroup. */
        compile_ok(ctx, "kernel=gemm;pipe=tma;g=128;tile=128x256x128;warps=1x8;stages=4;producer=wg;persist=1;sk=1", &info);
        compile_ok(ctx, "kernel=gemm;pipe=tma;scheme=w4a8-is;g=128;tile=64x128x128;warps=1x4;stages=6;producer=wg;persist=1;sk=1",
                   &info);
        compile_ok(ctx, "kernel=gemm;pipe=tma;g=0;tile=256x128x128;warps=2x4;stages=3;producer=wg;persist=1;sk=1;excp=1", &info);
    }
    /* Sparse kernels (a residual in the main loop) of every pipe the target
     * has, for both schemes that take one: no advisory either (the residual
     * added to the A registers under a branch made ptxas sink their last
     * XOR past the fence and inject arrives, C7519/C7520, and the cp.async
     * wgmma pipe in a cluster serialize, C7515). */
    static const char *const sparse[] = {
        "tile=64x128x64;warps=2x2;stages=4;split=2", "pipe=decode;tile=16x32x64;warps=1x8",
        "pipe=decode;tile=16x32x64;warps=1x16;stages=3", "pipe=decode;tile=8x16x64;warps=1x16",
        "tile=16x64x128;warps=1x4;actq=fused", "pipe=wgmma;tile=64x128x128;warps=1x8;stages=4",
        "pipe=wgmma;tile=32x64x128;warps=1x4;stages=8;split=2;reduce=cluster",
        "pipe=wgmma;tile=64x128x128;warps=2x4;stages=4",
        "pipe=tma;tile=128x128x128;warps=1x8;stages=6", "pipe=tma;tile=128x64x128;warps=1x4;stages=8;split=2;reduce=cluster",
        /* Filled by a producer warpgroup (its second warp the residual's),
         * a CTA a tile and persistent. */
        "pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster;producer=wg",
        "pipe=tma;tile=128x256x128;warps=1x8;stages=3;producer=wg;persist=1;sk=1",
        /* ... with the residual's blocks in a ring of their own (the
         * table's twins: the dense kernel's stages). */
        "pipe=tma;tile=128x256x128;warps=1x8;stages=4;producer=wg;persist=1;sk=1;rpieces=32",
        "pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster;producer=wg;rpieces=8",
        "pipe=tma;tile=128x128x128;warps=1x8;stages=6;producer=wg;rpieces=16",
        /* The residual in a ring of its own beside the dense kernel's stages. */
        "pipe=tma;tile=128x128x128;warps=1x8;stages=4;rslots=1",
        "pipe=tma;tile=64x128x128;warps=2x4;stages=5;split=2;reduce=cluster;rslots=2",
    };
    /* The default set's spills, said (a few bytes stored once outside the
     * main loop cost nothing: where they are, only the SASS tells). */
    printf("%s: %d default variant(s) spill registers to local memory%s%s\n", arch, adv.spills,
           adv.spills ? ", the first: " : "", adv.first_spill);
    for (size_t i = 0; i < sizeof sparse / sizeof sparse[0]; i++)
        for (int q = 0; q < 2; q++) {
            if (strstr(sparse[i], "pipe=wgmma") || strstr(sparse[i], "pipe=tma")) {
                if (strcmp(arch, "sm_90a"))
                    continue;
            }
            char key[256];
            snprintf(key, sizeof key, "kernel=gemm;scheme=%s;g=128;sparsity=0.1;%s", q ? "w4a8-qoq" : "w4a8-lqq",
                     sparse[i]);
            qjit_compile_info info;
            const int spills = adv.spills;
            compile_ok(ctx, key, &info);
            /* The warpgroup pipes' sparse kernels spill nothing (a producer
             * warpgroup looking up the residual at 24 registers did). (The
             * decode and multistage ones on sm_80..89 spill 4..12 bytes.) */
            if (strstr(key, "pipe=wgmma") || strstr(key, "pipe=tma"))
                ck_assert_msg(adv.spills == spills, "%s spills registers: %s", key, adv.last_spill);
        }
    ck_assert_int_ge(n, 8);
    /* ptxas made none of them slower than written (such a kernel runs, and
     * is exact, at a fraction of its speed: only this log tells). */
    ck_assert_msg(adv.count == 0, "%d ptxas performance advisories, the first: %s", adv.count, adv.first);
    qsort(times, (size_t)n, sizeof times[0], cmp_double);
    printf("%s: %d GEMM variants, NVRTC compile median %.3f s (min %.3f, max %.3f)\n", arch, n, times[n / 2],
           times[0], times[n - 1]);
    size_t bad = 99;
    ck_assert_int_eq(qjit_cache_list(ctx, NULL, NULL, &bad), QJIT_OK);
    ck_assert_uint_eq(bad, 0);
    qjit_free(ctx, list);
    qjit_context_destroy(ctx);
    qt_rmtree(dir);
    free(dir);
}
END_TEST

/* The BF16 default set (qjit_default_variants_dtype): one variant per
 * template shape without its group and reduction (the dtype changes only
 * the conversions of tokens and outputs), on the oldest target and on
 * sm_90a, compiles without an advisory. */
START_TEST(bf16_set_compiles)
{
    static const char *archs[] = {"sm_80", "sm_90a"};
    const char *arch = archs[_i];
    char *dir = qt_tempdir("bf16");
    advisories adv = {0};
    qjit_context *ctx = make_logged_ctx(dir, NULL, arch, &adv);
    char *list = NULL;
    ck_assert_int_eq(qjit_default_variants_dtype(ctx, arch, QJIT_DTYPE_BF16, &list), QJIT_OK);
    static char seen[256][256];
    int nseen = 0, n = 0;
    char *save = NULL;
    for (char *p = strtok_r(list, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
        ck_assert_ptr_nonnull(strstr(p, "dtype=bf16"));
        char shape[256], coarse[256] = "";
        template_shape(p, shape, sizeof shape);
        char *fsave = NULL;
        for (char *f = strtok_r(shape, ";", &fsave); f; f = strtok_r(NULL, ";", &fsave))
            if (strncmp(f, "g=", 2) && strncmp(f, "reduce=", 7))
                snprintf(coarse + strlen(coarse), sizeof coarse - strlen(coarse), "%s;", f);
        if (!first_sight(seen, &nseen, coarse))
            continue;
        qjit_compile_info info;
        compile_ok(ctx, p, &info);
        n++;
    }
    ck_assert_int_ge(n, 10);
    ck_assert_msg(adv.count == 0, "%d ptxas performance advisories, the first: %s", adv.count, adv.first);
    printf("%s: %d BF16 variants compiled\n", arch, n);
    qjit_free(ctx, list);
    qjit_context_destroy(ctx);
    qt_rmtree(dir);
    free(dir);
}
END_TEST

static const char *KEY = "scheme=w4a8-lqq;g=128;tile=16x64x128;warps=1x4;stages=3;epi=i32";

START_TEST(hit_after_miss_and_across_contexts)
{
    char *dir = qt_tempdir("hit");
    qjit_context *ctx = make_ctx(dir, NULL, "sm_90a");
    qjit_compile_info a, b, c;
    compile_ok(ctx, KEY, &a);
    ck_assert_int_eq(a.from_cache, 0);
    ck_assert(a.compile_seconds > 0);
    compile_ok(ctx, KEY, &b);
    ck_assert_int_eq(b.from_cache, 1);
    ck_assert_str_eq(a.entry, b.entry);
    qjit_context_destroy(ctx);
    ctx = make_ctx(dir, NULL, "sm_90a");
    compile_ok(ctx, KEY, &c);
    ck_assert_int_eq(c.from_cache, 1);
    printf("cold %.3f s (NVRTC %.3f s), hit %.4f s\n", a.total_seconds, a.compile_seconds, c.total_seconds);
    /* Another arch is another entry. */
    qjit_compile_info d;
    ck_assert_int_eq(qjit_compile(ctx, KEY, "sm_80", &d), QJIT_OK);
    ck_assert_int_eq(d.from_cache, 0);
    ck_assert_str_ne(d.entry, a.entry);
    qjit_context_destroy(ctx);
    qt_rmtree(dir);
    free(dir);
}
END_TEST

/* Many keys on threads (qjit_compile_many): each compiled once into the
 * cache, a bad one reported by its own status and message while the others
 * still compile, and bad arguments refused before anything compiles. */
START_TEST(many_keys_on_threads)
{
    char *dir = qt_tempdir("many");
    qjit_context *ctx = make_ctx(dir, NULL, "sm_90a");
    const char *keys[] = {KEY, "scheme=w4a8-lqq;g=64;tile=1x1x1",
                          "scheme=w8a8;g=0;tile=16x64x128;warps=1x4;stages=3;epi=i32",
                          "scheme=w4a8-qoq;g=128;tile=16x64x128;warps=1x4;stages=3;epi=i32"};
    qjit_compile_result r[4];
    qjit_status st = qjit_compile_many(ctx, keys, 4, NULL, 2, r);
    ck_assert_int_ne(st, QJIT_OK);
    ck_assert_int_eq(st, r[1].status);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), keys[1]));
    ck_assert_msg(strstr(r[1].error, "tile"), "%s", r[1].error);
    for (int i = 0; i < 4; i++)
        if (i != 1) {
            ck_assert_msg(r[i].status == QJIT_OK, "%s: %s", keys[i], r[i].error);
            ck_assert_int_eq(r[i].info.from_cache, 0);
            ck_assert(r[i].info.compile_seconds > 0);
        }
    /* Again, on one thread and without results: every good key cached. */
    const char *good[] = {keys[0], keys[2], keys[3]};
    ck_assert_int_eq(qjit_compile_many(ctx, good, 3, NULL, 1, NULL), QJIT_OK);
    ck_assert_int_eq(qjit_compile_many(ctx, good, 3, NULL, 0, r), QJIT_OK);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(r[i].info.from_cache, 1);
    ck_assert_int_eq(qjit_compile_many(ctx, good, 0, NULL, 0, NULL), QJIT_OK);
    /* Bad arguments: nothing compiled. */
    const char *fresh[] = {"scheme=w4a8-lqq;g=64;tile=16x64x128;warps=1x4;stages=3;epi=i32", NULL};
    ck_assert_int_eq(qjit_compile_many(ctx, fresh, 2, NULL, 0, r), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), "key 1 of 2 is NULL"));
    ck_assert_int_eq(qjit_compile_many(ctx, fresh, -1, NULL, 0, r), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_compile_many(ctx, NULL, 1, NULL, 0, r), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_compile_many(ctx, fresh, 1, NULL, -2, r), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_compile_many(NULL, fresh, 1, NULL, 0, r), QJIT_INVALID_ARGUMENT);
    qjit_compile_info info;
    compile_ok(ctx, fresh[0], &info);
    ck_assert_int_eq(info.from_cache, 0);
    qjit_context_destroy(ctx);
    qt_rmtree(dir);
    free(dir);
}
END_TEST

/* The binary and facts handed out on a miss and on a hit are the same,
 * owned by the caller and released with the context's allocator; the facts
 * survive the round trip through the entry's text. */
START_TEST(entry_out_of_miss_and_hit_is_releasable)
{
    char *dir = qt_tempdir("own");
    qjit_context *ctx = make_ctx(dir, NULL, "sm_90a");
    qjit__kernel_facts first;
    for (int round = 0; round < 2; round++) {
        qjit__kernel_facts f;
        qjit_compile_info info;
        void *cubin = NULL;
        size_t bytes = 0;
        pthread_mutex_lock(&ctx->lock);
        qjit_status st = qjit__build_locked(ctx, KEY, NULL, &info, &f, &cubin, &bytes);
        pthread_mutex_unlock(&ctx->lock);
        ck_assert_msg(st == QJIT_OK, "%s", qjit_last_error(ctx));
        ck_assert_int_eq(info.from_cache, round);
        ck_assert_str_eq(f.name, "qjit_gemm_w4a8_lqq");
        ck_assert_str_eq(f.kind, "gemm");
        ck_assert_str_eq(f.arch, "sm_90a");
        ck_assert_int_eq(f.threads, 128);
        ck_assert_int_eq(f.pdl, 1);
        ck_assert_int_eq(f.cluster, 1);
        ck_assert_str_eq(f.signature, "qweight,gparams,scale,Xq,sx,Y,M,N,K");
        ck_assert_uint_gt(bytes, 1000);
        if (round == 0)
            first = f;
        else
            ck_assert_mem_eq(&first, &f, sizeof f);
        qjit__free(ctx, cubin, bytes);
    }
    qjit_context_destroy(ctx);
    qt_rmtree(dir);
    free(dir);
}
END_TEST

static void flip_byte(const char *path, long offset_from_end)
{
    FILE *f = fopen(path, "r+b");
    ck_assert_ptr_nonnull(f);
    fseek(f, -offset_from_end, SEEK_END);
    int c = fgetc(f);
    fseek(f, -offset_from_end, SEEK_END);
    fputc(c ^ 0x40, f);
    fclose(f);
}

START_TEST(corrupt_entry_is_healed)
{
    char *dir = qt_tempdir("heal");
    qjit_context *ctx = make_ctx(dir, NULL, "sm_90a");
    qjit_compile_info a, b, c;
    compile_ok(ctx, KEY, &a);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, a.entry);
    flip_byte(path, 100);
    size_t bad = 0;
    ck_assert_int_eq(qjit_cache_list(ctx, NULL, NULL, &bad), QJIT_OK);
    ck_assert_uint_eq(bad, 1);
    compile_ok(ctx, KEY, &b);
    ck_assert_int_eq(b.healed, 1);
    ck_assert_int_eq(b.from_cache, 0);
    ck_assert_int_eq(qjit_cache_list(ctx, NULL, NULL, &bad), QJIT_OK);
    ck_assert_uint_eq(bad, 0);
    /* Truncation is caught too. */
    ck_assert_int_eq(truncate(path, 300), 0);
    compile_ok(ctx, KEY, &c);
    ck_assert_int_eq(c.healed, 1);
    compile_ok(ctx, KEY, &c);
    ck_assert_int_eq(c.from_cache, 1);
    qjit_context_destroy(ctx);
    qt_rmtree(dir);
    free(dir);
}
END_TEST

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    ck_assert_ptr_nonnull(in);
    ck_assert_ptr_nonnull(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
}

/* A text file of at most 1 MB, read whole (the caller frees it). */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char *text = calloc(1, 1 << 20);
    size_t n = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

/* A user template folder shadowing the built-in gemm template. */
static char *user_templates(const char *extra_line_after, const char *extra)
{
    char *dir = qt_tempdir("tpl");
    char from[4096], to[4096];
    snprintf(from, sizeof from, "%s/gemm_multistage.cu", QJIT_SOURCE_TEMPLATES);
    snprintf(to, sizeof to, "%s/gemm_multistage.cu", dir);
    copy_file(from, to);
    if (extra) {
        /* Insert `extra` after the first line starting with extra_line_after. */
        char *text = read_text(to);
        char *at = strstr(text, extra_line_after);
        ck_assert_ptr_nonnull(at);
        at = strchr(at, '\n') + 1;
        FILE *f = fopen(to, "wb");
        fwrite(text, 1, (size_t)(at - text), f);
        fputs(extra, f);
        fputs(at, f);
        fclose(f);
        free(text);
    }
    return dir;
}

/* Ends a test that made a cache folder and a template folder (or none). */
static void finish(qjit_context *ctx, char *tpl, char *cache)
{
    qjit_context_destroy(ctx);
    if (tpl)
        qt_rmtree(tpl);
    qt_rmtree(cache);
    free(tpl);
    free(cache);
}

START_TEST(edited_template_is_used_without_rebuild)
{
    char *cache = qt_tempdir("edit");
    char *tpl = user_templates("// qjit variant", NULL);
    qjit_context *ctx = make_ctx(cache, tpl, "sm_90a");
    qjit_compile_info a, b, c;
    compile_ok(ctx, KEY, &a);
    compile_ok(ctx, KEY, &b);
    ck_assert_int_eq(b.from_cache, 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/gemm_multistage.cu", tpl);
    FILE *f = fopen(path, "ab");
    fputs("// an edit by a researcher\n", f);
    fclose(f);
    compile_ok(ctx, KEY, &c);
    ck_assert_int_eq(c.from_cache, 0);
    ck_assert_str_ne(c.entry, a.entry);
    char *src = NULL;
    size_t len;
    ck_assert_int_eq(qjit_generate(ctx, KEY, &src, &len), QJIT_OK);
    ck_assert_ptr_nonnull(strstr(src, "an edit by a researcher"));
    qjit_free(ctx, src);
    finish(ctx, tpl, cache);
}
END_TEST

/* ptxas's performance advisories reach the log, named by variant: the lines
 * of a log that carry one are found (and only those; a spill is logged
 * apart, not counted), and a template edit
 * that lets the compiler sink QoQ's per-channel dequantization (masks of the
 * loaded words) past the wgmma fence -- the pin of lib/wgmma_steps.cu taken
 * out -- is reported as serialized by ptxas 13.0, while the built-in
 * template compiles clean. */
START_TEST(performance_advisories_are_logged)
{
    char *cache = qt_tempdir("adv");
    advisories a = {0};
    qjit_context *plain = make_logged_ctx(cache, NULL, "sm_90a", &a);
    static const char log[] =
        "k.cu(31): warning #177-D: function \"cp_async16\" was declared but never referenced\n"
        "Remark: Potential Performance Loss is not a ptxas line here\n"
        "ptxas info    : Used 62 registers, used 1 barriers, 1024 bytes smem\n"
        "ptxas info    : (C7520) Potential Performance Loss: wgmma.mma_async instructions are serialized\n"
        "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized\n"
        "ptxas info    : (C7519) warpgroup.arrive is injected in around line 637 by compiler to allow use of "
        "registers in GMMA in function 'k'\n"
        "the note warpgroup.arrive is injected, not from ptxas\n"
        "ptxas warning : Registers are spilled to local memory in function 'k', 8 bytes spill stores, 8 bytes spill "
        "loads\n"
        "Registers are spilled to local memory, not from ptxas";
    ck_assert_uint_eq(qjit__nvrtc_advisories(plain, log, "KEY"), 3);
    ck_assert_int_eq(a.count, 3);
    /* A spill is logged, not counted as an advisory. */
    ck_assert_int_eq(a.spills, 1);
    ck_assert_str_eq(a.first_spill, "ptxas spills for KEY: Registers are spilled to local memory in function 'k', "
                                    "8 bytes spill stores, 8 bytes spill loads");
    ck_assert_str_eq(a.first, "ptxas advisory for KEY: (C7520) Potential Performance Loss: wgmma.mma_async "
                              "instructions are serialized");
    ck_assert_uint_eq(qjit__nvrtc_advisories(plain, "", "KEY"), 0);
    ck_assert_uint_eq(qjit__nvrtc_advisories(plain, NULL, "KEY"), 0);
    qjit_context_destroy(plain);

    static const char key[] = "scheme=w4a8-qoq;g=0;pipe=tma;tile=64x128x128;warps=1x8;stages=4;split=4";
    char *tpl = qt_tempdir("advtpl");
    char path[4096];
    snprintf(path, sizeof path, "%s/lib", tpl);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/lib/wgmma_steps.cu", QJIT_SOURCE_TEMPLATES);
    char *text = read_text(path);
    static const char pinned[] = "reg_pin(a[i][r / 4][r % 4]);", unpinned[] = "(void)0;";
    char *pin = strstr(text, pinned);
    ck_assert_ptr_nonnull(pin);
    memcpy(pin, unpinned, sizeof unpinned - 1);
    memmove(pin + sizeof unpinned - 1, pin + sizeof pinned - 1, strlen(pin + sizeof pinned - 1) + 1);
    snprintf(path, sizeof path, "%s/lib/wgmma_steps.cu", tpl);
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
    free(text);

    advisories edited = {0}, builtin = {0};
    qjit_context *ctx = make_logged_ctx(cache, tpl, "sm_90a", &edited);
    qjit_compile_info info;
    compile_ok(ctx, key, &info);
    ck_assert_int_eq(info.from_cache, 0);
    ck_assert_int_ge(edited.count, 1);
    ck_assert_ptr_nonnull(strstr(edited.first, "scheme=w4a8-qoq"));
    ck_assert_ptr_nonnull(strstr(edited.first, "serialized"));
    qjit_context_destroy(ctx);
    ctx = make_logged_ctx(cache, NULL, "sm_90a", &builtin);
    compile_ok(ctx, key, &info);
    ck_assert_int_eq(info.from_cache, 0);
    ck_assert_int_eq(builtin.count, 0);
    finish(ctx, tpl, cache);
}
END_TEST

START_TEST(template_error_names_file_and_line)
{
    char *cache = qt_tempdir("lerr");
    char *tpl = user_templates("#define BM", "//% local boom = nil + 1\n");
    qjit_context *ctx = make_ctx(cache, tpl, "sm_90a");
    qjit_status st = qjit_compile(ctx, KEY, NULL, NULL);
    ck_assert_int_eq(st, QJIT_TEMPLATE);
    const char *msg = qjit_last_error(ctx);
    /* The inserted line follows "#define BM": find that line's number. */
    char path[4096], line[512], want[64];
    snprintf(path, sizeof path, "%s/gemm_multistage.cu", QJIT_SOURCE_TEMPLATES);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    int n = 0;
    while (fgets(line, sizeof line, f) && strncmp(line, "#define BM", 10))
        n++;
    fclose(f);
    snprintf(want, sizeof want, "gemm_multistage.cu:%d:", n + 2);
    ck_assert_msg(strstr(msg, want) != NULL, "message lacks %s: %s", want, msg);
    finish(ctx, tpl, cache);
}
END_TEST

START_TEST(nvrtc_error_keeps_the_source)
{
    char *cache = qt_tempdir("nerr");
    char *tpl = user_templates("#define BM", "this is not CUDA;\n");
    qjit_context *ctx = make_ctx(cache, tpl, "sm_90a");
    qjit_status st = qjit_compile(ctx, KEY, NULL, NULL);
    ck_assert_int_eq(st, QJIT_COMPILE);
    const char *msg = qjit_last_error(ctx);
    ck_assert_msg(strstr(msg, "variant: actq=kernel;arch=sm_90a;epi=i32;g=128") != NULL, "message: %s", msg);
    const char *saved = strstr(msg, "generated source saved to ");
    ck_assert_msg(saved != NULL, "message: %s", msg);
    char path[4096];
    snprintf(path, sizeof path, "%s", saved + strlen("generated source saved to "));
    path[strcspn(path, "\n")] = '\0';
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "saved source %s missing", path);
    char line[256];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_ptr_nonnull(strstr(line, "// qjit variant: "));
    fclose(f);
    /* NVRTC's log points into the generated text. */
    ck_assert_ptr_nonnull(strstr(msg, "qjit_kernel.cu("));
    finish(ctx, tpl, cache);
}
END_TEST

/* A long NVRTC log (hundreds of errors) is cut so the variant key and the
 * saved source's path still fit the error text (they were pushed out). */
START_TEST(long_nvrtc_log_keeps_key_and_path)
{
    char *cache = qt_tempdir("nlog");
    char *tpl = user_templates("#define BM", "//% for i = 1, 400 do\nint bad{{ i }} = not_declared_{{ i }};\n//% end\n");
    qjit_context *ctx = make_ctx(cache, tpl, "sm_90a");
    ck_assert_int_eq(qjit_compile(ctx, KEY, NULL, NULL), QJIT_COMPILE);
    const char *msg = qjit_last_error(ctx);
    ck_assert_msg(strstr(msg, "the NVRTC log is cut here") != NULL, "message: %.300s", msg);
    ck_assert_msg(strstr(msg, "variant: actq=kernel;arch=sm_90a;epi=i32;g=128") != NULL, "message end: %s",
                  msg + (strlen(msg) > 400 ? strlen(msg) - 400 : 0));
    const char *saved = strstr(msg, "generated source saved to ");
    ck_assert_msg(saved != NULL && strstr(saved, ".cu") != NULL, "no saved path: %s",
                  msg + (strlen(msg) > 400 ? strlen(msg) - 400 : 0));
    finish(ctx, tpl, cache);
}
END_TEST

/* The one manifest (*.qjm) in dir that is not `other` (NULL: any). */
static int find_manifest(const char *dir, const char *other, char *out, size_t size)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int found = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n > 4 && !strcmp(e->d_name + n - 4, ".qjm") && (!other || strcmp(e->d_name, other))) {
            snprintf(out, size, "%s", e->d_name);
            found++;
        }
    }
    closedir(d);
    return found;
}

/* Sets the modification time of dir/name to `age` seconds ago. */
static void age_file(const char *dir, const char *name, int age)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= age;
    t[1] = t[0];
    ck_assert_int_eq(utimensat(AT_FDCWD, path, t, 0), 0);
}

/* Eviction under a size bound removes the least recently *used* files: a
 * cache hit refreshes its entry and the manifest that found it (the
 * manifest was not refreshed, so the most used variants lost theirs first
 * and were compiled again). */
START_TEST(cache_hit_refreshes_its_manifest)
{
    char *cache = qt_tempdir("lru");
    qjit_context *ctx = make_ctx(cache, NULL, "sm_90a");
    const char *key_b = "scheme=w4a8-lqq;g=128;tile=16x64x128;warps=1x4;stages=4;epi=i32";
    qjit_compile_info a, b, hit;
    char man_a[256], man_b[256];
    compile_ok(ctx, KEY, &a);
    ck_assert_int_eq(find_manifest(cache, NULL, man_a, sizeof man_a), 1);
    compile_ok(ctx, key_b, &b);
    ck_assert_int_eq(find_manifest(cache, man_a, man_b, sizeof man_b), 1);
    /* A is older than B on disk; then A is used again. */
    age_file(cache, a.entry, 200);
    age_file(cache, man_a, 200);
    age_file(cache, b.entry, 100);
    age_file(cache, man_b, 100);
    compile_ok(ctx, KEY, &hit);
    ck_assert_int_eq(hit.from_cache, 1);
    /* A bound one byte under the total evicts the least recently used. */
    uint64_t total = 0;
    const char *names[4] = {a.entry, man_a, b.entry, man_b};
    for (int i = 0; i < 4; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", cache, names[i]);
        ck_assert_int_eq(stat(path, &st), 0);
        total += (uint64_t)st.st_size;
    }
    size_t removed = 0;
    ck_assert_int_eq(qjit__cache_evict(ctx, cache, total - 1, &removed), QJIT_OK);
    ck_assert_uint_ge(removed, 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", cache, man_a);
    ck_assert_msg(access(path, F_OK) == 0, "the manifest of the variant just used was evicted");
    snprintf(path, sizeof path, "%s/%s", cache, a.entry);
    ck_assert_msg(access(path, F_OK) == 0, "the entry just used was evicted");
    compile_ok(ctx, KEY, &hit);
    ck_assert_int_eq(hit.from_cache, 1);
    finish(ctx, NULL, cache);
}
END_TEST

/* QJIT_CACHE_MAX_MB is read once, strictly: a value that is not a whole
 * number of MB is refused with a message (it was read as "no limit" or as
 * 1 MB). */
START_TEST(cache_bound_is_checked)
{
    const char *bad[] = {"abc", "-1", "0.5", "1MB", "0", "18446744073709551617", " 5", "5 "};
    qjit_context_options o;
    qjit_context_options_init(&o);
    o.arch = "sm_90a";
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        qjit_context *ctx = NULL;
        setenv("QJIT_CACHE_MAX_MB", bad[i], 1);
        ck_assert_msg(qjit_context_create(&o, &ctx) == QJIT_INVALID_ARGUMENT, "QJIT_CACHE_MAX_MB='%s' accepted",
                      bad[i]);
        ck_assert_ptr_nonnull(strstr(qjit_last_error(NULL), "QJIT_CACHE_MAX_MB"));
    }
    const char *good[] = {"1", "512", "1099511627776", ""};
    const uint64_t bytes[] = {1u << 20, 512u << 20, (uint64_t)1 << 60, 0};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        qjit_context *ctx = NULL;
        setenv("QJIT_CACHE_MAX_MB", good[i], 1);
        ck_assert_int_eq(qjit_context_create(&o, &ctx), QJIT_OK);
        ck_assert_uint_eq(ctx->cache_max_bytes, bytes[i]);
        qjit_context_destroy(ctx);
    }
    unsetenv("QJIT_CACHE_MAX_MB");
}
END_TEST

/* A cache folder that cannot be written (a read-only mount, a folder of
 * the user's made read-only): hits still load; a miss fails with a clear
 * error naming the folder, and nothing in it changes or goes corrupt. Root
 * ignores permissions, so as root the check runs in a child that has become
 * an unprivileged user owning the folder. */
static int count_names(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.' || strstr(e->d_name, ".lock") || strstr(e->d_name, ".tmp.");
    if (d)
        closedir(d);
    return n;
}

START_TEST(read_only_cache_fails_clearly)
{
    char *cache = qt_tempdir("ro");
    qjit_context *ctx = make_ctx(cache, NULL, "sm_90a");
    compile_ok(ctx, KEY, NULL);
    qjit_context_destroy(ctx);
    const uid_t nobody = 65534;
    if (geteuid() == 0) {
        DIR *d = opendir(cache);
        char path[4096];
        for (struct dirent *e; (e = readdir(d));) {
            snprintf(path, sizeof path, "%s/%s", cache, e->d_name);
            if (strcmp(e->d_name, ".."))
                ck_assert_int_eq(lchown(path, nobody, nobody), 0);
        }
        closedir(d);
    }
    int before = count_names(cache);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(nobody) != 0 || setuid(nobody) != 0))
            _exit(10);
        if (chmod(cache, 0500) != 0)
            _exit(11);
        qjit_context *c = qt_plain_context(cache);
        if (!c)
            _exit(12);
        qjit_compile_info info;
        if (qjit_compile(c, KEY, NULL, &info) != QJIT_OK || !info.from_cache) {
            fprintf(stderr, "hit: %s\n", qjit_last_error(c));
            _exit(13);
        }
        qjit_status st = qjit_compile(c, "scheme=w4a8-lqq;g=128;tile=16x64x128;warps=1x4;stages=2;epi=i32", NULL, NULL);
        if (st == QJIT_OK)
            _exit(14);
        if (!strstr(qjit_last_error(c), cache) || !strstr(qjit_last_error(c), "ermission")) {
            fprintf(stderr, "miss: %s: %s\n", qjit_status_name(st), qjit_last_error(c));
            _exit(15);
        }
        size_t bad = 99;
        if (qjit_cache_list(c, NULL, NULL, &bad) != QJIT_OK || bad != 0)
            _exit(16);
        qjit_context_destroy(c);
        _exit(0);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_int_eq(chmod(cache, 0700), 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "read-only child: status %d", status);
    ck_assert_int_eq(count_names(cache), before);          /* nothing added, nothing removed */
    qt_rmtree(cache);
    free(cache);
}
END_TEST

START_TEST(concurrent_writers)
{
    char *dir = qt_tempdir("conc");
    const char *keys[] = {KEY, "scheme=w4a8-lqq;g=0;tile=16x64x128;warps=1x4;stages=4",
                          "kernel=act-quant;threads=256"};
    enum { PROCS = 8 };
    pid_t pids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        pids[p] = fork();
        ck_assert_int_ge(pids[p], 0);
        if (pids[p] == 0) {
            qjit_context *ctx = qt_plain_context(dir);
            if (!ctx)
                _exit(10);
            int compiled = 0;
            for (int i = 0; i < 3; i++) {
                qjit_compile_info info;
                if (qjit_compile(ctx, keys[(i + p) % 3], NULL, &info)) {
                    fprintf(stderr, "child %d: %s\n", p, qjit_last_error(ctx));
                    _exit(20 + i);
                }
                compiled += !info.from_cache;
            }
            qjit_context_destroy(ctx);
            _exit(compiled);
        }
    }
    /* One NVRTC compile per key across all the processes (each ran one
     * per key and process before: up to 24 here). */
    int compiles = 0;
    for (int p = 0; p < PROCS; p++) {
        int status = 0;
        waitpid(pids[p], &status, 0);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) < 20, "writer %d failed (status %d)", p, status);
        compiles += WEXITSTATUS(status);
    }
    ck_assert_int_eq(compiles, 3);
    qjit_context *ctx = make_ctx(dir, NULL, "sm_90a");
    size_t bad = 99;
    ck_assert_int_eq(qjit_cache_list(ctx, NULL, NULL, &bad), QJIT_OK);
    ck_assert_uint_eq(bad, 0);
    for (int i = 0; i < 3; i++) {
        qjit_compile_info info;
        compile_ok(ctx, keys[i], &info);
        ck_assert_int_eq(info.from_cache, 1);
    }
    /* No temporary files are left behind. */
    DIR *d = opendir(dir);
    int entries = 0;
    for (struct dirent *e; (e = readdir(d));) {
        ck_assert_msg(!strstr(e->d_name, ".tmp."), "leftover %s", e->d_name);
        size_t n = strlen(e->d_name);
        entries += e->d_name[0] != '.' && n > 4 && !strcmp(e->d_name + n - 4, ".qjb");
    }
    closedir(d);
    ck_assert_int_eq(entries, 3);
    qjit_context_destroy(ctx);
    qt_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(non_private_folder_is_refused)
{
    char *dir = qt_tempdir("perm");
    qjit_context *ctx = make_ctx(dir, NULL, "sm_90a");
    compile_ok(ctx, KEY, NULL);
    ck_assert_int_eq(chmod(dir, 0777), 0);
    qjit_status st = qjit_compile(ctx, KEY, NULL, NULL);
    ck_assert_int_eq(st, QJIT_CACHE_INSECURE);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), dir));
    ck_assert_int_eq(chmod(dir, 0700), 0);
    compile_ok(ctx, KEY, NULL);
    qjit_context_destroy(ctx);
    qt_rmtree(dir);
    free(dir);
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("compile");
    TCase *all = tcase_create("every_arch");
    tcase_set_timeout(all, 900);
    tcase_add_loop_test(all, default_set_compiles_for_every_arch, 0, 5);
    tcase_add_loop_test(all, bf16_set_compiles, 0, 2);
    qt_add(s, all, 0);
    TCase *tc = tcase_create("cache");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, hit_after_miss_and_across_contexts);
    tcase_add_test(tc, many_keys_on_threads);
    tcase_add_test(tc, entry_out_of_miss_and_hit_is_releasable);
    tcase_add_test(tc, corrupt_entry_is_healed);
    tcase_add_test(tc, edited_template_is_used_without_rebuild);
    tcase_add_test(tc, performance_advisories_are_logged);
    tcase_add_test(tc, template_error_names_file_and_line);
    tcase_add_test(tc, nvrtc_error_keeps_the_source);
    tcase_add_test(tc, long_nvrtc_log_keeps_key_and_path);
    tcase_add_test(tc, cache_hit_refreshes_its_manifest);
    tcase_add_test(tc, cache_bound_is_checked);
    tcase_add_test(tc, read_only_cache_fails_clearly);
    tcase_add_test(tc, concurrent_writers);
    tcase_add_test(tc, non_private_folder_is_refused);
    qt_add(s, tc, 0);
    return s;
}
