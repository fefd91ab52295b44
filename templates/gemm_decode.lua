-- gemm_decode.lua -- the launch plan of gemm_decode.cu (pipe=decode): the
-- few-token GEMM that streams weights from global memory into registers.
-- Field meanings in this pipe:
--   tile=BMxBNx64  BM tokens (8, 16, ..., 64) x BN weight rows (16, 32, 64)
--                  per CTA; the K step is one 64-wide packed block
--   warps=1xW      W warps, each taking 1/W of K for all of the CTA's rows
--   stages=U       K steps each warp keeps in flight (U x BN/16 x 512 bytes)
--   split=1        a CTA covers all of K (its warps split it), so no
--                  arrival counters or partials
local G = import("lib/gemm.lua")
local P = {}

local function bad(msg) fail("INVALID_KEY", msg) end

function P.check(f, arch)
  local d = G.dims(f)
  local S, L = G.scheme(f)
  G.check_parts(f, L, "decode")
  G.check_mma(f, L, "decode")
  local bm, bn, bk, wm, wn = d.bm, d.bn, d.bk, d.wm, d.wn
  local stages, g, split = d.stages, d.g, d.split
  if bk ~= 64 then bad("pipe=decode: tile K step " .. bk .. " must be 64 (one packed block)") end
  if bm % 8 ~= 0 or bm > 64 then bad("pipe=decode: tile M " .. bm .. " must be 8, 16, ... 64 tokens") end
  if bn % 16 ~= 0 or bn > 64 then bad("pipe=decode: tile N " .. bn .. " must be 16, 32, 48 or 64 weight rows") end
  if wm ~= 1 then bad("pipe=decode: warps=" .. f.warps .. " must be 1xW (W warps split K)") end
  if wn > 16 then bad("pipe=decode: at most 16 warps per CTA (" .. f.warps .. ")") end
  if split ~= 1 then bad("pipe=decode: split=" .. split .. " must be 1 (the CTA's warps split K)") end
  if f.reduce ~= "global" then bad("pipe=decode: reduce=" .. f.reduce .. ": the CTA's warps add their K slices; there is no split-K") end
  local fused, aq_cached = G.check_actq(f, 32 * wn)
  local r, nt = bn // 16, bm // 8
  -- Registers per thread: U steps of R weight and group words, one step
  -- of NT x 4 activation words, R x NT x 4 accumulators (twice as many with
  -- a per-group rescale or two activation parts).
  -- A sparse kernel keeps U steps of residual words too (4 per row block),
  -- and its cursors.
  local sp = G.sparse(f, L, bn, 64)
  local sparse = sp.sparse == 1
  local regs = stages * r * (1 + 4 * L.bits // 4) + nt * 4 + r * nt * 4 * ((L.fold or L.parts == 2) and 2 or 1) + r * 8
  if regs > 160 then
    bad(string.format("pipe=decode: tile %s with %d stages needs ~%d registers per thread for its loads and "
                      .. "accumulators (max 160)", f.tile, stages, regs))
  end
  -- A sparse kernel keeps r_steps steps of residual words in flight (4 per
  -- row block; r_steps divides U) and a cursor per row block. ptxas gives
  -- about 1.55 x `regs` for the dense kernel (8x16x64 x 4 stages: 58,
  -- 16x32x64: 124) and 5 more per row block and residual step plus the
  -- cursors (16x32x64 on 16 warps, 4 stages, 1 residual step: 104 bytes
  -- spilled at the 128 registers 512 threads allow; 3 stages: 128, none
  -- spilled): the deepest residual ring under the cap, else refused (the
  -- dispatcher then takes a stage away).
  -- A sparse twin keeps the dense kernel's CTAs per SM where registers
  -- bound them to two or more (ptxas gives the dense kernel ~1.55 x `regs`,
  -- in eights: 8x16x64 on 16 warps, 4 stages, 60 registers, two CTAs of
  -- 512 threads): one residual step, ~1.6 x `regs` + 16 + 6 per row block
  -- in all (measured with one residual step, no launch bound: 8x16x64 on
  -- 16 warps 64 / 74 / 80 registers at 2 / 3 / 4 stages, dense 51 / 57 /
  -- 60), and __launch_bounds__ asking for those CTAs. Where the key's
  -- stages do not fit, the plan says so (twin_short; dispatch.lua's
  -- sparse_stages then takes stages away) and falls back to the ring below:
  -- squeezed under the bound instead, ptxas spills into the main loop and
  -- the twin is as slow as with half the CTAs (H200, 4096x11008 at M = 8,
  -- dense 16.6 us: 4 stages with one CTA an SM 22.7, squeezed 21.9; 2
  -- stages, two CTAs, no spill, 17.1; bench/results/2026-11-28-session42).
  local cap = math.min(255, 65536 // (32 * wn))
  local dense_ctas = math.min(2048 // (32 * wn), 65536 // (32 * wn * (math.ceil(regs * 1.55 / 8) * 8)))
  local r_steps, sparse_blocks, short = 0, 0, 0
  if sparse and dense_ctas >= 2 then
    if regs * 1.6 + 16 + 6 * r <= (65536 // (32 * wn * dense_ctas)) // 8 * 8 then
      r_steps, sparse_blocks = 1, dense_ctas
    else
      short = 1
    end
  end
  if sparse and r_steps == 0 then
    for d = stages, 1, -1 do
      if stages % d == 0 and regs * 1.55 + 5 * r * d + 8 <= cap then r_steps = d; break end
    end
    if r_steps == 0 then
      bad(string.format("pipe=decode: tile %s with %d stages and a residual needs ~%d registers per thread "
                        .. "(%d warps allow %d)", f.tile, stages, math.ceil(regs * 1.55 + 5 * r + 8), wn, cap))
    end
  end
  local out_bytes = (f.epi == "i32") and 4 or 2
  local ctas_at_128 = 65536 // (32 * wn * 128)   -- CTAs per SM at 128 registers per thread
  local p = {
    name = G.kernel_name("decode", f),
    threads = 32 * wn, smem = 0, red_words = bm * bn * (L.parts or 1),
    tile_m = bm, tile_n = bn, tile_k = 64, warps = wn, stages = stages, r = r, nt = nt,
    group = g, k_step = 64, n_unit = 16, split = 1, out_bytes = out_bytes, epi = f.epi,
    -- Programmatic dependent launch (sm_90+): the first U steps of weights
    -- are requested before waiting for the activation kernel (or, fused,
    -- before quantizing the tokens here).
    pdl = (arch.cc >= 90 and fused == 0) and 1 or 0,
    fused = fused, aq_cached = aq_cached, cluster = 1,
    -- One epilogue pass (each thread at most one pair of outputs): its
    -- scales are loaded before the main loop, not in the tail.
    pre_scales = (f.epi ~= "i32" and bm * bn <= 64 * wn) and 1 or 0,
    -- A per-group rescale's second set of sums takes 256-thread tiles past
    -- 128 registers and halves their CTAs per SM (16x32x64 on 8 warps: 145
    -- registers, one CTA): ask ptxas for the two CTAs that 128 registers
    -- allow (it fits them without spilling; 8192x8192 at M = 16: 32.1 ->
    -- 26.9 us). Not for 512 threads, where one CTA is all there is and the
    -- bound costs speed (4096x11008 at M = 1: 18.5 -> 22.0 us). 0: no bound.
    -- Two activation parts' two sets of sums likewise.
    min_blocks = sparse_blocks > 0 and sparse_blocks
                 or (((L.fold or L.parts == 2) and ctas_at_128 >= 2) and ctas_at_128 or 0),
    r_steps = r_steps, twin_short = short,
  }
  return G.scheme_facts(p, L, g, sp), L
end

-- The kernel's parameter slots.
P.slots = G.slots

return P
