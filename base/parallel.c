/* parallel.c -- parallel.h: a counter the workers take items from. */
#define _POSIX_C_SOURCE 200809L
#include "parallel.h"
#include "core.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

typedef struct pf_job {
    int64_t count;
    atomic_llong next;           /* the next item nobody has taken */
    void (*fn)(void *arg, int64_t item, void *scratch);
    void *arg;
} pf_job;

typedef struct pf_worker {
    pf_job *job;
    void *scratch;
    pthread_t thread;
} pf_worker;

static void *worker_main(void *p)
{
    pf_worker *w = p;
    for (;;) {
        long long item = atomic_fetch_add(&w->job->next, 1);
        if (item >= w->job->count)
            break;
        w->job->fn(w->job->arg, item, w->scratch);
    }
    return NULL;
}

static int worker_count(int64_t count)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;
    if (cpus > QJIT__MAX_THREADS)
        cpus = QJIT__MAX_THREADS;
    return count < cpus ? (int)count : (int)cpus;
}

qjit_status qjit__parallel_for(qjit_context *ctx, int64_t count, size_t scratch_bytes,
                               void (*fn)(void *arg, int64_t item, void *scratch), void *arg)
{
    return qjit__parallel_run(ctx, count, scratch_bytes, NULL, fn, arg);
}

qjit_status qjit__parallel_run(qjit_context *ctx, int64_t count, size_t scratch_bytes, void (*begin)(void *arg),
                               void (*fn)(void *arg, int64_t item, void *scratch), void *arg)
{
    if (count <= 0) {
        if (begin)
            begin(arg);
        return QJIT_OK;
    }
    pf_job job = {.count = count, .fn = fn, .arg = arg};
    atomic_init(&job.next, 0);
    pf_worker workers[QJIT__MAX_THREADS] = {{0}};
    int wanted = worker_count(count), ready = 0;
    for (; ready < wanted; ready++) {
        workers[ready].job = &job;
        if (scratch_bytes && !(workers[ready].scratch = qjit__alloc(ctx, scratch_bytes)))
            break;
    }
    if (ready == 0)
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory for %zu bytes of a worker's scratch",
                           scratch_bytes);
    if (begin)
        begin(arg);
    /* Worker 0 is this thread. */
    int started[QJIT__MAX_THREADS] = {0};
    for (int i = 1; i < ready; i++)
        started[i] = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]) == 0;
    worker_main(&workers[0]);
    for (int i = 1; i < ready; i++)
        if (started[i])
            pthread_join(workers[i].thread, NULL);
    for (int i = 0; i < ready; i++)
        qjit__free(ctx, workers[i].scratch, scratch_bytes);
    return QJIT_OK;
}
