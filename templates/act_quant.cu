// qjit variant: {{ key }}
//
// Per-token symmetric INT{{ f.bits }} activation quantization (docs/schemes.md; the row
// routine, quantize_row, is lib/act_row.cu's, shared with the GEMMs that
// quantize their own tokens), one value per byte:
//   sx[m] = max_k |X[m, k]| / {{ f.bits == "4" and 7 or 127 }} (1 for an all-zero row),
//   Xq[m, k] = clamp(round(X[m, k] / sx[m]), -{{ f.bits == "4" and 7 or 127 }}, {{ f.bits == "4" and 7 or 127 }}), round half away from zero,
//% if p.rowsum == 1 then
//   rowsum[m] = sum_k Xq[m, k] (for the schemes that subtract a zero point in the epilogue).
//% end
// IEEE division and roundf make it bit-identical to the CPU reference.
// One CTA of {{ p.threads }} threads per token; 16-byte loads of 8 FP16 values.
// It also zeroes the split-K arrival counters of the GEMM launched after it.
{{ render("lib/prelude.cu") }}
#define THREADS {{ p.threads }}
#define CACHED 8                     /* 16-byte chunks a thread keeps in registers (and loads at once) */

{{ render("lib/act_row.cu", { bits = tonumber(f.bits) }) }}
extern "C" __global__ void __launch_bounds__(THREADS) {{ p.name }}(
    {{ gemm.params(slots) }})
{
    __shared__ float warp_max[THREADS / 32 * {{ p.rowsum == 1 and 2 or 1 }}];
    const int m = blockIdx.x;
//% if p.trigger == 1 then
    /* Let the GEMM that follows launch now: it fetches weights meanwhile and
     * waits (griddepcontrol.wait) for this grid to finish before reading. */
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
//% end
    /* Zero the split-K arrival counters of the GEMM that follows on this
     * stream, so a workspace carries no state from call to call. */
    for (int i = m * THREADS + threadIdx.x; i < ncounters; i += M * THREADS)
        counters[i] = 0u;
    quantize_row<THREADS, CACHED, {{ p.rowsum == 1 and "true" or "false" }}>(X, (uint2 *)Xq, sx, {{ p.rowsum == 1 and "rowsum" or "nullptr" }}, m, K, warp_max);
}
