/* bench_args.c -- options and result arithmetic of `qjit bench`; see
 * bench_args.h. Nothing here touches the GPU or the library. */
#define _GNU_SOURCE
#include "bench_args.h"
#include "args.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct shape_list {
    long long (*shapes)[2];
    int n, max;
} shape_list;

static int shape_item(const char *b, const char *e, void *ud, char *err, size_t errlen)
{
    shape_list *l = ud;
    long long N = 0, K = 0;
    int len = (int)(e - b), ovf = 0;
    const char *q = qa_read_ll(b, 0, &N, &ovf);
    if (q && q < e && (*q == 'x' || *q == 'X'))
        q = qa_read_ll(q + 1, 0, &K, &ovf);
    else
        q = NULL;
    if (ovf) {
        qa_say(err, errlen, "shape '%.*s' is out of range", len, b);
        return -1;
    }
    if (!q || q != e || N <= 0 || K <= 0) {
        qa_say(err, errlen, "bad shape '%.*s' (want NxK with positive integers, e.g. 4096x11008)", len, b);
        return -1;
    }
    if (l->n == l->max) {
        qa_say(err, errlen, "more than %d shapes (at '%.*s')", l->max, len, b);
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
    return qa_each_item(text, ",\n", shape_item, &l, err, errlen) ? -1 : l.n;
}

int qb_read_shapes_file(const char *path, long long (*shapes)[2], int max, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        qa_say(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        return -1;
    }
    shape_list l = {shapes, 0, max};
    char *line = NULL, msg[512];
    size_t cap = 0;
    int lineno = 0, rc = 0;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        line[strcspn(line, "#\r\n")] = '\0';   /* messages quote the line without its ending */
        if (!line[strspn(line, QA_SPACES)])
            continue;                       /* blank or comment only */
        if (qa_each_item(line, ",", shape_item, &l, msg, sizeof msg)) {
            qa_say(err, errlen, "%s:%d: %s", path, lineno, msg);
            rc = -1;
            break;
        }
    }
    if (!rc && ferror(f)) {                 /* e.g. a folder: fopen succeeds, reading does not */
        qa_say(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        rc = -1;
    }
    if (!rc && l.n == 0) {
        qa_say(err, errlen, "%s: no shapes in the file", path);
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
    const char *q = qa_read_ll(b, 1, v, &ovf);
    if (ovf) {
        qa_say(err, errlen, "'%.*s' is out of range", len, b);
        return -1;
    }
    if (!q || q != e) {
        qa_say(err, errlen, "'%.*s' is not an integer", len, b);
        return -1;
    }
    if (*v < min) {
        qa_say(err, errlen, "'%.*s' must be at least %lld", len, b, min);
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
        qa_say(err, errlen, "more than %d values (at '%.*s')", l->max, (int)(e - b), b);
        return -1;
    }
    l->v[l->n++] = v;
    return 0;
}

int qb_parse_ints(const char *text, long long min, long long *out, int max, char *err, size_t errlen)
{
    int_list l = {out, min, 0, max};
    return qa_each_item(text, ",", int_item, &l, err, errlen) ? -1 : l.n;
}

/* A whole option value as an int in [min, INT_MAX]. */
static int parse_int_option(const char *text, int min, int *out, char *err, size_t errlen)
{
    long long v;
    if (int_value(text, text + strlen(text), min, &v, err, errlen))
        return -1;
    if (v > INT_MAX) {
        qa_say(err, errlen, "'%s' is out of range", text);
        return -1;
    }
    *out = (int)v;
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
    a->nsparsity = 1;        /* a->sparsity[0] = 0: dense */
    a->a8 = 0.1;
}

/* Applies one option of `qjit bench` to its qb_bench_args (args.h's take). */
static int bench_take(void *args, const char *o, const char *v, char *msg, size_t msglen)
{
    qb_bench_args *a = args;
    if (!strcmp(o, "--no-peers")) {
        a->peers = 0;
    } else if (!strcmp(o, "--shapes")) {
        a->shapes_given = 1;
        return (a->nshapes = qb_parse_shapes(v, a->shapes, QB_MAX_SHAPES, msg, msglen)) < 0 ? -1 : 0;
    } else if (!strcmp(o, "--shapes-file")) {
        a->shapes_given = 1;
        return (a->nshapes = qb_read_shapes_file(v, a->shapes, QB_MAX_SHAPES, msg, msglen)) < 0 ? -1 : 0;
    } else if (!strcmp(o, "--m")) {
        a->ms_given = 1;
        return (a->nms = qb_parse_ints(v, 1, a->ms, QB_MAX_MS, msg, msglen)) < 0 ? -1 : 0;
    } else if (!strcmp(o, "--dtype")) {
        if (strcmp(v, "f16") && strcmp(v, "bf16")) {
            snprintf(msg, msglen, "'%s' is not a dtype (f16 or bf16)", v);
            return -1;
        }
        a->bf16 = !strcmp(v, "bf16");
    } else if (!strcmp(o, "--layers")) {
        if (parse_int_option(v, 1, &a->layers, msg, msglen))
            return -1;
        if (a->layers > QB_MAX_LAYERS) {
            snprintf(msg, msglen, "'%s' is more than %d layers", v, QB_MAX_LAYERS);
            return -1;
        }
    } else if (!strcmp(o, "--group")) {
        return parse_int_option(v, 0, &a->group, msg, msglen);
    } else if (!strcmp(o, "--reps")) {
        return parse_int_option(v, 5, &a->reps, msg, msglen);
    } else if (!strcmp(o, "--seed")) {
        return qa_parse_seed(v, &a->seed, msg, msglen);
    } else if (!strcmp(o, "--variant")) {
        if (a->nvariants == QB_MAX_VARIANTS) {
            snprintf(msg, msglen, "more than %d given (at '%s')", QB_MAX_VARIANTS, v);
            return -1;
        }
        a->variants[a->nvariants++] = v;
    } else if (!strcmp(o, "--sparsity")) {
        /* The dense baseline runs first whether listed or not: every budget
         * is timed against it. */
        double given[QB_MAX_BUDGETS];
        qa_budgets l = {given, 0, QB_MAX_BUDGETS};
        if (qa_each_item(v, ",", qa_budget_item, &l, msg, msglen))
            return -1;
        int n = 1;
        for (int i = 0; i < l.n; i++)
            if (given[i] > 0) {
                if (n == QB_MAX_BUDGETS) {
                    snprintf(msg, msglen, "more than %d budgets besides 0 (at '%g')", QB_MAX_BUDGETS - 1, given[i]);
                    return -1;
                }
                a->sparsity[n++] = given[i];
            }
        a->sparsity[0] = 0;
        a->nsparsity = n;
    } else if (!strcmp(o, "--a8")) {
        char *end;
        double x = strtod(v, &end);
        if (end == v || *end || !(x >= 0 && x <= 1)) {
            snprintf(msg, msglen, "'%s' is not a share in [0, 1]", v);
            return -1;
        }
        a->a8 = x;
    } else if (!strcmp(o, "--scheme")) {
        a->schemes = v;
    } else if (!strcmp(o, "--csv")) {
        a->csv_path = v;
    } else {
        a->json_path = v;
    }
    return 0;
}

int qb_parse_bench_args(int argc, char **argv, qb_bench_args *out, char *err, size_t errlen)
{
    static const qa_option options[] = {
        {"--no-peers", QA_FLAG}, {"--shapes", QA_VALUE}, {"--shapes-file", QA_VALUE}, {"--m", QA_VALUE},
        {"--group", QA_VALUE},   {"--variant", QA_NAME}, {"--reps", QA_VALUE},        {"--seed", QA_VALUE},
        {"--csv", QA_NAME},      {"--json", QA_NAME},    {"--scheme", QA_NAME},       {"--sparsity", QA_VALUE},
        {"--a8", QA_VALUE},      {"--layers", QA_VALUE},
        {"--dtype", QA_VALUE}};
    static const qa_command cmd = {options, sizeof options / sizeof *options, bench_take};
    qb_bench_args a;    /* filled here, copied out only on success */
    char msg[1024];
    qb_bench_args_init(&a);
    int rc = qa_parse_options(argc, argv, &cmd, &a, msg, sizeof msg, err, errlen);
    if (rc < 0)
        return -1;
    if (a.layers > 0 && (a.nvariants > 1 || a.nsparsity > 1)) {
        qa_say(err, errlen, "--layers times dense layers with the dispatch table's kernels or one --variant: it "
               "takes %s", a.nvariants > 1 ? "no second --variant" : "no --sparsity budget besides 0");
        return -1;
    }
    if (a.layers > 0 && !a.shapes_given) {
        static const long long step[4][2] = {{12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008}};
        memcpy(a.shapes, step, sizeof step);
        a.nshapes = 4;
    }
    if (a.layers > 0 && !a.ms_given) {
        static const long long ms[7] = {1, 2, 4, 8, 16, 32, 64};
        memcpy(a.ms, ms, sizeof ms);
        a.nms = 7;
    }
    a.help = rc;
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
