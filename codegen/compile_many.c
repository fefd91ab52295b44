/* compile_many.c -- qjit_compile over many keys on every CPU: the calling
 * thread on its own context, each other thread on a twin of it (the same
 * options, cache folder and templates; a context's Lua VM and NVRTC calls
 * are one at a time, so threads need contexts of their own). The disk
 * cache takes concurrent writers (entries are renamed into place). */
#include "compile_many.h"
#include "context.h"
#include "core.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct job {
    const char *const *keys;
    int n;
    const char *arch;
    qjit_compile_result *results;
    atomic_int next, done;
} job;

/* Takes keys until none is left; progress only on the calling thread. */
static void take_keys(job *j, qjit_context *c, void (*progress)(void *ud, int done, int n), void *ud)
{
    for (;;) {
        const int i = atomic_fetch_add(&j->next, 1);
        if (i >= j->n)
            return;
        qjit_compile_result *r = &j->results[i];
        r->status = qjit_compile(c, j->keys[i], j->arch, &r->info);
        if (r->status != QJIT_OK)
            qjit_last_error_copy(c, r->error, sizeof r->error);
        const int done = atomic_fetch_add(&j->done, 1) + 1;
        if (progress)
            progress(ud, done, j->n);
    }
}

typedef struct worker {
    job *job;
    qjit_context *ctx;
    pthread_t thread;
    int started;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    take_keys(w->job, w->ctx, NULL, NULL);
    return NULL;
}

qjit_status qjit__compile_many(qjit_context *ctx, const char *const *keys, int n, const char *arch, int threads,
                               qjit_compile_result *results, void (*progress)(void *ud, int done, int n), void *ud)
{
    if (!ctx || n < 0 || (n > 0 && !keys) || threads < 0)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_compile_many: %s",
                           !ctx || (n > 0 && !keys) ? "NULL argument" : n < 0 ? "negative key count" :
                           "negative thread count");
    for (int i = 0; i < n; i++)
        if (!keys[i])
            return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_compile_many: key %d of %d is NULL", i, n);
    if (n == 0)
        return QJIT_OK;
    qjit_compile_result *own = NULL;
    if (!results && !(results = own = qjit__calloc(ctx, sizeof *own * (size_t)n)))
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of host memory for %d compile results", n);
    memset(results, 0, sizeof *results * (size_t)n);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = threads > 0 ? threads : cpus > 0 ? (int)cpus : 1;
    if (nt > n)
        nt = n;
    job j = {keys, n, arch, results, 0, 0};
    /* Without room for the workers the calling thread does it all. */
    worker *w = nt > 1 ? qjit__calloc(ctx, sizeof *w * (size_t)nt) : NULL;
    for (int i = 1; w && i < nt; i++) {
        w[i].job = &j;
        if (qjit__context_twin(ctx, &w[i].ctx) == QJIT_OK)
            w[i].started = pthread_create(&w[i].thread, NULL, worker_main, &w[i]) == 0;
    }
    take_keys(&j, ctx, progress, ud);
    for (int i = 1; w && i < nt; i++) {
        if (w[i].started)
            pthread_join(w[i].thread, NULL);
        qjit_context_destroy(w[i].ctx);
    }
    if (w)
        qjit__free(ctx, w, sizeof *w * (size_t)nt);
    qjit_status st = QJIT_OK;
    for (int i = 0; i < n && st == QJIT_OK; i++)
        if (results[i].status != QJIT_OK)
            st = qjit__error(ctx, results[i].status, "%s: %s", keys[i], results[i].error);
    if (own)
        qjit__free(ctx, own, sizeof *own * (size_t)n);
    return st;
}

qjit_status qjit_compile_many(qjit_context *ctx, const char *const *keys, int n, const char *arch, int threads,
                              qjit_compile_result *results)
{
    return qjit__compile_many(ctx, keys, n, arch, threads, results, NULL, NULL);
}
