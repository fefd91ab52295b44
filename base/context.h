/* context.h -- the context: everything qjit holds hangs off it (no globals).
 * The base floor owns it; the floors above keep their parts in it (the Lua
 * VM, the loaded kernels) and hand it the functions that release them, so
 * destroying a context never calls up by name. */
#ifndef QJIT_CONTEXT_H
#define QJIT_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
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
    uint64_t cache_max_bytes;    /* QJIT_CACHE_MAX_MB, read at creation; 0: no bound */
    char *template_path;         /* user folders, ':'-separated, then builtin */
    char templates_hash[65];     /* of the template tree, for tuning records; "" until first needed */

    pthread_mutex_t lock;        /* Lua VM, driver init, module table */
    qjit__driver driver;         /* loaded on first need */
    /* Parts of the codegen floor, made on first need; each comes with the
     * function that releases it (called by qjit_context_destroy, kernels
     * before the VM, both before the driver). */
    qjit__lua *lua;
    void (*lua_release)(qjit__lua *lua);
    qjit__module_table *modules;
    void (*modules_release)(qjit_context *ctx);
    /* Epochs of fused forwards (one per call, never repeated in this
     * context; a random start keeps contexts apart): a fused GEMM's
     * quantizer CTAs publish the call's epoch in the workspace. */
    _Atomic unsigned long long epoch;
};

/* Internal context helpers (context.c). The *_locked / driver ones expect
 * the caller to hold ctx->lock. */
int qjit__normalize_arch(const char *in, char out[16]);
qjit_status qjit__context_driver(qjit_context *ctx);
qjit_status qjit__context_arch_locked(qjit_context *ctx, char arch[16]);
/* A new context with ctx's settings (cache folder, template path, arch,
 * allocators, log): for work on another thread that would otherwise wait
 * for ctx->lock (compiling many variants at once). */
qjit_status qjit__context_twin(qjit_context *ctx, qjit_context **out);

/* The folder to use: `configured` if non-NULL, else $QJIT_CACHE_DIR, else
 * $XDG_CACHE_HOME/qjit, else $HOME/.cache/qjit. Allocated with qjit__strdup.
 * Does not touch the file system. */
qjit_status qjit__cache_resolve_dir(qjit_context *ctx, const char *configured, char **out);


#endif
