// qjit variant: {{ key }}
//
// Per-token symmetric INT8 activation quantization (ALGORITHMS.md section 1;
// unpack8/quant4 from lib/cuda.lua, whose quantize_row, used by fused GEMMs,
// is this kernel's body for one row -- kept apart here because the kernel
// written on it measured slower, see bench/results/2026-11-22-fused-h100):
//   sx[m] = max_k |X[m, k]| / 127 (1 for an all-zero row),
//   Xq[m, k] = clamp(round(X[m, k] / sx[m]), -127, 127), round half away from zero.
// IEEE division and roundf make it bit-identical to the CPU reference.
// One CTA of {{ p.threads }} threads per token; 16-byte loads of 8 FP16 values.
// It also zeroes the split-K arrival counters of the GEMM launched after it.
{{ lib.prelude }}
#define THREADS {{ p.threads }}
#define CACHED 8                     /* 16-byte chunks a thread keeps in registers (and loads at once) */

{{ lib.act_row }}
extern "C" __global__ void __launch_bounds__(THREADS) {{ p.name }}(
    const uint4 *__restrict__ X, uint2 *__restrict__ Xq, float *__restrict__ sx, int M, int K,
    unsigned *__restrict__ counters, int ncounters)
{
    __shared__ float warp_max[THREADS / 32];
    const int m = blockIdx.x;
//% if p.pdl == 1 then
    /* Let the GEMM that follows launch now: it fetches weights meanwhile and
     * waits (griddepcontrol.wait) for this grid to finish before reading. */
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
//% end
    /* Zero the split-K arrival counters of the GEMM that follows on this
     * stream, so a workspace carries no state from call to call. */
    for (int i = m * THREADS + threadIdx.x; i < ncounters; i += M * THREADS)
        counters[i] = 0u;
    const int chunks = K / 8;
    const uint4 *row = X + (size_t)m * chunks;

    /* Rows of up to THREADS * CACHED chunks are read once and kept in
     * registers (unrolled, predicated: no local memory); longer rows are
     * read twice, CACHED chunks per thread in flight. */
    const int per_thread = (chunks + THREADS - 1) / THREADS;
    const bool cached = per_thread <= CACHED;
    uint4 keep[CACHED];
    float amax = 0.0f;
    if (cached) {
#pragma unroll
        for (int i = 0; i < CACHED; ++i) {
            const int c = threadIdx.x + i * THREADS;
            keep[i] = c < chunks ? row[c] : make_uint4(0u, 0u, 0u, 0u);
        }
#pragma unroll
        for (int i = 0; i < CACHED; ++i) {
            float x[8];
            unpack8(keep[i], x);
#pragma unroll
            for (int e = 0; e < 8; ++e)
                amax = fmaxf(amax, fabsf(x[e]));
        }
    } else {
        /* CACHED loads in flight per thread, batch after batch. */
        for (int c0 = threadIdx.x; c0 < chunks; c0 += CACHED * THREADS) {
#pragma unroll
            for (int i = 0; i < CACHED; ++i) {
                const int c = c0 + i * THREADS;
                keep[i] = c < chunks ? row[c] : make_uint4(0u, 0u, 0u, 0u);
            }
#pragma unroll
            for (int i = 0; i < CACHED; ++i) {
                float x[8];
                unpack8(keep[i], x);
#pragma unroll
                for (int e = 0; e < 8; ++e)
                    amax = fmaxf(amax, fabsf(x[e]));
            }
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, off));
    if ((threadIdx.x & 31) == 0)
        warp_max[threadIdx.x >> 5] = amax;
    __syncthreads();
    amax = warp_max[0];
#pragma unroll
    for (int w = 1; w < THREADS / 32; ++w)
        amax = fmaxf(amax, warp_max[w]);

    const float scale = amax == 0.0f ? 1.0f : amax / 127.0f;
    if (threadIdx.x == 0)
        sx[m] = scale;
    uint2 *out = Xq + (size_t)m * chunks;
    if (cached) {
#pragma unroll
        for (int i = 0; i < CACHED; ++i) {
            const int c = threadIdx.x + i * THREADS;
            if (c < chunks) {
                float x[8];
                unpack8(keep[i], x);
                out[c] = make_uint2(quant4(x, scale), quant4(x + 4, scale));
            }
        }
    } else {
        for (int c0 = threadIdx.x; c0 < chunks; c0 += CACHED * THREADS) {
#pragma unroll
            for (int i = 0; i < CACHED; ++i) {
                const int c = c0 + i * THREADS;
                keep[i] = c < chunks ? row[c] : make_uint4(0u, 0u, 0u, 0u);
            }
#pragma unroll
            for (int i = 0; i < CACHED; ++i) {
                const int c = c0 + i * THREADS;
                if (c < chunks) {
                    float x[8];
                    unpack8(keep[i], x);
                    out[c] = make_uint2(quant4(x, scale), quant4(x + 4, scale));
                }
            }
        }
    }
}
