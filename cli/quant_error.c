/* quant_error.c -- `qjit quant-error`: prints how accurate each scheme and
 * group size is on a generated LLM-like layer, and writes CSV / JSON. The
 * computation is accuracy.c's; this file only prints. CPU only. */
#define _GNU_SOURCE
#include "accuracy.h"
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: qjit quant-error [--n N] [--k K] [--m M] [--seed S] [--schemes LIST|all]\n"
    "                        [--groups LIST] [--sparsity LIST] [--rblock RxC] [--a8 LIST]\n"
    "                        [--csv FILE] [--json FILE]\n"
    "Measures on the CPU (no GPU needed) how far each scheme's output is from the exact\n"
    "product, on one generated layer with the statistics of real LLM layers, to help\n"
    "choose a scheme and group size. The quantized output is computed exactly as the\n"
    "kernels compute it (the library's CPU reference): per-token INT8 activations (INT4\n"
    "for w4a4; INT8 and INT4 parts for w4ax, w4ax-s), the packed weights, INT32 sums, the FP32\n"
    "epilogue. Columns:\n"
    "  bits/w    packed bytes x 8 per weight, scales and group parameters included\n"
    "  rel err   ||Y - Y_ref||_F / ||Y_ref||_F, Y_ref = X W^T in double, unquantized\n"
    "  w err     ||Y - Y_act||_F / ||Y_ref||_F, Y_act = the \"activations only\" product: the\n"
    "            error the weights add (the part a scheme, group or budget can change)\n"
    "  max err   max |Y - Y_ref| / max |Y_ref|\n"
    "  x floor   rel err over that of \"activations only\" (INT8 activations times the\n"
    "            unquantized weights, in double): the floor every scheme sits on; w4a4's\n"
    "            floor is \"A4 activations\" (INT4 activations times the same weights)\n"
    "  alpha     w4a8-is's amplifier of its integer group scales\n"
    "  rho       the sparsity budget, and in brackets the fraction of weight blocks (64 x 64\n"
    "            unless --rblock) that carry a 4-bit residual (only blocks it improves are kept);\n"
    "            for w4ax, w4ax-s the INT8 share (a8) and the channels kept in INT8\n"
    "Options:\n"
    "  --n N, --k K     the layer: N output channels (a multiple of 16), K input channels\n"
    "                   (a multiple of 256); default 4096 x 4096\n"
    "  --m M            tokens (default 64)\n"
    "  --seed S         seed of the generated layer (default 12345)\n"
    "  --schemes LIST   comma list of w4a8-lqq, w4a8-qoq, w4a8-is, w8a8, w4a4, w4ax, w4ax-s\n"
    "                   (or lqq, qoq, is, int8, int4), or all (the default)\n"
    "  --groups LIST    group sizes along K, 0 = per channel (default 0,64,128); a group\n"
    "                   a scheme does not take (w8a8 is per channel only, w4a8-is groups\n"
    "                   only) is skipped with a note\n"
    "  --sparsity LIST  budgets in [0, 1] (default 0 = dense): a row per budget for the\n"
    "                   schemes that take a residual (w4a8-lqq, w4a8-qoq with groups), its\n"
    "                   blocks chosen by Hessian-weighted error on 128 calibration tokens\n"
    "                   (the activations' statistics, other tokens)\n"
    "  --rblock RxC     the residual's blocks: R rows (16, 32, 64, 128) x C input channels\n"
    "                   (64, 128); default 64 x 64\n"
    "  --a8 LIST        the INT8 shares of w4ax and w4ax-s (default 0.05,0.1,0.2): a row per\n"
    "                   share, the 128-channel blocks of the largest calibration magnitudes\n"
    "                   in INT8, the rest INT4 (w4ax: two scales per token and two INT32\n"
    "                   sums; w4ax-s: one scale, max(max8 / 127, max4 / 7), and one sum)\n"
    "  --csv F, --json F  also write the numbers to F\n"
    "The layer (seeded: the same seed gives the same layer and numbers):\n"
    "  W[n,k] = fp16(0.02 r[n] c[k] t[n,k] / sqrt(5/3)), N x K: t Student-t with 5\n"
    "    degrees of freedom (heavy tails, kurtosis 9), r[n] = exp(0.25 z - 0.0625) row\n"
    "    scales, c[k] uniform in 3..6 on max(1, K/512) outlier input channels, else 1\n"
    "  X[m,k] = fp16(a[m] d[k] z[m,k]), M x K: z standard normal, a[m] = exp(0.5 z)\n"
    "    token scales, d[k] uniform in 20..50 on max(1, K/512) outlier channels, else 1\n";

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const char *row_name(const qa_row *r)
{
    return r->scheme ? qjit_scheme_name(r->scheme) : r->act_bits == 4 ? "A4 activations" : "activations only";
}

/* The floor row a row sits on: the one of its activations' bits. */
static const qa_row *floor_of(const qa_row *rows, int nrows, const qa_row *r)
{
    for (int i = 0; i < nrows; i++)
        if (!rows[i].scheme && rows[i].act_bits == r->act_bits)
            return &rows[i];
    return &rows[0];
}

static double vs_floor(const qa_row *rows, int nrows, const qa_row *r)
{
    const qa_row *f = floor_of(rows, nrows, r);
    return f->rel_error > 0 ? r->rel_error / f->rel_error : 0.0;
}

static void print_row(const qa_row *r, const qa_row *floor_row)
{
    char g[16], bits[16] = "-", alpha[24] = "-", ratio[16] = "-";
    if (r->scheme) {
        snprintf(bits, sizeof bits, "%.3f", r->bits_per_weight);
        if (floor_row->rel_error > 0)
            snprintf(ratio, sizeof ratio, "%.2f", r->rel_error / floor_row->rel_error);
    }
    if (r->alpha > 0)
        snprintf(alpha, sizeof alpha, "%.0f", r->alpha);
    char rho[48] = "-";
    if (r->sparsity > 0)
        snprintf(rho, sizeof rho, "%g (%.1f%%)", r->sparsity, 100 * r->density);
    else if (qa_two_part(r->scheme))
        snprintf(rho, sizeof rho, "a8 %g (%lld ch)", r->a8, (long long)r->a8_channels);
    char werr[16] = "-";
    if (r->scheme)
        snprintf(werr, sizeof werr, "%.4f%%", 100 * r->weight_error);
    printf("%-17s %-7s %7s %10.4f%% %11s %10.4f%% %8s %9s  %s\n", row_name(r),
           r->scheme ? qa_group_text(r->group, g, sizeof g) : "-", bits, 100 * r->rel_error, werr, 100 * r->max_error,
           ratio, alpha, rho);
    fflush(stdout);
}

/* A JSON number, or null for what JSON cannot hold. */
static void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fputs("null", f);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void write_csv(FILE *f, const qa_args *a, const qa_row *rows, int nrows)
{
    fprintf(f, "scheme,group,bits_per_weight,payload_bytes,rel_error,max_error,vs_floor,alpha,N,K,M,seed,sparsity,"
               "density,weight_error,block_n,block_k,act_bits,a8_fraction,a8_channels\n");
    for (int i = 0; i < nrows; i++) {
        const qa_row *r = &rows[i];
        if (r->scheme)
            fprintf(f, "%s,%d,%.6f,%zu,", row_name(r), r->group, r->bits_per_weight, r->payload_bytes);
        else
            fprintf(f, "%s,,,,", r->act_bits == 4 ? "a4-activations-only" : "activations-only");
        fprintf(f, "%.9g,%.9g,%.6g,", r->rel_error, r->max_error, vs_floor(rows, nrows, r));
        if (r->alpha > 0)
            fprintf(f, "%.0f", r->alpha);
        fprintf(f, ",%lld,%lld,%lld,%llu,%g,%.6f,%.9g,%d,%d,%d,%g,%lld\n", a->n, a->k, a->m,
                (unsigned long long)a->seed, r->sparsity, r->density, r->weight_error,
                r->sparsity > 0 ? (a->rblock_n ? a->rblock_n : 64) : 0,
                r->sparsity > 0 ? (a->rblock_k ? a->rblock_k : 64) : 0, r->act_bits, r->a8, (long long)r->a8_channels);
    }
}

static void write_json(FILE *f, const qa_args *a, const qa_row *rows, int nrows, const qa_plan *plan)
{
    fprintf(f, "{\"N\": %lld, \"K\": %lld, \"M\": %lld, \"seed\": %llu,\n", a->n, a->k, a->m,
            (unsigned long long)a->seed);
    fprintf(f, " \"weights\": \"fp16(0.02 r[n] c[k] t5[n,k] / sqrt(5/3)); r = exp(0.25 z - 0.0625); "
               "c = 3..6 on max(1, K/512) outlier columns\",\n");
    fprintf(f, " \"activations\": \"fp16(a[m] d[k] z[m,k]); a = exp(0.5 z); d = 20..50 on max(1, K/512) "
               "outlier channels\",\n");
    fprintf(f, " \"rows\": [\n");
    for (int i = 0; i < nrows; i++) {
        const qa_row *r = &rows[i];
        fprintf(f, "  {\"scheme\": \"%s\", \"act_bits\": %d, \"group\": ",
                r->scheme ? row_name(r) : r->act_bits == 4 ? "a4-activations-only" : "activations-only", r->act_bits);
        if (r->scheme)
            fprintf(f, "%d, \"bits_per_weight\": %.6f, \"payload_bytes\": %zu", r->group, r->bits_per_weight,
                    r->payload_bytes);
        else
            fprintf(f, "null, \"bits_per_weight\": null, \"payload_bytes\": null");
        fprintf(f, ", \"rel_error\": ");
        json_num(f, r->rel_error);
        fprintf(f, ", \"weight_error\": ");
        json_num(f, r->weight_error);
        fprintf(f, ", \"max_error\": ");
        json_num(f, r->max_error);
        fprintf(f, ", \"vs_floor\": ");
        json_num(f, vs_floor(rows, nrows, r) > 0 ? vs_floor(rows, nrows, r) : NAN);
        fprintf(f, ", \"alpha\": ");
        if (r->alpha > 0)
            json_num(f, r->alpha);
        else
            fputs("null", f);
        fprintf(f, ", \"sparsity\": %g, \"density\": %.6f, \"a8_fraction\": %g, \"a8_channels\": %lld}%s\n",
                r->sparsity, r->density, r->a8, (long long)r->a8_channels, i + 1 < nrows ? "," : "");
    }
    fprintf(f, " ],\n \"skipped\": [");
    for (int i = 0; i < plan->nskips; i++) {
        fprintf(f, "%s\n  {\"scheme\": \"%s\", \"group\": %d, \"sparsity\": %g, \"reason\": ", i ? "," : "",
                qjit_scheme_name(plan->skips[i].scheme), plan->skips[i].group, plan->skips[i].sparsity);
        json_str(f, plan->skips[i].reason);
        fputc('}', f);
    }
    fprintf(f, "%s]}\n", plan->nskips ? "\n " : "");
}

static FILE *open_out(const char *path)
{
    FILE *f = path ? fopen(path, "w") : NULL;
    if (path && !f)
        fprintf(stderr, "qjit quant-error: cannot write '%s': %s\n", path, strerror(errno));
    return f;
}

static int close_out(FILE *f, const char *path)
{
    if (!f)
        return 0;
    int bad = ferror(f);
    if (fclose(f) || bad) {
        fprintf(stderr, "qjit quant-error: writing '%s' failed\n", path);
        return 1;
    }
    return 0;
}

int cmd_quant_error(int argc, char **argv)
{
    /* Everything is checked before anything is computed: a typo costs nothing. */
    qa_args a;
    char err[1024];
    if (qa_parse_args(argc, argv, &a, err, sizeof err)) {
        fprintf(stderr, "qjit quant-error: %s\n%s", err, usage);
        return 2;
    }
    if (a.help) {
        fputs(usage, stdout);
        return 0;
    }
    double t0 = now_s();
    /* The context only carries the library's messages: a missing one
     * (unusable environment) costs the messages, not the command. */
    qjit_context *ctx = NULL;
    if (qjit_context_create(NULL, &ctx) != QJIT_OK)
        ctx = NULL;
    static qa_plan plan;
    if (qa_make_plan(ctx, &a, &plan, err, sizeof err)) {
        fprintf(stderr, "qjit quant-error: %s\n", err);
        qjit_context_destroy(ctx);
        return 2;
    }
    if (plan.njobs == 0) {
        fprintf(stderr, "qjit quant-error: no scheme takes any of the groups given\n");
        for (int i = 0; i < plan.nskips; i++) {
            fprintf(stderr, "  %s g=%d: %s\n", qjit_scheme_name(plan.skips[i].scheme), plan.skips[i].group,
                    plan.skips[i].reason);
        }
        qjit_context_destroy(ctx);
        return 2;
    }
    FILE *csv = open_out(a.csv_path), *json = open_out(a.json_path);
    if ((a.csv_path && !csv) || (a.json_path && !json)) {
        if (csv)
            fclose(csv);
        if (json)
            fclose(json);
        qjit_context_destroy(ctx);
        return 1;
    }

    printf("quant-error: W %lld x %lld (N x K), X %lld x %lld (M x K), seed %llu; on the CPU, as the kernels "
           "compute\n", a.n, a.k, a.m, a.k, (unsigned long long)a.seed);
    printf("W: Student-t(5), std 0.02, row scales lognormal(0.25), %d outlier input channel(s) 3-6x; "
           "X: normal, token scales lognormal(0.5), %d outlier channel(s) 20-50x\n",
           qa_outlier_count(a.k), qa_outlier_count(a.k));
    fflush(stdout);
    qa_layer L;
    qa_row rows[1 + QA_MAX_JOBS];
    int nrows = 0, rc = 0;
    if (qa_layer_make(&L, a.n, a.k, a.m, a.seed, ctx, err, sizeof err)) {
        fprintf(stderr, "qjit quant-error: %s\n", err);
        rc = 1;
        goto out;
    }
    printf("\n%-17s %-7s %7s %11s %11s %11s %8s %9s  %s\n", "scheme", "group", "bits/w", "rel err", "w err",
           "max err", "x floor", "alpha", "rho");
    /* The floors: INT8 activations alone, and INT4 ones where a scheme uses them. */
    int a4 = 0;
    for (int i = 0; i < plan.njobs; i++)
        a4 |= qjit_scheme_activation_bits(plan.jobs[i].scheme) == 4;
    for (int bits = 8; bits >= 4; bits -= 4) {
        if (bits == 4 && !a4)
            continue;
        if (qa_row_floor(&L, bits, &rows[nrows], err, sizeof err)) {
            fprintf(stderr, "qjit quant-error: %s\n", err);
            rc = 1;
            goto out;
        }
        print_row(&rows[nrows], &rows[nrows]);
        nrows++;
    }
    const int nfloors = nrows;
    for (int i = 0; i < plan.njobs; i++) {
        if (qa_row_compute(ctx, &L, plan.jobs[i].scheme, plan.jobs[i].group, plan.jobs[i].sparsity, a.rblock_n,
                           a.rblock_k, plan.jobs[i].a8, &rows[nrows], err, sizeof err)) {
            fprintf(stderr, "qjit quant-error: %s\n", err);
            rc = 1;
            continue;
        }
        print_row(&rows[nrows], floor_of(rows, nfloors, &rows[nrows]));
        nrows++;
    }
    if (plan.nskips) {
        printf("\n");
        for (int i = 0; i < plan.nskips; i++) {
            printf("note: %s g=%d%s skipped: %s\n", qjit_scheme_name(plan.skips[i].scheme), plan.skips[i].group,
                   plan.skips[i].sparsity > 0 ? " with a residual" : "", plan.skips[i].reason);
        }
    }
    if (csv)
        write_csv(csv, &a, rows, nrows);
    if (json)
        write_json(json, &a, rows, nrows, &plan);
    printf("\n%.1f s on the CPU\n", now_s() - t0);
out:
    rc |= close_out(csv, a.csv_path);
    rc |= close_out(json, a.json_path);
    qa_layer_free(&L);    /* qa_layer_make leaves nothing to free when it fails */
    qjit_context_destroy(ctx);
    return rc;
}
