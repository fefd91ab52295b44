/* record.c -- tuning records in the disk cache (record.h). */
#define _GNU_SOURCE
#include "record.h"
#include "cache.h"
#include "context.h"
#include "core.h"
#include "hash.h"
#include "lua_vm.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

qjit_status qjit__record_device_now(qjit_context *ctx, qjit__record_device *out)
{
    memset(out, 0, sizeof *out);
    qjit_status st = qjit__context_driver(ctx);
    if (st)
        return st;
    const qjit__driver *d = &ctx->driver;
    snprintf(out->gpu, sizeof out->gpu, "%s", d->name);
    out->sms = d->sm_count;
    out->cc_major = d->cc_major;
    out->cc_minor = d->cc_minor;
    out->driver = d->version;
    snprintf(out->qjit, sizeof out->qjit, "%s", QJIT_VERSION_STRING);
    /* Hashed once a context: the tree it generates from. */
    if (!ctx->templates_hash[0] && (st = qjit__templates_hash(ctx, ctx->templates_hash))) {
        ctx->templates_hash[0] = '\0';
        return st;
    }
    memcpy(out->templates, ctx->templates_hash, sizeof out->templates);
    return QJIT_OK;
}

/*--- the template tree's hash ----------------------------------------------*/

typedef struct names {
    char **v;
    size_t n, cap;
} names;

static int push_name(qjit_context *ctx, names *ns, const char *name)
{
    if (ns->n == ns->cap) {
        size_t cap = ns->cap ? 2 * ns->cap : 64;
        char **v = qjit__realloc(ctx, ns->v, ns->cap * sizeof *v, cap * sizeof *v);
        if (!v)
            return 0;
        ns->v = v;
        ns->cap = cap;
    }
    return (ns->v[ns->n] = qjit__strdup(ctx, name)) ? (ns->n++, 1) : 0;
}

static void free_names(qjit_context *ctx, names *ns)
{
    for (size_t i = 0; i < ns->n; i++)
        qjit__strfree(ctx, ns->v[i]);
    qjit__free(ctx, ns->v, ns->cap * sizeof *ns->v);
    memset(ns, 0, sizeof *ns);
}

/* The regular files under root/rel (names not starting with '.'), as paths
 * relative to root; 0 when out of memory or too deep. */
static int walk(qjit_context *ctx, const char *root, const char *rel, int depth, names *out)
{
    char *dir = rel[0] ? qjit__printf(ctx, "%s/%s", root, rel) : qjit__strdup(ctx, root);
    DIR *dp = dir ? opendir(dir) : NULL;
    qjit__strfree(ctx, dir);
    if (!dp)
        return 1;                /* an absent folder of the path holds nothing */
    int ok = depth < 8;
    struct dirent *e;
    while (ok && (e = readdir(dp))) {
        if (e->d_name[0] == '.')
            continue;
        char *name = rel[0] ? qjit__printf(ctx, "%s/%s", rel, e->d_name) : qjit__strdup(ctx, e->d_name);
        char *path = name ? qjit__printf(ctx, "%s/%s", root, name) : NULL;
        struct stat st;
        if (!path)
            ok = 0;
        else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            ok = walk(ctx, root, name, depth + 1, out);
        else if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            ok = push_name(ctx, out, name);
        qjit__strfree(ctx, path);
        qjit__strfree(ctx, name);
    }
    closedir(dp);
    return ok;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

qjit_status qjit__templates_hash(qjit_context *ctx, char hex[65])
{
    char *path = qjit__strdup(ctx, ctx->template_path);
    if (!path)
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    qjit__sha256 sum;
    qjit__sha256_init(&sum);
    qjit_status st = QJIT_OK;
    char *save = NULL;
    for (char *root = strtok_r(path, ":", &save); root && !st; root = strtok_r(NULL, ":", &save)) {
        names ns = {0};
        if (!walk(ctx, root, "", 0, &ns)) {
            st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "hashing the templates of %s: out of memory or "
                             "folders nested past 8", root);
        }
        qsort(ns.v, ns.n, sizeof *ns.v, cmp_str);
        qjit__sha256_update(&sum, root, strlen(root) + 1);
        for (size_t i = 0; i < ns.n && !st; i++) {
            char *file = qjit__printf(ctx, "%s/%s", root, ns.v[i]), fhex[65];
            if (!file)
                st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
            else if (!(st = qjit__file_sha256(ctx, file, fhex))) {
                qjit__sha256_update(&sum, ns.v[i], strlen(ns.v[i]) + 1);
                qjit__sha256_update(&sum, fhex, 64);
            }
            qjit__strfree(ctx, file);
        }
        free_names(ctx, &ns);
    }
    qjit__strfree(ctx, path);
    uint8_t digest[32];
    qjit__sha256_final(&sum, digest);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    return st;
}

/*--- records ---------------------------------------------------------------*/

char *qjit__record_key(qjit_context *ctx, const qjit__record_layer *l, const qjit__record_device *d)
{
    return qjit__printf(ctx,
                        "qjit tuning record 1\n"
                        "record scheme=%s;g=%d;N=%lld;K=%lld;dtype=%s;bias=%d;rblock=%dx%d;rblocks=%lld\n"
                        "gpu %s\nsms %d\ncc %d.%d\ndriver %d\nqjit %s\ntemplates %s\n",
                        l->scheme, l->group, (long long)l->N, (long long)l->K, l->dtype ? l->dtype : "f16", l->bias,
                        l->rblock_n, l->rblock_k, (long long)l->rblocks, d->gpu, d->sms, d->cc_major, d->cc_minor,
                        d->driver, d->qjit, d->templates);
}

qjit_status qjit__record_store(qjit_context *ctx, const char *dir, const qjit__record_layer *layer,
                               const qjit__record_device *dev, const char *picks, const char *meta)
{
    if (!picks || !picks[0])
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "a tuning record needs its buckets (picks)");
    char *key = qjit__record_key(ctx, layer, dev);
    if (!key)
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    char name[80];
    qjit__cache_entry_name(key, name);
    qjit_status st = qjit__cache_open_dir(ctx, dir);
    if (!st)
        st = qjit__cache_store(ctx, dir, name, key, meta ? meta : "", picks, strlen(picks));
    qjit__strfree(ctx, key);
    return st;
}

qjit_status qjit__record_load(qjit_context *ctx, const char *dir, const qjit__record_layer *layer,
                              const qjit__record_device *dev, char **picks)
{
    *picks = NULL;
    char *key = qjit__record_key(ctx, layer, dev);
    if (!key)
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    char name[80];
    qjit__cache_entry_name(key, name);
    qjit__cache_entry e;
    qjit_status st = qjit__cache_load(ctx, dir, name, key, &e);
    qjit__strfree(ctx, key);
    if (st)
        return st;
    if (e.payload_bytes == 0 || e.payload_bytes > 65536 || memchr(e.payload, '\0', e.payload_bytes)) {
        st = qjit__error(ctx, QJIT_CACHE_CORRUPT, "tuning record %s/%s holds no picks text", dir, name);
    } else if (!(*picks = qjit__printf(ctx, "%.*s", (int)e.payload_bytes, (const char *)e.payload))) {
        st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    }
    qjit__cache_entry_release(ctx, &e);
    return st;
}
