/* bench_args.h -- the GPU-free half of `qjit bench`: its options and the
 * arithmetic behind the printed results, kept apart from bench.c so the CPU
 * tests (tests/test_bench.c) can reach them without a driver.
 *
 * Parsing is strict: a bad number, an empty list item, a shape that is not
 * NxK with positive integers, a missing value or an unknown option is an
 * error with a sentence naming the option and the offending text, and leaves
 * the output untouched. Whether a shape is a valid layer (alignment, group)
 * is the library's call, not the parser's.
 *
 * Every fallible call returns -1 on failure with the sentence in err (err may
 * be NULL, errlen 0). */
#ifndef QJIT_CLI_BENCH_ARGS_H
#define QJIT_CLI_BENCH_ARGS_H

#include <stddef.h>
#include <stdint.h>

#define QB_MAX_SHAPES 64
#define QB_MAX_MS 32
#define QB_MAX_VARIANTS 8
#define QB_MAX_BUDGETS 8
#define QB_MAX_LAYERS 4096

typedef struct qb_bench_args {
    long long shapes[QB_MAX_SHAPES][2];     /* N, K */
    int nshapes;
    long long ms[QB_MAX_MS];
    int nms;
    int group;
    const char *variants[QB_MAX_VARIANTS];  /* pointers into argv */
    int nvariants;
    int reps;
    uint64_t seed;
    const char *schemes;                    /* --scheme: comma-separated names or "all" (checked by
                                               the caller against the library); NULL: w4a8-lqq */
    const char *csv_path, *json_path;       /* NULL: not written */
    double sparsity[QB_MAX_BUDGETS];        /* --sparsity: budgets, 0 (the dense baseline) first */
    int nsparsity;
    double a8;                              /* --a8: w4ax's INT8 share of its channels (default 0.1) */
    int peers;                              /* 0 after --no-peers */
    int layers;                             /* --layers L: a model's step, the shapes repeated over L
                                               layers (0: one layer per shape, each call on its own) */
    int shapes_given, ms_given;
    int bf16;                               /* --dtype bf16: BF16 tokens and outputs (else FP16) */             /* --shapes / --shapes-file, --m were given */
    int help;                               /* --help / -h seen: print usage, run nothing */
} qb_bench_args;

/* Fills a with the defaults: the eight Llama-2-7B/70B shapes, M = 1 .. 4096,
 * group 128, dense weights (budget 0) only, 50 repetitions, seed 12345,
 * peers on. */
void qb_bench_args_init(qb_bench_args *a);

/* Parses the options of `qjit bench`; argv[0] is the command name and is
 * skipped. With --layers and no shapes or M given, the step is Llama-2-7B's
 * (its four linears: 12288x4096, 4096x4096, 22016x4096, 4096x11008) at
 * M = 1, 2, 4, 8, 16, 32, 64; --layers takes at most one --variant and no
 * budget besides 0. On success (0) *out holds the defaults overridden by the options;
 * --help stops parsing at once with out->help set. On failure (-1) *out is
 * unchanged. */
int qb_parse_bench_args(int argc, char **argv, qb_bench_args *out, char *err, size_t errlen);

/* "NxK" items (x or X) separated by commas or newlines, spaces around items
 * ignored. Returns the count (at least 1), or -1. These three may have
 * written part of the array when they fail; qb_parse_bench_args does not. */
int qb_parse_shapes(const char *text, long long (*shapes)[2], int max, char *err, size_t errlen);
/* A file of shapes: comma-separated NxK items, one or more per line; '#'
 * starts a comment; blank lines are skipped. Errors name the file and line.
 * Returns the count (at least 1), or -1. */
int qb_read_shapes_file(const char *path, long long (*shapes)[2], int max, char *err, size_t errlen);
/* Comma-separated decimal integers, each >= min. Returns the count (at least
 * 1), or -1. */
int qb_parse_ints(const char *text, long long min, long long *out, int max, char *err, size_t errlen);

/* Geometric mean of the positive entries; 0 if there are none (points that
 * did not run are stored as 0 and must not drag the mean to 0). */
double qb_geomean(const double *v, int n);
/* The fastest peer: the smallest positive time; 0 if none ran. */
double qb_best_peer(const double *peer_us, int n);
/* The 4-bit floor in µs: the weight bytes over the measured copy bandwidth
 * (GB/s, read plus written); 0 if the bandwidth is unknown (<= 0). */
double qb_floor_us(double weight_bytes, double copy_gbs);
/* Tera-operations per second of an M x N x K GEMM taking us µs; 0 if us <= 0. */
double qb_tops(double M, double N, double K, double us);

#endif
