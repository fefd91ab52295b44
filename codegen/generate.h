/* generate.h -- from a variant key to a verified binary in the disk cache.
 * All functions here expect the caller to hold ctx->lock (the Lua VM and the
 * context's target are shared). */
#ifndef QJIT_GENERATE_H
#define QJIT_GENERATE_H

#include "cache.h"
#include "qjit.h"

/* What the runtime needs to launch a kernel, as the templates state it
 * (variants.lua's generate) and the cache entry keeps it, so a cache hit
 * needs no Lua. */
typedef struct qjit__kernel_facts {
    char name[64];               /* the kernel function */
    char kind[16];               /* "gemm", "act-quant" */
    char arch[16];               /* the target it is built for ("sm_90a") */
    int threads;                 /* per block */
    int smem;                    /* dynamic shared memory bytes per block */
    int pdl;                     /* 1: launched with programmatic stream serialization */
    int cluster;                 /* CTAs per cluster along z; 1: no cluster */
    char signature[512];         /* its parameter names in order, joined with ',' */
} qjit__kernel_facts;

/* Canonical key (qjit__strdup'd) for key, filling a missing arch with arch
 * (NULL or "": the context's target, detected from the GPU if need be);
 * the key's own target into arch_out (may be NULL). */
qjit_status qjit__canonicalize_locked(qjit_context *ctx, const char *key, const char *arch, char **canon,
                                      char arch_out[16]);

/* Makes sure key's binary for arch is in the cache and, if cubin != NULL,
 * returns it (allocated with the context's allocator, *cubin_bytes long;
 * release with qjit__free) with its facts. info may be NULL. */
qjit_status qjit__build_locked(qjit_context *ctx, const char *key, const char *arch, qjit_compile_info *info,
                               qjit__kernel_facts *facts, void **cubin, size_t *cubin_bytes);

/* The facts as the text a cache entry keeps ("name=value" lines), and back:
 * every field present, integers in range, nothing else. */
char *qjit__facts_format(qjit_context *ctx, const qjit__kernel_facts *f);
qjit_status qjit__facts_parse(qjit_context *ctx, const char *text, qjit__kernel_facts *f);

#endif
