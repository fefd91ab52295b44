-- lib/gemm.lua -- what the GEMM pipelines share: their fields as numbers,
-- and the kernel parameter list the runtime launches every GEMM with
-- (runtime/linear.c passes exactly these arguments, in this order).
local G = {}

-- tile=BMxBNxBK, warps=WMxWN, stages, g, split of a canonical key, as numbers.
function G.dims(f)
  local bm, bn, bk = f.tile:match("^(%d+)x(%d+)x(%d+)$")
  local wm, wn = f.warps:match("^(%d+)x(%d+)$")
  return { bm = tonumber(bm), bn = tonumber(bn), bk = tonumber(bk), wm = tonumber(wm), wn = tonumber(wn),
           stages = tonumber(f.stages), g = tonumber(f.g), split = tonumber(f.split), l2pf = tonumber(f.l2pf) }
end

-- Checks l2pf (K tiles requested into L2 ahead of the ring) against the
-- target; returns it as a number.
function G.check_l2pf(f, arch)
  local d = tonumber(f.l2pf)
  if d > 0 and arch.cc < 90 then
    fail("INVALID_KEY", "l2pf=" .. d .. " needs sm_90 or newer (bulk L2 prefetch), not " .. f.arch)
  end
  return d
end

-- l2_prefetch(kb0, kb1, ...): requests packed K blocks [kb0, kb1) (64 k
-- each) of 16-row blocks nb0 .. nb0 + RB - 1, and their group parameters,
-- into L2. One bulk prefetch per row block and operand, issued by lanes
-- 0 .. RB - 1 of the calling warp; nothing lands in the CTA, so a
-- prefetch never has to be waited for. Empty unless p.l2pf > 0.
function G.l2_prefetch(p)
  if (p.l2pf or 0) == 0 then return "" end
  local gp = (p.group > 0) and [[
        const int groups_per_row = K / GROUP;
        const int g0 = kb0 * 64 / GROUP, g1 = (kb1 * 64 + GROUP - 1) / GROUP;
        prefetch_l2(gparams + ((size_t)nb * groups_per_row + g0) * 8, (g1 - g0) * 32);
]] or ""
  return [[
static __device__ __forceinline__ void prefetch_l2(const void *p, int bytes)
{
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" :: "l"(p), "r"(bytes) : "memory");
}
template <int RB>
static __device__ __forceinline__ void l2_prefetch(int kb0, int kb1, int lane, const uint4 *__restrict__ qweight,
    const u32 *__restrict__ gparams, int nb0, int N, int K)
{
    const int nb = nb0 + lane;
    if (lane < RB && kb0 < kb1 && nb * 16 < N) {
        prefetch_l2(qweight + ((size_t)nb * (K / 64) + kb0) * 32, (kb1 - kb0) * 512);
]] .. gp .. [[
    }
}
]]
end

-- The ring pipelines' L2 prefetch at K tile kt (a CTA-relative index):
-- warp 0 requests tile kt + PREFETCH + L2PF, the one L2PF tiles past the
-- ring's refill. The prologue requested the tiles before it.
function G.l2_prefetch_step(p)
  if (p.l2pf or 0) == 0 then return "" end
  return string.format([[
        if (warp == 0 && kt + PREFETCH + %d < ktiles) {
            const int t = kt_begin + kt + PREFETCH + %d;
            l2_prefetch<BN / 16>(t * (BK / 64), (t + 1) * (BK / 64), lane, qweight, gparams, n_cta / 16, N, K);
        }
]], p.l2pf, p.l2pf)
end

-- The parameters of every GEMM kernel; Y is INT32 for epi=i32, else FP16.
-- Kernels that load through the TMA (p.tma == 1) take three tensor maps
-- after them.
function G.params(p)
  return table.concat({
    "const uint4 *__restrict__ qweight, const u32 *__restrict__ gparams, const float *__restrict__ s0,",
    "    const signed char *__restrict__ Xq, const float *__restrict__ sx,",
    "    " .. ((p.epi == "i32") and "int" or "u16") .. " *__restrict__ Y,",
    "    int M, int N, int K, int *__restrict__ partials, unsigned *__restrict__ counters" ..
      ((p.tma == 1) and "," or ""),
    -- TMA pipelines: tensor maps of Xq (per call), the packed weights and
    -- the group parameters (per layer and tile), built by the runtime.
    (p.tma == 1) and "    const __grid_constant__ qjit_tmap xmap, const __grid_constant__ qjit_tmap wmap,\n"
                     .. "    const __grid_constant__ qjit_tmap gmap" or nil,
  }, "\n")
end

-- The device code every shared-memory-ring pipeline shares, as text. The
-- including template defines BM, BN, BK, THREADS, GROUP, NG, W_STAGE,
-- X_STAGE, SPLIT, x_swizzle(), and where a stage keeps its packed weights,
-- activation tile and group parameters (W_OFF, X_OFF, GP_OFF, in bytes).

-- load_stage<LOAD_W, LOAD_X>(stage, kt, ...): cp.async of K tile kt.
function G.load_stage(p)
  local gp = (p.group > 0) and [[
    /* Group parameters: NG entries of 32 bytes per 16-row block. */
    const int groups_per_row = K / GROUP, g0 = kt * BK / GROUP;
#pragma unroll
    for (int i = 0; i < ((BN / 16) * NG * 2 + THREADS - 1) / THREADS; ++i) {
        const int c = tid + i * THREADS;
        if (c < (BN / 16) * NG * 2) {
            const int nbl = c / (NG * 2), off = c % (NG * 2);
            const int nb = n_cta / 16 + nbl;
            const bool ok = nb * 16 < N;
            const u32 *src = gparams + ((size_t)(ok ? nb : 0) * groups_per_row + g0) * 8 + off * 4;
            cp_async16(stage + GP_OFF + c * 16, src, ok);
        }
    }
]] or ""
  return [[
/* Loads stage kt: the packed weights and group parameters (LOAD_W) and the
 * activation tile (LOAD_X) -- apart, so weights can be fetched before the
 * activations exist. */
template <bool LOAD_W, bool LOAD_X>
static __device__ __forceinline__ void load_stage(u32 stage, int kt, int tid,
    const uint4 *__restrict__ qweight, const u32 *__restrict__ gparams, const signed char *__restrict__ Xq,
    int n_cta, int m_cta, int M, int N, int K)
{
    const int kblocks = K / 64;
    if (LOAD_W) {
    /* Packed weights: per 16-row block, the stage's BK/64 blocks of 512 bytes
     * are contiguous in global memory and land contiguous in shared memory. */
#pragma unroll
    for (int i = 0; i < (W_STAGE / 16 + THREADS - 1) / THREADS; ++i) {
        const int c = tid + i * THREADS;
        if (W_STAGE % (16 * THREADS) == 0 || c < W_STAGE / 16) {
            const int nbl = c / (BK / 2), off = c % (BK / 2);
            const int nb = n_cta / 16 + nbl;
            const bool ok = nb * 16 < N;
            const uint4 *src = qweight + ((size_t)(ok ? nb : 0) * kblocks + (size_t)kt * (BK / 64)) * 32 + off;
            cp_async16(stage + W_OFF + c * 16, src, ok);
        }
    }
]] .. gp .. [[
    }
    if (!LOAD_X)
        return;
    /* Activations: BM rows of BK int8; rows past M are zero-filled. */
#pragma unroll
    for (int i = 0; i < (X_STAGE / 16 + THREADS - 1) / THREADS; ++i) {
        const int c = tid + i * THREADS;
        if (X_STAGE % (16 * THREADS) == 0 || c < X_STAGE / 16) {
            const int row = c / (BK / 16), chunk = c % (BK / 16);
            const int m = m_cta + row;
            const bool ok = m < M;
            const signed char *src = Xq + (size_t)(ok ? m : 0) * K + (size_t)kt * BK + chunk * 16;
            cp_async16(stage + X_OFF + row * BK + x_swizzle(row, chunk) * 16, src, ok);
        }
    }
}
]]
end

-- Fills the first PREFETCH slots of the ring, one cp.async group each.
-- With programmatic dependent launch the weights do not depend on the
-- activation kernel that may still be running before this one: their copies
-- start first, and the kernel waits for it before reading Xq, sx or the
-- counters.
function G.prologue(p)
  -- With l2pf the next L2PF tiles past the ring are requested into L2 right
  -- after the ring's own weight copies (before the wait, with PDL).
  local l2 = ((p.l2pf or 0) > 0) and string.format([[
    if (warp == 0) {
        const int t0 = kt_begin + PREFETCH, t1 = kt_begin + min(ktiles, PREFETCH + %d);
        l2_prefetch<BN / 16>(t0 * (BK / 64), t1 * (BK / 64), lane, qweight, gparams, n_cta / 16, N, K);
    }
]], p.l2pf) or ""
  if p.pdl == 1 then
    return [[
    /* Weights first: they do not depend on the activation kernel that may
     * still be running (programmatic dependent launch); then wait for it. */
#pragma unroll
    for (int s = 0; s < PREFETCH; ++s)
        if (s < ktiles)
            load_stage<true, false>(smem_base + s * STAGE_BYTES, kt_begin + s, tid, qweight, gparams, Xq,
                                    n_cta, m_cta, M, N, K);
]] .. l2 .. [[
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#pragma unroll
    for (int s = 0; s < PREFETCH; ++s) {
        if (s < ktiles)
            load_stage<false, true>(smem_base + s * STAGE_BYTES, kt_begin + s, tid, qweight, gparams, Xq,
                                    n_cta, m_cta, M, N, K);
        cp_async_commit();
    }
]]
  end
  return l2 .. [[
#pragma unroll
    for (int s = 0; s < PREFETCH; ++s) {
        if (s < ktiles)
            load_stage<true, true>(smem_base + s * STAGE_BYTES, kt_begin + s, tid, qweight, gparams, Xq,
                                   n_cta, m_cta, M, N, K);
        cp_async_commit();
    }
]]
end

-- Split-K fix-up inside the kernel, after the main loop: the thread's
-- ACC_REGS accumulators, ACC(q) the q-th in register order.
function G.split_k(p)
  if p.split <= 1 then return "" end
  return [[
    /* Split-K: publish this slice's accumulators (in register order, so the
     * stores and the loads below are coalesced), then count arrivals; only
     * the last CTA of the tile goes on, adding the other slices exactly. */
    {
        __shared__ unsigned last;
        const size_t tile = (size_t)blockIdx.y * gridDim.x + blockIdx.x;
        int *mine = partials + (tile * SPLIT + blockIdx.z) * (size_t)(BM * BN);
#pragma unroll
        for (int q = 0; q < ACC_REGS; ++q)
            __stcg(mine + q * THREADS + tid, ACC(q));
        __threadfence();
        __syncthreads();
        if (tid == 0)
            last = atomicAdd(counters + tile, 1u) == SPLIT - 1;
        __syncthreads();
        if (!last)
            return;
        __threadfence();
        for (int z = 0; z < SPLIT; ++z) {
            if (z == (int)blockIdx.z)
                continue;
            const int *other = partials + (tile * SPLIT + z) * (size_t)(BM * BN);
#pragma unroll
            for (int q = 0; q < ACC_REGS; ++q)
                ACC(q) += __ldcg(other + q * THREADS + tid);
        }
    }
]]
end

-- The end of the epilogue: the BM x BN output tile, staged in shared memory
-- as `tile` (row stride LDC), leaves as whole rows of 16-byte stores.
function G.store_tile(p)
  return string.format([[
    constexpr int PER_CHUNK = 16 / %d;     /* outputs per 16-byte store */
    constexpr int CHUNKS_PER_ROW = BN / PER_CHUNK;
    for (int c = tid; c < BM * CHUNKS_PER_ROW; c += THREADS) {
        const int ml = c / CHUNKS_PER_ROW, cc = c %% CHUNKS_PER_ROW;
        const int m = m_cta + ml, n = n_cta + cc * PER_CHUNK;
        if (m < M && n < N)
            *(uint4 *)(Y + (size_t)m * N + n) = *(const uint4 *)(tile + ml * LDC + cc * PER_CHUNK);
    }
]], p.out_bytes)
end

return G
