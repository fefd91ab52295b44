/* lua_vm.h -- the embedded Lua VM that runs templates.
 *
 * One VM per context (created lazily, used under the context lock). Template
 * and library files are found on a search path (':'-separated folders,
 * earliest wins); every file a call reads is recorded with its SHA-256 so the
 * cache key can name it. Files are re-read on every top-level call, so an
 * edited template takes effect on the next call without a rebuild.
 *
 * In Lua, templates and modules see (besides the standard library minus io/os
 * writes): import(name) -> value of a Lua module file; render(name, env) ->
 * text of a template file; fail(status_name, message) -> raises an error that
 * C reports with that status (e.g. fail("INVALID_KEY", "unknown field 'x'")).
 * Any other Lua error is QJIT_TEMPLATE, and its message starts with the file
 * and line ("templates/gemm.cu:42: ..."), followed by a traceback. */
#ifndef QJIT_LUA_VM_H
#define QJIT_LUA_VM_H

#include <stddef.h>
#include "core.h"
#include "qjit.h"

typedef struct qjit__lua qjit__lua;

/* A file read during a call: name as asked for (relative, e.g. "lib/mma.lua"),
 * the path it resolved to, and the SHA-256 of its content (hex). */
typedef struct qjit__lua_file {
    char *name;
    char *path;
    char hash[65];
} qjit__lua_file;

/* Result of a text call: the string the function returned, and the files
 * the call read. */
typedef struct qjit__lua_result {
    char *text;
    size_t text_len;
    qjit__lua_file *files;
    size_t nfiles;
} qjit__lua_result;

/* search_path: ':'-separated folders, searched in order. */
qjit_status qjit__lua_open(qjit_context *ctx, const char *search_path, qjit__lua **out);
void qjit__lua_close(qjit__lua *L);

/* The context's VM (made on first use, on the context's template path, and
 * released with the context). Caller holds ctx->lock. */
qjit_status qjit__context_lua(qjit_context *ctx, qjit__lua **L);

/* Calls function `fn` of module file `module` (e.g. "dispatch.lua", resolved
 * on the search path) with nargs string arguments; the function must return
 * a string. */
qjit_status qjit__lua_call(qjit__lua *L, const char *module, const char *fn, int nargs,
                           const char *const *args, qjit__lua_result *out);
void qjit__lua_result_release(qjit__lua *L, qjit__lua_result *r);

/*------------------------------------------------------------------------
 * Typed calls: Lua answers with tables, read field by field with Lua's
 * typed API (no text to re-parse)
 *------------------------------------------------------------------------*/

/* An argument: a string (type 's') or an integer (type 'i'). */
typedef struct qjit__lua_arg {
    char type;
    const char *s;
    long long i;
} qjit__lua_arg;
#define QJIT__ARG_STR(v) ((qjit__lua_arg){'s', (v), 0})
#define QJIT__ARG_INT(v) ((qjit__lua_arg){'i', NULL, (long long)(v)})

/* A table of the result being read: where it is and what to call it in
 * messages ("dispatch.lua plan(): bucket 2: gemm"). Valid only inside the
 * reader; sub-tables are opened and closed in last-in, first-out order. */
typedef struct qjit__rec {
    qjit__lua *q;
    int idx;
    char what[160];
} qjit__rec;

/* Reads the result table `root` into the caller's structures. It runs inside
 * the protected call (a Lua memory error unwinds past it, so anything it
 * allocates must already be reachable from ud). Returns QJIT_OK or the
 * status of a failed accessor. */
typedef qjit_status (*qjit__lua_read_fn)(qjit__rec *root, void *ud);

/* Calls fn of module with typed args; the function must return a table,
 * which `read` reads. files (may be NULL) receives the files the call read
 * (release with qjit__lua_files_release). */
qjit_status qjit__lua_invoke(qjit__lua *L, const char *module, const char *fn, const qjit__lua_arg *args, int nargs,
                             qjit__lua_read_fn read, void *ud, qjit__lua_result *files);

/* Typed accessors. A missing field, a value of the wrong type or out of
 * [lo, hi] is QJIT_TEMPLATE with a message naming the table and field. */
qjit_status qjit__rec_int(qjit__rec *t, const char *field, long long lo, long long hi, long long *out);
/* As qjit__rec_int, but an absent field gives dflt. */
qjit_status qjit__rec_int_or(qjit__rec *t, const char *field, long long lo, long long hi, long long dflt,
                             long long *out);
/* A string field: the pointer is valid while the reader runs. */
qjit_status qjit__rec_str(qjit__rec *t, const char *field, const char **s, size_t *len);
/* A string field copied into buf (QJIT_TEMPLATE if it does not fit). */
qjit_status qjit__rec_strcpy(qjit__rec *t, const char *field, char *buf, size_t size);
/* A string field copied with qjit__strdup (release with qjit__strfree). */
qjit_status qjit__rec_strdup(qjit__rec *t, const char *field, char **out);
/* Whether the field is present (not nil). */
int qjit__rec_has(qjit__rec *t, const char *field);
/* Opens sub-table `field` (or element i, from 1, of an array) as *sub;
 * close it with qjit__rec_close before its parent. */
qjit_status qjit__rec_table(qjit__rec *t, const char *field, qjit__rec *sub);
qjit_status qjit__rec_elem(qjit__rec *t, long long i, qjit__rec *sub);
void qjit__rec_close(qjit__rec *sub);
/* Length of an array table (its border). */
long long qjit__rec_len(qjit__rec *t);
/* Reports a problem with the table's content: QJIT_TEMPLATE, the message
 * prefixed with the table's name. */
qjit_status qjit__rec_fail(qjit__rec *t, const char *fmt, ...) QJIT__PRINTF(2, 3);

/* Resolves name on a search path (no Lua involved): path of the first folder
 * holding it, allocated with qjit__strdup. QJIT_NOT_FOUND if none. Names with
 * ".." components or absolute names are refused (QJIT_INVALID_ARGUMENT). */
qjit_status qjit__template_resolve(qjit_context *ctx, const char *search_path, const char *name,
                                   char **path);
/* SHA-256 (hex) of a file's content. */
qjit_status qjit__file_sha256(qjit_context *ctx, const char *path, char hex[65]);

/* SHA-256 (hex) of the embedded template engine (engine.lua): part of every
 * cache key, since the engine shapes the generated text. */
const char *qjit__lua_engine_hash(qjit__lua *L);

#endif
