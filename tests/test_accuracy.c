/* test_accuracy.c -- the GPU-free half of `qjit quant-error` (cli/accuracy.c):
 * the option parser (defaults, every option, every class of bad input
 * refused with a message naming the option and the text, the output left
 * as it was), the generators (deterministic per seed, the stated
 * statistics), the double reference and the error metrics on hand-made
 * inputs, the plan (groups a scheme does not take are skips, shapes the
 * library refuses fail with its message), and every scheme's row on a small
 * layer. */
#define _GNU_SOURCE
#include "harness.h"
#include "accuracy.h"
#include "fp16.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* qa_parse_args for the harness's parser checks (qt_parse_ok,
 * qt_parse_bad), which see its output only as bytes. */
static int parse(int argc, char **argv, void *out, char *err, size_t errlen)
{
    return qa_parse_args(argc, argv, out, err, errlen);
}
static const qt_parser parser = {parse, sizeof(qa_args)};

/* Expects the options (after the command name) to be accepted into out. */
#define PARSE_OK(out, ...) \
    qt_parse_ok(&parser, out, QT_ARGC("quant-error", __VA_ARGS__), QT_ARGV("quant-error", __VA_ARGS__))
/* Expects a refusal whose message contains both needles (NULL: no check). */
#define PARSE_BAD(n1, n2, ...) \
    qt_parse_bad(&parser, n1, n2, QT_ARGC("quant-error", __VA_ARGS__), QT_ARGV("quant-error", __VA_ARGS__))

/*------------------------------------------------------------------------
 * Options
 *------------------------------------------------------------------------*/

/* These mirror test_bench.c's option tests: the rules are shared (cli/args.c), the options and fields are not. */

START_TEST(defaults)
{
    char *argv[] = {"quant-error"};
    qa_args a;
    qt_parse_ok(&parser, &a, 1, argv);
    ck_assert_int_eq(a.n, 4096);
    ck_assert_int_eq(a.k, 4096);
    ck_assert_int_eq(a.m, 64);
    ck_assert_uint_eq(a.seed, QA_DEFAULT_SEED);
    ck_assert_int_eq(a.nschemes, 7);
    ck_assert_int_eq(a.schemes[0], QJIT_SCHEME_W4A8_LQQ);
    ck_assert_int_eq(a.schemes[1], QJIT_SCHEME_W4A8_QOQ);
    ck_assert_int_eq(a.schemes[2], QJIT_SCHEME_W4A8_IS);
    ck_assert_int_eq(a.schemes[3], QJIT_SCHEME_W8A8);
    ck_assert_int_eq(a.ngroups, 3);
    ck_assert_int_eq(a.groups[0], 0);
    ck_assert_int_eq(a.groups[1], 64);
    ck_assert_int_eq(a.groups[2], 128);
    ck_assert_ptr_null(a.csv_path);
    ck_assert_ptr_null(a.json_path);
    ck_assert_int_eq(a.help, 0);

    /* The init function gives the same, padding included. */
    qa_args b;
    memset(&b, 0x5A, sizeof b);
    qa_args_init(&b);
    ck_assert_int_eq(memcmp(&a, &b, sizeof a), 0);
}
END_TEST

START_TEST(each_option)
{
    qa_args a;
    PARSE_OK(&a, "--n", "512");
    ck_assert_int_eq(a.n, 512);
    ck_assert_int_eq(a.k, 4096);                 /* the rest stays default */
    PARSE_OK(&a, "--n", "16", "--k", "256", "--m", "1");
    ck_assert_int_eq(a.n, 16);
    ck_assert_int_eq(a.k, 256);
    ck_assert_int_eq(a.m, 1);
    PARSE_OK(&a, "--k", "11008", "--m", "4096");   /* 11008 = 43 x 256 */
    ck_assert_int_eq(a.k, 11008);
    ck_assert_int_eq(a.m, 4096);
    PARSE_OK(&a, "--seed", "42");
    ck_assert_uint_eq(a.seed, 42);
    PARSE_OK(&a, "--seed", "0x10");
    ck_assert_uint_eq(a.seed, 16);
    PARSE_OK(&a, "--seed", "0");
    ck_assert_uint_eq(a.seed, 0);
    PARSE_OK(&a, "--seed", "18446744073709551615");
    ck_assert_uint_eq(a.seed, UINT64_MAX);

    /* Names and aliases, any case, spaces around items; repeats dropped. */
    PARSE_OK(&a, "--schemes", "w8a8");
    ck_assert_int_eq(a.nschemes, 1);
    ck_assert_int_eq(a.schemes[0], QJIT_SCHEME_W8A8);
    PARSE_OK(&a, "--schemes", "is, LQQ ,qserve,int8,w4a8-lqq,W4A8_IS");
    ck_assert_int_eq(a.nschemes, 4);
    ck_assert_int_eq(a.schemes[0], QJIT_SCHEME_W4A8_IS);
    ck_assert_int_eq(a.schemes[1], QJIT_SCHEME_W4A8_LQQ);
    ck_assert_int_eq(a.schemes[2], QJIT_SCHEME_W4A8_QOQ);
    ck_assert_int_eq(a.schemes[3], QJIT_SCHEME_W8A8);
    PARSE_OK(&a, "--schemes", "all");
    ck_assert_int_eq(a.nschemes, 7);
    ck_assert_int_eq(a.schemes[0], QJIT_SCHEME_W4A8_LQQ);
    PARSE_OK(&a, "--schemes", "w8a8,ALL");       /* what was named first stays first */
    ck_assert_int_eq(a.nschemes, 7);
    ck_assert_int_eq(a.schemes[0], QJIT_SCHEME_W8A8);
    ck_assert_int_eq(a.schemes[1], QJIT_SCHEME_W4A8_LQQ);

    PARSE_OK(&a, "--groups", "128");
    ck_assert_int_eq(a.ngroups, 1);
    ck_assert_int_eq(a.groups[0], 128);
    PARSE_OK(&a, "--groups", "256, 0,64,256,0");
    ck_assert_int_eq(a.ngroups, 3);
    ck_assert_int_eq(a.groups[0], 256);
    ck_assert_int_eq(a.groups[1], 0);
    ck_assert_int_eq(a.groups[2], 64);
    PARSE_OK(&a, "--groups", "100");             /* not the parser's business: the scheme skips it */
    ck_assert_int_eq(a.groups[0], 100);

    ck_assert_int_eq(a.nsparsity, 1);            /* the default: dense only */
    ck_assert(a.sparsity[0] == 0.0);
    PARSE_OK(&a, "--rblock", "16x128");
    ck_assert_int_eq(a.rblock_n, 16);
    ck_assert_int_eq(a.rblock_k, 128);
    ck_assert_int_eq(a.na8, 3);                  /* w4ax's default INT8 shares */
    ck_assert(a.a8[0] == 0.05 && a.a8[1] == 0.1 && a.a8[2] == 0.2);
    PARSE_OK(&a, "--a8", "0,0.25");
    ck_assert_int_eq(a.na8, 2);
    ck_assert(a.a8[0] == 0.0 && a.a8[1] == 0.25);
    PARSE_OK(&a, "--sparsity", "0,0.05,.1,1");
    ck_assert_int_eq(a.nsparsity, 4);
    ck_assert(a.sparsity[0] == 0.0 && a.sparsity[1] == 0.05 && a.sparsity[2] == 0.1 && a.sparsity[3] == 1.0);

    char *argv[] = {"quant-error", "--csv", "out.csv", "--json", "out.json"};
    qt_parse_ok(&parser, &a, 5, argv);
    ck_assert_ptr_eq(a.csv_path, argv[2]);       /* pointers into argv */
    ck_assert_ptr_eq(a.json_path, argv[4]);

    /* A later option replaces an earlier one. */
    PARSE_OK(&a, "--n", "32", "--n", "64", "--schemes", "lqq", "--schemes", "qoq");
    ck_assert_int_eq(a.n, 64);
    ck_assert_int_eq(a.nschemes, 1);
    ck_assert_int_eq(a.schemes[0], QJIT_SCHEME_W4A8_QOQ);
}
END_TEST

START_TEST(help)
{
    qa_args a;
    PARSE_OK(&a, "--help");
    ck_assert_int_eq(a.help, 1);
    PARSE_OK(&a, "-h");
    ck_assert_int_eq(a.help, 1);
    PARSE_OK(&a, "--m", "7", "--help", "--bogus", "--n", "3");
    ck_assert_int_eq(a.help, 1);
    ck_assert_int_eq(a.m, 7);
    PARSE_BAD("--bogus", NULL, "--bogus", "--help");
}
END_TEST

START_TEST(unknown_and_missing)
{
    PARSE_BAD("unknown option", "--bogus", "--bogus");
    PARSE_BAD("unknown option", "--scheme", "--scheme", "lqq");    /* it is --schemes */
    PARSE_BAD("unknown option", "'--n=512'", "--n=512");
    PARSE_BAD("unknown option", "'512'", "512");
    static const char *valued[] = {"--n", "--k", "--m", "--seed", "--schemes", "--groups", "--csv", "--json"};
    for (size_t i = 0; i < sizeof valued / sizeof *valued; i++) {
        char *argv[] = {"quant-error", "--m", "9", (char *)valued[i]};
        qt_parse_bad(&parser, valued[i], "needs a value", 4, argv);
    }
    PARSE_BAD("--csv", "empty", "--csv", "");
    PARSE_BAD("--json", "empty", "--json", "");
}
END_TEST

START_TEST(bad_numbers)
{
    /* Not a whole number. */
    static const char *junk[] = {"abc", "", " 512", "512 ", "+512", "-512", "512k", "5e2", "0x200", "51.2"};
    for (size_t i = 0; i < sizeof junk / sizeof *junk; i++) {
        char quoted[32];
        snprintf(quoted, sizeof quoted, "'%s'", junk[i]);
        char *n[] = {"quant-error", "--n", (char *)junk[i]};
        qt_parse_bad(&parser, "--n", quoted, 3, n);
        char *m[] = {"quant-error", "--m", (char *)junk[i]};
        qt_parse_bad(&parser, "--m", quoted, 3, m);
    }
    /* Below the minimum, not a multiple, out of range. */
    PARSE_BAD("--n", "at least 16", "--n", "0");
    PARSE_BAD("--n", "at least 16", "--n", "8");
    PARSE_BAD("--n", "multiple of 16", "--n", "520");
    PARSE_BAD("--k", "at least 256", "--k", "64");
    PARSE_BAD("--k", "multiple of 256", "--k", "4160");   /* a multiple of 64 is not enough */
    PARSE_BAD("--k", "'4096x'", "--k", "4096x");
    PARSE_BAD("--m", "at least 1", "--m", "0");
    PARSE_BAD("--n", "out of range", "--n", "2097152");
    PARSE_BAD("--n", "out of range", "--n", "99999999999999999999999");
    PARSE_BAD("--k", "out of range", "--k", "2097152");
    PARSE_BAD("--m", "out of range", "--m", "65537");
    /* Seeds: decimal, hex or octal, no sign. */
    PARSE_BAD("--seed", "'abc'", "--seed", "abc");
    PARSE_BAD("--seed", "'12z'", "--seed", "12z");
    PARSE_BAD("--seed", "'-1'", "--seed", "-1");
    PARSE_BAD("--seed", "'0x'", "--seed", "0x");
    PARSE_BAD("--seed", "''", "--seed", "");
    PARSE_BAD("--seed", "out of range", "--seed", "99999999999999999999999");
}
END_TEST

START_TEST(bad_lists)
{
    PARSE_BAD("--schemes", "unknown scheme 'w4a2'", "--schemes", "lqq,w4a2");
    PARSE_BAD("--schemes", "unknown scheme 'lqq qoq'", "--schemes", "lqq qoq");
    PARSE_BAD("--schemes", "empty", "--schemes", "");
    PARSE_BAD("--schemes", "empty", "--schemes", "lqq,,qoq");
    PARSE_BAD("--schemes", "empty", "--schemes", "lqq,");
    PARSE_BAD("--schemes", "empty", "--schemes", " , ");
    PARSE_BAD("--schemes", "unknown scheme", "--schemes",
              "a-very-long-name-that-no-scheme-could-ever-have-at-all");
    PARSE_BAD("--sparsity", "'1.5'", "--sparsity", "0,1.5");
    PARSE_BAD("--sparsity", "'-0.1'", "--sparsity", "-0.1");
    PARSE_BAD("--sparsity", "'1e-1'", "--sparsity", "1e-1");
    PARSE_BAD("--sparsity", "'0.1234567'", "--sparsity", "0.1234567");
    PARSE_BAD("--sparsity", "'.'", "--sparsity", ".");
    PARSE_BAD("--sparsity", "twice", "--sparsity", "0.1,0.10");
    PARSE_BAD("--sparsity", "empty", "--sparsity", "0.1,,0.2");
    PARSE_BAD("--sparsity", "more than 8", "--sparsity", "0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8");
    PARSE_BAD("--a8", "'1.5'", "--a8", "0.1,1.5");
    PARSE_BAD("--a8", "twice", "--a8", "0.1,0.10");
    PARSE_BAD("--rblock", "'64'", "--rblock", "64");
    PARSE_BAD("--rblock", "'64x'", "--rblock", "64x");
    PARSE_BAD("--rblock", "'0x64'", "--rblock", "0x64");
    PARSE_BAD("--rblock", "'64x64x64'", "--rblock", "64x64x64");
    PARSE_BAD("--rblock", "'-16x64'", "--rblock", "-16x64");
    PARSE_BAD("--groups", "'-64'", "--groups", "-64");
    PARSE_BAD("--groups", "'x'", "--groups", "64,x");
    PARSE_BAD("--groups", "'128k'", "--groups", "128k");
    PARSE_BAD("--groups", "'per-channel'", "--groups", "per-channel");
    PARSE_BAD("--groups", "empty", "--groups", "64,,128");
    PARSE_BAD("--groups", "empty", "--groups", "");
    PARSE_BAD("--groups", "out of range", "--groups", "4194304");
    PARSE_BAD("--groups", "out of range", "--groups", "99999999999999999999999");

    char list[512] = "";
    for (int i = 0; i < QA_MAX_GROUPS; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? "," : "", 64 * (i + 1));
    qa_args a;
    char *ok[] = {"quant-error", "--groups", list};
    qt_parse_ok(&parser, &a, 3, ok);
    ck_assert_int_eq(a.ngroups, QA_MAX_GROUPS);
    strcat(list, ",64");                         /* a repeat is no new group */
    qt_parse_ok(&parser, &a, 3, ok);
    ck_assert_int_eq(a.ngroups, QA_MAX_GROUPS);
    strcat(list, ",7");
    qt_parse_bad(&parser, "--groups", "'7'", 3, ok);
}
END_TEST

/*------------------------------------------------------------------------
 * Generators
 *------------------------------------------------------------------------*/

static int is_outlier(const int64_t *o, int n, int64_t k)
{
    for (int i = 0; i < n; i++)
        if (o[i] == k)
            return 1;
    return 0;
}

static double kurtosis(const double *v, size_t n)
{
    double mean = 0, m2 = 0, m4 = 0;
    for (size_t i = 0; i < n; i++)
        mean += v[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++) {
        double d = (v[i] - mean) * (v[i] - mean);
        m2 += d;
        m4 += d * d;
    }
    m2 /= (double)n;
    m4 /= (double)n;
    return m4 / (m2 * m2);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

START_TEST(generators_deterministic)
{
    const int64_t N = 64, K = 1024, M = 8;
    uint64_t seed = qt_seed();
    float *w1 = qt_xmalloc(N * K * sizeof(float)), *w2 = qt_xmalloc(N * K * sizeof(float));
    uint16_t *x1 = qt_xmalloc(M * K * 2), *x2 = qt_xmalloc(M * K * 2);
    int64_t o1[2], o2[2];
    ck_assert_int_eq(qa_outlier_count(K), 2);
    qa_gen_weights(w1, N, K, seed, o1);
    qa_gen_weights(w2, N, K, seed, o2);
    ck_assert_int_eq(memcmp(w1, w2, N * K * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(o1, o2, sizeof o1), 0);
    qa_gen_activations(x1, M, K, seed, o1);
    qa_gen_activations(x2, M, K, seed, NULL);     /* the outliers are optional; the values the same */
    ck_assert_int_eq(memcmp(x1, x2, M * K * 2), 0);

    /* Another seed, other values. */
    qa_gen_weights(w2, N, K, seed + 1, NULL);
    qa_gen_activations(x2, M, K, seed + 1, NULL);
    ck_assert_int_ne(memcmp(w1, w2, N * K * sizeof(float)), 0);
    ck_assert_int_ne(memcmp(x1, x2, M * K * 2), 0);

    /* Every weight is an FP16 value held in FP32; nothing overflows FP16. */
    for (int64_t i = 0; i < N * K; i++)
        REQUIRE(isfinite(w1[i]) && w1[i] == qjit__half_to_float(qjit__float_to_half(w1[i])),
                "W[%lld] = %g is not an FP16 value", (long long)i, w1[i]);
    for (int64_t i = 0; i < M * K; i++)
        REQUIRE((x1[i] & 0x7C00u) != 0x7C00u, "X[%lld] is not finite", (long long)i);
    free(w1); free(w2); free(x1); free(x2);
}
END_TEST

START_TEST(outlier_channels)
{
    /* Counts, and distinct channels in range. */
    ck_assert_int_eq(qa_outlier_count(256), 1);
    ck_assert_int_eq(qa_outlier_count(511), 1);
    ck_assert_int_eq(qa_outlier_count(1024), 2);
    ck_assert_int_eq(qa_outlier_count(4096), 8);
    ck_assert_int_eq(qa_outlier_count(11008), 21);
    const int64_t N = 16, K = 11008;
    float *w = qt_xmalloc(N * K * sizeof(float));
    int64_t o[21];
    qa_gen_weights(w, N, K, qt_seed(), o);
    for (int i = 0; i < 21; i++) {
        ck_assert(o[i] >= 0 && o[i] < K);
        for (int j = 0; j < i; j++)
            ck_assert(o[i] != o[j]);
    }
    free(w);
}
END_TEST

START_TEST(weight_statistics)
{
    const int64_t N = 512, K = 2048;
    float *W = qt_xmalloc(N * K * sizeof(float));
    int64_t o[4];
    int no = qa_outlier_count(K);
    qa_gen_weights(W, N, K, qt_seed(), o);

    /* Column RMS: the outlier columns (3x .. 6x) against the median column. */
    double *col = qt_xmalloc(K * sizeof(double)), *bulk = qt_xmalloc(N * K * sizeof(double));
    size_t nb = 0;
    double s2 = 0;
    for (int64_t k = 0; k < K; k++) {
        double c = 0;
        for (int64_t n = 0; n < N; n++)
            c += (double)W[n * K + k] * W[n * K + k];
        col[k] = sqrt(c / N);
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++)
            if (!is_outlier(o, no, k)) {
                bulk[nb++] = W[n * K + k];
                s2 += (double)W[n * K + k] * W[n * K + k];
            }
    double std = sqrt(s2 / nb);
    /* The bulk's std is 0.02 up to sampling (0.0194 .. 0.0206 over 300
     * seeds: t5's variance and the 512 row scales wobble). */
    ck_assert_msg(std > 0.018 && std < 0.022, "std of the bulk %g, want about 0.02", std);
    double out_min = INFINITY;
    for (int i = 0; i < no; i++)
        out_min = fmin(out_min, col[o[i]]);
    double *cols = qt_xmalloc(K * sizeof(double));
    memcpy(cols, col, K * sizeof(double));
    double med = median(cols, K);
    /* 3x .. 6x by construction; a column's RMS over 512 heavy-tailed rows
     * wobbles (the smallest ratio over 300 seeds was 2.77): ask for 2x. */
    ck_assert_msg(out_min > 2 * med, "outlier columns' RMS %g, median column %g", out_min, med);
    /* Heavy tails: a normal has kurtosis 3; t5 has 9 and the row scales
     * (E r^4 / (E r^2)^2 = e^0.25) lift it to about 11.6; the sample value
     * wobbles (t5's eighth moment is infinite; 8.7 .. 46 over 300 seeds),
     * so ask for "well above 3". */
    double kurt = kurtosis(bulk, nb);
    ck_assert_msg(kurt > 6, "kurtosis of the bulk %g, want well above 3", kurt);
    /* A spread of row norms: the largest row RMS well above the smallest. */
    double rmin = INFINITY, rmax = 0;
    for (int64_t n = 0; n < N; n++) {
        double r = 0;
        for (int64_t k = 0; k < K; k++)
            if (!is_outlier(o, no, k))
                r += (double)W[n * K + k] * W[n * K + k];
        r = sqrt(r / (K - no));
        rmin = fmin(rmin, r);
        rmax = fmax(rmax, r);
    }
    ck_assert_msg(rmax > 1.8 * rmin, "row RMS from %g to %g: no spread", rmin, rmax);
    free(W); free(col); free(cols); free(bulk);
}
END_TEST

START_TEST(activation_statistics)
{
    const int64_t M = 64, K = 2048;
    uint16_t *X = qt_xmalloc(M * K * 2);
    int64_t o[4];
    int no = qa_outlier_count(K);
    qa_gen_activations(X, M, K, qt_seed(), o);
    double *col = qt_xmalloc(K * sizeof(double)), *row = qt_xmalloc(M * sizeof(double));
    /* Each token's RMS over its ordinary channels. */
    for (int64_t m = 0; m < M; m++) {
        double r = 0;
        for (int64_t k = 0; k < K; k++)
            if (!is_outlier(o, no, k)) {
                double v = qjit__half_to_float(X[m * K + k]);
                r += v * v;
            }
        row[m] = sqrt(r / (K - no));
    }
    /* Channel RMS over the tokens, each token divided by its own RMS so all
     * 64 count alike: an ordinary channel's is sqrt(chi2_64 / 64), 0.75 ..
     * 1.25 but for one time in a thousand, an outlier's 20 .. 50 times that. */
    for (int64_t k = 0; k < K; k++) {
        double c = 0;
        for (int64_t m = 0; m < M; m++) {
            double v = qjit__half_to_float(X[m * K + k]) / row[m];
            c += v * v;
        }
        col[k] = sqrt(c / M);
    }
    double out_min = INFINITY;
    for (int i = 0; i < no; i++)
        out_min = fmin(out_min, col[o[i]]);
    double med = median(col, K);
    ck_assert_msg(out_min > 10 * med, "outlier channels' RMS %g, median channel %g", out_min, med);
    /* Rows of different magnitude: token scales exp(0.5 z), over 64 tokens
     * about e^{-1.2} .. e^{1.2}. */
    qsort(row, M, sizeof *row, cmp_double);
    ck_assert_msg(row[M - 1] > 2.5 * row[0], "token RMS from %g to %g: no spread", row[0], row[M - 1]);
    /* Within a token the bulk is normal: kurtosis near 3. */
    double *v = qt_xmalloc(K * sizeof(double));
    size_t n = 0;
    for (int64_t k = 0; k < K; k++)
        if (!is_outlier(o, no, k))
            v[n++] = qjit__half_to_float(X[5 * K + k]);
    double kurt = kurtosis(v, n);
    ck_assert_msg(kurt > 2.3 && kurt < 4.0, "kurtosis of a token's bulk %g, want about 3", kurt);
    free(X); free(col); free(row); free(v);
}
END_TEST

/*------------------------------------------------------------------------
 * The reference and the metrics
 *------------------------------------------------------------------------*/

START_TEST(errors_hand_made)
{
    double rel, mx;
    const double ref[4] = {3, -4, 0, 0};
    qa_errors(ref, ref, 4, &rel, &mx);
    ck_assert_double_eq(rel, 0);
    ck_assert_double_eq(mx, 0);

    /* ||ref|| = 5, max|ref| = 4; the difference (0, 3, 0, 0). */
    const double y1[4] = {3, -1, 0, 0};
    qa_errors(y1, ref, 4, &rel, &mx);
    ck_assert_double_eq_tol(rel, 0.6, 1e-15);
    ck_assert_double_eq_tol(mx, 0.75, 1e-15);

    /* The difference (1, 0, 2, -2): ||d|| = 3, max 2. */
    const double y2[4] = {4, -4, 2, -2};
    qa_errors(y2, ref, 4, &rel, &mx);
    ck_assert_double_eq_tol(rel, 0.6, 1e-15);
    ck_assert_double_eq_tol(mx, 0.5, 1e-15);

    /* Scaled output: the relative error is the scale's. */
    const double y3[4] = {3.3, -4.4, 0, 0};
    qa_errors(y3, ref, 4, &rel, &mx);
    ck_assert_double_eq_tol(rel, 0.1, 1e-14);
    ck_assert_double_eq_tol(mx, 0.1, 1e-14);

    /* Sign flip: the difference is twice the reference. */
    const double y4[4] = {-3, 4, 0, 0};
    qa_errors(y4, ref, 4, &rel, &mx);
    ck_assert_double_eq_tol(rel, 2.0, 1e-15);
    ck_assert_double_eq_tol(mx, 2.0, 1e-15);

    /* A zero reference: 0 when y is zero too, else infinite. */
    const double zero[2] = {0, 0}, one[2] = {0, 1e-30};
    qa_errors(zero, zero, 2, &rel, &mx);
    ck_assert_double_eq(rel, 0);
    ck_assert_double_eq(mx, 0);
    qa_errors(one, zero, 2, &rel, &mx);
    ck_assert(isinf(rel) && isinf(mx));
    /* A NaN in y is not hidden. */
    const double nan_y[2] = {NAN, 1};
    qa_errors(nan_y, one, 2, &rel, &mx);
    ck_assert(!(rel < 1e300) && !(mx < 1e300));
}
END_TEST

START_TEST(gemm_f64)
{
    /* By hand: X = [[1, 2, 3], [-1, 0, 0.5]], W = [[1, 0, -1], [2, 1, 1]]. */
    const double X[6] = {1, 2, 3, -1, 0, 0.5};
    const float W[6] = {1, 0, -1, 2, 1, 1};
    double Y[4];
    ck_assert_int_eq(qa_gemm_f64(X, 2, W, 2, 3, Y), 0);
    ck_assert_double_eq(Y[0], -2);
    ck_assert_double_eq(Y[1], 7);
    ck_assert_double_eq(Y[2], -1.5);
    ck_assert_double_eq(Y[3], -1.5);

    /* Against a plain triple loop, with M not a multiple of 4 and more rows
     * than threads; integers, so both are exact. */
    qt_rng r = qt_rng_make(7);
    const int64_t M = 7, N = 37, K = 129;
    double *x = qt_xmalloc(M * K * sizeof(double)), *y = qt_xmalloc(M * N * sizeof(double));
    float *w = qt_xmalloc(N * K * sizeof(float));
    for (int64_t i = 0; i < M * K; i++)
        x[i] = (double)(int)(qt_next(&r) % 255) - 127;
    for (int64_t i = 0; i < N * K; i++)
        w[i] = (float)((int)(qt_next(&r) % 17) - 8);
    ck_assert_int_eq(qa_gemm_f64(x, M, w, N, K, y), 0);
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += x[m * K + k] * w[n * K + k];
            REQUIRE(y[m * N + n] == s, "Y[%lld, %lld] = %g, want %g", (long long)m, (long long)n, y[m * N + n], s);
        }
    free(x); free(y); free(w);
}
END_TEST

/*------------------------------------------------------------------------
 * The plan and the rows
 *------------------------------------------------------------------------*/

static int find_job(const qa_plan *p, qjit_scheme s, int g)
{
    for (int i = 0; i < p->njobs; i++)
        if (p->jobs[i].scheme == s && p->jobs[i].group == g)
            return i;
    return -1;
}

START_TEST(plan)
{
    qjit_context *ctx = qt_bare_context();
    qa_args a;
    qa_plan p;
    char err[1024] = "";
    qa_args_init(&a);
    ck_assert_msg(qa_make_plan(ctx, &a, &p, err, sizeof err) == 0, "%s", err);
    /* The defaults: lqq and qoq at 0, 64, 128; is at 64, 128; w8a8 and w4a4
     * at 0; w4ax and w4ax-s at 0 with each default INT8 share. */
    ck_assert_int_eq(p.njobs, 16);
    ck_assert_int_eq(find_job(&p, QJIT_SCHEME_W4A8_LQQ, 0), 0);
    ck_assert_int_eq(find_job(&p, QJIT_SCHEME_W4A8_LQQ, 128), 2);
    ck_assert_int_eq(find_job(&p, QJIT_SCHEME_W4A8_QOQ, 64), 4);
    ck_assert_int_eq(find_job(&p, QJIT_SCHEME_W4A8_IS, 64), 6);
    ck_assert_int_eq(find_job(&p, QJIT_SCHEME_W4A8_IS, 0), -1);
    ck_assert_int_eq(find_job(&p, QJIT_SCHEME_W8A8, 0), 8);
    ck_assert_int_eq(find_job(&p, QJIT_SCHEME_W4A4, 0), 9);
    ck_assert_int_eq(find_job(&p, QJIT_SCHEME_W4AX, 0), 10);
    for (int i = 0; i < 3; i++)
        ck_assert(p.jobs[10 + i].scheme == QJIT_SCHEME_W4AX && p.jobs[10 + i].a8 == a.a8[i] &&
                  p.jobs[13 + i].scheme == QJIT_SCHEME_W4AX_S && p.jobs[13 + i].a8 == a.a8[i]);
    ck_assert_int_eq(p.nskips, 9);
    ck_assert_int_eq(p.skips[3].scheme, QJIT_SCHEME_W4A4);
    ck_assert_int_eq(p.skips[7].scheme, QJIT_SCHEME_W4AX_S);
    ck_assert_int_eq(p.skips[0].scheme, QJIT_SCHEME_W4A8_IS);
    ck_assert_int_eq(p.skips[0].group, 0);
    ck_assert_msg(strstr(p.skips[0].reason, "w4a8-is"), "reason: %s", p.skips[0].reason);
    ck_assert_int_eq(p.skips[1].scheme, QJIT_SCHEME_W8A8);
    ck_assert_int_eq(p.skips[1].group, 64);
    ck_assert_msg(strstr(p.skips[2].reason, "group=128"), "reason: %s", p.skips[2].reason);

    /* A group that is no multiple of 64: every scheme skips it, with the
     * library's reason; no context, still a reason. */
    char *argv[] = {"quant-error", "--groups", "100,256", "--k", "1024"};
    ck_assert_int_eq(qa_parse_args(5, argv, &a, err, sizeof err), 0);
    ck_assert_msg(qa_make_plan(NULL, &a, &p, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(p.njobs, 3);                /* lqq, qoq, is at 256 */
    ck_assert_int_eq(p.nskips, 11);
    for (int i = 0; i < p.nskips; i++)
        ck_assert(p.skips[i].reason[0]);

    /* A group the scheme takes but the shape cannot: the library's message. */
    char *bad[] = {"quant-error", "--groups", "64,512", "--k", "256", "--schemes", "lqq"};
    ck_assert_int_eq(qa_parse_args(7, bad, &a, err, sizeof err), 0);
    memset(&p, 0x5A, sizeof p);
    err[0] = '\0';
    ck_assert_int_eq(qa_make_plan(ctx, &a, &p, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "w4a8-lqq g=512") && strstr(err, "must divide K=256"), "message: %s", err);
    ck_assert_int_eq(p.njobs, 0x5A5A5A5A);       /* the plan is untouched */

    /* Budgets with the default residual blocks (64 x 64) and others: a row
     * each for the schemes that take a residual, a skip with the reason
     * for one that does not; a block the layer cannot hold is the user's. */
    static const char *const rblocks[] = {NULL, "16x64", "128x128", "32x128"};
    for (size_t i = 0; i < sizeof rblocks / sizeof rblocks[0]; i++) {
        char *sp[] = {"quant-error", "--schemes", "lqq,qoq,is", "--groups", "64,128", "--sparsity", "0,0.1",
                      "--n", "512", "--k", "1024", "--rblock", (char *)rblocks[i]};
        ck_assert_int_eq(qa_parse_args(rblocks[i] ? 13 : 11, sp, &a, err, sizeof err), 0);
        ck_assert_msg(qa_make_plan(ctx, &a, &p, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(p.njobs, 2 * 2 * 2 + 2);   /* lqq, qoq: 2 groups x 2 budgets; is: dense */
        for (int j = 0; j < p.njobs; j++)
            ck_assert(p.jobs[j].sparsity == 0 || p.jobs[j].scheme != QJIT_SCHEME_W4A8_IS);
        ck_assert_int_eq(p.nskips, 2);
        ck_assert_int_eq(p.skips[0].scheme, QJIT_SCHEME_W4A8_IS);
        ck_assert(p.skips[0].sparsity == 0.1);
        ck_assert_msg(strstr(p.skips[0].reason, "residual"), "reason: %s", p.skips[0].reason);
    }
    char *tall[] = {"quant-error", "--schemes", "lqq", "--sparsity", "0.1", "--n", "64", "--rblock", "128x64"};
    ck_assert_int_eq(qa_parse_args(9, tall, &a, err, sizeof err), 0);
    ck_assert_int_eq(qa_make_plan(ctx, &a, &p, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "w4a8-lqq g=") && strstr(err, "block_n = 128"), "message: %s", err);
}
END_TEST

/* One small layer for the row tests: 512 x 1024, 16 tokens (two outlier
 * channels each side), about 0.1 s for every row on one core. */
static qa_layer small;
static void small_setup(void)
{
    char err[512] = "";
    if (qa_layer_make(&small, 512, 1024, 16, qt_seed(), qt_bare_context(), err, sizeof err))
        ck_abort_msg("layer: %s", err);
}
static void small_teardown(void)
{
    qa_layer_free(&small);
}

START_TEST(layer_reference)
{
    /* Y_ref is X W^T from the unquantized FP16 X, checked at a few points
     * with a plain loop (long double, so the sums agree to rounding). */
    qt_rng r = qt_rng_make(11);
    for (int t = 0; t < 32; t++) {
        int64_t m = (int64_t)(qt_next(&r) % 16), n = (int64_t)(qt_next(&r) % 512);
        long double s = 0, a = 0;
        for (int64_t k = 0; k < 1024; k++) {
            long double p = (long double)qjit__half_to_float(small.X[m * 1024 + k]) * small.W[n * 1024 + k];
            s += p;
            a += fabsl(p);
        }
        double got = small.Yref[m * 512 + n];
        ck_assert_msg(fabsl(got - s) <= 1e-12L * a, "Y_ref[%lld, %lld] = %.17g, want %.17Lg", (long long)m,
                      (long long)n, got, s);
    }
    /* The quantized activations are the library's. */
    int8_t *xq = qt_xmalloc(16 * 1024);
    float sx[16];
    ck_assert_int_eq(qjit_reference_quantize_activations(NULL, 16, 1024, small.X, xq, sx), QJIT_OK);
    ck_assert_int_eq(memcmp(xq, small.Xq, 16 * 1024), 0);
    ck_assert_int_eq(memcmp(sx, small.sx, sizeof sx), 0);
    free(xq);
}
END_TEST

START_TEST(rows_small_layer)
{
    qjit_context *ctx = qt_bare_context();
    qa_args a;
    qa_plan p;
    char err[1024] = "";
    char *argv[] = {"quant-error", "--n", "512", "--k", "1024", "--m", "16", "--groups", "0,64,128,256"};
    ck_assert_int_eq(qa_parse_args(9, argv, &a, err, sizeof err), 0);
    ck_assert_msg(qa_make_plan(ctx, &a, &p, err, sizeof err) == 0, "%s", err);
    /* lqq, qoq: 0, 64, 128, 256; is: 64 .. 256; w8a8, w4a4: 0; w4ax, w4ax-s: 0 at three INT8 shares */
    ck_assert_int_eq(p.njobs, 4 + 4 + 3 + 1 + 1 + 3 + 3);

    qa_row floor_row, rows[QA_MAX_JOBS];
    ck_assert_msg(qa_row_floor(&small, 8, &floor_row, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(floor_row.scheme, 0);
    ck_assert_double_eq(floor_row.bits_per_weight, 0);
    /* INT8 per token with 20x .. 50x channel outliers: the outliers set the
     * step, a large fraction of the ordinary channels' values (1.4% .. 7.0%
     * over 400 seeds). Nonzero, and well below 15%. */
    ck_assert_msg(floor_row.rel_error > 0.005 && floor_row.rel_error < 0.15, "floor %g", floor_row.rel_error);
    /* INT4 per token: the outliers leave the ordinary channels a step or two
     * (32% .. 62% over 40 seeds). */
    qa_row floor4;
    ck_assert_msg(qa_row_floor(&small, 4, &floor4, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(floor4.act_bits, 4);
    ck_assert_msg(floor4.rel_error > 4 * floor_row.rel_error && floor4.rel_error < 0.8, "A4 floor %g (A8 %g)",
                  floor4.rel_error, floor_row.rel_error);
    ck_assert_int_eq(qa_row_floor(&small, 2, &floor4, err, sizeof err), -1);

    double w8 = 0;
    for (int i = 0; i < p.njobs; i++) {
        qjit_scheme s = p.jobs[i].scheme;
        int g = p.jobs[i].group;
        qa_row *r = &rows[i];
        ck_assert_msg(qa_row_compute(ctx, &small, s, g, 0, 0, 0, p.jobs[i].a8, r, err, sizeof err) == 0, "%s g=%d: %s",
                      qjit_scheme_name(s), g, err);
        const char *name = qjit_scheme_name(s);
        ck_assert_int_eq(r->scheme, s);
        ck_assert_int_eq(r->group, g);
        ck_assert_msg(isfinite(r->rel_error) && isfinite(r->max_error), "%s g=%d: not finite", name, g);
        /* The bounds, from 400 seeds measured on this layer: a working 4-bit
         * scheme's relative error lies between 4% (groups of 64) and 32%
         * (per channel, or w4a8-is with groups of 256); 60% keeps a 1.9x
         * margin over the worst seed yet fails anything broken: a wrong
         * scale, layout or sign gives errors of order 100% (an output
         * uncorrelated with the reference is at least 100% off). w8a8 sits
         * on the activation floor (1.5% .. 7.7% measured): 15%. The largest
         * single error is heavier-tailed (up to 82% for 4-bit per channel,
         * 12% for w8a8): bounds 100% and 25%. */
        /* w4a4 sits on the INT4 activations' floor: 42% .. 68% over 40
         * seeds (1.08 .. 1.31x that floor), largest errors up to 91%:
         * bounds 100% (an uncorrelated output) and 150%. */
        /* w4ax's INT8 blocks hold the outliers: it sits between the two
         * floors, over the INT8 one. */
        const int a4 = s == QJIT_SCHEME_W4A4, ax = s == QJIT_SCHEME_W4AX || s == QJIT_SCHEME_W4AX_S;
        const qa_row *floor_of_row = a4 ? &floor4 : &floor_row;
        ck_assert_int_eq(r->act_bits, a4 || ax ? 4 : 8);
        double bound = s == QJIT_SCHEME_W8A8 ? 0.15 : a4 ? 1.0 : 0.6;
        double max_bound = s == QJIT_SCHEME_W8A8 ? 0.25 : a4 ? 1.5 : 1.0;
        ck_assert_msg(r->rel_error > 0 && r->rel_error < bound, "%s g=%d: relative error %g, bound %g", name, g,
                      r->rel_error, bound);
        ck_assert_msg(r->max_error > 0 && r->max_error < max_bound, "%s g=%d: max error %g, bound %g", name, g,
                      r->max_error, max_bound);
        /* No scheme beats the floor it sits on: the weight error is
         * independent of the activations', so the two add (in squares; every
         * row was at least 1.015x the floor over the 400 seeds). */
        ck_assert_msg(r->rel_error > 0.9 * floor_of_row->rel_error, "%s g=%d: %g below the floor %g", name, g,
                      r->rel_error, floor_of_row->rel_error);
        /* Bits per weight: 4 (or 8) plus scales and group parameters, each
         * a few bits per group of 64 or more. */
        double lo = s == QJIT_SCHEME_W8A8 ? 8 : 4;
        ck_assert_msg(r->bits_per_weight > lo && r->bits_per_weight < lo + 0.5, "%s g=%d: %g bits per weight",
                      name, g, r->bits_per_weight);
        ck_assert_uint_eq(r->payload_bytes, (size_t)llround(r->bits_per_weight * 512 * 1024 / 8));
        if (s == QJIT_SCHEME_W4A8_IS) {
            double e = log2(r->alpha);
            ck_assert_msg(r->alpha >= 1 && e == floor(e), "alpha %g is no power of two", r->alpha);
        } else {
            ck_assert_double_eq(r->alpha, 0);
        }
        if (s == QJIT_SCHEME_W8A8)
            w8 = r->rel_error;
    }
    ck_assert(w8 > 0);
    /* INT8 weights beat every 4-bit scheme (by 1.9x at least over 400
     * seeds); smaller LQQ groups are not worse than per channel (by 1.18x at
     * least); more bits for smaller groups. */
    for (int i = 0; i < p.njobs; i++)
        if (p.jobs[i].scheme != QJIT_SCHEME_W8A8)
            ck_assert_msg(w8 < rows[i].rel_error, "w8a8 %g not below %s g=%d's %g", w8,
                          qjit_scheme_name(p.jobs[i].scheme), p.jobs[i].group, rows[i].rel_error);
    int pc = find_job(&p, QJIT_SCHEME_W4A8_LQQ, 0);
    for (int g = 64; g <= 256; g *= 2) {
        int j = find_job(&p, QJIT_SCHEME_W4A8_LQQ, g);
        ck_assert_msg(rows[j].rel_error <= rows[pc].rel_error, "lqq g=%d %g worse than per channel %g", g,
                      rows[j].rel_error, rows[pc].rel_error);
        ck_assert(rows[j].bits_per_weight > rows[pc].bits_per_weight);
    }
    ck_assert(rows[find_job(&p, QJIT_SCHEME_W4A8_LQQ, 64)].bits_per_weight >
              rows[find_job(&p, QJIT_SCHEME_W4A8_LQQ, 128)].bits_per_weight);

    /* A row the library refuses: its message, nothing else. */
    qa_row r;
    memset(&r, 0x5A, sizeof r);
    ck_assert_int_eq(qa_row_compute(ctx, &small, QJIT_SCHEME_W8A8, 64, 0, 0, 0, 0.0, &r, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "w8a8 g=64") && strstr(err, "per-channel"), "message: %s", err);
    ck_assert_int_eq(r.group, 0x5A5A5A5A);
}
END_TEST

START_TEST(rows_deterministic)
{
    /* The same layer and scheme give the same numbers (the reference GEMM
     * is exact in integers; the double sums run in a fixed order). */
    qa_row a, b;
    char err[512] = "";
    ck_assert_msg(qa_row_compute(NULL, &small, QJIT_SCHEME_W4A8_IS, 128, 0, 0, 0, 0.0, &a, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(qa_row_compute(NULL, &small, QJIT_SCHEME_W4A8_IS, 128, 0, 0, 0, 0.0, &b, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(memcmp(&a, &b, sizeof a), 0);
}
END_TEST

START_TEST(rows_with_a_residual)
{
    /* Budgets: the error falls as the budget grows, the density is the
     * budget (to the block), and a full budget reaches w8a8-like error. */
    const double budgets[] = {0.0, 0.05, 0.1, 0.5, 1.0};
    qa_row r[5];
    char err[512] = "";
    for (int i = 0; i < 5; i++) {
        ck_assert_msg(qa_row_compute(NULL, &small, QJIT_SCHEME_W4A8_LQQ, 128, budgets[i], 0, 0, 0.0, &r[i], err, sizeof err) == 0,
                      "%s", err);
        ck_assert(r[i].sparsity == budgets[i]);
        ck_assert_msg(fabs(r[i].density - budgets[i]) < 0.01, "budget %g: density %g", budgets[i], r[i].density);
        if (i) {
            ck_assert_msg(r[i].rel_error < r[i - 1].rel_error, "budget %g: error %g not below %g", budgets[i],
                          r[i].rel_error, r[i - 1].rel_error);
            ck_assert_msg(r[i].weight_error < r[i - 1].weight_error, "budget %g: weight error %g not below %g",
                          budgets[i], r[i].weight_error, r[i - 1].weight_error);
        }
        ck_assert(i == 0 || r[i].bits_per_weight > r[i - 1].bits_per_weight);
    }
    qa_row floor_row;
    ck_assert(qa_row_floor(&small, 8, &floor_row, err, sizeof err) == 0);
    ck_assert_msg(r[4].rel_error < 1.25 * floor_row.rel_error, "full budget %g, floor %g", r[4].rel_error,
                  floor_row.rel_error);
    /* The weights' share: Y - Y_ref = (Y - Y_act) + (Y_act - Y_ref), so each
     * of rel_error, weight_error and the floor is at most the sum of the
     * other two; the floor row adds none. */
    ck_assert_double_eq(floor_row.weight_error, 0);
    for (int i = 0; i < 5; i++) {
        ck_assert(r[i].weight_error > 0);
        ck_assert(r[i].rel_error <= r[i].weight_error + floor_row.rel_error + 1e-12);
        ck_assert(r[i].weight_error <= r[i].rel_error + floor_row.rel_error + 1e-12);
        ck_assert(floor_row.rel_error <= r[i].rel_error + r[i].weight_error + 1e-12);
    }
    /* Another block shape is another choice, still under the dense error. */
    qa_row tall;
    ck_assert_msg(qa_row_compute(NULL, &small, QJIT_SCHEME_W4A8_LQQ, 128, 0.1, 16, 128, 0.0, &tall, err, sizeof err) == 0,
                  "%s", err);
    ck_assert(tall.weight_error < r[0].weight_error && tall.weight_error != r[2].weight_error);
    ck_assert_int_eq(qa_row_compute(NULL, &small, QJIT_SCHEME_W4A8_LQQ, 128, 0.1, 48, 64, 0.0, &tall, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "INVALID_ARGUMENT"), "%s", err);   /* without a context: the status */
    /* A scheme without a residual is refused with the library's reason. */
    ck_assert_int_eq(qa_row_compute(NULL, &small, QJIT_SCHEME_W4A8_IS, 128, 0.1, 0, 0, 0.0, &r[0], err, sizeof err), -1);
}
END_TEST

/* w4ax and w4ax-s: without INT8 blocks each is w4a4 to the bit; with them
 * the INT8 part takes the outlier channels and most of the error goes (the
 * generated tokens' outliers are 20-50x); more INT8 blocks never add
 * error. w4ax-s's one scale costs little against w4ax's two: the INT8 part
 * keeps the INT4 part's step unless a token's outliers pass 127 of them
 * (18x its largest INT4 value), and then only that token's INT4 part is
 * coarser (1.00 .. 1.02x w4ax's error on this layer). */
START_TEST(rows_w4ax)
{
    char err[512] = "";
    qa_row a4, x[2][3];
    ck_assert_msg(qa_row_compute(NULL, &small, QJIT_SCHEME_W4A4, 0, 0, 0, 0, 0.0, &a4, err, sizeof err) == 0, "%s",
                  err);
    const double shares[] = {0.0, 0.05, 0.5};
    const qjit_scheme schemes[] = {QJIT_SCHEME_W4AX, QJIT_SCHEME_W4AX_S};
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < 3; i++) {
            ck_assert_msg(qa_row_compute(NULL, &small, schemes[s], 0, 0, 0, 0, shares[i], &x[s][i], err, sizeof err) ==
                          0, "%s", err);
            ck_assert(x[s][i].a8 == shares[i]);
            ck_assert_int_eq(x[s][i].a8_channels, (int64_t)ceil(shares[i] * (double)(small.K / 128) - 1e-9) * 128);
        }
        ck_assert_msg(x[s][0].rel_error == a4.rel_error, "no INT8 blocks: %g, w4a4 %g", x[s][0].rel_error,
                      a4.rel_error);
        ck_assert_msg(x[s][1].rel_error < 0.75 * a4.rel_error, "5%% INT8: %g, w4a4 %g", x[s][1].rel_error,
                      a4.rel_error);
        ck_assert_msg(x[s][2].rel_error <= x[s][1].rel_error * 1.02, "50%% INT8: %g, 5%%: %g", x[s][2].rel_error,
                      x[s][1].rel_error);
        /* A budget it does not take (no residual) is refused with the reason. */
        qa_row no;
        ck_assert_int_eq(qa_row_compute(NULL, &small, schemes[s], 0, 0.1, 0, 0, 0.05, &no, err, sizeof err), -1);
    }
    for (int i = 1; i < 3; i++)
        ck_assert_msg(x[1][i].rel_error >= x[0][i].rel_error * 0.99 && x[1][i].rel_error < x[0][i].rel_error * 1.05,
                      "share %g: w4ax-s %g, w4ax %g", shares[i], x[1][i].rel_error, x[0][i].rel_error);
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("accuracy");
    TCase *args = tcase_create("args");
    tcase_add_test(args, defaults);
    tcase_add_test(args, each_option);
    tcase_add_test(args, help);
    tcase_add_test(args, unknown_and_missing);
    tcase_add_test(args, bad_numbers);
    tcase_add_test(args, bad_lists);
    tcase_set_timeout(args, 30);
    qt_add(s, args, 0);

    TCase *gen = tcase_create("generators");
    tcase_add_test(gen, generators_deterministic);
    tcase_add_test(gen, outlier_channels);
    tcase_add_test(gen, weight_statistics);
    tcase_add_test(gen, activation_statistics);
    tcase_set_timeout(gen, 60);
    qt_add(s, gen, 0);

    TCase *math = tcase_create("metrics");
    tcase_add_test(math, errors_hand_made);
    tcase_add_test(math, gemm_f64);
    tcase_add_test(math, plan);
    tcase_set_timeout(math, 30);
    qt_add(s, math, 0);

    TCase *rows = tcase_create("rows");
    tcase_add_checked_fixture(rows, small_setup, small_teardown);
    tcase_add_test(rows, layer_reference);
    tcase_add_test(rows, rows_small_layer);
    tcase_add_test(rows, rows_deterministic);
    tcase_add_test(rows, rows_with_a_residual);
    tcase_add_test(rows, rows_w4ax);
    tcase_set_timeout(rows, 60);
    qt_add(s, rows, 0);
    return s;
}
