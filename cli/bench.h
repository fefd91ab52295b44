/* bench.h -- the GPU half of `qjit bench` shared by its two files: bench.c
 * (one layer per shape, each call timed on its own) and bench_stack.c (a
 * model's step: a shape list repeated over L layers, in one CUDA graph and
 * eagerly). The GPU-free half (options, result arithmetic) is bench_args.h. */
#ifndef QJIT_CLI_BENCH_H
#define QJIT_CLI_BENCH_H

#include "bench_args.h"
#include "blas_peer.h"
#include "libcuda.h"

#define NPEERS 3

typedef struct bench {
    qjit_context *ctx;
    /* Peer times per (shape, M), measured once and shared by every scheme. */
    double (*peer_cache)[QB_MAX_MS][NPEERS];
    int (*peer_done)[QB_MAX_MS];
    double int8_peak_tops;        /* cuBLAS INT8 at 8192^3: a whole GEMM's ceiling (0: not measured) */
    double wgmma_peak_tops;       /* a bare wgmma loop (bench_peak.c): the tensor cores' own (0: not measured) */
    cli_cuda *d;                  /* the GPU, as the command drives it */
    qb_blas *blas;
    double copy_gbs;              /* measured device copy bandwidth, GB/s (read + write) */
    CUdeviceptr flush;            /* L2-sized scratch, rewritten before each timed call */
    size_t flush_bytes;
    CUevent e0, e1;
    int reps;
    uint64_t seed;
    double a8;                    /* the INT8 share of w4ax, w4ax-s (--a8) */
    qjit_dtype dtype;             /* the layers' tokens and outputs: QJIT_DTYPE_F16 or _BF16 (--dtype) */
} bench;

/* qsort's comparison of floats. */
int bench_cmp_float(const void *a, const void *b);
/* Times `reps` calls of fn on the legacy stream with the L2 flushed before
 * each (three untimed calls first); median in µs, -1 if a call fails. */
typedef int (*bench_call_fn)(void *ud);
double bench_time_calls(bench *b, bench_call_fn fn, void *ud);
/* Fills n bytes of device memory with valid random values of a peer's
 * kind (qb_kind); 0 on success. */
int bench_fill_device(bench *b, CUdeviceptr dst, size_t n, int kind, uint64_t *seed);
/* The random weights of an N x K layer (every scheme quantizes the same
 * ones); NULL if out of memory. */
float *bench_layer_weights(bench *b, long long N, long long K);
/* Quantizes W (N x K, FP32) with `scheme` as the benchmark does (budget rho
 * and two-part layers' INT8 channels chosen on `calib`, QA_CALIB_ROWS FP16
 * rows, which may be NULL when neither applies). Returns the packed buffer
 * (malloc'ed, *bytes long) or NULL with the error printed. */
void *bench_quantize(bench *b, qjit_scheme scheme, const float *W, long long N, long long K, int group, double rho,
                     const uint16_t *calib, size_t *bytes);
/* A random token value (standard normal) as the bits of b->dtype. */
uint16_t bench_token(bench *b, uint64_t *seed);
/* Compares the GPU's INT32 accumulators with the CPU reference on up to
 * max_rows rows spread over M (first and last included), every plane of a
 * layer of `parts` activation parts. X: the M x K tokens (b->dtype) on the host,
 * dX the same on the device. Returns rows checked, or -1 on a mismatch or
 * failure (message printed). */
int bench_check_point(bench *b, qjit_linear *lin, const void *blob, size_t bytes, int parts, long long M, long long N,
                      long long K, const uint16_t *X, CUdeviceptr dX, int max_rows);

/* The INT8 tensor cores' peak in TOPS as a plain loop of m64n256k32 s8
 * wgmmas reaches it (operands in shared memory, accumulators in registers,
 * two warpgroups on every SM), compiled with NVRTC and timed like every
 * call (bench_time_calls). 0 with the reason in why (a phrase, "needs
 * sm_90a ...") on a GPU other than sm_90, or if the kernel fails to
 * compile, load or run; those failures are also printed. */
double bench_wgmma_peak(bench *b, char *why, size_t why_size);

/* `qjit bench --layers L`: the step of a model whose layers each hold the
 * shapes of a->shapes (own weights per layer), for every scheme and M, and
 * the cuBLAS peers in the same form. Returns the number of results found
 * wrong (0: all exact). */
int bench_stack(bench *b, const qb_bench_args *a, const qjit_scheme *schemes, int nschemes);

#endif
