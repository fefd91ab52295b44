/* cache.h -- the on-disk binary cache (mechanism only: it knows nothing of
 * schemes or templates).
 *
 * A folder holds entries `<sha256 of key text>.qjb` and small text files
 * (manifests, `*.qjm`). Every write is atomic: a temporary file in the same
 * folder, fsync, rename. Every entry carries its full key text and a SHA-256
 * over key, meta and payload, verified on load. Folders qjit creates are 0700;
 * a folder or file that another user owns or can write is refused. */
#ifndef QJIT_CACHE_H
#define QJIT_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include "qjit.h"

/* Creates the folder (and missing parents, 0700) if needed, then checks it is
 * a directory owned by the current user and not writable by group or others.
 * @return QJIT_CACHE (cannot create / not a directory, with errno text) or
 * QJIT_CACHE_INSECURE (message says which folder, its owner/mode, and how to
 * fix: chmod 700). */
qjit_status qjit__cache_open_dir(qjit_context *ctx, const char *dir);

/* A loaded entry; strings and payload are allocated with the context's
 * allocator and released by qjit__cache_entry_release. */
typedef struct qjit__cache_entry {
    char *key;                   /* full key text, NUL-terminated */
    char *meta;                  /* meta text ("name=value\n" lines), NUL-terminated */
    void *payload;               /* the binary (cubin) */
    size_t payload_bytes;
} qjit__cache_entry;

/* Entry file name for a full key text: 64 hex digits of its SHA-256 + ".qjb". */
void qjit__cache_entry_name(const char *key_text, char name[80]);

/* Loads and verifies entry `name` of dir.
 * @return QJIT_NOT_FOUND if absent (no message needed);
 *         QJIT_CACHE_CORRUPT if truncated, bad magic/version, checksum
 *           mismatch, or stored key != expected_key (when expected_key is
 *           non-NULL) -- the message says which and names the file;
 *         QJIT_CACHE_INSECURE if the file is not owned by us or is
 *           group/other-writable; QJIT_IO on read errors. */
qjit_status qjit__cache_load(qjit_context *ctx, const char *dir, const char *name,
                             const char *expected_key, qjit__cache_entry *out);
void qjit__cache_entry_release(qjit_context *ctx, qjit__cache_entry *e);

/* Atomically writes entry `name` (replacing any existing one). Safe with many
 * processes writing the same name at once (each uses its own temporary name:
 * pid + random suffix; rename is atomic). Files are created 0600. */
qjit_status qjit__cache_store(qjit_context *ctx, const char *dir, const char *name,
                              const char *key, const char *meta,
                              const void *payload, size_t payload_bytes);

/* Small text files beside the entries (manifests): atomic write, plain read.
 * read returns QJIT_NOT_FOUND if absent; the text is allocated with
 * qjit__strdup conventions (release with qjit__strfree). Same ownership
 * checks as entries. */
qjit_status qjit__cache_write_text(qjit_context *ctx, const char *dir, const char *name, const char *text);
qjit_status qjit__cache_read_text(qjit_context *ctx, const char *dir, const char *name, char **text);

/* Marks an entry as recently used (mtime = now), for LRU eviction. */
void qjit__cache_touch(qjit_context *ctx, const char *dir, const char *name);

/* Removes least-recently-used entries (by mtime; .qjb and .qjm) until the
 * folder's entries total <= max_bytes. max_bytes == 0: no bound.
 * *removed may be NULL. */
qjit_status qjit__cache_evict(qjit_context *ctx, const char *dir, uint64_t max_bytes, size_t *removed);

/* The lock of entry `name` across the processes sharing dir (flock on
 * .NAME.lock: it dies with its holder, so a crashed compile never blocks
 * others). Blocks until held; returns the descriptor to hand to
 * qjit__cache_unlock, or -1 when no lock can be had (a read-only folder, a
 * file system without flock): then the caller goes on without it. */
int qjit__cache_lock(qjit_context *ctx, const char *dir, const char *name);
void qjit__cache_unlock(int fd);

/* Visits every `.qjb` entry: verifies it and reports name, key (the line of the
 * key text starting "variant "), arch (line "arch "), size, validity and the
 * problem; a tuning record (a key line "record ", no "variant "): that line
 * as the key and "record" as the arch. Entries that fail verification are
 * reported, not removed. */
typedef struct qjit__cache_visit_info {
    const char *name;
    const char *variant;         /* may be "" if unreadable */
    const char *arch;            /* may be "" */
    uint64_t bytes;
    int valid;
    const char *problem;         /* NULL when valid */
} qjit__cache_visit_info;
typedef int (*qjit__cache_visit_fn)(void *ud, const qjit__cache_visit_info *info);
qjit_status qjit__cache_list(qjit_context *ctx, const char *dir, qjit__cache_visit_fn visit, void *ud,
                             size_t *bad);

/* Removes every .qjb / .qjm file and stale qjit temporary files of dir;
 * nothing else. */
qjit_status qjit__cache_clear(qjit_context *ctx, const char *dir, size_t *removed);

#endif
