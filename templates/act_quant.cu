// qjit variant: {{ key }}
//
// Per-token symmetric INT8 activation quantization (ALGORITHMS.md section 1;
// the row routine, quantize_row, is lib/cuda.lua's, shared with the GEMMs
// that quantize their own tokens):
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
    quantize_row<THREADS, CACHED>(X, Xq, sx, m, K, warp_max);
}
