/* context.h -- the context: everything qjit holds hangs off it (no globals). */
#ifndef QJIT_CONTEXT_H
#define QJIT_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include "qjit.h"
#include "driver.h"

typedef struct qjit__lua qjit__lua;
typedef struct qjit__module_table qjit__module_table;

struct qjit_context {
    char last_error[8192];
    pthread_mutex_t error_lock;

    qjit_realloc_fn host_realloc;
    void *host_ud;
    qjit_device_allocator device_allocator;
    qjit_log_fn log;
    void *log_ud;

    int device_ordinal;
    int line_info;
    char arch[16];               /* "" until set or detected */
    char *cache_dir;
    char *template_path;         /* user folders, ':'-separated, then builtin */

    pthread_mutex_t lock;        /* Lua VM, driver init, module table */
    qjit__lua *lua;
    qjit__driver driver;         /* loaded on first need */
    qjit__module_table *modules;
    /* Epochs of fused forwards (one per call, never repeated in this
     * context; a random start keeps contexts apart): a fused GEMM's
     * quantizer CTAs publish the call's epoch in the workspace. */
    _Atomic unsigned long long epoch;
};

/* Internal context helpers (context.c). The *_locked / driver / lua ones
 * expect the caller to hold ctx->lock. */
int qjit__normalize_arch(const char *in, char out[16]);
qjit_status qjit__context_driver(qjit_context *ctx);
qjit_status qjit__context_lua(qjit_context *ctx, qjit__lua **L);
qjit_status qjit__context_arch_locked(qjit_context *ctx, char arch[16]);

#endif
