-- lib/gemm.lua -- what the GEMM pipelines share: their fields as numbers,
-- and the kernel parameter list the runtime launches every GEMM with
-- (runtime/linear.c passes exactly these arguments, in this order).
local G = {}

-- tile=BMxBNxBK, warps=WMxWN, stages, g, split of a canonical key, as numbers.
function G.dims(f)
  local bm, bn, bk = f.tile:match("^(%d+)x(%d+)x(%d+)$")
  local wm, wn = f.warps:match("^(%d+)x(%d+)$")
  return { bm = tonumber(bm), bn = tonumber(bn), bk = tonumber(bk), wm = tonumber(wm), wn = tonumber(wn),
           stages = tonumber(f.stages), g = tonumber(f.g), split = tonumber(f.split) }
end

-- The parameters of every GEMM kernel; Y is INT32 for epi=i32, else FP16.
-- Kernels that load through the TMA (p.tma == 1) take three tensor maps
-- after them.
-- GEMMs that quantize their own tokens (p.fused == 1) write Xq and sx, so
-- those are plain pointers there, and take the FP16 tokens X, the
-- workspace's quantizer flags and this call's epoch after the others.
function G.params(p)
  local fused = p.fused == 1
  local lines = {
    "const uint4 *__restrict__ qweight, const u32 *__restrict__ gparams, const float *__restrict__ s0,",
    fused and "    signed char *Xq, float *sx," or "    const signed char *__restrict__ Xq, const float *__restrict__ sx,",
    "    " .. ((p.epi == "i32") and "int" or "u16") .. " *__restrict__ Y,",
    "    int M, int N, int K, int *__restrict__ partials, unsigned *__restrict__ counters",
  }
  if p.tma == 1 then
    -- TMA pipelines: tensor maps of Xq (per call), the packed weights and
    -- the group parameters (per layer and tile), built by the runtime.
    lines[#lines] = lines[#lines] .. ","
    lines[#lines + 1] = "    const __grid_constant__ qjit_tmap xmap, const __grid_constant__ qjit_tmap wmap,"
    lines[#lines + 1] = "    const __grid_constant__ qjit_tmap gmap"
  end
  if fused then
    lines[#lines] = lines[#lines] .. ","
    lines[#lines + 1] = "    const uint4 *__restrict__ X, unsigned long long *flags, unsigned long long epoch"
  end
  return table.concat(lines, "\n")
end

-- Quantizer CTAs of a fused GEMM at most (flags in the workspace).
G.FUSED_QUANTIZERS = 64

-- Where a GEMM waits for its tokens before reading Xq, sx or the split-K
-- counters. With programmatic dependent launch: for the activation kernel
-- (griddepcontrol.wait). Fused (actq=fused): the CTAs of the NQ lowest
-- linear indices -- dispatched first, so running while any other CTA
-- waits -- quantize rows cta, cta + NQ, ... and zero the split-K counters,
-- then publish flags[cta] = epoch (a value unique to this call); every CTA
-- waits until the NQ flags hold it. Flags left by an earlier call, or
-- garbage, never equal a new epoch, so the workspace needs no reset.
function G.token_wait(p)
  if p.fused == 1 then
    local counters = (p.split > 1 and p.cluster == 1) and [[
            for (int i = cta * THREADS + tid; i < (int)(gridDim.x * gridDim.y); i += nq * THREADS)
                counters[i] = 0u;
]] or ""
    return string.format([[
    {
        __shared__ float aq_red[THREADS / 32];
        const int nctas = (int)(gridDim.x * gridDim.y * gridDim.z);
        const int nq = min(min(M, nctas), %d);
        const int cta = (int)((blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x);
        if (cta < nq) {
            for (int m = cta; m < M; m += nq) {
                quantize_row<THREADS, %d>(X, (uint2 *)Xq, sx, m, K, aq_red);
                __syncthreads();
            }
]] .. counters .. [[
            __threadfence();
            __syncthreads();
            if (tid == 0)
                st_release_gpu(flags + cta, epoch);
        }
        if (tid < 32)
            for (int j = tid; j < nq; j += 32)
                while (ld_acquire_gpu(flags + j) != epoch)
                    __nanosleep(64);
        __syncthreads();
    }
]], G.FUSED_QUANTIZERS, p.aq_cached)
  end
  if p.pdl == 1 then
    return [[
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
]]
  end
  return ""
end

-- The device code a variant's fields add: the row quantizer and flags of
-- a fused GEMM, the cluster primitives of a cluster split-K reduction.
function G.lib(p, lib)
  local parts = {}
  if p.fused == 1 then parts[#parts + 1] = lib.act_row .. lib.flags end
  if p.cluster > 1 then parts[#parts + 1] = lib.cluster end
  return table.concat(parts)
end

-- Checks reduce= against the split and the target; returns the CTAs per
-- cluster (along z, one per K slice) of a cluster reduction, else 1.
-- smem: the bytes the variant's shared memory holds; a cluster reduction
-- needs room for the tile's INT32 accumulators (BM x BN x 4 bytes), which
-- the peers read, and past them the staged output tile (tile_bytes).
function G.check_reduce(f, d, arch, smem, tile_bytes)
  if f.reduce ~= "cluster" then return 1, smem end
  if arch.cc < 90 then fail("INVALID_KEY", "reduce=cluster needs thread-block clusters (sm_90 or later), not " .. f.arch) end
  if d.split < 2 then fail("INVALID_KEY", "reduce=cluster: split=" .. d.split .. " leaves nothing to reduce (use split >= 2)") end
  if d.split > 8 then fail("INVALID_KEY", "reduce=cluster: split=" .. d.split .. " exceeds the portable cluster size 8") end
  return d.split, math.max(smem, d.bm * d.bn * 4 + tile_bytes)
end

-- Checks actq against the pipe; returns the facts a fused GEMM adds.
function G.check_actq(f, threads)
  if f.actq ~= "fused" then return 0, 0 end
  -- 16-byte chunks a thread keeps (and loads at once) per row: few, so the
  -- GEMM keeps its registers (decode 8x16x64: 64 with 2, 88 with 4; the
  -- 16x64x128 ring: 60 with 4, against 53-56 unfused). Rows of up to
  -- threads x 8 x chunks values are read once.
  return 1, (threads >= 256) and 2 or 4
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
  if p.pdl == 1 or p.fused == 1 then
    return [[
    /* Weights first: they do not depend on the tokens (quantized by the
     * activation kernel that may still be running, or by this grid); then
     * wait for the tokens. */
#pragma unroll
    for (int s = 0; s < PREFETCH; ++s)
        if (s < ktiles)
            load_stage<true, false>(smem_base + s * STAGE_BYTES, kt_begin + s, tid, qweight, gparams, Xq,
                                    n_cta, m_cta, M, N, K);
]] .. G.token_wait(p) .. [[
#pragma unroll
    for (int s = 0; s < PREFETCH; ++s) {
        if (s < ktiles)
            load_stage<false, true>(smem_base + s * STAGE_BYTES, kt_begin + s, tid, qweight, gparams, Xq,
                                    n_cta, m_cta, M, N, K);
        cp_async_commit();
    }
]]
  end
  return [[
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
  if p.cluster > 1 then
    return [[
    /* Split-K inside the cluster, distributed: the SPLIT CTAs of this tile
     * (one per K slice; cluster rank = blockIdx.z) leave their accumulators
     * in their own shared memory (the ring is drained), four per 16-byte
     * word in register order. After a cluster barrier each rank adds, for
     * the tile rows it owns (row pairs split evenly over the ranks), the
     * other slices' accumulators exactly, read across the cluster (a chunk's
     * loads from a peer all issued before its first add). It then runs the
     * epilogue into its own output tile, past the accumulators, and stores
     * its rows. It arrives on the second cluster barrier once its reads are
     * done and waits on it only before exiting, so that its shared memory
     * outlives the peers' reads. Only local shared-memory writes; no global
     * partials, counters or fences. */
    const int rank = (int)blockIdx.z;
    const int row_lo = 2 * ((rank * (BM / 2) + SPLIT - 1) / SPLIT);
    const int row_hi = 2 * (((rank + 1) * (BM / 2) + SPLIT - 1) / SPLIT);
    {
#pragma unroll
        for (int q = 0; q < ACC_REGS; q += 4)
            sts128(smem_base + ((q / 4) * THREADS + tid) * 16, ACC(q), ACC(q + 1), ACC(q + 2), ACC(q + 3));
        cluster_sync();
        /* ACC(q .. q + 3) lie on rows ACC_ML(q) and ACC_ML(q) + 1 (a pair).
         * Sixteen registers at a time, so the sum needs few registers beyond
         * the accumulators (two CTAs per SM stay resident). */
        constexpr int CHUNK = ACC_REGS < 16 ? ACC_REGS : 16;
#pragma unroll
        for (int q0 = 0; q0 < ACC_REGS; q0 += CHUNK) {
#pragma unroll 1
            for (int dz = 1; dz < SPLIT; ++dz) {
                const u32 peer = cluster_map(smem_base, (u32)((rank + dz) % SPLIT));
                int4 part[CHUNK / 4];
#pragma unroll
                for (int q = q0; q < q0 + CHUNK; q += 4)
                    if (ACC_ML(q) >= row_lo && ACC_ML(q) < row_hi)
                        part[(q - q0) / 4] = ld_cluster128(peer + ((q / 4) * THREADS + tid) * 16);
#pragma unroll
                for (int q = q0; q < q0 + CHUNK; q += 4)
                    if (ACC_ML(q) >= row_lo && ACC_ML(q) < row_hi) {
                        ACC(q) += part[(q - q0) / 4].x;
                        ACC(q + 1) += part[(q - q0) / 4].y;
                        ACC(q + 2) += part[(q - q0) / 4].z;
                        ACC(q + 3) += part[(q - q0) / 4].w;
                    }
            }
        }
        cluster_arrive();
    }
]]
  end
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

-- The epilogue of the MMA pipes: each thread's accumulators, scaled (epi
-- f16) or raw (epi i32), staged as the BM x BN output tile in shared memory
-- (row stride LDC, at EPI_TILE_OFF), then stored as whole rows. The template
-- defines ACC(q), ACC_NJ (8-token groups per 16-row block of a thread's
-- registers: ACC(q) for q = (i * ACC_NJ + j) * 4 + r is block i, group j),
-- and ACC_ML(q) / ACC_NL(q), its row (token) and column (weight row) in the
-- tile. pre: the scales are already in registers, pre_n[i][half] and
-- pre_m[j][odd] (else they are read here).
function G.epilogue(p, pre)
  local f16 = p.epi ~= "i32"
  local scale_n = not f16 and "" or pre and [[

            const float scale_n = pre_n[i][half];]] or [[

            const int n = n_cta + ACC_NL(q_n);
            const float scale_n = n < N ? s0[n] : 0.0f;]]
  local value = not f16 and "ACC(q)" or "float_to_half((float)ACC(q) * (scale_m * scale_n))"
  local scale_m = not f16 and "" or pre and [[

                    const float scale_m = pre_m[j][odd];]] or [[

                    const int m = m_cta + ml;
                    const float scale_m = m < M ? sx[m] : 0.0f;]]
  return [[
    /* Epilogue: stage the tile in shared memory, then store whole rows with
     * 16-byte writes. */
    ]] .. (f16 and "u16" or "int") .. [[ *tile = (]] .. (f16 and "u16" or "int") .. [[ *)(smem + EPI_TILE_OFF);
#pragma unroll
    for (int i = 0; i < ACC_REGS / (ACC_NJ * 4); ++i) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int q_n = i * ACC_NJ * 4 + half * 2;
            const int nl = ACC_NL(q_n);]] .. scale_n .. [[

#pragma unroll
            for (int j = 0; j < ACC_NJ; ++j) {
#pragma unroll
                for (int odd = 0; odd < 2; ++odd) {
                    const int q = q_n + j * 4 + odd;
                    const int ml = ACC_ML(q);]] .. scale_m .. [[

                    tile[ml * LDC + nl] = ]] .. value .. [[;
                }
            }
        }
    }
    __syncthreads();
]] .. G.store_tile(p)
end

-- The end of the epilogue: the BM x BN output tile, staged in shared memory
-- as `tile` (row stride LDC), leaves as whole rows of 16-byte stores.
function G.store_tile(p)
  -- A cluster reduction's rank stores the rows it owns, then waits until
  -- its peers are done reading its shared memory.
  local cl = (p.cluster or 1) > 1
  local lo, hi = cl and "row_lo" or "0", cl and "row_hi" or "BM"
  local wait = cl and "\n    cluster_wait();" or ""
  return string.format([[
    constexpr int PER_CHUNK = 16 / %d;     /* outputs per 16-byte store */
    constexpr int CHUNKS_PER_ROW = BN / PER_CHUNK;
    for (int c = %s * CHUNKS_PER_ROW + tid; c < %s * CHUNKS_PER_ROW; c += THREADS) {
        const int ml = c / CHUNKS_PER_ROW, cc = c %% CHUNKS_PER_ROW;
        const int m = m_cta + ml, n = n_cta + cc * PER_CHUNK;
        if (m < M && n < N)
            *(uint4 *)(Y + (size_t)m * N + n) = *(const uint4 *)(tile + ml * LDC + cc * PER_CHUNK);
    }%s
]], p.out_bytes, lo, hi, wait)
end

return G
