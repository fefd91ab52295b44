/* module.h -- loaded kernels: one per (canonical key, arch), shared by every
 * layer of a context, alive until the context is destroyed. */
#ifndef QJIT_MODULE_H
#define QJIT_MODULE_H

#include <cuda.h>
#include "generate.h"
#include "qjit.h"

typedef struct qjit__kernel {
    char *key;                   /* canonical variant key */
    char entry[80];              /* cache entry it came from */
    CUmodule module;
    CUfunction function;
    qjit__kernel_facts facts;    /* name, target, block, shared memory, launch attributes, signature */
} qjit__kernel;

/* Finds or builds (cache / generate / compile) and loads key's kernel for the
 * context's device, checking the device can run it. Thread-safe: takes
 * ctx->lock. */
qjit_status qjit__kernel_get(qjit_context *ctx, const char *key, const qjit__kernel **out);
/* Whether a binary for arch ("sm_90a") runs on a device of compute capability
 * cc_major.cc_minor: QJIT_DEVICE_TOO_OLD if the device is older,
 * QJIT_UNSUPPORTED_ARCH if it is of another major version (or another minor
 * one for an "a" target). */
qjit_status qjit__check_device(qjit_context *ctx, const char *canon, const char *arch, int cc_major,
                               int cc_minor, const char *device_name);

#endif
