/* bench_args.c -- options and result arithmetic of `qjit bench`; see
 * bench_args.h. Nothing here touches the GPU or the library. */
#define _GNU_SOURCE
#include "bench_args.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPACES " \t\r\n"

__attribute__((format(printf, 3, 4))) static void say(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Reads a decimal integer at s: digits only, a '-' first if sign is set (no
 * '+', no spaces: strtoll would take both). Returns where it stopped, or NULL
 * with *overflow set when the value does not fit, or NULL alone when there
 * is no number at s. */
static const char *read_ll(const char *s, int sign, long long *v, int *overflow)
{
    *overflow = 0;
    if (!is_digit(s[0]) && !(sign && s[0] == '-' && is_digit(s[1])))
        return NULL;
    char *end;
    errno = 0;
    *v = strtoll(s, &end, 10);
    if (errno == ERANGE) {
        *overflow = 1;
        return NULL;
    }
    return end;
}

/* Calls item(b, e) for each item of text between separators, spaces around
 * it trimmed. An empty item is an error: "1,,4" and "4096x4096," are typos,
 * not lists of two. */
typedef int (*item_fn)(const char *b, const char *e, void *ud, char *err, size_t errlen);
static int each_item(const char *text, const char *seps, item_fn item, void *ud, char *err, size_t errlen)
{
    for (const char *p = text;;) {
        const char *end = p + strcspn(p, seps), *b = p, *e = end;
        while (b < e && strchr(SPACES, *b))
            b++;
        while (e > b && strchr(SPACES, e[-1]))
            e--;
        if (b == e) {
            say(err, errlen, "empty item in '%s'", text);
            return -1;
        }
        if (item(b, e, ud, err, errlen))
            return -1;
        if (!*end)
            return 0;
        p = end + 1;
    }
}

typedef struct shape_list {
    long long (*shapes)[2];
    int n, max;
} shape_list;

static int shape_item(const char *b, const char *e, void *ud, char *err, size_t errlen)
{
    shape_list *l = ud;
    long long N = 0, K = 0;
    int len = (int)(e - b), ovf = 0;
    const char *q = read_ll(b, 0, &N, &ovf);
    if (q && q < e && (*q == 'x' || *q == 'X'))
        q = read_ll(q + 1, 0, &K, &ovf);
    else
        q = NULL;
    if (ovf) {
        say(err, errlen, "shape '%.*s' is out of range", len, b);
        return -1;
    }
    if (!q || q != e || N <= 0 || K <= 0) {
        say(err, errlen, "bad shape '%.*s' (want NxK with positive integers, e.g. 4096x11008)", len, b);
        return -1;
    }
    if (l->n == l->max) {
        say(err, errlen, "more than %d shapes (at '%.*s')", l->max, len, b);
        return -1;
    }
    l->shapes[l->n][0] = N;
    l->shapes[l->n][1] = K;
    l->n++;
    return 0;
}

int qb_parse_shapes(const char *text, long long (*shapes)[2], int max, char *err, size_t errlen)
{
    shape_list l = {shapes, 0, max};
    return each_item(text, ",\n", shape_item, &l, err, errlen) ? -1 : l.n;
}

int qb_read_shapes_file(const char *path, long long (*shapes)[2], int max, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        say(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        return -1;
    }
    shape_list l = {shapes, 0, max};
    char *line = NULL, msg[512];
    size_t cap = 0;
    int lineno = 0, rc = 0;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        line[strcspn(line, "#\r\n")] = '\0';   /* messages quote the line without its ending */
        if (!line[strspn(line, SPACES)])
            continue;                       /* blank or comment only */
        if (each_item(line, ",", shape_item, &l, msg, sizeof msg)) {
            say(err, errlen, "%s:%d: %s", path, lineno, msg);
            rc = -1;
            break;
        }
    }
    if (!rc && ferror(f)) {                 /* e.g. a folder: fopen succeeds, reading does not */
        say(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        rc = -1;
    }
    if (!rc && l.n == 0) {
        say(err, errlen, "%s: no shapes in the file", path);
        rc = -1;
    }
    free(line);
    fclose(f);
    return rc ? -1 : l.n;
}

typedef struct int_list {
    long long *v, min;
    int n, max;
} int_list;

/* One integer item in [min, LLONG_MAX]. */
static int int_value(const char *b, const char *e, long long min, long long *v, char *err, size_t errlen)
{
    int len = (int)(e - b), ovf = 0;
    const char *q = read_ll(b, 1, v, &ovf);
    if (ovf) {
        say(err, errlen, "'%.*s' is out of range", len, b);
        return -1;
    }
    if (!q || q != e) {
        say(err, errlen, "'%.*s' is not an integer", len, b);
        return -1;
    }
    if (*v < min) {
        say(err, errlen, "'%.*s' must be at least %lld", len, b, min);
        return -1;
    }
    return 0;
}

static int int_item(const char *b, const char *e, void *ud, char *err, size_t errlen)
{
    int_list *l = ud;
    long long v;
    if (int_value(b, e, l->min, &v, err, errlen))
        return -1;
    if (l->n == l->max) {
        say(err, errlen, "more than %d values (at '%.*s')", l->max, (int)(e - b), b);
        return -1;
    }
    l->v[l->n++] = v;
    return 0;
}

int qb_parse_ints(const char *text, long long min, long long *out, int max, char *err, size_t errlen)
{
    int_list l = {out, min, 0, max};
    return each_item(text, ",", int_item, &l, err, errlen) ? -1 : l.n;
}

/* A whole option value as an int in [min, INT_MAX]. */
static int parse_int_option(const char *text, int min, int *out, char *err, size_t errlen)
{
    long long v;
    if (int_value(text, text + strlen(text), min, &v, err, errlen))
        return -1;
    if (v > INT_MAX) {
        say(err, errlen, "'%s' is out of range", text);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* Decimal, 0x hex or 0 octal, as strtoull reads them (the old parser took
 * all three); no sign, since strtoull would wrap "-1" silently. */
static int parse_seed(const char *text, uint64_t *out, char *err, size_t errlen)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = is_digit(text[0]) ? strtoull(text, &end, 0) : 0;
    if (!end || *end) {
        say(err, errlen, "'%s' is not a number (decimal, 0x hex or 0 octal)", text);
        return -1;
    }
    if (errno == ERANGE) {
        say(err, errlen, "'%s' is out of range", text);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

void qb_bench_args_init(qb_bench_args *a)
{
    static const long long shapes[8][2] = {{12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008},
                                           {10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}};
    static const long long ms[10] = {1, 4, 16, 32, 64, 128, 256, 512, 1024, 4096};
    memset(a, 0, sizeof *a);
    memcpy(a->shapes, shapes, sizeof shapes);
    a->nshapes = 8;
    memcpy(a->ms, ms, sizeof ms);
    a->nms = 10;
    a->group = 128;
    a->reps = 50;
    a->seed = 12345;
    a->peers = 1;
}

int qb_parse_bench_args(int argc, char **argv, qb_bench_args *out, char *err, size_t errlen)
{
    qb_bench_args a;    /* filled here, copied out only on success */
    char msg[1024];
    qb_bench_args_init(&a);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            a.help = 1;
            break;
        }
        if (!strcmp(o, "--no-peers")) {
            a.peers = 0;
            continue;
        }
        static const char *const valued[] = {"--shapes", "--shapes-file", "--m", "--group", "--variant",
                                             "--reps", "--seed", "--csv", "--json", "--scheme"};
        int known = 0;
        for (size_t k = 0; k < sizeof valued / sizeof *valued && !known; k++)
            known = !strcmp(o, valued[k]);
        if (!known) {
            say(err, errlen, "unknown option '%s'", o);
            return -1;
        }
        if (i + 1 >= argc) {
            say(err, errlen, "%s needs a value", o);
            return -1;
        }
        const char *v = argv[++i];
        int rc = 0;
        msg[0] = '\0';
        if (!strcmp(o, "--shapes")) {
            rc = (a.nshapes = qb_parse_shapes(v, a.shapes, QB_MAX_SHAPES, msg, sizeof msg)) < 0;
        } else if (!strcmp(o, "--shapes-file")) {
            rc = (a.nshapes = qb_read_shapes_file(v, a.shapes, QB_MAX_SHAPES, msg, sizeof msg)) < 0;
        } else if (!strcmp(o, "--m")) {
            rc = (a.nms = qb_parse_ints(v, 1, a.ms, QB_MAX_MS, msg, sizeof msg)) < 0;
        } else if (!strcmp(o, "--group")) {
            rc = parse_int_option(v, 0, &a.group, msg, sizeof msg);
        } else if (!strcmp(o, "--reps")) {
            rc = parse_int_option(v, 5, &a.reps, msg, sizeof msg);
        } else if (!strcmp(o, "--seed")) {
            rc = parse_seed(v, &a.seed, msg, sizeof msg);
        } else if (!*v) {
            /* --variant, --csv, --json, --scheme: an empty name is a slip (an unset shell variable), not a request. */
            snprintf(msg, sizeof msg, "the value is empty");
            rc = 1;
        } else if (!strcmp(o, "--variant")) {
            if (a.nvariants == QB_MAX_VARIANTS) {
                snprintf(msg, sizeof msg, "more than %d given (at '%s')", QB_MAX_VARIANTS, v);
                rc = 1;
            } else {
                a.variants[a.nvariants++] = v;
            }
        } else if (!strcmp(o, "--scheme")) {
            a.schemes = v;
        } else if (!strcmp(o, "--csv")) {
            a.csv_path = v;
        } else {
            a.json_path = v;
        }
        if (rc) {
            say(err, errlen, "%s: %s", o, msg);
            return -1;
        }
    }
    *out = a;
    return 0;
}

double qb_geomean(const double *v, int n)
{
    double s = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (v[i] > 0) {
            s += log(v[i]);
            k++;
        }
    return k ? exp(s / k) : 0;
}

double qb_best_peer(const double *peer_us, int n)
{
    double best = 0;
    for (int k = 0; k < n; k++)
        if (peer_us[k] > 0 && (best == 0 || peer_us[k] < best))
            best = peer_us[k];
    return best;
}

double qb_floor_us(double weight_bytes, double copy_gbs)
{
    /* The same operation order as before the move, so printed results do not shift. */
    return copy_gbs > 0 ? weight_bytes / (copy_gbs * 1e9) * 1e6 : 0;
}

double qb_tops(double M, double N, double K, double us)
{
    return us > 0 ? 2.0 * M * N * K / (us * 1e-6) / 1e12 : 0;
}
