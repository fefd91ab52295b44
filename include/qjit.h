/*
 * qjit.h -- the one public header of qjit, and its manual.
 *
 * qjit generates, compiles (NVRTC), caches and runs specialized low-bit GEMM
 * kernels for LLM inference on NVIDIA GPUs. Lua templates emit CUDA C per
 * variant; binaries are cached on disk; a runtime picks the variant for each
 * call by shape and launches it through the CUDA Driver API, which is loaded
 * with dlopen so that everything but running works on machines without a GPU.
 *
 * Conventions
 *   - Every fallible call returns a qjit_status; results go to out-parameters.
 *   - Details of the last failure (an NVRTC log, a Lua traceback, the variant
 *     key) are kept in the context: qjit_last_error(ctx).
 *   - Bad input is reported and changes nothing.
 *   - Objects are opaque; every *_destroy accepts NULL.
 *   - Device pointers are CUdeviceptr values carried in void*; streams are
 *     CUstream values carried in void* (NULL is the legacy default stream).
 */
#ifndef QJIT_H
#define QJIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(QJIT_STATIC_DEFINE)
#  define QJIT_API
#elif defined(QJIT_BUILDING)
#  define QJIT_API __attribute__((visibility("default")))
#else
#  define QJIT_API
#endif

/*------------------------------------------------------------------------
 * Version
 *------------------------------------------------------------------------*/
#define QJIT_VERSION_MAJOR 0
#define QJIT_VERSION_MINOR 2
#define QJIT_VERSION_PATCH 0
#define QJIT_VERSION_NUMBER \
    (QJIT_VERSION_MAJOR * 10000 + QJIT_VERSION_MINOR * 100 + QJIT_VERSION_PATCH)
#define QJIT_VERSION_STRING "0.2.0"

/*! qjit_version_number() :
 *  @return the version of the library actually linked, as QJIT_VERSION_NUMBER. */
QJIT_API unsigned qjit_version_number(void);
/*! qjit_version_string() : @return e.g. "0.1.0"; never NULL. */
QJIT_API const char *qjit_version_string(void);

/*------------------------------------------------------------------------
 * Status codes. Values are pinned: never renumber, only append.
 *------------------------------------------------------------------------*/
#define QJIT_STATUS_MAP(X)                                                     \
    X(OK,               0, "success")                                          \
    X(INVALID_ARGUMENT, 1, "invalid argument")                                 \
    X(OUT_OF_MEMORY,    2, "out of memory")                                    \
    X(INVALID_KEY,      3, "invalid variant key")                              \
    X(TEMPLATE,         4, "template failed to load or run")                   \
    X(COMPILE,          5, "NVRTC compilation failed")                         \
    X(UNSUPPORTED_ARCH, 6, "architecture not supported")                       \
    X(CACHE,            7, "cache folder unusable")                            \
    X(CACHE_INSECURE,   8, "cache folder or file writable by another user")    \
    X(CACHE_CORRUPT,    9, "corrupt cache entry")                              \
    X(NO_DRIVER,       10, "CUDA driver not available")                        \
    X(NO_DEVICE,       11, "no CUDA device")                                   \
    X(DEVICE_TOO_OLD,  12, "device lacks instructions the variant needs")      \
    X(CUDA,            13, "CUDA driver call failed")                          \
    X(IO,              14, "file input/output error")                          \
    X(CORRUPT_WEIGHTS, 15, "corrupt packed-weight buffer")                     \
    X(NOT_FOUND,       16, "not found")                                        \
    X(OVERFLOW,        17, "size or value overflow")                           \
    X(INTERNAL,        18, "internal error")

typedef enum qjit_status {
#define QJIT__STATUS_ENUM(name, value, text) QJIT_##name = value,
    QJIT_STATUS_MAP(QJIT__STATUS_ENUM)
#undef QJIT__STATUS_ENUM
} qjit_status;

/*! qjit_status_string() :
 *  @return a short English description of a status; never NULL (unknown
 *  values give "unknown status"). */
QJIT_API const char *qjit_status_string(qjit_status status);
/*! qjit_status_name() : @return "QJIT_OK", "QJIT_COMPILE", ...; never NULL. */
QJIT_API const char *qjit_status_name(qjit_status status);

/* Element types of host and device arrays: weights (F16, BF16, F32),
 * calibration rows, a layer's tokens and outputs (F16, BF16). */
typedef enum qjit_dtype {
    QJIT_DTYPE_F16 = 1,
    QJIT_DTYPE_F32 = 2,
    QJIT_DTYPE_BF16 = 3
} qjit_dtype;

/*! qjit_half_from_float(), qjit_bf16_from_float() :
 *  @return the bits of the FP16 (IEEE binary16) or BF16 value nearest to f,
 *  ties to even (the host side of a layer's tokens and outputs): overflow
 *  gives Inf, Inf and signed zeros are kept, NaN stays NaN (FP16 keeps the top
 *  bits of its payload, BF16 makes it quiet). Done on the bits: no
 *  dependence on the host's rounding mode or F16C. (Added in 0.2.) */
QJIT_API uint16_t qjit_half_from_float(float f);
QJIT_API uint16_t qjit_bf16_from_float(float f);
/*! qjit_float_from_half(), qjit_float_from_bf16() :
 *  @return the FP32 value of FP16 or BF16 bits, exact (every such value is
 *  an FP32 value; NaN stays NaN). (Added in 0.2.) */
QJIT_API float qjit_float_from_half(uint16_t h);
QJIT_API float qjit_float_from_bf16(uint16_t b);

/*------------------------------------------------------------------------
 * Context
 *
 * Thread safety: a context may be used from many threads at once; its
 * generation, compilation and module tables are internally locked, and the
 * forward path takes no lock.
 *------------------------------------------------------------------------*/
typedef struct qjit_context qjit_context;

/*! Host allocator, Lua style: realloc(ud, ptr, old_size, new_size); with
 *  new_size == 0 it frees and returns NULL. Used for all host memory of the
 *  context, the Lua VM included. */
typedef void *(*qjit_realloc_fn)(void *ud, void *ptr, size_t old_size, size_t new_size);

/*! Device allocator: alloc returns a device pointer (0 on failure). Used for
 *  uploaded weights and workspaces. */
typedef struct qjit_device_allocator {
    uint64_t (*alloc)(void *ud, size_t bytes);
    void (*free)(void *ud, uint64_t ptr, size_t bytes);
    void *ud;
} qjit_device_allocator;

/*! Diagnostic callback: one line per event (a cache entry healed, a kernel
 *  compiled, "ptxas advisory for KEY: ..." when ptxas says it made a kernel
 *  slower than written). Never called on the forward hot path. */
typedef void (*qjit_log_fn)(void *ud, const char *line);

typedef struct qjit_context_options {
    size_t struct_size;          /* sizeof(qjit_context_options) */
    int device;                  /* CUDA device ordinal; default 0 */
    const char *cache_dir;       /* NULL: $QJIT_CACHE_DIR, $XDG_CACHE_HOME/qjit, ~/.cache/qjit */
    const char *template_path;   /* ':'-separated folders searched before the
                                    built-in one; NULL: $QJIT_TEMPLATE_PATH */
    const char *arch;            /* target for compilation ("sm_90a"); NULL:
                                    the device's own, or $QJIT_ARCH */
    qjit_realloc_fn host_realloc;/* NULL: libc */
    void *host_ud;
    qjit_device_allocator device_allocator; /* alloc == NULL: cuMemAlloc */
    qjit_log_fn log;             /* NULL: silent (or stderr if $QJIT_LOG=1) */
    void *log_ud;
    int line_info;               /* 1: compile with -lineinfo (part of the key) */
} qjit_context_options;

/*! qjit_context_options_init() : fills defaults. */
QJIT_API void qjit_context_options_init(qjit_context_options *opts);

/*! qjit_context_create() :
 *  Creates a context. Does not touch the GPU: the driver is loaded on first
 *  need, so generation and compilation work without one.
 *  @return QJIT_OK and *out, or a status (then *out is NULL). If the cache
 *  folder is unusable the context is still created and the problem reported
 *  at first use. opts may be NULL (defaults). */
QJIT_API qjit_status qjit_context_create(const qjit_context_options *opts, qjit_context **out);
/*! qjit_context_destroy() : releases everything; NULL is fine. All linears of
 *  the context must be destroyed first. */
QJIT_API void qjit_context_destroy(qjit_context *ctx);

/*! qjit_last_error() :
 *  @return the message of the last failure on this context, in words a user
 *  can act on ("" if none). Never NULL. With ctx == NULL: why this
 *  thread's last qjit_context_create failed, or a fixed message if it did
 *  not.
 *  The pointer stays valid until the next failing call on the context; from
 *  several threads, use qjit_last_error_copy(). */
QJIT_API const char *qjit_last_error(const qjit_context *ctx);
/*! qjit_last_error_copy() : copies the last error into buf (NUL-terminated,
 *  truncated to size). @return the full length of the message. */
QJIT_API size_t qjit_last_error_copy(const qjit_context *ctx, char *buf, size_t size);

/*! qjit_context_arch() : @return the compile target of the context into buf
 *  ("sm_90a"); QJIT_NO_DEVICE / QJIT_NO_DRIVER if neither set nor detectable. */
QJIT_API qjit_status qjit_context_arch(qjit_context *ctx, char *buf, size_t size);
/*! qjit_context_templates() : @return the template search path in use
 *  (never NULL): the caller's folders, then the built-in templates -- those
 *  installed beside the library (share/qjit/templates), else the source
 *  tree's it was built from, or $QJIT_BUILTIN_TEMPLATES. */
QJIT_API const char *qjit_context_templates(const qjit_context *ctx);
/*! qjit_context_cache_dir() : @return the cache folder in use (never NULL). */
QJIT_API const char *qjit_context_cache_dir(const qjit_context *ctx);

/*------------------------------------------------------------------------
 * Variants: keys, generation, compilation
 *
 * A variant key is a list of name=value fields separated by ';', ',' or
 * spaces, e.g. "scheme=w4a8-lqq; g=128; tile=64x128x64; warps=2x2;
 * stages=4; arch=sm_90a". Order, case and accepted spellings (g/group,
 * g=0/per-channel, 90a/sm_90a) do not matter: the canonical key is sorted,
 * defaulted and spelled one way. The field schema lives in
 * templates/variants.lua.
 *------------------------------------------------------------------------*/

/*! qjit_key_canonicalize() : writes the canonical form of key into buf.
 *  @return QJIT_INVALID_KEY for unknown fields/values (message says which);
 *  QJIT_OVERFLOW if buf is too small. */
QJIT_API qjit_status qjit_key_canonicalize(qjit_context *ctx, const char *key, char *buf, size_t size);

/*! qjit_generate() : runs the templates for key and returns the CUDA source in
 *  *source (allocated with the context's allocator; release with qjit_free).
 *  The source starts with a comment holding the canonical key. */
QJIT_API qjit_status qjit_generate(qjit_context *ctx, const char *key, char **source, size_t *length);
/*! qjit_free() : releases memory qjit returned (source text). NULL is fine. */
QJIT_API void qjit_free(qjit_context *ctx, void *ptr);

/*! What qjit_compile did. */
typedef struct qjit_compile_info {
    int from_cache;              /* 1: served from the disk cache */
    int healed;                  /* 1: a corrupt entry was found and replaced */
    double generate_seconds;     /* Lua generation (0 on a cache hit) */
    double compile_seconds;      /* NVRTC (0 on a cache hit) */
    double total_seconds;
    char entry[80];              /* cache entry name */
} qjit_compile_info;

/*! qjit_compile() : makes sure the binary of key for arch (NULL: the
 *  context's) is in the disk cache, generating and compiling it if needed.
 *  Works without a GPU. info may be NULL.
 *  @return QJIT_COMPILE with the NVRTC log and the path of the saved source in
 *  the last error; QJIT_UNSUPPORTED_ARCH if NVRTC cannot target arch. */
QJIT_API qjit_status qjit_compile(qjit_context *ctx, const char *key, const char *arch, qjit_compile_info *info);

/*! What qjit_compile_many did with one key. */
typedef struct qjit_compile_result {
    qjit_status status;          /* QJIT_OK, or why the key did not compile */
    qjit_compile_info info;      /* what qjit_compile did (status QJIT_OK) */
    char error[1024];            /* the message (status not QJIT_OK), cut to fit */
} qjit_compile_result;

/*! qjit_compile_many() : qjit_compile for each of n keys on `threads` threads
 *  (0: every online CPU; never more than n): the calling thread on ctx, each
 *  other on a context of its own with ctx's options (cache folder, arch,
 *  templates, allocator, log: the log function and allocator may then be
 *  called from those threads at once). Every key is tried whatever the
 *  others do;
 *  results (n entries, may be NULL) says what happened to each. Works
 *  without a GPU, like qjit_compile.
 *  @return QJIT_OK if every key is in the cache; else the status of the
 *  first key (in order) that failed, the key and its message in the last
 *  error. */
QJIT_API qjit_status qjit_compile_many(qjit_context *ctx, const char *const *keys, int n, const char *arch, int threads,
                                       qjit_compile_result *results);

/*! qjit_default_variants() : the default variant set (one canonical key per
 *  line) for arch (NULL: the context's), from templates/dispatch.lua. Release
 *  *keys with qjit_free. */
QJIT_API qjit_status qjit_default_variants(qjit_context *ctx, const char *arch, char **keys);
/*! qjit_default_variants_dtype() : the same for layers of dtype
 *  (QJIT_DTYPE_F16: the set above; QJIT_DTYPE_BF16: its BF16 twins). */
QJIT_API qjit_status qjit_default_variants_dtype(qjit_context *ctx, const char *arch, qjit_dtype dtype, char **keys);

/*------------------------------------------------------------------------
 * Cache maintenance
 *------------------------------------------------------------------------*/
typedef struct qjit_cache_entry_info {
    const char *name;            /* entry file name */
    const char *key;             /* canonical variant key; a tuning record: its layer ("scheme=...;N=...;K=...") */
    const char *arch;            /* the binary's target; a tuning record: "record" */
    uint64_t bytes;
    int valid;                   /* checksum and key verified */
    const char *problem;         /* why not valid, or NULL */
} qjit_cache_entry_info;

typedef int (*qjit_cache_visit_fn)(void *ud, const qjit_cache_entry_info *entry);

/*! qjit_cache_list() : calls visit for each entry (verifying each); visit
 *  returns nonzero to stop. *bad counts invalid entries (may be NULL). */
QJIT_API qjit_status qjit_cache_list(qjit_context *ctx, qjit_cache_visit_fn visit, void *ud, size_t *bad);
/*! qjit_cache_clear() : removes every qjit entry of the cache folder (and
 *  nothing else). *removed may be NULL. */
QJIT_API qjit_status qjit_cache_clear(qjit_context *ctx, size_t *removed);
/*! qjit_records_export() : writes every valid tuning record of the cache
 *  folder (the M buckets and variants measured best for a layer on a GPU,
 *  for whichever GPU they were made) into one file at path, replaced
 *  atomically, to ship to machines with the same GPU, driver and qjit.
 *  *count may be NULL. */
QJIT_API qjit_status qjit_records_export(qjit_context *ctx, const char *path, size_t *count);
/*! qjit_records_import() : stores the records of an exported file in the
 *  cache folder, each checked first (its checksum, and that it is a tuning
 *  record, never a binary); damaged ones are skipped and counted in *bad.
 *  A file that is not an export is refused with QJIT_CACHE_CORRUPT and
 *  stores nothing. imported and bad may be NULL. */
QJIT_API qjit_status qjit_records_import(qjit_context *ctx, const char *path, size_t *imported, size_t *bad);
/*! qjit_record_variants() : the kernels the tuning records of the cache
 *  folder run (records of any GPU: on a machine without one, import them
 *  first), each layer planned with its record's buckets for arch (NULL: the
 *  context's), one canonical key per line, each once: what `qjit compile
 *  --records` pre-compiles. A record that does not plan for arch is logged
 *  and skipped. Release *keys with qjit_free. */
QJIT_API qjit_status qjit_record_variants(qjit_context *ctx, const char *arch, char **keys);

/*------------------------------------------------------------------------
 * Host quantization and CPU reference
 *------------------------------------------------------------------------*/
/* Quantization schemes (docs/schemes.md says what each costs and buys). Each
 * has a name used in variant keys and by the CLI (qjit_scheme_name). */
typedef enum qjit_scheme {
    QJIT_SCHEME_W4A8_LQQ = 1,    /* "w4a8-lqq": LiquidQuant; per-channel INT8 with the protective range,
                                    then UINT4 with an offset per group (g = 0: per channel) */
    QJIT_SCHEME_W4A8_QOQ = 2,    /* "w4a8-qoq": QServe's QoQ; the same first level, then UINT4 with a
                                    zero point per group; g = 0: UINT4 per channel, zero point in the
                                    epilogue */
    QJIT_SCHEME_W4A8_IS = 3,     /* "w4a8-is": Integer Scale; INT4 groups (g > 0) whose scales are
                                    integers (amplified by alpha) applied to INT32 sums */
    QJIT_SCHEME_W8A8 = 4,        /* "w8a8": per-channel INT8 weights (g = 0) */
    QJIT_SCHEME_W4A4 = 5,        /* "w4a4": per-channel symmetric INT4 weights (g = 0) and per-token
                                    INT4 activations (COMET / MosaicQuant's W4A4) */
    QJIT_SCHEME_W4AX = 6,        /* "w4ax": w4a4's weights over the input channels in the layer's order,
                                    its outlier channels first, in blocks of 128 kept in INT8 (the share
                                    qjit_quantize_options.a8_fraction), the rest INT4; per token one
                                    scale and one INT32 sum per part (COMET's W4Ax) */
    QJIT_SCHEME_W4AX_S = 7       /* "w4ax-s": w4ax's INT8 channels, but one scale per token shared by
                                    both parts (the INT8 part at the INT4 part's step, 127 levels) and
                                    so one INT32 sum, in the caller's channel order: w4a4's weights and
                                    GEMM kernels */
} qjit_scheme;

/*! qjit_scheme_name() : @return "w4a8-lqq", "w4a8-qoq", "w4a8-is", "w8a8",
 *  "w4a4", "w4ax", "w4ax-s"; NULL for a value that is no scheme. */
QJIT_API const char *qjit_scheme_name(qjit_scheme scheme);
/*! qjit_scheme_from_name() : the scheme of a name (also "lqq", "qoq", "is",
 *  "int8", "int4", any case). @return QJIT_INVALID_ARGUMENT for an unknown name. */
QJIT_API qjit_status qjit_scheme_from_name(const char *name, qjit_scheme *out);
/*! qjit_scheme_activation_bits() : the bits a scheme quantizes activations
 *  to (8, or 4 for w4a4): what qjit_reference_quantize_activations_bits
 *  takes for its layers. @return 0 for a value that is no scheme. */
QJIT_API int qjit_scheme_activation_bits(qjit_scheme scheme);

/*! qjit_packed_size() : bytes of the packed-weight buffer for an N x K layer
 *  quantized with scheme and group (0 = per channel).
 *  @return QJIT_INVALID_ARGUMENT unless N % 16 == 0, K % 64 == 0, K % group
 *  == 0 and the scheme takes the group (w8a8: 0 only; w4a8-is: > 0 only;
 *  the others: 0 or a multiple of 64). */
QJIT_API qjit_status qjit_packed_size(qjit_scheme scheme, int group, int64_t N, int64_t K, size_t *bytes);

/*! qjit_quantize_weights() : quantizes W (row-major N x K, dtype) and packs it
 *  into the kernel layout, with a header and checksum, into out[0..capacity).
 *  The buffer is self-describing and may be stored and reloaded. The rows
 *  are quantized on every CPU (threads started and joined within the call;
 *  the result does not depend on their number).
 *  @return QJIT_INVALID_ARGUMENT for NaN/Inf weights or bad sizes;
 *  QJIT_OVERFLOW if capacity is too small. ctx may be NULL. */
QJIT_API qjit_status qjit_quantize_weights(qjit_context *ctx, qjit_scheme scheme, int group,
                                           const void *W, qjit_dtype dtype, int64_t N, int64_t K,
                                           void *out, size_t capacity, size_t *written);

/* Options of qjit_quantize_weights_ex. */
typedef struct qjit_quantize_options {
    size_t struct_size;           /* sizeof(qjit_quantize_options) */
    uint32_t alpha;               /* w4a8-is: the amplifier, a power of two (1 .. 2^30); 0: the
                                     heuristic (the smallest 2^i lifting every group scale to >= 1),
                                     lowered until the worst-case INT32 sum fits, which is logged */
    const char *layer_name;       /* names the layer in messages (NULL: "the layer") */
    /* The sparsity budget (w4a8-lqq, and w4a8-qoq with groups): a 4-bit
     * residual on the weight blocks where it removes the most output error
     * (docs/schemes.md, "Sparse residual"). Fields added in 0.2; a caller
     * whose struct_size ends before them gets a dense layer. */
    double sparsity;              /* budget rho in [0, 1]: at most ceil(rho x blocks) blocks carry a
                                     residual (only those it improves); 0: dense (default) */
    int block_n;                  /* residual block rows: 16, 32, 64 or 128 dividing N; 0: 64, or the
                                     largest of 32 and 16 that divides N */
    int block_k;                  /* residual block columns: 64 or 128 dividing K; 0: 64 */
    const void *calib;            /* calibration activations (calib_rows x K, calib_dtype) for the
                                     Hessian diagonal H[k] = sum_t X[t,k]^2 that weighs the error */
    qjit_dtype calib_dtype;
    int64_t calib_rows;
    const float *hessian_diag;    /* or H[k] itself (K finite values >= 0); neither: unweighted error,
                                     logged and recorded in the buffer (qjit_residual_info.weighted) */
    /* w4ax, w4ax-s (added in 0.3): the share of the 128-channel activation blocks
     * kept in INT8, ceil(a8_fraction x K / 128) of them, holding the
     * channels with the largest max_t |calib[t, k]| (calib is needed for a
     * share > 0). */
    double a8_fraction;
} qjit_quantize_options;

/*! qjit_quantize_options_init() : fills defaults (alpha 0: heuristic;
 *  sparsity 0: dense). */
QJIT_API void qjit_quantize_options_init(qjit_quantize_options *opts);

/*! qjit_quantize_weights_ex() : as qjit_quantize_weights, with options.
 *  @return also QJIT_OVERFLOW (nothing written) when w4a8-is with the given
 *  alpha could overflow the INT32 accumulator: the message names the layer,
 *  the bound 127 x 8 x K x max S and the largest alpha that fits. */
QJIT_API qjit_status qjit_quantize_weights_ex(qjit_context *ctx, qjit_scheme scheme, int group, const void *W,
                                              qjit_dtype dtype, int64_t N, int64_t K,
                                              const qjit_quantize_options *opts, void *out, size_t capacity,
                                              size_t *written);

/*! qjit_packed_size_ex() : as qjit_packed_size, for the options of
 *  qjit_quantize_weights_ex: with a sparsity budget, the most bytes the
 *  buffer can take (fewer blocks may be kept: *written says). opts may be
 *  NULL. @return QJIT_INVALID_ARGUMENT for options the scheme or shape
 *  cannot take (the message says which). */
QJIT_API qjit_status qjit_packed_size_ex(qjit_context *ctx, qjit_scheme scheme, int group, int64_t N, int64_t K,
                                         const qjit_quantize_options *opts, size_t *bytes);

/*! Shape of a packed-weight buffer, read from its (verified) header. */
typedef struct qjit_weights_info {
    qjit_scheme scheme;
    int group;                    /* 0 = per channel */
    int64_t N, K;
    size_t bytes;                 /* whole buffer */
    size_t payload_bytes;         /* what goes to the GPU (the weights and their parameters) */
    double alpha;                 /* w4a8-is: the amplifier (a power of two); 0 for other schemes */
} qjit_weights_info;

/*! qjit_weights_inspect() : verifies header and checksum of a packed buffer.
 *  @return QJIT_CORRUPT_WEIGHTS with the reason. */
QJIT_API qjit_status qjit_weights_inspect(qjit_context *ctx, const void *packed, size_t bytes, qjit_weights_info *info);

/*! The sparse residual of a packed buffer (qjit_residual_info_init first). */
typedef struct qjit_residual_info {
    size_t struct_size;           /* sizeof(qjit_residual_info) */
    int block_n, block_k;         /* 0 for a dense buffer */
    int64_t blocks;               /* blocks carrying a residual */
    int64_t total_blocks;         /* (N / block_n) x (K / block_k) */
    double density;               /* blocks / total_blocks */
    int weighted;                 /* 1: chosen by Hessian-weighted error; 0: unweighted */
    size_t bytes;                 /* payload bytes of the residual (indices and 4-bit values) */
} qjit_residual_info;

QJIT_API void qjit_residual_info_init(qjit_residual_info *info);

/*! qjit_weights_residual() : verifies a packed buffer and describes its
 *  sparse residual (all zero for a dense buffer).
 *  @return QJIT_CORRUPT_WEIGHTS with the reason. */
QJIT_API qjit_status qjit_weights_residual(qjit_context *ctx, const void *packed, size_t bytes,
                                           qjit_residual_info *info);

/*! What a packed layer takes as activations (qjit_activation_info_init
 *  first): most schemes INT8 or INT4, one scale per token and one INT32 sum
 *  per output; w4ax and w4ax-s an INT8 part and an INT4 part, w4ax in the
 *  layer's channel order with a scale and a sum each, w4ax-s in the caller's
 *  order (its INT8 channels: qjit_weights_int8_set) with one of each. */
typedef struct qjit_activation_info {
    size_t struct_size;           /* sizeof(qjit_activation_info) */
    int bits;                     /* 8, or 4 (w4a4; the second part of w4ax, w4ax-s) */
    int parts;                    /* 1, or 2 (w4ax): scales per token and INT32 sums per output */
    int64_t a8_channels;          /* w4ax, w4ax-s: the INT8 channels (w4ax: the first of its order) */
    int permuted;                 /* 1: the layer's channel order is not the caller's (w4ax) */
} qjit_activation_info;

QJIT_API void qjit_activation_info_init(qjit_activation_info *info);

/*! qjit_weights_activation() : verifies a packed buffer and says what its
 *  layer takes as activations. @return QJIT_CORRUPT_WEIGHTS with the reason. */
QJIT_API qjit_status qjit_weights_activation(qjit_context *ctx, const void *packed, size_t bytes,
                                             qjit_activation_info *info);

/*! qjit_weights_channel_order() : the layer's input-channel order into
 *  perm (K entries): perm[j] = the caller's channel at the layer's position
 *  j (the identity unless qjit_activation_info.permuted).
 *  @return QJIT_CORRUPT_WEIGHTS with the reason. */
QJIT_API qjit_status qjit_weights_channel_order(qjit_context *ctx, const void *packed, size_t bytes, uint32_t *perm);

/*! qjit_weights_int8_set() : which input channels a layer's activations
 *  keep in INT8, into is8 (K bytes, the caller's order): 1 for each of the
 *  a8_channels of w4ax and w4ax-s, 0 elsewhere (all 0 for one-part layers).
 *  @return QJIT_CORRUPT_WEIGHTS with the reason. */
QJIT_API qjit_status qjit_weights_int8_set(qjit_context *ctx, const void *packed, size_t bytes, uint8_t *is8);

/*! qjit_reference_quantize_activations_for() : the activation quantization
 *  a packed layer takes, on the CPU: X (M x K, FP16 bits, the caller's
 *  channel order) to Xq (M x K, one value per byte, the layer's order) and
 *  sx (M x parts floats, a token's together). Per part the symmetric
 *  per-token quantization (sx = max|x| / 127 or / 7, Xq = clamp(round(x /
 *  sx))); w4ax: part 0 (INT8) is the layer's first a8_channels. w4ax-s (the
 *  caller's order): one scale per token, sx = max(max_part0 |x| / 127,
 *  max_part1 |x| / 7) (1 for an all-zero token), part 0 (the channels of
 *  qjit_weights_int8_set) clamped to +-127, part 1 to +-7. */
QJIT_API qjit_status qjit_reference_quantize_activations_for(qjit_context *ctx, const void *packed, size_t bytes,
                                                             int64_t M, const uint16_t *X, int8_t *Xq, float *sx);

/*! qjit_reference_quantize_activations_dtype() : the same for tokens of
 *  QJIT_DTYPE_F16 or QJIT_DTYPE_BF16 (the bits of each value in X; a layer
 *  created with qjit_linear_options.dtype BF16 takes BF16 tokens). */
QJIT_API qjit_status qjit_reference_quantize_activations_dtype(qjit_context *ctx, const void *packed, size_t bytes,
                                                               int64_t M, qjit_dtype dtype, const uint16_t *X,
                                                               int8_t *Xq, float *sx);

/*! qjit_reference_quantize_activations() : CPU reference of the A8 per-token
 *  quantization (docs/schemes.md, activations): X (M x K, FP16 bits) to Xq and sx.
 *  Bit-identical to the GPU kernel. */
QJIT_API qjit_status qjit_reference_quantize_activations(qjit_context *ctx, int64_t M, int64_t K,
                                                         const uint16_t *X, int8_t *Xq, float *sx);
/*! qjit_reference_quantize_activations_bits() : the same for `bits` 8 or 4
 *  (qjit_scheme_activation_bits of the layer's scheme): A4 is sx = max|x| / 7,
 *  Xq = clamp(round(x / sx), -7, 7), one value per byte of Xq.
 *  @return QJIT_INVALID_ARGUMENT for other bits. */
QJIT_API qjit_status qjit_reference_quantize_activations_bits(qjit_context *ctx, int bits, int64_t M, int64_t K,
                                                              const uint16_t *X, int8_t *Xq, float *sx);

/*! qjit_reference_gemm() : CPU reference of the quantized GEMM, as the
 *  kernels compute it: the exact INT32 accumulators (if acc != NULL) --
 *  acc[m,n] = sum_k Xq[m,k] * W'[n,k] with W' the scheme's INT8 operand
 *  (plus the 4-bit residual R8 on the blocks that carry one), or
 *  for w4a8-is sum over groups of S[n,g] * sum_{k in g} Xq[m,k] * Q4[n,k] --
 *  and the FP32 output (if Y != NULL) Y[m,n] = float(acc) * (sx[m] * s[n]),
 *  or for w4a8-qoq per channel float(acc - z[n] * sum_k Xq[m,k]) * (sx[m] *
 *  s[n]); both row-major M x N. w4ax-s: Xq and sx as
 *  qjit_reference_quantize_activations_for makes them (the caller's order,
 *  one scale per token), one plane. For a layer of two activation parts (w4ax,
 *  qjit_weights_activation), Xq and sx as qjit_reference_quantize_activations_for
 *  makes them, acc holds two M x N planes (the INT8 part's sums, then the
 *  INT4 part's) and Y[m,n] = fmaf(float(acc8), sx8[m] * s[n], float(acc4) *
 *  (sx4[m] * s[n])). */
QJIT_API qjit_status qjit_reference_gemm(qjit_context *ctx, const void *packed, size_t bytes,
                                         int64_t M, const int8_t *Xq, const float *sx,
                                         int32_t *acc, float *Y);

/*------------------------------------------------------------------------
 * Linear layers (needs a GPU)
 *
 * Thread safety: forward may run from several threads at once when each
 * call passes its own workspace; calls that use the layer's internal
 * workspace must be serialized by the caller (or use one stream).
 *------------------------------------------------------------------------*/
typedef struct qjit_linear qjit_linear;

typedef struct qjit_linear_options {
    size_t struct_size;           /* sizeof(qjit_linear_options) */
    int64_t max_tokens;           /* internal workspace sized for this M (default 1024);
                                     a larger M grows it once */
    int eager;                    /* 1: resolve every bucket's kernels at create */
    const char *variant;          /* NULL: templates/dispatch.lua picks per M bucket; else
                                     this GEMM key for every M (missing fields take their
                                     defaults; its group must match the weights'), resolved
                                     at create -- for tuning and benchmarks */
    qjit_dtype dtype;             /* the tokens X and the output Y (added in 0.2):
                                     QJIT_DTYPE_F16 (default; 0 too) or QJIT_DTYPE_BF16 */
    const float *bias;            /* NULL: none; else N finite FP32 values on the host (added
                                     in 0.2), copied at create: forward's Y is x W^T + bias,
                                     the bias added in the epilogue before rounding to Y's
                                     floats (the INT32 accumulators of forward_acc take none) */
} qjit_linear_options;

QJIT_API void qjit_linear_options_init(qjit_linear_options *opts);

/*! qjit_linear_create() : verifies the packed buffer, uploads it to the
 *  device of ctx and prepares the dispatch table (one variant per M bucket,
 *  from templates/dispatch.lua). opts may be NULL.
 *  A buffer with a sparse residual runs the sparse kernels (the residual
 *  added in their main loop); the layer also builds the index they read.
 *  @return QJIT_CORRUPT_WEIGHTS, QJIT_NO_DRIVER, QJIT_NO_DEVICE, ... */
QJIT_API qjit_status qjit_linear_create(qjit_context *ctx, const void *packed, size_t bytes,
                                        const qjit_linear_options *opts, qjit_linear **out);
QJIT_API void qjit_linear_destroy(qjit_linear *lin);

/*! qjit_linear_workspace_size() : device bytes of workspace forward needs at M. */
QJIT_API qjit_status qjit_linear_workspace_size(const qjit_linear *lin, int64_t M, size_t *bytes);

/*! qjit_linear_forward() : Y[M,N] = X[M,K] * W^T in FP16 (or the layer's
 *  qjit_linear_options.dtype) on stream: quantizes
 *  X per token to INT8 and runs the GEMM variant of M's bucket. X and Y are
 *  device pointers, 16-byte aligned, row-major; workspace may be NULL (the
 *  layer's own) or a device buffer of qjit_linear_workspace_size bytes. The
 *  first call of a bucket may generate/compile/load its kernel; later calls
 *  allocate nothing, touch no file and run no Lua. */
QJIT_API qjit_status qjit_linear_forward(qjit_linear *lin, int64_t M, const void *X, void *Y,
                                         void *workspace, size_t workspace_bytes, void *stream);

/*! Debug/test entry: as forward, but runs the GEMM variant with its INT32
 *  accumulator epilogue, writing acc (M x N int32; a layer of two activation
 *  parts, w4ax: two planes, the INT8 part's sums then the INT4 part's, as
 *  qjit_reference_gemm) instead of Y; Xq/sx of the quantization are written
 *  to the workspace (first M*K bytes: Xq, in the layer's channel order). */
QJIT_API qjit_status qjit_linear_forward_acc(qjit_linear *lin, int64_t M, const void *X, int32_t *acc,
                                             void *workspace, size_t workspace_bytes, void *stream);

/*! Tokens quantized for a layer outside its forward (device pointers, each
 *  16-byte aligned; qjit_tokens_init first), in the format
 *  qjit_linear_tokens_format states: xq, M rows of row_bytes back to back;
 *  sx, M x scales floats (a token's together); rowsum, M int32 sums where
 *  the format has them, else NULL. */
typedef struct qjit_tokens {
    size_t struct_size;           /* sizeof(qjit_tokens) */
    void *xq;
    float *sx;
    int32_t *rowsum;
} qjit_tokens;

QJIT_API void qjit_tokens_init(qjit_tokens *tokens);

/*! The quantized tokens a layer's GEMM takes at M (qjit_tokens_format_init
 *  first). The values are those of qjit_reference_quantize_activations_for
 *  (qjit_activation_info says their bits, parts and channel order), one
 *  value per byte -- or, pack = 2, INT4 values two per byte (in each 32
 *  values of an INT4 part, byte b holds value b in its low nibble and
 *  b + 16 in its high one; targets with INT4 tensor cores only, sm_80..89). */
typedef struct qjit_tokens_format {
    size_t struct_size;           /* sizeof(qjit_tokens_format) */
    int64_t row_bytes;            /* bytes of one token's row of xq */
    int pack;                     /* INT4 values per byte: 1 or 2 */
    int scales;                   /* floats per token in sx: 1, or 2 (w4ax: the INT8 part's, the INT4 part's) */
    int rowsum;                   /* 1: rowsum[m] = sum_k xq[m, k] too (w4a8-qoq per channel; w4a8-lqq
                                     on sm_90a from 17 tokens, whose kernels take unsigned weights) */
} qjit_tokens_format;

QJIT_API void qjit_tokens_format_init(qjit_tokens_format *format);

/*! qjit_linear_tokens_format() : the tokens the layer takes at M (the same
 *  for every M on sm_90, but for w4a8-lqq's row sums, which its warpgroup-MMA
 *  kernels (wu8=1, from 17 tokens) take; by M bucket where pack can be 2).
 *  @return QJIT_INVALID_ARGUMENT if M's GEMM quantizes its own tokens (a
 *  forced actq=fused variant). */
QJIT_API qjit_status qjit_linear_tokens_format(const qjit_linear *lin, int64_t M, qjit_tokens_format *format);

/*! qjit_linear_quantize() : the layer's activation quantization alone: X
 *  (M x K FP16, device, 16-byte aligned) into the caller's tokens, on
 *  stream, bit-identical to what forward quantizes. One launch, no
 *  workspace. */
QJIT_API qjit_status qjit_linear_quantize(qjit_linear *lin, int64_t M, const void *X, const qjit_tokens *tokens,
                                          void *stream);

/*! qjit_linear_forward_tokens() : Y = the layer's GEMM of tokens the caller
 *  quantized (qjit_linear_quantize, or a kernel of its own that writes the
 *  same format), the GEMM launch alone; Y bit-identical to forward's on the
 *  same X. workspace as for forward (the layer's own if NULL; a caller's
 *  costs one memset of its split-K counters per call where M's GEMM has
 *  them, since its contents are unknown). */
QJIT_API qjit_status qjit_linear_forward_tokens(qjit_linear *lin, int64_t M, const qjit_tokens *tokens, void *Y,
                                                void *workspace, size_t workspace_bytes, void *stream);

/*! qjit_linear_variant() : the canonical key the layer uses at M. */
QJIT_API qjit_status qjit_linear_variant(qjit_linear *lin, int64_t M, char *buf, size_t size);

/*------------------------------------------------------------------------
 * Tuning (needs a GPU)
 *
 * qjit_tune_layer measures on the context's GPU which GEMM variant serves a
 * layer best at each token count M, among the candidates the templates
 * name (templates/dispatch.lua's D.candidates: the table's choice and its
 * neighbours in tile, pipeline, warps, stages, split and reduction), and
 * stores the result as a tuning record in the cache folder. A layer created
 * afterwards with the same scheme, group, shape, dtype, bias and residual,
 * on the same GPU model, SM count, driver, qjit version and templates, takes
 * its M buckets from the record instead of the static table (any other
 * record is not used). Timing is that of `qjit bench`: each call alone on
 * the legacy stream, L2 flushed before it, the median of `reps`. Every
 * recorded variant is first checked bit-exact against the CPU reference.
 * The candidates compile in parallel, on one context per thread. Not to be
 * run while other work uses the GPU (it synchronizes the device); one call
 * at a time per context.
 *------------------------------------------------------------------------*/
#define QJIT_TUNE_MAX_POINTS 32
#define QJIT_TUNE_MAX_BUCKETS 8
#define QJIT_TUNE_KEY_BYTES 512

typedef enum qjit_tune_phase {
    QJIT_TUNE_COMPILE = 1,       /* the candidates' kernels into the cache */
    QJIT_TUNE_TIME = 2,          /* each candidate at each of its points, then the winners at every point */
    QJIT_TUNE_CHECK = 3          /* the chosen variants against the CPU reference */
} qjit_tune_phase;

typedef struct qjit_tune_progress {
    qjit_tune_phase phase;
    int64_t done, total;         /* the phase's steps: kernels compiled, (variant, M) timings, checks */
    double elapsed_seconds;      /* since the call began */
    double seconds_left;         /* estimate for the phase; < 0 before one can be made */
    double best_speedup;         /* so far: geomean over the points timed of the table's time / the best */
} qjit_tune_progress;

/* Called on the thread of qjit_tune_layer, a few times a second at most. */
typedef void (*qjit_tune_progress_fn)(void *ud, const qjit_tune_progress *progress);

typedef struct qjit_tune_options {
    size_t struct_size;          /* sizeof(qjit_tune_options) */
    const int64_t *ms;           /* the token counts to measure (1 .. 65536, any order, at most
                                    QJIT_TUNE_MAX_POINTS); NULL: 1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96,
                                    128, 192, 256, 384, 512, 768, 1024, 2048, 4096 and the table's
                                    bucket edges. A record's buckets end at these points; an M past
                                    the last takes the last bucket */
    size_t n_ms;
    qjit_dtype dtype;            /* the layer's tokens and outputs, as qjit_linear_options.dtype */
    int bias;                    /* 1: for layers with a bias (their own records) */
    int reps;                    /* timed calls per point; 0: 20 */
    int threads;                 /* compile threads; 0: every online CPU */
    int store;                   /* 1 (default): store the record; 0: measure and report only */
    qjit_tune_progress_fn progress;   /* NULL: none */
    void *progress_ud;
} qjit_tune_options;

/*! qjit_tune_options_init() : fills defaults. */
QJIT_API void qjit_tune_options_init(qjit_tune_options *opts);

/* One measured token count: the table's time, the record's, and which of
 * the record's buckets serves it. */
typedef struct qjit_tune_point {
    int64_t M;
    double static_us, tuned_us;
    int bucket;
} qjit_tune_point;

/* A bucket of the record: M up to max_m (0: any larger M) runs key. */
typedef struct qjit_tune_bucket {
    int64_t max_m;
    char key[QJIT_TUNE_KEY_BYTES];
} qjit_tune_bucket;

typedef struct qjit_tune_report {
    size_t struct_size;          /* sizeof(qjit_tune_report) */
    int npoints;
    qjit_tune_point points[QJIT_TUNE_MAX_POINTS];
    int nbuckets;
    qjit_tune_bucket buckets[QJIT_TUNE_MAX_BUCKETS];
    int candidates;              /* distinct GEMM variants tried */
    int failed;                  /* of those, how many did not compile, load or run (logged) */
    int64_t timings;             /* (variant, M) medians taken */
    double speedup;              /* geomean over the points of static_us / tuned_us */
    int monotone;                /* 1: tuned_us never falls by more than 1 % from one point to the next */
    int stored;                  /* 1: the record was written */
    double compile_seconds, time_seconds, check_seconds, total_seconds;
} qjit_tune_report;

/*! qjit_tune_layer() : tunes the layer of a packed buffer (as given to
 *  qjit_linear_create) for the context's GPU, and stores its record unless
 *  opts->store is 0. opts may be NULL; report may be NULL.
 *  @return QJIT_CORRUPT_WEIGHTS, QJIT_INVALID_ARGUMENT (bad options),
 *  QJIT_NO_DEVICE, ...; QJIT_INTERNAL if a chosen variant is not bit-exact
 *  and no candidate is (nothing stored). Candidates that fail to compile or
 *  run are logged and left out. */
QJIT_API qjit_status qjit_tune_layer(qjit_context *ctx, const void *packed, size_t bytes,
                                     const qjit_tune_options *opts, qjit_tune_report *report);

/*! qjit_tune_shape() : qjit_tune_layer for an N x K layer of scheme and
 *  group, on random dense weights (the record serves every dense layer of
 *  that shape; two-part schemes, w4ax and w4ax-s: a tenth of the channels in
 *  INT8, as `qjit bench`). */
QJIT_API qjit_status qjit_tune_shape(qjit_context *ctx, qjit_scheme scheme, int group, int64_t N, int64_t K,
                                     const qjit_tune_options *opts, qjit_tune_report *report);

#ifdef __cplusplus
}
#endif
#endif /* QJIT_H */
