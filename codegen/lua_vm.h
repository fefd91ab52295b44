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
#include "qjit.h"

typedef struct qjit__lua qjit__lua;

/* A file read during a call: name as asked for (relative, e.g. "lib/mma.lua"),
 * the path it resolved to, and the SHA-256 of its content (hex). */
typedef struct qjit__lua_file {
    char *name;
    char *path;
    char hash[65];
} qjit__lua_file;

/* Result of a call: the function returned either a string (text) or a table
 * of string/number/boolean fields (fields[i] = "name", values[i] = "value",
 * sorted by name); plus the files read. */
typedef struct qjit__lua_result {
    char *text;                  /* NULL unless a string was returned */
    size_t text_len;
    char **fields, **values;
    size_t nfields;
    qjit__lua_file *files;
    size_t nfiles;
} qjit__lua_result;

/* search_path: ':'-separated folders, searched in order. */
qjit_status qjit__lua_open(qjit_context *ctx, const char *search_path, qjit__lua **out);
void qjit__lua_close(qjit__lua *L);

/* Calls function `fn` of module file `module` (e.g. "variants.lua", resolved
 * on the search path) with nargs string arguments. */
qjit_status qjit__lua_call(qjit__lua *L, const char *module, const char *fn, int nargs,
                           const char *const *args, qjit__lua_result *out);
void qjit__lua_result_release(qjit__lua *L, qjit__lua_result *r);
/* Looks up a field of a table result; NULL if absent. */
const char *qjit__lua_result_get(const qjit__lua_result *r, const char *field);

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
