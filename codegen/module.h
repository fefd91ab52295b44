/* module.h -- loaded kernels: one per (canonical key, arch), shared by every
 * layer of a context, alive until the context is destroyed. */
#ifndef QJIT_MODULE_H
#define QJIT_MODULE_H

#include <cuda.h>
#include "driver.h"
#include "generate.h"
#include "qjit.h"

typedef struct qjit__kernel {
    char *key;                   /* canonical variant key */
    char entry[80];              /* cache entry it came from */
    CUmodule module;
    CUfunction function;
    qjit__kernel_facts facts;    /* name, target, block, shared memory, launch attributes, signature */
    int static_smem;             /* its static shared memory (bytes) */
    int smem_max;                /* the dynamic shared memory it may be launched with (>= facts.smem) */
} qjit__kernel;

/* Finds or builds (cache / generate / compile) and loads key's kernel for the
 * context's device, checking the device can run it. Thread-safe: takes
 * ctx->lock. */
qjit_status qjit__kernel_get(qjit_context *ctx, const char *key, const qjit__kernel **out);
/* The dynamic shared memory to launch k with for a grid of `ctas` blocks.
 * A kernel launched with PDL is spread: its blocks take at least enough
 * shared memory that at most ceil(ctas / SMs) fit on one multiprocessor,
 * so a grid that starts while the one before it still holds some SMs (the
 * launch trigger) is not packed onto the SMs that freed first.
 * qjit__spread_smem is the arithmetic: smem the kernel's own need, smem_max
 * what it may take, static_smem its static share, sms the multiprocessors,
 * per_sm the shared memory of one, reserved what each resident block costs
 * besides. */
unsigned qjit__kernel_smem(const qjit__driver *d, const qjit__kernel *k, const unsigned grid[3]);
int qjit__spread_smem(int smem, int smem_max, int static_smem, int sms, int per_sm, int reserved, int64_t ctas);

/* Whether a binary for arch ("sm_90a") runs on a device of compute capability
 * cc_major.cc_minor: QJIT_DEVICE_TOO_OLD if the device is older,
 * QJIT_UNSUPPORTED_ARCH if it is of another major version (or another minor
 * one for an "a" target). */
qjit_status qjit__check_device(qjit_context *ctx, const char *canon, const char *arch, int cc_major,
                               int cc_minor, const char *device_name);

#endif
