/* test_bench.c -- the GPU-free half of `qjit bench` (cli/bench_args.c): the
 * defaults, every option, every class of bad input (refused with a message
 * naming the option and the text, the output left as it was), shapes files,
 * and the arithmetic behind the printed results. */
#define _GNU_SOURCE
#include "harness.h"
#include "bench_args.h"
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* qb_parse_bench_args for the harness's parser checks (qt_parse_ok,
 * qt_parse_bad), which see its output only as bytes. */
static int parse(int argc, char **argv, void *out, char *err, size_t errlen)
{
    return qb_parse_bench_args(argc, argv, out, err, errlen);
}
static const qt_parser parser = {parse, sizeof(qb_bench_args)};

/* Expects the options (after the command name) to be accepted into out. */
#define PARSE_OK(out, ...) \
    qt_parse_ok(&parser, out, QT_ARGC("bench", __VA_ARGS__), QT_ARGV("bench", __VA_ARGS__))
/* Expects a refusal whose message contains both needles (NULL: no check). */
#define PARSE_BAD(n1, n2, ...) \
    qt_parse_bad(&parser, n1, n2, QT_ARGC("bench", __VA_ARGS__), QT_ARGV("bench", __VA_ARGS__))

static char *write_file(const char *dir, const char *name, const char *text)
{
    char *path = NULL;
    ck_assert_int_ge(asprintf(&path, "%s/%s", dir, name), 0);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

START_TEST(defaults)
{
    static const long long shapes[8][2] = {{12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008},
                                           {10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}};
    static const long long ms[10] = {1, 4, 16, 32, 64, 128, 256, 512, 1024, 4096};
    char *argv[] = {"bench"};
    qb_bench_args a;
    qt_parse_ok(&parser, &a, 1, argv);
    ck_assert_int_eq(a.nshapes, 8);
    for (int i = 0; i < 8; i++) {
        ck_assert_int_eq(a.shapes[i][0], shapes[i][0]);
        ck_assert_int_eq(a.shapes[i][1], shapes[i][1]);
    }
    ck_assert_int_eq(a.nms, 10);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(a.ms[i], ms[i]);
    ck_assert_int_eq(a.group, 128);
    ck_assert_int_eq(a.reps, 50);
    ck_assert_uint_eq(a.seed, 12345);
    ck_assert_int_eq(a.nvariants, 0);
    ck_assert_ptr_null(a.schemes);
    ck_assert_ptr_null(a.csv_path);
    ck_assert_ptr_null(a.json_path);
    ck_assert_int_eq(a.peers, 1);
    ck_assert_int_eq(a.help, 0);

    /* The init function gives the same. */
    qb_bench_args b;
    memset(&b, 0x5A, sizeof b);
    qb_bench_args_init(&b);
    ck_assert_int_eq(memcmp(&a, &b, sizeof a), 0);
}
END_TEST

START_TEST(each_option)
{
    qb_bench_args a;
    PARSE_OK(&a, "--shapes", "4096x11008,8192X1024, 64x64 ");
    ck_assert_int_eq(a.nshapes, 3);
    ck_assert_int_eq(a.shapes[0][0], 4096);
    ck_assert_int_eq(a.shapes[0][1], 11008);
    ck_assert_int_eq(a.shapes[1][0], 8192);
    ck_assert_int_eq(a.shapes[1][1], 1024);
    ck_assert_int_eq(a.shapes[2][0], 64);
    ck_assert_int_eq(a.shapes[2][1], 64);
    ck_assert_int_eq(a.nms, 10);                 /* the rest stays default */

    PARSE_OK(&a, "--shapes", "100x200\n300x400");
    ck_assert_int_eq(a.nshapes, 2);
    ck_assert_int_eq(a.shapes[1][0], 300);
    ck_assert_int_eq(a.shapes[1][1], 400);

    PARSE_OK(&a, "--m", "1, 8,2048,8");           /* duplicates are fine */
    ck_assert_int_eq(a.nms, 4);
    ck_assert_int_eq(a.ms[0], 1);
    ck_assert_int_eq(a.ms[1], 8);
    ck_assert_int_eq(a.ms[2], 2048);
    ck_assert_int_eq(a.ms[3], 8);
    ck_assert_int_eq(a.nshapes, 8);

    PARSE_OK(&a, "--group", "64");
    ck_assert_int_eq(a.group, 64);
    PARSE_OK(&a, "--group", "0");
    ck_assert_int_eq(a.group, 0);
    PARSE_OK(&a, "--reps", "5");
    ck_assert_int_eq(a.reps, 5);
    PARSE_OK(&a, "--reps", "1000");
    ck_assert_int_eq(a.reps, 1000);
    PARSE_OK(&a, "--seed", "42");
    ck_assert_uint_eq(a.seed, 42);
    PARSE_OK(&a, "--seed", "0x10");
    ck_assert_uint_eq(a.seed, 16);
    PARSE_OK(&a, "--seed", "18446744073709551615");
    ck_assert_uint_eq(a.seed, UINT64_MAX);
    PARSE_OK(&a, "--csv", "out.csv", "--json", "out.json");
    ck_assert_str_eq(a.csv_path, "out.csv");
    ck_assert_str_eq(a.json_path, "out.json");
    PARSE_OK(&a, "--no-peers");
    ck_assert_int_eq(a.peers, 0);
    PARSE_OK(&a, "--scheme", "lqq,w8a8");
    ck_assert_str_eq(a.schemes, "lqq,w8a8");     /* names are the library's to check */
    /* Budgets: the dense baseline first whether listed or not, then the
     * others in the order given. */
    PARSE_OK(&a, "--sparsity", "0.1,.05,0.2");
    ck_assert_int_eq(a.nsparsity, 4);
    ck_assert(a.sparsity[0] == 0 && a.sparsity[1] == 0.1 && a.sparsity[2] == 0.05 && a.sparsity[3] == 0.2);
    PARSE_OK(&a, "--sparsity", "0,0.05,1");
    ck_assert_int_eq(a.nsparsity, 3);
    ck_assert(a.sparsity[0] == 0 && a.sparsity[1] == 0.05 && a.sparsity[2] == 1);
    PARSE_OK(&a, "--sparsity", "0");
    ck_assert_int_eq(a.nsparsity, 1);
    PARSE_BAD("--sparsity", "'1.5' is not a budget in [0, 1]", "--sparsity", "0.1,1.5");
    PARSE_BAD("--sparsity", "'-0.1' is not a budget", "--sparsity", "-0.1");
    PARSE_BAD("--sparsity", "given twice", "--sparsity", "0.1,.1");
    PARSE_BAD("--sparsity", "besides 0", "--sparsity", "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8");
    /* w4ax's INT8 share: 0.1 unless given, a share in [0, 1]. */
    PARSE_OK(&a, "--m", "16");
    ck_assert(a.a8 == 0.1);
    PARSE_OK(&a, "--a8", "0.25");
    ck_assert(a.a8 == 0.25);
    PARSE_OK(&a, "--a8", "0");
    ck_assert(a.a8 == 0);
    PARSE_BAD("--a8", "'1.5' is not a share in [0, 1]", "--a8", "1.5");
    PARSE_BAD("--a8", "'x' is not a share", "--a8", "x");
    PARSE_BAD("--a8", "'0.1,0.2' is not a share", "--a8", "0.1,0.2");

    char *argv[] = {"bench", "--variant", "key-a", "--m", "16", "--variant", "key-b"};
    qt_parse_ok(&parser, &a, 7, argv);
    ck_assert_int_eq(a.nvariants, 2);
    ck_assert_ptr_eq(a.variants[0], argv[2]);    /* pointers into argv */
    ck_assert_ptr_eq(a.variants[1], argv[6]);
    ck_assert_int_eq(a.nms, 1);

    /* A later --shapes replaces an earlier one. */
    PARSE_OK(&a, "--shapes", "16x64", "--shapes", "32x128");
    ck_assert_int_eq(a.nshapes, 1);
    ck_assert_int_eq(a.shapes[0][0], 32);
}
END_TEST

START_TEST(layers)
{
    /* --layers: a model's step. Without shapes or M it is Llama-2-7B's four
     * linears at M = 1 .. 64; what is given is kept. */
    static const long long step[4][2] = {{12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008}};
    static const long long ms[7] = {1, 2, 4, 8, 16, 32, 64};
    qb_bench_args a;
    PARSE_OK(&a, "--m", "4");
    ck_assert_int_eq(a.layers, 0);
    ck_assert_int_eq(a.nshapes, 8);
    PARSE_OK(&a, "--layers", "32");
    ck_assert_int_eq(a.layers, 32);
    ck_assert_int_eq(a.nshapes, 4);
    ck_assert_int_eq(a.nms, 7);
    ck_assert_int_eq(memcmp(a.shapes, step, sizeof step), 0);
    ck_assert_int_eq(memcmp(a.ms, ms, sizeof ms), 0);
    PARSE_OK(&a, "--shapes", "8192x8192", "--layers", "80", "--m", "1,16", "--sparsity", "0");
    ck_assert_int_eq(a.layers, 80);
    ck_assert_int_eq(a.nshapes, 1);
    ck_assert_int_eq(a.shapes[0][0], 8192);
    ck_assert_int_eq(a.nms, 2);
    ck_assert_int_eq(a.ms[1], 16);
    PARSE_OK(&a, "--layers", "2", "--m", "4");
    ck_assert_int_eq(a.nshapes, 4);
    ck_assert_int_eq(a.nms, 1);
    PARSE_BAD("--layers", "'0' must be at least 1", "--layers", "0");
    /* --dtype: FP16 unless bf16 is asked for. */
    ck_assert_int_eq(a.bf16, 0);
    PARSE_OK(&a, "--dtype", "bf16");
    ck_assert_int_eq(a.bf16, 1);
    PARSE_OK(&a, "--dtype", "bf16", "--dtype", "f16");
    ck_assert_int_eq(a.bf16, 0);
    PARSE_BAD("--dtype", "'fp32' is not a dtype (f16 or bf16)", "--dtype", "fp32");
    PARSE_BAD("--layers", "'x'", "--layers", "x");
    PARSE_BAD("--layers", "'4097' is more than 4096 layers", "--layers", "4097");
    PARSE_OK(&a, "--layers", "4096");
    ck_assert_int_eq(a.layers, 4096);
    PARSE_OK(&a, "--layers", "4", "--variant", "k");
    ck_assert_int_eq(a.nvariants, 1);
    PARSE_BAD("--layers", "no second --variant", "--layers", "4", "--variant", "k", "--variant", "j");
    PARSE_BAD("--layers", "no --sparsity budget besides 0", "--sparsity", "0.1", "--layers", "4");
}
END_TEST

START_TEST(help)
{
    qb_bench_args a;
    PARSE_OK(&a, "--help");
    ck_assert_int_eq(a.help, 1);
    PARSE_OK(&a, "-h");
    ck_assert_int_eq(a.help, 1);
    /* Help stops parsing: what follows is not looked at. */
    PARSE_OK(&a, "--reps", "7", "--help", "--bogus", "--m", "0");
    ck_assert_int_eq(a.help, 1);
    ck_assert_int_eq(a.reps, 7);
    /* What comes before is. */
    PARSE_BAD("--bogus", NULL, "--bogus", "--help");
}
END_TEST

START_TEST(unknown_and_missing)
{
    PARSE_BAD("unknown option", "--bogus", "--bogus");
    PARSE_BAD("unknown option", "--shape", "--shape", "4096x4096");
    PARSE_BAD("unknown option", "4096x4096", "4096x4096");
    PARSE_BAD("unknown option", "--m=4", "--m=4");
    PARSE_BAD("unknown option", "'yes'", "--no-peers", "yes");     /* takes no value */
    static const char *valued[] = {"--shapes", "--shapes-file", "--m", "--group", "--variant",
                                   "--reps", "--seed", "--csv", "--json", "--scheme"};
    for (size_t i = 0; i < sizeof valued / sizeof *valued; i++) {
        char *argv[] = {"bench", "--reps", "9", (char *)valued[i]};
        qt_parse_bad(&parser, valued[i], "needs a value", 4, argv);
    }
    PARSE_BAD("--csv", "empty", "--csv", "");
    PARSE_BAD("--json", "empty", "--json", "");
    PARSE_BAD("--variant", "empty", "--variant", "");
    PARSE_BAD("--scheme", "empty", "--scheme", "");
}
END_TEST

START_TEST(bad_numbers)
{
    /* Not a number, or a number with junk after it. */
    PARSE_BAD("--group", "'abc'", "--group", "abc");
    PARSE_BAD("--group", "'128k'", "--group", "128k");
    PARSE_BAD("--group", "''", "--group", "");
    PARSE_BAD("--group", "'+128'", "--group", "+128");
    PARSE_BAD("--group", "' 128'", "--group", " 128");
    PARSE_BAD("--reps", "'abc'", "--reps", "abc");
    PARSE_BAD("--reps", "'10x'", "--reps", "10x");
    PARSE_BAD("--reps", "'1e3'", "--reps", "1e3");
    PARSE_BAD("--seed", "'abc'", "--seed", "abc");
    PARSE_BAD("--seed", "'12z'", "--seed", "12z");
    PARSE_BAD("--seed", "'-1'", "--seed", "-1");
    PARSE_BAD("--seed", "'0x'", "--seed", "0x");
    PARSE_BAD("--seed", "''", "--seed", "");
    PARSE_BAD("--m", "'x'", "--m", "1,x");
    PARSE_BAD("--m", "'4q'", "--m", "4q,8");
    PARSE_BAD("--m", "'1.5'", "--m", "1.5");
    /* Out of range. */
    PARSE_BAD("--m", "99999999999999999999", "--m", "99999999999999999999");
    PARSE_BAD("--seed", "99999999999999999999999", "--seed", "99999999999999999999999");
    PARSE_BAD("--reps", "99999999999", "--reps", "99999999999");
    PARSE_BAD("--group", "3000000000", "--group", "3000000000");
    /* Below the minimum. */
    PARSE_BAD("--reps", "'4'", "--reps", "4");
    PARSE_BAD("--reps", "'-1'", "--reps", "-1");
    PARSE_BAD("--group", "'-1'", "--group", "-1");
    PARSE_BAD("--m", "'0'", "--m", "0");
    PARSE_BAD("--m", "'-4'", "--m", "16,-4");
    PARSE_BAD("--m", "'0'", "--m", "1,0,4");
}
END_TEST

START_TEST(empty_items)
{
    PARSE_BAD("--m", "'1,,x'", "--m", "1,,x");
    PARSE_BAD("--m", "'1,,4'", "--m", "1,,4");
    PARSE_BAD("--m", "'4,'", "--m", "4,");
    PARSE_BAD("--m", "','", "--m", ",");
    PARSE_BAD("--m", "empty", "--m", "");
    PARSE_BAD("--m", "empty", "--m", "  ");
    PARSE_BAD("--shapes", "'4096x4096,,8x8'", "--shapes", "4096x4096,,8x8");
    PARSE_BAD("--shapes", "'4096x4096,'", "--shapes", "4096x4096,");
    PARSE_BAD("--shapes", "empty", "--shapes", "");
}
END_TEST

START_TEST(bad_shapes)
{
    static const char *bad[] = {"4096x", "x4096", "4096", "4096x0", "0x4096", "-4096x4096", "4096x-4096",
                                "+4096x4096", "4096*4096", "4096x4096x2", "abc", "4096 x 4096", "4096x4096q",
                                "4096xx4096", "0x10x64", "4096.5x64"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char list[128], quoted[64];
        snprintf(list, sizeof list, "64x64,%s", bad[i]);
        snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
        char *argv[] = {"bench", "--shapes", list};
        qt_parse_bad(&parser, "--shapes", quoted, 3, argv);
    }
    PARSE_BAD("--shapes", "'4096x'", "--shapes", "4096x");
    PARSE_BAD("--shapes", "'4096x'", "--shapes", "4096x,abc");
    PARSE_BAD("--shapes", "out of range", "--shapes", "99999999999999999999x64");
    PARSE_BAD("--shapes", "out of range", "--shapes", "64x99999999999999999999");

    /* Not the parser's business: odd but positive shapes pass. */
    qb_bench_args a;
    PARSE_OK(&a, "--shapes", "7x13");
    ck_assert_int_eq(a.shapes[0][0], 7);
    ck_assert_int_eq(a.shapes[0][1], 13);
}
END_TEST

START_TEST(too_many)
{
    char list[4096] = "";
    for (int i = 0; i < QB_MAX_SHAPES; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%dx64", i ? "," : "", 16 * (i + 1));
    char *ok[] = {"bench", "--shapes", list};
    qb_bench_args a;
    qt_parse_ok(&parser, &a, 3, ok);
    ck_assert_int_eq(a.nshapes, QB_MAX_SHAPES);
    ck_assert_int_eq(a.shapes[QB_MAX_SHAPES - 1][0], 16 * QB_MAX_SHAPES);
    strcat(list, ",16x16");
    char *bad[] = {"bench", "--shapes", list};
    qt_parse_bad(&parser, "--shapes", "'16x16'", 3, bad);

    char ms[1024] = "";
    for (int i = 0; i < QB_MAX_MS; i++)
        snprintf(ms + strlen(ms), sizeof ms - strlen(ms), "%s%d", i ? "," : "", i + 1);
    char *mok[] = {"bench", "--m", ms};
    qt_parse_ok(&parser, &a, 3, mok);
    ck_assert_int_eq(a.nms, QB_MAX_MS);
    ck_assert_int_eq(a.ms[QB_MAX_MS - 1], QB_MAX_MS);
    strcat(ms, ",777");
    char *mbad[] = {"bench", "--m", ms};
    qt_parse_bad(&parser, "--m", "'777'", 3, mbad);

    char *vok[2 * QB_MAX_VARIANTS + 3];
    int n = 0;
    vok[n++] = "bench";
    for (int i = 0; i < QB_MAX_VARIANTS; i++) {
        vok[n++] = "--variant";
        vok[n++] = "k";
    }
    qt_parse_ok(&parser, &a, n, vok);
    ck_assert_int_eq(a.nvariants, QB_MAX_VARIANTS);
    vok[n++] = "--variant";
    vok[n++] = "ninth";
    qt_parse_bad(&parser, "--variant", "'ninth'", n, vok);
}
END_TEST

START_TEST(shapes_file)
{
    char *dir = qt_tempdir("bench");
    char *good = write_file(dir, "good.txt",
                            "# Llama-ish\n"
                            "\n"
                            "4096x4096\n"
                            "  8192X1024 , 512x256   # two on a line\n"
                            "\t\r\n"
                            "   # only a comment\n"
                            "11008x4096\r\n");
    long long s[QB_MAX_SHAPES][2];
    char err[1024] = "";
    int n = qb_read_shapes_file(good, s, QB_MAX_SHAPES, err, sizeof err);
    ck_assert_msg(n == 4, "read %d shapes: %s", n, err);
    ck_assert_int_eq(s[0][0], 4096);
    ck_assert_int_eq(s[0][1], 4096);
    ck_assert_int_eq(s[1][0], 8192);
    ck_assert_int_eq(s[1][1], 1024);
    ck_assert_int_eq(s[2][0], 512);
    ck_assert_int_eq(s[2][1], 256);
    ck_assert_int_eq(s[3][0], 11008);
    ck_assert_int_eq(s[3][1], 4096);

    /* Through the options: replaces the default shapes. */
    qb_bench_args a;
    char *argv[] = {"bench", "--shapes-file", good};
    qt_parse_ok(&parser, &a, 3, argv);
    ck_assert_int_eq(a.nshapes, 4);
    ck_assert_int_eq(a.shapes[3][0], 11008);

    /* A bad line: the file, the line number and the text. */
    char *bad = write_file(dir, "bad.txt", "# header\n4096x4096\n\n4096x\n8192x8192\n");
    err[0] = '\0';
    ck_assert_int_eq(qb_read_shapes_file(bad, s, QB_MAX_SHAPES, err, sizeof err), -1);
    ck_assert_msg(strstr(err, bad) && strstr(err, ":4:") && strstr(err, "'4096x'"), "message: %s", err);
    char *argv_bad[] = {"bench", "--shapes-file", bad};
    qt_parse_bad(&parser, "--shapes-file", ":4:", 3, argv_bad);

    char *empty_item = write_file(dir, "empty-item.txt", "64x64\n64x64,,128x128\n");
    char *argv_ei[] = {"bench", "--shapes-file", empty_item};
    qt_parse_bad(&parser, ":2:", "empty", 3, argv_ei);

    /* No shapes at all is not a benchmark. */
    char *none = write_file(dir, "none.txt", "# nothing\n\n");
    char *argv_none[] = {"bench", "--shapes-file", none};
    qt_parse_bad(&parser, none, "no shapes", 3, argv_none);

    /* Too many: the line where it overflowed. */
    char big[8192] = "";
    for (int i = 0; i <= QB_MAX_SHAPES; i++)
        snprintf(big + strlen(big), sizeof big - strlen(big), "%dx64\n", 16 * (i + 1));
    char *many = write_file(dir, "many.txt", big);
    char line[32];
    snprintf(line, sizeof line, ":%d:", QB_MAX_SHAPES + 1);
    char *argv_many[] = {"bench", "--shapes-file", many};
    qt_parse_bad(&parser, line, "more than", 3, argv_many);

    /* Missing, and unreadable as a file. */
    char *missing = NULL;
    ck_assert_int_ge(asprintf(&missing, "%s/no-such-file.txt", dir), 0);
    char *argv_missing[] = {"bench", "--shapes-file", missing};
    qt_parse_bad(&parser, "--shapes-file", missing, 3, argv_missing);
    char *argv_dir[] = {"bench", "--shapes-file", dir};
    qt_parse_bad(&parser, "--shapes-file", dir, 3, argv_dir);

    free(good); free(bad); free(empty_item); free(none); free(many); free(missing);
    qt_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(list_functions)
{
    long long s[4][2], v[4];
    char err[256] = "";
    ck_assert_int_eq(qb_parse_shapes("1x2,3X4", s, 4, err, sizeof err), 2);
    ck_assert_int_eq(s[1][0], 3);
    ck_assert_int_eq(s[1][1], 4);
    ck_assert_int_eq(qb_parse_shapes("1x2,3x4,5x6", s, 2, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "more than 2"));
    ck_assert_int_eq(qb_parse_shapes("1x2,oops", s, 4, NULL, 0), -1);  /* no message buffer: still refused */

    ck_assert_int_eq(qb_parse_ints("-3,0,7", -3, v, 4, err, sizeof err), 3);
    ck_assert_int_eq(v[0], -3);
    ck_assert_int_eq(v[2], 7);
    ck_assert_int_eq(qb_parse_ints("-4", -3, v, 4, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "'-4'"));
    ck_assert_int_eq(qb_parse_ints("1,2,3,4,5", 1, v, 4, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "'5'"));
}
END_TEST

START_TEST(geomean)
{
    ck_assert_double_eq_tol(qb_geomean((double[]){2, 8}, 2), 4.0, 1e-12);
    ck_assert_double_eq_tol(qb_geomean((double[]){2, 0, 8}, 3), 4.0, 1e-12);   /* zeros: did not run */
    ck_assert_double_eq_tol(qb_geomean((double[]){2, -1, 8}, 3), 4.0, 1e-12);
    ck_assert_double_eq_tol(qb_geomean((double[]){3}, 1), 3.0, 1e-12);
    ck_assert_double_eq_tol(qb_geomean((double[]){1, 10, 100}, 3), 10.0, 1e-12);
    ck_assert_double_eq(qb_geomean(NULL, 0), 0.0);
    ck_assert_double_eq(qb_geomean((double[]){0, 0}, 2), 0.0);
}
END_TEST

START_TEST(best_peer)
{
    ck_assert_double_eq(qb_best_peer((double[]){0, 5, 3}, 3), 3.0);
    ck_assert_double_eq(qb_best_peer((double[]){7, 5, 9}, 3), 5.0);
    ck_assert_double_eq(qb_best_peer((double[]){-1, 2, 0}, 3), 2.0);
    ck_assert_double_eq(qb_best_peer((double[]){0, 0, 0}, 3), 0.0);
    ck_assert_double_eq(qb_best_peer((double[]){4, 1}, 1), 4.0);               /* only n entries */
    ck_assert_double_eq(qb_best_peer(NULL, 0), 0.0);
}
END_TEST

START_TEST(floor_and_tops)
{
    /* 8 MiB of weights at 3000 GB/s: 2.796 µs. */
    ck_assert_double_eq_tol(qb_floor_us(8388608, 3000), 2.796, 1e-3);
    ck_assert_double_eq_tol(qb_floor_us(3e9, 3000), 1000.0, 1e-9);      /* 1 ms */
    ck_assert_double_eq(qb_floor_us(8388608, 0), 0.0);
    ck_assert_double_eq(qb_floor_us(8388608, -5), 0.0);

    /* 2*M*N*K operations per µs, in tera-operations per second. */
    ck_assert_double_eq_tol(qb_tops(1, 4096, 4096, 10), 3.3554432, 1e-9);
    ck_assert_double_eq_tol(qb_tops(4096, 4096, 4096, 1000), 137.438953472, 1e-9);
    ck_assert_double_eq_tol(qb_tops(1, 1000, 1000, 2), 1.0, 1e-12);     /* 2e6 ops in 2 µs */
    ck_assert_double_eq(qb_tops(16, 4096, 4096, 0), 0.0);
    ck_assert_double_eq(qb_tops(16, 4096, 4096, -1), 0.0);
}
END_TEST


/* cli_fill_normal: the same values whatever the CPUs (each chunk of 65536
 * its own stream of the seed, as a chunk made alone), another seed others,
 * and normals (mean 0, deviation 1). */
START_TEST(normals_filled_on_every_cpu)
{
    const size_t n = 3 * 65536 + 123;
    float *a = qt_xmalloc(n * sizeof *a), *b = qt_xmalloc(n * sizeof *b);
    cli_fill_normal(a, n, 7, 1.0f);
    cli_fill_normal(b, n, 7, 1.0f);
    ck_assert(memcmp(a, b, n * sizeof *a) == 0);
    for (size_t c = 0; c < 4; c++) {
        uint64_t state = 7 ^ ((uint64_t)c * 0xD1B54A32D192ED03ull);
        cli_random(&state);
        for (size_t i = c * 65536; i < n && i < (c + 1) * 65536; i++)
            ck_assert_msg(a[i] == cli_normal(&state), "value %zu", i);
    }
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) {
        sum += a[i];
        sq += (double)a[i] * a[i];
    }
    const double mean = sum / (double)n, dev = sqrt(sq / (double)n - mean * mean);
    ck_assert_msg(fabs(mean) < 0.01 && fabs(dev - 1) < 0.01, "mean %g, deviation %g", mean, dev);
    cli_fill_normal(b, n, 8, 2.0f);
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
        same += a[i] * 2.0f == b[i];
    ck_assert_uint_lt(same, 10);
    free(a);
    free(b);
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("bench");
    TCase *args = tcase_create("args");
    tcase_add_test(args, defaults);
    tcase_add_test(args, each_option);
    tcase_add_test(args, layers);
    tcase_add_test(args, help);
    tcase_add_test(args, unknown_and_missing);
    tcase_add_test(args, bad_numbers);
    tcase_add_test(args, empty_items);
    tcase_add_test(args, bad_shapes);
    tcase_add_test(args, too_many);
    tcase_add_test(args, shapes_file);
    tcase_add_test(args, list_functions);
    tcase_set_timeout(args, 30);
    qt_add(s, args, 0);

    TCase *math = tcase_create("math");
    tcase_add_test(math, geomean);
    tcase_add_test(math, best_peer);
    tcase_add_test(math, floor_and_tops);
    tcase_add_test(math, normals_filled_on_every_cpu);
    tcase_set_timeout(math, 30);
    qt_add(s, math, 0);
    return s;
}
