/* parallel.h -- one loop spread over the host's CPUs: items handed out one
 * at a time to up to QJIT__MAX_THREADS workers (this thread and threads it
 * starts), each with scratch of its own. For the CPU work a layer does on
 * the host (the reference GEMM, checks over its weights). */
#ifndef QJIT_PARALLEL_H
#define QJIT_PARALLEL_H

#include <stddef.h>
#include <stdint.h>
#include "qjit.h"

#define QJIT__MAX_THREADS 64

/* fn(arg, item, scratch) for every item in [0, count), in no fixed order
 * and possibly at once: fn must only write what its item owns (or take a
 * lock). Workers: the online CPUs, at most QJIT__MAX_THREADS and count;
 * each gets scratch_bytes of its own. A worker whose scratch cannot be
 * had, or whose thread cannot start, is left out (the others take its
 * share). @return QJIT_OUT_OF_MEMORY (nothing run) if not even this
 * thread's scratch can be had. */
qjit_status qjit__parallel_for(qjit_context *ctx, int64_t count, size_t scratch_bytes,
                               void (*fn)(void *arg, int64_t item, void *scratch), void *arg);
/* The same, with begin(arg) called on this thread once the workers'
 * scratch is had and before any item runs: what must happen only if the
 * loop runs (writing the caller's output) goes there. */
qjit_status qjit__parallel_run(qjit_context *ctx, int64_t count, size_t scratch_bytes, void (*begin)(void *arg),
                               void (*fn)(void *arg, int64_t item, void *scratch), void *arg);

#endif
