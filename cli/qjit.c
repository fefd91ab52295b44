/* qjit.c -- the qjit command: gen, compile, cache, tune, demo, bench, quant-error (a client of qjit.h). */
#define _GNU_SOURCE
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_main[] =
    "usage: qjit <command> [options]\n"
    "\n"
    "commands:\n"
    "  gen KEY              print the CUDA source generated for a variant key\n"
    "  compile KEY... | --defaults\n"
    "                       compile variants into the disk cache (no GPU needed with --arch)\n"
    "  cache ls|verify|clear\n"
    "                       list, verify or empty the disk cache\n"
    "  demo                 quantize a Llama-2-7B-sized layer, run it and check it against\n"
    "                       the CPU reference (without a GPU: pre-compile the default set)\n"
    "  bench                time each scheme's layers against cuBLASLt BF16/INT8/FP8 on the same GPU\n"
    "                       (Llama shapes, M = 1..4096), write a table, CSV and JSON\n"
    "  tune                 find the fastest variants per M for layers on this GPU and store\n"
    "                       them as tuning records (qjit tune --help)\n"
    "  quant-error          how accurate each scheme and group size is on an LLM-like layer\n"
    "                       (CPU only: error against the exact product, bits per weight)\n"
    "  version, --version   print the library version, its template path and cache folder\n"
    "\n"
    "Each command takes --help. Environment: QJIT_CACHE_DIR, QJIT_TEMPLATE_PATH, QJIT_ARCH,\n"
    "QJIT_CACHE_MAX_MB, QJIT_LOG=1.\n";

static int wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 1;
    return 0;
}

/* The value of the option at argv[*i] of a hand-parsed command: the next
 * argument (and *i moves past it), or NULL after saying that it is missing. */
static const char *option_value(const char *cmd, int argc, char **argv, int *i, const char *usage)
{
    if (*i + 1 < argc)
        return argv[++*i];
    fprintf(stderr, "qjit %s: %s needs a value\n%s", cmd, argv[*i], usage);
    return NULL;
}

static int cmd_gen(int argc, char **argv)
{
    static const char usage[] =
        "usage: qjit gen KEY [--arch ARCH]\n"
        "Prints the CUDA source the templates generate for KEY, e.g.\n"
        "  qjit gen 'scheme=w4a8-lqq;g=128;tile=64x128x64;warps=2x2;stages=4' --arch sm_90a\n"
        "The key's own arch field wins over --arch.\n";
    if (wants_help(argc, argv)) {
        fputs(usage, stdout);
        return 0;
    }
    const char *arch = NULL, *key = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--arch")) {
            if (!(arch = option_value("gen", argc, argv, &i, usage)))
                return 2;
        } else if (!key && argv[i][0] != '-')
            key = argv[i];
        else {
            fprintf(stderr, "qjit gen: unexpected argument '%s'\n%s", argv[i], usage);
            return 2;
        }
    }
    if (!key) {
        fputs(usage, stderr);
        return 2;
    }
    qjit_context *ctx = cli_context(arch, NULL);
    if (!ctx)
        return 1;
    char *src = NULL;
    size_t len = 0;
    qjit_status st = qjit_generate(ctx, key, &src, &len);
    int rc = st ? cli_fail(ctx, st, "gen") : 0;
    if (!st)
        fwrite(src, 1, len, stdout);
    qjit_free(ctx, src);
    qjit_context_destroy(ctx);
    return rc;
}

static int cmd_compile(int argc, char **argv)
{
    static const char usage[] =
        "usage: qjit compile (KEY... | --defaults [--dtype f16|bf16] | --records) [--arch ARCH]\n"
        "                    [--cache-dir DIR] [--threads N]\n"
        "Generates and compiles each variant into the disk cache; a cached one is only\n"
        "verified. Works without a GPU when --arch (or QJIT_ARCH) names the target.\n"
        "The variants compile on N threads at once (default 0: every CPU).\n"
        "--defaults compiles the default variant set (templates/dispatch.lua), of FP16\n"
        "layers or with --dtype bf16 of BF16 ones. --records compiles the kernels the\n"
        "folder's tuning records run (`qjit tune`; shipped with qjit cache import).\n";
    if (wants_help(argc, argv)) {
        fputs(usage, stdout);
        return 0;
    }
    const char *arch = NULL, *cache_dir = NULL;
    int defaults = 0, records = 0, nkeys = 0, threads = 0;
    qjit_dtype dtype = QJIT_DTYPE_F16;
    const char **keys = calloc((size_t)argc, sizeof *keys);
    if (!keys)
        return 1;
    for (int i = 1; i < argc; i++) {
        const int is_arch = !strcmp(argv[i], "--arch");
        if (is_arch || !strcmp(argv[i], "--cache-dir")) {
            const char *v = option_value("compile", argc, argv, &i, usage);
            if (!v) {
                free(keys);
                return 2;
            }
            if (is_arch)
                arch = v;
            else
                cache_dir = v;
        } else if (!strcmp(argv[i], "--dtype")) {
            const char *v = option_value("compile", argc, argv, &i, usage);
            if (!v || (strcmp(v, "f16") && strcmp(v, "bf16"))) {
                if (v)
                    fprintf(stderr, "qjit compile: --dtype takes f16 or bf16, not '%s'\n", v);
                free(keys);
                return 2;
            }
            dtype = strcmp(v, "bf16") ? QJIT_DTYPE_F16 : QJIT_DTYPE_BF16;
        } else if (!strcmp(argv[i], "--threads")) {
            const char *v = option_value("compile", argc, argv, &i, usage);
            char *end = NULL;
            long t = v ? strtol(v, &end, 10) : -1;
            if (!v || *end || end == v || t < 0 || t > 1024) {
                if (v)
                    fprintf(stderr, "qjit compile: --threads takes a count (0..1024, 0: every CPU), not '%s'\n", v);
                free(keys);
                return 2;
            }
            threads = (int)t;
        } else if (!strcmp(argv[i], "--defaults"))
            defaults = 1;
        else if (!strcmp(argv[i], "--records"))
            records = 1;
        else if (argv[i][0] != '-')
            keys[nkeys++] = argv[i];
        else {
            fprintf(stderr, "qjit compile: unknown option '%s'\n%s", argv[i], usage);
            free(keys);
            return 2;
        }
    }
    if (!nkeys && !defaults && !records) {
        fputs(usage, stderr);
        free(keys);
        return 2;
    }
    qjit_context *ctx = cli_context(arch, cache_dir);
    if (!ctx) {
        free(keys);
        return 1;
    }
    printf("cache: %s\n", qjit_context_cache_dir(ctx));
    int rc = 0, failed = 0;
    double total = 0, wall = 0;
    char *lists[2] = {NULL, NULL};
    /* Every key first (the explicit ones, the default set, the records'
     * kernels), then one parallel compile. */
    if (defaults) {
        qjit_status st = qjit_default_variants_dtype(ctx, arch, dtype, &lists[0]);
        if (st) {
            rc = cli_fail(ctx, st, "listing the default variants");
            goto done;
        }
        if ((rc = cli_append_lines(lists[0], &keys, &nkeys)))
            goto done;
    }
    if (records) {
        qjit_status st = qjit_record_variants(ctx, arch, &lists[1]);
        if (st) {
            rc = cli_fail(ctx, st, "listing the tuning records' variants");
            goto done;
        }
        if ((rc = cli_append_lines(lists[1], &keys, &nkeys)))
            goto done;
    }
    cli_compile_header();
    rc = cli_compile_keys(ctx, keys, nkeys, arch, threads, &failed, &total, &wall);
    if (failed)
        printf("%d of %d variant(s) compiled or cached, %d FAILED, %.3f s in all (%.3f s wall)\n", nkeys - failed, nkeys,
               failed, total, wall);
    else
        printf("%d variant(s) compiled or cached, %.3f s in all (%.3f s wall)\n", nkeys, total, wall);
done:
    qjit_free(ctx, lists[0]);
    qjit_free(ctx, lists[1]);
    qjit_context_destroy(ctx);
    free(keys);
    return rc;
}

typedef struct ls_state {
    int verbose;
    size_t count, bytes;
} ls_state;

static int print_entry(void *ud, const qjit_cache_entry_info *e)
{
    ls_state *s = ud;
    s->count++;
    s->bytes += e->bytes;
    if (e->valid)
        printf("ok       %8llu  %-8s %s\n", (unsigned long long)e->bytes, e->arch, e->key);
    else
        printf("CORRUPT  %8llu  %s: %s\n", (unsigned long long)e->bytes, e->name, e->problem ? e->problem : "?");
    return 0;
}

static int cmd_cache(int argc, char **argv)
{
    static const char usage[] =
        "usage: qjit cache (ls | verify | clear | export FILE | import FILE) [--cache-dir DIR]\n"
        "  ls      list entries (size, arch or 'record', variant or layer), verifying each\n"
        "  verify  as ls; exits 1 if any entry is corrupt\n"
        "  clear   remove every qjit entry (nothing else) from the folder\n"
        "  export  write the folder's tuning records into FILE, to ship to machines of the same GPU\n"
        "  import  store the tuning records of FILE (an export) in the folder, each verified\n";
    if (wants_help(argc, argv) || argc < 2) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *verb = argv[1];
    const int ships = !strcmp(verb, "export") || !strcmp(verb, "import");
    if (strcmp(verb, "ls") && strcmp(verb, "verify") && strcmp(verb, "clear") && !ships) {
        fprintf(stderr, "qjit cache: unknown action '%s'\n%s", verb, usage);
        return 2;
    }
    const char *cache_dir = NULL, *file = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--cache-dir")) {
            if (!(cache_dir = option_value("cache", argc, argv, &i, usage)))
                return 2;
        } else if (ships && !file && argv[i][0] != '-') {
            file = argv[i];
        } else {
            fprintf(stderr, "qjit cache: unexpected argument '%s'\n%s", argv[i], usage);
            return 2;
        }
    }
    if (ships && !file) {
        fprintf(stderr, "qjit cache %s: needs a FILE\n%s", verb, usage);
        return 2;
    }
    qjit_context *ctx = cli_context(NULL, cache_dir);
    if (!ctx)
        return 1;
    int rc = 0;
    qjit_status st;
    if (ships) {
        size_t n = 0, bad = 0;
        st = !strcmp(verb, "export") ? qjit_records_export(ctx, file, &n) : qjit_records_import(ctx, file, &n, &bad);
        if (st)
            rc = cli_fail(ctx, st, !strcmp(verb, "export") ? "cache export" : "cache import");
        else if (!strcmp(verb, "export"))
            printf("%zu tuning record(s) of %s written to %s\n", n, qjit_context_cache_dir(ctx), file);
        else
            printf("%zu tuning record(s) stored in %s, %zu damaged and skipped\n", n, qjit_context_cache_dir(ctx), bad);
        if (bad)
            rc = 1;
    } else if (!strcmp(verb, "clear")) {
        size_t removed = 0;
        st = qjit_cache_clear(ctx, &removed);
        if (st)
            rc = cli_fail(ctx, st, "cache clear");
        else
            printf("removed %zu file(s) from %s\n", removed, qjit_context_cache_dir(ctx));
    } else {
        ls_state s = {0, 0, 0};
        size_t bad = 0;
        printf("cache: %s\n", qjit_context_cache_dir(ctx));
        st = qjit_cache_list(ctx, print_entry, &s, &bad);
        if (st)
            rc = cli_fail(ctx, st, "cache ls");
        else {
            printf("%zu entr%s, %.1f MB, %zu corrupt\n", s.count, s.count == 1 ? "y" : "ies", s.bytes / 1e6, bad);
            if (bad && !strcmp(verb, "verify"))
                rc = 1;
        }
    }
    qjit_context_destroy(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(usage_main, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "gen"))
        return cmd_gen(argc - 1, argv + 1);
    if (!strcmp(cmd, "compile"))
        return cmd_compile(argc - 1, argv + 1);
    if (!strcmp(cmd, "cache"))
        return cmd_cache(argc - 1, argv + 1);
    if (!strcmp(cmd, "demo"))
        return cmd_demo(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return cmd_bench(argc - 1, argv + 1);
    if (!strcmp(cmd, "tune"))
        return cmd_tune(argc - 1, argv + 1);
    if (!strcmp(cmd, "quant-error"))
        return cmd_quant_error(argc - 1, argv + 1);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("qjit %s\n", qjit_version_string());
        /* Where this build looks for its templates and cache (no GPU needed). */
        qjit_context *ctx = NULL;
        if (qjit_context_create(NULL, &ctx) == QJIT_OK) {
            printf("templates: %s\ncache: %s\n", qjit_context_templates(ctx), qjit_context_cache_dir(ctx));
            qjit_context_destroy(ctx);
        }
        return 0;
    }
    fprintf(stderr, "qjit: unknown command '%s'\n%s", cmd, usage_main);
    return 2;
}
