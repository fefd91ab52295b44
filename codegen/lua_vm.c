/* lua_vm.c -- the embedded Lua VM that runs templates; see lua_vm.h.
 *
 * The VM allocates through the context's allocator. The template engine
 * itself is Lua (engine.lua, embedded as qjit__engine_lua); this file gives it
 * one way to reach files, host.read(name), which only resolves relative names
 * on the search path, and converts results and errors for C. Every Lua call
 * that could raise runs under lua_pcall, so the VM never panics. */
#define _POSIX_C_SOURCE 200809L
#include "lua_vm.h"
#include "context.h"
#include "core.h"
#include "hash.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

extern const char qjit__engine_lua[];
extern const unsigned long qjit__engine_lua_len;

struct qjit__lua {
    qjit_context *ctx;
    lua_State *L;
    char *search_path;
    char engine_hash[65];
    /* A call ran out of memory: Lua's own state may be half-made (a
     * metatable registered before its methods were set, and every later
     * call fails on it), so the next call starts a fresh VM. */
    int poisoned;
};

/* Registry keys (their addresses; the values are never written). */
static const char engine_key = 'e';
static const char fail_key = 'f';

/* Longest path a template file may have, and the largest file read. */
#define QJIT__PATH_MAX 4096
#define QJIT__FILE_MAX ((size_t)64 << 20)

/*------------------------------------------------------------------------
 * Files: names, search path, hashing (plain C, no Lua)
 *------------------------------------------------------------------------*/

/* NULL if name is an acceptable relative name, else why not. */
static const char *name_problem(const char *name, size_t len)
{
    if (len == 0)
        return "empty file name";
    if (strlen(name) != len)
        return "file name holds a NUL byte";
    if (name[0] == '/')
        return "absolute file names are not allowed";
    for (const char *p = name; *p;) {
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return "'..' is not allowed in file names";
        p += n;
        if (*p == '/')
            p++;
    }
    return NULL;
}

/* Writes the path of the first folder of search_path holding name into buf.
 * Returns QJIT_OK, QJIT_NOT_FOUND or QJIT_OVERFLOW (a path too long). */
static qjit_status resolve(const char *search_path, const char *name, char *buf, size_t cap)
{
    size_t name_len = strlen(name);
    const char *p = search_path ? search_path : "";
    int too_long = 0;
    while (*p) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > 0) {
            size_t dir_len = n;
            while (dir_len > 1 && p[dir_len - 1] == '/')
                dir_len--;
            int slash = p[dir_len - 1] != '/';
            if (dir_len + (size_t)slash + name_len + 1 > cap) {
                too_long = 1;
            } else {
                memcpy(buf, p, dir_len);
                if (slash)
                    buf[dir_len] = '/';
                memcpy(buf + dir_len + slash, name, name_len + 1);
                struct stat sb;
                if (stat(buf, &sb) == 0 && S_ISREG(sb.st_mode))
                    return QJIT_OK;
            }
        }
        p += n;
        if (*p == ':')
            p++;
    }
    buf[0] = '\0';
    return too_long ? QJIT_OVERFLOW : QJIT_NOT_FOUND;
}

qjit_status qjit__template_resolve(qjit_context *ctx, const char *search_path, const char *name,
                                   char **path)
{
    if (!path)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "template resolve: path is NULL");
    *path = NULL;
    if (!name)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "template resolve: name is NULL");
    const char *why = name_problem(name, strlen(name));
    if (why)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "template file '%s': %s", name, why);
    char buf[QJIT__PATH_MAX];
    qjit_status st = resolve(search_path, name, buf, sizeof buf);
    if (st == QJIT_OVERFLOW)
        return qjit__error(ctx, QJIT_NOT_FOUND,
                           "template file '%s' not found on search path '%s' (some paths too long)",
                           name, search_path ? search_path : "");
    if (st != QJIT_OK)
        return qjit__error(ctx, QJIT_NOT_FOUND, "template file '%s' not found on search path '%s'",
                           name, search_path ? search_path : "");
    *path = qjit__strdup(ctx, buf);
    if (!*path)
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory resolving '%s'", name);
    return QJIT_OK;
}

qjit_status qjit__file_sha256(qjit_context *ctx, const char *path, char hex[65])
{
    if (!path || !hex)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "file sha256: path or hex is NULL");
    hex[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f)
        return qjit__error(ctx, errno == ENOENT ? QJIT_NOT_FOUND : QJIT_IO, "cannot open '%s': %s",
                           path, strerror(errno));
    qjit__sha256 s;
    qjit__sha256_init(&s);
    unsigned char chunk[16384];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        qjit__sha256_update(&s, chunk, n);
    int failed = ferror(f);
    fclose(f);
    if (failed)
        return qjit__error(ctx, QJIT_IO, "cannot read '%s'", path);
    uint8_t digest[32];
    qjit__sha256_final(&s, digest);
    qjit__hex(digest, sizeof digest, hex);
    return QJIT_OK;
}

/*------------------------------------------------------------------------
 * What Lua sees of the host
 *------------------------------------------------------------------------*/

static void *lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    qjit_context *ctx = ud;
    if (nsize == 0) {
        qjit__free(ctx, ptr, ptr ? osize : 0);
        return NULL;
    }
    /* For a new block Lua passes the object type in osize, not a size. */
    return qjit__realloc(ctx, ptr, ptr ? osize : 0, nsize);
}

/* host.read(name) -> text, path, sha256 hex; or nil, message. */
static int l_read(lua_State *L)
{
    const qjit__lua *q = lua_touserdata(L, lua_upvalueindex(1));
    size_t len;
    const char *name = luaL_checklstring(L, 1, &len);
    const char *why = name_problem(name, len);
    if (why) {
        lua_pushnil(L);
        lua_pushfstring(L, "template file '%s': %s", name, why);
        return 2;
    }
    char path[QJIT__PATH_MAX];
    if (resolve(q->search_path, name, path, sizeof path) != QJIT_OK) {
        lua_pushnil(L);
        lua_pushfstring(L, "template file '%s' not found on search path '%s'", name, q->search_path);
        return 2;
    }
    struct stat sb;
    if (stat(path, &sb) != 0 || sb.st_size < 0 || (size_t)sb.st_size > QJIT__FILE_MAX) {
        lua_pushnil(L);
        lua_pushfstring(L, "template file '%s' unreadable or larger than 64 MiB", path);
        return 2;
    }
    /* The buffer comes first: between fopen and fclose nothing may raise. */
    size_t size = (size_t)sb.st_size;
    luaL_Buffer b;
    char *data = luaL_buffinitsize(L, &b, size + 1);
    FILE *f = fopen(path, "rb");
    if (!f) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot open '%s': %s", path, strerror(errno));
        return 2;
    }
    size_t n = fread(data, 1, size, f);
    int failed = ferror(f);
    fclose(f);
    if (failed) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot read '%s'", path);
        return 2;
    }
    char hex[65];
    qjit__sha256_hex(data, n, hex);
    luaL_pushresultsize(&b, n);
    lua_pushstring(L, path);
    lua_pushstring(L, hex);
    return 3;
}

/* host.where() -> "path:line: " of the innermost Lua function outside the
 * engine (a template or module line), or "". Full paths, unlike short_src. */
static int l_where(lua_State *L)
{
    lua_Debug ar;
    for (int level = 1; lua_getstack(L, level, &ar); level++) {
        lua_getinfo(L, "Sl", &ar);
        if (ar.currentline > 0 && ar.source[0] == '@') {
            lua_pushfstring(L, "%s:%d: ", ar.source + 1, ar.currentline);
            return 1;
        }
    }
    lua_pushliteral(L, "");
    return 1;
}

/* Opens the standard libraries the engine needs (no io, os, package, debug,
 * coroutine) and runs engine.lua with the host table. */
static int open_protected(lua_State *L)
{
    qjit__lua *q = lua_touserdata(L, 1);
    static const luaL_Reg libs[] = {
        {LUA_GNAME, luaopen_base},         {LUA_STRLIBNAME, luaopen_string},
        {LUA_TABLIBNAME, luaopen_table},   {LUA_MATHLIBNAME, luaopen_math},
        {LUA_UTF8LIBNAME, luaopen_utf8},
    };
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        luaL_requiref(L, libs[i].name, libs[i].func, 1);
        lua_pop(L, 1);
    }
    static const char *const unsafe[] = {"dofile", "loadfile", "print", "collectgarbage"};
    for (size_t i = 0; i < sizeof unsafe / sizeof unsafe[0]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, unsafe[i]);
    }

    if (luaL_loadbuffer(L, qjit__engine_lua, qjit__engine_lua_len, "=engine.lua") != LUA_OK)
        return lua_error(L);
    lua_createtable(L, 0, 4);
    lua_pushlightuserdata(L, q);
    lua_pushcclosure(L, l_read, 1);
    lua_setfield(L, -2, "read");
    lua_pushcfunction(L, l_where);
    lua_setfield(L, -2, "where");
    lua_newtable(L);
#define QJIT__STATUS_SET(name, value, text) \
    lua_pushboolean(L, 1);                  \
    lua_setfield(L, -2, #name);
    QJIT_STATUS_MAP(QJIT__STATUS_SET)
#undef QJIT__STATUS_SET
    lua_setfield(L, -2, "statuses");
    lua_pushinteger(L, LUA_IDSIZE);
    lua_setfield(L, -2, "idsize");
    lua_call(L, 1, 1);

    if (!lua_istable(L, -1))
        return luaL_error(L, "engine.lua returned no table");
    if (lua_getfield(L, -1, "call") != LUA_TFUNCTION ||
        lua_getfield(L, -2, "full_message") != LUA_TFUNCTION ||
        lua_getfield(L, -3, "fail_mt") != LUA_TTABLE)
        return luaL_error(L, "engine.lua lacks call, full_message or fail_mt");
    lua_rawsetp(L, LUA_REGISTRYINDEX, &fail_key);
    lua_pop(L, 2);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &engine_key);
    return 0;
}

qjit_status qjit__lua_open(qjit_context *ctx, const char *search_path, qjit__lua **out)
{
    if (!out)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "lua open: out is NULL");
    *out = NULL;
    qjit__lua *q = qjit__calloc(ctx, sizeof *q);
    if (!q)
        goto oom;
    q->ctx = ctx;
    q->search_path = qjit__strdup(ctx, search_path ? search_path : "");
    if (!q->search_path)
        goto oom;
    qjit__sha256_hex(qjit__engine_lua, qjit__engine_lua_len, q->engine_hash);
    q->L = lua_newstate(lua_alloc, ctx);
    if (!q->L)
        goto oom;
    lua_pushcfunction(q->L, open_protected);
    lua_pushlightuserdata(q->L, q);
    int rc = lua_pcall(q->L, 1, 0, 0);
    if (rc != LUA_OK) {
        qjit_status st = rc == LUA_ERRMEM ? QJIT_OUT_OF_MEMORY : QJIT_INTERNAL;
        qjit__error(ctx, st, "cannot start the template engine: %s", lua_tostring(q->L, -1));
        qjit__lua_close(q);
        return st;
    }
    *out = q;
    return QJIT_OK;
oom:
    qjit__lua_close(q);
    return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory starting the template engine");
}

void qjit__lua_close(qjit__lua *q)
{
    if (!q)
        return;
    if (q->L)
        lua_close(q->L);
    qjit__strfree(q->ctx, q->search_path);
    qjit__free(q->ctx, q, sizeof *q);
}

const char *qjit__lua_engine_hash(qjit__lua *q) { return q ? q->engine_hash : NULL; }

/*------------------------------------------------------------------------
 * Calls
 *------------------------------------------------------------------------*/

/* Is the value at idx an error object raised by fail()? */
static int is_fail(lua_State *L, int idx)
{
    if (!lua_istable(L, idx) || !lua_getmetatable(L, idx))
        return 0;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &fail_key);
    int same = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return same;
}

/* Message handler: fail() objects pass through; anything else becomes its
 * message (long file names restored) plus a traceback. */
static int message_handler(lua_State *L)
{
    if (is_fail(L, 1))
        return 1;
    const char *msg = lua_tostring(L, 1);
    if (!msg) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            msg = lua_tostring(L, -1);
        else
            msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    lua_rawgetp(L, LUA_REGISTRYINDEX, &engine_key);
    lua_getfield(L, -1, "full_message");
    lua_pushstring(L, msg);
    lua_call(L, 1, 1);
    luaL_traceback(L, L, lua_tostring(L, -1), 1);
    return 1;
}

typedef struct call_request {
    qjit__lua *q;
    const char *module, *fn;
    int nargs;
    const char *const *strs;     /* string arguments, or */
    const qjit__lua_arg *args;   /* typed ones */
    qjit__lua_read_fn read;      /* NULL: a text call */
    void *ud;
    qjit_status read_status;
} call_request;

/* engine.call(module, fn, args...) -> result, files; then, for a typed
 * call, the reader -- inside the protected call, so that a memory error
 * while reading unwinds to lua_pcall. */
static int call_protected(lua_State *L)
{
    call_request *r = lua_touserdata(L, 1);
    luaL_checkstack(L, r->nargs + 4, "too many template arguments");
    lua_rawgetp(L, LUA_REGISTRYINDEX, &engine_key);
    lua_getfield(L, -1, "call");
    lua_pushstring(L, r->module);
    lua_pushstring(L, r->fn);
    for (int i = 0; i < r->nargs; i++) {
        if (r->strs)
            lua_pushstring(L, r->strs[i] ? r->strs[i] : "");
        else if (r->args[i].type == 'i')
            lua_pushinteger(L, (lua_Integer)r->args[i].i);
        else
            lua_pushstring(L, r->args[i].s ? r->args[i].s : "");
    }
    lua_call(L, r->nargs + 2, 2);
    if (r->read) {
        if (!lua_istable(L, -2))
            return luaL_error(L, "%s: %s() returned a %s; expected a table", r->module, r->fn, luaL_typename(L, -2));
        qjit__rec root = {r->q, lua_absindex(L, -2), ""};
        snprintf(root.what, sizeof root.what, "%s %s()", r->module, r->fn);
        r->read_status = r->read(&root, r->ud);
    } else if (lua_type(L, -2) != LUA_TSTRING) {
        return luaL_error(L, "%s: %s() returned a %s; expected a string", r->module, r->fn, luaL_typename(L, -2));
    }
    return 2;
}

/* Reports a failed call; the error object is on top of the stack. */
static qjit_status call_error(qjit__lua *q, int rc)
{
    lua_State *L = q->L;
    if (rc == LUA_ERRMEM)
        return qjit__error(q->ctx, QJIT_OUT_OF_MEMORY, "out of memory in the template engine");
    if (is_fail(L, -1)) {
        lua_rawgeti(L, -1, 1);
        lua_rawgeti(L, -2, 2);
        const char *name = lua_tostring(L, -2), *msg = lua_tostring(L, -1);
        qjit_status st = QJIT_TEMPLATE;
#define QJIT__STATUS_MATCH(sname, value, text) \
        if (name && strcmp(name, #sname) == 0) \
            st = QJIT_##sname;
        QJIT_STATUS_MAP(QJIT__STATUS_MATCH)
#undef QJIT__STATUS_MATCH
        if (st == QJIT_OK)
            st = QJIT_TEMPLATE;
        return qjit__error(q->ctx, st, "%s", msg ? msg : "(no message)");
    }
    const char *msg = lua_tostring(L, -1);
    return qjit__error(q->ctx, QJIT_TEMPLATE, "%s", msg ? msg : "(error object is not a string)");
}

static char *copy_string(qjit_context *ctx, lua_State *L, int idx)
{
    const char *s = lua_tostring(L, idx);
    return s ? qjit__strdup(ctx, s) : NULL;
}

/* Copies the text result (at -2, if text) and the files list (at -1) into
 * out. Raises no Lua error: only raw reads of values the engine built. */
static qjit_status copy_result(qjit__lua *q, int text, qjit__lua_result *out)
{
    lua_State *L = q->L;
    qjit_context *ctx = q->ctx;
    if (text) {
        size_t len;
        const char *s = lua_tolstring(L, -2, &len);
        out->text = qjit__alloc(ctx, len + 1);
        if (!out->text)
            return QJIT_OUT_OF_MEMORY;
        memcpy(out->text, s, len);
        out->text[len] = '\0';
        out->text_len = len;
    }
    size_t nfiles = lua_rawlen(L, -1) / 3;
    if (nfiles > 0) {
        out->files = qjit__calloc(ctx, nfiles * sizeof *out->files);
        if (!out->files)
            return QJIT_OUT_OF_MEMORY;
        out->nfiles = nfiles;
    }
    for (size_t i = 0; i < nfiles; i++) {
        qjit__lua_file *f = &out->files[i];
        lua_rawgeti(L, -1, (lua_Integer)(3 * i + 1));
        lua_rawgeti(L, -2, (lua_Integer)(3 * i + 2));
        lua_rawgeti(L, -3, (lua_Integer)(3 * i + 3));
        f->name = copy_string(ctx, L, -3);
        f->path = copy_string(ctx, L, -2);
        const char *hash = lua_tostring(L, -1);
        snprintf(f->hash, sizeof f->hash, "%s", hash ? hash : "");
        lua_pop(L, 3);
        if (!f->name || !f->path)
            return QJIT_OUT_OF_MEMORY;
    }
    return QJIT_OK;
}

/* Runs a request; on success copies what out asks for (text and files). */
static qjit_status run(qjit__lua *q, call_request *req, qjit__lua_result *out)
{
    lua_State *L = q->L;
    int top = lua_gettop(L);
    if (!lua_checkstack(L, 8)) {
        q->poisoned = 1;
        return qjit__error(q->ctx, QJIT_OUT_OF_MEMORY, "out of memory in the template engine");
    }
    req->q = q;
    req->read_status = QJIT_OK;
    lua_pushcfunction(L, message_handler);
    lua_pushcfunction(L, call_protected);
    lua_pushlightuserdata(L, req);
    int rc = lua_pcall(L, 1, 2, top + 1);
    qjit_status st;
    if (rc != LUA_OK) {
        st = call_error(q, rc);
    } else if (req->read_status != QJIT_OK) {
        st = req->read_status;
    } else if (out) {
        st = copy_result(q, req->read == NULL, out);
        if (st != QJIT_OK) {
            qjit__lua_result_release(q, out);
            qjit__error(q->ctx, st, "out of memory copying the result of %s:%s", req->module, req->fn);
        }
    } else {
        st = QJIT_OK;
    }
    if (st == QJIT_OUT_OF_MEMORY)
        q->poisoned = 1;
    lua_settop(L, top);
    return st;
}

qjit_status qjit__lua_call(qjit__lua *q, const char *module, const char *fn, int nargs,
                           const char *const *args, qjit__lua_result *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!q || !module || !fn || !out || nargs < 0 || (nargs > 0 && !args))
        return qjit__error(q ? q->ctx : NULL, QJIT_INVALID_ARGUMENT,
                           "lua call: NULL argument or negative nargs");
    call_request req = {q, module, fn, nargs, args, NULL, NULL, NULL, QJIT_OK};
    return run(q, &req, out);
}

qjit_status qjit__lua_invoke(qjit__lua *q, const char *module, const char *fn, const qjit__lua_arg *args, int nargs,
                             qjit__lua_read_fn read, void *ud, qjit__lua_result *files)
{
    if (files)
        memset(files, 0, sizeof *files);
    if (!q || !module || !fn || !read || nargs < 0 || (nargs > 0 && !args))
        return qjit__error(q ? q->ctx : NULL, QJIT_INVALID_ARGUMENT,
                           "lua invoke: NULL argument or negative nargs");
    call_request req = {q, module, fn, nargs, NULL, args, read, ud, QJIT_OK};
    return run(q, &req, files);
}

void qjit__lua_result_release(qjit__lua *q, qjit__lua_result *r)
{
    if (!r)
        return;
    qjit_context *ctx = q ? q->ctx : NULL;
    if (r->text)
        qjit__free(ctx, r->text, r->text_len + 1);
    for (size_t i = 0; i < r->nfiles; i++) {
        qjit__strfree(ctx, r->files[i].name);
        qjit__strfree(ctx, r->files[i].path);
    }
    if (r->files)
        qjit__free(ctx, r->files, r->nfiles * sizeof *r->files);
    memset(r, 0, sizeof *r);
}

/*------------------------------------------------------------------------
 * Typed reads of a result table (inside the protected call)
 *------------------------------------------------------------------------*/

/* Pushes t[field] (raw: no metamethods run); returns its type. */
static int push_field(qjit__rec *t, const char *field)
{
    lua_State *L = t->q->L;
    lua_pushstring(L, field);
    return lua_rawget(L, t->idx);
}

static qjit_status rec_error(qjit__rec *t, const char *field, const char *fmt, ...) QJIT__PRINTF(3, 4);
static qjit_status rec_error(qjit__rec *t, const char *field, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return qjit__error(t->q->ctx, QJIT_TEMPLATE, "%s: field '%s' %s", t->what, field, why);
}

static qjit_status int_at_top(qjit__rec *t, const char *field, long long lo, long long hi, long long *out)
{
    lua_State *L = t->q->L;
    int isint = 0;
    lua_Integer v = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &isint) : 0;
    if (!isint) {
        qjit_status st = rec_error(t, field, "is a %s, not an integer", luaL_typename(L, -1));
        lua_pop(L, 1);
        return st;
    }
    lua_pop(L, 1);
    if (v < lo || v > hi)
        return rec_error(t, field, "= %lld is outside [%lld, %lld]", (long long)v, lo, hi);
    *out = (long long)v;
    return QJIT_OK;
}

qjit_status qjit__rec_int(qjit__rec *t, const char *field, long long lo, long long hi, long long *out)
{
    push_field(t, field);
    return int_at_top(t, field, lo, hi, out);
}

qjit_status qjit__rec_int_or(qjit__rec *t, const char *field, long long lo, long long hi, long long dflt,
                             long long *out)
{
    if (push_field(t, field) == LUA_TNIL) {
        lua_pop(t->q->L, 1);
        *out = dflt;
        return QJIT_OK;
    }
    return int_at_top(t, field, lo, hi, out);
}

qjit_status qjit__rec_str(qjit__rec *t, const char *field, const char **s, size_t *len)
{
    lua_State *L = t->q->L;
    int type = push_field(t, field);
    if (type != LUA_TSTRING) {
        lua_pop(L, 1);
        return rec_error(t, field, "is a %s, not a string", lua_typename(L, type));
    }
    size_t n;
    const char *v = lua_tolstring(L, -1, &n);
    /* The table still holds the string, so it outlives the pop. */
    lua_pop(L, 1);
    if (strlen(v) != n)
        return rec_error(t, field, "holds a NUL byte");
    *s = v;
    if (len)
        *len = n;
    return QJIT_OK;
}

qjit_status qjit__rec_strcpy(qjit__rec *t, const char *field, char *buf, size_t size)
{
    const char *s = NULL;   /* set on success (GCC -O2 cannot see that the errors are nonzero) */
    size_t n = 0;
    qjit_status st = qjit__rec_str(t, field, &s, &n);
    if (st)
        return st;
    if (n >= size)
        return rec_error(t, field, "is %zu bytes long; at most %zu fit", n, size - 1);
    memcpy(buf, s, n + 1);
    return QJIT_OK;
}

qjit_status qjit__rec_strdup(qjit__rec *t, const char *field, char **out)
{
    const char *s = NULL;
    qjit_status st = qjit__rec_str(t, field, &s, NULL);
    if (st)
        return st;
    if (!(*out = qjit__strdup(t->q->ctx, s)))
        return qjit__error(t->q->ctx, QJIT_OUT_OF_MEMORY, "out of memory reading %s", t->what);
    return QJIT_OK;
}

int qjit__rec_has(qjit__rec *t, const char *field)
{
    int type = push_field(t, field);
    lua_pop(t->q->L, 1);
    return type != LUA_TNIL;
}

/* The table now on top becomes *sub (it stays pushed until closed). */
static qjit_status open_top(qjit__rec *t, qjit__rec *sub, const char *name)
{
    lua_State *L = t->q->L;
    if (!lua_istable(L, -1)) {
        const char *type = luaL_typename(L, -1);
        lua_pop(L, 1);
        return rec_error(t, name, "is a %s, not a table", type);
    }
    if (!lua_checkstack(L, 4)) {
        lua_pop(L, 1);
        return qjit__error(t->q->ctx, QJIT_OUT_OF_MEMORY, "out of memory reading %s", t->what);
    }
    sub->q = t->q;
    sub->idx = lua_gettop(L);
    snprintf(sub->what, sizeof sub->what, "%.100s: %.50s", t->what, name);
    return QJIT_OK;
}

qjit_status qjit__rec_table(qjit__rec *t, const char *field, qjit__rec *sub)
{
    push_field(t, field);
    return open_top(t, sub, field);
}

qjit_status qjit__rec_elem(qjit__rec *t, long long i, qjit__rec *sub)
{
    char name[32];
    snprintf(name, sizeof name, "[%lld]", i);
    lua_rawgeti(t->q->L, t->idx, (lua_Integer)i);
    return open_top(t, sub, name);
}

void qjit__rec_close(qjit__rec *sub)
{
    if (sub && sub->q && lua_gettop(sub->q->L) == sub->idx)
        lua_pop(sub->q->L, 1);
}

long long qjit__rec_len(qjit__rec *t) { return (long long)lua_rawlen(t->q->L, t->idx); }

qjit_status qjit__rec_fail(qjit__rec *t, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return qjit__error(t->q->ctx, QJIT_TEMPLATE, "%s: %s", t->what, why);
}

/*------------------------------------------------------------------------
 * The context's VM
 *------------------------------------------------------------------------*/

qjit_status qjit__context_lua(qjit_context *ctx, qjit__lua **L)
{
    if (ctx->lua && ctx->lua->poisoned) {
        qjit__lua_close(ctx->lua);
        ctx->lua = NULL;
    }
    if (!ctx->lua) {
        qjit_status st = qjit__lua_open(ctx, ctx->template_path, &ctx->lua);
        if (st)
            return st;
        ctx->lua_release = qjit__lua_close;
    }
    *L = ctx->lua;
    return QJIT_OK;
}
