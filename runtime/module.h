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
    int pdl;                     /* 1: launch with programmatic stream serialization */
    int tma;                     /* 1: takes tensor maps of Xq, weights, group parameters */
    int fused;                   /* 1: quantizes its own tokens (takes X, flags, epoch) */
    int cluster;                 /* > 1: launched in clusters of this many CTAs along z (split-K) */
} qjit__kernel;

/* Finds or builds (cache / generate / compile) and loads key's kernel for the
 * context's device, checking the device can run it. Thread-safe: takes
 * ctx->lock. */
qjit_status qjit__kernel_get(qjit_context *ctx, const char *key, const qjit__kernel **out);
void qjit__modules_destroy(qjit_context *ctx);
/* Whether a binary for arch ("sm_90a") runs on a device of compute capability
 * cc_major.cc_minor: QJIT_DEVICE_TOO_OLD if the device is older,
 * QJIT_UNSUPPORTED_ARCH if it is of another major version (or another minor
 * one for an "a" target). */
qjit_status qjit__check_device(qjit_context *ctx, const char *canon, const char *arch, int cc_major,
                               int cc_minor, const char *device_name);

#endif
