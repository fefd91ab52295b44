/* record.c -- tuning records in the disk cache (record.h). */
#define _GNU_SOURCE
#include "record.h"
#include "cache.h"
#include "context.h"
#include "core.h"
#include "hash.h"
#include "lua_vm.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
        if (ns.n)
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

/* The layer and SMs of a record's key text (record_key's lines); 0 if
 * they cannot be read. */
static int parse_record_key(const char *key, qjit__record_entry *r)
{
    const char *line = strstr(key, "\nrecord "), *sms = strstr(key, "\nsms ");
    int used = 0;
    long long N, K, blocks;
    if (!line || !sms || sscanf(sms, "\nsms %d", &r->sms) != 1 ||
        sscanf(line, "\nrecord scheme=%31[^;];g=%d;N=%lld;K=%lld;dtype=%7[^;];bias=%d;rblock=%dx%d;rblocks=%lld%n",
               r->scheme, &r->layer.group, &N, &K, r->dtype, &r->layer.bias, &r->layer.rblock_n, &r->layer.rblock_k,
               &blocks, &used) != 9 || line[used] != '\n')
        return 0;
    r->layer.scheme = r->scheme;
    r->layer.dtype = r->dtype;
    r->layer.N = N;
    r->layer.K = K;
    r->layer.rblocks = blocks;
    return 1;
}

/*--- export and import -----------------------------------------------------*/

/* An export: this line, then per record "record KEY META PAYLOAD SHA256\n"
 * (byte counts, the hash over the three) and the three byte strings, then
 * "end COUNT\n". */
#define EXPORT_MAGIC "qjit tuning records 1\n"
#define RECORD_MAGIC "qjit tuning record 1\n"
#define EXPORT_MAX ((size_t)64 << 20)

typedef struct collector {
    qjit_context *ctx;
    names ns;
    int failed;
} collector;

static int collect_record(void *ud, const qjit__cache_visit_info *info)
{
    collector *c = ud;
    if (info->valid && !strcmp(info->arch, "record") && !push_name(c->ctx, &c->ns, info->name))
        c->failed = 1;
    return c->failed;
}

qjit_status qjit__record_each(qjit_context *ctx, const char *dir,
                              int (*fn)(void *ud, const qjit__record_entry *r), void *ud)
{
    collector c = {ctx, {0}, 0};
    qjit_status st = qjit__cache_list(ctx, dir, collect_record, &c, NULL);
    if (!st && c.failed)
        st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    int stop = 0;
    for (size_t i = 0; !st && !stop && i < c.ns.n; i++) {
        qjit__cache_entry e;
        if (qjit__cache_load(ctx, dir, c.ns.v[i], NULL, &e) != QJIT_OK)
            continue;            /* went bad since the listing */
        qjit__record_entry r;
        memset(&r, 0, sizeof r);
        char *picks = e.payload_bytes && !memchr(e.payload, '\0', e.payload_bytes)
                          ? qjit__printf(ctx, "%.*s", (int)e.payload_bytes, (const char *)e.payload) : NULL;
        if (!parse_record_key(e.key, &r) || !picks) {
            qjit__log(ctx, "tuning record %s/%s: its layer or picks cannot be read; skipped", dir, c.ns.v[i]);
        } else {
            r.picks = picks;
            stop = fn(ud, &r);
        }
        qjit__strfree(ctx, picks);
        qjit__cache_entry_release(ctx, &e);
    }
    free_names(ctx, &c.ns);
    return st;
}

static void record_hash(const char *key, size_t kn, const char *meta, size_t mn, const void *payload, size_t pn,
                        char hex[65])
{
    qjit__sha256 sum;
    uint8_t digest[32];
    qjit__sha256_init(&sum);
    qjit__sha256_update(&sum, key, kn);
    qjit__sha256_update(&sum, meta, mn);
    qjit__sha256_update(&sum, payload, pn);
    qjit__sha256_final(&sum, digest);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
}

qjit_status qjit_records_export(qjit_context *ctx, const char *path, size_t *count)
{
    if (count)
        *count = 0;
    if (!ctx || !path || !path[0])
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_records_export: NULL context or empty path");
    qjit_status st = qjit__cache_open_dir(ctx, ctx->cache_dir);
    if (st)
        return st;
    collector c = {ctx, {0}, 0};
    if ((st = qjit__cache_list(ctx, ctx->cache_dir, collect_record, &c, NULL)) || c.failed) {
        free_names(ctx, &c.ns);
        return st ? st : qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    }
    if (c.ns.n)
        qsort(c.ns.v, c.ns.n, sizeof *c.ns.v, cmp_str);
    char *tmp = qjit__printf(ctx, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = tmp ? fopen(tmp, "wb") : NULL;
    if (!f) {
        st = tmp ? qjit__error(ctx, QJIT_IO, "cannot write %s: %s", tmp, strerror(errno))
                 : qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
        qjit__strfree(ctx, tmp);
        free_names(ctx, &c.ns);
        return st;
    }
    size_t n = 0;
    fputs(EXPORT_MAGIC, f);
    for (size_t i = 0; i < c.ns.n; i++) {
        qjit__cache_entry e;
        /* One that went bad since the listing is left out. */
        if (qjit__cache_load(ctx, ctx->cache_dir, c.ns.v[i], NULL, &e) != QJIT_OK)
            continue;
        const size_t kn = strlen(e.key), mn = strlen(e.meta);
        char hex[65];
        record_hash(e.key, kn, e.meta, mn, e.payload, e.payload_bytes, hex);
        fprintf(f, "record %zu %zu %zu %s\n", kn, mn, e.payload_bytes, hex);
        fwrite(e.key, 1, kn, f);
        fwrite(e.meta, 1, mn, f);
        fwrite(e.payload, 1, e.payload_bytes, f);
        qjit__cache_entry_release(ctx, &e);
        n++;
    }
    fprintf(f, "end %zu\n", n);
    free_names(ctx, &c.ns);
    int bad = ferror(f) || fflush(f) || fsync(fileno(f));
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        st = qjit__error(ctx, QJIT_IO, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
    } else if (count) {
        *count = n;
    }
    qjit__strfree(ctx, tmp);
    return st;
}

/* Reads "record K M P HEX\n" or "end N\n" at text[*at]; 1: a record, 0: the
 * end (its count in *k), -1: neither. */
static int export_line(const char *text, size_t len, size_t *at, size_t *k, size_t *m, size_t *p, char hex[65])
{
    const char *line = text + *at, *nl = memchr(line, '\n', len - *at);
    if (!nl || nl - line > 200)
        return -1;
    char buf[208];
    memcpy(buf, line, (size_t)(nl - line));
    buf[nl - line] = '\0';
    int used = 0;
    *at += (size_t)(nl - line) + 1;
    if (sscanf(buf, "record %zu %zu %zu %64s%n", k, m, p, hex, &used) == 4 && !buf[used] && strlen(hex) == 64)
        return 1;
    if (sscanf(buf, "end %zu%n", k, &used) == 1 && !buf[used])
        return 0;
    return -1;
}

qjit_status qjit_records_import(qjit_context *ctx, const char *path, size_t *imported, size_t *bad)
{
    if (imported)
        *imported = 0;
    if (bad)
        *bad = 0;
    if (!ctx || !path || !path[0])
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit_records_import: NULL context or empty path");
    FILE *f = fopen(path, "rb");
    if (!f)
        return qjit__error(ctx, errno == ENOENT ? QJIT_NOT_FOUND : QJIT_IO, "cannot read %s: %s", path,
                           strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > EXPORT_MAX) {
        fclose(f);
        return qjit__error(ctx, QJIT_CACHE_CORRUPT, "%s: not a file of at most %zu MB (an export of tuning records)",
                           path, EXPORT_MAX >> 20);
    }
    const size_t size = (size_t)sb.st_size;
    char *text = qjit__alloc(ctx, size + 1);
    size_t len = text ? fread(text, 1, size + 1, f) : 0;
    int rerr = ferror(f);
    fclose(f);
    if (!text)
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
    qjit_status st = QJIT_OK;
    if (rerr || len != size)
        st = qjit__error(ctx, QJIT_IO, "cannot read %s (it changed while read?)", path);
    else if (len < strlen(EXPORT_MAGIC) || memcmp(text, EXPORT_MAGIC, strlen(EXPORT_MAGIC)))
        st = qjit__error(ctx, QJIT_CACHE_CORRUPT, "%s is not an export of tuning records (qjit_records_export)", path);
    /* The framing first, whole: a file cut or garbled there stores nothing. */
    size_t at = strlen(EXPORT_MAGIC), records = 0, k = 0, m, p;
    char hex[65];
    int kind = 1;
    while (!st && (kind = export_line(text, len, &at, &k, &m, &p, hex)) == 1) {
        if (k > len - at || m > len - at - k || p > len - at - k - m)
            kind = -1;
        if (kind < 0)
            break;
        at += k + m + p;
        records++;
    }
    if (!st && (kind != 0 || k != records || at != len))
        st = qjit__error(ctx, QJIT_CACHE_CORRUPT, "%s: damaged export (its framing breaks %s)", path,
                         kind != 0 ? "before its end line" : at != len ? "after its end line" : "at its count");
    if (!st)
        st = qjit__cache_open_dir(ctx, ctx->cache_dir);
    /* Then each record: checked, stored. */
    at = strlen(EXPORT_MAGIC);
    for (size_t i = 0; !st && i < records; i++) {
        export_line(text, len, &at, &k, &m, &p, hex);
        const char *key = text + at, *meta = key + k, *payload = meta + m;
        at += k + m + p;
        char want[65];
        record_hash(key, k, meta, m, payload, p, want);
        char *ks = qjit__printf(ctx, "%.*s", (int)k, key), *ms = qjit__printf(ctx, "%.*s", (int)m, meta);
        if (!ks || !ms) {
            st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory");
        } else if (strcmp(want, hex) || strlen(ks) != k || strlen(ms) != m ||
                   strncmp(ks, RECORD_MAGIC, strlen(RECORD_MAGIC)) || p == 0 || memchr(payload, '\0', p)) {
            qjit__log(ctx, "%s: record %zu damaged or not a tuning record; skipped", path, i + 1);
            if (bad)
                (*bad)++;
        } else {
            char name[80];
            qjit__cache_entry_name(ks, name);
            if (!(st = qjit__cache_store(ctx, ctx->cache_dir, name, ks, ms, payload, p)) && imported)
                (*imported)++;
        }
        qjit__strfree(ctx, ks);
        qjit__strfree(ctx, ms);
    }
    qjit__free(ctx, text, size + 1);
    return st;
}
