/* common.c -- what the qjit command's files share (cli.h): a context from
 * the common options, the GPU brought up, errors printed, variants compiled
 * into the cache one printed row each. */
#define _GNU_SOURCE
#include "cli.h"
#include "libcuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Without QJIT_LOG=1 the commands stay quiet but for ptxas's performance
 * advisories on a variant they compile (a template edit that serialized the
 * MMAs, say): those are warnings a user should see. */
static void log_advisories(void *ud, const char *line)
{
    (void)ud;
    if (!strncmp(line, "ptxas advisory", 14))
        fprintf(stderr, "qjit: warning: %s\n", line);
}

qjit_context *cli_context(const char *arch, const char *cache_dir)
{
    qjit_context_options o;
    qjit_context_options_init(&o);
    o.arch = arch;
    o.cache_dir = cache_dir;
    const char *log_env = getenv("QJIT_LOG");
    if (!log_env || strcmp(log_env, "1"))
        o.log = log_advisories;
    qjit_context *ctx = NULL;
    qjit_status st = qjit_context_create(&o, &ctx);
    if (st) {
        fprintf(stderr, "qjit: cannot create a context (%s): %s\n", qjit_status_name(st), qjit_last_error(NULL));
        return NULL;
    }
    return ctx;
}

qjit_status cli_gpu(qjit_context *ctx, cli_cuda *cu, char arch[16])
{
    /* cli_context's contexts take the default device, 0. */
    qjit_status st = cli_cuda_open(cu, 0);
    if (st == QJIT_OK && (st = qjit_context_arch(ctx, arch, 16)))
        qjit_last_error_copy(ctx, cu->error, sizeof cu->error);
    return st;
}

int cli_fail_because(qjit_status st, const char *what, const char *why)
{
    fprintf(stderr, "qjit: %s failed: %s\n%s\n", what, qjit_status_name(st), why);
    return 1;
}

int cli_fail(qjit_context *ctx, qjit_status st, const char *what)
{
    return cli_fail_because(st, what, qjit_last_error(ctx));
}

void cli_compile_header(void)
{
    printf("%-8s %9s %9s  %s\n", "result", "gen s", "total s", "variant");
}

int cli_append_lines(char *list, const char ***keys, int *n)
{
    for (char *p = list; p && *p;) {
        char *eol = strchr(p, '\n');
        if (eol)
            *eol = '\0';
        if (*p) {
            const char **grown = realloc(*keys, sizeof **keys * (size_t)(*n + 1));
            if (!grown) {
                fprintf(stderr, "qjit: out of memory listing variants\n");
                return 1;
            }
            *keys = grown;
            (*keys)[(*n)++] = p;
        }
        p = eol ? eol + 1 : NULL;
    }
    return 0;
}

int cli_compile_keys(qjit_context *ctx, const char *const *keys, int n, const char *arch, int threads, int *failed,
                     double *total, double *wall)
{
    if (n <= 0)
        return 0;
    qjit_compile_result *r = calloc((size_t)n, sizeof *r);
    if (!r) {
        fprintf(stderr, "qjit: out of memory for %d compile results\n", n);
        return 1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* The keys are there and the results have room: what went wrong is
     * per key. */
    (void)qjit_compile_many(ctx, keys, n, arch, threads, r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *wall += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (r[i].status != QJIT_OK) {
            ++*failed;
            rc = cli_fail_because(r[i].status, keys[i], r[i].error);
            continue;
        }
        *total += r[i].info.total_seconds;
        /* The variant as the cache keeps it (a key may be short or empty:
         * the defaults fill it). */
        char canon[1024];
        if (qjit_key_canonicalize(ctx, keys[i], canon, sizeof canon) != QJIT_OK)
            snprintf(canon, sizeof canon, "%s", keys[i]);
        printf("%-8s %9.3f %9.3f  %s\n", r[i].info.from_cache ? "cached" : r[i].info.healed ? "healed" : "compiled",
               r[i].info.generate_seconds, r[i].info.total_seconds, canon);
    }
    free(r);
    return rc;
}

int cli_scheme_group(qjit_scheme s, int group, const long long (*shapes)[2], int nshapes)
{
    const int tries[3] = {group, 128, 0};
    for (int t = 0; t < 3; t++) {
        int ok = 1;
        for (int i = 0; i < nshapes && ok; i++) {
            size_t bytes;
            ok = qjit_packed_size(s, tries[t], shapes[i][0], shapes[i][1], &bytes) == QJIT_OK;
        }
        if (ok)
            return tries[t];
    }
    return group;
}
