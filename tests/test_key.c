/* test_key.c -- variant keys: canonical form, spellings, every field
 * counts, bad keys rejected with a useful message; generation basics. */
#define _GNU_SOURCE
#include "context.h"
#include "generate.h"
#include "harness.h"
#include "lua_vm.h"
#include "plan.h"
#include "scheme.h"
#include "qjit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static qjit_context *make_ctx(void)
{
    qjit_context_options o;
    qjit_context_options_init(&o);
    o.arch = "sm_90a";
    o.template_path = "";
    qjit_context *ctx = NULL;
    ck_assert_int_eq(qjit_context_create(&o, &ctx), QJIT_OK);
    return ctx;
}

static void canon(qjit_context *ctx, const char *key, char *out)
{
    qjit_status st = qjit_key_canonicalize(ctx, key, out, 1024);
    ck_assert_msg(st == QJIT_OK, "key '%s': %s: %s", key, qjit_status_name(st), qjit_last_error(ctx));
}

START_TEST(order_and_spelling_do_not_matter)
{
    qjit_context *ctx = make_ctx();
    const char *same[] = {
        "scheme=w4a8-lqq;g=128;tile=64x128x64;warps=2x2;stages=4;arch=sm_90a",
        "arch=sm_90a;stages=4;warps=2x2;tile=64x128x64;g=128;scheme=w4a8-lqq",
        "scheme=LQQ, group=128, tile=64X128X64, warps=2x2, stages=4, arch=90a",
        "  scheme=w4a8_lqq  g=128 cta=64x128x64 warp=2x2 stage=4 target=SM_90A pipe=ms epi=fp16 kernel=gemm",
        "scheme=w4a8-lqq;arch=compute_90a",                /* the rest are defaults */
    };
    char first[1024], other[1024];
    canon(ctx, same[0], first);
    ck_assert_str_eq(first, "actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;pipe=multistage;reduce=global;"
                            "scheme=w4a8-lqq;split=1;stages=4;tile=64x128x64;warps=2x2");
    for (size_t i = 1; i < sizeof same / sizeof same[0]; i++) {
        canon(ctx, same[i], other);
        ck_assert_str_eq(first, other);
    }
    /* Per-channel spellings. */
    char a[1024], b[1024], c[1024];
    canon(ctx, "g=0", a);
    canon(ctx, "g=per-channel", b);
    canon(ctx, "group=channel", c);
    ck_assert_str_eq(a, b);
    ck_assert_str_eq(a, c);
    ck_assert_ptr_nonnull(strstr(a, "g=0;"));
    qjit_context_destroy(ctx);
}
END_TEST

START_TEST(every_field_changes_the_key)
{
    qjit_context *ctx = make_ctx();
    const char *base = "scheme=w4a8-lqq;g=128;tile=64x128x64;warps=2x2;stages=4;arch=sm_90a;epi=f16;pipe=multistage";
    const char *changed[][2] = {
        {"g", "g=64"}, {"g", "g=0"}, {"tile", "tile=128x128x64"}, {"tile", "tile=64x128x128"},
        {"tile", "tile=64x256x64"}, {"warps", "warps=1x4"}, {"stages", "stages=3"}, {"arch", "arch=sm_80"},
        {"arch", "arch=sm_90"}, {"epi", "epi=i32"}, {"split", "split=2"}, {"actq", "actq=fused"},
    };
    char ref[1024], got[1024];
    canon(ctx, base, ref);
    for (size_t i = 0; i < sizeof changed / sizeof changed[0]; i++) {
        /* Replace the field in the base key by the new value. */
        char key[1024] = "";
        char copy[1024];
        snprintf(copy, sizeof copy, "%s", base);
        for (char *tok = strtok(copy, ";"); tok; tok = strtok(NULL, ";")) {
            size_t n = strlen(changed[i][0]);
            if (!strncmp(tok, changed[i][0], n) && tok[n] == '=')
                continue;
            strcat(key, tok);
            strcat(key, ";");
        }
        strcat(key, changed[i][1]);
        canon(ctx, key, got);
        ck_assert_msg(strcmp(ref, got) != 0, "changing %s left the key unchanged", changed[i][1]);
        ck_assert_msg(strstr(got, changed[i][1]) != NULL, "%s missing from %s", changed[i][1], got);
    }
    /* The activation kernel's fields count too. */
    canon(ctx, "kernel=act-quant;threads=256", ref);
    canon(ctx, "kernel=act-quant;threads=128", got);
    ck_assert_str_ne(ref, got);
    qjit_context_destroy(ctx);
}
END_TEST

static void expect_bad(qjit_context *ctx, const char *key, qjit_status want, const char *words)
{
    char out[1024];
    strcpy(out, "untouched");
    qjit_status st = qjit_key_canonicalize(ctx, key, out, sizeof out);
    ck_assert_msg(st == want, "key '%s': got %s, want %s (%s)", key, qjit_status_name(st), qjit_status_name(want),
                  qjit_last_error(ctx));
    ck_assert_msg(strstr(qjit_last_error(ctx), words) != NULL, "key '%s': message '%s' lacks '%s'", key,
                  qjit_last_error(ctx), words);
    ck_assert_str_eq(out, "untouched");
}

static void expect_refused(qjit_context *ctx, const char *key, const char *words);

/* Removes ";wu8=1" from a canonical key (the unsigned-weight form, which
 * only the dense warpgroup-MMA kernels of w4a8-lqq name). */
static void drop_wu8(char *key)
{
    char *at = strstr(key, ";wu8=1");
    if (at)
        memmove(at, at + 6, strlen(at + 6) + 1);
}
static char *source_with(qjit_context *ctx, const char *key, const char *const *has, const char *const *lacks);

/* producer=wg's register budget, on every tile, ring depth and scheme the
 * plan accepts: the kernel launches with a share of the register file for
 * the CTAs its shared memory lets share an SM (__launch_bounds__(T, C)),
 * the producer warpgroup lowers its count to P and the MMA warpgroups
 * raise theirs to R (setmaxnreg: P at most, R at least the launch share,
 * multiples of 8 in 24..256), and those counts fit the registers the CTA
 * launched with: setmaxnreg.inc draws on a pool per CTA, so an MMA
 * warpgroup asking more than its producer gave up waits forever (the INT32
 * twin of a persistent 64x64 tile, three CTAs an SM, asked 144 of a pool
 * that held 136). Persistent kernels and INT32 twins too, and explicit
 * dequantization (excp=1): a third warpgroup that lowers its count to D
 * (or keeps the launch share), counted in the pool; and kernels with a
 * sparse residual, whose producer keeps more (its second warp looks the
 * residual up). */
START_TEST(producer_register_budget)
{
    qjit_context *ctx = make_ctx();
    static const char *const schemes[] = {"w4a8-lqq;g=128", "w4a8-qoq;g=64", "w4a8-is;g=128", "w8a8;g=0", "w4a4;g=0"};
    static const char *const tiles[] = {"128x256x128;warps=1x8", "256x128x128;warps=2x4", "128x128x128;warps=1x8",
                                        "128x128x128;warps=2x4", "128x64x128;warps=1x4", "64x128x128;warps=1x8",
                                        "64x64x128;warps=1x4", "32x128x128;warps=1x4"};
    int accepted = 0, refused = 0, shared = 0, dequant = 0, sparse = 0;
    for (size_t s = 0; s < sizeof schemes / sizeof schemes[0]; s++)
        for (size_t t = 0; t < sizeof tiles / sizeof tiles[0]; t++)
            for (int stages = 3; stages <= 8; stages++)
            for (int form = 0; form < 10; form++) {
                static const char *const forms[] = {"",          ";epi=i32", ";persist=1", ";persist=1;epi=i32",
                                                    ";excp=1",   ";excp=1;persist=1", ";persist=1;pingpong=1",
                                                    ";persist=1;pingpong=1;epi=i32", ";sparsity=0.1",
                                                    ";persist=1;sparsity=0.05;epi=i32"};
                const int excp = form == 4 || form == 5;
                char key[256];
                snprintf(key, sizeof key, "scheme=%s;pipe=tma;tile=%s;stages=%d;producer=wg;arch=sm_90a%s", schemes[s],
                         tiles[t], stages, forms[form]);
                char *src = NULL;
                if (qjit_generate(ctx, key, &src, NULL) != QJIT_OK) {
                    refused++;
                    continue;
                }
                int T = 0, C = 0, P = 0, R = 0, D = 0, warpgroups = 0;
                const char *lb = strstr(src, "__launch_bounds__(");
                const char *dec = strstr(src, "setmaxnreg.dec.sync.aligned.u32 ");
                const char *dec2 = dec ? strstr(dec + 1, "setmaxnreg.dec.sync.aligned.u32 ") : NULL;
                const char *inc = strstr(src, "setmaxnreg.inc.sync.aligned.u32 ");
                const char *th = strstr(src, "#define THREADS ");
                ck_assert_msg(lb && dec && inc && th, "%s: no launch bounds or setmaxnreg", key);
                ck_assert_int_eq(sscanf(lb, "__launch_bounds__(%d, %d)", &T, &C), 2);
                ck_assert_int_eq(sscanf(inc, "setmaxnreg.inc.sync.aligned.u32 %d", &R), 1);
                ck_assert_int_eq(sscanf(th, "#define THREADS %d", &warpgroups), 1);
                ck_assert_msg(warpgroups % 128 == 0 && T == warpgroups + (excp ? 256 : 128),
                              "%s: %d threads, %d in warpgroups", key, T, warpgroups);
                int launch = 65536 / (C * T) / 8 * 8;
                if (launch > 256)
                    launch = 256;
                /* The dequantization warpgroup's count comes first in the
                 * source where it lowers it, the producer's last. */
                ck_assert_msg(excp || !dec2, "%s: two setmaxnreg.dec without excp", key);
                ck_assert_int_eq(sscanf(dec2 ? dec2 : dec, "setmaxnreg.dec.sync.aligned.u32 %d", &P), 1);
                if (excp && dec2)
                    ck_assert_int_eq(sscanf(dec, "setmaxnreg.dec.sync.aligned.u32 %d", &D), 1);
                else if (excp)
                    D = launch;
                ck_assert_msg(!excp || (D >= 24 && D % 8 == 0 && D <= launch), "%s: dequantization warpgroup %d of %d",
                              key, D, launch);
                ck_assert_msg(C >= 1 && P >= 24 && P % 8 == 0 && R % 8 == 0 && R <= 256, "%s: C %d P %d R %d", key, C,
                              P, R);
                ck_assert_msg(P <= launch && R >= launch, "%s: launch share %d, producer %d, MMA warpgroups %d", key,
                              launch, P, R);
                const int pool = T * (launch > 255 ? 256 : launch);
                ck_assert_msg(warpgroups * R + 128 * P + 128 * D <= pool,
                              "%s: %d x %d + 128 x %d + 128 x %d registers of a pool of %d (%d CTAs)", key, warpgroups, R,
                              P, D, pool, C);
                accepted++;
                shared += C > 1;
                dequant += excp;
                sparse += form >= 8;
                qjit_free(ctx, src);
            }
    printf("producer=wg: %d keys accepted (%d with CTAs sharing an SM, %d excp, %d sparse), %d refused\n", accepted,
           shared, dequant, sparse, refused);
    ck_assert_int_ge(accepted, 160);
    ck_assert_int_ge(dequant, 40);
    ck_assert_int_ge(sparse, 40);
    ck_assert_int_ge(shared, 20);
    ck_assert_int_ge(refused, 40);
    qjit_context_destroy(ctx);
}
END_TEST

START_TEST(bad_keys_are_rejected)
{
    qjit_context *ctx = make_ctx();
    expect_bad(ctx, "scheme=w4a8-lqq;colour=red", QJIT_INVALID_KEY, "unknown field 'colour'");
    expect_bad(ctx, "scheme=foo", QJIT_INVALID_KEY, "unknown scheme 'foo'");
    /* w4ax (two activation parts) runs the multistage, decode and
     * warpgroup-MMA pipes, split-K through the workspace; two sets of sums
     * must fit. */
    expect_refused(ctx, "scheme=w4ax;pipe=decode;tile=16x32x64;warps=1x8;actq=fused", "not actq=fused");
    expect_refused(ctx, "scheme=w4ax;tile=16x64x128;warps=1x4;split=2;reduce=cluster", "not reduce=cluster");
    expect_refused(ctx, "scheme=w4ax;pipe=tma;tile=128x128x128;warps=1x8;split=2;reduce=cluster", "not reduce=cluster");
    expect_refused(ctx, "scheme=w4ax;pipe=tma;tile=256x128x128;warps=1x8", "w4ax's two sums");
    expect_refused(ctx, "scheme=w4ax;tile=16x64x128;warps=1x4;actq=fused", "not actq=fused");
    /* stash=1 (one set of sums, the INT8 part's in the workspace): two-part
     * schemes on the warpgroup-MMA pipes only; 0 is the default, unnamed. */
    expect_refused(ctx, "scheme=w4a4;pipe=tma;tile=128x128x128;warps=1x8;stash=1", "not scheme w4a4 on pipe=tma");
    expect_refused(ctx, "scheme=w4ax;tile=32x128x128;warps=1x4;stash=1", "not scheme w4ax on pipe=multistage");
    expect_bad(ctx, "scheme=w4ax;stash=2", QJIT_INVALID_KEY, "stash");
    {
        char a[1024], b[1024];
        canon(ctx, "scheme=w4ax;pipe=tma;tile=128x128x128;warps=1x8;stash=0", a);
        canon(ctx, "scheme=w4ax;pipe=tma;tile=128x128x128;warps=1x8", b);
        ck_assert_str_eq(a, b);
        ck_assert_ptr_null(strstr(a, "stash"));
        canon(ctx, "scheme=w4ax;pipe=tma;tile=128x128x128;warps=1x8;stash=1", a);
        ck_assert_ptr_nonnull(strstr(a, ";stash=1;"));
    }
    /* producer=wg (a warpgroup of its own fills the ring): the TMA pipe
     * only; thread is the default, unnamed. With a residual it comes with
     * its tile (no ring of its own), and the MMA warpgroups dequantize (no
     * excp). Two CTAs per SM leave the MMA warpgroups too few registers
     * for a 128x128 tile. */
    expect_refused(ctx, "pipe=wgmma;tile=64x128x128;warps=1x8;producer=wg", "producer=wg is for the TMA pipe (pipe=tma)");
    expect_refused(ctx, "tile=32x128x128;warps=1x4;producer=wg", "producer=wg is for the TMA pipe (pipe=tma)");
    expect_refused(ctx, "pipe=tma;tile=64x128x128;warps=1x8;sparsity=0.1;rslots=1;producer=wg",
                   "with producer=wg the residual comes with its tile");
    expect_refused(ctx, "pipe=tma;tile=128x128x128;warps=1x8;stages=3;split=1;sparsity=0.1;producer=wg;excp=1",
                   "a kernel with a residual (sparsity=0.1) adds it in the MMA warpgroups' registers");
    {
        char a[1024];
        canon(ctx, "pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster;sparsity=0.1;producer=wg", a);
        ck_assert_ptr_nonnull(strstr(a, ";producer=wg;"));
        canon(ctx, "pipe=tma;tile=128x256x128;warps=1x8;stages=3;sparsity=0.1;producer=wg;persist=1;sk=1", a);
        ck_assert_ptr_nonnull(strstr(a, ";persist=1;"));
    }
    expect_refused(ctx, "pipe=tma;tile=128x128x128;warps=1x8;stages=4;producer=wg",
                   "with producer=wg and 2 CTAs per SM the MMA warpgroups get 104");
    expect_bad(ctx, "producer=both", QJIT_INVALID_KEY, "producer");
    {
        char a[1024], b[1024];
        canon(ctx, "pipe=tma;tile=128x128x128;warps=1x8;producer=thread", a);
        canon(ctx, "pipe=tma;tile=128x128x128;warps=1x8", b);
        ck_assert_str_eq(a, b);
        canon(ctx, "pipe=tma;tile=128x256x128;warps=1x8;stages=5;producer=wg", a);
        ck_assert_ptr_nonnull(strstr(a, ";producer=wg;"));
        /* The warpgroup is past the MMA warpgroups: 384 threads a CTA, one
         * CTA per SM (168 registers each at launch), the ring's slots
         * released by the 8 MMA warps; the producer keeps 24 registers and
         * the MMA warpgroups take (65536 - 128 x 24) / 256 = 244 -> 240. */
        const char *has[] = {"__launch_bounds__(384, 1)", "#define THREADS 256", "if (warp >= THREADS / 32)",
                             "setmaxnreg.dec.sync.aligned.u32 24;", "setmaxnreg.inc.sync.aligned.u32 240;", NULL};
        const char *lacks[] = {"if (tid == 0 && kt > 0 && kt - 1 + STAGES < ktiles)", NULL};
        qjit_free(ctx, source_with(ctx, a, has, lacks));
    }
    expect_bad(ctx, "g=32", QJIT_INVALID_KEY, "multiple of 64");
    expect_bad(ctx, "scheme=w8a8;g=128", QJIT_INVALID_KEY, "per-channel weights only");
    expect_bad(ctx, "scheme=w4a8-is;g=0", QJIT_INVALID_KEY, "needs groups along K");
    expect_bad(ctx, "scheme=w4a8-qoq;g=96", QJIT_INVALID_KEY, "multiple of 64");
    expect_bad(ctx, "g=abc", QJIT_INVALID_KEY, "g=abc");
    expect_bad(ctx, "g=64;group=128", QJIT_INVALID_KEY, "given twice");
    expect_bad(ctx, "tile=64x128", QJIT_INVALID_KEY, "tile");
    expect_bad(ctx, "stages=1", QJIT_INVALID_KEY, "stages");
    expect_bad(ctx, "split=0", QJIT_INVALID_KEY, "split");
    expect_bad(ctx, "actq=maybe", QJIT_INVALID_KEY, "actq=maybe is not one of");
    expect_bad(ctx, "scheme", QJIT_INVALID_KEY, "not name=value");
    expect_bad(ctx, "kernel=softmax", QJIT_INVALID_KEY, "unknown kernel");
    expect_bad(ctx, "arch=sm_35", QJIT_UNSUPPORTED_ARCH, "sm_35");
    expect_bad(ctx, "arch=pentium", QJIT_INVALID_KEY, "pentium");
    /* Integer fields: decimal digits in the kernels' range, nothing else
     * read as a number (these were accepted: g=1e23 generated "#define
     * GROUP 1e+23", tile=1e999 became "inf", split=1e1 and threads=0x40
     * were read as 10 and 64). */
    expect_bad(ctx, "g=1e23", QJIT_INVALID_KEY, "g=1e23");
    expect_bad(ctx, "g=9223372036854775808", QJIT_INVALID_KEY, "decimal integer in [0, 65536]");
    expect_bad(ctx, "g=1099511627776", QJIT_INVALID_KEY, "decimal integer in [0, 65536]");
    expect_bad(ctx, "g=131072", QJIT_INVALID_KEY, "decimal integer in [0, 65536]");
    expect_bad(ctx, "g=-64", QJIT_INVALID_KEY, "g=-64");
    expect_bad(ctx, "g=128.0", QJIT_INVALID_KEY, "g=128.0");
    expect_bad(ctx, "tile=1e999x128x64", QJIT_INVALID_KEY, "'1e999' must be a decimal integer in [1, 256]");
    expect_bad(ctx, "tile=64x0x64", QJIT_INVALID_KEY, "'0' must be a decimal integer in [1, 1024]");
    expect_bad(ctx, "tile=64x128x64x", QJIT_INVALID_KEY, "needs 3 integers");
    expect_bad(ctx, "tile=64xx128x64", QJIT_INVALID_KEY, "needs 3 integers");
    expect_bad(ctx, "tile=0x40x128x64", QJIT_INVALID_KEY, "tile=0x40x128x64");
    expect_bad(ctx, "warps=2x64", QJIT_INVALID_KEY, "[1, 32]");
    expect_bad(ctx, "split=1e1", QJIT_INVALID_KEY, "split=1e1: must be a decimal integer in [1, 16]");
    expect_bad(ctx, "split=+2", QJIT_INVALID_KEY, "split=+2");
    expect_bad(ctx, "stages=4.0", QJIT_INVALID_KEY, "stages=4.0");
    expect_bad(ctx, "kernel=act-quant;threads=0x40", QJIT_INVALID_KEY, "threads=0x40");
    expect_bad(ctx, "kernel=act-quant;threads=2048", QJIT_INVALID_KEY, "[32, 1024]");
    /* Leading zeros are the same number. */
    char a[1024], b[1024];
    canon(ctx, "g=0128;split=02;tile=064x128x064", a);
    canon(ctx, "g=128;split=2;tile=64x128x64", b);
    ck_assert_str_eq(a, b);
    char small[8];
    ck_assert_int_eq(qjit_key_canonicalize(ctx, "g=64", small, sizeof small), QJIT_OVERFLOW);
    ck_assert_int_eq(qjit_key_canonicalize(ctx, NULL, small, sizeof small), QJIT_INVALID_ARGUMENT);
    qjit_context_destroy(ctx);
}
END_TEST

/* Generates `key` and checks its source holds every text of `has` and none
 * of `lacks` (NULL-terminated lists); returns the source (caller frees). */
static char *source_with(qjit_context *ctx, const char *key, const char *const *has, const char *const *lacks)
{
    char *src = NULL;
    size_t len = 0;
    ck_assert_msg(qjit_generate(ctx, key, &src, &len) == QJIT_OK, "%s: %s", key, qjit_last_error(ctx));
    ck_assert_uint_eq(len, strlen(src));
    for (; has && *has; has++)
        ck_assert_msg(strstr(src, *has) != NULL, "%s: source lacks '%s'", key, *has);
    for (; lacks && *lacks; lacks++)
        ck_assert_msg(strstr(src, *lacks) == NULL, "%s: source has '%s'", key, *lacks);
    return src;
}

/* qjit_generate refuses key (QJIT_INVALID_KEY, no source) saying words. */
static void expect_refused(qjit_context *ctx, const char *key, const char *words)
{
    char *src = (char *)0x1;
    size_t len = 0;
    ck_assert_int_eq(qjit_generate(ctx, key, &src, &len), QJIT_INVALID_KEY);
    ck_assert_ptr_null(src);
    ck_assert_msg(strstr(qjit_last_error(ctx), words) != NULL, "key '%s': message '%s' lacks '%s'", key,
                  qjit_last_error(ctx), words);
}

/* Keys and the words their refusals must say. */
typedef struct { const char *key, *words; } refusal;
static void expect_refusals(qjit_context *ctx, const refusal *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_refused(ctx, r[i].key, r[i].words);
}

/* The key fuzzer: keys built from the grammar (every field, its aliases,
 * good values, values at and past each range, other spellings of numbers,
 * junk) go through canonicalize and generate. Each is either refused with
 * QJIT_INVALID_KEY (or QJIT_UNSUPPORTED_ARCH) in a message that names what
 * is wrong, or generates; never another status (a template's Lua error, an
 * internal error); the first that generate also compile. QJIT_FUZZ_KEYS
 * and QJIT_FUZZ_COMPILES set how many (default 1500 and 3: a short setting
 * for CI). */
static const char *pick(qt_rng *r, const char *const *v, size_t n) { return v[qt_next(r) % n]; }

START_TEST(key_fuzzer)
{
    static const char *const fields[] = {"scheme", "g", "group", "tile", "cta", "warps", "warp", "stages", "stage",
                                         "split", "pipe", "pipeline", "actq", "reduce", "epi", "arch", "sm", "kernel",
                                         "threads", "bits", "rowsum", "colour"};
    static const char *const ints[] = {"0", "1", "2", "3", "4", "5", "8", "16", "17", "32", "64", "96", "128", "255",
                                       "256", "512", "1024", "4096", "65536", "65537", "1e1", "0x40", "8.0", "+2", "-1",
                                       "99999999999999999999", "", "abc", "1e999", "nan", "inf"};
    static const char *const words[] = {"w4a8-lqq", "lqq", "w4a8-qoq", "qoq", "w4a8-is", "is", "w8a8", "int8", "w4a4",
                                        "multistage", "decode", "wgmma", "tma", "ms", "kernel", "fused", "global",
                                        "cluster", "f16", "i32", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "90a",
                                        "sm_35", "gemm", "act-quant", "per-channel", "yes", "no", "banana"};
    long n = 1500, compiles = 3;
    const char *env = getenv("QJIT_FUZZ_KEYS"), *cenv = getenv("QJIT_FUZZ_COMPILES");
    if (env && atol(env) > 0)
        n = atol(env);
    if (cenv && atol(cenv) >= 0)
        compiles = atol(cenv);
    /* The keys that generate are compiled too, the first `compiles` of them
     * (NVRTC takes ~0.3 s each), into a cache folder of the test's own. */
    char *cache = qt_tempdir("fuzz");
    qjit_context_options o;
    qjit_context_options_init(&o);
    o.arch = "sm_90a";
    o.template_path = "";
    o.cache_dir = cache;
    qjit_context *ctx = NULL;
    ck_assert_int_eq(qjit_context_create(&o, &ctx), QJIT_OK);
    qt_rng r = qt_rng_make(0x6b6579);          /* seeded from qt_seed() */
    long ok = 0, refused = 0;
    for (long i = 0; i < n; i++) {
        static const char *const bases[] = {
            "scheme=w4a8-lqq;g=128;tile=32x128x128;warps=1x4;stages=4;split=2",
            "scheme=w4a8-qoq;g=0;pipe=decode;tile=16x32x64;warps=1x8;stages=4",
            "scheme=w4a8-is;g=64;pipe=wgmma;tile=64x128x128;warps=1x8;stages=4;split=3",
            "scheme=w8a8;g=0;pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=2;reduce=cluster",
            "kernel=act-quant;threads=512;rowsum=1",
        };
        char key[512] = "";
        int nf = 1 + (int)(qt_next(&r) % 7);
        if (i % 2) {
            /* A valid key with one or two fields changed (a later field of
             * the same name replaces nothing: given twice is refused). */
            snprintf(key, sizeof key, "%s", pick(&r, bases, sizeof bases / sizeof *bases));
            nf = 1 + (int)(qt_next(&r) % 2);
        }
        static const char *const gemm_fields[] = {"g", "tile", "warps", "stages", "split", "pipe", "reduce", "scheme",
                                                  "actq", "epi"};
        static const char *const dims[] = {"8", "16", "32", "48", "64", "96", "128", "192", "256"};
        for (int f = 0; f < nf; f++) {
            const int mutate = i % 2 && strncmp(key, "kernel=act-quant", 16) != 0;
            const char *name = mutate ? pick(&r, gemm_fields, sizeof gemm_fields / sizeof *gemm_fields)
                                      : pick(&r, fields, sizeof fields / sizeof *fields);
            char value[96];
            int kind = (int)(qt_next(&r) % 4);
            if (mutate && kind < 3 && (!strcmp(name, "tile") || !strcmp(name, "warps"))) {
                /* Plausible sizes: the plans' own checks decide. */
                int parts = !strcmp(name, "tile") ? 3 : 2;
                value[0] = 0;
                for (int q = 0; q < parts; q++) {
                    strcat(value, q ? "x" : "");
                    strcat(value, !strcmp(name, "warps") ? pick(&r, ints, 8) : pick(&r, dims, sizeof dims / sizeof *dims));
                }
            } else if (mutate && kind < 3 && strcmp(name, "scheme") && strcmp(name, "pipe") && strcmp(name, "reduce") &&
                       strcmp(name, "actq") && strcmp(name, "epi")) {
                snprintf(value, sizeof value, "%s", pick(&r, ints, 20));
            } else
            if (!strcmp(name, "tile") || !strcmp(name, "cta") || !strcmp(name, "warps") || !strcmp(name, "warp")) {
                int parts = (!strcmp(name, "tile") || !strcmp(name, "cta")) ? 3 : 2;
                if (kind == 3)
                    parts += (int)(qt_next(&r) % 3) - 1;
                value[0] = 0;
                for (int q = 0; q < parts; q++) {
                    strcat(value, q ? "x" : "");
                    strcat(value, pick(&r, ints, sizeof ints / sizeof *ints));
                }
            } else if (kind == 0 || kind == 3) {
                snprintf(value, sizeof value, "%s", pick(&r, words, sizeof words / sizeof *words));
            } else {
                snprintf(value, sizeof value, "%s", pick(&r, ints, sizeof ints / sizeof *ints));
            }
            char item[160];
            snprintf(item, sizeof item, "%s%s=%s", key[0] ? ";" : "", name, value);
            if (i % 2) {
                /* Replace the field in the base key where it is there. */
                char copy[512], rebuilt[512] = "";
                snprintf(copy, sizeof copy, "%s", key);
                for (char *tok = strtok(copy, ";"); tok; tok = strtok(NULL, ";")) {
                    size_t nl = strlen(name);
                    if (!strncmp(tok, name, nl) && tok[nl] == '=')
                        continue;
                    strncat(rebuilt, rebuilt[0] ? ";" : "", sizeof rebuilt - strlen(rebuilt) - 1);
                    strncat(rebuilt, tok, sizeof rebuilt - strlen(rebuilt) - 1);
                }
                snprintf(key, sizeof key, "%s", rebuilt);
                snprintf(item, sizeof item, "%s%s=%s", key[0] ? ";" : "", name, value);
            }
            strncat(key, item, sizeof key - strlen(key) - 1);
        }
        char out[2048];
        qjit_status st = qjit_key_canonicalize(ctx, key, out, sizeof out);
        if (st == QJIT_OK) {
            char *src = NULL;
            size_t len = 0;
            st = qjit_generate(ctx, key, &src, &len);
            qjit_free(ctx, src);
            if (st == QJIT_OK && ok < compiles)
                ck_assert_msg(qjit_compile(ctx, key, NULL, NULL) == QJIT_OK, "key '%s' generates but does not "
                              "compile: %s", key, qjit_last_error(ctx));
        }
        ck_assert_msg(st == QJIT_OK || st == QJIT_INVALID_KEY || st == QJIT_UNSUPPORTED_ARCH,
                      "key '%s': %s (%s)", key, qjit_status_name(st), qjit_last_error(ctx));
        if (st == QJIT_OK) {
            ok++;
        } else {
            refused++;
            ck_assert_msg(strlen(qjit_last_error(ctx)) > 10 && !strstr(qjit_last_error(ctx), "stack traceback"),
                          "key '%s': message '%s'", key, qjit_last_error(ctx));
        }
    }
    printf("key fuzzer: %ld keys, %ld generated (%ld of them compiled), %ld refused\n", n, ok,
           ok < compiles ? ok : compiles, refused);
    ck_assert_int_gt(ok, 0);
    ck_assert_int_gt(refused, 0);
    qjit_context_destroy(ctx);
    qt_rmtree(cache);
    free(cache);
}
END_TEST

START_TEST(generated_source_starts_with_its_key)
{
    qjit_context *ctx = make_ctx();
    char *src = NULL;
    size_t len = 0;
    const char *key = "scheme=w4a8-lqq;g=64;tile=16x64x128;warps=1x4;stages=3";
    ck_assert_int_eq(qjit_generate(ctx, key, &src, &len), QJIT_OK);
    char want[1024], first[1200];
    canon(ctx, key, want);
    snprintf(first, sizeof first, "// qjit variant: %s\n", want);
    ck_assert_msg(!strncmp(src, first, strlen(first)), "source starts with: %.200s", src);
    qjit_free(ctx, src);
    src = source_with(ctx, key,
                      (const char *const[]){"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
                                            "cp.async.cg.shared.global", "^ 0x80808080u", NULL},
                      (const char *const[]){"{{", "//%", NULL});
    qjit_free(ctx, src);
    /* A variant whose tiles do not fit is refused with the reason. */
    ck_assert_int_eq(qjit_generate(ctx, "tile=60x128x64", &src, &len), QJIT_INVALID_KEY);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), "multiple of 8"));
    ck_assert_int_eq(qjit_generate(ctx, "tile=256x256x128;warps=1x1;stages=8", &src, &len), QJIT_INVALID_KEY);
    qjit_context_destroy(ctx);
}
END_TEST

/* actq=fused: the few-token pipes quantize their own tokens (quantizer
 * CTAs publish flags, every CTA waits for them) instead of waiting for the
 * activation kernel; the warpgroup pipes refuse it. */
START_TEST(fused_quantization_is_a_variant_field)
{
    qjit_context *ctx = make_ctx();
    char *src = NULL;
    static const char *const keys[] = {
        "tile=16x64x128;warps=1x4;stages=4;split=4",
        "g=0;tile=32x128x64;warps=2x4;stages=3",
        "pipe=decode;tile=8x16x64;warps=1x16;stages=4",
        "pipe=decode;g=64;tile=16x32x64;warps=1x8;stages=4;epi=i32",
    };
    static const char *const fused_has[] = {"quantize_row<THREADS", "st.release.gpu.global.u64",
                                            "ld.acquire.gpu.global.u64", "unsigned long long epoch", NULL};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char key[256];
        snprintf(key, sizeof key, "%s;actq=fused", keys[i]);
        src = source_with(ctx, key, fused_has, (const char *const[]){"griddepcontrol", NULL});
        qjit_free(ctx, src);
        src = source_with(ctx, keys[i], (const char *const[]){"griddepcontrol.wait", NULL},
                          (const char *const[]){"quantize_row", "epoch", NULL});
        qjit_free(ctx, src);
    }
    /* Split-K: the quantizers also zero the arrival counters. */
    src = source_with(ctx, "tile=16x64x128;warps=1x4;split=2;actq=fused", (const char *const[]){"counters[i] = 0u",
                      NULL}, NULL);
    qjit_free(ctx, src);
    expect_refused(ctx, "pipe=wgmma;tile=64x128x128;warps=1x8;actq=fused", "actq=fused is for the few-token pipes");
    expect_refused(ctx, "pipe=tma;tile=128x128x128;warps=1x8;actq=fused", "actq=fused is for the few-token pipes");
    qjit_context_destroy(ctx);
}
END_TEST

/* reduce=cluster: the split-K slices of a tile add over distributed shared
 * memory (no partials, counters or fences), in every pipe with split-K;
 * refused where there is nothing to reduce or no clusters. */
START_TEST(cluster_reduction_is_a_variant_field)
{
    qjit_context *ctx = make_ctx();
    char *src = NULL;
    static const char *const keys[] = {
        "tile=16x64x128;warps=1x4;stages=4;split=2",
        "tile=32x128x128;warps=1x4;stages=4;split=8;epi=i32",
        "pipe=wgmma;tile=64x128x128;warps=1x8;stages=4;split=4",
        "pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=4",
    };
    static const char *const cluster_has[] = {"barrier.cluster.arrive.relaxed", "mapa.shared::cluster",
                                              "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.s32",
                                              "mbar_wait(recv, 0)", "row_lo * CHUNKS_PER_ROW", NULL};
    static const char *const global_has[] = {"atomicAdd(counters + tile", "__threadfence", NULL};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char key[256];
        snprintf(key, sizeof key, "%s;reduce=cluster", keys[i]);
        src = source_with(ctx, key, cluster_has,
                          (const char *const[]){"atomicAdd(counters", "partials +", "barrier.cluster.arrive.release",
                                                "fence.acq_rel", NULL});
        qjit_free(ctx, src);
        src = source_with(ctx, keys[i], global_has, (const char *const[]){"barrier.cluster", NULL});
        qjit_free(ctx, src);
    }
    static const refusal bad[] = {
        {"tile=16x64x128;warps=1x4;split=1;reduce=cluster", "leaves nothing to reduce"},
        {"tile=16x64x128;warps=1x4;split=16;reduce=cluster", "portable cluster size 8"},
        {"tile=16x64x128;warps=1x4;split=2;reduce=cluster;arch=sm_80", "needs thread-block clusters"},
        {"pipe=decode;tile=8x16x64;warps=1x16;reduce=cluster", "there is no split-K"},
        {"tile=16x64x128;warps=1x4;split=2;reduce=dsm", "reduce=dsm is not one of: cluster, global"},
    };
    expect_refusals(ctx, bad, sizeof bad / sizeof bad[0]);
    qjit_context_destroy(ctx);
}
END_TEST

/* Every scheme: its spellings, its group default, and its device code in
 * every pipe (the scheme's own routine under the names the pipes call). */
START_TEST(schemes_generate_in_every_pipe)
{
    qjit_context *ctx = make_ctx();
    char a[1024], b[1024];
    canon(ctx, "scheme=qoq", a);
    canon(ctx, "scheme=w4a8_qoq;g=128", b);
    ck_assert_str_eq(a, b);
    canon(ctx, "scheme=int8", a);
    ck_assert_ptr_nonnull(strstr(a, "g=0;"));           /* w8a8's default group: per channel */
    ck_assert_ptr_nonnull(strstr(a, "scheme=w8a8;"));
    static const char *const pipes[] = {
        "tile=32x128x128;warps=1x4;split=2", "pipe=decode;tile=16x32x64;warps=1x8",
        "pipe=wgmma;tile=64x128x128;warps=1x8", "pipe=tma;tile=128x128x128;warps=1x8;split=2",
        "tile=16x64x128;warps=1x4;actq=fused",
    };
    static const struct { const char *scheme; const char *has[4]; const char *lacks[3]; } cases[] = {
        {"scheme=w4a8-lqq;g=128", {"^ 0x80808080u", "wparams_from", NULL}, {"fold_scale", "EPI_ROW_ARGS sx, rowsum", NULL}},
        {"scheme=w4a8-qoq;g=64", {"(128u - (p >> 8)) & 0xFFu", "wparams_from", NULL},
         {"fold_scale", "EPI_ROW_ARGS sx, rowsum", NULL}},
        {"scheme=w4a8-qoq;g=0", {"EPI_ROW_ARGS sx, rowsum", "acc - c.z * r.sum", "const int *__restrict__ zero", NULL},
         {"gparams", "fold_scale", NULL}},
        {"scheme=w4a8-is;g=128", {"fold_scale(prs[", "0x78787878u", NULL}, {"EPI_ROW_ARGS sx, rowsum", NULL}},
        {"scheme=w8a8", {"#define W_VECS 2", "a[kk][0] = w[kk].x", NULL}, {"gparams", "fold_scale", NULL}},
        {"scheme=int4", {"offset8_dequant(w[0], a)", "#define W_VECS 1", NULL}, {"gparams", "fold_scale", NULL}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t p = 0; p < sizeof pipes / sizeof pipes[0]; p++) {
            char key[256];
            snprintf(key, sizeof key, "%s;%s", cases[c].scheme, pipes[p]);
            char *src = source_with(ctx, key, cases[c].has, cases[c].lacks);
            qjit_free(ctx, src);
        }
    /* The activation kernel of zero-point epilogues also sums each row. */
    char *src = source_with(ctx, "kernel=act-quant;rowsum=1",
                            (const char *const[]){"quantize_row<THREADS, CACHED, true, 1, CTAS>(X, (uint2 *)Xq, sx, rowsum", NULL},
                            NULL);
    qjit_free(ctx, src);
    src = source_with(ctx, "kernel=act-quant", (const char *const[]){"quantize_row<THREADS, CACHED, false, 1, CTAS>", NULL},
                      (const char *const[]){"sx, rowsum, m, K", NULL});
    qjit_free(ctx, src);
    /* A two-part layer's (w4ax): its own routine, gathering through the
     * layer's order (a packed section) with the INT8 channels' count (the
     * layer's parameter); no row sums with it. */
    src = source_with(ctx, "kernel=act-quant;bits=8+4",
                      (const char *const[]){"qjit_act_quant_a8a4(", "const uint4 *__restrict__ perm", "int k8",
                                            "quantize_row_parts(", "a8 / 127.0f", "a4 / 7.0f", NULL},
                      (const char *const[]){"quantize_row<", NULL});
    qjit_free(ctx, src);
    expect_refused(ctx, "kernel=act-quant;bits=8+4;rowsum=1", "not bits=8+4");
    /* w4ax-s's: one scale per token for both parts, in place (the caller's
     * order, each value's part from the INT8 channels' set): no order, no
     * gather, no INT8 channels' count. */
    src = source_with(ctx, "kernel=act-quant;bits=8+4;scales=1;inplace=1",
                      (const char *const[]){"qjit_act_quant_a8a4s_inplace(", "quantize_row_inplace<THREADS, CACHED, CTAS>",
                                            "const unsigned char *__restrict__ a8set", "fmaxf(a8 / 127.0f, a4 / 7.0f)",
                                            "sx[m] = s8", "b >> e & 1u ? 127.0f : 7.0f", NULL},
                      (const char *const[]){"sx[2 * m + 1]", "perm", "int k8", "quantize_row_parts", "quant_quad(", NULL});
    qjit_free(ctx, src);
    expect_refused(ctx, "kernel=act-quant;bits=4;scales=1", "is for bits=8+4");
    expect_refused(ctx, "kernel=act-quant;bits=8+4;scales=1;pack=2", "one value per byte");
    expect_refused(ctx, "kernel=act-quant;bits=8+4;scales=1", "name inplace=1");
    expect_refused(ctx, "kernel=act-quant;bits=8+4;inplace=1", "with scales=1 and no cache");
    expect_refused(ctx, "kernel=act-quant;bits=8+4;scales=1;inplace=1;cache=8192", "with scales=1 and no cache");
    expect_refused(ctx, "kernel=act-quant;bits=4;inplace=1", "for bits=8+4");
    expect_bad(ctx, "kernel=act-quant;bits=8+4;scales=1;inplace=2", QJIT_INVALID_KEY, "inplace");
    /* cache=C: two-part rows of up to C channels gathered from shared memory. */
    src = source_with(ctx, "kernel=act-quant;bits=8+4;cache=8192;threads=512",
                      (const char *const[]){"qjit_act_quant_a8a4_cached(", "#define CACHE 8192",
                                            "if (K <= CACHE)", "quantize_row_parts_cached(", NULL},
                      NULL);
    qjit_free(ctx, src);
    expect_refused(ctx, "kernel=act-quant;bits=8;cache=8192", "is for bits=8+4");
    /* ctas=P: a token over P CTAs (grid z), each storing every Pth round. */
    src = source_with(ctx, "kernel=act-quant;bits=8+4;cache=16384;ctas=6;threads=512",
                      (const char *const[]){"qjit_act_quant_a8a4_cached_ctas6(", "#define CTAS 6",
                                            "i % CTAS == (int)blockIdx.z", "threadIdx.x == 0 && blockIdx.z == 0", NULL},
                      NULL);
    qjit_free(ctx, src);
    src = source_with(ctx, "kernel=act-quant;bits=8+4;scales=1;inplace=1;ctas=5;threads=512",
                      (const char *const[]){"qjit_act_quant_a8a4s_inplace_ctas5(", "#define CTAS 5",
                                            "c / T % P != (int)blockIdx.z", "threadIdx.x == 0 && blockIdx.z == 0", NULL},
                      NULL);
    qjit_free(ctx, src);
    src = source_with(ctx, "kernel=act-quant;bits=8;ctas=7;threads=512",
                      (const char *const[]){"qjit_act_quant_a8_ctas7(", "#define CTAS 7", "1, CTAS>(X,", NULL}, NULL);
    qjit_free(ctx, src);
    expect_refused(ctx, "kernel=act-quant;bits=8;rowsum=1;ctas=2", "for rows without sums");
    expect_bad(ctx, "kernel=act-quant;bits=8;ctas=17", QJIT_INVALID_KEY, "ctas");
    expect_refused(ctx, "kernel=act-quant;bits=8+4;cache=1000;threads=512", "multiple of 4 x threads");
    expect_bad(ctx, "kernel=act-quant;bits=8+4;cache=65536", QJIT_INVALID_KEY, "cache");
    {
        char ka[1024], kb[1024];
        canon(ctx, "kernel=act-quant;bits=8+4;scales=2", ka);
        canon(ctx, "kernel=act-quant;bits=8+4", kb);
        ck_assert_str_eq(ka, kb);
    }
    /* w4ax-s's GEMMs are one-part ones (any pipe, cluster reduction), but
     * its tokens come from the activation kernel, in the layer's order. */
    expect_refused(ctx, "scheme=w4ax-s;tile=16x64x128;warps=1x4;actq=fused", "runs with actq=kernel");
    expect_refused(ctx, "scheme=w4ax-s;tile=32x128x128;warps=1x4;mma=s4", "no INT4 operand form");
    expect_refused(ctx, "scheme=w4ax-s;pipe=tma;tile=128x128x128;warps=1x8;stash=1", "not scheme w4ax-s");
    src = source_with(ctx, "scheme=w4ax-s;pipe=tma;tile=128x128x128;warps=1x8;split=2;reduce=cluster",
                      (const char *const[]){"qjit_gemm_tma_w4ax_s(", "offset8_dequant", NULL},
                      (const char *const[]){"k8", "acc4", NULL});
    qjit_free(ctx, src);
    expect_bad(ctx, "kernel=act-quant;bits=4+8", QJIT_INVALID_KEY, "bits");
    /* INT4 activations: the same routine with a limit of 7 (a fused w4a4 GEMM too). */
    src = source_with(ctx, "kernel=act-quant;bits=4", (const char *const[]){"#define ACT_LIMIT 7.0f", NULL},
                      (const char *const[]){"#define ACT_LIMIT 127.0f", NULL});
    qjit_free(ctx, src);
    src = source_with(ctx, "scheme=w4a4;tile=16x64x128;warps=1x4;actq=fused",
                      (const char *const[]){"#define ACT_LIMIT 7.0f", NULL}, NULL);
    qjit_free(ctx, src);
    expect_refused(ctx, "kernel=act-quant;bits=2", "bits=2 is not one of: 4, 8");
    /* A per-group rescale doubles the accumulators: tiles that fit w4a8-lqq
     * may not fit w4a8-is. */
    expect_refused(ctx, "scheme=w4a8-is;tile=128x128x64;warps=1x4", "per-group sums");
    qjit_context_destroy(ctx);
}
END_TEST

/* The Lua scheme modules and the host side agree: for every scheme and
 * group, the sections dispatch.lua plans are the host's, name for name and
 * byte for byte, and every bucket's kernels bind only what exists. */
START_TEST(plans_agree_with_the_host)
{
    qjit_context *ctx = make_ctx();
    static const struct { qjit_scheme s; int g; } sg[] = {
        {QJIT_SCHEME_W4A8_LQQ, 0}, {QJIT_SCHEME_W4A8_LQQ, 64}, {QJIT_SCHEME_W4A8_QOQ, 0}, {QJIT_SCHEME_W4A8_QOQ, 128},
        {QJIT_SCHEME_W4A8_IS, 64}, {QJIT_SCHEME_W4A8_IS, 256}, {QJIT_SCHEME_W8A8, 0}, {QJIT_SCHEME_W4A4, 0},
        {QJIT_SCHEME_W4AX, 0}, {QJIT_SCHEME_W4AX_S, 0},
    };
    static const int64_t shapes[][2] = {{4096, 4096}, {16 * 21, 64 * 12}, {8192, 28672}, {1024, 73728}};
    for (size_t i = 0; i < sizeof sg / sizeof sg[0]; i++)
        for (size_t j = 0; j < sizeof shapes / sizeof shapes[0]; j++) {
            const qjit__scheme *host = qjit__scheme_get(sg[i].s);
            int64_t N = shapes[j][0], K = shapes[j][1];
            qjit__layer_plan plan;
            const qjit__plan_request req = {host->name, sg[i].g, N, K, "sm_90a", 132, NULL, 0, 0, 0, NULL, 0, NULL};
            pthread_mutex_lock(&ctx->lock);
            qjit_status st = qjit__plan_layer(ctx, &req, &plan);
            pthread_mutex_unlock(&ctx->lock);
            ck_assert_msg(st == QJIT_OK, "%s g=%d %lldx%lld: %s", host->name, sg[i].g, (long long)N, (long long)K,
                          qjit_last_error(ctx));
            ck_assert_int_eq(plan.nsections, host->nsections);
            for (int k = 0; k < host->nsections; k++) {
                ck_assert_str_eq(plan.sections[k].name, host->sections[k]);
                ck_assert_uint_eq(plan.sections[k].bytes, host->slab_bytes(k, K, sg[i].g) * (size_t)(N / 16) +
                                                              (host->layer_bytes ? host->layer_bytes(k, K) : 0));
            }
            for (int b = 0; b < plan.nbuckets; b++) {
                ck_assert_ptr_nonnull(strstr(plan.buckets[b].gemm.key, host->name));
                ck_assert_str_eq(plan.buckets[b].gemm.signature, plan.buckets[b].gemm_acc.signature);
                ck_assert_ptr_nonnull(strstr(plan.buckets[b].gemm_acc.key, "epi=i32"));
                /* The activation kernel quantizes to the scheme's bits. */
                ck_assert(plan.buckets[b].has_quant);
                ck_assert_msg(strstr(plan.buckets[b].quant.key, host->two_part ? "bits=8+4;"
                                                            : qjit_scheme_activation_bits(sg[i].s) == 4 ? "bits=4;"
                                                                                                        : "bits=8;"),
                              "%s: %s", host->name, plan.buckets[b].quant.key);
                /* A cluster reduction's GEMM (both planes) is launched in clusters of its split. */
                const char *split = strstr(plan.buckets[b].gemm.key, ";split=");
                const int gcl = strstr(plan.buckets[b].gemm.key, "reduce=cluster") ? (int)strtol(split + 7, NULL, 10) : 1;
                ck_assert_int_eq(plan.buckets[b].gemm.cluster, gcl);
                ck_assert_int_eq(plan.buckets[b].gemm_acc.cluster, gcl);
                for (int s = 0; s < plan.buckets[b].gemm.nslots; s++)
                    if (plan.buckets[b].gemm.slots[s].kind == QJIT__SLOT_WEIGHTS)
                        ck_assert_uint_gt(plan.sections[plan.buckets[b].gemm.slots[s].ref].bytes, 0);
                /* A two-part layer: no cluster reduction, the decode pipe
                 * for few tokens where the 4-bit table takes it (M <= 8 at
                 * N <= 4096, M <= 16 at N <= 8192),
                 * the TMA pipe past 1024 tokens where K takes its tiles, both
                 * kernels told its INT8 channels, the activation kernel its
                 * order. */
                if (host->shared_scale) {
                    /* One scale, one sum: w4a4's kernel for the bucket (the
                     * same key but the scheme), after the two-part
                     * activation kernel with one scale, in place (w4a4's
                     * activation key but bits=8+4;inplace=1;scales=1). */
                    qjit__layer_plan p4;
                    const qjit__plan_request r4 = {"w4a4", 0, N, K, "sm_90a", 132, NULL, 0, 0, 0, NULL, 0, NULL};
                    pthread_mutex_lock(&ctx->lock);
                    ck_assert_int_eq(qjit__plan_layer(ctx, &r4, &p4), QJIT_OK);
                    pthread_mutex_unlock(&ctx->lock);
                    char want[1024];
                    const char *k4 = p4.buckets[b].gemm.key, *at = strstr(k4, "scheme=w4a4");
                    ck_assert_ptr_nonnull(at);
                    snprintf(want, sizeof want, "%.*sscheme=w4ax-s%s", (int)(at - k4), k4, at + strlen("scheme=w4a4"));
                    ck_assert_str_eq(plan.buckets[b].gemm.key, want);
                    ck_assert_ptr_null(strstr(plan.buckets[b].gemm.signature, ",k8"));
                    ck_assert_ptr_nonnull(strstr(plan.buckets[b].quant.key, ";scales=1;"));
                    ck_assert_ptr_nonnull(strstr(plan.buckets[b].quant.signature, "X,a8set,"));
                    ck_assert_ptr_null(strstr(plan.buckets[b].quant.signature, ",k8,"));
                    const char *q4 = p4.buckets[b].quant.key, *bits4 = strstr(q4, "bits=4;");
                    ck_assert_ptr_nonnull(bits4);
                    char qwant[1024], qcanon[1024];
                    snprintf(qwant, sizeof qwant, "%.*sbits=8+4;%s;inplace=1;scales=1", (int)(bits4 - q4), q4,
                             bits4 + strlen("bits=4;"));
                    canon(ctx, qwant, qcanon);
                    ck_assert_str_eq(plan.buckets[b].quant.key, qcanon);
                    qjit__plan_release(ctx, &p4);
                } else if (host->two_part) {
                    const char *key = plan.buckets[b].gemm.key;
                    ck_assert_msg(!strstr(key, "reduce=cluster"), "%s", key);
                    const int64_t mm = plan.buckets[b].max_m;
                    ck_assert_msg(!strstr(key, "pipe=decode;") == !((mm == 8 && N <= 4096) || (mm == 16 && N <= 8192)),
                                  "%s", key);
                    if (plan.buckets[b].max_m == 0)
                        ck_assert_msg(strstr(key, K % 128 ? "pipe=multistage;" : "pipe=tma;"), "%s", key);
                    /* One set of sums (stash=1) past 1024 tokens only. */
                    ck_assert_msg(!strstr(key, ";stash=1;") == !(plan.buckets[b].max_m == 0 && K % 128 == 0), "%s", key);
                    ck_assert_ptr_nonnull(strstr(plan.buckets[b].gemm.signature, ",k8"));
                    ck_assert_ptr_nonnull(strstr(plan.buckets[b].quant.signature, "X,perm,"));
                    ck_assert_ptr_nonnull(strstr(plan.buckets[b].quant.signature, ",k8,"));
                }
                if (host->two_part && !host->shared_scale) {
                    /* Few tokens gather from a copy of the row in shared
                     * memory, the smallest that holds K. */
                    const char *qkey = plan.buckets[b].quant.key;
                    const int64_t qm = plan.buckets[b].max_m;
                    const char *cache = strstr(qkey, "cache=");
                    ck_assert_msg(!cache == (!(qm > 0 && qm <= 256) || K > 32768), "K=%lld: %s", (long long)K, qkey);
                    if (cache) {
                        long c = strtol(cache + 6, NULL, 10);
                        ck_assert_msg(c >= K && (c == 8192 || c / 2 < K), "K=%lld: %s", (long long)K, cache);
                    }
                } else {
                    ck_assert_ptr_null(strstr(plan.buckets[b].quant.key, "cache="));
                }
                /* Up to 16 tokens, each over P CTAs (grid z): P the least
                 * of 8, the row's rounds of 512 threads (4 positions a
                 * thread two-part, 8 channels one-part, 32 packed) and
                 * 2 x 132 / max_m, if at least 3; none for rows with sums. */
                {
                    const char *qkey = plan.buckets[b].quant.key;
                    const int64_t qm = plan.buckets[b].max_m;
                    const int64_t per = host->two_part && !host->shared_scale ? 4 : strstr(qkey, "pack=2") ? 32 : 8;
                    int64_t want = (K / per + 511) / 512;
                    if (want > 8)
                        want = 8;
                    if (qm > 0 && 264 / qm < want)
                        want = 264 / qm;
                    if (qm == 0 || qm > 16 || strstr(qkey, "rowsum=1") || want < 3)
                        want = 1;
                    const char *ctas = strstr(qkey, "ctas=");
                    ck_assert_msg((ctas ? strtol(ctas + 5, NULL, 10) : 1) == want, "K=%lld max_m=%lld: %s",
                                  (long long)K, (long long)qm, qkey);
                    ck_assert_int_eq(plan.buckets[b].quant.grid[2].base, want);
                    ck_assert_int_eq(plan.buckets[b].quant.grid[2].per_m, 0);
                    ck_assert_int_eq(plan.buckets[b].quant.cluster, 1);
                }
            }
            qjit__plan_release(ctx, &plan);
        }
    /* A forced variant of another group or scheme is refused with the reason. */
    qjit__layer_plan plan;
    const qjit__plan_request bad_group = {"w4a8-qoq", 128, 4096, 4096, "sm_90a", 132, "g=64", 0, 0, 0, NULL, 0, NULL};
    const qjit__plan_request bad_scheme = {"w4a8-qoq", 128, 4096, 4096, "sm_90a", 132, "scheme=w4a8-is", 0, 0, 0, NULL, 0, NULL};
    pthread_mutex_lock(&ctx->lock);
    ck_assert_int_eq(qjit__plan_layer(ctx, &bad_group, &plan), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), "g=128, the group of the weights"));
    qjit__plan_release(ctx, &plan);
    ck_assert_int_eq(qjit__plan_layer(ctx, &bad_scheme, &plan), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), "the weights are w4a8-qoq"));
    qjit__plan_release(ctx, &plan);
    pthread_mutex_unlock(&ctx->lock);
    qjit_context_destroy(ctx);
}
END_TEST

/* persist=1 (a persistent TMA kernel) takes a producer warpgroup at split
 * 1 and one activation part; its output tile gets room past the ring (so
 * 256x128 keeps 3 stages, not 4); band=B needs it. Its grid is one CTA per
 * output tile up to the places the SMs have (here one per SM); its output
 * tiles go out through a tensor map of Y, and its INT32 twin stores from
 * the registers, taking no room. */
START_TEST(persistent_keys_and_grid)
{
    qjit_context *ctx = make_ctx();
    char a[1024];
    expect_refused(ctx, "pipe=tma;tile=128x128x128;warps=1x8;persist=1", "needs producer=wg and split=1, not producer=thread");
    expect_refused(ctx, "pipe=tma;tile=128x128x128;warps=1x8;stages=6;split=2;producer=wg;persist=1",
                   "needs producer=wg and split=1, not split=2");
    expect_refused(ctx, "scheme=w4ax;pipe=tma;tile=128x128x128;warps=1x8;stages=6;producer=wg;persist=1",
                   "two activation parts");
    expect_refused(ctx, "pipe=tma;tile=256x128x128;warps=2x4;stages=4;producer=wg;persist=1",
                   "4 stages of 41984 and the output tile's 65536");
    expect_refused(ctx, "pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg;band=2", "it needs persist=1");
    expect_bad(ctx, "persist=2", QJIT_INVALID_KEY, "persist");
    canon(ctx, "pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg;persist=1;band=0", a);
    ck_assert_ptr_nonnull(strstr(a, ";persist=1;"));
    ck_assert_ptr_null(strstr(a, "band="));
    {
        const char *has[] = {"tile_origin(t, tiles_n, tiles_m, band, n_cta, m_cta);", "#define EPI_TILE_OFF 125952",
                             "tma_store_2d(&ymap, smem_base + EPI_TILE_OFF + b * (BM * 128), n_cta + b * 64, m_cta);",
                             "bulk_wait_read();", "stsm_x4_trans(at, v);",
                             "pre_m[j][odd] = epi_row_load(EPI_ROW_ARGS, m, m < M);",
                             "mbar_wait(full0 + ((ring0 + kt) % STAGES) * 8, ((ring0 + kt) / STAGES) & 1);",
                             "const int band = max(1, min(tiles_m,", NULL};
        /* The end waits only for the stores to have read shared memory. */
        const char *lacks[] = {"__syncthreads();\n    constexpr int PER_CHUNK", "cp.async.bulk.wait_group 0;", NULL};
        qjit_free(ctx, source_with(ctx, a, has, lacks));
        char b[1024];
        canon(ctx, "pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg;persist=1;band=5;epi=i32", b);
        const char *has_i32[] = {"const int band = min(5, tiles_m);", "Y[(size_t)m * N + n] = ACC(q);", NULL};
        const char *lacks_i32[] = {"int *tile =", "tma_store_2d(&ymap", "stsm_x4_trans(at, v);", NULL};
        qjit_free(ctx, source_with(ctx, b, has_i32, lacks_i32));
    }
    const qjit__plan_request req = {"w4a8-lqq", 128, 28672, 4096, "sm_90a", 132,
                                    "tile=256x128x128;warps=2x4;stages=3;pipe=tma;producer=wg;persist=1",
                                    0, 0, 0, NULL, 0, NULL};
    qjit__layer_plan plan;
    pthread_mutex_lock(&ctx->lock);
    ck_assert_int_eq(qjit__plan_layer(ctx, &req, &plan), QJIT_OK);
    for (int b = 0; b < plan.nbuckets; b++) {
        const qjit__grid_dim *g = plan.buckets[b].gemm.grid;
        ck_assert_int_eq(g[0].per_m, 1);
        ck_assert_int_eq(g[0].div, 256);
        ck_assert_int_eq(g[0].mul, 28672 / 128);
        ck_assert_int_eq(g[0].max, 132);
        ck_assert_int_eq(g[1].base, 1);
        ck_assert_int_eq(g[2].base, 1);
        ck_assert_int_eq(plan.buckets[b].gemm_acc.grid[0].max, 132);
        /* The output's tensor map, encoded per call over Y: M rows of N
         * 16-bit floats, boxes of 64 columns x the tile's tokens. */
        int y = -1;
        for (int m = 0; m < plan.buckets[b].nmaps; m++)
            if (!strcmp(plan.buckets[b].maps[m].name, "ymap"))
                y = m;
        ck_assert_int_ge(y, 0);
        const qjit__map_plan *ym = &plan.buckets[b].maps[y];
        ck_assert_int_eq(ym->source, QJIT__MAP_OF_OUTPUT);
        ck_assert_int_eq(ym->type, QJIT__MAP_U16);
        ck_assert_uint_eq(ym->cols, 28672);
        ck_assert_uint_eq(ym->stride, 2 * 28672);
        ck_assert_uint_eq(ym->rows_per_m, 1);
        ck_assert_uint_eq(ym->box_cols, 64);
        ck_assert_uint_eq(ym->box_rows, 256);
        ck_assert_int_eq(ym->swizzle, 128);
    }
    qjit__plan_release(ctx, &plan);
    pthread_mutex_unlock(&ctx->lock);
    qjit_context_destroy(ctx);
}
END_TEST

/* wu8=1: w4a8-lqq's weights go into the warpgroup MMA as the unsigned
 * bytes Q4 * s + a (no XOR 0x80, .u8 operands), and the sums of the slice
 * that starts K start at -128 * sum_k Xq[m, k] (the tokens' row sums, which
 * the kernels take): no epilogue, the INT32 twin's included, reads them.
 * Only the dense warpgroup-MMA pipes of a scheme with the unsigned form
 * take it; the table names it on every one of lqq's. */
START_TEST(wu8_keys)
{
    qjit_context *ctx = make_ctx();
    static const char *const pipes[] = {
        "pipe=wgmma;tile=64x128x128;warps=1x8",
        "pipe=tma;tile=128x128x128;warps=1x8;split=2",
        "pipe=tma;tile=128x256x128;warps=1x8;stages=4;producer=wg;persist=1;sk=1",
    };
    for (size_t i = 0; i < sizeof pipes / sizeof pipes[0]; i++)
        for (int i32 = 0; i32 < 2; i32++) {
            char key[256];
            snprintf(key, sizeof key, "scheme=w4a8-lqq;g=128;wu8=1;%s%s", pipes[i], i32 ? ";epi=i32" : "");
            const char *has[] = {"k32.s32.u8.s8 ", "return q4x4 * s + a4;", "const int *__restrict__ rowsum",
                                 "m < M ? (int)((0u - ((unsigned)rowsum[m] << 7)) & first) : 0", NULL};
            char *src = source_with(ctx, key, has,
                                    (const char *const[]){"^ 0x80808080u", "k32.s32.s8.s8 ", "EPI_ROW_ARGS sx, rowsum",
                                                          "(unsigned)ACC(", NULL});
            qjit_free(ctx, src);
            /* Without it: signed weights, no row sums. */
            snprintf(key, sizeof key, "scheme=w4a8-lqq;g=128;%s%s", pipes[i], i32 ? ";epi=i32" : "");
            src = source_with(ctx, key, (const char *const[]){"k32.s32.s8.s8 ", "^ 0x80808080u", NULL},
                              (const char *const[]){"rowsum", ".u8.s8", NULL});
            qjit_free(ctx, src);
        }
    char a[512];
    canon(ctx, "scheme=w4a8-lqq;pipe=tma;tile=128x128x128;warps=1x8;wu8=0", a);
    ck_assert_ptr_null(strstr(a, "wu8"));
    /* With a sparse residual: added to the unsigned bytes in one add (U8' +
     * R8 = (Q8' + R8) + 128 stays in 0..255), no sign flips. */
    {
        const char *has[] = {"k32.s32.u8.s8 ", "return q + n - 0x08080808u;", "return q4x4 * s + a4;", NULL};
        char *src = source_with(ctx, "scheme=w4a8-lqq;g=128;pipe=tma;tile=64x128x128;warps=1x8;sparsity=0.1;wu8=1", has,
                                (const char *const[]){"^ 0x80808080u", NULL});
        qjit_free(ctx, src);
    }
    static const refusal r[] = {
        {"scheme=w4a8-lqq;wu8=1", "not pipe=multistage"},
        {"scheme=w4a8-lqq;pipe=decode;tile=16x32x64;warps=1x8;wu8=1", "not pipe=decode"},
        {"scheme=w4a8-lqq;pipe=tma;tile=128x128x128;warps=1x8;stages=4;producer=wg;excp=1;wu8=1", "excp=1"},
        {"scheme=w4a8-qoq;pipe=tma;tile=128x128x128;warps=1x8;wu8=1", "no unsigned form"},
        {"scheme=w8a8;g=0;pipe=tma;tile=128x128x128;warps=1x8;wu8=1", "no unsigned form"},
    };
    expect_refusals(ctx, r, sizeof r / sizeof r[0]);
    expect_bad(ctx, "wu8=2", QJIT_INVALID_KEY, "wu8");
    /* The table: lqq's warpgroup-MMA buckets take it, and their activation
     * kernels write the row sums (one CTA a token); the few-token pipes and
     * the other schemes keep signed weights. */
    static const char *const schemes[] = {"w4a8-lqq", "w4a8-qoq", "w4a8-is", "w8a8"};
    for (size_t s = 0; s < sizeof schemes / sizeof schemes[0]; s++) {
        qjit__layer_plan plan;
        const qjit__plan_request req = {schemes[s], s == 3 ? 0 : 128, 12288, 4096, "sm_90a", 132, NULL, 0, 0, 0, NULL,
                                        0, NULL};
        pthread_mutex_lock(&ctx->lock);
        ck_assert_int_eq(qjit__plan_layer(ctx, &req, &plan), QJIT_OK);
        pthread_mutex_unlock(&ctx->lock);
        int with = 0;
        for (int b = 0; b < plan.nbuckets; b++) {
            const char *key = plan.buckets[b].gemm.key, *q = plan.buckets[b].quant.key;
            const int wg = strstr(key, "pipe=tma;") || strstr(key, "pipe=wgmma;");
            const int wu = strstr(key, ";wu8=1") != NULL;
            ck_assert_msg(wu == (s == 0 && wg), "%s", key);
            ck_assert_msg(!strstr(q, "rowsum=1") == !wu, "%s: %s", key, q);
            ck_assert_msg(!strstr(plan.buckets[b].gemm.signature, "rowsum") == !wu, "%s", key);
            ck_assert_msg(!strstr(plan.buckets[b].gemm_acc.key, ";wu8=1") == !wu, "%s", plan.buckets[b].gemm_acc.key);
            with += wu;
        }
        if (s == 0)
            ck_assert_int_ge(with, 4);
        qjit__plan_release(ctx, &plan);
    }
    qjit_context_destroy(ctx);
}
END_TEST

/* excp=1 (explicit dequantization) beside the producer warpgroup at split
 * 1, for the schemes whose MMA warpgroups dequantize into registers with
 * one set of sums: a dequantization warpgroup writes the INT8 weights into
 * a ring of two slots in shared memory (its room counted), and the MMAs
 * read both operands through descriptors. */
START_TEST(excp_keys)
{
    qjit_context *ctx = make_ctx();
    char a[1024], b[1024];
    static const refusal r[] = {
        {"pipe=tma;tile=256x128x128;warps=2x4;stages=3;excp=1", "needs producer=wg and split=1, not producer=thread"},
        {"pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=2;producer=wg;excp=1", "not split=2"},
        {"scheme=w8a8;g=0;pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg;excp=1", "nothing to dequantize"},
        {"scheme=w4a8-is;pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg;excp=1", "per-group rescale"},
        {"scheme=w4ax;pipe=tma;tile=128x128x128;warps=1x8;stages=4;producer=wg;excp=1", "two activation parts"},
        {"pipe=tma;tile=128x256x128;warps=1x8;stages=3;producer=wg;persist=1;excp=1", "the INT8 ring's 65536"},
    };
    expect_refusals(ctx, r, sizeof r / sizeof r[0]);
    expect_bad(ctx, "excp=2", QJIT_INVALID_KEY, "excp");
    canon(ctx, "pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg;persist=1;excp=0", a);
    ck_assert_ptr_null(strstr(a, "excp"));
    canon(ctx, "pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg;persist=1;excp=1", b);
    ck_assert_ptr_nonnull(strstr(b, ";excp=1;"));
    const char *has[] = {"#define W8_SLOTS 2", "mbar_init(empty0 + s * 8, THREADS / 32 + 4);",
                         "dequant_tile(smem_base + slot * STAGE_BYTES, smem_base + W8_OFF + j * W8_BYTES, q, lane);",
                         "fence.proxy.async.shared::cta;",
                         "wgmma_s8_m64n128k32_ss(acc[i], x_desc(wtile + i * 64 * BK + ks * 32), x_desc(xtile + ks * 32));",
                         "mbar_arrive(wempty0 + ((ring0 + ktiles - 1) % W8_SLOTS) * 8);", "if (tid == THREADS + 128) {",
                         NULL};
    const char *lacks[] = {"dequant(w[i], pr, a[i]);", NULL};
    qjit_free(ctx, source_with(ctx, b, has, lacks));
    /* Per channel: the dequantizing warps read their rows' parameters,
     * the MMA warpgroups none. */
    canon(ctx, "g=0;pipe=tma;tile=128x256x128;warps=1x8;stages=4;producer=wg;excp=1", a);
    const char *has_ch[] = {"dequant_tile(smem_base + slot * STAGE_BYTES, smem_base + W8_OFF + j * W8_BYTES, q, lane, params);",
                            NULL};
    const char *lacks_ch[] = {"const int nb = n_cta / 16 + nbl0 + i * 4;", NULL};
    qjit_free(ctx, source_with(ctx, a, has_ch, lacks_ch));
    qjit_context_destroy(ctx);
}
END_TEST

/* pingpong=1: a persistent kernel's two MMA warpgroups take whole tiles in
 * turn (the tile is one warpgroup's), each with its own room for the
 * output tile and its own barrier; the ring's slots are released by the
 * one warpgroup that read them. */
START_TEST(pingpong_keys)
{
    qjit_context *ctx = make_ctx();
    char a[1024];
    static const refusal r[] = {
        {"pipe=tma;tile=128x128x128;warps=1x8;stages=6;producer=wg;pingpong=1", "it needs persist=1"},
        {"pipe=tma;tile=128x128x128;warps=1x4;stages=6;producer=wg;persist=1;pingpong=1", "two MMA warpgroups"},
        {"pipe=tma;tile=128x128x128;warps=1x8;stages=4;producer=wg;persist=1;pingpong=1;excp=1", "not combined"},
        {"scheme=w4a8-is;pipe=tma;tile=128x128x128;warps=1x8;stages=6;producer=wg;persist=1;pingpong=1",
         "256 accumulator registers"},
        {"pipe=tma;tile=128x128x128;warps=1x8;stages=7;producer=wg;persist=1;pingpong=1", "output tile's 69632"},
    };
    expect_refusals(ctx, r, sizeof r / sizeof r[0]);
    expect_bad(ctx, "pingpong=2", QJIT_INVALID_KEY, "pingpong");
    canon(ctx, "pipe=tma;tile=128x128x128;warps=1x8;stages=6;producer=wg;persist=1;pingpong=1", a);
    ck_assert_ptr_nonnull(strstr(a, ";pingpong=1;"));
    const char *has[] = {"#define MI 2", "#define NT 128", "#define EPI_TILE_BYTES 34816",
                         "const int pp = wg, wg_n = 0, wg_m = 0;", "mbar_init(empty0 + s * 8, 4);",
                         "t += 2 * gridDim.x, ring0 += 2 * ktiles, ++n",
                         "mbar_wait(turn0 + pp * 8, (pp == 1 ? n : n - 1) & 1);", "mbar_arrive(turn0 + (pp ^ 1) * 8);",
                         "(smem + EPI_TILE_OFF + pp * EPI_TILE_BYTES)", "bar.sync %0, 128;", NULL};
    const char *lacks[] = {"bar.sync 1, %0;", NULL};
    qjit_free(ctx, source_with(ctx, a, has, lacks));
    qjit_context_destroy(ctx);
}
END_TEST

/* sk=1 (the last wave split along K) on a persistent kernel, not with
 * pingpong: the plan of the work in the kernel, the slices' sums and
 * arrival counters in the workspace, one each per CTA (here 132, one an
 * SM), the counters in the activation kernel's slots (it zeroes them),
 * and a CTA on every place the SMs have. A persistent kernel without it
 * plans its work the same way, every tile whole. */
START_TEST(split_last_wave_keys)
{
    qjit_context *ctx = make_ctx();
    char a[1024], b[1024];
    static const refusal r[] = {
        {"pipe=tma;tile=128x256x128;warps=1x8;stages=4;producer=wg;sk=1", "it needs persist=1"},
        {"pipe=tma;tile=128x128x128;warps=1x8;stages=4;producer=wg;persist=1;pingpong=1;sk=1", "not combined"},
    };
    expect_refusals(ctx, r, sizeof r / sizeof r[0]);
    expect_bad(ctx, "sk=2", QJIT_INVALID_KEY, "sk");
    canon(ctx, "pipe=tma;tile=128x256x128;warps=1x8;stages=4;producer=wg;persist=1;sk=0", a);
    ck_assert_ptr_null(strstr(a, "sk="));
    canon(ctx, "pipe=tma;tile=128x256x128;warps=1x8;stages=4;producer=wg;persist=1;sk=1", b);
    ck_assert_ptr_nonnull(strstr(b, ";sk=1;"));
    const char *has[] = {"const work_plan wp = plan_work(tiles, ktiles, gridDim.x);", "#define SK_PUBLISH 2",
                         "sk_last = atomicAdd(counters + i, 1u) == (unsigned)(wp.split - 1);",
                         "int *__restrict__ partials", "for (int n = 0; work_next(wp, n, u); ++n, ring0 += u.hi - u.lo) {", NULL};
    qjit_free(ctx, source_with(ctx, b, has, NULL));
    const char *has_whole[] = {"const work_plan wp = plan_work(tiles, ktiles, gridDim.x);", NULL};
    const char *lacks_whole[] = {"SK_PUBLISH", "sk_last", "partials", NULL};
    qjit_free(ctx, source_with(ctx, a, has_whole, lacks_whole));

    const qjit__plan_request req = {"w4a8-lqq", 128, 4096, 4096, "sm_90a", 132,
                                    "tile=128x256x128;warps=1x8;stages=4;pipe=tma;producer=wg;persist=1;sk=1",
                                    0, 0, 0, NULL, 0, NULL};
    qjit__layer_plan plan;
    pthread_mutex_lock(&ctx->lock);
    ck_assert_int_eq(qjit__plan_layer(ctx, &req, &plan), QJIT_OK);
    for (int bk = 0; bk < plan.nbuckets; bk++) {
        const qjit__bucket_plan *bp = &plan.buckets[bk];
        int counters = -1, partials = -1;
        for (int i = 0; i < bp->nws; i++) {
            if (!strcmp(bp->ws[i].name, "counters"))
                counters = i;
            if (!strcmp(bp->ws[i].name, "partials"))
                partials = i;
        }
        ck_assert_int_ge(counters, 0);
        ck_assert_int_ge(partials, 0);
        ck_assert_uint_eq(bp->ws[counters].fixed, 132 * 4);
        ck_assert_uint_eq(bp->ws[partials].fixed, 132ull * 128 * 256 * 4);
        ck_assert_uint_eq(bp->ws[partials].per_m + bp->ws[partials].per_mtile, 0);
        ck_assert_int_eq(bp->gemm.grid[0].base, 132);
        ck_assert_int_eq(bp->gemm.grid[0].per_m, 0);
        int bound = 0;
        for (int i = 0; i < bp->quant.nslots; i++)
            bound += bp->quant.slots[i].ref == counters && bp->quant.slots[i].kind == QJIT__SLOT_WORKSPACE;
        ck_assert_int_eq(bound, 1);
    }
    qjit__plan_release(ctx, &plan);
    pthread_mutex_unlock(&ctx->lock);
    qjit_context_destroy(ctx);
}
END_TEST

/* bias as a key field: 0 is the default and unnamed, 1 named, not with
 * epi=i32; a layer with a bias plans bias=1 in every GEMM (a "bias" slot),
 * its INT32 twin and activation kernel without; a forced variant that
 * disagrees with the layer is refused. */
START_TEST(bias_keys_and_plans)
{
    qjit_context *ctx = make_ctx();
    char a[1024], b[1024];
    canon(ctx, "g=64;bias=0;arch=sm_90a", a);
    canon(ctx, "g=64;arch=sm_90a", b);
    ck_assert_str_eq(a, b);
    canon(ctx, "g=64;bias=1;arch=sm_90a", a);
    ck_assert_ptr_nonnull(strstr(a, ";bias=1;"));
    ck_assert_int_eq(qjit_key_canonicalize(ctx, "g=64;bias=2;arch=sm_90a", a, sizeof a), QJIT_INVALID_KEY);
    ck_assert_int_eq(qjit_key_canonicalize(ctx, "g=64;bias=1;epi=i32;arch=sm_90a", a, sizeof a), QJIT_INVALID_KEY);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), "bias=1 needs epi=f16"));

    static const char *const schemes[] = {"w4a8-lqq", "w4a8-qoq", "w4a8-is", "w8a8", "w4a4", "w4ax", "w4ax-s"};
    static const int groups[] = {128, 0, 64, 0, 0, 0, 0};
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) {
        qjit__layer_plan plain, biased;
        qjit__plan_request req = {schemes[i], groups[i], 4096, 11008, "sm_90a", 132, NULL, 0, 0, 0, "bf16", 0, NULL};
        pthread_mutex_lock(&ctx->lock);
        ck_assert_int_eq(qjit__plan_layer(ctx, &req, &plain), QJIT_OK);
        req.bias = 1;
        qjit_status st = qjit__plan_layer(ctx, &req, &biased);
        pthread_mutex_unlock(&ctx->lock);
        ck_assert_msg(st == QJIT_OK, "%s: %s", schemes[i], qjit_last_error(ctx));
        ck_assert_int_eq(plain.nbuckets, biased.nbuckets);
        for (int bk = 0; bk < plain.nbuckets; bk++) {
            const qjit__kernel_plan *g = &biased.buckets[bk].gemm;
            ck_assert_msg(strstr(g->key, ";bias=1;") != NULL, "%s: %s", schemes[i], g->key);
            int slots = 0;
            for (int k = 0; k < g->nslots; k++)
                slots += g->slots[k].kind == QJIT__SLOT_BIAS;
            ck_assert_int_eq(slots, 1);
            ck_assert_int_eq(g->nslots, plain.buckets[bk].gemm.nslots + 1);
            /* The same kernel otherwise; its INT32 twin and the activation kernel are the plain layer's. */
            char *cut = strstr(g->key, "bias=1;");
            snprintf(a, sizeof a, "%.*s%s", (int)(cut - g->key), g->key, cut + strlen("bias=1;"));
            ck_assert_str_eq(a, plain.buckets[bk].gemm.key);
            ck_assert_str_eq(biased.buckets[bk].gemm_acc.key, plain.buckets[bk].gemm_acc.key);
            if (plain.buckets[bk].has_quant)
                ck_assert_str_eq(biased.buckets[bk].quant.key, plain.buckets[bk].quant.key);
        }
        pthread_mutex_lock(&ctx->lock);
        qjit__plan_release(ctx, &plain);
        qjit__plan_release(ctx, &biased);
        pthread_mutex_unlock(&ctx->lock);
    }
    /* A sparse layer too (its kernels have the most slots). */
    qjit__layer_plan plan;
    qjit__plan_request sparse = {"w4a8-lqq", 128, 8192, 8192, "sm_90a", 132, NULL, 64, 64, 8192 / 64 * 128 / 10, NULL, 1, NULL};
    pthread_mutex_lock(&ctx->lock);
    qjit_status st = qjit__plan_layer(ctx, &sparse, &plan);
    pthread_mutex_unlock(&ctx->lock);
    ck_assert_msg(st == QJIT_OK, "%s", qjit_last_error(ctx));
    for (int bk = 0; bk < plan.nbuckets; bk++)
        ck_assert_msg(strstr(plan.buckets[bk].gemm.key, "bias=1") != NULL, "%s", plan.buckets[bk].gemm.key);
    pthread_mutex_lock(&ctx->lock);
    qjit__plan_release(ctx, &plan);
    /* A forced variant must agree with the layer. */
    const qjit__plan_request no = {"w4a8-lqq", 128, 4096, 4096, "sm_90a", 132, "bias=1", 0, 0, 0, NULL, 0, NULL};
    const qjit__plan_request yes = {"w4a8-lqq", 128, 4096, 4096, "sm_90a", 132, "bias=0", 0, 0, 0, NULL, 1, NULL};
    const qjit__plan_request given = {"w4a8-lqq", 128, 4096, 4096, "sm_90a", 132, "tile=16x64x128", 0, 0, 0, NULL, 1, NULL};
    ck_assert_int_eq(qjit__plan_layer(ctx, &no, &plan), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), "adds a bias; the layer has none"));
    qjit__plan_release(ctx, &plan);
    ck_assert_int_eq(qjit__plan_layer(ctx, &yes, &plan), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), "adds no bias"));
    qjit__plan_release(ctx, &plan);
    st = qjit__plan_layer(ctx, &given, &plan);
    ck_assert_msg(st == QJIT_OK, "%s", qjit_last_error(ctx));
    ck_assert_ptr_nonnull(strstr(plan.buckets[0].gemm.key, "bias=1"));
    qjit__plan_release(ctx, &plan);
    pthread_mutex_unlock(&ctx->lock);
    qjit_context_destroy(ctx);
}
END_TEST

/* Buckets picked by measurement (a tuning record) replace the table's:
 * their edges and keys as given, each checked against the layer like a
 * forced variant; malformed picks are refused with the reason. */
START_TEST(picked_buckets_replace_the_table)
{
    qjit_context *ctx = make_ctx();
    static const char *const keys[] = {
        "kernel=gemm;scheme=w4a8-lqq;g=128;pipe=decode;tile=8x16x64;warps=1x16;stages=4;split=1",
        "kernel=gemm;scheme=w4a8-lqq;g=128;tile=64x128x128;warps=1x4;stages=3;split=2",
        "kernel=gemm;scheme=w4a8-lqq;g=128;pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=1",
    };
    char picks[1024];
    snprintf(picks, sizeof picks, "3 %s\n100 %s\n0 %s\n", keys[0], keys[1], keys[2]);
    qjit__plan_request req = {"w4a8-lqq", 128, 4096, 4096, "sm_90a", 132, NULL, 0, 0, 0, NULL, 0, picks};
    qjit__layer_plan plan;
    pthread_mutex_lock(&ctx->lock);
    qjit_status st = qjit__plan_layer(ctx, &req, &plan);
    ck_assert_msg(st == QJIT_OK, "%s", qjit_last_error(ctx));
    ck_assert_int_eq(plan.nbuckets, 3);
    static const int64_t edges[] = {3, 100, 0};
    for (int b = 0; b < 3; b++) {
        char *canon = NULL;
        ck_assert_int_eq(qjit__canonicalize_locked(ctx, keys[b], "sm_90a", &canon, NULL), QJIT_OK);
        ck_assert_int_eq(plan.buckets[b].max_m, edges[b]);
        ck_assert_str_eq(plan.buckets[b].gemm.key, canon);
        ck_assert_ptr_nonnull(strstr(plan.buckets[b].gemm_acc.key, "epi=i32"));
        qjit__strfree(ctx, canon);
    }
    qjit__plan_release(ctx, &plan);
    /* Malformed, out of order, unbounded, of another scheme, beside a forced variant. */
    char bad[6][1024];
    snprintf(bad[0], sizeof bad[0], "three %s\n0 %s", keys[0], keys[2]);
    snprintf(bad[1], sizeof bad[1], "100 %s\n3 %s\n0 %s", keys[1], keys[0], keys[2]);
    snprintf(bad[2], sizeof bad[2], "3 %s\n100 %s", keys[0], keys[1]);
    snprintf(bad[3], sizeof bad[3], "0 kernel=gemm;scheme=w4a8-qoq;g=128;tile=64x128x128;warps=1x4;stages=3");
    snprintf(bad[4], sizeof bad[4], "0 %s", keys[1]);
    snprintf(bad[5], sizeof bad[5], "1 %s\n2 %s\n3 %s\n4 %s\n5 %s\n6 %s\n7 %s\n8 %s\n0 %s", keys[0], keys[0],
             keys[0], keys[0], keys[0], keys[0], keys[0], keys[0], keys[1]);
    static const char *const words[] = {"is not 'MAX_M KEY'", "increasing MAX_M", "MAX_M 0", "scheme",
                                        "exclusive", "1 to 8"};
    for (int i = 0; i < 6; i++) {
        req.picks = bad[i];
        req.variant = i == 4 ? "stages=3" : NULL;
        st = qjit__plan_layer(ctx, &req, &plan);
        ck_assert_msg(st != QJIT_OK, "picks %d accepted", i);
        ck_assert_msg(strstr(qjit_last_error(ctx), words[i]) != NULL, "picks %d: %s", i, qjit_last_error(ctx));
        qjit__plan_release(ctx, &plan);
    }
    pthread_mutex_unlock(&ctx->lock);
    qjit_context_destroy(ctx);
}
END_TEST

/* Whether canonical keys a and b differ only in b's ";producer=wg". */
static int same_but_producer(const char *a, const char *b)
{
    const char *at = strstr(b, ";producer=wg");
    size_t head = at ? (size_t)(at - b) : 0;
    return at && strlen(a) + 12 == strlen(b) && !strncmp(a, b, head) && !strcmp(a + head, at + 12);
}

/* Tuning candidates (dispatch.lua's D.candidates) for every bucket of
 * three default shapes: the table's choice first, at most MAX_CANDIDATES, no
 * duplicates, more than one to time, split-K ones with their cluster twins,
 * and each a bucket a layer can be planned with (picked as that bucket's
 * variant). */
START_TEST(tuning_candidates_plan)
{
    qjit_context *ctx = make_ctx();
    static const int64_t shapes[][2] = {{12288, 4096}, {4096, 11008}, {57344, 8192}};
    static const struct { const char *scheme; int group; } sg[] = {{"w4a8-lqq", 128}, {"w4ax", 0}};
    int total = 0, buckets = 0, twins = 0, ptwins = 0;
    pthread_mutex_lock(&ctx->lock);
    qjit__lua *L;
    ck_assert_int_eq(qjit__context_lua(ctx, &L), QJIT_OK);
    for (size_t s = 0; s < sizeof sg / sizeof sg[0]; s++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            char N[24], K[24], group[8];
            snprintf(N, sizeof N, "%lld", (long long)shapes[i][0]);
            snprintf(K, sizeof K, "%lld", (long long)shapes[i][1]);
            snprintf(group, sizeof group, "%d", sg[s].group);
            qjit__layer_plan table;
            const qjit__plan_request req = {sg[s].scheme, sg[s].group, shapes[i][0], shapes[i][1], "sm_90a", 132,
                                            NULL, 0, 0, 0, NULL, 0, NULL};
            ck_assert_int_eq(qjit__plan_layer(ctx, &req, &table), QJIT_OK);
            for (int b = 0; b < table.nbuckets; b++) {
                char max_m[24];
                snprintf(max_m, sizeof max_m, "%lld", (long long)table.buckets[b].max_m);
                const char *args[] = {sg[s].scheme, group, N, K, "sm_90a", "132", max_m};
                qjit__lua_result r;
                qjit_status st = qjit__lua_call(L, "dispatch.lua", "candidates", 7, args, &r);
                ck_assert_msg(st == QJIT_OK, "%s", qjit_last_error(ctx));
                char *keys[96];
                int n = 0;
                for (char *save = NULL, *k = strtok_r(r.text, "\n", &save); k && n < 96; k = strtok_r(NULL, "\n", &save))
                    keys[n++] = k;
                ck_assert_msg(n >= 2 && n <= 64, "%s %sx%s M <= %s: %d candidates", sg[s].scheme, N, K, max_m, n);
                /* Split-K candidates come with the other reduction too. */
                for (int a = 0; a < n; a++) {
                    char twin[1024], *at = strstr(keys[a], "reduce=global");
                    if (!at || strstr(keys[a], "split=1;") || strlen(keys[a]) >= sizeof twin)
                        continue;
                    snprintf(twin, sizeof twin, "%.*sreduce=cluster%s", (int)(at - keys[a]), keys[a], at + 13);
                    for (int c = 0; c < n; c++)
                        twins += !strcmp(keys[c], twin);
                }
                /* TMA candidates of a CTA a tile come with a producer
                 * warpgroup's twin too (where the plan takes one). */
                for (int a = 0; a < n; a++)
                    for (int c = 0; c < n; c++)
                        ptwins += strstr(keys[a], "pipe=tma") && !strstr(keys[a], "producer=") &&
                                  strstr(keys[c], "producer=wg") && same_but_producer(keys[a], keys[c]);
                ck_assert_str_eq(keys[0], table.buckets[b].gemm.key);
                for (int a = 0; a < n; a++) {
                    for (int c = 0; c < a; c++)
                        ck_assert_str_ne(keys[a], keys[c]);
                    /* Every one plans as the variant of this bucket (one
                     * layer: D.candidates has planned each already). */
                    if (s != 0 || i != 0)
                        continue;
                    char picks[1200];
                    qjit__layer_plan plan;
                    if (table.buckets[b].max_m)
                        snprintf(picks, sizeof picks, "%s %s\n0 %s", max_m, keys[a],
                                 table.buckets[table.nbuckets - 1].gemm.key);
                    else
                        snprintf(picks, sizeof picks, "0 %s", keys[a]);
                    qjit__plan_request pr = req;
                    pr.picks = picks;
                    st = qjit__plan_layer(ctx, &pr, &plan);
                    ck_assert_msg(st == QJIT_OK, "%s: %s", keys[a], qjit_last_error(ctx));
                    qjit__plan_release(ctx, &plan);
                }
                total += n;
                buckets++;
                qjit__lua_result_release(L, &r);
            }
            qjit__plan_release(ctx, &table);
        }
    /* A BF16 layer with a bias: its candidates' twins carry the layer's
     * fields once (the producer's and the other reduction's twins too). */
    const char *bargs[] = {"w4a8-lqq", "128", "4096", "4096", "sm_90a", "132", "64", "bf16", "1"};
    qjit__lua_result br;
    ck_assert_int_eq(qjit__lua_call(L, "dispatch.lua", "candidates", 9, bargs, &br), QJIT_OK);
    int bf16_twins = 0, bf16_keys = 0;
    for (char *save = NULL, *k = strtok_r(br.text, "\n", &save); k; k = strtok_r(NULL, "\n", &save)) {
        ck_assert_ptr_nonnull(strstr(k, "dtype=bf16"));
        ck_assert_ptr_nonnull(strstr(k, "bias=1"));
        bf16_keys++;
        /* The table's key here is the 64x64 pair in a cluster; its
         * workspace twin comes only from varying it. */
        bf16_twins += strstr(k, "producer=wg;reduce=global;scheme=w4a8-lqq;split=2;stages=8;tile=64x64x128") != NULL;
    }
    ck_assert_int_gt(bf16_keys, 20);
    ck_assert_int_gt(bf16_twins, 0);
    qjit__lua_result_release(L, &br);
    pthread_mutex_unlock(&ctx->lock);
    printf("tuning candidates: %d over %d buckets (%d split-K ones with their cluster twin, %d with a producer "
           "warpgroup's)\n", total, buckets, twins, ptwins);
    ck_assert_int_gt(twins, 10);
    ck_assert_int_gt(ptwins, 10);
    qjit_context_destroy(ctx);
}
END_TEST

/* dtype (the tokens' and outputs' floats) as a key field: f16 is the
 * default and unnamed (every FP16 key as before), bf16 named; a BF16
 * layer's plan names it in every kernel, a forced variant of the other
 * dtype is refused; the BF16 default set is the FP16 one's twins. */
START_TEST(bf16_keys_and_plans)
{
    qjit_context *ctx = make_ctx();
    char a[1024], b[1024];
    ck_assert_int_eq(qjit_key_canonicalize(ctx, "g=64;dtype=fp16;arch=sm_90a", a, sizeof a), QJIT_OK);
    ck_assert_int_eq(qjit_key_canonicalize(ctx, "g=64;arch=sm_90a", b, sizeof b), QJIT_OK);
    ck_assert_str_eq(a, b);
    ck_assert_ptr_null(strstr(a, "dtype"));
    ck_assert_int_eq(qjit_key_canonicalize(ctx, "g=64;dtype=bfloat16;arch=sm_90a", a, sizeof a), QJIT_OK);
    ck_assert_ptr_nonnull(strstr(a, "dtype=bf16"));
    ck_assert_int_eq(qjit_key_canonicalize(ctx, "kernel=act-quant;dtype=BF16;arch=sm_90a", a, sizeof a), QJIT_OK);
    ck_assert_ptr_nonnull(strstr(a, "dtype=bf16"));
    ck_assert_int_eq(qjit_key_canonicalize(ctx, "g=64;dtype=f32;arch=sm_90a", a, sizeof a), QJIT_INVALID_KEY);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), "dtype"));

    static const char *const schemes[] = {"w4a8-lqq", "w4a8-qoq", "w4a8-is", "w8a8", "w4a4", "w4ax", "w4ax-s"};
    static const int groups[] = {128, 0, 64, 0, 0, 0, 0};
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) {
        qjit__layer_plan f16, bf16;
        qjit__plan_request req = {schemes[i], groups[i], 4096, 11008, "sm_90a", 132, NULL, 0, 0, 0, NULL, 0, NULL};
        pthread_mutex_lock(&ctx->lock);
        ck_assert_int_eq(qjit__plan_layer(ctx, &req, &f16), QJIT_OK);
        req.dtype = "bf16";
        qjit_status st = qjit__plan_layer(ctx, &req, &bf16);
        pthread_mutex_unlock(&ctx->lock);
        ck_assert_msg(st == QJIT_OK, "%s: %s", schemes[i], qjit_last_error(ctx));
        ck_assert_int_eq(f16.nbuckets, bf16.nbuckets);
        for (int bk = 0; bk < f16.nbuckets; bk++) {
            const qjit__kernel_plan *k16[] = {&f16.buckets[bk].gemm, &f16.buckets[bk].gemm_acc, &f16.buckets[bk].quant};
            const qjit__kernel_plan *kb[] = {&bf16.buckets[bk].gemm, &bf16.buckets[bk].gemm_acc, &bf16.buckets[bk].quant};
            for (int j = 0; j < 3; j++) {
                ck_assert_ptr_null(strstr(k16[j]->key, "dtype"));
                ck_assert_msg(strstr(kb[j]->key, "dtype=bf16") != NULL, "%s: %s", schemes[i], kb[j]->key);
                /* The same kernel otherwise: the key with the field taken out. */
                char *cut = strstr(kb[j]->key, "dtype=bf16;");
                ck_assert_ptr_nonnull(cut);
                snprintf(a, sizeof a, "%.*s%s", (int)(cut - kb[j]->key), kb[j]->key, cut + strlen("dtype=bf16;"));
                ck_assert_str_eq(a, k16[j]->key);
            }
        }
        pthread_mutex_lock(&ctx->lock);
        qjit__plan_release(ctx, &f16);
        qjit__plan_release(ctx, &bf16);
        pthread_mutex_unlock(&ctx->lock);
    }
    qjit__layer_plan plan;
    const qjit__plan_request forced = {"w4a8-lqq", 128, 4096, 4096, "sm_90a", 132, "dtype=bf16", 0, 0, 0, "f16", 0, NULL};
    const qjit__plan_request bad = {"w4a8-lqq", 128, 4096, 4096, "sm_90a", 132, NULL, 0, 0, 0, "f32", 0, NULL};
    pthread_mutex_lock(&ctx->lock);
    ck_assert_int_eq(qjit__plan_layer(ctx, &forced, &plan), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(ctx), "the layer's are f16"));
    qjit__plan_release(ctx, &plan);
    ck_assert_int_eq(qjit__plan_layer(ctx, &bad, &plan), QJIT_INVALID_ARGUMENT);
    qjit__plan_release(ctx, &plan);
    pthread_mutex_unlock(&ctx->lock);

    char *d16 = NULL, *dbf = NULL;
    ck_assert_int_eq(qjit_default_variants_dtype(ctx, "sm_90a", QJIT_DTYPE_F16, &d16), QJIT_OK);
    ck_assert_int_eq(qjit_default_variants_dtype(ctx, "sm_90a", QJIT_DTYPE_BF16, &dbf), QJIT_OK);
    int n16 = 0, nbf = 0;
    for (const char *p = d16; *p; p++)
        n16 += *p == '\n';
    for (const char *p = dbf; (p = strstr(p, "dtype=bf16")); p++)
        nbf++;
    ck_assert_int_gt(n16, 200);
    ck_assert_int_eq(nbf, n16 + 1);                 /* every line; the last has no newline */
    qjit_free(ctx, d16);
    qjit_free(ctx, dbf);
    ck_assert_int_eq(qjit_default_variants_dtype(ctx, "sm_90a", QJIT_DTYPE_F32, &dbf), QJIT_INVALID_ARGUMENT);
    ck_assert_ptr_null(dbf);
    qjit_context_destroy(ctx);
}
END_TEST

/* The sparsity budget as a key field: one canonical spelling, a dense key
 * naming neither field, the residual's device code in every pipe, and
 * every key no kernel can run refused with the reason. */
START_TEST(sparse_keys)
{
    qjit_context *ctx = make_ctx();
    char a[1024], b[1024];
    canon(ctx, "scheme=lqq;rho=.10", a);
    canon(ctx, "scheme=lqq;sparsity=0.1;rblock=64x64", b);
    ck_assert_str_eq(a, b);
    ck_assert_ptr_nonnull(strstr(a, ";sparsity=0.1;"));
    ck_assert_ptr_nonnull(strstr(a, ";rblock=64x64;"));
    canon(ctx, "scheme=lqq;sparsity=1.000", a);
    ck_assert_ptr_nonnull(strstr(a, ";sparsity=1;"));
    canon(ctx, "scheme=lqq;sparsity=0.0", a);
    canon(ctx, "scheme=lqq", b);
    ck_assert_str_eq(a, b);
    ck_assert_ptr_null(strstr(a, "sparsity"));
    ck_assert_ptr_null(strstr(a, "rblock"));
    canon(ctx, "scheme=lqq;sparsity=0.05", a);
    canon(ctx, "scheme=lqq;sparsity=0.1", b);
    ck_assert_str_ne(a, b);
    static const char *const pipes[] = {
        "tile=64x128x64;warps=2x2", "pipe=decode;tile=16x32x64;warps=1x8",
        "pipe=wgmma;tile=64x128x128;warps=1x8", "pipe=tma;tile=128x128x128;warps=1x8;split=2",
        "tile=16x64x128;warps=1x4;actq=fused",
    };
    for (size_t i = 0; i < sizeof pipes / sizeof pipes[0]; i++)
        for (int q = 0; q < 2; q++) {
            char key[256];
            snprintf(key, sizeof key, "scheme=%s;g=64;%s;sparsity=0.05;rblock=32x128", q ? "qoq" : "lqq", pipes[i]);
            /* The kernel's symbol says it is sparse (profilers list it apart). */
            char *src = source_with(ctx, key, (const char *const[]){"#define RBN 32", "#define RBK 128",
                                                                    "residual_fold(", "rweight", "_sparse(", NULL}, NULL);
            qjit_free(ctx, src);
            /* Split-K slices are even, as the dense kernel's: slices by work
             * (a table per layer) were slower at every budget measured
             * (bench/results/2026-11-28-session45). */
            snprintf(key, sizeof key, "scheme=%s;g=64;%s;sparsity=0.05;split=3", q ? "qoq" : "lqq", pipes[i]);
            if (!strstr(pipes[i], "decode") && !strstr(pipes[i], "split=")) {
                src = source_with(ctx, key, (const char *const[]){"(long long)(K / BK) * blockIdx.z / SPLIT", NULL},
                                  (const char *const[]){"kslice", NULL});
                qjit_free(ctx, src);
            }
            snprintf(key, sizeof key, "scheme=%s;g=64;%s", q ? "qoq" : "lqq", pipes[i]);
            src = source_with(ctx, key, NULL, (const char *const[]){"residual", "rmask", "_sparse", NULL});
            qjit_free(ctx, src);
        }
    /* The residual's own ring (pipe=tma): its slots past the dense kernel's
     * stages, which keep only the words; 0 is the default and not named. */
    canon(ctx, "scheme=lqq;sparsity=0.1;pipe=tma;tile=128x128x128;warps=1x8;rslots=0", a);
    ck_assert_ptr_null(strstr(a, "rslots"));
    {
        const char *ring = "scheme=lqq;g=128;pipe=tma;tile=128x128x128;warps=1x8;stages=4;sparsity=0.1;rslots=1";
        char *src = source_with(ctx, ring, (const char *const[]){"#define RSLOTS 1", "#define R_RING_OFF 102400",
                                                                 "#define STAGE_BYTES 25600", "residual_issue(", NULL},
                                (const char *const[]){"#define R_OFF", NULL});
        qjit_free(ctx, src);
        /* The room of the TMA pipe keeps a kept residual block's 16 x 64
         * blocks together, one bulk copy each (R_PLACE); the cp.async
         * warpgroup pipe's room is in bit order. */
        src = source_with(ctx, "scheme=lqq;g=128;pipe=tma;tile=128x128x128;warps=1x8;stages=4;sparsity=0.1",
                          (const char *const[]){"#define STAGE_BYTES 33792", "#define R_OFF", "#define R_PLACE(bit)",
                                                "#define R_SLABS (RBK > BK ? 1 : RBN < BN ? RBN / 16 : BN / 16)",
                                                "R_PLACE(lane) * 512, src, R_SLABS * R_KSTEPS * 512, full)", NULL},
                          (const char *const[]){"residual_issue(", NULL});
        qjit_free(ctx, src);
        src = source_with(ctx, "scheme=lqq;g=128;pipe=wgmma;tile=64x128x128;warps=1x8;stages=4;sparsity=0.1",
                          (const char *const[]){"#define R_OFF", "((rtile) + (bit) * 512)", NULL},
                          (const char *const[]){"#define R_PLACE", NULL});
        qjit_free(ctx, src);
        /* The ring of residual blocks (a producer warpgroup's): the stage
         * keeps the dense kernel's bytes but for 16 of words (25600 of the
         * dense 128x128 stage, the words within its rounding), the ring's 32
         * places of 512 bytes past the 4 stages, a read barrier per slot and
         * warpgroup along the rows. */
        src = source_with(ctx, "scheme=lqq;g=128;pipe=tma;tile=128x128x128;warps=1x8;stages=4;sparsity=0.1;"
                          "producer=wg;rpieces=32",
                          (const char *const[]){"#define RPIECES 32", "#define R_RING_OFF 102400",
                                                "#define STAGE_BYTES 25600", "bars[(2 + WG_N) * STAGES]",
                                                "mbar_arrive(rread0 + ", NULL},
                          (const char *const[]){"#define R_OFF", NULL});
        qjit_free(ctx, src);
        /* ... a kept residual block's part of the tile (64 x 64: four 16 x
         * 64 blocks) in one bulk copy, whole parts in the ring. */
        src = source_with(ctx, "scheme=lqq;g=128;pipe=tma;tile=128x256x128;warps=1x8;stages=4;sparsity=0.1;"
                          "producer=wg;persist=1;rpieces=32",
                          (const char *const[]){"#define R_HEADS r_heads()",
                                                "R_PART_AT(head, present, lane) * 512, src, R_GROUP * 512, full)",
                                                "static_assert(RPIECES % R_GROUP == 0", NULL},
                          (const char *const[]){"#define R_OFF", "#define R_PLACE", NULL});
        qjit_free(ctx, src);
    }
    /* Budgets, residual blocks and rings that no kernel takes. */
    static const refusal refused[] = {
        {"scheme=lqq;sparsity=1.5", "at most 1"},
        {"scheme=lqq;sparsity=-0.1", "is not a budget"},
        {"scheme=lqq;sparsity=1e-1", "is not a budget"},
        {"scheme=lqq;sparsity=0.0000001", "is not a budget"},
        {"scheme=lqq;rblock=64x64", "needs a budget"},
        {"scheme=lqq;sparsity=0;rblock=64x64", "needs a budget"},
        {"scheme=lqq;sparsity=0.1;rblock=48x64", "is not a residual block"},
        {"scheme=lqq;sparsity=0.1;rblock=64x256", "is not a residual block"},
        {"scheme=w4a8-is;sparsity=0.1", "takes no sparse residual"},
        {"scheme=w8a8;sparsity=0.1", "takes no sparse residual"},
        {"scheme=qoq;g=0;sparsity=0.1", "per channel takes no sparse residual"},
        {"scheme=lqq;tile=32x512x128;warps=1x4;sparsity=0.1", "at most 32"},
        {"scheme=lqq;rslots=1", "needs a budget"},
        {"scheme=lqq;sparsity=0.1;pipe=tma;tile=128x128x128;warps=1x8;rslots=5", "rslots=5"},
        {"scheme=lqq;sparsity=0.1;tile=64x128x64;warps=2x2;rslots=1", "is for pipe=tma"},
        {"scheme=lqq;sparsity=0.1;pipe=wgmma;tile=64x128x128;warps=1x8;rslots=1", "is for pipe=tma"},
        {"scheme=lqq;sparsity=0.1;pipe=decode;tile=16x32x64;warps=1x8;rslots=1", "is for pipe=tma"},
        /* The ring of residual blocks: a producer warpgroup's, of a power of
         * two at least a K tile's most. */
        {"scheme=lqq;rpieces=32", "needs a budget"},
        {"scheme=lqq;sparsity=0.1;pipe=tma;tile=128x128x128;warps=1x8;rpieces=16", "is filled by a producer warpgroup"},
        {"scheme=lqq;sparsity=0.1;pipe=tma;tile=128x256x128;warps=1x8;producer=wg;rpieces=24", "must be 8, 16, 32 or 64"},
        {"scheme=lqq;sparsity=0.1;pipe=tma;tile=128x256x128;warps=1x8;producer=wg;rpieces=16", "carries up to 32"},
        {"scheme=lqq;sparsity=0.1;pipe=tma;tile=128x128x128;warps=1x8;producer=wg;rpieces=128", "rpieces"},
        {"scheme=lqq;sparsity=0.1;pipe=tma;tile=128x128x128;warps=2x4;stages=4;producer=wg;persist=1;pingpong=1;"
         "rpieces=16", "not combined"},
    };
    expect_refusals(ctx, refused, sizeof refused / sizeof refused[0]);
    /* The decode pipe's residual ring fits the registers its warps allow:
     * 16 warps of a 16x32 tile hold 3 steps with a residual, not 4 (the
     * dense kernel alone needs 124 of 128). */
    const char *dec = "scheme=lqq;pipe=decode;tile=16x32x64;warps=1x16;sparsity=0.1;stages=";
    char key[256];
    snprintf(key, sizeof key, "%s4", dec);
    expect_refused(ctx, key, "16 warps allow 128");
    snprintf(key, sizeof key, "%s3", dec);
    char *src = source_with(ctx, key, (const char *const[]){"#define RU 1", NULL}, NULL);
    qjit_free(ctx, src);
    snprintf(key, sizeof key, "scheme=lqq;pipe=decode;tile=8x16x64;warps=1x16;sparsity=0.1;stages=4");
    src = source_with(ctx, key, (const char *const[]){"#define RU 4", NULL}, NULL);
    qjit_free(ctx, src);
    qjit_context_destroy(ctx);
}
END_TEST

/* A layer whose weights carry a residual: its plan adds the residual's
 * three stored sections and the index the layer derives, every bucket runs
 * the sparse kernel of the weights' budget class (a budget b keeps ceil(b x
 * blocks): 410 of 4096 are 0.1's, 411 0.2's), and forced variants must
 * agree with the weights. */
START_TEST(sparse_layer_plans)
{
    qjit_context *ctx = make_ctx();
    static const struct { int64_t blocks; const char *budget; } cases[] = {
        {1, "sparsity=0.01;"}, {400, "sparsity=0.1;"}, {410, "sparsity=0.1;"}, {411, "sparsity=0.2;"},
        {4096, "sparsity=1;"},
    };
    const int64_t N = 4096, K = 4096;     /* 64 x 64 blocks of 64 x 64 */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        qjit__layer_plan plan;
        const qjit__plan_request req = {"w4a8-lqq", 128, N, K, "sm_90a", 132, NULL, 64, 64, cases[c].blocks, NULL, 0, NULL};
        pthread_mutex_lock(&ctx->lock);
        qjit_status st = qjit__plan_layer(ctx, &req, &plan);
        pthread_mutex_unlock(&ctx->lock);
        ck_assert_msg(st == QJIT_OK, "%s", qjit_last_error(ctx));
        const qjit__scheme *host = qjit__scheme_get(QJIT_SCHEME_W4A8_LQQ);
        ck_assert_int_eq(plan.nsections, host->nsections + 4);
        static const char *const names[] = {"rptr", "ridx", "rweight", "rmask"};
        const uint64_t bytes[] = {(uint64_t)(N / 64 + 1) * 4, (uint64_t)cases[c].blocks * 4,
                                  (uint64_t)cases[c].blocks * 64 * 64 / 2, (uint64_t)(N / 64) * 2 * 8};
        for (int i = 0; i < 4; i++) {
            const qjit__section_plan *sp = &plan.sections[host->nsections + i];
            ck_assert_str_eq(sp->name, names[i]);
            ck_assert_uint_eq(sp->bytes, bytes[i]);
            ck_assert_int_eq(sp->derived, i == 3);
        }
        for (int b = 0; b < plan.nbuckets; b++) {
            const qjit__kernel_plan *g = &plan.buckets[b].gemm;
            ck_assert_msg(strstr(g->key, cases[c].budget) && strstr(g->key, "rblock=64x64;"), "%s", g->key);
            ck_assert_ptr_nonnull(strstr(g->signature, ",rmask,rweight,"));
            ck_assert_ptr_nonnull(strstr(plan.buckets[b].gemm_acc.key, cases[c].budget));
            /* No table of slices: split-K slices are even. */
            ck_assert_ptr_null(strstr(g->signature, "kslice"));
        }
        qjit__plan_release(ctx, &plan);
    }
    /* On every default shape each bucket runs the dense choice's sparse
     * twin: the same key with the budget and blocks (a producer warpgroup
     * and a persistent kernel included), at most fewer stages (never below
     * 3; the decode pipe's twin 2, keeping the dense kernel's CTAs an SM)
     * where the residual's blocks would cost CTAs per SM; except where the
     * table names a kernel for sparse weights only: the TMA pipe's 16- or
     * 32-token tile of 64 rows with a producer warpgroup at split 2 in a
     * cluster, at M <= 16 (but M <= 8 up to 4096 rows, the decode twin; 8
     * stages up to 8192 rows, 6 past them) and at M <= 32 up to 8192 rows
     * (at 8 stages); at M <= 32 past 8192 rows the 32-token tile at split 1
     * and 8 stages, or where its grid at split 2 is one wave at three CTAs
     * an SM (N / 64 at most 1.5 x 132: 12288x4096, 10240x8192) at split 2
     * and 6 stages with the residual's blocks in a ring of 32 places. */
    static const int64_t shapes[][2] = {{12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008},
                                        {10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}};
    int fewer = 0, total = 0, producers = 0, persistent = 0, few = 0, rings = 0, waved = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        qjit__layer_plan dense, sparse;
        const qjit__plan_request dr = {"w4a8-lqq", 128, shapes[i][0], shapes[i][1], "sm_90a", 132, NULL, 0, 0, 0, NULL, 0, NULL};
        const qjit__plan_request sr = {"w4a8-lqq", 128, shapes[i][0], shapes[i][1], "sm_90a", 132, NULL, 64, 64,
                                       shapes[i][0] / 64 * (shapes[i][1] / 64) / 10, NULL, 0, NULL};
        pthread_mutex_lock(&ctx->lock);
        ck_assert_int_eq(qjit__plan_layer(ctx, &dr, &dense), QJIT_OK);
        ck_assert_int_eq(qjit__plan_layer(ctx, &sr, &sparse), QJIT_OK);
        pthread_mutex_unlock(&ctx->lock);
        ck_assert_int_eq(dense.nbuckets, sparse.nbuckets);
        for (int b = 0; b < dense.nbuckets; b++) {
            char want[1024], got[1024];
            const char *dk = dense.buckets[b].gemm.key, *sk = sparse.buckets[b].gemm.key;
            const int max_m = dense.buckets[b].max_m;
            if ((max_m == 8 && shapes[i][0] > 4096) || max_m == 16 || max_m == 32) {
                const int ring = max_m == 32 && shapes[i][0] > 8192 && shapes[i][0] / 64 * 2 <= 132 * 3;
                const char *at = max_m == 32 ? (shapes[i][0] <= 8192 ? "split=2;stages=8;"
                                                : ring ? "split=2;stages=6;" : "split=1;stages=8;")
                                             : (shapes[i][0] <= 8192 ? "split=2;stages=8;" : "split=2;stages=6;");
                ck_assert_msg((strstr(sk, ";rpieces=32;") != NULL) == ring, "%s", sk);
                printf("%lldx%lld M <= %d: %s\n", (long long)shapes[i][0], (long long)shapes[i][1], max_m, sk);
                ck_assert_ptr_nonnull(strstr(sk, "pipe=tma;producer=wg;"));
                ck_assert_ptr_nonnull(strstr(sk, max_m == 32 ? "tile=32x64x128;" : "tile=16x64x128;"));
                ck_assert_ptr_nonnull(strstr(sk, strstr(at, "split=2;") ? "reduce=cluster;" : "reduce=global;"));
                ck_assert_msg(strstr(sk, at), "%s: want %s", sk, at);
                /* dense: another pipe, or past 8192 rows at M <= 32 its
                 * 32-token tile at split 2 and 6 stages, at M <= 16 the
                 * 16-token tile of the multistage pipe or of the TMA pipe
                 * at split 2 and 8 stages */
                if (max_m == 32 && shapes[i][0] > 8192)
                    ck_assert_ptr_nonnull(strstr(dk, "pipe=tma;producer=wg;reduce=cluster;scheme=w4a8-lqq;split=2;stages=6;"));
                else if (shapes[i][0] > 8192)
                    ck_assert_msg(strstr(dk, "tile=16x64x128;") && (strstr(dk, "pipe=multistage;") ||
                                  strstr(dk, "pipe=tma;producer=wg;reduce=cluster;scheme=w4a8-lqq;split=2;stages=8;")), "%s", dk);
                else
                    ck_assert_ptr_null(strstr(dk, "pipe=tma;"));
                few++;
                continue;
            }
            producers += strstr(sk, "producer=wg;") != NULL;
            persistent += strstr(sk, "persist=1;") != NULL;
            const char *ds = strstr(dk, "stages="), *ss = strstr(sk, "stages=");
            ck_assert_ptr_nonnull(ds);
            ck_assert_ptr_nonnull(ss);
            int dst = atoi(ds + 7), sst = atoi(ss + 7);
            const int least = strstr(dk, "pipe=decode;") ? 2 : 3;
            ck_assert_msg(sst <= dst && sst >= (dst < least ? dst : least), "%s -> %s", dk, sk);
            fewer += sst < dst;
            total++;
            /* Where the residual's room would take a stage from a producer
             * warpgroup's ring of 4 (the persistent 128x256 tile), the twin
             * keeps the residual's blocks in a ring of their own (at least
             * a K tile's), and with it the dense kernel's stages. */
            const char *rp = strstr(sk, "rpieces=");
            if (strstr(dk, "tile=128x256x128;") && strstr(dk, "persist=1;") && dst == 4)
                ck_assert_msg(rp, "%s -> %s", dk, sk);
            if (rp) {
                int tm, tn, tk;
                ck_assert_int_eq(sscanf(strstr(dk, "tile=") + 5, "%dx%dx%d", &tm, &tn, &tk), 3);
                const int pieces = atoi(rp + 8);
                ck_assert_ptr_nonnull(strstr(dk, "producer=wg;"));
                ck_assert_int_le(dst, 4);
                ck_assert_int_ge(pieces, tn / 16 * (tk / 64));
                ck_assert_int_eq(pieces & (pieces - 1), 0);
                ck_assert_msg(sst == dst, "%s -> %s", dk, sk);
                rings++;
            }
            /* The rest of the key: the dense one with the two fields added
             * (and the ring's). */
            snprintf(want, sizeof want, "%.*srblock=64x64;%.*ssparsity=0.1;%s", (int)(strstr(dk, "reduce=") - dk), dk,
                     (int)(strstr(dk, "split=") - strstr(dk, "reduce=")), strstr(dk, "reduce="), strstr(dk, "split="));
            if (rp) {
                char *at = strstr(want, "scheme=");
                char tail[1024];
                snprintf(tail, sizeof tail, "%s", at);
                snprintf(at, sizeof want - (size_t)(at - want), "rpieces=%d;%s", atoi(rp + 8), tail);
            }
            snprintf(got, sizeof got, "%s", sk);
            char *w = strstr(want, "stages="), *g = strstr(got, "stages=");
            w[7] = g[7] = '#';
            ck_assert_msg(!strcmp(want, got), "dense %s\nsparse %s", dk, sk);
            /* The twin keeps the dense kernel's waves, not its CTAs an SM:
             * on the 64x64 tile at split 2 (M <= 64) 4096x4096's 128 CTAs
             * are one wave at any depth (8 stages), 8192x8192's 256 need
             * two an SM for one (6 stages). */
            if (max_m == 64 && strstr(dk, "tile=64x64x128;") && strstr(dk, "split=2;") && shapes[i][1] <= 8192) {
                ck_assert_int_eq(sst, shapes[i][0] <= 4096 ? 8 : 6);
                waved++;
            }
        }
        qjit__plan_release(ctx, &dense);
        qjit__plan_release(ctx, &sparse);
    }
    printf("sparse twins of the default lqq g=128 plans: %d of %d with fewer stages, %d with a producer warpgroup "
           "(%d persistent, %d with a ring of residual blocks)\n", fewer, total, producers, persistent, rings);
    ck_assert_int_gt(fewer, 0);
    ck_assert_int_gt(rings, 0);
    ck_assert_int_gt(producers, 0);
    ck_assert_int_gt(persistent, 0);
    ck_assert_int_eq(few, 6 + 8 + 8);   /* M <= 8 past 4096 rows, M <= 16 and M <= 32 all */
    ck_assert_int_eq(waved, 2);         /* 4096x4096, 8192x8192 */
    /* Every target has the sparse twins of its buckets (the shared-memory
     * limits of sm_86/89 included). */
    static const char *const archs[] = {"sm_80", "sm_86", "sm_89", "sm_90"};
    for (size_t a = 0; a < sizeof archs / sizeof archs[0]; a++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            qjit__layer_plan plan;
            const qjit__plan_request req = {"w4a8-qoq", 64, shapes[i][0], shapes[i][1], archs[a], 108, NULL, 32, 128,
                                            shapes[i][0] / 32 * (shapes[i][1] / 128) / 20, NULL, 0, NULL};
            pthread_mutex_lock(&ctx->lock);
            qjit_status st = qjit__plan_layer(ctx, &req, &plan);
            pthread_mutex_unlock(&ctx->lock);
            ck_assert_msg(st == QJIT_OK, "%s %lldx%lld: %s", archs[a], (long long)shapes[i][0],
                          (long long)shapes[i][1], qjit_last_error(ctx));
            for (int b = 0; b < plan.nbuckets; b++)
                ck_assert_ptr_nonnull(strstr(plan.buckets[b].gemm.key, "rblock=32x128;"));
            qjit__plan_release(ctx, &plan);
        }
    static const struct { qjit__plan_request req; const char *words; } bad[] = {
        {{"w4a8-lqq", 128, 4096, 4096, "sm_90a", 132, "sparsity=0.1", 0, 0, 0, NULL, 0, NULL}, "the weights carry no residual"},
        {{"w4a8-lqq", 128, 4096, 4096, "sm_90a", 132, "rblock=32x64", 64, 64, 10, NULL, 0, NULL}, "rblock=64x64, the residual"},
        {{"w4a8-lqq", 128, 4096, 4096, "sm_90a", 132, NULL, 64, 64, 4097, NULL, 0, NULL}, "does not fit"},
        {{"w4a8-lqq", 128, 4096, 4096, "sm_90a", 132, NULL, 48, 64, 1, NULL, 0, NULL}, "does not fit"},
        {{"w4a8-is", 128, 4096, 4096, "sm_90a", 132, NULL, 64, 64, 10, NULL, 0, NULL}, "takes no sparse residual"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        qjit__layer_plan plan;
        pthread_mutex_lock(&ctx->lock);
        qjit_status st = qjit__plan_layer(ctx, &bad[i].req, &plan);
        pthread_mutex_unlock(&ctx->lock);
        ck_assert_int_ne(st, QJIT_OK);
        ck_assert_msg(strstr(qjit_last_error(ctx), bad[i].words), "case %zu: '%s' lacks '%s'", i, qjit_last_error(ctx),
                      bad[i].words);
        qjit__plan_release(ctx, &plan);
    }
    qjit_context_destroy(ctx);
}
END_TEST

/* pipe=wgmma: the warpgroup-MMA source on sm_90a; every field combination
 * it cannot run is refused with the reason. */
START_TEST(wgmma_variants_are_checked)
{
    qjit_context *ctx = make_ctx();
    char *src = NULL;
    src = source_with(ctx, "pipe=wgmma;tile=128x128x128;warps=1x8;stages=4;split=2",
                      (const char *const[]){"wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8",
                                            "fence.proxy.async.shared::cta", "cp_async_wait<", NULL},
                      (const char *const[]){"mma.sync", "cp.async.bulk", NULL});
    qjit_free(ctx, src);
    src = source_with(ctx, "pipe=wgmma;tile=64x128x128;warps=2x4", (const char *const[]){"m64n32k32", NULL}, NULL);
    qjit_free(ctx, src);
    /* pipe=tma: the same MMAs, the ring filled by tensor copies on mbarriers. */
    src = source_with(ctx, "pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=2",
                      (const char *const[]){"wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8",
                                            "cp.async.bulk.tensor.2d", "mbarrier.try_wait.parity",
                                            "__grid_constant__ qjit_tmap xmap", NULL},
                      (const char *const[]){"cp_async_wait<", "load_stage<", NULL});
    qjit_free(ctx, src);
    static const refusal bad[] = {
        {"pipe=wgmma;tile=128x128x128;warps=1x8;arch=sm_90", "needs arch=sm_90a"},
        {"pipe=wgmma;tile=128x128x64;warps=1x8", "must be 128"},
        {"pipe=wgmma;tile=128x128x128;warps=1x6", "whole warpgroups"},
        {"pipe=wgmma;tile=128x96x128;warps=1x8", "multiple of 64"},
        {"pipe=wgmma;tile=40x128x128;warps=1x8", "tokens each"},
        {"pipe=wgmma;tile=256x256x128;warps=1x8", "accumulator registers"},
        {"pipe=wgmma;tile=256x128x128;warps=2x8", "registers per thread"},
        {"pipe=wgmma;tile=256x128x128;warps=2x4;stages=8", "shared memory"},
        {"pipe=wgmma;tile=128x128x128;warps=1x8;stages=2", "stages"},
        {"pipe=tma;tile=128x128x128;warps=1x8;arch=sm_90", "pipe=tma needs arch=sm_90a"},
        {"pipe=tma;tile=512x128x128;warps=2x4", "decimal integer in [1, 256]"},
        {"pipe=tma;tile=128x128x128;warps=1x8;stages=2", "stages"},
    };
    expect_refusals(ctx, bad, sizeof bad / sizeof bad[0]);
    qjit_context_destroy(ctx);
}
END_TEST

/* The dispatch table uses the warpgroup-MMA pipes (here the TMA one) only
 * where they can run: sm_90a, and K a multiple of their 128-wide step. */
START_TEST(dispatch_picks_wgmma_on_sm90a_only)
{
    qjit_context *ctx = make_ctx();
    char *list = NULL;
    ck_assert_int_eq(qjit_default_variants(ctx, "sm_90a", &list), QJIT_OK);
    ck_assert_ptr_nonnull(strstr(list, "pipe=tma"));
    ck_assert_ptr_nonnull(strstr(list, "pipe=decode"));
    qjit_free(ctx, list);
    ck_assert_int_eq(qjit_default_variants(ctx, "sm_90", &list), QJIT_OK);
    ck_assert_ptr_null(strstr(list, "pipe=wgmma"));
    ck_assert_ptr_null(strstr(list, "pipe=tma"));
    ck_assert_ptr_nonnull(strstr(list, "pipe=multistage"));
    qjit_free(ctx, list);
    qjit_context_destroy(ctx);
}
END_TEST

/* The bucket keys dispatch.lua plans for one layer of `scheme` (N x K,
 * groups of `group`, sm_90a, 132 SMs), read through the runtime's typed
 * plan reader; keys[i] is bucket i + 1's. */
static void group_plan_keys(qjit_context *ctx, const char *scheme, int group, const char *N, const char *K,
                            char keys[8][512])
{
    qjit__layer_plan plan;
    const qjit__plan_request req = {scheme, group, atoll(N), atoll(K), "sm_90a", 132, NULL, 0, 0, 0, NULL, 0, NULL};
    pthread_mutex_lock(&ctx->lock);
    qjit_status st = qjit__plan_layer(ctx, &req, &plan);
    pthread_mutex_unlock(&ctx->lock);
    ck_assert_msg(st == QJIT_OK, "plan %sx%s: %s", N, K, qjit_last_error(ctx));
    ck_assert_int_le(plan.nbuckets, 8);
    for (int i = 0; i < 8; i++)
        snprintf(keys[i], 512, "%s", i < plan.nbuckets ? plan.buckets[i].gemm.key : "");
    qjit__plan_release(ctx, &plan);
}

static void scheme_plan_keys(qjit_context *ctx, const char *scheme, const char *N, const char *K, char keys[8][512])
{
    group_plan_keys(ctx, scheme, 128, N, K, keys);
}

static void plan_keys(qjit_context *ctx, const char *N, const char *K, char keys[8][512])
{
    scheme_plan_keys(ctx, "w4a8-lqq", N, K, keys);
}

/* Where the persistent 128x256 tiles would make a ragged last wave
 * (1 < waves <= 1.5 on 132 SMs) on a short K loop (K <= 4096), the
 * persistent 128x128 tile instead (bench/results/2026-11-28-session35):
 * 22016x4096 at M <= 256 (172 tiles), 12288x4096 at M <= 512 (192); not
 * where they make less than a wave (12288x4096 at 256: 96), more than 1.5
 * (22016x4096 at 512: 344) or the loop is long (10240x8192 at 512: 160). */
START_TEST(dispatch_ragged_last_wave)
{
    qjit_context *ctx = make_ctx();
    char k22[8][512], k12[8][512], k10[8][512];
    plan_keys(ctx, "22016", "4096", k22);
    plan_keys(ctx, "12288", "4096", k12);
    plan_keys(ctx, "10240", "8192", k10);
    static const char *const p128 = "persist=1;pipe=tma;producer=wg;reduce=global;scheme=w4a8-lqq;sk=1;split=1;"
                                    "stages=6;tile=128x128x128;warps=1x8;wu8=1";
    static const char *const p256 = "persist=1;pipe=tma;producer=wg;reduce=global;scheme=w4a8-lqq;sk=1;split=1;"
                                    "stages=4;tile=128x256x128;warps=1x8;wu8=1";
    /* Buckets 6, 7: M <= 256, 512. */
    ck_assert_msg(strstr(k22[5], p128) != NULL, "%s", k22[5]);
    ck_assert_msg(strstr(k22[6], p256) != NULL, "%s", k22[6]);
    ck_assert_msg(strstr(k12[5], p256) != NULL, "%s", k12[5]);
    ck_assert_msg(strstr(k12[6], p128) != NULL, "%s", k12[6]);
    ck_assert_msg(strstr(k10[6], p256) != NULL, "%s", k10[6]);
    /* The bucket of any M has no token count: never ragged. */
    ck_assert_ptr_null(strstr(k12[7], "tile=128x128x128"));
    /* Not for the fold schemes (their per-group sums), as large_wg. */
    char is[8][512];
    scheme_plan_keys(ctx, "w4a8-is", "22016", "4096", is);
    ck_assert_ptr_null(strstr(is[5], "persist=1"));
    qjit_context_destroy(ctx);
}
END_TEST

/* 8-bit weights at M = 33..64: the split of the 4-bit table's one-wave
 * rule (64x64 tiles filling 70 % of the SMs at most 32 K tiles a CTA: one
 * CTA an SM, in a cluster at split 2), else the most that keeps two CTAs an
 * SM in one wave; at M = 65..128 the 128x256 tile where 128x128 ones would
 * make 1..2 waves (bench/results/2026-11-28-session35, c3). */
START_TEST(dispatch_w8_few_token_splits)
{
    qjit_context *ctx = make_ctx();
    char k[8][512];
    group_plan_keys(ctx, "w8a8", 0, "4096", "4096", k);
    ck_assert_msg(strstr(k[3], "pipe=tma;reduce=cluster;scheme=w8a8;split=2;stages=6;tile=64x64x128") != NULL, "%s", k[3]);
    group_plan_keys(ctx, "w8a8", 0, "4096", "11008", k);   /* 43 K tiles at split 2: not one wave */
    ck_assert_msg(strstr(k[3], "split=4;stages=6;tile=64x64x128") != NULL, "%s", k[3]);
    group_plan_keys(ctx, "w8a8", 0, "12288", "4096", k);   /* 192 tiles */
    ck_assert_msg(strstr(k[3], "split=1;stages=4;tile=64x64x128") != NULL, "%s", k[3]);
    group_plan_keys(ctx, "w8a8", 0, "8192", "8192", k);    /* 128 tiles, 64 K tiles each */
    ck_assert_msg(strstr(k[3], "split=2;stages=4;tile=64x64x128") != NULL, "%s", k[3]);
    /* M = 65..128: 128x256 tiles where 128x128 ones make 1..2 waves. */
    ck_assert_msg(strstr(k[4], "tile=128x128x128") != NULL, "%s", k[4]);
    group_plan_keys(ctx, "w8a8", 0, "22016", "4096", k);   /* 172 tiles of 128x128 */
    ck_assert_msg(strstr(k[4], "pipe=tma;reduce=global;scheme=w8a8;split=1;stages=4;tile=128x256x128;warps=1x8") != NULL,
                  "%s", k[4]);
    group_plan_keys(ctx, "w8a8", 0, "57344", "8192", k);   /* 448 */
    ck_assert_msg(strstr(k[4], "tile=128x128x128") != NULL, "%s", k[4]);
    qjit_context_destroy(ctx);
}
END_TEST

/* The 4096-wide layers at M = 17..128 take 64-row weight tiles on deep TMA
 * rings, split along K to fill the SMs; the 32-token tile only where each
 * CTA's K loop is short (bench/results/2026-11-22-split2-h100). */
START_TEST(dispatch_narrow_tiles_for_4096_wide_layers)
{
    qjit_context *ctx = make_ctx();
    char keys[8][512];
    plan_keys(ctx, "4096", "4096", keys);
    /* Buckets 3, 4, 5: M <= 32, 64, 128. */
    ck_assert_ptr_nonnull(strstr(keys[2], "pipe=wgmma;reduce=cluster;scheme=w4a8-lqq;split=2;stages=8;tile=32x64x128"));
    /* M <= 64: 64 tiles at split 2 fill 128 SMs in one wave, 16 K tiles
     * each, the pairs in clusters; a producer warpgroup fills the rings. */
    ck_assert_ptr_nonnull(strstr(keys[3], "pipe=tma;producer=wg;reduce=cluster;scheme=w4a8-lqq;split=2;stages=8;tile=64x64x128"));
    ck_assert_ptr_nonnull(strstr(keys[4], "pipe=tma;producer=wg;reduce=cluster;scheme=w4a8-lqq;split=2;stages=8;tile=128x64x128"));
    /* K = 11008: 43 K tiles per CTA at split 2, past max_kloop = 16. */
    plan_keys(ctx, "4096", "11008", keys);
    ck_assert_ptr_nonnull(strstr(keys[2], "pipe=multistage"));
    /* ... and 43 at split 2 is past the one wave's 32: split 4, two CTAs an SM. */
    ck_assert_ptr_nonnull(strstr(keys[3], "split=4;stages=8;tile=64x64x128"));
    ck_assert_ptr_nonnull(strstr(keys[4], "tile=128x64x128"));
    /* Wider layers take the 64x64 tile at M = 33..64 too, and the 128-row
     * tiles past. */
    plan_keys(ctx, "8192", "8192", keys);
    ck_assert_ptr_nonnull(strstr(keys[3], "pipe=tma;producer=wg;reduce=cluster;scheme=w4a8-lqq;split=2;stages=8;tile=64x64x128"));
    ck_assert_ptr_null(strstr(keys[4], "x64x128;"));
    /* ... but the 64x128 tile where 64x64 tiles two an SM make a ragged
     * second wave: 22016 rows are 344 tiles against 264 places, 172 of
     * 64x128 fit one; 12288 rows are 192, one wave. */
    plan_keys(ctx, "22016", "4096", keys);
    ck_assert_ptr_nonnull(strstr(keys[3], "pipe=tma;reduce=global;scheme=w4a8-lqq;split=1;stages=4;tile=64x128x128"));
    plan_keys(ctx, "12288", "4096", keys);
    ck_assert_ptr_nonnull(strstr(keys[3], "pipe=tma;producer=wg;reduce=global;scheme=w4a8-lqq;split=1;stages=8;tile=64x64x128"));
    qjit_context_destroy(ctx);
}
END_TEST

/* The few-token buckets (bench/results/2026-11-23-session11-h100): at
 * M <= 16 a 16-token tile where the decode pipe does not take the layer,
 * past 8192 rows by how its grid fills the SMs (bench/results/
 * 2026-11-29-session51: the TMA tile at split 2 where that fills one wave
 * of three an SM to 80..100 % or where the multistage tile would make more
 * than six an SM at split 1, else the multistage tile at the thin tiles'
 * split, at most 2, at M = 9..16 as at M <= 8); at M <= 32 the 32x64 cluster tile while a CTA's K loop is at
 * most 32 tiles (past 8192 rows the TMA pipe's, with a producer warpgroup,
 * at 6 stages: bench/results/2026-11-29-session50; up to them the cp.async
 * warpgroup tile), the multistage tile past that. Every 4-bit scheme, the
 * one with a per-group rescale (w4a8-is) included, plans the same tiles. */
START_TEST(dispatch_few_token_tiles)
{
    qjit_context *ctx = make_ctx();
    char is[8][512], lqq[8][512];
    scheme_plan_keys(ctx, "w4a8-is", "57344", "8192", is);
    static const char TMA16[] = "pipe=tma;producer=wg;reduce=cluster;scheme=w4a8-lqq;split=2;stages=8;tile=16x64x128",
                      MS16_2[] = "pipe=multistage;reduce=global;scheme=w4a8-lqq;split=2;stages=4;tile=16x64x128",
                      MS16_1[] = "pipe=multistage;reduce=global;scheme=w4a8-lqq;split=1;stages=4;tile=16x64x128";
    /* N, K, the M <= 8 and M <= 16 buckets' key, why: 896 tiles of 64 rows
     * are more than six an SM at split 1; 192 make 384 CTAs at split 2, 97 %
     * of one wave at three an SM; 224 a wave and an eighth at split 2 on the
     * TMA tile, so the multistage tile at split 2 (448 < 4 x 132); 448 and
     * 344 split 1 (896, 688 > 4 x 132), at M = 9..16 too. */
    static const struct { const char *N, *K, *want; } few[] = {
        {"57344", "8192", TMA16}, {"12288", "4096", TMA16}, {"14336", "4096", MS16_2},
        {"28672", "4096", MS16_1}, {"22016", "4096", MS16_1}};
    for (size_t f = 0; f < sizeof few / sizeof few[0]; f++) {
        plan_keys(ctx, few[f].N, few[f].K, lqq);
        for (int i = 0; i < 2; i++)
            ck_assert_msg(strstr(lqq[i], few[f].want), "%sx%s bucket %d: %s", few[f].N, few[f].K, i, lqq[i]);
    }
    plan_keys(ctx, "57344", "8192", lqq);
    ck_assert_ptr_nonnull(strstr(lqq[2], "pipe=tma;producer=wg;reduce=cluster;scheme=w4a8-lqq;split=2;stages=6;tile=32x64x128"));
    plan_keys(ctx, "8192", "8192", lqq);
    ck_assert_ptr_nonnull(strstr(lqq[2], "pipe=wgmma;reduce=cluster;scheme=w4a8-lqq;split=2;stages=8;tile=32x64x128"));
    plan_keys(ctx, "57344", "8192", lqq);
    /* Up to 128 tokens; past them the wide layer takes the persistent
     * 128x256 tile with a producer warpgroup, which the per-group sums do
     * not fit. */
    for (int i = 5; i < 8; i++) {
        ck_assert_ptr_nonnull(strstr(lqq[i], "persist=1;pipe=tma;producer=wg;"));
        ck_assert_ptr_nonnull(strstr(lqq[i], "tile=128x256x128;"));
        ck_assert_ptr_null(strstr(is[i], "producer="));
    }
    for (int i = 0; i < 5; i++) {
        char *at = strstr(lqq[i], "scheme=w4a8-lqq");
        ck_assert_ptr_nonnull(at);
        memcpy(at, "scheme=w4a8-is;", 15);
        memmove(at + 15, at + 16, strlen(at + 16) + 1);
        drop_wu8(lqq[i]);   /* lqq's unsigned form (IS has none) */
        ck_assert_str_eq(is[i], lqq[i]);
    }
    /* The decode pipe keeps the layers up to N = 8192 at M <= 16; 43 K
     * tiles per CTA keep the multistage tile at M <= 32. */
    scheme_plan_keys(ctx, "w4a8-is", "4096", "11008", is);
    ck_assert_ptr_nonnull(strstr(is[1], "pipe=decode"));
    ck_assert_ptr_nonnull(strstr(is[2], "pipe=multistage"));
    plan_keys(ctx, "8192", "28672", lqq);
    ck_assert_ptr_nonnull(strstr(lqq[1], "pipe=decode"));
    ck_assert_ptr_nonnull(strstr(lqq[2], "pipe=multistage"));
    qjit_context_destroy(ctx);
}
END_TEST

/* The INT4 MMA (mma=s4): one canonical spelling (s8, the default, is
 * unnamed), refused where no kernel takes it, and what dispatch plans: on
 * sm_80/86/89 every multistage bucket of w4a4 and w4ax with its 4-bit
 * tokens packed two per byte (act-quant pack=2; w4a4: half the workspace
 * bytes, w4ax: at most K a token), the decode buckets and the 8-bit-token
 * schemes without; on sm_90a no bucket at all. */
START_TEST(int4_mma_keys_and_plans)
{
    qjit_context *ctx = make_ctx();
    char a[1024], b[1024];
    canon(ctx, "scheme=w4a4;g=0;mma=s8", a);
    canon(ctx, "scheme=w4a4;g=0", b);
    ck_assert_str_eq(a, b);
    ck_assert_ptr_null(strstr(a, "mma"));
    canon(ctx, "scheme=w4a4;g=0;mma=INT4", a);
    ck_assert_ptr_nonnull(strstr(a, ";mma=s4;"));
    canon(ctx, "kernel=act-quant;bits=4;pack=1", a);
    canon(ctx, "kernel=act-quant;bits=4", b);
    ck_assert_str_eq(a, b);
    canon(ctx, "kernel=act-quant;bits=4;pack=2", a);
    ck_assert_ptr_nonnull(strstr(a, ";pack=2;"));
    expect_bad(ctx, "scheme=w4a4;g=0;mma=s2", QJIT_INVALID_KEY, "mma=s2 is not one of: s4, s8");
    expect_bad(ctx, "kernel=act-quant;bits=4;pack=3", QJIT_INVALID_KEY, "pack=3");
    static const refusal refused[] = {
        {"scheme=w4a8-lqq;g=128;tile=64x128x64;warps=2x2;mma=s4", "scheme w4a8-lqq has no INT4 operand form"},
        {"scheme=w8a8;g=0;tile=32x128x128;warps=1x4;mma=s4", "scheme w8a8 has no INT4 operand form"},
        {"scheme=w4ax;pipe=tma;tile=128x128x128;warps=1x8;mma=s4", "does not take pipe=tma"},
        {"scheme=w4a4;g=0;pipe=decode;tile=16x32x64;warps=1x8;mma=s4", "does not take pipe=decode"},
        {"scheme=w4a4;g=0;pipe=tma;tile=128x128x128;warps=1x8;mma=s4", "does not take pipe=tma"},
        {"scheme=w4a4;g=0;tile=16x64x128;warps=1x4;actq=fused;mma=s4", "does not take actq=fused"},
        {"kernel=act-quant;bits=8;pack=2", "pack=2 (two values per byte) is for bits=4 or 8+4 (its INT4 part), not bits=8"},
    };
    expect_refusals(ctx, refused, sizeof refused / sizeof refused[0]);
    static const char *const archs[] = {"sm_80", "sm_86", "sm_89", "sm_90a"};
    static const int64_t shapes[][2] = {{4096, 4096}, {16 * 21, 64 * 12}, {57344, 8192}};
    for (size_t ai = 0; ai < sizeof archs / sizeof archs[0]; ai++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (int scheme = 0; scheme < 3; scheme++) {
                const int64_t N = shapes[si][0], K = shapes[si][1];
                const int int4 = scheme < 2, int4_target = strcmp(archs[ai], "sm_90a") != 0;
                static const char *const names[] = {"w4a4", "w4ax", "w4a8-lqq"};
                qjit__layer_plan plan;
                const qjit__plan_request req = {names[scheme], int4 ? 0 : 64, N, K, archs[ai], 132, NULL, 0, 0, 0, NULL, 0, NULL};
                pthread_mutex_lock(&ctx->lock);
                qjit_status st = qjit__plan_layer(ctx, &req, &plan);
                pthread_mutex_unlock(&ctx->lock);
                ck_assert_msg(st == QJIT_OK, "%s: %s", archs[ai], qjit_last_error(ctx));
                int s4 = 0;
                for (int bi = 0; bi < plan.nbuckets; bi++) {
                    const qjit__bucket_plan *bp = &plan.buckets[bi];
                    const int want = int4 && int4_target && strstr(bp->gemm.key, "pipe=multistage;") != NULL;
                    ck_assert_msg(!strstr(bp->gemm.key, ";mma=s4;") == !want, "%s: %s", archs[ai], bp->gemm.key);
                    ck_assert_msg(!strstr(bp->gemm_acc.key, ";mma=s4;") == !want, "%s", bp->gemm_acc.key);
                    ck_assert_msg(!strstr(bp->quant.key, ";pack=2;") == !want, "%s: %s", bp->gemm.key, bp->quant.key);
                    ck_assert_ptr_nonnull(strstr(bp->quant.key, scheme == 1 ? "bits=8+4;" : int4 ? "bits=4;" : "bits=8;"));
                    ck_assert_str_eq(bp->ws[0].name, "xq");
                    ck_assert_uint_eq(bp->ws[0].per_m, (uint64_t)(want && scheme == 0 ? K / 2 : K));
                    s4 += want;
                }
                /* Every target has multistage buckets for these layers. */
                ck_assert_msg((s4 > 0) == (int4 && int4_target), "%s %s: %d INT4 buckets", archs[ai],
                              req.scheme, s4);
                qjit__plan_release(ctx, &plan);
            }
    /* The default set pre-compiles both forms where a target has INT4
     * tensor cores, and neither packed tokens nor the INT4 MMA elsewhere. */
    char *list = NULL;
    ck_assert_int_eq(qjit_default_variants(ctx, "sm_89", &list), QJIT_OK);
    ck_assert_ptr_nonnull(strstr(list, ";mma=s4;"));
    ck_assert_ptr_nonnull(strstr(list, "bits=4;kernel=act-quant;pack=2;"));
    ck_assert_ptr_nonnull(strstr(list, "bits=8+4;kernel=act-quant;pack=2;"));
    qjit_free(ctx, list);
    ck_assert_int_eq(qjit_default_variants(ctx, "sm_90a", &list), QJIT_OK);
    ck_assert_ptr_null(strstr(list, "mma=s4"));
    ck_assert_ptr_null(strstr(list, "pack=2"));
    qjit_free(ctx, list);
    qjit_context_destroy(ctx);
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("key");
    TCase *tc = tcase_create("canonical");
    tcase_add_test(tc, order_and_spelling_do_not_matter);
    tcase_add_test(tc, every_field_changes_the_key);
    tcase_add_test(tc, bad_keys_are_rejected);
    tcase_add_test(tc, producer_register_budget);
    tcase_add_test(tc, persistent_keys_and_grid);
    tcase_add_test(tc, excp_keys);
    tcase_add_test(tc, wu8_keys);
    tcase_add_test(tc, dispatch_ragged_last_wave);
    tcase_add_test(tc, dispatch_w8_few_token_splits);
    tcase_add_test(tc, pingpong_keys);
    tcase_add_test(tc, split_last_wave_keys);
    tcase_add_test(tc, key_fuzzer);
    tcase_add_test(tc, generated_source_starts_with_its_key);
    tcase_add_test(tc, fused_quantization_is_a_variant_field);
    tcase_add_test(tc, cluster_reduction_is_a_variant_field);
    tcase_add_test(tc, schemes_generate_in_every_pipe);
    tcase_add_test(tc, plans_agree_with_the_host);
    tcase_add_test(tc, sparse_keys);
    tcase_add_test(tc, sparse_layer_plans);
    tcase_add_test(tc, wgmma_variants_are_checked);
    tcase_add_test(tc, dispatch_picks_wgmma_on_sm90a_only);
    tcase_add_test(tc, dispatch_narrow_tiles_for_4096_wide_layers);
    tcase_add_test(tc, dispatch_few_token_tiles);
    tcase_add_test(tc, int4_mma_keys_and_plans);
    tcase_add_test(tc, bf16_keys_and_plans);
    tcase_add_test(tc, bias_keys_and_plans);
    tcase_add_test(tc, picked_buckets_replace_the_table);
    qt_add(s, tc, 0);
    /* Some hundred plans of dispatch.lua, several seconds under ASan. */
    TCase *tuning = tcase_create("tuning");
    tcase_add_test(tuning, tuning_candidates_plan);
    tcase_set_timeout(tuning, 120);
    qt_add(s, tuning, 0);
    return s;
}
