-- lib/wgmma_plan.lua -- the launch plan of the two warpgroup-MMA pipes
-- (sm_90a), gemm_wgmma.cu (pipe=wgmma) and gemm_tma.cu (pipe=tma): warpgroup
-- MMA with the dequantized weights as the register A operand and the tokens
-- as the shared-memory B operand. pipe=wgmma fills its ring with cp.async;
-- pipe=tma with the tensor memory accelerator: one thread issues a tensor
-- copy per operand per K tile (tokens 128-byte swizzled by the map)
-- completing on per-slot mbarriers, and warps release slots on "empty"
-- mbarriers instead of meeting at a CTA barrier every K tile. The runtime
-- passes the tensor maps.
-- Field meanings in these pipes:
--   tile=BMxBNx128  BM tokens x BN weight rows per CTA; the K step is 128
--                   (one 128-byte swizzled activation row per token)
--   warps=WMx(4*G)  WM warpgroups split the tokens (each a wgmma of BM/WM
--                   tokens), G warpgroups split the weight rows (each takes
--                   BN/G rows in 64-row wgmma blocks)
--   stages=S        shared-memory ring of S stages, S-2 K tiles in flight
--                   (one slot is still read by the wgmma in flight)
--   split           CTAs per output tile along K (exact INT32 fix-up)
--   producer=wg     (tma) a warpgroup of its own issues the copies (one
--                   lane) and gives its registers to the MMA warpgroups
--   persist=1       (tma, producer=wg) one CTA per place on the SMs, each
--                   walking output tiles; the epilogue's tile past the ring
--   pingpong=1      (tma, producer=wg, persist=1) two MMA warpgroups
--                   (warps=1x8 or 2x4), each computing a whole output
--                   tile of its own, BM x BN: the CTA's tiles go to them
--                   in turn, so one's epilogue runs while the other's MMAs
--                   do (the tile is a warpgroup's, not split between them)
--   sk=1            (tma, persist=1) the last, partial wave's tiles split
--                   along K where that pays (lib/work.cu), the slices'
--                   INT32 sums added in the workspace
--   wu8=1           (dense, not excp) the register operand's weights
--                   unsigned (lib/gemm.lua: the layout adds row sums)
--   excp=1          (tma, producer=wg) a dequantization warpgroup writes
--                   each K tile's weights as INT8 into a ring of its own
--                   in shared memory (W8_SLOTS slots, 128-byte swizzled
--                   like the tokens); the MMA warpgroups take both
--                   operands from shared memory
local P = {}

-- producer=wg: the registers the producer warpgroup keeps (setmaxnreg's
-- least); the MMA warpgroups take the rest of the CTA's share.
local PRODUCER_REGS = 24
-- ... and where it also looks up a sparse residual (its second warp: a
-- cursor in the presence words, a lane's block address): at 24 ptxas
-- spills it.
local PRODUCER_REGS_SPARSE = 40
-- ... and where it hands out places in a ring of residual blocks (rpieces):
-- at 40 ptxas spills 8-12 bytes in the persistent kernels. Their MMA
-- warpgroups then get 224 (128x256 tiles), which ptxas fits without spills
-- and with the same wgmma groups as at 232: for them the estimate below
-- takes 32 registers for addresses and parameters, not 40.
local PRODUCER_REGS_PIECES = 48

-- excp=1: the INT8 weights' ring (two slots: the dequantization of tile
-- k + 1 runs while the MMAs read tile k), and the registers the
-- dequantization warpgroup keeps per 16-row block its warps take (the
-- packed words, the INT8 fragments and parameters of one, all of a 64-k
-- step in flight) above a base for addresses and counters.
local W8_SLOTS = 2
local function dequant_regs(blocks, w_vecs) return (blocks * (4 * w_vecs + 10) + 56 + 7) // 8 * 8 end

local function bad(msg) fail("INVALID_KEY", msg) end

-- Token counts a wgmma with 8-bit operands takes as its N.
local function valid_n(n)
  return n >= 8 and n <= 256 and ((n <= 32 and n % 8 == 0) or n % 16 == 0)
end

local G = import("lib/gemm.lua")

function P.check(f, arch)
  local d = G.dims(f)
  local S, L = G.scheme(f)
  G.check_parts(f, L, f.pipe)
  G.check_mma(f, L, f.pipe)
  local bm, bn, bk, wm, wn = d.bm, d.bn, d.bk, d.wm, d.wn
  local stages, g, split = d.stages, d.g, d.split
  local pipe = f.pipe
  if f.arch ~= "sm_90a" then bad("pipe=" .. pipe .. " needs arch=sm_90a (warpgroup MMA), not " .. f.arch) end
  if bk ~= 128 then bad("pipe=" .. pipe .. ": tile K step " .. bk .. " must be 128 (one 128-byte swizzle row)") end
  if f.actq == "fused" then
    bad("pipe=" .. pipe .. ": actq=fused is for the few-token pipes (multistage, decode); this pipe reads "
        .. "tokens quantized by the activation kernel")
  end
  if wn % 4 ~= 0 then bad("pipe=" .. pipe .. ": warps=" .. f.warps .. ": warps along N must be whole warpgroups (4, 8, ...)") end
  local wgn = wn // 4
  if wm * wgn > 4 then bad("pipe=" .. pipe .. ": at most 4 warpgroups per CTA (" .. f.warps .. ")") end
  -- pingpong=1: the MMA warpgroups (the warps field's) take whole tiles
  -- in turn; the tile is split between none of them.
  local pingpong = f.pingpong == "1"
  local mma_wgs = wm * wgn
  if pingpong then
    if mma_wgs ~= 2 then bad("pingpong=1 takes two MMA warpgroups (warps=1x8 or 2x4), not warps=" .. f.warps) end
    if f.excp == "1" then bad("pingpong=1 and excp=1 are not combined") end
    wm, wgn = 1, 1
  end
  if bn % (64 * wgn) ~= 0 then bad("pipe=" .. pipe .. ": tile N " .. bn .. " must be a multiple of 64 x " .. wgn .. " warpgroups") end
  if bm % wm ~= 0 or not valid_n(bm // wm) then
    bad("pipe=" .. pipe .. ": tile M " .. bm .. " over " .. wm .. " warpgroups must give 8, 16, 24, 32 or a multiple of 16 up to 256 tokens each")
  end
  if pipe == "tma" and bm > 256 then
    bad("pipe=tma: tile M " .. bm .. " must be at most 256 tokens (one tensor-map box)")
  end
  if stages < 3 then bad("pipe=" .. pipe .. ": stages=" .. stages .. " must be at least 3") end
  if g > 0 and g % bk ~= 0 and bk % g ~= 0 then
    bad("group " .. g .. " and tile K step " .. bk .. " must divide one another")
  end
  local mi, nt = bn // wgn // 64, bm // wm
  -- excp=1: the dequantization is the MMA's work moved to a warpgroup of
  -- its own, so there must be one, of the form the register path has.
  local excp = f.excp == "1"
  if excp then
    local why = (L.a_is_loaded and "its 8-bit weights are the MMA's operand as loaded: there is nothing to dequantize")
                or (L.fold and "its per-group rescale sums each group apart in the MMA warpgroups")
                or (L.parts == 2 and "its two activation parts sum apart")
    if why then bad("excp=1: scheme " .. f.scheme .. " does not take explicit dequantization: " .. why) end
  end
  -- The MMA warpgroups, the dequantization warpgroup (excp) and the
  -- producer warpgroup beside them.
  local consumers = 128 * mma_wgs
  local producer = f.producer == "wg"
  local preg = (f.rpieces and PRODUCER_REGS_PIECES) or (f.sparsity and PRODUCER_REGS_SPARSE) or PRODUCER_REGS
  local deq_want = excp and dequant_regs(bn // 64, L.bits // 4) or 0
  local threads = consumers + (producer and 128 or 0) + (excp and 128 or 0)
  -- With a producer warpgroup the cap is known once shared memory says
  -- how many CTAs share the SM (below); until then, one CTA's.
  local cap = producer and math.min(255, (65536 - 128 * preg - 128 * deq_want) // consumers // 8 * 8)
              or math.min(255, 65536 // threads // 8 * 8)
  -- Two steps of A fragments: the packed words and the dequantized ones,
  -- or (a_is_loaded) the loaded words themselves; none where the A
  -- operand is in shared memory (excp).
  local frag_regs = excp and 0 or mi * 16 * (L.a_is_loaded and 2 or (1 + L.bits // 4))
  -- A per-group rescale (fold) keeps the group's sums apart: twice the
  -- accumulators, drained at every group end. fold2: three times, two
  -- sets of sums for a pair of groups, drained once per pair -- where
  -- groups divide the K tile, the registers allow it and one set already
  -- leaves room for only one CTA per SM (128x128 tiles on two warpgroups:
  -- 6-12 % faster at M >= 256; on 64x128 tiles it would halve the CTAs per
  -- SM: 8192x8192 at M = 64, 29.3 -> 36.6 us).
  local base = mi * nt // 2
  local fold2 = L.fold and g > 0 and g <= bk and 3 * base + frag_regs + 24 <= cap
                and 2 * threads * (2 * base + frag_regs + 24) > 65536
  -- Two activation parts: a second set of sums beside the first, unless
  -- the first part's are stashed (stash=1, lib/stash.cu).
  local two_sets = L.parts == 2 and f.stash ~= "1"
  local acc_regs = base * (fold2 and 3 or ((L.fold or two_sets) and 2 or 1))
  if acc_regs > 128 and not fold2 then
    bad("pipe=" .. pipe .. ": warpgroup tile " .. nt .. "x" .. (bn // wgn) .. " needs " .. acc_regs .. " accumulator registers per thread (max 128)"
        .. (L.fold and " with " .. f.scheme .. "'s per-group sums" or "")
        .. (two_sets and " with " .. f.scheme .. "'s two sums (stash=1 keeps one set)" or ""))
  end
  -- Registers: accumulators, two steps of A fragments, ~40 for addresses
  -- and parameters; past the per-thread share of the register file ptxas
  -- serializes the wgmmas.
  local regs = acc_regs + frag_regs + ((fold2 and 24) or (f.rpieces and 32) or 40)
  if regs > cap then
    bad(string.format("pipe=%s: warpgroup tile %dx%d needs ~%d registers per thread; %d threads allow %d",
                      pipe, nt, bn // wgn, regs, threads, cap))
  end
  local ng = (g > 0 and L.gparams) and math.max(1, bk // g) or 0
  -- Stage layout: activations first (the swizzled B operand must sit on a
  -- 1024-byte boundary), then packed weights, then group parameters.
  local x_bytes, w_bytes, gp_bytes = bm * bk, bn * bk * L.bits // 8, (bn // 16) * ng * 32
  -- A sparse kernel's stage adds the tile's residual blocks and their
  -- presence word, or (rslots) only the words: its residual ring follows
  -- the stages.
  local sp, r_stage = G.sparse(f, L, bn, bk)
  local stage_bytes = (x_bytes + w_bytes + gp_bytes + r_stage + 1023) // 1024 * 1024
  -- excp: the INT8 weights' ring past the stages (BN rows of BK bytes a
  -- slot, a multiple of 1024).
  local w8_bytes = excp and bn * bk or 0
  local ring_bytes = stages * stage_bytes + sp.r_ring + (excp and W8_SLOTS * w8_bytes or 0)
  local out_bytes = (f.epi == "i32") and 4 or 2
  local ldc = bn + ((f.epi == "i32") and 4 or 8)
  local tile_bytes = bm * ldc * out_bytes                 -- the output tile, staged for the store
  -- A persistent kernel stages a tile's output while the producer fills
  -- the ring with the next tile's: the output tile has room of its own.
  local persist = f.persist == "1"
  if persist and L.parts == 2 then
    bad("persist=1: scheme " .. f.scheme .. " (two activation parts) runs a CTA per tile")
  end
  -- Its INT32 sums (epi=i32, the exactness checks' twin) go straight from
  -- the registers, which takes no room.
  local direct = persist and f.epi == "i32"
  if direct then tile_bytes = 0 end
  -- Its 16-bit outputs (not pingpong's, staged per warpgroup) go out
  -- through the tensor memory accelerator (lib/epilogue.cu): the tile
  -- staged densely in 128-byte swizzled column blocks of 64.
  local tma_store = persist and not direct and not pingpong
  if tma_store then tile_bytes = bm * bn * out_bytes end
  -- pingpong: each MMA warpgroup stages its own tile's output.
  local epi_bytes = tile_bytes
  if pingpong then tile_bytes = 2 * tile_bytes end
  -- 1024 bytes of slack align the ring; the split-K flag and the mbarriers
  -- (the ring's, and a cluster fix-up's `recv`) are static.
  local cluster, body = G.check_reduce(f, d, arch, persist and ring_bytes + tile_bytes or math.max(ring_bytes, tile_bytes),
                                       tile_bytes)
  local smem = body + 1024
  local sk = f.sk == "1"
  local static = 16 + (sk and 16 or 0) + (cluster > 1 and 16 or 0) + ((pipe == "tma") and 16 * (stages + sp.rslots + (excp and W8_SLOTS or 0) + (pingpong and 1 or 0)) or 0)
                 + (sp.rpieces > 0 and 8 * stages * (pingpong and 1 or wgn) or 0)
  if smem + static > arch.smem then
    bad(string.format("variant needs %d bytes of shared memory%s; %s allows %d", smem,
                      persist and string.format(" (%d stages of %d%s and the output tile's %d)", stages, stage_bytes,
                                                excp and string.format(", the INT8 ring's %d", W8_SLOTS * w8_bytes) or "",
                                                tile_bytes)
                      or "", f.arch, arch.smem))
  end
  local p = {
    name = G.kernel_name(pipe, f),
    threads = threads, consumers = consumers, producer = producer and 1 or 0, smem = smem,
    tile_m = bm, tile_n = bn, tile_k = bk, warps_m = wm, wg_n = wgn, stages = stages,
    group = g, k_step = bk, n_unit = 16, mi = mi, nt = nt, ng = ng, split = split,
    w_bytes = w_bytes, x_bytes = x_bytes, gp_bytes = gp_bytes, stage_bytes = stage_bytes,
    out_bytes = out_bytes, ldc = ldc, epi = f.epi,
    pdl = 1, tma = (pipe == "tma") and 1 or 0, cluster = cluster, fused = 0,
    r_ring_off = stages * stage_bytes, persist = persist and 1 or 0, band = tonumber(f.band or "0"),
    -- The output tile's place: past the INT32 sums a cluster's peers
    -- read, past a persistent kernel's ring, else over the ring.
    epi_tile_off = (cluster > 1 and bm * bn * 4) or (persist and ring_bytes) or 0, epi_direct = direct and 1 or 0,
    pingpong = pingpong and 1 or 0, epi_bytes = epi_bytes, sk = sk and 1 or 0, tma_store = tma_store and 1 or 0,
    -- 16-bit outputs are staged with stmatrix, their scales loaded once a
    -- tile (lib/epi_pre.cu, lib/epilogue.cu).
    stsm = (f.epi ~= "i32") and 1 or 0,
    excp = excp and 1 or 0, w8_slots = excp and W8_SLOTS or 0, w8_off = stages * stage_bytes + sp.r_ring,
  }
  G.scheme_facts(p, L, g, sp)
  -- The epilogue's loads made ahead of the drain (lib/epi_pre.cu), so the
  -- epilogue does not wait for them after the main loop: by an MMA
  -- warpgroup beside a producer (168 registers a thread), or without one
  -- where the registers they take (a word a weight row's scale, and its
  -- bias; a word a token's scale, two with two activation parts) leave
  -- the CTAs shared memory lets share an SM (two at most) their share of
  -- the register file; unless the epilogue reads the tokens' row sums as
  -- well (a persistent kernel then makes them before its drain). Not in a
  -- persistent kernel with a sparse residual: its main loop has the steps
  -- twice (lib/wgmma_tile.cu), and the loads kept across it spill.
  local early_regs = mi * 2 * (f.bias == "1" and 2 or 1) + nt // 8 * 2 * (L.parts or 1)
  local room = not (sp.sparse == 1 and f.persist == "1")
               and (producer or regs + early_regs <= 65536 // (threads * math.max(1, math.min(2, G.resident(p)))))
  p.epi_early = (p.stsm == 1 and room and (p.rowsum == 0 or p.wu8 == 1)) and 1 or 0
  p.fold2 = fold2 and 1 or 0
  -- stash=1: two activation parts in one set of sums, the INT8 part's
  -- stored to the workspace at the part boundary (lib/stash.cu).
  p.stash = (f.stash == "1") and 1 or 0
  -- Kept to two CTAs per SM where shared memory allows them: the epilogue's
  -- read-back sums (stash) or its scale loads beside a cluster's fix-up
  -- (lib/split_k.cu), loaded ahead of their use, would otherwise take the
  -- registers of the second CTA (the 128x128 tile fits 128, no spills; the
  -- cluster kernel at 132 registers ran one CTA an SM, 8192x28672 M = 256
  -- 101 -> 137 us, bench/results/2026-11-28-session36, c6). Not with two
  -- sets of sums (a per-group rescale's), which take more than 128 anyway.
  p.min_blocks = ((p.stash == 1 or (cluster > 1 and acc_regs == base)) and G.resident(p) >= 2) and 2 or 0
  if producer then
    -- setmaxnreg moves registers between the warpgroups of one CTA: the
    -- launch share is bounded by the CTAs resident per SM (min_blocks
    -- keeps ptxas to it), the producer drops to its count (preg) and the MMA
    -- warpgroups take what that frees.
    -- setmaxnreg.inc draws on a pool per CTA: what the CTA launched with
    -- (its threads x the launch count, which ptxas takes to the bound:
    -- the share of 65536 per thread, in whole 8s) less what the warps hold.
    -- An MMA warpgroup that asks for more than the producer gave up waits
    -- forever.
    local ctas = G.resident(p)
    local launch = math.min(256, 65536 // ctas // threads // 8 * 8)
    p.min_blocks = ctas
    p.regs_producer = preg
    -- The dequantization warpgroup (excp) lowers its count to what it
    -- needs where the launch gave more (0: it keeps the launch count).
    local deq = math.min(launch, deq_want)
    p.regs_dequant = (excp and deq < launch) and deq or 0
    -- (setmaxnreg.inc may not lower the count: up to 256, never below the
    -- launch count, which this is never below short of the cap.)
    p.regs_consumer = math.min(256, (launch * threads - 128 * preg - (excp and 128 * deq or 0)) // consumers // 8 * 8)
    if regs > p.regs_consumer then
      bad(string.format("pipe=%s: warpgroup tile %dx%d needs ~%d registers per thread; with producer=wg and %d CTA%s per SM "
                        .. "the MMA warpgroups get %d", pipe, nt, bn // wgn, regs, ctas, ctas > 1 and "s" or "", p.regs_consumer))
    end
  end
  -- Sets taken in turn per group: with one group per K tile the main loop
  -- runs two tiles per iteration, so each tile knows its set.
  p.kt_unroll = (fold2 and g == bk) and 2 or 1
  return p, L
end

-- The kernel's parameter slots.
P.slots = G.slots

return P
