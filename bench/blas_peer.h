/* blas_peer.h -- cuBLASLt peers for `qjit bench`: the same Y = X * W^T that a
 * qjit kernel computes, run by NVIDIA's library in the same process, on the
 * same GPU and stream, so the benchmark can print both side by side.
 *
 * cuBLASLt is loaded with dlopen (libcublasLt.so.13, .so.12, .so, or the path
 * in QJIT_CUBLASLT), every entry point through dlsym into a table inside the
 * qb_blas handle: nothing links against it, and where it is missing
 * qb_blas_open says so and the benchmark runs without peers.
 *
 * Shapes, in qjit's row-major terms: X is M x K (tokens), W is N x K (weight
 * rows), Y is M x N. All buffers are device memory owned by the caller, who
 * sizes them with qb_in_bytes / qb_out_bytes. The CUDA context the buffers
 * belong to (qjit's primary context) must be current on the calling thread for
 * qb_blas_open, qb_gemm_prepare and qb_gemm_run.
 *
 * Every fallible call returns 0 on success, -1 on failure with a sentence in
 * err (err may be NULL, errlen 0), e.g.
 *   "cublasLtMatmul (cublas-fp8, M=16 N=4096 K=4096): CUBLAS_STATUS_NOT_SUPPORTED (15)".
 *
 * Thread safety: a qb_blas and its qb_gemm objects are used by one thread at
 * a time; qb_gemm_run only enqueues work on the given stream. */
#ifndef QJIT_BENCH_BLAS_PEER_H
#define QJIT_BENCH_BLAS_PEER_H

#include <cuda.h>
#include <stddef.h>

typedef struct qb_blas qb_blas; /* the loaded library and one cuBLASLt handle */
typedef struct qb_gemm qb_gemm; /* one prepared shape: descriptors and algorithm */

/* The peers. Settings per kind (cuBLASLt is column-major: it computes
 * Y^T = W * X^T with m = N, n = M, k = K, opA = T, opB = N, "TN"):
 *   QB_BF16: X, W bf16, Y bf16; CUBLAS_COMPUTE_32F, scale CUDA_R_32F.
 *   QB_INT8: X, W int8, Y int32; CUBLAS_COMPUTE_32I, scale CUDA_R_32I (the
 *            W8A8 path: raw INT32 accumulators, no epilogue).
 *   QB_FP8:  X, W e4m3, Y bf16; CUBLAS_COMPUTE_32F, scale CUDA_R_32F, no
 *            scale pointers (scales 1), fast accumulation off. Hopper or Ada. */
typedef enum { QB_BF16 = 0, QB_INT8 = 1, QB_FP8 = 2 } qb_kind;
#define QB_KIND_COUNT 3

/* "cublas-bf16", "cublas-int8", "cublas-fp8"; "cublas-?" for anything else. */
const char *qb_kind_name(qb_kind k);
/* Bytes per element of X and W (2, 1, 1), and of Y (2, 4, 2); 0 for a bad kind. */
size_t qb_in_bytes(qb_kind k);
size_t qb_out_bytes(qb_kind k);

/* Loads cuBLASLt and creates a handle. Fails with a message naming what was
 * tried when the library is missing, and with cublasLtCreate's status when no
 * GPU is usable. *out is NULL on failure. */
int qb_blas_open(qb_blas **out, char *err, size_t errlen);
/* Destroys the handle; accepts NULL. Destroy every qb_gemm made from b
 * first. The library itself stays loaded for the life of the process. */
void qb_blas_close(qb_blas *b);
/* "cuBLASLt 13.1.0 (libcublasLt.so.13)": for the benchmark's header. */
const char *qb_blas_describe(const qb_blas *b);

/* Checks a shape and its buffers against what cuBLASLt documents for the
 * kind, without touching the library or the GPU (qb_gemm_prepare calls it):
 * M, N, K > 0; non-null X, W, Y; INT8: N and K multiples of 4 and pointers
 * 4-byte aligned; FP8: K and N multiples of 16 and pointers 16-byte
 * aligned; BF16: pointers 2-byte aligned. M may be any positive count. */
int qb_gemm_check(qb_kind kind, int M, int N, int K, CUdeviceptr W, CUdeviceptr X, CUdeviceptr Y,
                  char *err, size_t errlen);

/* Prepares Y[M,N] = X[M,K] * W[N,K]^T for `kind` on the given buffers: builds
 * the descriptors and takes the first algorithm cublasLtMatmulAlgoGetHeuristic
 * returns for a workspace of at most workspace_bytes (workspace may be 0 with
 * workspace_bytes 0; 32 MiB, 256-byte aligned, is a good size on Hopper).
 * The buffers' actual alignment is passed to the heuristic. When it offers no
 * algorithm the message names the kind and shape (the benchmark prints
 * "n/a"). The buffers must stay allocated until qb_gemm_destroy. */
int qb_gemm_prepare(qb_blas *b, qb_kind kind, int M, int N, int K, CUdeviceptr W, CUdeviceptr X,
                    CUdeviceptr Y, CUdeviceptr workspace, size_t workspace_bytes, qb_gemm **out, char *err,
                    size_t errlen);
/* Enqueues one matmul on stream (NULL: the legacy default stream); alpha 1,
 * beta 0. Does not synchronize, allocate or print. */
int qb_gemm_run(qb_gemm *g, CUstream stream, char *err, size_t errlen);
/* Workspace bytes the chosen algorithm needs (at most workspace_bytes). */
size_t qb_gemm_workspace(const qb_gemm *g);
/* Releases the descriptors; accepts NULL. */
void qb_gemm_destroy(qb_gemm *g);

#endif
