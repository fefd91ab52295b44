/* Times activation-quantization kernels alone (L2 flushed before each launch), median of reps. */
#include "context.h"
#include "module.h"
#include "qjit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CK(x) do { CUresult r_ = (x); if (r_) { printf("CUDA error %d at %s:%d\n", (int)r_, __FILE__, __LINE__); exit(1); } } while (0)
static int cmpf(const void *a, const void *b) { float x = *(const float *)a, y = *(const float *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv)
{
    qjit_context_options o; qjit_context_options_init(&o);
    qjit_context *ctx;
    if (qjit_context_create(&o, &ctx)) { printf("ctx: %s\n", qjit_last_error(ctx)); return 1; }
    char arch[16];
    if (qjit_context_arch(ctx, arch, sizeof arch)) { printf("arch: %s\n", qjit_last_error(ctx)); return 1; }
    qjit__driver *d = &ctx->driver;
    static const int KS[] = {4096, 11008, 28672};
    static const int MS[] = {1, 16, 64, 1024};
    CUdeviceptr dX, dP, dS, dXq, dsx, dC, flush;
    size_t maxk = 28672, maxm = 1024;
    CK(d->MemAlloc(&dX, maxk * maxm * 2)); CK(d->MemAlloc(&dP, maxk * 4)); CK(d->MemAlloc(&dS, maxk / 8)); CK(d->MemAlloc(&dXq, maxk * maxm));
    CK(d->MemAlloc(&dsx, maxm * 8)); CK(d->MemAlloc(&dC, 16)); CK(d->MemAlloc(&flush, 256u << 20));
    unsigned short *X = malloc(maxk * maxm * 2);
    for (size_t i = 0; i < maxk * maxm; i++) X[i] = (unsigned short)(0x3C00 + (rand() & 0x3FF));
    CK(d->MemcpyHtoD(dX, X, maxk * maxm * 2));
    CUevent e0, e1; CK(d->EventCreate(&e0, 0)); CK(d->EventCreate(&e1, 0));
    for (int a = 1; a < argc; a++) {
        const char *key = argv[a];
        const qjit__kernel *k;
        if (qjit__kernel_get(ctx, key, &k)) { printf("%s: %s\n", key, qjit_last_error(ctx)); continue; }
        for (size_t ki = 0; ki < 3; ki++) {
            int K = KS[ki];
            const char *c = strstr(key, "cache=");
            if (c && atoi(c + 6) < K) continue;
            if (c && atoi(c + 6) >= 2 * K && atoi(c + 6) > 8192) continue;
            int k8 = (K / 10 + 127) / 128 * 128;
            unsigned *perm = malloc(sizeof(unsigned) * K); char *is8 = calloc(K, 1);
            for (int j = 0; j < k8; ) { int ch = rand() % K; if (!is8[ch]) { is8[ch] = 1; j++; } }
            int p = 0; for (int ch = 0; ch < K; ch++) if (is8[ch]) perm[p++] = ch;
            for (int ch = 0; ch < K; ch++) if (!is8[ch]) perm[p++] = ch;
            CK(d->MemcpyHtoD(dP, perm, sizeof(unsigned) * K));
            static unsigned char set[28672 / 8];
            memset(set, 0, sizeof set);
            for (int ch = 0; ch < K; ch++) if (is8[ch]) set[ch / 8] |= (unsigned char)(1u << (ch % 8));
            CK(d->MemcpyHtoD(dS, set, (size_t)K / 8));
            for (size_t mi = 0; mi < 4; mi++) {
                int M = MS[mi], nc = 0;
                void *args2[] = {&dX, &dP, &dXq, &dsx, &M, &K, &k8, &dC, &nc};
                void *args1[] = {&dX, &dXq, &dsx, &M, &K, &dC, &nc};
                void *args3[] = {&dX, &dS, &dXq, &dsx, &M, &K, &dC, &nc};
                void **args = strstr(key, "inplace=1") ? args3 : strstr(key, "8+4") ? args2 : args1;
                CUlaunchAttribute attr; memset(&attr, 0, sizeof attr);
                attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
                attr.value.clusterDim.x = attr.value.clusterDim.y = 1; attr.value.clusterDim.z = (unsigned)k->facts.cluster;
                /* grid z: the cluster's CTAs, or the token's CTAs (ctas=P). */
                const char *ct = strstr(key, "ctas=");
                const unsigned gz = k->facts.cluster > 1 ? (unsigned)k->facts.cluster : ct ? (unsigned)atoi(ct + 5) : 1u;
                CUlaunchConfig cfg = {(unsigned)M, 1, gz, (unsigned)k->facts.threads, 1, 1,
                                      (unsigned)k->facts.smem, NULL, &attr, 1};
                float t[40];
                for (int r = 0; r < 43; r++) {
                    CK(d->MemsetD8(flush, (unsigned char)r, 256u << 20));
                    CK(d->EventRecord(e0, NULL));
                    CK(d->LaunchKernelEx(&cfg, k->function, args, NULL));
                    CK(d->EventRecord(e1, NULL));
                    CK(d->EventSynchronize(e1));
                    if (r >= 3) CK(d->EventElapsedTime(&t[r - 3], e0, e1));
                }
                qsort(t, 40, sizeof t[0], cmpf);
                {
                    /* Bit-exact against the reference key's output (REF env), same inputs. */
                    static unsigned char ref[28672 * 64], got[28672 * 64];
                    static float rs[128], gs[128];
                    const char *rk = getenv("REF");
                    if (rk && M <= 64) {
                        const qjit__kernel *r0;
                        if (qjit__kernel_get(ctx, rk, &r0)) { printf("ref: %s\n", qjit_last_error(ctx)); exit(1); }
                        CUlaunchConfig c0 = cfg; c0.gridDimZ = 1; c0.blockDimX = (unsigned)r0->facts.threads; c0.sharedMemBytes = (unsigned)r0->facts.smem; c0.numAttrs = 0;
                        CK(d->MemsetD8(dXq, 0x5A, (size_t)M * K)); CK(d->LaunchKernelEx(&c0, r0->function, args, NULL)); CK(d->CtxSynchronize());
                        CK(d->MemcpyDtoH(ref, dXq, (size_t)M * K)); CK(d->MemcpyDtoH(rs, dsx, (size_t)M * 8));
                        CUlaunchConfig c1 = cfg; c1.numAttrs = 0;
                        CK(d->MemsetD8(dXq, 0xA5, (size_t)M * K)); CK(d->MemsetD8(dsx, 0xA5, (size_t)M * 8));
                        CK(d->LaunchKernelEx(&c1, k->function, args, NULL)); CK(d->CtxSynchronize());
                        CK(d->MemcpyDtoH(got, dXq, (size_t)M * K)); CK(d->MemcpyDtoH(gs, dsx, (size_t)M * 8));
                        int same = !memcmp(ref, got, (size_t)M * K) && !memcmp(rs, gs, (size_t)M * (strstr(key, "scales=1") ? 4 : 8));
                        printf("K=%5d M=%3d %s against %s\n", K, M, same ? "IDENTICAL" : "DIFFERENT", rk);
                    }
                }
                printf("K=%5d M=%3d %7.2f us  %s\n", K, M, t[20] * 1000.0f, key);
            }
            free(perm); free(is8);
        }
    }
    return 0;
}
