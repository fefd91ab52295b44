/* tune.h -- the tuner's core (tune.c), apart from the GPU: for a layer and
 * its token counts, the candidates of every point (dispatch.lua's
 * D.candidates), which are timed where, the winners timed at every point,
 * the M buckets chosen from the measurements, the check of each chosen
 * variant and the record stored. What measures and checks is a table of
 * operations: the GPU's in qjit_tune_layer, simulated ones in the tests. */
#ifndef QJIT_TUNE_H
#define QJIT_TUNE_H

#include <stdint.h>
#include "plan.h"
#include "qjit.h"
#include "record.h"

/* The most tokens a point may have. */
#define QJIT__TUNE_MAX_M 65536

typedef struct qjit__tune_ops {
    /* Makes the kernels of keys ready (compiled into the cache), reporting
     * progress through qjit__tune_progress; NULL: nothing to do. A kernel
     * that fails is logged; its variants then fail to time. */
    qjit_status (*prepare)(void *ud, char *const *keys, int n, void *tuner);
    /* The median time of the layer's forward at M with GEMM variant key
     * forced, in µs; < 0: the variant cannot run (logged). Calls come
     * grouped by key. */
    double (*time)(void *ud, const char *key, int64_t M);
    /* The variant's INT32 accumulators at M against the CPU reference: 0
     * bit-exact, 1 wrong (logged), < 0 could not run. */
    int (*check)(void *ud, const char *key, int64_t M);
    /* The median time of the layer's forward at M with the buckets of picks
     * (dispatch.lua's picks text), as the record will run it; < 0: failed;
     * NULL: the chosen buckets are taken as timed. */
    double (*time_picks)(void *ud, const char *picks, int64_t M);
    void *ud;
} qjit__tune_ops;

/* qjit_linear_create with the buckets of picks (dispatch.lua's picks text)
 * instead of a record or the table (linear.c). */
qjit_status qjit__linear_create_picks(qjit_context *ctx, const void *packed, size_t bytes,
                                      const qjit_linear_options *opts, const char *picks, qjit_linear **out);

/* Tunes the layer of req (its variant and picks unset) for dev: times,
 * chooses, checks, and stores the record in ctx->cache_dir unless
 * opts->store is 0. Takes ctx->lock itself where it plans (not while ops
 * run). opts and report as qjit_tune_layer's (opts filled in). */
qjit_status qjit__tune_run(qjit_context *ctx, const qjit__plan_request *req, const qjit__record_device *dev,
                           const qjit__tune_ops *ops, const qjit_tune_options *opts, qjit_tune_report *report);

/* The token counts of opts (NULL: the default list), checked: 1 to
 * QJIT_TUNE_MAX_POINTS of them, each in 1..QJIT__TUNE_MAX_M. */
qjit_status qjit__tune_check_ms(qjit_context *ctx, const qjit_tune_options *opts);

/* For ops->prepare: `done` of `total` steps of phase `phase` are done. */
void qjit__tune_progress(void *tuner, qjit_tune_phase phase, int64_t done, int64_t total);

/* The M buckets from measurements: times t[k * np + i] of key k at point
 * i (µs; <= 0: not measured or failed), stat[i] the table's key at point
 * i. Splits the np points into at most max_buckets runs, each served by
 * one key, minimizing the sum of log times, where a key may serve a point
 * only if measured there and no slower than the table's (the table's own
 * key counted `margin` faster, so that another must beat it by more than
 * noise; an excluded table key bounds nothing). ends (may be NULL): a
 * run ends at every point i with QJIT__TUNE_END in ends[i]; a point with
 * QJIT__TUNE_OWN takes the table's key (measured as the record runs, the
 * chosen one was slower there). Fewer runs win ties. pick[i]: the key of
 * point i. @return the number of runs, 0 if none is possible. */
enum { QJIT__TUNE_END = 1, QJIT__TUNE_OWN = 2 };
int qjit__tune_buckets(const double *t, int nkeys, int np, const int *stat, int max_buckets, double margin,
                       const unsigned char *excluded, const unsigned char *ends, int *pick);

#endif
