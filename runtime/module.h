/* module.h -- loaded kernels: one per (canonical key, arch), shared by every
 * layer of a context, alive until the context is destroyed. */
#ifndef QJIT_MODULE_H
#define QJIT_MODULE_H

#include <cuda.h>
#include "qjit.h"

typedef struct qjit__kernel {
    char *key;                   /* canonical variant key */
    char arch[16];
    char entry[80];              /* cache entry it came from */
    CUmodule module;
    CUfunction function;
    char name[64], kind[16], epi[8];
    int threads, smem;
    int tile_m, tile_n, tile_k, k_step, n_unit, group;
} qjit__kernel;

/* Finds or builds (cache / generate / compile) and loads key's kernel for the
 * context's device, checking the device can run it. Thread-safe: takes
 * ctx->lock. */
qjit_status qjit__kernel_get(qjit_context *ctx, const char *key, const qjit__kernel **out);
void qjit__modules_destroy(qjit_context *ctx);

#endif
