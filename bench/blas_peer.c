/* blas_peer.c -- the cuBLASLt peers of `qjit bench` (see blas_peer.h).
 *
 * cuBLASLt is column-major and qjit row-major; a row-major M x K matrix is the
 * same memory as a column-major K x M one. So Y[M,N] = X[M,K] * W[N,K]^T is
 * asked of cuBLASLt as D = op(A) * op(B) with
 *   A = W: column-major K x N, ld = K, opA = T  (op(A) is N x K)
 *   B = X: column-major K x M, ld = K, opB = N  (op(B) is K x M)
 *   C = D = Y: column-major N x M, ld = N        (Y^T, i.e. Y row-major)
 * m = N, n = M, k = K: the "TN" form, the only one cuBLASLt's FP8 kernels
 * take on Hopper and Ada, and the one its IMMA (INT8) kernels take in the
 * regular (non-COL32) orders. */
#define _GNU_SOURCE
#include "blas_peer.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cublasLt.h declares one function without a prototype; its types and enum
 * values are what we want from it, so hush that one warning. */
#if defined(__GNUC__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wstrict-prototypes"
#endif
#include <cublasLt.h>
#if defined(__GNUC__)
#  pragma GCC diagnostic pop
#endif

/* X(member, return, params): one row per entry point, loaded by the name
 * "cublasLt" #member. Only cuBLASLt's types come from its header; nothing
 * links against the library. */
#define QB_LT_MAP(X)                                                                                    \
    X(Create, cublasStatus_t, (cublasLtHandle_t *))                                                     \
    X(Destroy, cublasStatus_t, (cublasLtHandle_t))                                                      \
    X(GetVersion, size_t, (void))                                                                       \
    X(MatmulDescCreate, cublasStatus_t, (cublasLtMatmulDesc_t *, cublasComputeType_t, cudaDataType_t))  \
    X(MatmulDescDestroy, cublasStatus_t, (cublasLtMatmulDesc_t))                                        \
    X(MatmulDescSetAttribute, cublasStatus_t,                                                           \
      (cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void *, size_t))                     \
    X(MatrixLayoutCreate, cublasStatus_t, (cublasLtMatrixLayout_t *, cudaDataType, uint64_t, uint64_t,  \
                                           int64_t))                                                    \
    X(MatrixLayoutDestroy, cublasStatus_t, (cublasLtMatrixLayout_t))                                    \
    X(MatmulPreferenceCreate, cublasStatus_t, (cublasLtMatmulPreference_t *))                           \
    X(MatmulPreferenceDestroy, cublasStatus_t, (cublasLtMatmulPreference_t))                            \
    X(MatmulPreferenceSetAttribute, cublasStatus_t,                                                     \
      (cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void *, size_t))         \
    X(MatmulAlgoGetHeuristic, cublasStatus_t,                                                           \
      (cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,          \
       cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,                 \
       cublasLtMatmulHeuristicResult_t *, int *))                                                       \
    X(Matmul, cublasStatus_t,                                                                           \
      (cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *, cublasLtMatrixLayout_t,      \
       const void *, cublasLtMatrixLayout_t, const void *, const void *, cublasLtMatrixLayout_t, void *, \
       cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t))

/* Each row's signature must be the header's: checked at compile time, in an
 * unevaluated context, so the check references no symbol. */
#define QB_LT_SIGNATURE_CHECK(member, ret, params)                                                      \
    _Static_assert(_Generic(&cublasLt##member, ret(*) params: 1, default: 0),                           \
                   "the table's signature of cublasLt" #member " differs from cublasLt.h");
QB_LT_MAP(QB_LT_SIGNATURE_CHECK)
#undef QB_LT_SIGNATURE_CHECK

struct qb_blas {
    void *lib;                 /* dlopen handle */
    cublasLtHandle_t handle;
    size_t version;            /* cublasLtGetVersion(): major*10000 + minor*100 + patch */
    char libname[256];         /* the name that loaded */
    char describe[320];
#define QB_LT_MEMBER(member, ret, params) ret(*member) params;
    QB_LT_MAP(QB_LT_MEMBER)
#undef QB_LT_MEMBER
};

struct qb_gemm {
    qb_blas *b;
    qb_kind kind;
    int M, N, K;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc; /* A = W, B = X, C = D = Y */
    cublasLtMatmulAlgo_t algo;
    size_t algo_workspace;
    CUdeviceptr W, X, Y, workspace;
    size_t workspace_bytes;
    union { float f; int32_t i; } alpha, beta; /* by the scale type */
};

/* The library's names, newest first; the toolkit's own folder last, for
 * machines whose loader path does not list it. */
static const char *const LIB_NAMES[] = {
    "libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so",
    "/usr/local/cuda/lib64/libcublasLt.so.13", "/usr/local/cuda/lib64/libcublasLt.so.12",
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static const char *status_name(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    }
    return "CUBLAS_STATUS_UNKNOWN";
}

const char *qb_kind_name(qb_kind k)
{
    switch (k) {
    case QB_BF16: return "cublas-bf16";
    case QB_INT8: return "cublas-int8";
    case QB_FP8: return "cublas-fp8";
    }
    return "cublas-?";
}

size_t qb_in_bytes(qb_kind k)
{
    switch (k) {
    case QB_BF16: return 2;
    case QB_INT8: return 1;
    case QB_FP8: return 1;
    }
    return 0;
}

size_t qb_out_bytes(qb_kind k)
{
    switch (k) {
    case QB_BF16: return 2;
    case QB_INT8: return 4;
    case QB_FP8: return 2;
    }
    return 0;
}

/* ---- the library ---- */

static int load_symbols(qb_blas *b, char *err, size_t errlen)
{
#define QB_LT_LOAD(member, ret, params)                                                                 \
    *(void **)&b->member = dlsym(b->lib, "cublasLt" #member);                                            \
    if (!b->member)                                                                                      \
        return fail(err, errlen, "%s lacks cublasLt" #member ": it is not a cuBLASLt of CUDA 12 or "     \
                    "newer", b->libname);
    QB_LT_MAP(QB_LT_LOAD)
#undef QB_LT_LOAD
    return 0;
}

/* dlopen: QJIT_CUBLASLT alone when set, else LIB_NAMES in order. */
static int load_library(qb_blas *b, char *err, size_t errlen)
{
    const char *forced = getenv("QJIT_CUBLASLT");
    if (forced && *forced) {
        b->lib = dlopen(forced, RTLD_NOW | RTLD_LOCAL);
        if (!b->lib) {
            const char *why = dlerror();
            return fail(err, errlen, "cuBLASLt cannot be loaded from QJIT_CUBLASLT: %s",
                        why ? why : forced);
        }
        snprintf(b->libname, sizeof b->libname, "%s", forced);
        return 0;
    }
    char first_error[512] = "";
    for (size_t i = 0; i < sizeof LIB_NAMES / sizeof LIB_NAMES[0]; i++) {
        b->lib = dlopen(LIB_NAMES[i], RTLD_NOW | RTLD_LOCAL);
        if (b->lib) {
            snprintf(b->libname, sizeof b->libname, "%s", LIB_NAMES[i]);
            return 0;
        }
        const char *why = dlerror();
        if (!first_error[0])
            snprintf(first_error, sizeof first_error, "%s", why ? why : "unknown dlopen error");
    }
    return fail(err, errlen, "cuBLASLt not found (%s; also .so.12, .so, /usr/local/cuda/lib64); set "
                "QJIT_CUBLASLT to its path", first_error);
}

int qb_blas_open(qb_blas **out, char *err, size_t errlen)
{
    if (!out)
        return fail(err, errlen, "qb_blas_open: out is NULL");
    *out = NULL;
    qb_blas *b = calloc(1, sizeof *b);
    if (!b)
        return fail(err, errlen, "qb_blas_open: out of host memory");
    if (load_library(b, err, errlen) || load_symbols(b, err, errlen))
        goto fail_close;
    b->version = b->GetVersion();
    cublasStatus_t st = b->Create(&b->handle);
    if (st != CUBLAS_STATUS_SUCCESS) {
        fail(err, errlen, "cublasLtCreate (%s): %s (%d): no usable GPU, or no CUDA context current on this "
             "thread", b->libname, status_name(st), (int)st);
        b->handle = NULL;
        goto fail_close;
    }
    snprintf(b->describe, sizeof b->describe, "cuBLASLt %zu.%zu.%zu (%s)", b->version / 10000,
             b->version / 100 % 100, b->version % 100, b->libname);
    *out = b;
    return 0;

fail_close:
    qb_blas_close(b);
    return -1;
}

void qb_blas_close(qb_blas *b)
{
    if (!b)
        return;
    if (b->handle)
        b->Destroy(b->handle);
    /* The library stays loaded (b->lib is not dlclose'd): it carries its own
     * static CUDA and C++ runtimes, whose exit handlers and thread state are
     * not made to outlive an unload; a later open finds it already mapped. */
    free(b);
}

const char *qb_blas_describe(const qb_blas *b)
{
    return b && b->describe[0] ? b->describe : "cuBLASLt (not loaded)";
}

/* ---- one shape ---- */

/* The largest power of two dividing p, at most 256: what the heuristic is
 * told it may assume (its default, 256, would let it pick kernels that need
 * more alignment than a buffer has). */
static uint32_t alignment_of(CUdeviceptr p)
{
    uint32_t a = 256;
    while (a > 1 && p % a != 0)
        a >>= 1;
    return a;
}

int qb_gemm_check(qb_kind kind, int M, int N, int K, CUdeviceptr W, CUdeviceptr X, CUdeviceptr Y,
                  char *err, size_t errlen)
{
    const char *name = qb_kind_name(kind);
    if (qb_in_bytes(kind) == 0)
        return fail(err, errlen, "cuBLAS peer: unknown kind %d", (int)kind);
    if (M <= 0 || N <= 0 || K <= 0)
        return fail(err, errlen, "%s (M=%d N=%d K=%d): M, N and K must be positive", name, M, N, K);
    if (!W || !X || !Y)
        return fail(err, errlen, "%s (M=%d N=%d K=%d): a NULL buffer (W %s, X %s, Y %s)", name, M, N, K,
                    W ? "set" : "NULL", X ? "set" : "NULL", Y ? "set" : "NULL");
    /* Alignment of the pointers and divisibility of the dimensions, from the
     * cuBLASLt documentation: IMMA in regular order wants 4-byte pointers and
     * m, k and the leading dimensions multiples of 4; FP8 wants every pointer
     * and leading dimension on 16 bytes (K for A and B, N bf16s for D) and,
     * in cuBLASLt's own log, m (our N) a multiple of 16, as PyTorch's
     * _scaled_mm also demands. M, cuBLASLt's n, is free in every kind. */
    unsigned need = 2, k_mult = 1, n_mult = 1;
    if (kind == QB_INT8)
        need = 4, k_mult = 4, n_mult = 4;
    else if (kind == QB_FP8)
        need = 16, k_mult = 16, n_mult = 16;
    if ((unsigned)K % k_mult != 0)
        return fail(err, errlen, "%s (M=%d N=%d K=%d): cuBLASLt needs K a multiple of %u for this kind", name,
                    M, N, K, k_mult);
    if ((unsigned)N % n_mult != 0)
        return fail(err, errlen, "%s (M=%d N=%d K=%d): cuBLASLt needs N a multiple of %u for this kind", name,
                    M, N, K, n_mult);
    const struct { const char *what; CUdeviceptr p; } bufs[] = {{"W", W}, {"X", X}, {"Y", Y}};
    for (size_t i = 0; i < 3; i++)
        if (bufs[i].p % need != 0)
            return fail(err, errlen, "%s (M=%d N=%d K=%d): %s (0x%llx) is not %u-byte aligned, which "
                        "cuBLASLt needs for this kind", name, M, N, K, bufs[i].what,
                        (unsigned long long)bufs[i].p, need);
    return 0;
}

/* Data, compute and scale types per kind (see blas_peer.h). */
static void kind_types(qb_kind kind, cudaDataType *in, cudaDataType *out, cublasComputeType_t *compute,
                       cudaDataType_t *scale)
{
    switch (kind) {
    case QB_INT8:
        *in = CUDA_R_8I, *out = CUDA_R_32I, *compute = CUBLAS_COMPUTE_32I, *scale = CUDA_R_32I;
        return;
    case QB_FP8:
        *in = CUDA_R_8F_E4M3, *out = CUDA_R_16BF, *compute = CUBLAS_COMPUTE_32F, *scale = CUDA_R_32F;
        return;
    case QB_BF16:
    default:
        *in = CUDA_R_16BF, *out = CUDA_R_16BF, *compute = CUBLAS_COMPUTE_32F, *scale = CUDA_R_32F;
        return;
    }
}

static int gemm_fail(const qb_gemm *g, const char *what, cublasStatus_t st, char *err, size_t errlen)
{
    return fail(err, errlen, "%s (%s, M=%d N=%d K=%d): %s (%d)", what, qb_kind_name(g->kind), g->M, g->N,
                g->K, status_name(st), (int)st);
}

/* Descriptor, layouts and the fixed attributes. */
static int build_descriptors(qb_gemm *g, char *err, size_t errlen)
{
    qb_blas *b = g->b;
    cudaDataType in, out;
    cublasComputeType_t compute;
    cudaDataType_t scale;
    kind_types(g->kind, &in, &out, &compute, &scale);
    const uint64_t M = (uint64_t)g->M, N = (uint64_t)g->N, K = (uint64_t)g->K;
    cublasStatus_t st;
    if ((st = b->MatmulDescCreate(&g->desc, compute, scale)) != CUBLAS_STATUS_SUCCESS) {
        g->desc = NULL;
        return gemm_fail(g, "cublasLtMatmulDescCreate", st, err, errlen);
    }
    const int32_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
    if ((st = b->MatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t)) ||
        (st = b->MatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n, sizeof op_n)))
        return gemm_fail(g, "cublasLtMatmulDescSetAttribute (TRANSA/TRANSB)", st, err, errlen);
    if (g->kind == QB_FP8) {
        /* Accurate accumulation (the default, stated): partial sums are
         * promoted to FP32 as they go, as in inference engines' FP8 GEMMs. */
        const int8_t fast_accum = 0;
        st = b->MatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accum, sizeof fast_accum);
        if (st)
            return gemm_fail(g, "cublasLtMatmulDescSetAttribute (FAST_ACCUM)", st, err, errlen);
    }
    if ((st = b->MatrixLayoutCreate(&g->la, in, K, N, (int64_t)K)) != CUBLAS_STATUS_SUCCESS) {
        g->la = NULL;
        return gemm_fail(g, "cublasLtMatrixLayoutCreate (A = W)", st, err, errlen);
    }
    if ((st = b->MatrixLayoutCreate(&g->lb, in, K, M, (int64_t)K)) != CUBLAS_STATUS_SUCCESS) {
        g->lb = NULL;
        return gemm_fail(g, "cublasLtMatrixLayoutCreate (B = X)", st, err, errlen);
    }
    if ((st = b->MatrixLayoutCreate(&g->lc, out, N, M, (int64_t)N)) != CUBLAS_STATUS_SUCCESS) {
        g->lc = NULL;
        return gemm_fail(g, "cublasLtMatrixLayoutCreate (C = D = Y)", st, err, errlen);
    }
    if (g->kind == QB_INT8)
        g->alpha.i = 1, g->beta.i = 0;
    else
        g->alpha.f = 1.0f, g->beta.f = 0.0f;
    return 0;
}

/* The heuristic's first algorithm for the workspace and the buffers'
 * alignment. */
static int pick_algorithm(qb_gemm *g, char *err, size_t errlen)
{
    qb_blas *b = g->b;
    cublasLtMatmulPreference_t pref = NULL;
    cublasStatus_t st = b->MatmulPreferenceCreate(&pref);
    if (st != CUBLAS_STATUS_SUCCESS)
        return gemm_fail(g, "cublasLtMatmulPreferenceCreate", st, err, errlen);
    const uint64_t ws = g->workspace_bytes;
    const uint32_t align_a = alignment_of(g->W), align_b = alignment_of(g->X), align_c = alignment_of(g->Y);
    int rc = -1;
    if ((st = b->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws)) ||
        (st = b->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_a,
                                              sizeof align_a)) ||
        (st = b->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_b,
                                              sizeof align_b)) ||
        (st = b->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c,
                                              sizeof align_c)) ||
        (st = b->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_c,
                                              sizeof align_c))) {
        gemm_fail(g, "cublasLtMatmulPreferenceSetAttribute", st, err, errlen);
        goto done;
    }
    cublasLtMatmulHeuristicResult_t result;
    memset(&result, 0, sizeof result);
    int count = 0;
    st = b->MatmulAlgoGetHeuristic(b->handle, g->desc, g->la, g->lb, g->lc, g->lc, pref, 1, &result, &count);
    if (st == CUBLAS_STATUS_SUCCESS && count > 0 && result.state != CUBLAS_STATUS_SUCCESS)
        st = result.state;
    if (st != CUBLAS_STATUS_SUCCESS || count < 1) {
        fail(err, errlen, "cublasLtMatmulAlgoGetHeuristic (%s, M=%d N=%d K=%d): no algorithm for this "
             "shape on this GPU with %zu bytes of workspace (%s (%d); CUBLASLT_LOG_LEVEL=5 says why)",
             qb_kind_name(g->kind), g->M, g->N, g->K, g->workspace_bytes, status_name(st), (int)st);
        goto done;
    }
    if (result.workspaceSize > g->workspace_bytes) {
        fail(err, errlen, "cublasLtMatmulAlgoGetHeuristic (%s, M=%d N=%d K=%d): its algorithm wants %zu "
             "bytes of workspace, more than the %zu allowed", qb_kind_name(g->kind), g->M, g->N, g->K,
             result.workspaceSize, g->workspace_bytes);
        goto done;
    }
    g->algo = result.algo;
    g->algo_workspace = result.workspaceSize;
    rc = 0;
done:
    b->MatmulPreferenceDestroy(pref);
    return rc;
}

int qb_gemm_prepare(qb_blas *b, qb_kind kind, int M, int N, int K, CUdeviceptr W, CUdeviceptr X,
                    CUdeviceptr Y, CUdeviceptr workspace, size_t workspace_bytes, qb_gemm **out, char *err,
                    size_t errlen)
{
    if (!out)
        return fail(err, errlen, "qb_gemm_prepare: out is NULL");
    *out = NULL;
    if (qb_gemm_check(kind, M, N, K, W, X, Y, err, errlen))
        return -1;
    if (workspace_bytes > 0 && (!workspace || workspace % 256 != 0))
        return fail(err, errlen, "%s (M=%d N=%d K=%d): the workspace (0x%llx, %zu bytes) must be a "
                    "256-byte aligned device buffer", qb_kind_name(kind), M, N, K,
                    (unsigned long long)workspace, workspace_bytes);
    if (!b)
        return fail(err, errlen, "%s (M=%d N=%d K=%d): cuBLASLt is not loaded", qb_kind_name(kind), M, N, K);
    qb_gemm *g = calloc(1, sizeof *g);
    if (!g)
        return fail(err, errlen, "qb_gemm_prepare: out of host memory");
    g->b = b;
    g->kind = kind;
    g->M = M, g->N = N, g->K = K;
    g->W = W, g->X = X, g->Y = Y;
    g->workspace = workspace_bytes ? workspace : 0;
    g->workspace_bytes = workspace_bytes;
    if (build_descriptors(g, err, errlen) || pick_algorithm(g, err, errlen)) {
        qb_gemm_destroy(g);
        return -1;
    }
    *out = g;
    return 0;
}

int qb_gemm_run(qb_gemm *g, CUstream stream, char *err, size_t errlen)
{
    if (!g)
        return fail(err, errlen, "qb_gemm_run: no prepared GEMM");
    qb_blas *b = g->b;
    cublasStatus_t st = b->Matmul(b->handle, g->desc, &g->alpha, (const void *)(uintptr_t)g->W, g->la,
                                  (const void *)(uintptr_t)g->X, g->lb, &g->beta, (const void *)(uintptr_t)g->Y,
                                  g->lc, (void *)(uintptr_t)g->Y, g->lc, &g->algo,
                                  (void *)(uintptr_t)g->workspace, g->workspace_bytes, (cudaStream_t)stream);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : gemm_fail(g, "cublasLtMatmul", st, err, errlen);
}

size_t qb_gemm_workspace(const qb_gemm *g)
{
    return g ? g->algo_workspace : 0;
}

void qb_gemm_destroy(qb_gemm *g)
{
    if (!g)
        return;
    if (g->lc)
        g->b->MatrixLayoutDestroy(g->lc);
    if (g->lb)
        g->b->MatrixLayoutDestroy(g->lb);
    if (g->la)
        g->b->MatrixLayoutDestroy(g->la);
    if (g->desc)
        g->b->MatmulDescDestroy(g->desc);
    free(g);
}
