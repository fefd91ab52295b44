/* generate.c -- key -> canonical key -> (cache hit | Lua generation -> NVRTC
 * -> cache store). A manifest per (qjit, engine, NVRTC, options, arch,
 * variant) names the template files the variant read; re-hashing those files
 * completes the cache key without running Lua, so a hit costs a few small
 * reads and one verified load. */
#define _GNU_SOURCE
#include "generate.h"
#include "compile.h"
#include "context.h"
#include "core.h"
#include "hash.h"
#include "lua_vm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static qjit_status target_arch(qjit_context *ctx, const char *arch, char out[16])
{
    if (arch && *arch) {
        if (!qjit__normalize_arch(arch, out))
            return qjit__error(ctx, QJIT_UNSUPPORTED_ARCH, "'%s' is not an architecture name "
                               "(expected e.g. sm_80, sm_86, sm_89, sm_90a)", arch);
        return QJIT_OK;
    }
    return qjit__context_arch_locked(ctx, out);
}

qjit_status qjit__canonicalize_locked(qjit_context *ctx, const char *key, const char *arch, char **canon)
{
    *canon = NULL;
    if (!key)
        return qjit__error(ctx, QJIT_INVALID_KEY, "variant key is NULL");
    char target[16] = "";
    /* A key that names its arch needs no target; detection failing is only
     * an error if the key lacks one, which Lua reports. */
    if (target_arch(ctx, arch, target) != QJIT_OK && arch && *arch)
        return QJIT_UNSUPPORTED_ARCH;
    qjit__lua *L;
    qjit_status st = qjit__context_lua(ctx, &L);
    if (st)
        return st;
    const char *args[2] = {key, target};
    qjit__lua_result r;
    if ((st = qjit__lua_call(L, "variants.lua", "canonicalize", 2, args, &r)) != QJIT_OK)
        return st;
    if (!r.text)
        st = qjit__error(ctx, QJIT_TEMPLATE, "variants.lua: canonicalize returned no string");
    else if (!(*canon = qjit__strdup(ctx, r.text)))
        st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    qjit__lua_result_release(L, &r);
    return st;
}

void qjit__key_arch(const char *canon, char arch[16])
{
    const char *a = strstr(canon, "arch=");
    if (a && (a == canon || a[-1] == ';')) {
        size_t len = strcspn(a + 5, ";");
        if (len < 16) {
            memcpy(arch, a + 5, len);
            arch[len] = '\0';
        }
    }
}

int qjit__meta_str(const char *meta, const char *name, char *buf, size_t size)
{
    size_t n = strlen(name);
    for (const char *p = meta; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len > n && !strncmp(p, name, n) && p[n] == '=') {
            size_t vlen = len - n - 1;
            if (vlen >= size)
                return 0;
            memcpy(buf, p + n + 1, vlen);
            buf[vlen] = '\0';
            return 1;
        }
        p = eol ? eol + 1 : NULL;
    }
    return 0;
}

int qjit__meta_int(const char *meta, const char *name, long long *value)
{
    char buf[32], *end;
    if (!qjit__meta_str(meta, name, buf, sizeof buf))
        return 0;
    *value = strtoll(buf, &end, 10);
    return *end == '\0';
}

/* Everything but the template files that changes the binary. */
static char *base_key_text(qjit_context *ctx, qjit__lua *L, const char *arch, const char *canon)
{
    char nvrtc[16], options[512];
    const char *argv[8];
    qjit__nvrtc_version(nvrtc);
    qjit__nvrtc_options(arch, ctx->line_info, argv, options, sizeof options);
    return qjit__printf(ctx, "qjit %s\nengine %s\nnvrtc %s\noptions %s\narch %s\nvariant %s\n",
                        QJIT_VERSION_STRING, qjit__lua_engine_hash(L), nvrtc, options, arch, canon);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* base + "template NAME SHA256" lines, names sorted, hashes of the files the
 * search path resolves now. Returns NULL (no message) if one is missing. */
static char *full_key_text(qjit_context *ctx, const char *base, char **names, size_t n)
{
    qsort(names, n, sizeof *names, cmp_names);
    char *text = qjit__strdup(ctx, base);
    for (size_t i = 0; text && i < n; i++) {
        char *path = NULL, hex[65];
        if (qjit__template_resolve(ctx, ctx->template_path, names[i], &path) != QJIT_OK ||
            qjit__file_sha256(ctx, path, hex) != QJIT_OK) {
            qjit__strfree(ctx, path);
            qjit__strfree(ctx, text);
            return NULL;
        }
        qjit__strfree(ctx, path);
        char *next = qjit__printf(ctx, "%stemplate %s %s\n", text, names[i], hex);
        qjit__strfree(ctx, text);
        text = next;
    }
    return text;
}

/* Splits manifest text (one name per line) in place into names[]. */
static size_t split_lines(char *text, char **names, size_t max)
{
    size_t n = 0;
    for (char *p = text; *p && n < max;) {
        char *eol = strchr(p, '\n');
        if (eol)
            *eol = '\0';
        if (*p)
            names[n++] = p;
        if (!eol)
            break;
        p = eol + 1;
    }
    return n;
}

/* Saves the source of a failed compile where the user can read it. */
static void save_failed_source(qjit_context *ctx, const char *entry, const char *source)
{
    char *dir = qjit__printf(ctx, "%s/failed", ctx->cache_dir);
    char *path = dir ? qjit__printf(ctx, "%s/%.16s.cu", dir, entry) : NULL;
    if (path && (mkdir(dir, 0700) == 0 || errno == EEXIST)) {
        FILE *f = fopen(path, "w");
        if (f) {
            fputs(source, f);
            fclose(f);
            qjit__error_append(ctx, "\ngenerated source saved to %s", path);
        }
    }
    qjit__strfree(ctx, path);
    qjit__strfree(ctx, dir);
}

static char *meta_text(qjit_context *ctx, const qjit__lua_result *r)
{
    char *text = qjit__strdup(ctx, "");
    for (size_t i = 0; text && i < r->nfields; i++) {
        if (!strcmp(r->fields[i], "source"))
            continue;
        char *next = qjit__printf(ctx, "%s%s=%s\n", text, r->fields[i], r->values[i]);
        qjit__strfree(ctx, text);
        text = next;
    }
    return text;
}

static char *plain_copy(qjit_context *ctx, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = qjit__alloc(ctx, n);
    if (p)
        memcpy(p, s, n);
    return p;
}

static void evict_if_bounded(qjit_context *ctx)
{
    const char *max = getenv("QJIT_CACHE_MAX_MB");
    if (max && *max) {
        unsigned long long mb = strtoull(max, NULL, 10);
        if (mb)
            qjit__cache_evict(ctx, ctx->cache_dir, mb << 20, NULL);
    }
}

#define MAX_TEMPLATES 64

qjit_status qjit__build_locked(qjit_context *ctx, const char *key, const char *arch_in,
                               qjit_compile_info *info, qjit__cache_entry *out)
{
    double t0 = qjit__now();
    qjit_compile_info local;
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);
    if (out)
        memset(out, 0, sizeof *out);

    char arch[16];
    qjit_status st = target_arch(ctx, arch_in, arch);
    if (st)
        return st;
    char *canon = NULL, *base = NULL, *manifest = NULL, *keytext = NULL, *meta = NULL;
    void *cubin = NULL;
    size_t cubin_bytes = 0;
    qjit__lua_result r;
    int have_result = 0;
    qjit__lua *L;
    qjit__cache_entry entry = {0};

    if ((st = qjit__canonicalize_locked(ctx, key, arch, &canon)) != QJIT_OK)
        goto done;
    /* The key's own arch wins over the default target. */
    qjit__key_arch(canon, arch);
    if ((st = qjit__nvrtc_check_arch(ctx, arch)) != QJIT_OK)
        goto done;
    if ((st = qjit__context_lua(ctx, &L)) != QJIT_OK)
        goto done;
    if ((st = qjit__cache_open_dir(ctx, ctx->cache_dir)) != QJIT_OK)
        goto done;
    if (!(base = base_key_text(ctx, L, arch, canon))) {
        st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    char base_hex[65], manifest_name[80];
    qjit__sha256_hex(base, strlen(base), base_hex);
    snprintf(manifest_name, sizeof manifest_name, "%s.qjm", base_hex);

    /* Fast path: the manifest names the templates; their current hashes
     * complete the key. */
    st = qjit__cache_read_text(ctx, ctx->cache_dir, manifest_name, &manifest);
    if (st == QJIT_CACHE_INSECURE)
        goto done;
    if (st == QJIT_OK) {
        char *names[MAX_TEMPLATES];
        size_t n = split_lines(manifest, names, MAX_TEMPLATES);
        keytext = n ? full_key_text(ctx, base, names, n) : NULL;
        if (keytext) {
            qjit__cache_entry_name(keytext, info->entry);
            st = qjit__cache_load(ctx, ctx->cache_dir, info->entry, keytext, &entry);
            if (st == QJIT_OK) {
                info->from_cache = 1;
                qjit__cache_touch(ctx, ctx->cache_dir, info->entry);
                goto done;
            }
            if (st == QJIT_CACHE_CORRUPT) {
                qjit__log(ctx, "%s", qjit_last_error(ctx));
                info->healed = 1;
            } else if (st != QJIT_NOT_FOUND) {
                goto done;
            }
        }
        qjit__strfree(ctx, keytext);
        keytext = NULL;
    }

    /* Slow path: generate, compile, store. */
    double tg = qjit__now();
    const char *args[2] = {canon, arch};
    if ((st = qjit__lua_call(L, "variants.lua", "generate", 2, args, &r)) != QJIT_OK)
        goto done;
    have_result = 1;
    info->generate_seconds = qjit__now() - tg;
    const char *src = qjit__lua_result_get(&r, "source");
    const char *name = qjit__lua_result_get(&r, "name");
    if (!src || !name) {
        st = qjit__error(ctx, QJIT_TEMPLATE, "variants.lua: generate returned no source or name for %s", canon);
        goto done;
    }
    char *names[MAX_TEMPLATES];
    size_t n = r.nfiles < MAX_TEMPLATES ? r.nfiles : MAX_TEMPLATES;
    for (size_t i = 0; i < n; i++)
        names[i] = r.files[i].name;
    keytext = full_key_text(ctx, base, names, n);
    meta = meta_text(ctx, &r);
    if (!keytext || !meta) {
        st = qjit__error(ctx, QJIT_TEMPLATE, "a template file of %s changed or vanished while it was read", canon);
        goto done;
    }
    qjit__cache_entry_name(keytext, info->entry);
    double tc = qjit__now();
    if ((st = qjit__nvrtc_compile(ctx, src, "qjit_kernel.cu", arch, ctx->line_info, &cubin, &cubin_bytes))) {
        qjit__error_append(ctx, "\nvariant: %s", canon);
        save_failed_source(ctx, info->entry, src);
        goto done;
    }
    info->compile_seconds = qjit__now() - tc;
    if ((st = qjit__cache_store(ctx, ctx->cache_dir, info->entry, keytext, meta, cubin, cubin_bytes)))
        goto done;
    char *manifest_out = qjit__strdup(ctx, "");
    for (size_t i = 0; manifest_out && i < n; i++) {
        char *next = qjit__printf(ctx, "%s%s\n", manifest_out, names[i]);
        qjit__strfree(ctx, manifest_out);
        manifest_out = next;
    }
    if (manifest_out)
        st = qjit__cache_write_text(ctx, ctx->cache_dir, manifest_name, manifest_out);
    qjit__strfree(ctx, manifest_out);
    if (st)
        goto done;
    evict_if_bounded(ctx);
    qjit__log(ctx, "compiled %s for %s in %.3f s (entry %s)", canon, arch, info->compile_seconds, info->entry);
    if (out) {
        /* Entries own plain blocks (the cache module's convention), not
         * qjit__strdup strings. */
        entry.key = plain_copy(ctx, keytext);
        entry.meta = plain_copy(ctx, meta);
        entry.payload = cubin;
        entry.payload_bytes = cubin_bytes;
        cubin = NULL;
        if (!entry.key || !entry.meta)
            st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    }
done:
    info->total_seconds = qjit__now() - t0;
    if (st == QJIT_OK && out)
        *out = entry;
    else
        qjit__cache_entry_release(ctx, &entry);
    if (have_result)
        qjit__lua_result_release(L, &r);
    qjit__free(ctx, cubin, cubin_bytes);
    qjit__strfree(ctx, meta);
    qjit__strfree(ctx, keytext);
    qjit__strfree(ctx, manifest);
    qjit__strfree(ctx, base);
    qjit__strfree(ctx, canon);
    return st;
}

/*--- public API ---------------------------------------------------------*/

qjit_status qjit_key_canonicalize(qjit_context *ctx, const char *key, char *buf, size_t size)
{
    if (!ctx || !key || !buf)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_key_canonicalize: NULL argument");
    char *canon = NULL;
    pthread_mutex_lock(&ctx->lock);
    qjit_status st = qjit__canonicalize_locked(ctx, key, NULL, &canon);
    pthread_mutex_unlock(&ctx->lock);
    if (st)
        return st;
    size_t n = strlen(canon);
    if (n >= size)
        st = qjit__error(ctx, QJIT_OVERFLOW, "canonical key needs %zu bytes, buffer has %zu", n + 1, size);
    else
        memcpy(buf, canon, n + 1);
    qjit__strfree(ctx, canon);
    return st;
}

qjit_status qjit_generate(qjit_context *ctx, const char *key, char **source, size_t *length)
{
    if (!ctx || !key || !source)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_generate: NULL argument");
    *source = NULL;
    pthread_mutex_lock(&ctx->lock);
    char target[16] = "";
    qjit__context_arch_locked(ctx, target);
    qjit__lua *L;
    qjit__lua_result r;
    qjit_status st = qjit__context_lua(ctx, &L);
    if (st == QJIT_OK) {
        const char *args[2] = {key, target};
        st = qjit__lua_call(L, "variants.lua", "generate", 2, args, &r);
        if (st == QJIT_OK) {
            const char *src = qjit__lua_result_get(&r, "source");
            if (!src)
                st = qjit__error(ctx, QJIT_TEMPLATE, "variants.lua: generate returned no source");
            else if (!(*source = qjit__strdup(ctx, src)))
                st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
            else if (length)
                *length = strlen(*source);
            qjit__lua_result_release(L, &r);
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

qjit_status qjit_compile(qjit_context *ctx, const char *key, const char *arch, qjit_compile_info *info)
{
    if (!ctx || !key)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_compile: NULL argument");
    pthread_mutex_lock(&ctx->lock);
    qjit_status st = qjit__build_locked(ctx, key, arch, info, NULL);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

qjit_status qjit_default_variants(qjit_context *ctx, const char *arch, char **keys)
{
    if (!ctx || !keys)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_default_variants: NULL argument");
    *keys = NULL;
    pthread_mutex_lock(&ctx->lock);
    char target[16];
    qjit_status st = target_arch(ctx, arch, target);
    qjit__lua *L;
    if (st == QJIT_OK && (st = qjit__context_lua(ctx, &L)) == QJIT_OK) {
        const char *args[1] = {target};
        qjit__lua_result r;
        if ((st = qjit__lua_call(L, "dispatch.lua", "defaults", 1, args, &r)) == QJIT_OK) {
            if (!r.text || !(*keys = qjit__strdup(ctx, r.text)))
                st = qjit__error(ctx, QJIT_TEMPLATE, "dispatch.lua: defaults returned no text");
            qjit__lua_result_release(L, &r);
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

/*--- cache maintenance ----------------------------------------------------*/

typedef struct list_adapter {
    qjit_cache_visit_fn visit;
    void *ud;
} list_adapter;

static int adapt_visit(void *ud, const qjit__cache_visit_info *in)
{
    list_adapter *a = ud;
    qjit_cache_entry_info out = {in->name, in->variant, in->arch, in->bytes, in->valid, in->problem};
    return a->visit ? a->visit(a->ud, &out) : 0;
}

qjit_status qjit_cache_list(qjit_context *ctx, qjit_cache_visit_fn visit, void *ud, size_t *bad)
{
    if (!ctx)
        return QJIT_INVALID_ARGUMENT;
    qjit_status st = qjit__cache_open_dir(ctx, ctx->cache_dir);
    if (st)
        return st;
    list_adapter a = {visit, ud};
    return qjit__cache_list(ctx, ctx->cache_dir, adapt_visit, &a, bad);
}

qjit_status qjit_cache_clear(qjit_context *ctx, size_t *removed)
{
    if (!ctx)
        return QJIT_INVALID_ARGUMENT;
    qjit_status st = qjit__cache_open_dir(ctx, ctx->cache_dir);
    if (st)
        return st;
    return qjit__cache_clear(ctx, ctx->cache_dir, removed);
}
