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
#include <stddef.h>
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

typedef struct canon_read {
    char *key;
    char arch[16];
} canon_read;

static qjit_status read_canonical(qjit__rec *r, void *ud)
{
    canon_read *c = ud;
    qjit_status st = qjit__rec_strcpy(r, "arch", c->arch, sizeof c->arch);
    return st ? st : qjit__rec_strdup(r, "key", &c->key);
}

qjit_status qjit__canonicalize_locked(qjit_context *ctx, const char *key, const char *arch, char **canon,
                                      char arch_out[16])
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
    const qjit__lua_arg args[2] = {QJIT__ARG_STR(key), QJIT__ARG_STR(target)};
    canon_read c = {NULL, ""};
    st = qjit__lua_invoke(L, "variants.lua", "canonical", args, 2, read_canonical, &c, NULL);
    if (st) {
        qjit__strfree(ctx, c.key);
        return st;
    }
    *canon = c.key;
    if (arch_out)
        memcpy(arch_out, c.arch, 16);
    return QJIT_OK;
}

/*--- kernel facts ----------------------------------------------------------*/

/* The facts field by field, in the order the cache text lists them: one
 * table for the reader of Lua's answer, the cache text and its parser, so
 * the three cannot drift. Strings (size > 0): at least lo characters;
 * integers (size 0): in [lo, hi], and Lua may leave out the optional ones
 * (dflt). */
typedef struct fact_field {
    const char *name;
    size_t offset, size;
    long lo, hi, dflt;
    int optional;
} fact_field;
#define FACT_STR(f, min) {#f, offsetof(qjit__kernel_facts, f), sizeof(((qjit__kernel_facts *)0)->f), min, 0, 0, 0}
#define FACT_INT(f, lo, hi, dflt, opt) {#f, offsetof(qjit__kernel_facts, f), 0, lo, hi, dflt, opt}
static const fact_field FACTS[] = {
    FACT_STR(name, 1),       FACT_STR(kind, 0),           FACT_STR(arch, 0),
    FACT_INT(threads, 32, 1024, 0, 0), FACT_INT(smem, 0, 1L << 30, 0, 0), FACT_INT(pdl, 0, 1, 0, 1),
    FACT_INT(cluster, 1, 8, 1, 1),     FACT_STR(signature, 0),
};
#define NFACTS (sizeof FACTS / sizeof FACTS[0])

static char *fact_str(qjit__kernel_facts *f, const fact_field *d) { return (char *)f + d->offset; }
static int *fact_int(qjit__kernel_facts *f, const fact_field *d) { return (int *)((char *)f + d->offset); }

char *qjit__facts_format(qjit_context *ctx, const qjit__kernel_facts *f)
{
    char text[sizeof *f + 32 * NFACTS];
    size_t at = 0;
    for (size_t i = 0; i < NFACTS; i++) {
        const fact_field *d = &FACTS[i];
        const char *field = (const char *)f + d->offset;
        at += d->size ? (size_t)snprintf(text + at, sizeof text - at, "%s=%s\n", d->name, field)
                      : (size_t)snprintf(text + at, sizeof text - at, "%s=%d\n", d->name, *(const int *)field);
    }
    return qjit__strdup(ctx, text);
}

/* One "name=value" line of text, value copied into buf; 0 if absent, too
 * long or given twice. */
static int meta_line(const char *text, const char *name, char *buf, size_t size)
{
    size_t n = strlen(name);
    int found = 0;
    for (const char *p = text; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len > n && !strncmp(p, name, n) && p[n] == '=') {
            size_t vlen = len - n - 1;
            if (found++ || vlen >= size)
                return 0;
            memcpy(buf, p + n + 1, vlen);
            buf[vlen] = '\0';
        }
        p = eol ? eol + 1 : NULL;
    }
    return found == 1;
}

/* One field of the cache text into f; 0 if absent or out of range. */
static int meta_field(const char *text, const fact_field *d, qjit__kernel_facts *f)
{
    if (d->size)
        return meta_line(text, d->name, fact_str(f, d), d->size) && strlen(fact_str(f, d)) >= (size_t)d->lo;
    char buf[24], *end;
    if (!meta_line(text, d->name, buf, sizeof buf) || !buf[0])
        return 0;
    long v = strtol(buf, &end, 10);
    if (*end || v < d->lo || v > d->hi)
        return 0;
    *fact_int(f, d) = (int)v;
    return 1;
}

qjit_status qjit__facts_parse(qjit_context *ctx, const char *text, qjit__kernel_facts *f)
{
    memset(f, 0, sizeof *f);
    int ok = text != NULL;
    for (size_t i = 0; ok && i < NFACTS; i++)
        ok = meta_field(text, &FACTS[i], f);
    if (!ok)
        return qjit__error(ctx, QJIT_CACHE_CORRUPT, "cache entry's launch facts are incomplete or out of range:\n%s",
                           text ? text : "(none)");
    return QJIT_OK;
}

/* Reads generate's facts and source (variants.lua's generate). */
typedef struct gen_read {
    qjit__kernel_facts facts;
    char *source;
} gen_read;

static qjit_status read_generated(qjit__rec *r, void *ud)
{
    gen_read *g = ud;
    for (size_t i = 0; i < NFACTS; i++) {
        const fact_field *d = &FACTS[i];
        long long v;
        qjit_status st = d->size ? qjit__rec_strcpy(r, d->name, fact_str(&g->facts, d), d->size)
                         : d->optional ? qjit__rec_int_or(r, d->name, d->lo, d->hi, d->dflt, &v)
                                       : qjit__rec_int(r, d->name, d->lo, d->hi, &v);
        if (st)
            return st;
        if (!d->size)
            *fact_int(&g->facts, d) = (int)v;
    }
    return qjit__rec_strdup(r, "source", &g->source);
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

static void evict_if_bounded(qjit_context *ctx)
{
    if (ctx->cache_max_bytes)
        qjit__cache_evict(ctx, ctx->cache_dir, ctx->cache_max_bytes, NULL);
}

#define MAX_TEMPLATES 64

/* Loads entry info->entry of key text keytext and its kernel facts; on
 * success marks the compile a cache hit and refreshes the entry's age. On
 * failure *entry is released and the status says why (QJIT_NOT_FOUND,
 * QJIT_CACHE_CORRUPT, ...). */
static qjit_status load_hit(qjit_context *ctx, const char *keytext, qjit_compile_info *info, qjit__cache_entry *entry,
                            qjit__kernel_facts *facts)
{
    qjit_status st = qjit__cache_load(ctx, ctx->cache_dir, info->entry, keytext, entry);
    if (st == QJIT_OK && (st = qjit__facts_parse(ctx, entry->meta, facts)) == QJIT_OK) {
        info->from_cache = 1;
        qjit__cache_touch(ctx, ctx->cache_dir, info->entry);
        return QJIT_OK;
    }
    qjit__cache_entry_release(ctx, entry);
    return st;
}

qjit_status qjit__build_locked(qjit_context *ctx, const char *key, const char *arch_in, qjit_compile_info *info,
                               qjit__kernel_facts *facts_out, void **cubin_out, size_t *cubin_bytes_out)
{
    double t0 = qjit__now();
    qjit_compile_info local;
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);
    if (cubin_out) {
        *cubin_out = NULL;
        *cubin_bytes_out = 0;
    }

    char arch[16];
    qjit_status st = target_arch(ctx, arch_in, arch);
    if (st)
        return st;
    char *canon = NULL, *base = NULL, *manifest = NULL, *keytext = NULL, *meta = NULL;
    void *cubin = NULL;
    size_t cubin_bytes = 0;
    qjit__lua_result files = {0};
    gen_read gen;
    memset(&gen, 0, sizeof gen);
    qjit__kernel_facts facts;
    qjit__lua *L = NULL;
    qjit__cache_entry entry = {0};
    int lock = -1;

    /* The key's own arch wins over the default target. */
    if ((st = qjit__canonicalize_locked(ctx, key, arch, &canon, arch)) != QJIT_OK)
        goto done;
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
            st = load_hit(ctx, keytext, info, &entry, &facts);
            if (st == QJIT_OK) {
                /* Least recently used goes first: a hit refreshes the
                 * manifest that found it too (else the most used variants
                 * lost their manifests first and were recompiled, their old
                 * entries left unreachable). */
                qjit__cache_touch(ctx, ctx->cache_dir, manifest_name);
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
    const qjit__lua_arg args[2] = {QJIT__ARG_STR(canon), QJIT__ARG_STR(arch)};
    if ((st = qjit__lua_invoke(L, "variants.lua", "generate", args, 2, read_generated, &gen, &files)) != QJIT_OK)
        goto done;
    info->generate_seconds = qjit__now() - tg;
    facts = gen.facts;
    char *names[MAX_TEMPLATES];
    size_t n = files.nfiles < MAX_TEMPLATES ? files.nfiles : MAX_TEMPLATES;
    for (size_t i = 0; i < n; i++)
        names[i] = files.files[i].name;
    keytext = full_key_text(ctx, base, names, n);
    meta = qjit__facts_format(ctx, &facts);
    if (!keytext || !meta) {
        st = qjit__error(ctx, QJIT_TEMPLATE, "a template file of %s changed or vanished while it was read", canon);
        goto done;
    }
    qjit__cache_entry_name(keytext, info->entry);
    /* One compile per entry across processes (ranks of one engine start
     * together): whoever gets the lock compiles, the others then load. */
    lock = qjit__cache_lock(ctx, ctx->cache_dir, info->entry);
    if (lock >= 0 && load_hit(ctx, keytext, info, &entry, &facts) == QJIT_OK)
        goto write_manifest;
    st = QJIT_OK;
    double tc = qjit__now();
    if ((st = qjit__nvrtc_compile(ctx, gen.source, "qjit_kernel.cu", arch, ctx->line_info, canon, &cubin,
                                  &cubin_bytes))) {
        qjit__error_append(ctx, "\nvariant: %s", canon);
        save_failed_source(ctx, info->entry, gen.source);
        goto done;
    }
    info->compile_seconds = qjit__now() - tc;
    if ((st = qjit__cache_store(ctx, ctx->cache_dir, info->entry, keytext, meta, cubin, cubin_bytes)))
        goto done;
write_manifest:;
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
    qjit__cache_unlock(lock);
    lock = -1;
    evict_if_bounded(ctx);
    if (!info->from_cache)
        qjit__log(ctx, "compiled %s for %s in %.3f s (entry %s)", canon, arch, info->compile_seconds, info->entry);
done:
    qjit__cache_unlock(lock);
    info->total_seconds = qjit__now() - t0;
    if (st == QJIT_OK) {
        if (facts_out)
            *facts_out = facts;
        if (cubin_out && info->from_cache) {
            /* The entry's payload block is ours to hand on. */
            *cubin_out = entry.payload;
            *cubin_bytes_out = entry.payload_bytes;
            entry.payload = NULL;
        } else if (cubin_out) {
            *cubin_out = cubin;
            *cubin_bytes_out = cubin_bytes;
            cubin = NULL;
        }
    }
    qjit__cache_entry_release(ctx, &entry);
    qjit__lua_result_release(L, &files);
    qjit__strfree(ctx, gen.source);
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
    qjit_status st = qjit__canonicalize_locked(ctx, key, NULL, &canon, NULL);
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

static qjit_status read_source(qjit__rec *r, void *ud) { return qjit__rec_strdup(r, "source", ud); }

qjit_status qjit_generate(qjit_context *ctx, const char *key, char **source, size_t *length)
{
    if (!ctx || !key || !source)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_generate: NULL argument");
    *source = NULL;
    pthread_mutex_lock(&ctx->lock);
    char target[16] = "";
    qjit__context_arch_locked(ctx, target);
    qjit__lua *L;
    qjit_status st = qjit__context_lua(ctx, &L);
    if (st == QJIT_OK) {
        const qjit__lua_arg args[2] = {QJIT__ARG_STR(key), QJIT__ARG_STR(target)};
        char *src = NULL;
        st = qjit__lua_invoke(L, "variants.lua", "generate", args, 2, read_source, &src, NULL);
        if (st == QJIT_OK) {
            *source = src;
            if (length)
                *length = strlen(src);
        } else {
            qjit__strfree(ctx, src);
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
    qjit_status st = qjit__build_locked(ctx, key, arch, info, NULL, NULL, NULL);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

qjit_status qjit_default_variants(qjit_context *ctx, const char *arch, char **keys)
{
    return qjit_default_variants_dtype(ctx, arch, QJIT_DTYPE_F16, keys);
}

qjit_status qjit_default_variants_dtype(qjit_context *ctx, const char *arch, qjit_dtype dtype, char **keys)
{
    if (!ctx || !keys)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_default_variants: NULL argument");
    *keys = NULL;
    if (dtype != QJIT_DTYPE_F16 && dtype != QJIT_DTYPE_BF16)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "the default variants are for FP16 or BF16 layers "
                           "(qjit_dtype %d or %d), not %d", QJIT_DTYPE_F16, QJIT_DTYPE_BF16, (int)dtype);
    pthread_mutex_lock(&ctx->lock);
    char target[16];
    qjit_status st = target_arch(ctx, arch, target);
    qjit__lua *L;
    if (st == QJIT_OK && (st = qjit__context_lua(ctx, &L)) == QJIT_OK) {
        const char *args[2] = {target, dtype == QJIT_DTYPE_BF16 ? "bf16" : "f16"};
        qjit__lua_result r;
        if ((st = qjit__lua_call(L, "dispatch.lua", "defaults", 2, args, &r)) == QJIT_OK) {
            if (!r.text || !(*keys = qjit__strdup(ctx, r.text)))
                st = qjit__error(ctx, QJIT_TEMPLATE, "dispatch.lua: defaults returned no text");
            qjit__lua_result_release(L, &r);
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

