/* context.c -- creating and destroying a context; its lazily made parts
 * (driver, Lua VM) are reached through the helpers at the end. */
#define _GNU_SOURCE
#include "context.h"
#include "core.h"

#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <errno.h>
#include <pwd.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef QJIT_BUILTIN_TEMPLATES
#define QJIT_BUILTIN_TEMPLATES "templates"
#endif

void qjit_context_options_init(qjit_context_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
}

static void log_to_stderr(void *ud, const char *line)
{
    (void)ud;
    fprintf(stderr, "qjit: %s\n", line);
}

/* Accepts "sm_90a", "90a", "compute_90a", "SM_86" and writes "sm_90a";
 * returns 0 if the text is not an architecture name. */
int qjit__normalize_arch(const char *in, char out[16])
{
    const char *p = in;
    if (!strncasecmp(p, "sm_", 3))
        p += 3;
    else if (!strncasecmp(p, "compute_", 8))
        p += 8;
    else if (!strncasecmp(p, "sm", 2))
        p += 2;
    if (!isdigit((unsigned char)p[0]) || !isdigit((unsigned char)p[1]))
        return 0;
    size_t digits = 0;
    while (isdigit((unsigned char)p[digits]))
        digits++;
    if (digits > 3)
        return 0;
    char suffix = (char)tolower((unsigned char)p[digits]);
    if (suffix && ((suffix != 'a' && suffix != 'f') || p[digits + 1]))
        return 0;
    snprintf(out, 16, "sm_%.*s%s", (int)digits, p, suffix == 'a' ? "a" : suffix == 'f' ? "f" : "");
    return 1;
}

/* A random 64-bit start for the context's epochs (lib/gemm.lua's
 * token_wait): the kernel's randomness, else the clock, pid and address. */
static unsigned long long random_epoch(const void *salt)
{
    unsigned long long v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        v = ((unsigned long long)t.tv_sec << 32) ^ (unsigned long long)t.tv_nsec ^
            ((unsigned long long)getpid() << 16) ^ (unsigned long long)(uintptr_t)salt;
        v ^= v >> 29;
        v *= 0xBF58476D1CE4E5B9ull;
        v ^= v >> 32;
    }
    return v;
}

/* base + "/" + suffix, without doubling a trailing '/' of base. */
static char *join_path(qjit_context *ctx, const char *base, const char *suffix)
{
    size_t n = strlen(base);
    while (n > 1 && base[n - 1] == '/')
        n--;
    if (n == 1 && base[0] == '/')
        return qjit__printf(ctx, "/%s", suffix);
    return qjit__printf(ctx, "%.*s/%s", (int)n, base, suffix);
}

/* $HOME is unset: the home folder of the effective user, from the password
 * database (the reentrant call: no static buffers). */
static qjit_status home_from_passwd(qjit_context *ctx, char **out)
{
    long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
    size_t size = hint > 0 ? (size_t)hint : 1024;
    for (;;) {
        char *buf = qjit__alloc(ctx, size);
        if (!buf)
            return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory looking up the home folder");
        struct passwd pw, *found = NULL;
        int rc = getpwuid_r(geteuid(), &pw, buf, size, &found);
        if (rc == ERANGE && size < ((size_t)1 << 20)) {
            qjit__free(ctx, buf, size);
            size *= 2;
            continue;
        }
        qjit_status s = QJIT_OK;
        if (rc == 0 && found && found->pw_dir && found->pw_dir[0]) {
            *out = join_path(ctx, found->pw_dir, ".cache/qjit");
            if (!*out)
                s = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory building the cache folder path");
        } else {
            s = qjit__error(ctx, QJIT_CACHE,
                            "cannot choose a cache folder: QJIT_CACHE_DIR, XDG_CACHE_HOME and HOME "
                            "are unset and user %lu has no home folder. Fix: set QJIT_CACHE_DIR",
                            (unsigned long)geteuid());
        }
        qjit__free(ctx, buf, size);
        return s;
    }
}

qjit_status qjit__cache_resolve_dir(qjit_context *ctx, const char *configured, char **out)
{
    if (!out)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit__cache_resolve_dir: out is NULL");
    *out = NULL;
    const char *v;
    if (configured && configured[0])
        *out = qjit__strdup(ctx, configured);
    else if ((v = getenv("QJIT_CACHE_DIR")) && v[0])
        *out = qjit__strdup(ctx, v);
    else if ((v = getenv("XDG_CACHE_HOME")) && v[0] == '/')   /* XDG: relative is invalid */
        *out = join_path(ctx, v, "qjit");
    else if ((v = getenv("HOME")) && v[0])
        *out = join_path(ctx, v, ".cache/qjit");
    else
        return home_from_passwd(ctx, out);
    if (!*out)
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory building the cache folder path");
    return QJIT_OK;
}

/* QJIT_CACHE_MAX_MB: unset or empty, no bound; else a whole number of MB,
 * 1 .. 2^40, in decimal digits. "abc", "-1", "0.5", "1MB", "0" or a value
 * that would wrap are refused with a message, not read as "no limit". */
static qjit_status cache_bound(qjit_context *ctx, const char *text, uint64_t *bytes)
{
    *bytes = 0;
    if (!text || !*text)
        return QJIT_OK;
    uint64_t mb = 0;
    const char *p = text;
    for (; *p >= '0' && *p <= '9' && mb <= ((uint64_t)1 << 40); p++)
        mb = mb * 10 + (uint64_t)(*p - '0');
    if (*p || mb == 0 || mb > ((uint64_t)1 << 40))
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "QJIT_CACHE_MAX_MB='%s' is not a cache bound: give a whole "
                           "number of MB from 1 to %llu in decimal digits, or leave it unset for no bound", text,
                           (unsigned long long)1 << 40);
    *bytes = mb << 20;
    return QJIT_OK;
}

/* The templates installed with the binary that holds this code (the shared
 * library, or a program linked with the static one): <its folder>/<the
 * install layout's path from lib/ or bin/ to share/qjit/templates>, where
 * that folder has a dispatch.lua. 0 if there is none (a build tree: the
 * source tree's templates are the built-in ones). */
static int installed_templates(char *out, size_t size)
{
    static const char *const rel[] = {QJIT_TEMPLATES_FROM_LIB, QJIT_TEMPLATES_FROM_BIN};
    Dl_info info;
    char self[PATH_MAX];
    if (!dladdr((void *)&installed_templates, &info) || !info.dli_fname || !realpath(info.dli_fname, self))
        return 0;
    char *slash = strrchr(self, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char probe[PATH_MAX + 64], dir[PATH_MAX];
        snprintf(probe, sizeof probe, "%s/%s/dispatch.lua", self, rel[i]);
        if (access(probe, R_OK) == 0 && realpath(probe, dir)) {
            *strrchr(dir, '/') = '\0';
            if (strlen(dir) < size) {
                memcpy(out, dir, strlen(dir) + 1);
                return 1;
            }
        }
    }
    return 0;
}

qjit_status qjit_context_create(const qjit_context_options *opts_in, qjit_context **out)
{
    if (!out) {
        qjit__set_create_error("qjit_context_create: out is NULL");
        return QJIT_INVALID_ARGUMENT;
    }
    *out = NULL;
    qjit_context_options opts;
    qjit_context_options_init(&opts);
    if (opts_in) {
        if (opts_in->struct_size == 0 || opts_in->struct_size > sizeof opts) {
            qjit__set_create_error("qjit_context_create: opts->struct_size is not that of a qjit_context_options "
                                   "(call qjit_context_options_init first)");
            return QJIT_INVALID_ARGUMENT;
        }
        memcpy(&opts, opts_in, opts_in->struct_size);
    }
    qjit_context *ctx = opts.host_realloc ? opts.host_realloc(opts.host_ud, NULL, 0, sizeof *ctx)
                                          : malloc(sizeof *ctx);
    if (!ctx) {
        qjit__set_create_error("out of host memory for the context");
        return QJIT_OUT_OF_MEMORY;
    }
    memset(ctx, 0, sizeof *ctx);
    pthread_mutex_init(&ctx->error_lock, NULL);
    pthread_mutex_init(&ctx->lock, NULL);
    atomic_init(&ctx->epoch, random_epoch(ctx));
    ctx->host_realloc = opts.host_realloc;
    ctx->host_ud = opts.host_ud;
    ctx->device_allocator = opts.device_allocator;
    ctx->log = opts.log;
    ctx->log_ud = opts.log_ud;
    const char *log_env = getenv("QJIT_LOG");
    if (!ctx->log && log_env && !strcmp(log_env, "1"))
        ctx->log = log_to_stderr;
    ctx->device_ordinal = opts.device;
    ctx->line_info = opts.line_info;

    qjit_status st = QJIT_OK;
    const char *arch = opts.arch ? opts.arch : getenv("QJIT_ARCH");
    if (arch && *arch && !qjit__normalize_arch(arch, ctx->arch)) {
        st = qjit__error(ctx, QJIT_UNSUPPORTED_ARCH, "'%s' is not an architecture name "
                         "(expected e.g. sm_80, sm_86, sm_89, sm_90, sm_90a)", arch);
        goto fail;
    }
    if ((st = qjit__cache_resolve_dir(ctx, opts.cache_dir, &ctx->cache_dir)) != QJIT_OK)
        goto fail;
    if ((st = cache_bound(ctx, getenv("QJIT_CACHE_MAX_MB"), &ctx->cache_max_bytes)) != QJIT_OK)
        goto fail;
    const char *user = opts.template_path ? opts.template_path : getenv("QJIT_TEMPLATE_PATH");
    char installed[PATH_MAX];
    const char *builtin = getenv("QJIT_BUILTIN_TEMPLATES");
    if (!builtin || !*builtin)
        builtin = installed_templates(installed, sizeof installed) ? installed : QJIT_BUILTIN_TEMPLATES;
    ctx->template_path = user && *user ? qjit__printf(ctx, "%s:%s", user, builtin)
                                       : qjit__strdup(ctx, builtin);
    if (!ctx->template_path) {
        st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of host memory for the template path");
        goto fail;
    }
    qjit__set_create_error("");
    *out = ctx;
    return QJIT_OK;
fail:
    /* The message outlives the context: qjit_last_error(NULL). */
    qjit__keep_create_error(ctx);
    qjit_context_destroy(ctx);
    return st;
}

qjit_status qjit__context_twin(qjit_context *ctx, qjit_context **out)
{
    qjit_context_options o;
    qjit_context_options_init(&o);
    o.device = ctx->device_ordinal;
    o.cache_dir = ctx->cache_dir;
    o.template_path = "";        /* replaced by ctx's whole path below */
    o.arch = ctx->arch[0] ? ctx->arch : NULL;
    o.host_realloc = ctx->host_realloc;
    o.host_ud = ctx->host_ud;
    o.device_allocator = ctx->device_allocator;
    o.log = ctx->log;
    o.log_ud = ctx->log_ud;
    o.line_info = ctx->line_info;
    qjit_status st = qjit_context_create(&o, out);
    if (st)
        return qjit__error(ctx, st, "%s", qjit_last_error(NULL));
    char *path = qjit__strdup(*out, ctx->template_path);
    if (!path) {
        qjit_context_destroy(*out);
        *out = NULL;
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    }
    qjit__strfree(*out, (*out)->template_path);
    (*out)->template_path = path;
    return QJIT_OK;
}

void qjit_context_destroy(qjit_context *ctx)
{
    if (!ctx)
        return;
    if (ctx->modules_release)
        ctx->modules_release(ctx);
    if (ctx->lua_release)
        ctx->lua_release(ctx->lua);
    qjit__driver_release(&ctx->driver);
    qjit__strfree(ctx, ctx->cache_dir);
    qjit__strfree(ctx, ctx->template_path);
    pthread_mutex_destroy(&ctx->lock);
    pthread_mutex_destroy(&ctx->error_lock);
    if (ctx->host_realloc)
        ctx->host_realloc(ctx->host_ud, ctx, sizeof *ctx, 0);
    else
        free(ctx);
}

const char *qjit_context_templates(const qjit_context *ctx)
{
    return ctx && ctx->template_path ? ctx->template_path : "";
}

const char *qjit_context_cache_dir(const qjit_context *ctx)
{
    return ctx && ctx->cache_dir ? ctx->cache_dir : "";
}

/* Caller holds ctx->lock. */
qjit_status qjit__context_driver(qjit_context *ctx)
{
    qjit_status st = qjit__driver_init(ctx, &ctx->driver, ctx->device_ordinal);
    if (st)
        return st;
    return qjit__driver_bind(ctx, &ctx->driver);
}

qjit_status qjit__context_arch_locked(qjit_context *ctx, char arch[16])
{
    if (!ctx->arch[0]) {
        qjit_status st = qjit__context_driver(ctx);
        if (st) {
            qjit__error_append(ctx, "\nNo target architecture: name one (--arch sm_90a, QJIT_ARCH, "
                               "or the context's arch option) to compile without a GPU");
            return st;
        }
        const qjit__driver *d = &ctx->driver;
        /* Hopper's own instructions (wgmma, setmaxnreg) need the "a" target. */
        snprintf(ctx->arch, sizeof ctx->arch, "sm_%d%d%s", d->cc_major, d->cc_minor,
                 d->cc_major == 9 ? "a" : "");
    }
    memcpy(arch, ctx->arch, 16);
    return QJIT_OK;
}

qjit_status qjit_context_arch(qjit_context *ctx, char *buf, size_t size)
{
    if (!ctx || !buf || size == 0)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_context_arch: NULL argument");
    char arch[16];
    pthread_mutex_lock(&ctx->lock);
    qjit_status st = qjit__context_arch_locked(ctx, arch);
    pthread_mutex_unlock(&ctx->lock);
    if (st)
        return st;
    if (strlen(arch) >= size)
        return qjit__error(ctx, QJIT_OVERFLOW, "qjit_context_arch: buffer too small");
    memcpy(buf, arch, strlen(arch) + 1);
    return QJIT_OK;
}
