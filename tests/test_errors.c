/* test_errors.c -- bad input through the public API: a clear status, a
 * message that says what to do, and nothing changed. */
#define _GNU_SOURCE
#include "harness.h"
#include "qjit.h"
#include "module.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

START_TEST(status_strings_are_never_null)
{
    for (int s = -3; s < 64; s++) {
        ck_assert_ptr_nonnull(qjit_status_string((qjit_status)s));
        ck_assert_ptr_nonnull(qjit_status_name((qjit_status)s));
    }
    ck_assert_str_eq(qjit_status_name(QJIT_COMPILE), "QJIT_COMPILE");
    ck_assert_int_eq(QJIT_CORRUPT_WEIGHTS, 15);     /* pinned values */
    ck_assert_ptr_nonnull(qjit_last_error(NULL));
    ck_assert_uint_eq(qjit_version_number(), QJIT_VERSION_NUMBER);
    ck_assert_str_eq(qjit_version_string(), QJIT_VERSION_STRING);
}
END_TEST

START_TEST(context_options_are_checked)
{
    qjit_context *ctx = (qjit_context *)0x1;
    qjit_context_options o;
    qjit_context_options_init(&o);
    o.arch = "pentium4";
    ck_assert_int_eq(qjit_context_create(&o, &ctx), QJIT_UNSUPPORTED_ARCH);
    ck_assert_ptr_null(ctx);
    /* The reason outlives the context that held it (it named neither the
     * value nor what is valid before). */
    ck_assert_msg(strstr(qjit_last_error(NULL), "'pentium4' is not an architecture name") &&
                  strstr(qjit_last_error(NULL), "sm_90a"), "%s", qjit_last_error(NULL));
    char copy[16];
    ck_assert_uint_eq(qjit_last_error_copy(NULL, copy, sizeof copy), strlen(qjit_last_error(NULL)));
    o.arch = NULL;
    o.struct_size = 0;
    ck_assert_int_eq(qjit_context_create(&o, &ctx), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(NULL), "struct_size"));
    ck_assert_int_eq(qjit_context_create(NULL, NULL), QJIT_INVALID_ARGUMENT);
    /* A success clears it. */
    qjit_context_options_init(&o);
    o.arch = "sm_80";
    ck_assert_int_eq(qjit_context_create(&o, &ctx), QJIT_OK);
    ck_assert_ptr_null(strstr(qjit_last_error(NULL), "pentium4"));
    ck_assert_ptr_null(strstr(qjit_last_error(NULL), "out is NULL"));
    qjit_context_destroy(ctx);
    qjit_context_destroy(NULL);
    qjit_linear_destroy(NULL);
}
END_TEST

static qjit_context *make_ctx(const char *cache)
{
    qjit_context *ctx = qt_plain_context(cache);
    ck_assert_ptr_nonnull(ctx);
    return ctx;
}

/* A context on cache that allocates through the counting allocator. */
static qjit_context *counting_ctx(const char *cache, qt_alloc_counts *counts)
{
    qjit_context *ctx = qt_counting_context(cache, "sm_90a", counts);
    ck_assert_ptr_nonnull(ctx);
    return ctx;
}

/* Every host allocation of a call may fail: the call says
 * QJIT_OUT_OF_MEMORY, leaks nothing, and the next call on the same context
 * succeeds (an allocation failing inside the first canonicalize left Lua
 * with a half-made metatable, and every later call failed with
 * QJIT_TEMPLATE). Key canonicalization at every allocation, generation at
 * every 7th (QJIT_FAULT_EVERY=1: at every one). */
START_TEST(failed_allocations_leave_the_context_usable)
{
    char *cache = qt_tempdir("oom");
    for (int op = 0; op < 2; op++) {
        long tried = 0;
        const long step = op ? qt_fault_stride(7) : 1;
        for (long fail_at = 0;; fail_at += step) {
            qt_alloc_counts counts = {-1, 0, 0, 0};
            qjit_context *ctx = counting_ctx(cache, &counts);
            char out[1024];
            char *src = NULL;
            size_t len = 0;
            counts.fail_after = fail_at;
            qjit_status st = op ? qjit_generate(ctx, "g=64", &src, &len) : qjit_key_canonicalize(ctx, "g=64", out, sizeof out);
            counts.fail_after = -1;
            if (st == QJIT_OK) {
                qjit_free(ctx, src);
                qjit_context_destroy(ctx);
                ck_assert_int_eq(counts.live, 0);
                break;
            }
            tried++;
            ck_assert_msg(st == QJIT_OUT_OF_MEMORY, "op %d, allocation %ld refused: %s (%s)", op, fail_at,
                          qjit_status_name(st), qjit_last_error(ctx));
            ck_assert_ptr_null(src);
            qjit_status again = op ? qjit_generate(ctx, "g=64", &src, &len) : qjit_key_canonicalize(ctx, "g=64", out, sizeof out);
            ck_assert_msg(again == QJIT_OK, "op %d: after allocation %ld was refused the next call failed: %s (%s)", op,
                          fail_at, qjit_status_name(again), qjit_last_error(ctx));
            qjit_free(ctx, src);
            qjit_context_destroy(ctx);
            ck_assert_msg(counts.live == 0, "op %d, allocation %ld refused: %ld blocks leaked", op, fail_at, counts.live);
            ck_assert_int_eq(counts.size_mismatches, 0);
        }
        ck_assert_int_gt(tried, 100);
    }
    qt_rmtree(cache);
    free(cache);
}
END_TEST

/* The other public calls that allocate, each with every allocation (or
 * every `step`-th) refused in turn: the status is QJIT_OUT_OF_MEMORY (or
 * the call needed nothing more and succeeded), nothing leaks, and the same
 * call then succeeds on the same context. */
typedef struct oom_fixture {
    float W[16 * 128];
    uint16_t X[4 * 128];
    int8_t Xq[4 * 128];
    float sx[4];
    int32_t acc[4 * 16];
    uint8_t packed[4096];
    size_t bytes;
    const char *cache;
} oom_fixture;

static int count_entry(void *ud, const qjit_cache_entry_info *e)
{
    (void)e;
    ++*(size_t *)ud;
    return 0;
}

static qjit_status oom_op(int op, qjit_context *ctx, oom_fixture *f)
{
    size_t written = 0, bad = 0, seen = 0;
    qjit_weights_info info;
    char *keys = NULL;
    qjit_status st;
    switch (op) {
    case 0:
        return qjit_quantize_weights(ctx, QJIT_SCHEME_W4A8_LQQ, 64, f->W, QJIT_DTYPE_F32, 16, 128, f->packed,
                                     sizeof f->packed, &written);
    case 1:
        return qjit_quantize_weights(ctx, QJIT_SCHEME_W4A8_IS, 64, f->W, QJIT_DTYPE_F32, 16, 128, f->packed,
                                     sizeof f->packed, &written);
    case 2:
        return qjit_weights_inspect(ctx, f->packed, f->bytes, &info);
    case 3:
        return qjit_reference_quantize_activations(ctx, 4, 128, f->X, f->Xq, f->sx);
    case 4:
        return qjit_reference_gemm(ctx, f->packed, f->bytes, 4, f->Xq, f->sx, f->acc, NULL);
    case 5:
        st = qjit_default_variants(ctx, "sm_90a", &keys);
        qjit_free(ctx, keys);
        return st;
    case 6:
        return qjit_compile(ctx, "g=64", "sm_90a", NULL);     /* a cache hit (the fixture compiled it) */
    default:
        st = qjit_cache_list(ctx, count_entry, &seen, &bad);
        return st;
    }
}

START_TEST(every_public_call_survives_failed_allocations)
{
    static oom_fixture f;
    qt_rng r = qt_rng_make(31);
    for (int i = 0; i < 16 * 128; i++)
        f.W[i] = (float)((int64_t)(qt_next(&r) % 2001) - 1000) / 1000.0f;
    for (int i = 0; i < 4 * 128; i++)
        f.X[i] = (uint16_t)(0x3C00 | (qt_next(&r) % 0x3FF));      /* 1.0 .. 2.0 in FP16 */
    char *cache = qt_tempdir("oomall");
    f.cache = cache;
    qjit_context *setup = make_ctx(cache);
    ck_assert_int_eq(qjit_quantize_weights(setup, QJIT_SCHEME_W4A8_LQQ, 64, f.W, QJIT_DTYPE_F32, 16, 128, f.packed,
                                           sizeof f.packed, &f.bytes), QJIT_OK);
    ck_assert_int_eq(qjit_reference_quantize_activations(setup, 4, 128, f.X, f.Xq, f.sx), QJIT_OK);
    ck_assert_int_eq(qjit_compile(setup, "g=64", "sm_90a", NULL), QJIT_OK);
    qjit_context_destroy(setup);
    /* Every allocation, or a sample (QJIT_FAULT_EVERY): for the default
     * variant set (the dispatch table run for every scheme and shape: its
     * allocations grow with the schemes) about 150 points over a clean
     * run's allocations, odd so they fall on every phase, at least 97 apart. */
    static const int steps[8] = {1, 1, 1, 1, 1, 97, 7, 1};
    for (int op = 0; op < 8; op++) {
        long refused = 0, stride = steps[op];
        if (op == 5) {
            qt_alloc_counts clean = {-1, 0, 0, 0};
            qjit_context *ctx = counting_ctx(cache, &clean);
            ck_assert_int_eq(oom_op(op, ctx, &f), QJIT_OK);
            qjit_context_destroy(ctx);
            if (clean.calls / 150 > stride)
                stride = clean.calls / 150 | 1;
        }
        const long step = stride > 1 ? qt_fault_stride(stride) : 1;
        for (long fail_at = 0; fail_at < 100000; fail_at += step) {
            qt_alloc_counts counts = {-1, 0, 0, 0};
            qjit_context *ctx = counting_ctx(cache, &counts);
            long before = counts.live;
            counts.fail_after = fail_at;
            qjit_status st = oom_op(op, ctx, &f);
            counts.fail_after = -1;
            ck_assert_msg(st == QJIT_OK || st == QJIT_OUT_OF_MEMORY, "op %d, allocation %ld refused: %s (%s)", op,
                          fail_at, qjit_status_name(st), qjit_last_error(ctx));
            ck_assert_msg(counts.live >= before, "op %d freed what it did not own", op);
            qjit_status again = oom_op(op, ctx, &f);
            ck_assert_msg(again == QJIT_OK, "op %d: after allocation %ld was refused the next call failed: %s (%s)",
                          op, fail_at, qjit_status_name(again), qjit_last_error(ctx));
            qjit_context_destroy(ctx);
            ck_assert_msg(counts.live == 0, "op %d, allocation %ld refused: %ld blocks leaked", op, fail_at,
                          counts.live);
            ck_assert_int_eq(counts.size_mismatches, 0);
            if (st == QJIT_OK)
                break;
            refused++;
        }
        printf("public call %d: %ld refused allocations, each reported, none leaked\n", op, refused);
    }
    qt_rmtree(cache);
    free(cache);
}
END_TEST

START_TEST(unusable_cache_folders)
{
    /* A folder that cannot be created. */
    qjit_context *ctx = make_ctx("/proc/qjit-cannot-exist/cache");
    ck_assert_int_eq(qjit_compile(ctx, "kernel=act-quant", NULL, NULL), QJIT_CACHE);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), "/proc/qjit-cannot-exist"));
    qjit_context_destroy(ctx);
    /* A path that is a file. */
    char *dir = qt_tempdir("file");
    char path[4096];
    snprintf(path, sizeof path, "%s/plainfile", dir);
    FILE *f = fopen(path, "w");
    fputs("x", f);
    fclose(f);
    ctx = make_ctx(path);
    ck_assert_int_eq(qjit_compile(ctx, "kernel=act-quant", NULL, NULL), QJIT_CACHE);
    qjit_context_destroy(ctx);
    /* A folder others can write. */
    snprintf(path, sizeof path, "%s/open", dir);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    ck_assert_int_eq(chmod(path, 0777), 0);
    ctx = make_ctx(path);
    ck_assert_int_eq(qjit_compile(ctx, "kernel=act-quant", NULL, NULL), QJIT_CACHE_INSECURE);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), "chmod"));
    qjit_context_destroy(ctx);
    qt_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(arch_nvrtc_cannot_target)
{
    char *dir = qt_tempdir("arch");
    qjit_context *ctx = make_ctx(dir);
    ck_assert_int_eq(qjit_compile(ctx, "kernel=act-quant", "sm_35", NULL), QJIT_UNSUPPORTED_ARCH);
    ck_assert_int_eq(qjit_compile(ctx, "kernel=act-quant", "sm_7", NULL), QJIT_UNSUPPORTED_ARCH);
    ck_assert_int_eq(qjit_compile(ctx, NULL, NULL, NULL), QJIT_INVALID_ARGUMENT);
    qjit_context_destroy(ctx);
    qt_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(layer_sizes_are_checked)
{
    size_t bytes = 12345;
    ck_assert_int_eq(qjit_packed_size(QJIT_SCHEME_W4A8_LQQ, 128, 4096, 4096, &bytes), QJIT_OK);
    ck_assert_uint_gt(bytes, 4096u * 4096u / 2);
    ck_assert_int_eq(qjit_packed_size(QJIT_SCHEME_W4A8_LQQ, 128, 4100, 4096, &bytes), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_packed_size(QJIT_SCHEME_W4A8_LQQ, 128, 4096, 4000, &bytes), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_packed_size(QJIT_SCHEME_W4A8_LQQ, 128, 4096, 64 * 3, &bytes), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_packed_size(QJIT_SCHEME_W4A8_LQQ, 128, 0, 4096, &bytes), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_packed_size(QJIT_SCHEME_W4A8_LQQ, 128, 4096, -64, &bytes), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit_packed_size((qjit_scheme)99, 128, 4096, 4096, &bytes), QJIT_INVALID_ARGUMENT);
}
END_TEST

START_TEST(corrupt_weights_never_reach_the_gpu)
{
    qjit_context *ctx = make_ctx(NULL);
    const int64_t N = 32, K = 128;
    float W[32 * 128];
    qt_rng r = qt_rng_make(3);
    for (int i = 0; i < N * K; i++)
        W[i] = (float)qt_normal(&r);
    size_t bytes;
    ck_assert_int_eq(qjit_packed_size(QJIT_SCHEME_W4A8_LQQ, 64, N, K, &bytes), QJIT_OK);
    unsigned char *blob = malloc(bytes);
    ck_assert_int_eq(qjit_quantize_weights(ctx, QJIT_SCHEME_W4A8_LQQ, 64, W, QJIT_DTYPE_F32, N, K, blob, bytes, &bytes),
                     QJIT_OK);
    blob[bytes - 5] ^= 1;
    qjit_linear *lin = (qjit_linear *)0x1;
    ck_assert_int_eq(qjit_linear_create(ctx, blob, bytes, NULL, &lin), QJIT_CORRUPT_WEIGHTS);
    ck_assert_ptr_null(lin);
    blob[bytes - 5] ^= 1;
    ck_assert_int_eq(qjit_linear_create(ctx, blob, bytes - 1, NULL, &lin), QJIT_CORRUPT_WEIGHTS);
    ck_assert_int_eq(qjit_linear_create(ctx, NULL, bytes, NULL, &lin), QJIT_INVALID_ARGUMENT);
    qjit_linear_options lo;
    qjit_linear_options_init(&lo);
    lo.max_tokens = 0;
    ck_assert_int_eq(qjit_linear_create(ctx, blob, bytes, &lo, &lin), QJIT_INVALID_ARGUMENT);
    /* A bias that is not finite is refused before anything (the GPU) is touched. */
    float bias[32] = {0};
    bias[17] = NAN;
    qjit_linear_options_init(&lo);
    lo.bias = bias;
    ck_assert_int_eq(qjit_linear_create(ctx, blob, bytes, &lo, &lin), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_null(lin);
    ck_assert_msg(strstr(qjit_last_error(ctx), "bias[17]") && strstr(qjit_last_error(ctx), "not finite"), "%s",
                  qjit_last_error(ctx));
    bias[17] = -INFINITY;
    ck_assert_int_eq(qjit_linear_create(ctx, blob, bytes, &lo, &lin), QJIT_INVALID_ARGUMENT);
    /* Without a GPU, a valid layer fails with a status that says so. */
    if (!qt_has_gpu()) {
        qjit_status st = qjit_linear_create(ctx, blob, bytes, NULL, &lin);
        ck_assert_msg(st == QJIT_NO_DRIVER || st == QJIT_NO_DEVICE, "got %s", qjit_status_name(st));
        ck_assert_ptr_null(lin);
        ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), "GPU"));
        /* No GPU and no arch named: both causes are in the message. */
        qjit_context *bare = NULL;
        qjit_context_options o;
        qjit_context_options_init(&o);
        o.template_path = "";
        setenv("QJIT_ARCH", "", 1);
        ck_assert_int_eq(qjit_context_create(&o, &bare), QJIT_OK);
        char arch[16];
        st = qjit_context_arch(bare, arch, sizeof arch);
        ck_assert(st == QJIT_NO_DRIVER || st == QJIT_NO_DEVICE);
        const char *msg = qjit_last_error(bare);
        ck_assert_msg(strstr(msg, "CUDA") && strstr(msg, "No target architecture"), "message: %s", msg);
        qjit_context_destroy(bare);
    }
    free(blob);
    qjit_context_destroy(ctx);
}
END_TEST

/* Which binaries a device can run, decided without a GPU. */
START_TEST(device_capability_rules)
{
    static const struct { const char *arch; int major, minor; qjit_status want; } cases[] = {
        {"sm_80", 8, 0, QJIT_OK},                  {"sm_80", 8, 6, QJIT_OK},
        {"sm_86", 8, 0, QJIT_DEVICE_TOO_OLD},      {"sm_89", 8, 6, QJIT_DEVICE_TOO_OLD},
        {"sm_90a", 8, 9, QJIT_DEVICE_TOO_OLD},     {"sm_90a", 9, 0, QJIT_OK},
        {"sm_90", 9, 0, QJIT_OK},                  {"sm_80", 9, 0, QJIT_UNSUPPORTED_ARCH},
        {"sm_90a", 10, 0, QJIT_UNSUPPORTED_ARCH},  {"sm_90", 10, 0, QJIT_UNSUPPORTED_ARCH},
        {"sm_9", 9, 0, QJIT_UNSUPPORTED_ARCH},     {"sm_90b", 9, 0, QJIT_UNSUPPORTED_ARCH},
    };
    qjit_context *ctx = make_ctx(NULL);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qjit_status st = qjit__check_device(ctx, "k", cases[i].arch, cases[i].major, cases[i].minor, "GPU X");
        ck_assert_msg(st == cases[i].want, "%s on %d.%d: got %s", cases[i].arch, cases[i].major, cases[i].minor,
                      qjit_status_name(st));
        if (st == QJIT_DEVICE_TOO_OLD)
            ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), "GPU X"));
    }
    qjit_context_destroy(ctx);
}
END_TEST

/* Spreading a PDL kernel's blocks (qjit__spread_smem), decided without a
 * GPU: an H100's 233472 bytes per SM, 1024 reserved per block. */
START_TEST(pdl_grids_are_spread)
{
    static const struct { int smem, max, stat, sms; int64_t ctas; int want; } cases[] = {
        {0, 232448, 512, 132, 256, 233472 / 2 - 1024 - 512},     /* two blocks an SM */
        {0, 232448, 0, 132, 132, 232448},                        /* one: all it may take */
        {0, 100000, 0, 132, 100, 100000},                        /* ... capped at its maximum */
        {24576, 232448, 0, 132, 1320, 24576},                    /* ten: its own need is more */
        {0, 232448, 512, 132, 133, 233472 / 2 - 1024 - 512},     /* one past a wave: two */
        {4096, 4096, 0, 132, 1, 4096},                           /* not a PDL kernel: as it is */
        {4096, 232448, 0, 0, 64, 4096},                          /* SMs unknown */
        {4096, 232448, 0, 132, 0, 4096},                         /* no blocks */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = qjit__spread_smem(cases[i].smem, cases[i].max, cases[i].stat, cases[i].sms, 233472, 1024,
                                    cases[i].ctas);
        ck_assert_msg(got == cases[i].want, "case %zu: %d bytes, want %d", i, got, cases[i].want);
    }
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("errors");
    TCase *tc = tcase_create("bad_input");
    /* Fault injection at every allocation of a context's first call starts
     * a Lua VM per allocation: ~110 s under ASan on two busy cores. */
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, status_strings_are_never_null);
    tcase_add_test(tc, context_options_are_checked);
    tcase_add_test(tc, failed_allocations_leave_the_context_usable);
    tcase_add_test(tc, every_public_call_survives_failed_allocations);
    tcase_add_test(tc, unusable_cache_folders);
    tcase_add_test(tc, arch_nvrtc_cannot_target);
    tcase_add_test(tc, pdl_grids_are_spread);
    tcase_add_test(tc, layer_sizes_are_checked);
    tcase_add_test(tc, corrupt_weights_never_reach_the_gpu);
    tcase_add_test(tc, device_capability_rules);
    qt_add(s, tc, 0);
    return s;
}
