/* bench_peak.c -- `qjit bench`'s second INT8 peak: a plain Hopper wgmma loop
 * (no global loads, no epilogue), compiled with NVRTC for sm_90a and timed
 * the way the bench times every call. cuBLAS INT8 at 8192^3 (bench.c) is a
 * whole GEMM, with its loads, its pipeline and its epilogue; this loop is
 * what the tensor cores issue when nothing else is in the way, so a kernel's
 * fraction of it is a fraction of the hardware rather than of cuBLAS. On
 * another architecture, or when the kernel fails to compile, load or run,
 * the peak is 0 ("not measured") and the bench goes on. */
#define _GNU_SOURCE
#include "bench.h"

#include <nvrtc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    PEAK_THREADS = 256,    /* two warpgroups, each issuing its own chain of wgmmas (the kernel's launch bounds) */
    PEAK_WARPGROUPS = PEAK_THREADS / 128,
    PEAK_ITERS = 8192,     /* wgmmas per warpgroup per launch: about a millisecond on an H100 */
    PEAK_ACCS = 128        /* s32 accumulators per thread of an m64n256 wgmma (64 x 256 / 128) */
};
/* The operations (two per multiply-add) of one m64n256k32 wgmma. */
#define PEAK_OPS_PER_WGMMA (2.0 * 64 * 256 * 32)

/* The kernel, after two macros the host writes (acc_defines): ACC_REGS, the
 * wgmma's list of the 128 accumulator registers, and ACC_OPERANDS, the same
 * registers as the asm statement's operands %0..%127. Both operands come
 * from one shared tile through descriptors, so nothing but the wgmmas uses
 * the SM's bandwidth; the accumulators stay in registers. */
static const char peak_kernel[] =
    "\n"
    "/* Each warpgroup issues m64n256k32 s8 wgmmas back to back into the same\n"
    " * accumulators, one still in flight while the next is issued\n"
    " * (wait_group 1), as a GEMM's main loop does with its K steps. */\n"
    "extern \"C\" __global__ void __launch_bounds__(256, 1) wgmma_peak(int iters, int magic, int *sink)\n"
    "{\n"
    "    /* 256 rows of 128 bytes in the 128-byte-swizzled K-major layout: B\n"
    "     * (n = 256) reads 32 bytes of K from every row, A (m = 64) from the\n"
    "     * first 64 rows. The layout repeats every 1024 bytes, the alignment\n"
    "     * the descriptor's zero base offset assumes. */\n"
    "    __shared__ __align__(1024) unsigned tile[256 * 128 / 4];\n"
    "    /* Not zeros: zero operands spare the tensor cores power, and so\n"
    "     * flatter the clock. */\n"
    "    for (int i = threadIdx.x; i < 256 * 128 / 4; i += blockDim.x)\n"
    "        tile[i] = 2654435761u * (unsigned)(i + 1);\n"
    "    /* The wgmmas read shared memory through the async proxy: each\n"
    "     * thread's writes are made visible to it before the barrier. */\n"
    "    asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");\n"
    "    __syncthreads();\n"
    "    unsigned long long addr = __cvta_generic_to_shared(tile);\n"
    "    /* Start address / 16; leading byte offset 16 / 16 (unused when\n"
    "     * swizzled); stride byte offset 1024 / 16 (8 rows of 128 bytes);\n"
    "     * 128-byte swizzle (1 in bits 62-63). */\n"
    "    unsigned long long desc = ((addr & 0x3FFFF) >> 4) | 1ull << 16 | 64ull << 32 | 1ull << 62;\n"
    "    int d[PEAK_ACCS];\n"
    "    for (int i = 0; i < PEAK_ACCS; i++)\n"
    "        d[i] = 0;\n"
    "    /* The zeros are defined here, before any wgmma.fence: one the compiler\n"
    "     * sank between a fence and its wgmma would make ptxas serialize\n"
    "     * every wgmma of the loop (C7515). */\n"
    "    asm volatile(\"\" : ACC_OPERANDS);\n"
    "    for (int it = 0; it < iters; it++) {\n"
    "        asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n"
    "        asm volatile(\"{\\n\"\n"
    "                     \".reg .pred p;\\n\"\n"
    "                     \"setp.ne.b32 p, %130, 0;\\n\"\n"
    "                     \"wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 \" ACC_REGS \", %128, %129, p;\\n\"\n"
    "                     \"}\\n\"\n"
    "                     : ACC_OPERANDS\n"
    "                     : \"l\"(desc), \"l\"(desc), \"n\"(1));\n"
    "        asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\");\n"
    "        asm volatile(\"wgmma.wait_group.sync.aligned 1;\\n\" ::: \"memory\");\n"
    "    }\n"
    "    asm volatile(\"wgmma.wait_group.sync.aligned 0;\\n\" ::: \"memory\");\n"
    "    /* A store that depends on the result, so no compiler may find the\n"
    "     * accumulators dead. */\n"
    "    if (d[0] == magic)\n"
    "        sink[blockIdx.x] = d[PEAK_ACCS - 1];\n"
    "}\n";

/* Appends to out (size bytes, *used of them written) as snprintf would;
 * *used may pass size, which the caller checks once at the end. */
static void append(char *out, size_t size, size_t *used, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + (*used < size ? *used : size), *used < size ? size - *used : 0, fmt, ap);
    va_end(ap);
    *used += n > 0 ? (size_t)n : 0;
}

/* The source's head: what the kernel is, PEAK_ACCS, and the two macros
 * naming the accumulators (16 registers, 8 operands a line). Returns the
 * length written, or 0 if it did not fit in size bytes. */
static size_t acc_defines(char *out, size_t size)
{
    size_t used = 0;
    append(out, size, &used, "// qjit bench: the INT8 tensor-core peak as a plain wgmma loop (sm_90a)\n"
                             "#define PEAK_ACCS %d\n#define ACC_REGS \\\n    \"{", PEAK_ACCS);
    for (int i = 0; i < PEAK_ACCS; i++)
        append(out, size, &used, "%%%d%s", i,
               i + 1 == PEAK_ACCS ? "}\"\n" : (i + 1) % 16 == 0 ? ", \" \\\n    \"" : ", ");
    append(out, size, &used, "#define ACC_OPERANDS \\\n    ");
    for (int i = 0; i < PEAK_ACCS; i++)
        append(out, size, &used, "\"+r\"(d[%d])%s", i,
               i + 1 == PEAK_ACCS ? "\n" : (i + 1) % 8 == 0 ? ", \\\n    " : ", ");
    return used < size ? used : 0;
}

/* The whole kernel source (malloc'ed), or NULL if memory ran out. */
static char *peak_source(void)
{
    const size_t head = 4096, size = head + sizeof peak_kernel;
    char *src = malloc(size);
    if (!src)
        return NULL;
    size_t n = acc_defines(src, head);
    if (!n) {
        free(src);
        return NULL;
    }
    memcpy(src + n, peak_kernel, sizeof peak_kernel);
    return src;
}

/* NVRTC's log for prog (malloc'ed), or NULL if it is empty. */
static char *nvrtc_log(nvrtcProgram prog)
{
    size_t size = 0;
    if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size <= 1)
        return NULL;
    char *log = malloc(size + 1);
    if (log && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) {
        log[size] = '\0';
        return log;
    }
    free(log);
    return NULL;
}

/* The kernel compiled for sm_90a: its cubin (malloc'ed), or NULL with the
 * reason in why (and NVRTC's log printed). A ptxas advisory that it
 * serialized the wgmmas is printed too: the peak it measures would then be
 * that of a slower loop. */
static void *compile_peak(char *why, size_t why_size)
{
    const char *opts[] = {"--gpu-architecture=sm_90a"};
    char *src = peak_source(), *log = NULL, *cubin = NULL;
    nvrtcProgram prog = NULL;
    size_t bytes = 0;
    nvrtcResult r = NVRTC_SUCCESS;
    if (!src) {
        snprintf(why, why_size, "out of host memory for its source");
        return NULL;
    }
    if ((r = nvrtcCreateProgram(&prog, src, "wgmma_peak.cu", 0, NULL, NULL)) != NVRTC_SUCCESS) {
        snprintf(why, why_size, "nvrtcCreateProgram: %s", nvrtcGetErrorString(r));
        goto done;
    }
    r = nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);
    log = nvrtc_log(prog);
    if (r != NVRTC_SUCCESS) {
        fprintf(stderr, "qjit bench: the wgmma peak kernel did not compile (%s, %s):\n%s\n", nvrtcGetErrorString(r),
                opts[0], log ? log : "(no log)");
        snprintf(why, why_size, "its kernel did not compile: %s", nvrtcGetErrorString(r));
        goto done;
    }
    if (log && (strstr(log, "Potential Performance Loss") || strstr(log, "warpgroup.arrive is injected")))
        fprintf(stderr, "qjit bench: warning: ptxas serialized the wgmma peak kernel's MMAs; the wgmma peak is "
                        "understated:\n%s\n", log);
    if ((r = nvrtcGetCUBINSize(prog, &bytes)) != NVRTC_SUCCESS || bytes == 0) {
        snprintf(why, why_size, "NVRTC gave no cubin for sm_90a (%s)", nvrtcGetErrorString(r));
        goto done;
    }
    if (!(cubin = malloc(bytes))) {
        snprintf(why, why_size, "out of host memory for its cubin");
        goto done;
    }
    if ((r = nvrtcGetCUBIN(prog, cubin)) != NVRTC_SUCCESS) {
        snprintf(why, why_size, "nvrtcGetCUBIN: %s", nvrtcGetErrorString(r));
        free(cubin);
        cubin = NULL;
    }
done:
    if (prog)
        nvrtcDestroyProgram(&prog);
    free(log);
    free(src);
    return cubin;
}

typedef struct peak_ud {
    const cli_cuda *d;
    CUfunction f;
    unsigned grid;
    void **args;
} peak_ud;

/* One launch of the loop: one CTA per SM (its registers leave room for no
 * second), on the legacy stream the bench's events time. */
static CUresult launch_peak(const peak_ud *u)
{
    return u->d->LaunchKernel(u->f, u->grid, 1, 1, PEAK_THREADS, 1, 1, 0, NULL, u->args, NULL);
}

static int do_peak(void *ud)
{
    return launch_peak(ud) != CUDA_SUCCESS;
}

double bench_wgmma_peak(bench *b, char *why, size_t why_size)
{
    cli_cuda *d = b->d;
    why[0] = '\0';
    /* wgmma is sm_90a's alone: Blackwell's tensor cores take tcgen05.mma. */
    if (d->cc_major != 9 || d->cc_minor != 0) {
        snprintf(why, why_size, "needs sm_90a for wgmma; this GPU is sm_%d%d", d->cc_major, d->cc_minor);
        return 0;
    }
    int iters = PEAK_ITERS, magic = 0x7E57AB1E;
    CUmodule mod = NULL;
    CUdeviceptr sink = 0;
    void *args[] = {&iters, &magic, &sink};
    peak_ud u = {d, NULL, (unsigned)d->sm_count, args};
    double tops = 0;
    CUresult r = CUDA_SUCCESS;
    void *cubin = compile_peak(why, why_size);
    if (!cubin)
        goto done;
    if ((r = d->ModuleLoadData(&mod, cubin)) != CUDA_SUCCESS ||
        (r = d->ModuleGetFunction(&u.f, mod, "wgmma_peak")) != CUDA_SUCCESS ||
        (r = d->MemAlloc(&sink, sizeof(int) * u.grid)) != CUDA_SUCCESS) {
        snprintf(why, why_size, "%s", cli_cuda_error(d, r, "loading its kernel"));
        goto done;
    }
    /* One checked run first, for the driver's reason if it fails; the timed
     * runs only say whether they did. */
    if ((r = launch_peak(&u)) != CUDA_SUCCESS || (r = d->CtxSynchronize()) != CUDA_SUCCESS) {
        snprintf(why, why_size, "%s", cli_cuda_error(d, r, "running its kernel"));
        goto done;
    }
    double us = bench_time_calls(b, do_peak, &u);
    if (us <= 0) {
        snprintf(why, why_size, "a timed launch of its kernel failed");
        goto done;
    }
    tops = (double)u.grid * PEAK_WARPGROUPS * PEAK_ITERS * PEAK_OPS_PER_WGMMA / (us * 1e-6) / 1e12;
done:
    if (sink)
        d->MemFree(sink);
    if (mod)
        d->ModuleUnload(mod);
    free(cubin);
    if (tops <= 0)
        fprintf(stderr, "qjit bench: note: the wgmma INT8 peak is not measured: %s\n", why);
    return tops;
}
