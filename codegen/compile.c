/* compile.c -- NVRTC: options, arch check, compile to cubin. */
#define _GNU_SOURCE
#include "compile.h"
#include "core.h"

#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void qjit__nvrtc_version(char out[16])
{
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    snprintf(out, 16, "%d.%d", major, minor);
}

/* "sm_90a" -> 90; -1 if not of that form. */
static int arch_number(const char *arch)
{
    if (strncmp(arch, "sm_", 3))
        return -1;
    char *end = NULL;
    long n = strtol(arch + 3, &end, 10);
    if (end == arch + 3 || (*end && strcmp(end, "a") && strcmp(end, "f")))
        return -1;
    return (int)n;
}

qjit_status qjit__nvrtc_check_arch(qjit_context *ctx, const char *arch)
{
    int want = arch_number(arch);
    int count = 0;
    if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0 || count > 256)
        return qjit__error(ctx, QJIT_INTERNAL, "NVRTC did not report its supported architectures");
    int archs[256];
    nvrtcGetSupportedArchs(archs);
    for (int i = 0; i < count; i++)
        if (archs[i] == want)
            return QJIT_OK;
    char list[1024] = "";
    size_t used = 0;
    for (int i = 0; i < count && used + 12 < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%ssm_%d", i ? " " : "", archs[i]);
    char version[16];
    qjit__nvrtc_version(version);
    return qjit__error(ctx, QJIT_UNSUPPORTED_ARCH, "NVRTC %s cannot target %s; it supports: %s",
                       version, arch, list);
}

size_t qjit__nvrtc_options(const char *arch, int line_info, const char *argv[8], char *joined, size_t size)
{
    /* One static spelling per arch: the option text is part of the cache key.
     * -minimal leaves out what no template uses (textures, the device runtime's
     * functions and types, launches from the device): the same binaries, ~2 %
     * less compile time (the default set on sm_90a, 2-core machine).
     * --warn-on-spills: ptxas says in the log where registers go to local
     * memory (logged, qjit__nvrtc_advisories); the same SASS. */
    static const char *const fixed[] = {"-std=c++17", "-default-device", "--extra-device-vectorization", "-minimal",
                                        "-Xptxas=--warn-on-spills"};
    snprintf(joined, size, "--gpu-architecture=%s", arch);
    size_t n = 0;
    argv[n++] = NULL; /* filled by the caller from `joined`'s first word */
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        argv[n++] = fixed[i];
    if (line_info)
        argv[n++] = "-lineinfo";
    size_t used = strlen(joined);
    for (size_t i = 1; i < n && used < size; i++)
        used += (size_t)snprintf(joined + used, size - used, " %s", argv[i]);
    return n;
}

size_t qjit__nvrtc_advisories(qjit_context *ctx, const char *log, const char *variant)
{
    size_t count = 0;
    for (const char *line = log; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        /* Also ptxas's warpgroup arrives injected around a wgmma (C7519):
         * waits the kernel did not ask for. */
        static const char mark[] = "Potential Performance Loss", arrive[] = "warpgroup.arrive is injected";
        const char *hit = memmem(line, len, mark, sizeof mark - 1);
        if (!hit)
            hit = memmem(line, len, arrive, sizeof arrive - 1);
        if (hit && memmem(line, (size_t)(hit - line), "ptxas", 5)) {
            /* "ptxas info    : (C7520) Potential ...": from the code on. */
            const char *text = memmem(line, (size_t)(hit - line), ": ", 2);
            text = text ? text + 2 : line;
            count++;
            qjit__log(ctx, "ptxas advisory for %s: %.*s", variant, (int)(line + len - text), text);
        }
        /* Registers spilled to local memory (--warn-on-spills): logged, not
         * counted -- a few bytes stored once outside the main loop cost
         * nothing, and only the SASS says where they are. */
        static const char spill[] = "Registers are spilled to local memory";
        const char *sp = memmem(line, len, spill, sizeof spill - 1);
        if (sp && memmem(line, (size_t)(sp - line), "ptxas", 5))
            qjit__log(ctx, "ptxas spills for %s: %.*s", variant, (int)(line + len - sp), sp);
        line = end ? end + 1 : NULL;
    }
    return count;
}

/* The program's log (qjit__alloc), or NULL if it is empty or memory ran out. */
static char *program_log(qjit_context *ctx, nvrtcProgram prog, size_t *size)
{
    *size = 0;
    if (nvrtcGetProgramLogSize(prog, size) != NVRTC_SUCCESS || *size <= 1)
        return NULL;
    char *log = qjit__alloc(ctx, *size + 1);
    if (log) {
        nvrtcGetProgramLog(prog, log);
        log[*size] = '\0';
    }
    return log;
}

qjit_status qjit__nvrtc_compile(qjit_context *ctx, const char *source, const char *name, const char *arch,
                                int line_info, const char *variant, void **cubin, size_t *bytes)
{
    *cubin = NULL;
    *bytes = 0;
    qjit_status st = qjit__nvrtc_check_arch(ctx, arch);
    if (st)
        return st;
    const char *argv[8];
    char joined[512], archopt[64];
    size_t argc = qjit__nvrtc_options(arch, line_info, argv, joined, sizeof joined);
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    argv[0] = archopt;

    nvrtcProgram prog = NULL;
    nvrtcResult r = nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS)
        return qjit__error(ctx, QJIT_COMPILE, "nvrtcCreateProgram: %s", nvrtcGetErrorString(r));
    r = nvrtcCompileProgram(prog, (int)argc, argv);
    if (r != NVRTC_SUCCESS) {
        size_t log_size = 0;
        char *log = program_log(ctx, prog, &log_size);
        /* The error text is 8 KB and the variant key and the saved
         * source's path follow the log: keep the log's start. */
        const size_t keep = 4096;
        const char *text = log ? log : "(no log)";
        char cut[128] = "";
        if (log && log_size > keep)
            snprintf(cut, sizeof cut, "\n... (the NVRTC log is cut here: %zu more bytes; compile the saved source to "
                     "see them all)", log_size - keep);
        st = qjit__error(ctx, QJIT_COMPILE, "NVRTC failed (%s) with options: %s\n%.*s%s", nvrtcGetErrorString(r),
                         joined, (int)(cut[0] ? keep : strlen(text)), text, cut);
        qjit__free(ctx, log, log_size + 1);
        goto done;
    }
    size_t n = 0;
    if ((r = nvrtcGetCUBINSize(prog, &n)) != NVRTC_SUCCESS || n == 0) {
        st = qjit__error(ctx, QJIT_COMPILE, "NVRTC produced no cubin for %s (%s)", arch,
                         nvrtcGetErrorString(r));
        goto done;
    }
    void *bin = qjit__alloc(ctx, n);
    if (!bin) {
        st = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory for a %zu-byte cubin", n);
        goto done;
    }
    nvrtcGetCUBIN(prog, bin);
    *cubin = bin;
    *bytes = n;
    {
        size_t log_size = 0;
        char *log = program_log(ctx, prog, &log_size);
        qjit__nvrtc_advisories(ctx, log, variant);
        qjit__free(ctx, log, log_size + 1);
    }
done:
    nvrtcDestroyProgram(&prog);
    return st;
}
