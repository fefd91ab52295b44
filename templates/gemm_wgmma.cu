// qjit variant: {{ key }}
//
// GEMM, scheme {{ f.scheme }}, warpgroup-MMA pipeline for {{ f.arch }}, its ring filled with
// cp.async by all threads (one CTA barrier per K tile):
//   Y[m, n] = epi_value(sum_k Xq[m, k] * W'[n, k])   (the scheme's epilogue)
// Weights are the wgmma's A operand: each warp dequantizes its 16 rows x 64 k
// from shared memory into registers (the m16n8k32 A fragment, which is also
// the wgmma register layout), so dequantized weights never go back to
// shared memory. Tokens are the B operand (N = {{ p.nt }}), read by the tensor
// cores straight from a 128-byte-swizzled shared-memory tile.
// CTA tile: {{ p.tile_m }} tokens x {{ p.tile_n }} weight rows x {{ p.tile_k }} k; {{ p.warps_m }} x {{ p.wg_n }} warpgroups
// (tokens x rows), {{ p.mi }} 64-row block(s) per warpgroup; ring of {{ p.stages }} stages.
//% if p.split > 1 then
// Split-K {{ p.split }}: blockIdx.z takes a slice of K; {{ p.cluster > 1 and "the tile's CTAs form a cluster and\n// each adds its share of the rows from the others' INT32 accumulators (exact)." or "the last CTA of a tile to\n// finish adds the others' INT32 partials (exact) and runs the epilogue." }}
//% end
{{ render("lib/prelude.cu", { bf16 = f.dtype == "bf16" }) }}
{{ render("lib/wgmma.cu", { nt = p.nt, atype = p.wu8 == 1 and "u8" or "s8" }) }}
{{ render(scheme.device, { p = p }) }}
{{ gemm.lib(p, f) }}
{{ render("lib/wgmma_defs.cu", { p = p }) }}
#define PREFETCH (STAGES - 2)           /* K tiles in flight: one more slot is read by the wgmma in flight */

/* The 128-byte swizzle: 16-byte chunk c of token row r sits at chunk
 * c ^ (r % 8), the layout the wgmma descriptor names. */
static __device__ __forceinline__ int x_swizzle(int row, int chunk) { return chunk ^ (row & 7); }

/* Makes this thread's completed cp.async writes visible to the tensor
 * cores' (async proxy) reads. */
static __device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

{{ render("lib/stage_load.cu", { p = p }) }}
extern "C" __global__ void __launch_bounds__(THREADS{{ p.min_blocks > 0 and ", " .. p.min_blocks or "" }}) {{ p.name }}(
    {{ gemm.params(slots) }})
{
{{ render("lib/wgmma_head.cu", { p = p }) }}
{{ render("lib/prologue.cu", { p = p, quantizers = gemm.FUSED_QUANTIZERS }) }}
//% if p.epi_early == 1 then
    /* The epilogue's loads, made before the main loop so that they have
     * landed when the split-K fix-up ends (lib/wgmma_plan.lua: the
     * registers allow them). */
{{ (render("lib/epi_pre.cu", { p = p }):gsub("\n$", "")) }}
//% end
{{ (render("lib/kt_loop.cu", { p = p, body = "gemm_wgmma_step.cu" }):gsub("\n$", "")) }}
{{ render("lib/wgmma_drain.cu", { p = p }) }}
    cp_async_wait<0>();
    __syncthreads();
{{ render("lib/split_k.cu", { p = p }) }}
{{ render("lib/epilogue.cu", { p = p, pre = p.epi_early == 1 }) }}
//% if p.stash == 1 and p.split == 1 then
    /* Every thread has read its INT8 sums (the epilogue's barrier): the
     * stash slot is free (lib/stash.cu). */
    if (tid == 0 && kt8 > 0)
        stash_release(counters, stash_slot);
//% end
}
