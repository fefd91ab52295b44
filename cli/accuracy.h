/* accuracy.h -- `qjit quant-error`: how far each scheme's output is from the
 * exact product on a layer with the statistics of real LLM layers. Runs on
 * the CPU through the public API (qjit_quantize_weights, the reference
 * activation quantizer and GEMM, which compute bit for bit what the kernels
 * do); no GPU. Everything here is GPU-free and reached by the CPU tests
 * (tests/test_accuracy.c); quant_error.c prints and writes the results.
 *
 * The generated layer (seeded: the same seed gives the same bits, given the
 * same libm exp/log/cos/sqrt):
 *
 *   Weights W (N x K, FP32 holding FP16-representable values):
 *     W[n,k] = fp16(0.02 * r[n] * c[k] * t[n,k] / sqrt(5/3))
 *     t[n,k]  Student-t with 5 degrees of freedom (z / sqrt(chi2_5 / 5)):
 *             heavy tails, kurtosis 9, divided by its std sqrt(5/3) so the
 *             bulk has std 0.02 as LLM linear layers do;
 *     r[n]    row scales exp(0.25 z - 0.0625), lognormal with E[r^2] = 1: a
 *             spread of row norms (about 0.6x .. 1.7x);
 *     c[k]    1, except for max(1, K/512) outlier input channels (distinct
 *             columns drawn uniformly) with c = 3 + 3u: 3x .. 6x larger.
 *   Activations X (M x K, FP16):
 *     X[m,k] = fp16(a[m] * d[k] * z[m,k]), z standard normal;
 *     a[m]    token scales exp(0.5 z): rows of different magnitude;
 *     d[k]    1, except for max(1, K/512) outlier channels with d = 20 + 30u:
 *             20x .. 50x larger, the channel outliers SmoothQuant describes.
 *   (fp16(): the double rounded to FP32, then to FP16, nearest even; W
 *   holds that FP16 value in FP32. z: standard normal, u: uniform in
 *   [0, 1), from splitmix64 and Box-Muller, cli/random.c. Draw order: the
 *   outlier channels (an index, then its factor; a repeated index is drawn
 *   again), the row or token scales, then the elements row by row (for t:
 *   z, then the five normals of chi2_5). Weights use the stream seed ^
 *   QA_WEIGHT_STREAM, activations seed ^ QA_ACT_STREAM.)
 *
 * Reference: Y_ref = X W^T in double from the unquantized FP16 X and FP32 W.
 * Quantized: Xq, sx from qjit_reference_quantize_activations, W packed by
 * qjit_quantize_weights, Y (FP32) from qjit_reference_gemm.
 * Metrics: rel = ||Y - Y_ref||_F / ||Y_ref||_F and max = max|Y - Y_ref| /
 * max|Y_ref|; bits per weight = payload_bytes * 8 / (N K), scales and group
 * parameters included. The "activations only" row (INT8 activations,
 * unquantized weights, (Xq sx) W^T in double) is the floor every scheme sits on.
 *
 * Parsing is strict, as bench_args.c's: a bad number, an empty list item, an
 * unknown scheme or option, a missing value is an error with a sentence
 * naming the option and the text, and leaves the output untouched.
 *
 * Fallible calls return -1 (or a count >= 0) with the sentence in err (err
 * may be NULL, errlen 0). */
#ifndef QJIT_CLI_ACCURACY_H
#define QJIT_CLI_ACCURACY_H

#include <stddef.h>
#include <stdint.h>
#include "qjit.h"

#define QA_MAX_SCHEMES 7
#define QA_MAX_GROUPS 16
#define QA_MAX_SPARSITY 8
#define QA_MAX_JOBS (QA_MAX_SCHEMES * QA_MAX_GROUPS * QA_MAX_SPARSITY)
#define QA_CALIB_ROWS 128               /* calibration tokens of the residual's block choice */
#define QA_MAX_DIM (1LL << 20)          /* --n, --k at most */
#define QA_MAX_M (1LL << 16)            /* --m at most */
#define QA_MAX_GROUP (1 << 20)          /* a --groups item at most */
#define QA_DEFAULT_SEED 12345u
#define QA_WEIGHT_STREAM 0x5745494748545321ull
#define QA_ACT_STREAM 0x41435449564154ull
#define QA_CALIB_STREAM 0x43414c4942ull

typedef struct qa_args {
    long long n, k, m;
    uint64_t seed;
    qjit_scheme schemes[QA_MAX_SCHEMES];   /* in the order given, no repeats */
    int nschemes;
    int groups[QA_MAX_GROUPS];             /* in the order given, no repeats; 0 = per channel */
    int ngroups;
    double sparsity[QA_MAX_SPARSITY];      /* budgets, in the order given, no repeats; 0 = dense */
    int nsparsity;
    int rblock_n, rblock_k;                /* --rblock: the residual's blocks; 0: the library's default */
    double a8[QA_MAX_SPARSITY];            /* w4ax's INT8 shares (--a8), in the order given, no repeats */
    int na8;
    const char *csv_path, *json_path;      /* NULL: not written; pointers into argv */
    int help;                              /* --help / -h seen: print usage, compute nothing */
} qa_args;

/* Defaults: N = K = 4096, M = 64, seed QA_DEFAULT_SEED, every scheme
 * (w4a8-lqq, w4a8-qoq, w4a8-is, w8a8), groups 0, 64, 128, sparsity 0. */
void qa_args_init(qa_args *a);
/* Parses the options of `qjit quant-error`; argv[0] (the command) is
 * skipped. 0: *out holds the defaults overridden by the options (--help
 * stops at once with out->help set). -1: *out is unchanged. */
int qa_parse_args(int argc, char **argv, qa_args *out, char *err, size_t errlen);

/* The outlier channel count of a K-wide layer: max(1, K / 512). */
int qa_outlier_count(int64_t K);
/* 1 for the schemes whose activations come in an INT8 and an INT4 part
 * (w4ax, w4ax-s: an INT8 share, a8_fraction, chosen on calibration rows). */
int qa_two_part(qjit_scheme s);
/* The generators above. outliers (may be NULL) receives the
 * qa_outlier_count(K) outlier channels in the order drawn. */
void qa_gen_weights(float *W, int64_t N, int64_t K, uint64_t seed, int64_t *outliers);
void qa_gen_activations(uint16_t *X, int64_t M, int64_t K, uint64_t seed, int64_t *outliers);
/* Calibration tokens: the activations' outlier channels and statistics,
 * other tokens (their own stream). */
void qa_gen_calibration(uint16_t *X, int64_t M, int64_t K, uint64_t seed);

/* Y[m,n] = sum_k X[m,k] W[n,k] in double (M x N, row-major), on several
 * threads; each output's sum runs in one fixed order, so the bits do not
 * depend on the thread count. -1 only when threads cannot be started. */
int qa_gemm_f64(const double *X, int64_t M, const float *W, int64_t N, int64_t K, double *Y);
/* rel = ||y - ref||_F / ||ref||_F, max_rel = max|y - ref| / max|ref| over
 * count values. A zero reference gives 0 where y is zero too, else infinity. */
void qa_errors(const double *y, const double *ref, size_t count, double *rel, double *max_rel);

/* One generated layer with what every row shares. */
typedef struct qa_layer {
    int64_t N, K, M;
    uint64_t seed;
    float *W;                    /* N x K */
    uint16_t *X;                 /* M x K, FP16 bits */
    int8_t *Xq;                  /* M x K */
    float *sx;                   /* M */
    double *Yref;                /* M x N */
    double *Yact;                /* M x N: the activations-only product (Xq sx) W^T, in double */
    int8_t *Xq4;                 /* M x K: the same tokens in INT4 (schemes with 4-bit activations) */
    float *sx4;                  /* M */
    double *Yact4;               /* M x N: (Xq4 sx4) W^T */
    int64_t *w_outliers, *x_outliers;   /* qa_outlier_count(K) each */
    uint16_t *calib;             /* QA_CALIB_ROWS x K calibration tokens, FP16 bits */
} qa_layer;

/* Generates W and X from seed and computes Xq, sx and Y_ref. ctx may be NULL
 * (library messages are then only status names). On failure L holds nothing
 * to free. */
int qa_layer_make(qa_layer *L, int64_t N, int64_t K, int64_t M, uint64_t seed, qjit_context *ctx, char *err,
                  size_t errlen);
void qa_layer_free(qa_layer *L);

/* A result row. scheme 0 is the "activations only" floor. */
typedef struct qa_row {
    qjit_scheme scheme;
    int group;
    double rel_error;            /* ||Y - Y_ref||_F / ||Y_ref||_F */
    double max_error;            /* max|Y - Y_ref| / max|Y_ref| */
    double weight_error;         /* ||Y - Y_act||_F / ||Y_ref||_F: the weights' share (0 for the floor) */
    int act_bits;                /* the activations' bits (8, or 4): which floor it sits on */
    double bits_per_weight;      /* payload_bytes * 8 / (N K); 0 for the floor */
    size_t payload_bytes;        /* qjit_weights_info.payload_bytes; 0 for the floor */
    double alpha;                /* w4a8-is's amplifier; 0 otherwise */
    double sparsity;             /* the budget asked for (0: dense) */
    double density;              /* blocks carrying a residual / all blocks */
    double a8;                   /* w4ax: the INT8 share asked for (0 otherwise) */
    int64_t a8_channels;         /* w4ax: channels kept in INT8 */
} qa_row;

/* Quantizes L's weights with (scheme, group) and, with a budget, a sparse
 * residual of block_n x block_k blocks (0: the library's default) chosen on
 * L's calibration tokens; runs the reference GEMM on L's quantized
 * activations and measures the result against L->Yref (and L->Yact).
 * Failures (the library's refusal, out of memory) give -1 with the message. */
int qa_row_compute(qjit_context *ctx, const qa_layer *L, qjit_scheme scheme, int group, double sparsity,
                   int block_n, int block_k, double a8, qa_row *out, char *err, size_t errlen);
/* The "activations only" row of `bits`-bit activations (8 or 4): (Xq sx) W^T
 * in double against Y_ref. */
int qa_row_floor(const qa_layer *L, int bits, qa_row *out, char *err, size_t errlen);

/* What runs: each scheme of args with each group it takes and each budget
 * (a budget > 0 where the scheme takes a residual at that group), in the
 * order given; a group or budget a scheme does not take (w8a8 with g > 0, w4a8-is with g = 0,
 * a group that is no multiple of 64) is a skip with the library's reason.
 * A (scheme, group) the scheme takes but the shape N x K cannot (the group
 * does not divide K, ...) fails the plan with the library's message. */
typedef struct qa_job {
    qjit_scheme scheme;
    int group;
    double sparsity;
    double a8;                   /* w4ax: the INT8 share */
} qa_job;
typedef struct qa_skip {
    qjit_scheme scheme;
    int group;
    double sparsity;
    char reason[256];
} qa_skip;
typedef struct qa_plan {
    qa_job jobs[QA_MAX_JOBS];
    int njobs;
    qa_skip skips[QA_MAX_JOBS];
    int nskips;
} qa_plan;
int qa_make_plan(qjit_context *ctx, const qa_args *a, qa_plan *plan, char *err, size_t errlen);

/* "per-ch" for 0, else the number, into buf. */
const char *qa_group_text(int group, char *buf, size_t size);

#endif
