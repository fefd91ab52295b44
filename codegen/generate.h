/* generate.h -- from a variant key to a verified binary in the disk cache.
 * All functions here expect the caller to hold ctx->lock (the Lua VM and the
 * context's target are shared). */
#ifndef QJIT_GENERATE_H
#define QJIT_GENERATE_H

#include "cache.h"
#include "qjit.h"

/* Canonical key (qjit__strdup'd) for key, filling a missing arch with arch
 * (NULL or "": the context's target, detected from the GPU if need be). */
qjit_status qjit__canonicalize_locked(qjit_context *ctx, const char *key, const char *arch, char **canon);

/* Makes sure key's binary for arch is in the cache and returns the entry
 * (key text, meta lines, cubin) if out != NULL. info may be NULL. */
qjit_status qjit__build_locked(qjit_context *ctx, const char *key, const char *arch, qjit_compile_info *info,
                               qjit__cache_entry *out);

/* The arch field of a canonical key, into arch (unchanged if absent). */
void qjit__key_arch(const char *canon, char arch[16]);

/* Reads integer / string field `name` of an entry's meta text. */
int qjit__meta_int(const char *meta, const char *name, long long *value);
int qjit__meta_str(const char *meta, const char *name, char *buf, size_t size);

#endif
