-- gemm_multistage.lua -- the launch plan of gemm_multistage.cu: checks a
-- variant's fields against each other, the scheme and the target, and
-- derives the numbers the template and the runtime need.
local G = import("lib/gemm.lua")
local P = {}

local function bad(msg) fail("INVALID_KEY", msg) end

function P.check(f, arch)
  local d = G.dims(f)
  local S, L = G.scheme(f)
  G.check_parts(f, L, "multistage")
  local xpack = G.check_mma(f, L, "multistage")   -- 2: the INT4 MMA, tokens two per byte
  local bm, bn, bk, wm, wn = d.bm, d.bn, d.bk, d.wm, d.wn
  local stages, g, split = d.stages, d.g, d.split
  if bk ~= 64 and bk ~= 128 then bad("tile K step " .. bk .. " must be 64 or 128") end
  if bm % (8 * wm) ~= 0 then bad("tile M " .. bm .. " must be a multiple of 8 x warps M (" .. wm .. ")") end
  if bn % (16 * wn) ~= 0 then bad("tile N " .. bn .. " must be a multiple of 16 x warps N (" .. wn .. ")") end
  local warps = wm * wn
  if warps > 16 then bad("at most 16 warps per CTA (" .. f.warps .. " is " .. warps .. ")") end
  local fused, aq_cached = G.check_actq(f, 32 * warps)
  if g > 0 and g % bk ~= 0 and bk % g ~= 0 then
    bad("group " .. g .. " and tile K step " .. bk .. " must divide one another")
  end
  local mi, nj = bn / wn / 16, bm / wm / 8
  -- A per-group rescale (fold) keeps the group's sums apart, two activation
  -- parts each part's sums: twice the accumulators.
  local acc_regs = mi * nj * 4 * ((L.fold or L.parts == 2) and 2 or 1)
  if acc_regs > 128 then
    bad("warp tile " .. (bm / wm) .. "x" .. (bn / wn) .. " needs " .. acc_regs .. " accumulator registers per thread (max 128)"
        .. (L.fold and " with " .. f.scheme .. "'s per-group sums" or "")
        .. (L.parts == 2 and " with " .. f.scheme .. "'s two sums" or ""))
  end
  local ng = (g > 0 and L.gparams) and math.max(1, bk // g) or 0     -- gparams entries per n-block per stage
  -- A stage holds a K tile of tokens at their bytes per value (a two-part
  -- layer's: its INT8 part's, the larger).
  local x_bytes = bm * bk // ((L.parts == 2) and 1 or xpack)
  local w_bytes, gp_bytes = bn * bk * L.bits // 8, (bn // 16) * ng * 32
  -- A sparse kernel's stage adds the tile's residual blocks and their presence word.
  local sp, r_stage = G.sparse(f, L, bn, bk)
  local stage_bytes = w_bytes + x_bytes + gp_bytes + r_stage
  local out_bytes = (f.epi == "i32") and 4 or 2
  local ldc = bn + ((f.epi == "i32") and 4 or 8)          -- padded row of the output tile
  local tile_bytes = bm * ldc * out_bytes                 -- the output tile, staged for the store
  local cluster, smem = G.check_reduce(f, d, arch, math.max(stages * stage_bytes, tile_bytes), tile_bytes)
  -- A few bytes of static shared memory (the split-K flag, a cluster
  -- fix-up's mbarrier) come on top.
  if smem + 128 > arch.smem then
    bad(string.format("variant needs %d bytes of shared memory; %s allows %d", smem, f.arch, arch.smem))
  end
  local p = {
    name = G.kernel_name(nil, f),
    threads = 32 * warps, smem = smem,
    tile_m = bm, tile_n = bn, tile_k = bk, warps_m = wm, warps_n = wn, stages = stages,
    group = g, k_step = bk, n_unit = 16, mi = mi, nj = nj, ng = ng, split = split,
    w_bytes = w_bytes, x_bytes = x_bytes, gp_bytes = gp_bytes, stage_bytes = stage_bytes,
    out_bytes = out_bytes, ldc = ldc, epi = f.epi,
    -- mma=s4: m16n8k64 .s4 MMAs on tokens packed two per byte (rows of
    -- BK / 2 bytes in a stage).
    mma_s4 = xpack == 2 and 1 or 0, xpack = xpack,
    -- Programmatic dependent launch (sm_90+): start while the activation
    -- kernel still runs, fetch weights first, wait before touching Xq.
    -- A fused GEMM follows no activation kernel.
    pdl = (arch.cc >= 90 and fused == 0) and 1 or 0,
    fused = fused, aq_cached = aq_cached, cluster = cluster,
    -- Few-token tiles make the epilogue's loads before the main loop
    -- (a few registers) rather than after it (an L2 round trip in the tail).
    pre_scales = (f.epi ~= "i32" and (mi + nj) * 2 <= 12) and 1 or 0,
  }
  return G.scheme_facts(p, L, g, sp), L
end

-- The kernel's parameter slots.
P.slots = G.slots

return P
