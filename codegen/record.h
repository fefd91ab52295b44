/* record.h -- tuning records: the M buckets and GEMM variants measured best
 * for one layer on one GPU, kept in the disk cache beside the binaries.
 *
 * A record is a cache entry (cache/cache.h: atomic write, SHA-256 over the
 * whole entry, verified on load) whose key text names the layer and
 * everything the measurement depends on: the GPU model, its SM count and
 * compute capability, the driver version, qjit's version and the hash of the
 * template tree. A record made under any other of those is a different key,
 * so it is never found, never trusted. Its payload is the picks text that
 * dispatch.lua's D.plan takes ("MAX_M KEY" lines). All functions expect the
 * caller to hold ctx->lock. */
#ifndef QJIT_RECORD_H
#define QJIT_RECORD_H

#include <stdint.h>
#include "qjit.h"

/* The layer a record is for. */
typedef struct qjit__record_layer {
    const char *scheme;          /* canonical scheme name */
    int group;
    int64_t N, K;
    const char *dtype;           /* "f16" or "bf16" */
    int bias;                    /* 0 or 1 */
    int rblock_n, rblock_k;      /* the residual's blocks; 0: dense */
    int64_t rblocks;
} qjit__record_layer;

/* What a measurement depends on besides the layer. */
typedef struct qjit__record_device {
    char gpu[128];               /* the device's name */
    int sms;
    int cc_major, cc_minor;
    int driver;                  /* cuDriverGetVersion */
    char qjit[16];               /* QJIT_VERSION_STRING */
    char templates[65];          /* SHA-256 of the template tree (qjit__templates_hash) */
} qjit__record_device;

/* The device in hand and the context's templates (loads the driver; the
 * template tree is hashed once per context). */
qjit_status qjit__record_device_now(qjit_context *ctx, qjit__record_device *out);

/* SHA-256 (hex) over every file of every folder of the context's template
 * path, in path order, each folder's files sorted by relative name ("name
 * sha256" lines): any edit, addition or removal changes it. */
qjit_status qjit__templates_hash(qjit_context *ctx, char hex[65]);

/* The record's key text (qjit__strdup'd), from which its entry name follows. */
char *qjit__record_key(qjit_context *ctx, const qjit__record_layer *layer, const qjit__record_device *dev);

/* Stores picks as the record of (layer, dev) in dir, replacing any. meta:
 * "name=value" lines kept beside it (measured times), or NULL. */
qjit_status qjit__record_store(qjit_context *ctx, const char *dir, const qjit__record_layer *layer,
                               const qjit__record_device *dev, const char *picks, const char *meta);

/* Loads the record of (layer, dev) from dir: its picks (qjit__strdup'd,
 * release with qjit__strfree). QJIT_NOT_FOUND if there is none; a damaged
 * entry is QJIT_CACHE_CORRUPT with the file named (the caller ignores it). */
qjit_status qjit__record_load(qjit_context *ctx, const char *dir, const qjit__record_layer *layer,
                              const qjit__record_device *dev, char **picks);

/* A stored record: its layer, the SMs it was measured on, its picks. */
typedef struct qjit__record_entry {
    qjit__record_layer layer;    /* scheme and dtype point into the fields below */
    char scheme[32], dtype[8];
    int sms;
    const char *picks;           /* NUL-terminated */
} qjit__record_entry;

/* Calls fn for every valid record of dir, for any device; a record whose
 * layer cannot be read is logged and skipped. fn returns nonzero to stop. */
qjit_status qjit__record_each(qjit_context *ctx, const char *dir,
                              int (*fn)(void *ud, const qjit__record_entry *r), void *ud);

#endif
