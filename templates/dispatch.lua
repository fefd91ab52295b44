-- dispatch.lua -- which variant runs at which M (policy; the runtime only
-- follows the table it returns). A layer gets one GEMM variant per M bucket
-- (the first bucket whose max_m >= M) and one activation-quantization kernel.
local V = import("variants.lua")
local G = import("lib/gemm.lua")
local SCHEMES = import("schemes.lua")
local D = {}

-- Buckets: small M streams weights with thin token tiles (tokens are the
-- MMA's n side, so M = 1..16 wastes no weight traffic); large M uses
-- square-ish tiles to reuse each dequantized weight across many tokens.
-- A bucket may list `alts`: variants used instead, the first whose
-- conditions hold (max_n / min_n: N at most / at least this; arch: only for this target;
-- k_multiple: K a multiple of this; max_k: K at most this; ragged = { bm,
-- bn, lo, hi }: the bucket's tokens (max_m) and N in tiles of bm x bn make
-- more than lo and at most hi waves of one tile an SM; min_kloop /
-- max_kloop: at least / at most this many K tiles per CTA at the split
-- chosen; max_split: split = "auto" takes at most this; sparse: only for
-- weights that carry a residual; no_fold: not for schemes that rescale per
-- group in the K loop).
-- Measured on the H100:
--   decode pipe (bench/results/2026-11-22-decode-h100): weights streamed into
--   registers win on narrow layers -- M <= 8 at N <= 4096 (4096x4096: 11.9
--   vs 14.1 us), M = 9..16 at N <= 8192 (8192x8192: 25.2 vs 28.8 us) --
--   while wider layers stream better through the split-K multistage tiles.
--   At M = 9..16 and N <= 4096, 16 warps per CTA (twice the weight loads in
--   flight per SM) beat 8 (bench/results/2026-11-22-cluster-h100/
--   candidates-m16.txt: 4096x4096 12.90 vs 14.40 us, 4096x11008 21.86 vs
--   23.74); at N = 8192 they lose (8192x8192 27.58 vs 24.86).
--   wgmma pipe (bench/results/2026-11-22-wgmma-h100): warpgroup MMA with
--   register-A weights wins from M = 65 on (57344x8192 at M = 128: 160 vs
--   289 us; 8192x28672 at M = 256: 150 vs 261 us), and at M = 33..64 on
--   layers up to N = 8192 (8192x28672: 72 vs 92 us; 4096x4096: 18.5 vs 21).
--   tma pipe (bench/results/2026-11-22-tma-h100): the same MMAs with the
--   ring filled by tensor copies on mbarriers beat the cp.async ring at
--   M = 128 on every shape tried (57344x8192: 160 -> 132 us at split 1;
--   8192x28672: 101 -> 80 us). Two policies, measured per shape: one CTA
--   per SM with a 6-stage ring (12288x4096 at M = 128: 28.4 us at split 1
--   against 30.4 with two CTAs per SM at split 2; 8192x8192: 35.2 vs 36.8),
--   or two CTAs per SM with 4 stages when one wave would leave SMs idle or
--   give each CTA a long K loop (10240x8192: 44.0 vs 47.3; 8192x28672:
--   79.7 vs 87.5). See `one_wave`.
--   At M = 33..64 the TMA ring wins only where each CTA runs a long K
--   loop (8192x8192: 31.6 us at split 4 against 35.8 for the cp.async ring
--   at split 8); on short loops its start-up costs more (4096x4096 at split
--   8, 4 K tiles per CTA: 20.8 vs 18.4 us), so `min_kloop` sends those to
--   the cp.async ring.
local function wgmma_64(pipe, min_kloop)
  return { arch = "sm_90a", max_n = 8192, k_multiple = 128, pipe = pipe, tile = "64x128x128", warps = "1x8",
           stages = 4, split = "auto", per_sm = 2, min_kloop = min_kloop }
end
-- one_wave: use `stages` and one CTA per SM when some split fills at least
-- `fill` of the SMs in one wave with at most `max_ktiles` K tiles per CTA.
local ONE_WAVE = { stages = 6, fill = 0.7, max_ktiles = 32 }
-- M = 257..512 on the 4096-wide layers: 128 tiles of 128x128, one wave at
-- one CTA per SM with a 6-stage ring however long the K loop, not two CTAs'
-- room with 4 stages that the second CTA never fills (H100, bench/results/
-- 2026-11-26-session20, ab512-*: 4096x4096 / 4096x11008 at M = 512, the
-- three 4-bit schemes without a per-group rescale measured 37.4..40.1 /
-- 81.5..88.0 -> 30.3..31.9 / 62.4..67.1 us). Not for the fold schemes
-- (no_fold): already at one CTA per SM by their registers, they lost 3-4 %
-- (32.6 / 69.1 -> 33.5 / 71.6). At one CTA per SM a producer warpgroup
-- fills the ring (producer=wg, the one-wave choice's `producer`): the
-- default scheme's 4096x4096 / 4096x14336 at M = 512 31.3 / 83.1 -> 25.9 /
-- 62.6 us (H100, bench/results/2026-11-27-session28, c2).
local ONE_WAVE_512 = { stages = 6, fill = 0.7, max_ktiles = 128, producer = "wg" }
-- The same one-wave choice at M = 65..256 (session 33, bench/results/
-- 2026-11-28-session33, c4: qjit tune beside the table): at M = 256 the
-- 4096-wide layers' 128 CTAs of 128x128 at split 2 with the producer
-- warpgroup and 6 stages, 4096x4096 / 4096x11008 21.3 / 39.7 -> 19.1 /
-- 33.7 us (4-bit; the table had two CTAs per SM, or split 4 past 32 K
-- tiles), 8-bit 4096x11008 54.1 -> 40.5; 8-bit 8192x28672 at M = 128
-- (112 K tiles a CTA) 118.7 -> 103.3. Not for the fold schemes, as above.
local ONE_WAVE_P = ONE_WAVE_512
-- reduce: how two split-K slices add. reduce=cluster (the slices of a tile
-- in one cluster, each rank adding its share of the rows over distributed
-- shared memory) at split 2 only, measured in bench/results/
-- 2026-11-22-split2-h100 (ab-A/ab-C): it beats the workspace partials on the
-- 128x128 TMA tiles (4096x4096 M = 256: 23.2 -> 22.1 us; 8192x8192 M = 128:
-- 33.8 -> 32.5) and the 128x64 ones (4096x4096 M = 128: 18.9 -> 17.1), is
-- even on few-token multistage tiles (ab-C2), and loses at split 4..8
-- wherever the grid fills the SMs (4096x4096 M = 128, split 4: 22.3 -> 27.9;
-- 8192x28672: 78 -> 121 us): clusters of 4..8 CTAs do not all fit at once.
local function wgmma_128(split, one_wave, no_fold)
  return { arch = "sm_90a", k_multiple = 128, pipe = "tma", tile = "128x128x128", warps = "1x8", stages = 4,
           one_wave = one_wave, split = split, per_sm = 2, reduce = "cluster", no_fold = no_fold }
end
-- M = 33..64 with the launch trigger (lib/token_wait.cu): a grid that
-- leaves SMs idle lends them to the next GEMM of the step, whose blocks
-- start there, so one wave of fewer, longer CTAs beats split-K's partials
-- where it fills 70 % of the SMs with at most 32 K tiles each (the ring as
-- the variant has it). Measured as 128-layer steps of one shape on the H100
-- (bench/results/2026-11-27-session25, tune): 4096x4096 on 64x64 tiles at
-- split 2 1318 us against 1469 at split 4; 12288x4096 on 64x128 TMA tiles
-- at split 1 2195 against 2326 at split 2 and 2461 for the multistage tile;
-- 22016x4096 (two CTAs an SM, split 1) 3234 against 3580. Not past 32 K
-- tiles: 4096x11008 at split 2 (43) 2693 against 2233 at split 4.
local ONE_WAVE_64 = { fill = 0.7, max_ktiles = 32 }
-- Past N = 8192 at M = 33..64 the 64x128 TMA tile where each CTA runs at
-- most 32 K tiles (above); longer loops keep the multistage tile.
local WIDE_64 = { arch = "sm_90a", k_multiple = 128, max_kloop = 32, pipe = "tma", tile = "64x128x128", warps = "1x8",
                  stages = 4, split = "auto", per_sm = 2, one_wave = ONE_WAVE_64 }
-- ... and before narrow(64) where its 64x64 tiles, two an SM, would make
-- more than one wave with a ragged last one (1 < tiles / (2 SMs) <= 1.5)
-- that the 64x128 tiles make one: H200, bench/results/2026-11-28-
-- session39, c4: 22016x4096 / 18944x3584 at M = 48 27.7 / 24.4 us on
-- WIDE_64 against 28.9 / 25.9 on narrow(64).
local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end
local RAGGED_64 = copy(WIDE_64)
RAGGED_64.ragged = { bm = 64, bn = 64, lo = 2.0, hi = 3.0 }
-- The 4096-wide layers (N <= 4096) at M = 17..128: 64-row weight tiles give
-- 64 tiles across N, split 2..4 along K to fill the SMs, with deep TMA rings
-- (8 stages) -- measured in bench/results/2026-11-22-split2-h100
-- (candidates-*.txt): 4096x4096 at M = 32 / 64 / 128: 14.7 / 16.8 / 17.1 us
-- against 16.0 / 18.6 / 22.6 with the tiles below; 4096x11008 at M = 64 /
-- 128: 24.5 / 30.7 against 26.6 / 33.0. At M = 17..32 the 32-token tile wins
-- only on short K loops (4096x11008: 25.0 against 23.3 us), so `max_kloop`.
-- At M = 33..64 the split is 4 and reduces through the workspace: clusters
-- of 4 CTAs that fill every SM do not all fit at once (4096x11008: 36.0 us
-- in clusters against 24.5).
-- With a producer warpgroup (producer=wg) since session 39: where thread 0
-- of the MMA warpgroup refilled the ring, each K tile waited for its
-- refill (per-CTA stamps, H200, 4096x4096 M = 64: 400 ns a K tile while
-- refilling, 240 after; with the producer 211 throughout). Then the 64x64
-- tile at M = 33..64 on every N (a split-2 pair in a cluster), not only
-- the 4096-wide layers. H200, table against table, GEMM alone (bench/
-- results/2026-11-28-session39, c4): the default scheme on 16 layers at
-- M = 48 / 64 1.169 / 1.188x (4096x4096 M = 64 13.41 -> 10.46 us,
-- 57344x8192 115.8 -> 85.4), at M = 96 / 128 on the 4096-wide ones 1.196 /
-- 1.240x; the other 4-bit schemes 1.18-1.24x, 8-bit weights at M = 128
-- 1.07x.
local function narrow(max_m)
  if max_m <= 32 then
    return { max_n = 4096, arch = "sm_90a", k_multiple = 128, max_kloop = 16, pipe = "wgmma", tile = "32x64x128",
             warps = "1x4", stages = 8, split = 2, reduce = "cluster" }
  elseif max_m <= 64 then
    return { arch = "sm_90a", k_multiple = 128, pipe = "tma", tile = "64x64x128", warps = "1x4", stages = 8,
             split = "auto", per_sm = 2, one_wave = ONE_WAVE_64, reduce = "cluster", producer = "wg" }
  end
  return { max_n = 4096, arch = "sm_90a", k_multiple = 128, pipe = "tma", tile = "128x64x128", warps = "1x4",
           stages = 8, split = "auto", per_sm = 1, reduce = "cluster", producer = "wg" }
end
-- Past 512 tokens: 256x128 tiles on two MMA warpgroups of 128 tokens each
-- beside a producer warpgroup (producer=wg: the ring filled by a warpgroup
-- of its own, setmaxnreg giving its registers to the MMA warpgroups, one
-- CTA per SM) read each weight tile once per 256 tokens and never stop
-- the MMA warps for a refill. Measured on the H100 against the 128x128
-- tile (bench/results/2026-11-27-session28, c2): 28672x4096 at M = 1024 /
-- 4096 237.1 / 908.6 -> 206.8 / 797.6 us, 4096x14336 124.4 / 458.9 ->
-- 108.2 / 402.5, 12288x4096 107.3 / 390.1 -> 96.2 / 361.4, 4096x4096
-- 46.1 / 163.7 -> 42.1 / 151.5; at M = 256..512 it wins only on the widest
-- layer (28672x4096 M = 512 125.8 -> 119.4; 4096x4096 31.3 -> 35.2;
-- 12288x4096 59.1 -> 62.5), so there from N = 16384 on. Not for the fold
-- schemes: their per-group sums do not fit a 128x128 warpgroup tile. The
-- same for 8-bit weights (results c3), whose 128x128 tile it beats by
-- 1.2-1.7x past 512 tokens (28672x4096 at M = 4096 1509 -> 907 us) and at
-- M = 512 from N = 8192 on (12288x4096 85.9 -> 64.9; 4096x4096 30.5 ->
-- 34.3).
-- Then persistent (persist=1, session 29, bench/results/2026-11-27-
-- session29, c1): one CTA per SM walks its output tiles, the producer
-- filling the next tile's stages during this one's epilogue, in bands of
-- token tiles that keep the tokens in L2 while each weight tile is read
-- once. The 128x256 tile (the two MMA warpgroups split the weight rows,
-- so each dequantizes its own half, where 256x128 has both dequantize the
-- same rows) at 4 stages, its output tile past the ring: 28672x4096 at
-- M = 256 / 512 / 1024 / 4096 61.6 / 113.7 / 192.4 / 739.8 us against
-- the 256x128 tile's 61.3 / 118.8 / 205.1 / 791.3 (the table's at 256:
-- 71.7), 4096x14336 and 4096x4096 within 1 % (397.7 / 148.0 at 4096 against
-- 398.8 / 149.5). So from N = 16384 on at M = 129..256 too.
-- With sk=1 (session 32, bench/results/2026-11-27-session32, c3): the
-- last, partial wave's tiles split along K where the kernel's cost model
-- says it pays, the grid on every SM. Against the table before it, GEMM
-- alone: 10240x8192 M = 512 / 1024 96.7 / 147.0 -> 77.1 / 133.0 us,
-- 22016x4096 M = 256 / 1024 60.2 / 158.5 -> 55.4 / 151.8, 57344x8192 M =
-- 256 199.7 -> 184.7; where the tiles fill whole waves it is the
-- persistent kernel as before (within 0.5 %). On layers of at least 80
-- output tiles (N >= 10240 at M = 129..256, N >= 8192 at 257..512) it
-- also beats the 128x128 tiles there (12288x4096 M = 256 35.3 -> 32.3,
-- 10240x8192 59.9 -> 52.8, 8192x8192 M = 512 60.4 -> 53.0, 8192x28672
-- 194.6 -> 162.4); on fewer (4096-wide layers, 8192x8192 at 256) the
-- split single wave loses to them (4096x4096 M = 256 18.7 -> 27.0).
local function large_wg(min_n)
  return { min_n = min_n, arch = "sm_90a", k_multiple = 128, n_multiple = 8, pipe = "tma", tile = "128x256x128",
           warps = "1x8", stages = 4, split = 1, producer = "wg", persist = true, sk = true, no_fold = true }
end
-- Where large_wg's 128x256 tiles would make more than one wave but leave
-- half the SMs or more idle in the last (ragged: 1 < tiles / SMs <= 1.5) on
-- a short K loop (K <= 4096: 32 K tiles a tile, too few for the split of
-- the last wave to pay as it does on deeper layers), the persistent 128x128
-- tile at 6 stages instead: twice the tiles, 2.6-2.9 waves. H100, GEMM
-- alone (bench/results/2026-11-28-session35, c2): 22016x4096 at M = 256
-- 51.6 -> 47.6 us, 12288x4096 at M = 512 49.1 -> 46.1; where the 128x256
-- tiles fill their waves better it loses (22016x4096 M = 512 72.3 -> 84.1,
-- 10240x8192 M = 512 (K = 8192) 70.3 -> 73.6, 12288x4096 M = 256 (0.73 of
-- a wave) 30.5 -> 34.1).
local function ragged_wg()
  return { ragged = { bm = 128, bn = 256, lo = 1.0, hi = 1.5 }, max_k = 4096, arch = "sm_90a", k_multiple = 128,
           n_multiple = 8, pipe = "tma", tile = "128x128x128", warps = "1x8", stages = 6, split = 1, producer = "wg",
           persist = true, sk = true, no_fold = true }
end
-- 8-bit weights: the 256x128 tile, one CTA per tile at 4 stages or
-- persistent at 3 (a ring of 8-bit weights leaves an output tile of its
-- own room for no more); results c2: persistent, 28672x4096 at M = 512 /
-- 4096 132.3 / 909.2 -> 120.1 / 740.4 us, 57344x8192 397.3 / 3100 ->
-- 359.7 / 2568, but 8192x8192 60.7 / 426.3 -> 64.5 / 422.6 and at M = 256
-- slower on every layer (28672x4096 70.7 -> 75.7). (The persistent 128x256
-- tile at 3 stages: 751.9 / 2821.5 at 4096.) Persistent with sk=1, as
-- large_wg (session 32, c3): 10240x8192 M = 1024 145.3 -> 133.3 us, the
-- rest within 1.5 % at M >= 1024 and on the layers from N = 16384 at 512.
local function large_wg8(min_n, persist)
  return { min_n = min_n, arch = "sm_90a", k_multiple = 128, n_multiple = persist and 8 or nil, pipe = "tma",
           tile = "256x128x128", warps = "2x4", stages = persist and 3 or 4, split = 1, producer = "wg",
           persist = persist, sk = persist, no_fold = true }
end
-- The few-token buckets past the decode pipe and the 4096-wide layers,
-- swept for the 4-bit scheme whose per-group rescale (INT32 group sums
-- beside the accumulators) makes registers dearest, then timed for the
-- others against the tiles they had (bench/sweep.sh, bench/results/
-- 2026-11-23-session11-h100: sweep-is, ab-few-token-tiles):
--   M <= 16: a 16-token multistage tile at split 2 where the decode pipe
--   does not take the layer (N > 8192), not a 32-token tile half empty:
--   with the rescale 57344x8192 106.7 against 133.6 us; without it
--   12288x4096 20.6 vs 23.7, 10240x8192 29.9 vs 31.4, 22016x4096 30.5 vs
--   31.9.
--   M <= 32: the cp.async warpgroup-MMA tile 32x64 at split 2 in a cluster
--   beyond the 4096-wide layers too, while each CTA runs at most 32 K tiles:
--   with the rescale 8192x8192 26.4 vs 32.3 us, 57344x8192 108.3 vs 133.3;
--   without it 12288x4096 20.6 vs 23.0, 10240x8192 30.4 vs 32.6, 8192x8192
--   26.6 vs 28.2 (57344x8192: 108.5 vs 107.6, the one loss). Longer K loops
--   keep the multistage tile (with the rescale, 4096x11008: 23.7 against
--   26.4 us in the cluster).
-- Past 8192 rows that cp.async tile gives way to the TMA pipe's 32-token
-- tile of 64 rows with a producer warpgroup (6 stages, split 2 in a
-- cluster), every 4-bit scheme alike. H200, GEMM alone, M = 32 (bench/
-- results/2026-11-29-session50, c4 and c6; the default scheme / the one
-- that subtracts after multiplying / the one with a per-group rescale,
-- us): 14336x4096 17.5 / 18.9 / 18.2 against 20.3 / 20.4 / 20.3 (the
-- cp.async tile's 448 CTAs at 8 stages a wave and a bit), 28672x4096 26.5
-- / 27.3 / 29.2 against 31.7 / 31.6 / 29.9, 16384x8192 28.4 / 29.4 / 30.3
-- against 35.1 / 32.7 / 34.9, 57344x8192 74.4 / 77.7 / 77.0 against 83.5 /
-- 89.4 / 84.7; the default scheme's 22016x4096 23.6 / 25.5, 28672x8192
-- 44.3 / 50.5; level where the layer gives few CTAs: 12288x4096 15.1 /
-- 16.4 / 15.6 against 15.1 / 15.9 / 15.5, 10240x8192 (default scheme)
-- 21.7 / 22.0. Within the cp.async tile's K loops (32 K tiles a CTA), as
-- measured.
local TMA_32 = { min_n = 8193, arch = "sm_90a", k_multiple = 128, max_kloop = 32, pipe = "tma", tile = "32x64x128",
                 warps = "1x4", stages = 6, split = 2, reduce = "cluster", producer = "wg" }
-- Weights with a residual (sparse twins, see sparse_stages) where the
-- dense choice's twin costs far more than the dense kernel: at M <= 32 on
-- layers up to 8192 rows, the TMA pipe's 16- and 32-token tiles of 64 rows
-- with a producer warpgroup (its second warp looks the residual up, the
-- MMA warps run the dense steps where a K tile has none) at split 2 in a
-- cluster: one wave at two CTAs an SM. The cp.async warpgroup-MMA twin
-- pays ~220 ns a K tile even at rho 0.01 (warp 0 looks up the residual
-- before the barrier every warp waits at), the decode and multistage
-- twins their residual's registers and room. H200, GEMM alone, rho 0.01,
-- against the dense layer's table kernel (bench/results/
-- 2026-11-28-session42, c2 tok):
--   M = 16: 4096x4096 10.08 against the decode twin's 12.64 us (dense
--   10.46), 4096x11008 19.17 / 22.75 (17.25), 8192x8192 18.46 against the
--   wgmma twin's 24.99 (20.35);
--   M = 32: 4096x4096 11.20 / 13.82 (10.02), 4096x11008 20.03 against the
--   multistage twin's 21.18 (17.73), 8192x8192 19.87 / 25.15 (18.18);
--   M = 8, past 4096 rows: 8192x8192 19.14 against the multistage twin's
--   22.27 (18.05). Up to 4096 rows the decode twin (gemm_decode.lua: two
--   CTAs an SM at two stages) stays ahead at M <= 8: 4096x4096 9.86 against
--   10.40, 4096x11008 17.06 / 19.62.
-- Past 8192 rows (12288x4096 at M = 16: 384 CTAs, two waves at 8 stages)
-- the 16-token tile at 6 stages, three CTAs an SM (rho 0.05, c4 wide: M = 1
-- / 16 against the dense choice's multistage twin, dense in brackets):
-- 12288x4096 16.45 / 15.42 against 18.34 / 20.32 us (15.23 / 15.46),
-- 22016x4096 25.86 / 25.34 against 29.57 / 36.42 (21.82 / 21.47),
-- 10240x8192 22.62 / 22.14 against 27.71 / 30.82 (22.34 / 22.37),
-- 57344x8192 86.72 / 86.37 against 107.49 / 99.04 (93.25 / 78.43). At
-- M = 32 there the dense choice's wgmma twin at 5 stages stayed (12288x4096
-- 18.37 against the 32-token tile's 19.14 at split 1 and 22.08 at split 2;
-- 10240x8192 29.18 against 30.27; 57344x8192 the one loss, 125.5 against
-- 108.5). Those 32-token keys lacked the table's wu8=1; with it (bench/
-- results/2026-11-29-session50, c4: rho 0.05, M = 32, eight layers, four
-- of them not measured before) the 32-token tile at split 1 and 8 stages
-- (a CTA per 64 rows) is ahead of the dense choice's twin on six layers
-- past 8192 rows and level on two: 14336x4096 17.9 against
-- 25.8 us (the twin's 448 CTAs a wave and a bit), 22016x4096 27.3 / 29.8,
-- 28672x4096 31.9 / 38.9, 16384x8192 30.4 / 42.6, 28672x8192 53.6 / 65.7,
-- 57344x8192 89.6 / 112.7; 12288x4096 17.5 / 17.2, 10240x8192 27.9 / 27.7.
-- At split 2 in a cluster: 21.6, 29.8, 36.9, 34.4, 55.1, 97.6; 20.2, 28.7.
-- Each CTA then runs the whole K loop: measured up to K = 8192 (64 K
-- tiles), so `max_kloop`.
-- Past 8192 rows at M = 17..32 the 32-token tile at split 2 and 6 stages
-- runs three CTAs an SM with the residual's blocks in a ring of 32 places
-- (rpieces) where the room would hold two: where its grid is one wave at
-- three (N / 64 tiles at most 1.5 SMs' worth) it beats the split-1 tile
-- (H200, GEMM alone, M = 32, rho 0.05 / 0.1, dense in brackets; bench/
-- results/2026-11-29-session52, c2): 10240x8192 25.4 / 25.9 against 29.6 /
-- 31.1 us (23.1), 11008x4096 17.5 / 17.8 against 18.9 / 19.1 (16.0),
-- 12288x4096 17.7 / 18.1 against 19.1 / 19.3 (16.6). Past one wave it
-- loses: 14336x4096 24.9 against 19.6, 16384x8192 40.2 against 32.8,
-- 28672x4096 35.9 against 32.9. (At M <= 16 the 16-token tile with the
-- same ring at 8 stages lost to the room's 6 by 4-8 % on all eight
-- layers.)
local function sparse_tma(bm, stages, min_n, max_n, split)
  return { sparse = true, min_n = min_n, max_n = max_n, arch = "sm_90a", k_multiple = 128, pipe = "tma",
           tile = bm .. "x64x128", warps = "1x4", stages = stages, split = split or 2, reduce = "cluster",
           producer = "wg", max_kloop = split == 1 and 64 or nil }
end
local SPARSE_32_RING = sparse_tma(32, 6, 8193)
SPARSE_32_RING.rpieces = 32
SPARSE_32_RING.ragged = { bm = 32, bn = 64, lo = 0, hi = 1.5 }
-- The decode pipe's tiles (gemm_decode.lua) at M <= 8 and M <= 16.
local DECODE_8 = { max_n = 4096, tile = "8x16x64", warps = "1x16", stages = 4, split = 1, pipe = "decode" }
local DECODE_16 = { max_n = 4096, tile = "16x32x64", warps = "1x16", stages = 4, split = 1, pipe = "decode" }
local DECODE_16_8W = { max_n = 8192, tile = "16x32x64", warps = "1x8", stages = 4, split = 1, pipe = "decode" }
-- The few-token buckets (M <= 16) past 8192 rows, dense: the 16x64 tile,
-- its split and its pipe by how the grid fills the SMs. H200, GEMM alone
-- and model steps (qjit bench --layers: one graph, each GEMM started under
-- the one before it by the launch trigger), the default scheme at M = 1 /
-- 8 / 16 (bench/results/2026-11-29-session51, c1-c5; T = N / 64 tiles of
-- 64 rows):
--   The TMA tile (8 stages, a producer warpgroup, three CTAs an SM) at
--   split 2 in a cluster where that fills one wave to 80..100 % (T / SMs in
--   1.2..1.5): alone 12288x4096 14.5-15.4 against 15.2-15.3 us, 10240x8192
--   20.9-21.6 against 22.1-22.3, 11008x4096 13.8-14.1 against 14.5-14.7 (the
--   scheme with a per-group rescale: 0.95-1.02); steps of one shape
--   (64 layers) 561 against 613 us, 697 / 644 against 724 / 727 (48), 521
--   against 591. A wave and a bit loses: 14336x4096 (448 CTAs) 18.4-18.9
--   against 16.5, 13824x5120 20.9-21.3 against 18.6, 16384x8192 31.3-33.9
--   against 28.2. (Llama-2-7B's step, where the 12288x4096 kernel is
--   followed by a decode-pipe one, is 0.7 % slower with it: 1159 against
--   1151 us at M = 1.)
--   The same TMA tile where the multistage tile would make more than six
--   CTAs an SM even at split 1 (T / SMs > 6): 57344x8192 73.0-81.5 against
--   93.6-98.9 us at split 1 (the M <= 8 bucket's split) and 78.4 at split 2
--   (M = 9..16); its step (16 layers) 1096 / 973 / 987 against 1294 / 1327 /
--   1092 us at M = 1 / 4 / 16.
--   At M = 9..16 the split of the M <= 8 bucket (the thin tiles' rule, at
--   most 2) instead of a fixed 2: 28672x4096 25.4 against 32.5 us (step
--   1098 against 1541), 28672x8192 41.9 / 57.6, 27648x5120 29.7 / 37.5,
--   37888x3584 32.4 / 37.2. Not more split than that rule at M <= 8 either:
--   22016x4096 at split 2 (688 CTAs) is 0.99 of split 1 alone but 1.12 in
--   its step (980 against 875 us): there the next GEMM starts on the SMs
--   this one leaves, and a split's extra CTAs and partials buy less than
--   they cost (as session 25 found at M = 64). The split-4 grids were no
--   faster alone anywhere.
local FEW_TMA = { min_n = 8193, arch = "sm_90a", k_multiple = 128, pipe = "tma", tile = "16x64x128", warps = "1x4",
                  stages = 8, split = 2, reduce = "cluster", producer = "wg" }
local function few_tma(lo, hi)
  local t = copy(FEW_TMA)
  t.ragged = { bm = 16, bn = 64, lo = lo, hi = hi }
  return t
end
local FEW_WIDE = { min_n = 8193, arch = "sm_90a", tile = "16x64x128", warps = "1x4", stages = 4, split = "auto",
                   max_split = 2 }
-- actq=fused (one launch per forward, the GEMM quantizing its own tokens)
-- is a variant field the table does not use: it measured slower than the
-- activation kernel + GEMM pair (bench/results/2026-11-22-fused-h100).
D.BUCKETS = {
  { max_m = 8,   tile = "16x64x128",  warps = "1x4", stages = 4, split = "auto",
    alts = { DECODE_8, sparse_tma(16, 8, nil, 8192), sparse_tma(16, 6, 8193), few_tma(1.2, 1.5),
             few_tma(6, math.huge) } },
  { max_m = 16,  tile = "16x64x128",  warps = "1x4", stages = 4, split = 2,
    alts = { sparse_tma(16, 8, nil, 8192), sparse_tma(16, 6, 8193), DECODE_16, DECODE_16_8W, few_tma(1.2, 1.5),
             few_tma(6, math.huge), FEW_WIDE } },
  { max_m = 32,  tile = "32x128x128", warps = "1x4", stages = 4, split = "auto",
    alts = { sparse_tma(32, 8, nil, 8192), SPARSE_32_RING, sparse_tma(32, 8, 8193, nil, 1), narrow(32), TMA_32,
             { arch = "sm_90a", k_multiple = 128, max_kloop = 32, pipe = "wgmma", tile = "32x64x128", warps = "1x4",
               stages = 8, split = 2, reduce = "cluster" } } },
  { max_m = 64,  tile = "64x128x128", warps = "1x4", stages = 3, split = "auto",
    alts = { RAGGED_64, narrow(64), wgmma_64("tma", 16), wgmma_64("wgmma"), WIDE_64 } },
  { max_m = 128, tile = "128x128x64", warps = "2x4", stages = 4, split = "auto",
    alts = { narrow(128), wgmma_128("auto", ONE_WAVE_P, true), wgmma_128("auto", ONE_WAVE) } },
  { max_m = 256, tile = "128x128x64", warps = "2x4", stages = 4, split = "auto",
    alts = { ragged_wg(), large_wg(10240), wgmma_128("auto", ONE_WAVE_P, true), wgmma_128("auto", ONE_WAVE) } },
  { max_m = 512, tile = "128x128x64", warps = "2x4", stages = 3, split = 1,
    alts = { ragged_wg(), large_wg(8192), wgmma_128("auto", ONE_WAVE_512, true), wgmma_128(1) } },
  { max_m = 0,   tile = "128x128x64", warps = "2x4", stages = 3, split = 1,      -- 0: any larger M
    alts = { large_wg(), wgmma_128(1) } },
}

-- 8-bit weights (a scheme whose layout says bits = 8) stream twice the
-- bytes per weight and dequantize nothing, so their tiles were measured
-- apart (bench/results/2026-11-23-session9-h100/sweep-8bit: every 8-bit
-- candidate of bench/sweep.sh on the default shapes at M = 1..128). Against the
-- 4-bit table above:
--   M <= 8: the decode pipe wins at every N, not only up to 4096
--   (12288x4096: 26.2 vs 30.3 us; 8192x8192: 33.2 vs 37.9; 57344x8192 even).
--   M <= 16: decode as above up to N = 8192; wider layers take thin
--   multistage tiles at split 2 (12288x4096: 30.5 vs 34.2; 10240x8192:
--   44.5 vs 48.7).
--   M <= 32: 64-row multistage tiles at split 4 up to N = 8192 (8192x8192:
--   39.1 vs 44.0; 4096x11008: 31.8 vs 34.4), one or two splits past it
--   (per_sm 2: 12288x4096 31.8 vs 34.1; 57344x8192 split 1).
--   M <= 64: TMA 64x64 tiles at split 2 (10240x8192: 48.4 vs 58.1;
--   12288x4096: 33.4 vs 38.7; geomean 0.91 over the 4-bit choice), at
--   split 4 with a 6-stage ring up to N = 4096 (4096x11008: 33.2 vs 38.6
--   at split 2; 4096x4096: 19.2 vs 19.0). Since session 35 the split as
--   the 4-bit table's one-wave rule at M = 33..64 (ONE_WAVE_64) takes it,
--   else the most that keeps two CTAs an SM in one wave: qjit tune beside
--   the table (bench/results/2026-11-28-session35, c3) found split 1 on
--   the wide layers (12288x4096 33.3 -> 31.6 us, 22016x4096 51.4 -> 47.5)
--   and 4096x4096 at split 2 in a cluster (one wave, 6 stages; 19.6 ->
--   16.9), which the rule picks; 4096x11008 keeps split 4.
--   M <= 128: the 4-bit choices, but one CTA per SM and a 6-stage ring
--   whenever one wave fills 60 % of the SMs (10240x8192: 50.4 vs 60.9).
--   M = 129..512: the 4-bit table's tiles, but the producer warpgroup's
--   256x128 one from N = 8192 on (large_wg): the 128x128 tile's 4-stage
--   ring of 8-bit weights leaves room for one CTA per SM, not two
--   (bench/results/2026-11-27-session28, c4: at M = 256 57344x8192 357 us
--   and 8192x8192 74 us on it, at M = 512 397 / 61 on large_wg). Past 512
--   tokens the 4-bit table's tiles before the persistent one; then the
--   256x128 tile persistent from N = 16384 on at M = 257..512 and on every
--   layer past (large_wg8).
-- With the producer warpgroup and up to 128 K tiles a CTA from session 33
-- on (ONE_WAVE_P above).
local ONE_WAVE_W8 = { stages = 6, fill = 0.6, max_ktiles = 128, producer = "wg" }
-- M = 65..128 where the 128x128 tiles would make more than one wave but
-- at most two (ragged), the 128x256 tile: one wave, each 8-bit weight tile
-- read once for the bucket's tokens. qjit tune beside the table (H100,
-- bench/results/2026-11-28-session35, c3): 22016x4096 55.3 -> 49.6 us.
local W8_RAGGED_128 = { ragged = { bm = 128, bn = 128, lo = 1.0, hi = 2.0 }, arch = "sm_90a", k_multiple = 128,
                        pipe = "tma", tile = "128x256x128", warps = "1x8", stages = 4, split = 1 }
D.BUCKETS_W8 = {
  { max_m = 8,   tile = "16x64x128",  warps = "1x4", stages = 4, split = "auto",
    alts = { { tile = "8x16x64", warps = "1x16", stages = 4, split = 1, pipe = "decode" } } },
  { max_m = 16,  tile = "16x128x128", warps = "1x4", stages = 4, split = 2,
    alts = { { max_n = 4096, tile = "16x32x64", warps = "1x16", stages = 4, split = 1, pipe = "decode" },
             { max_n = 8192, tile = "16x32x64", warps = "1x8", stages = 4, split = 1, pipe = "decode" } } },
  { max_m = 32,  tile = "32x128x128", warps = "1x4", stages = 4, split = "auto", per_sm = 2,
    alts = { { max_n = 8192, tile = "32x64x128", warps = "1x4", stages = 4, split = 4 } } },
  { max_m = 64,  tile = "64x128x128", warps = "1x4", stages = 3, split = "auto",
    alts = { { max_n = 4096, arch = "sm_90a", k_multiple = 128, pipe = "tma", tile = "64x64x128", warps = "1x4",
               stages = 6, split = "auto", per_sm = 2, one_wave = ONE_WAVE_64, reduce = "cluster" },
             { arch = "sm_90a", k_multiple = 128, pipe = "tma", tile = "64x64x128", warps = "1x4", stages = 4,
               split = "auto", per_sm = 2, one_wave = ONE_WAVE_64 } } },
  { max_m = 128, tile = "128x128x64", warps = "2x4", stages = 4, split = "auto",
    alts = { narrow(128), W8_RAGGED_128, wgmma_128("auto", ONE_WAVE_W8) } },
  { max_m = 256, tile = "128x128x64", warps = "2x4", stages = 4, split = "auto",
    alts = { large_wg8(8192), wgmma_128("auto", ONE_WAVE_P) } },
  { max_m = 512, tile = "128x128x64", warps = "2x4", stages = 3, split = 1,
    alts = { large_wg8(16384, true), large_wg8(8192), wgmma_128(1) } },
  { max_m = 0,   tile = "128x128x64", warps = "2x4", stages = 3, split = 1, alts = { large_wg8(nil, true), wgmma_128(1) } },
}

-- Two activation parts (G.check_parts): two sums per output, K split
-- through the workspace (no cluster reduction), the warpgroup-MMA pipes on
-- sm_90a where the 4-bit table takes them, on its tiles where the second
-- set of sums leaves the registers for them. The 128-token TMA tiles then
-- need ~205 registers per thread (one CTA per SM: a 6-stage ring, as the
-- 4-bit table's one-wave policy); the 64-token ones 114 (two per SM).
-- Past 1024 tokens the 128-token tile keeps one set of sums (stash=1: the
-- INT8 part's stored in the workspace at the part boundary) and two CTAs
-- per SM at 4 stages. Measured on the H200 against two sets (a two-part
-- layer at 10 % INT8; 4096x4096 / 12288x4096 / 4096x11008): M = 4096 186 /
-- 460 / 392 against 198 / 488 / 450 us; M = 1024 60 / 133 / 116 against
-- 54 / 132 / 121; M <= 256 up to 37 % slower (the stash's 128 KB of L2
-- traffic per tile, where the second CTA buys little). Few tokens take the
-- 4-bit table's decode tiles where it does (N <= 4096 at M <= 8, N <= 8192
-- at M <= 16: two small sets of sums there), else its multistage tiles.
local function a2_tma(tile, warps, stages, split, per_sm, max_n, stash)
  return { max_n = max_n, arch = "sm_90a", k_multiple = 128, pipe = "tma", tile = tile, warps = warps,
           stages = stages, split = split, per_sm = per_sm, stash = stash }
end
D.BUCKETS_A2 = {
  { max_m = 8,   tile = "16x64x128",  warps = "1x4", stages = 4, split = "auto", alts = { DECODE_8 } },
  { max_m = 16,  tile = "16x64x128",  warps = "1x4", stages = 4, split = 2, alts = { DECODE_16, DECODE_16_8W } },
  { max_m = 32,  tile = "32x128x128", warps = "1x4", stages = 4, split = "auto",
    alts = { { arch = "sm_90a", k_multiple = 128, max_kloop = 32, pipe = "wgmma", tile = "32x64x128", warps = "1x4",
               stages = 8, split = 2 } } },
  { max_m = 64,  tile = "64x128x128", warps = "1x4", stages = 3, split = "auto",
    alts = { a2_tma("64x64x128", "1x4", 8, "auto", 2, 4096), a2_tma("64x128x128", "1x8", 4, "auto", 2) } },
  { max_m = 128, tile = "128x128x64", warps = "2x4", stages = 4, split = "auto",
    alts = { a2_tma("128x64x128", "1x4", 8, "auto", 1, 4096), a2_tma("128x128x128", "1x8", 6, "auto", 1) } },
  { max_m = 256, tile = "128x128x64", warps = "2x4", stages = 4, split = "auto",
    alts = { a2_tma("128x128x128", "1x8", 6, "auto", 1) } },
  { max_m = 1024, tile = "128x128x64", warps = "2x4", stages = 3, split = 1,
    alts = { a2_tma("128x128x128", "1x8", 6, 1, 1) } },
  { max_m = 0,   tile = "128x128x64", warps = "2x4", stages = 3, split = 1,
    alts = { a2_tma("128x128x128", "1x8", 4, 1, 2, nil, true) } },
}

-- The bucket table for a scheme's weights.
local function buckets(L)
  if L.parts == 2 then return D.BUCKETS_A2 end
  return L.bits == 8 and D.BUCKETS_W8 or D.BUCKETS
end

D.WAVES = 2          -- split-K aims at this many CTAs per SM
D.MIN_KTILES = 4     -- ... while each slice keeps at least this many K tiles
D.MAX_SPLIT = 8

-- The K step of a tile must divide K and agree with the group size.
local function fit_tile(tile, group, K)
  local bm, bn, bk = tile:match("^(%d+)x(%d+)x(%d+)$")
  bk = tonumber(bk)
  if K % bk ~= 0 or (group > 0 and group % bk ~= 0 and bk % group ~= 0) then bk = 64 end
  return tonumber(bm), tonumber(bn), bk
end

-- The split and stages of variant v for a bucket of at most max_m tokens,
-- the CTAs per SM they assume (v.per_sm: CTAs of the variant that run at
-- once on one SM, nil: by tile; one_wave: 1) and the producer the one-wave
-- choice names (nil where it is not taken).
local function choose_split(v, max_m, bm, bn, bk, N, K, sms)
  local want, per_sm = v.split, v.per_sm
  if want ~= "auto" then return want, v.stages, v.per_sm end
  local m = (max_m > 0) and max_m or bm
  local ctas = math.ceil(N / bn) * math.ceil(m / bm)
  local ktiles = K // bk
  -- INT32 partials (split x BM x BN x 4 bytes per tile) must not outweigh
  -- the tile's 4-bit weights (BN x K / 2 bytes): split <= K / (8 BM).
  local cap = math.max(1, K // (8 * bm))
  local function grow(fits)
    local s, most = 1, v.max_split or D.MAX_SPLIT
    while s < most and s * 2 <= cap and fits(s * 2) and ktiles // (s * 2) >= D.MIN_KTILES do s = s * 2 end
    return s
  end
  local ow = v.one_wave
  if ow then
    local s = grow(function(t) return ctas * t <= sms end)
    if ctas * s <= sms and ctas * s >= ow.fill * sms and ktiles // s <= ow.max_ktiles then
      return s, ow.stages or v.stages, 1, ow.producer
    end
  end
  -- fits(s): may the grid take split s? Variants that know how many of
  -- their CTAs share an SM (per_sm) split while every CTA is resident at
  -- once. Thin tiles (many CTAs per SM) split until they reach WAVES waves.
  -- Tall ones (>= 128 tokens: one CTA per SM by registers, 64 KB of
  -- partials) split only while all CTAs still fit one wave: a partial
  -- second wave runs nearly alone (measured: 12288x4096 at M = 128, 44 us
  -- at split 1, 56 us at split 2).
  local function fits(s)
    if per_sm then return ctas * s <= per_sm * sms end
    if bm >= 128 then return ctas * s <= sms end
    return ctas * s < 2 * D.WAVES * sms
  end
  return grow(fits), v.stages, per_sm
end

-- A sparse kernel's stages also hold the tile's residual blocks (as many
-- bytes as its 4-bit weights): where that would cost the dense choice's
-- place on the SMs, take stages away (down to 3) until the sparse twin has
-- it back, so the residual costs ring depth, not occupancy or a wave. With
-- the grid known (ctas: the bucket's CTAs, split included) that place is
-- the dense choice's number of waves (CTAs per SM by shared memory, at
-- most per_sm); without it (the bucket of any M) its CTAs per SM where it
-- counts on two or more. Measured (bench/results/2026-11-23-session15-h100,
-- sweep): the 32x64 tile at split 2 on 12288x4096 at M = 32 runs 384 CTAs,
-- one wave at 3 per SM dense but two at 2 per SM with 8 sparse stages
-- (31.9 us), one again at 5 stages (23.8 us); on 8192x8192 its 256 CTAs
-- fit one wave at 2 per SM and 8 stages stay faster than 5 (31.1 against
-- 35.6). A plan that refuses the residual at this depth (the decode pipe's
-- registers) gets stages taken away until it takes it; a decode twin whose
-- registers would hold fewer CTAs an SM than the dense kernel's (twin_short)
-- the most stages that keep them (8x16x64 on 16 warps: 2, session 42).

-- A key's plan as pcall gives it: true and the plan, or false and the error.
local function plan_of(k, arch)
  return pcall(function() return select(2, V.plan(select(2, V.parse(k, arch)))) end)
end

local function sparse_stages(key, dense_key, per_sm, stages, arch, ctas, sms)
  local ok, dense = plan_of(dense_key, arch)
  if not ok then error(dense, 0) end
  local resident = G.smem_resident(dense)
  if per_sm then resident = math.min(resident, per_sm) end
  local function waves(r) return math.ceil(ctas / (sms * math.max(1, r))) end
  for n = stages, 2, -1 do
    local p
    ok, p = plan_of((key:gsub("stages=%d+", "stages=" .. n)), arch)
    -- Only a refused key means "fewer stages"; anything else (out of
    -- memory) goes on up as it came. A decode twin short of the dense
    -- kernel's CTAs an SM (twin_short) also means "fewer stages".
    if not ok and not (type(p) == "table" and p[1] == "INVALID_KEY") then error(p, 0) end
    if ok and p.twin_short ~= 1 then
      local r = math.min(G.smem_resident(p), resident)
      if n <= 3 then return n end
      if ctas and sms then
        if waves(r) <= waves(resident) then return n end
      elseif not per_sm or per_sm < 2 or r >= per_sm then
        return n
      end
    end
  end
  return stages   -- no depth takes it: the key's own error (or, decode, its ring) tells why
end

-- A producer warpgroup's twin whose residual room would take a stage from
-- a ring of 4 or fewer (the persistent 128x256 tile: 4 -> 3) keeps the
-- dense kernel's stages with the residual's blocks in a ring of their own
-- (rpieces): the most places (64 at most) that keep its CTAs per SM (32
-- there). H200, GEMM alone, 4 layers at M = 256..4096 (bench/results/
-- 2026-11-28-session43, c6): 3 % less time than the room at 3 stages.
-- Not where the room keeps the stages (the 64x64, 128x64 and 128x128
-- tiles): there a ring of one or two K tiles' blocks makes a K tile's copy
-- wait for an earlier tile to be read, and was 2-16 points worse over
-- dense (c3).
local function pieces_ring(sparse, dense_key, arch)
  local ok, dense = plan_of(dense_key, arch)
  if not ok then return nil end
  for _, n in ipairs({ 64, 32, 16, 8 }) do
    local k = sparse .. ";rpieces=" .. n
    local fits, p = plan_of(k, arch)
    if fits and G.smem_resident(p) >= G.smem_resident(dense) then return k end
  end
  return nil
end

-- The INT4 tensor-core MMA (mma=s4, the tokens packed two per byte) where
-- the target has INT4 tensor cores (sm_80/86/89) and the scheme an INT4
-- operand form (4-bit weights, one part of 4-bit tokens), on the
-- multistage pipe: half the tokens' bytes and twice the MMA rate of the
-- INT8 form. sm_90 has no INT4 tensor cores (ptxas widens the operands),
-- and the decode pipe keeps the INT8 form.
local function int4_mma(L, pipe, arch)
  return L.int4_mma and pipe == "multistage" and V.ARCH[arch] and V.ARCH[arch].cc < 90
end

-- An alternative's ragged condition (above); not for the bucket of any M.
local function ragged(r, max_m, N, sms)
  if max_m <= 0 or not sms then return false end
  local waves = math.ceil(max_m / r.bm) * math.ceil(N / r.bn) / sms
  return waves > r.lo and waves <= r.hi
end

-- The bucket's variant for this layer and target: its first alternative
-- whose conditions hold, else its own fields; res: the weights' residual
-- (residual_of) or nil. A scheme whose weights the warpgroup MMA may take
-- unsigned (its layout's unsigned_mma) does so in every wgmma/tma kernel (wu8=1: one
-- instruction less per four weights, the sums starting at the row sums'
-- share; session 34, bench/results/2026-11-28-session34, c2: GEMM
-- alone 1.010 / 1.023 / 1.006 / 1.000 / 1.007 / 1.025 / 1.035x at M = 32 /
-- 64 / 128 / 256 / 512 / 1024 / 4096).
local function gemm_key(scheme, group, b, N, K, arch, sms, res)
  local archn = V.norm_arch(arch)
  local L = SCHEMES.get(scheme).layout(group)
  local v, bm, bn, bk, split, stages, per_sm, ow_producer
  for _, alt in ipairs(b.alts or {}) do
    if (not alt.max_n or N <= alt.max_n) and (not alt.min_n or N >= alt.min_n) and (not alt.arch or alt.arch == archn)
       and (not alt.k_multiple or K % alt.k_multiple == 0) and (not alt.n_multiple or N % alt.n_multiple == 0)
       and (not alt.max_k or K <= alt.max_k) and (not alt.ragged or ragged(alt.ragged, b.max_m, N, sms))
       and (not alt.sparse or res) and (not alt.no_fold or not L.fold) then
      bm, bn, bk = fit_tile(alt.tile, group, K)
      split, stages, per_sm, ow_producer = choose_split(alt, b.max_m, bm, bn, bk, N, K, sms)
      local kloop = (K // bk) // split
      if (not alt.min_kloop or kloop >= alt.min_kloop) and (not alt.max_kloop or kloop <= alt.max_kloop) then
        v = alt
        break
      end
    end
  end
  if not v then
    v = b
    bm, bn, bk = fit_tile(v.tile, group, K)
    split, stages, per_sm, ow_producer = choose_split(v, b.max_m, bm, bn, bk, N, K, sms)
  end
  local producer = v.producer or ow_producer
  local reduce = (v.reduce and split == 2) and (";reduce=" .. v.reduce) or ""
  local pipe = v.pipe or "multistage"
  local key = string.format("kernel=gemm;scheme=%s;g=%d;tile=%dx%dx%d;warps=%s;stages=%d;split=%d;pipe=%s;arch=%s%s%s%s%s",
                            scheme, group, bm, bn, bk, v.warps, stages, split, pipe, arch, reduce,
                            v.stash and ";stash=1" or "", int4_mma(L, pipe, archn) and ";mma=s4" or "",
                            producer and ";producer=" .. producer or "")
            .. ((producer and v.persist) and ";persist=1" or "") .. ((producer and v.persist and v.sk) and ";sk=1" or "")
            .. ((L.unsigned_mma and (pipe == "tma" or pipe == "wgmma")) and ";wu8=1" or "")
  if not res then return key end
  -- A kernel the table names for sparse weights only runs as measured.
  if v.sparse then return key .. res.fields .. (v.rpieces and ";rpieces=" .. v.rpieces or "") end
  local ctas = b.max_m > 0 and math.ceil(N / bn) * math.ceil(b.max_m / bm) * split or nil
  local sparse = key .. res.fields
  local room = sparse_stages(sparse, key, per_sm, stages, arch, ctas, sms)
  local ring = room < stages and stages <= 4 and producer == "wg" and pieces_ring(sparse, key, arch)
  if ring then return ring end
  return (sparse:gsub("stages=%d+", "stages=" .. room))
end

-- 512 threads x 8 cached chunks x 8 values: rows up to K = 32768 are read once.
D.QUANT_THREADS = 512

local function refuse(msg) fail("INVALID_ARGUMENT", msg) end

-- Two-part layers (the tokens gathered into the layer's order) at up to
-- ACT_CACHE_M tokens gather from a copy of the row in shared memory
-- (act-quant cache=C, C the smallest of ACT_CACHES that holds K): the
-- order and the row are then fetched at once, one DRAM round trip instead
-- of two, where a few tokens leave the kernel nothing to hide them behind
-- (H100, bench/results/2026-11-26-session20: 4096x4096 at M = 1 13.3 ->
-- 10.8 us; past 256 tokens the copy's registers cost more than it saves).
-- Storing each value at its position instead (reading the token in its own
-- order, no gather) measured slower at every M (session21).
D.ACT_CACHE_M = 256
D.ACT_CACHES = { 8192, 16384, 32768 }

-- A few tokens of a long row leave the activation kernel's one CTA a
-- token computing (an IEEE division a value; H100, K = 28672: 8.7 us a
-- token on one SM against 5.0 at K = 4096, bench/results/2026-11-26-
-- session21): buckets of up to ACT_CTAS_M tokens spread each token over
-- P CTAs (act-quant ctas=P), each finding the row's maxima and quantizing a
-- Pth of its rounds (a round: 8 channels a thread one-part, 32 packed two
-- a byte, 4 positions two-part), P the least of ACT_CTAS_MAX, the row's
-- rounds and ACT_CTAS_PER_SM x SMs / max_m, where that is at least
-- ACT_CTAS_MIN. Measured (H100, every scheme, M = 1 and 16): 4096x11008
-- -0.9 .. -2.1 us, 8192x28672 -1.1 .. -3.8 us; at 64 tokens +0.3 .. +2.3
-- us (the redundant maxima of 256 CTAs hold the SMs the GEMM waits for),
-- and 2 CTAs (K = 4096 two-part, 8192 one-part) within noise.
D.ACT_CTAS_M = 16
D.ACT_CTAS_MIN = 3
D.ACT_CTAS_MAX = 8
D.ACT_CTAS_PER_SM = 2

-- Many tokens of short rows: the fewest threads a row (ACT_NARROW) that
-- still keep it in registers (ACT_KEPT values a thread: 8 chunks of 8),
-- for rows quantized in 16-byte rounds (not gathered), in buckets from
-- ACT_NARROW_M tokens. A CTA a row loads once, reduces, stores and exits:
-- at 512 threads and K = 4096 each thread has one 16-byte load in flight
-- and two CTAs fit an SM, so DRAM latency, not bandwidth, paced it (48 MB
-- in 37.6 us at M = 4096). H100, a one-part layer's forward, 512 -> 128
-- threads at K = 4096: M = 1024 41.8 -> 37.2 us, M = 4096 146.0 -> 126.2
-- (the activation kernel 37.6 -> 18.5); K = 14336 at 256: 386.4 -> 382.0;
-- equal at M = 256; rows that no longer fit (K = 28672 at 256) are read
-- twice and lose 4 % (bench/results/2026-11-27-session30, call 4).
D.ACT_NARROW = { 128, 256 }
D.ACT_KEPT = 64
D.ACT_NARROW_M = 256

-- The activation kernel a scheme's layers use, for GEMMs that take
-- xpack values per byte (2: mma=s4's packed tokens), in the bucket of
-- max_m tokens of a layer of K channels on sms SMs (nil: the kernel of any
-- bucket). Layouts with act_inplace (two parts, one sum, the caller's
-- order) quantize in place (act-quant inplace=1): no gather, so no cache,
-- and rounds of 8 channels a thread as one-part rows (H100, 8 Llama
-- shapes x M = 1..4096: 1.010x the one-part layers' time against the
-- gather's 1.029x, bench/results/2026-11-27-session22).
local function quant_key(L, arch, xpack, K, max_m, sms, dtype)
  local threads, cache, ctas = D.QUANT_THREADS, "", ""
  local bounded = max_m and max_m > 0
  local gather = L.act_bits == "8+4" and not L.act_inplace
  if K and not gather and (not bounded or max_m >= D.ACT_NARROW_M) then
    for _, t in ipairs(D.ACT_NARROW) do
      if K <= t * D.ACT_KEPT then threads = t; break end
    end
  end
  if gather and K and bounded and max_m <= D.ACT_CACHE_M then
    for _, c in ipairs(D.ACT_CACHES) do
      if K <= c then cache = ";cache=" .. c; break end
    end
  end
  if K and bounded and sms and max_m <= D.ACT_CTAS_M and not L.rowsum then
    local per_round = gather and 4 or (xpack == 2 and 32 or 8)
    local rounds = math.ceil(K / per_round / threads)
    local p = math.min(D.ACT_CTAS_MAX, rounds, D.ACT_CTAS_PER_SM * sms // max_m)
    if p >= D.ACT_CTAS_MIN then ctas = ";ctas=" .. p end
  end
  return V.canonicalize("kernel=act-quant;threads=" .. threads .. ";bits=" .. (L.act_bits or 8)
                        .. (L.rowsum and ";rowsum=1" or "") .. (xpack == 2 and ";pack=2" or "")
                        .. (L.act_scales == 1 and ";scales=1" or "") .. (L.act_inplace and ";inplace=1" or "")
                        .. cache .. ctas .. ";dtype=" .. (dtype or "f16"), arch)
end

-- The same key with another epilogue (the INT32-accumulator twin).
local function with_epi(f, epi, arch)
  local parts = {}
  for k, v in pairs(f) do
    if not (k == "bias" and epi == "i32") then parts[#parts + 1] = k .. "=" .. (k == "epi" and epi or v) end
  end
  return V.canonicalize(table.concat(parts, ";"), arch)
end

-- A kernel's launch plan for the runtime: its key, signature, grid and the
-- slots it binds (name, kind, what the slot refers to).
-- A kernel that takes an epoch publishes it in its "flags" workspace
-- section, which the runtime clears when the stream is being captured.
local function kernel_plan(key, slots, grid, cluster)
  local out = { key = key, signature = G.signature(slots), grid = grid, cluster = cluster or 1, slots = {} }
  for i, s in ipairs(slots) do
    out.slots[i] = { name = s.name, kind = s.kind, ref = s.ref or "", optional = s.optional and 1 or 0 }
    if s.kind == "epoch" then out.flags = "flags" end
  end
  return out
end

-- The tensor map a TMA slot names: a packed-weight section as its scheme
-- views it, the tokens (Xq: M rows of K bytes, 128-byte swizzled as the
-- wgmma reads them) or the output (Y: M rows of N 16-bit floats, in boxes
-- of 64 columns as the epilogue stages them), boxed for the variant's tile.
local function tensor_map(slot, p, sections, N, K)
  if slot.ref == "xq" then
    return { name = slot.name, source = "ws", section = "xq", dtype = "u8", cols = K, rows = 0, rows_per_m = 1,
             stride = K, box_cols = p.tile_k, box_rows = p.tile_m, swizzle = 128 }
  end
  if slot.ref == "y" then
    if N % 8 ~= 0 then
      refuse("a persistent kernel stores its output through a tensor map, whose rows must be a multiple of 16 bytes: "
             .. "N = " .. N .. " is not a multiple of 8")
    end
    return { name = slot.name, source = "y", section = "y", dtype = "u16", cols = N, rows = 0, rows_per_m = 1,
             stride = 2 * N, box_cols = 64, box_rows = p.tile_m, swizzle = 128 }
  end
  for _, s in ipairs(sections) do
    if s.name == slot.ref then
      local t = s.tensor
      if not t then fail("TEMPLATE", "section " .. s.name .. " has no tensor-map geometry") end
      local bc, br = t.box(p.tile_n, p.tile_k)
      if bc > 256 or br > 256 then refuse("tile " .. p.tile_n .. "x" .. p.tile_k .. " needs a tensor-map box of "
                                          .. bc .. "x" .. br .. " (at most 256 per side)") end
      return { name = slot.name, source = "w", section = s.name, dtype = t.dtype, cols = t.cols,
               rows = t.rows, rows_per_m = 0, stride = t.stride, box_cols = bc, box_rows = br, swizzle = 0 }
    end
  end
  fail("TEMPLATE", "tensor map " .. slot.name .. " names no section (" .. slot.ref .. ")")
end

-- The budgets a sparse layer's kernels are made for: the weights' share of
-- kept blocks rounded up to one of these, so layers of one budget share
-- their kernels. A budget b keeps ceil(b x blocks) blocks, a hair over b:
-- that count is still b's.
D.BUDGETS = { 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1 }

-- The residual of weights with `blocks` kept blocks of rbn x rbk (nil for
-- dense weights): its key fields and its sections -- the three the packed
-- buffer stores after the scheme's (runtime/residual.h), then the index
-- the layer derives from them for the kernels (lib/residual.cu).
local function residual_of(N, K, rbn, rbk, blocks)
  if not rbn or rbn == 0 then return nil end
  if math.type(rbn) ~= "integer" or math.type(rbk) ~= "integer" or math.type(blocks) ~= "integer"
     or N % rbn ~= 0 or K % rbk ~= 0 or blocks < 0 or blocks > (N // rbn) * (K // rbk) then
    fail("INVALID_ARGUMENT", "plan: residual of " .. tostring(blocks) .. " blocks of " .. tostring(rbn) .. "x"
         .. tostring(rbk) .. " does not fit N=" .. N .. " K=" .. K)
  end
  local total, budget = (N // rbn) * (K // rbk), D.BUDGETS[#D.BUDGETS]
  for _, b in ipairs(D.BUDGETS) do
    if blocks <= math.ceil(b * total - 1e-9) then budget = b; break end
  end
  budget = V.norm_budget(string.format("%.6f", budget))
  return {
    fields = ";sparsity=" .. budget .. ";rblock=" .. rbn .. "x" .. rbk,
    budget = budget, rblock = rbn .. "x" .. rbk,
    sections = { { name = "rptr", bytes = (N // rbn + 1) * 4 }, { name = "ridx", bytes = blocks * 4 },
                 { name = "rweight", bytes = blocks * rbn * rbk // 2 },
                 { name = "rmask", bytes = (N // rbn) * ((K // rbk + 31) // 32) * 8, derived = 1 } },
  }
end

-- One bucket's records: the GEMM of canonical key `key` (checked against
-- the layer), its INT32 twin, the activation kernel (unless the GEMM
-- quantizes its own tokens), the workspace and the tensor maps.
local function bucket_plan(key, max_m, S, group, N, K, arch, sms, sections, res, dtype, bias)
  local canon, f = V.parse(key, arch)
  if f.kernel ~= "gemm" then refuse("variant " .. canon .. " is not a GEMM (kernel=gemm)") end
  if (f.bias and 1 or 0) ~= bias then
    refuse("variant " .. canon .. (bias == 1 and " adds no bias; the layer has one (bias=1)"
                                   or " adds a bias; the layer has none"))
  end
  if (f.dtype or "f16") ~= dtype then
    refuse("variant " .. canon .. " takes " .. (f.dtype or "f16") .. " tokens and outputs; the layer's are " .. dtype)
  end
  if f.scheme ~= S.name then
    refuse("variant " .. canon .. " is for scheme " .. f.scheme .. "; the weights are " .. S.name)
  end
  if tonumber(f.g) ~= group then
    refuse("variant " .. canon .. " must be a GEMM with g=" .. group .. ", the group of the weights")
  end
  if res and f.rblock ~= res.rblock then
    refuse("variant " .. canon .. " must be a sparse GEMM with rblock=" .. res.rblock .. ", the residual blocks of "
           .. "the weights")
  elseif not res and f.sparsity then
    refuse("variant " .. canon .. " is a sparse GEMM; the weights carry no residual")
  end
  local _, p, L, slots = V.plan(f)
  if K % p.k_step ~= 0 or N % p.n_unit ~= 0 then
    refuse(string.format("variant %s needs K %% %d == 0 and N %% %d == 0; the layer is N=%d K=%d", canon, p.k_step,
                         p.n_unit, N, K))
  end
  local acc_key = with_epi(f, "i32", arch)
  local acc_f = select(2, V.parse(acc_key, arch))
  local _, _, _, acc_slots = V.plan(acc_f)
  local grid = G.grid(p, N, sms)
  local b = {
    max_m = max_m, tile_m = p.tile_m, token_pack = p.xpack or 1,
    gemm = kernel_plan(canon, slots, grid, p.cluster), gemm_acc = kernel_plan(acc_key, acc_slots, grid, p.cluster),
    workspace = G.workspace(p, L, N, K, sms), maps = {},
  }
  if p.fused ~= 1 then
    local q = quant_key(L, arch, p.xpack, K, max_m, sms, dtype)
    local qf = select(2, V.parse(q, arch))
    local _, qp, _, qslots = V.plan(qf)
    for _, s in ipairs(qslots) do
      -- The activation kernel zeroes split-K counters only where the GEMM has them.
      if s.kind == "ws" and s.ref == "counters" or s.kind == "count" then s.optional = true end
    end
    b.quant = kernel_plan(q, qslots, { { per_m = 1 }, { base = 1 }, { base = qp.ctas } })
  end
  for _, s in ipairs(slots) do
    if s.kind == "map" then b.maps[#b.maps + 1] = tensor_map(s, p, sections, N, K) end
  end
  return b
end

-- A layer as D.plan and D.candidates take it: the SMs (132 if not given),
-- dtype ("f16" if not given; else "bf16"), bias (0 or 1), the scheme, the
-- packed sections, the sparse residual (residual_of; its sections follow,
-- and every bucket's GEMM is the sparse kernel of its budget class and
-- blocks) and the key tail of dtype and bias.
local function layer_of(scheme, group, N, K, sms, dtype, bias, rbn, rbk, rblocks)
  if not sms or sms <= 0 then sms = 132 end
  dtype = (dtype == nil or dtype == "") and "f16" or dtype
  if dtype ~= "f16" and dtype ~= "bf16" then refuse("plan: dtype " .. tostring(dtype) .. " is not f16 or bf16") end
  bias = (bias == 1) and 1 or 0
  local S = SCHEMES.get(SCHEMES.normalize(scheme))
  local why = S.check_group(group)
  if why then refuse(why) end
  return sms, dtype, bias, S, S.sections(N, K, group), residual_of(N, K, rbn, rbk, rblocks),
         ";dtype=" .. dtype .. (bias == 1 and ";bias=1" or "")
end

-- Picked buckets (D.plan's picks): lines "MAX_M KEY", at most
-- MAX_BUCKETS, MAX_M increasing, the last 0.
D.MAX_BUCKETS = 8    -- codegen/plan.h QJIT__PLAN_BUCKETS
local function parse_picks(text)
  local out = {}
  for line in text:gmatch("[^\n]+") do
    local m, key = line:match("^%s*(%d+)%s+(%S+)%s*$")
    if not m then refuse("plan: picked bucket '" .. line .. "' is not 'MAX_M KEY'") end
    m = math.tointeger(tonumber(m))
    local prev = out[#out]
    if prev and (prev.max_m == 0 or m ~= 0 and m <= prev.max_m) then
      refuse("plan: picked buckets must have increasing MAX_M and end with 0 (any larger M); got "
             .. prev.max_m .. " then " .. m)
    end
    out[#out + 1] = { max_m = m, key = key }
  end
  if #out == 0 or #out > D.MAX_BUCKETS then
    refuse("plan: " .. #out .. " picked buckets; 1 to " .. D.MAX_BUCKETS .. " may be given")
  end
  if out[#out].max_m ~= 0 then refuse("plan: the last picked bucket must have MAX_M 0 (any larger M)") end
  return out
end

-- The layer's plan, for the runtime (runtime/linear.c reads it field by
-- field): the packed sections the weights must hold, and per M bucket (the
-- first whose max_m >= M; 0 = unbounded) its kernels, workspace and tensor
-- maps. sms: the device's multiprocessor count (132 on an H100 SXM if not
-- given). variant: a GEMM key every bucket uses instead (missing fields take
-- their defaults), for tuning and benchmarks; "" for none. dtype: the
-- tokens' and outputs' floats, "f16" (nil too) or "bf16" (key field dtype).
-- bias: 1 if the layer has a bias (its GEMMs take key field bias=1).
-- picks: the buckets chosen by measurement instead of the table (a tuning
-- record), one line per bucket, "MAX_M KEY", MAX_M increasing and the last
-- 0 (any larger M); each key a GEMM variant for this layer. "" for none.
function D.plan(scheme, group, N, K, arch, sms, variant, rbn, rbk, rblocks, dtype, bias, picks)
  if math.type(group) ~= "integer" or math.type(N) ~= "integer" or math.type(K) ~= "integer" then
    fail("INVALID_ARGUMENT", "plan: group, N and K must be integers")
  end
  local S, sections, res, tail
  sms, dtype, bias, S, sections, res, tail = layer_of(scheme, group, N, K, sms, dtype, bias, rbn, rbk, rblocks)
  local out = { sections = {}, buckets = {} }
  for i, s in ipairs(sections) do out.sections[i] = { name = s.name, bytes = s.bytes } end
  for _, s in ipairs(res and res.sections or {}) do out.sections[#out.sections + 1] = s end
  local forced
  if variant and variant ~= "" then
    -- A forced variant takes the layer's scheme, group and residual unless it names its own.
    local raw = V.raw(variant)
    forced = V.canonicalize((raw.scheme and "" or "scheme=" .. S.name .. ";") .. (raw.g and "" or "g=" .. group .. ";")
                            .. (raw.dtype and "" or "dtype=" .. dtype .. ";")
                            .. ((bias == 1 and not raw.bias) and "bias=1;" or "")
                            .. ((res and not raw.sparsity) and "sparsity=" .. res.budget .. ";" or "")
                            .. ((res and not raw.rblock) and "rblock=" .. res.rblock .. ";" or "") .. variant, arch)
  end
  if picks and picks ~= "" then
    if forced then refuse("plan: a forced variant and picked buckets are exclusive") end
    for i, pk in ipairs(parse_picks(picks)) do
      out.buckets[i] = bucket_plan(V.canonicalize(pk.key, arch), pk.max_m, S, group, N, K, arch, sms, sections, res,
                                   dtype, bias)
    end
    return out
  end
  for i, b in ipairs(buckets(S.layout(group))) do
    local key = forced or V.canonicalize(gemm_key(S.name, group, b, N, K, arch, sms, res) .. tail, arch)
    out.buckets[i] = bucket_plan(key, b.max_m, S, group, N, K, arch, sms, sections, res, dtype, bias)
  end
  return out
end

-- The GEMM keys of a layer's buckets (for tests and listings).
function D.plan_keys(scheme, group, N, K, arch, sms)
  local S = SCHEMES.get(SCHEMES.normalize(scheme))
  local keys = {}
  for i, b in ipairs(buckets(S.layout(group))) do keys[i] = V.canonicalize(gemm_key(S.name, group, b, N, K, arch, sms or 132), arch) end
  return table.concat(keys, "\n")
end

-- Tuning candidates (issue 18: what `qjit tune` times) for the bucket of at
-- most max_m tokens (0: any larger M) of a layer, one canonical GEMM key per
-- line: the table's choice first; then every variant the layer's table
-- names in any bucket (defaults and alts, their table conditions dropped)
-- whose token tile suits the bucket (from a quarter of its tokens, at least
-- 8, up to twice them), fitted as the table fits its own (split "auto"
-- chosen for this bucket), and each at half and twice that split; then
-- the tiles the table does not use (EXPLORE) that suit the bucket; then
-- every split-K candidate so far with the other reduction; then every
-- warpgroup-pipe and few-token-pipe candidate so far with a ring two
-- stages shallower and deeper; only keys that plan for this layer (the pipes' own limits
-- decide), no duplicates, at most MAX_CANDIDATES.
D.MAX_CANDIDATES = 64

-- Tiles beyond the table's for the TMA pipe (sm_90a), tried by tuning only:
-- wider and taller CTAs of two consumer warpgroups for many tokens (a
-- 128x128 CTA reads each weight tile once per 128 tokens; these halve that
-- or the token tiles' reads). Four consumer warpgroups of 64x128 do not fit
-- the registers.
local EXPLORE = {
  { tile = "128x256x128", warps = "1x8", stages = 4, split = 1, pipe = "tma", arch = "sm_90a" },
  { tile = "256x128x128", warps = "2x4", stages = 4, split = 1, pipe = "tma", arch = "sm_90a" },
  -- With a producer warpgroup (the table's past 512 tokens: large_wg).
  { tile = "128x256x128", warps = "1x8", stages = 5, split = 1, pipe = "tma", arch = "sm_90a", producer = "wg" },
  { tile = "256x128x128", warps = "2x4", stages = 4, split = 1, pipe = "tma", arch = "sm_90a", producer = "wg" },
  { tile = "128x128x128", warps = "1x8", stages = 6, split = 1, pipe = "tma", arch = "sm_90a", producer = "wg" },
  -- Persistent (the table's past 512 tokens for 4-bit weights: large_wg).
  { tile = "256x128x128", warps = "2x4", stages = 3, split = 1, pipe = "tma", arch = "sm_90a", producer = "wg",
    persist = true },
  { tile = "128x128x128", warps = "1x8", stages = 6, split = 1, pipe = "tma", arch = "sm_90a", producer = "wg",
    persist = true },
  { tile = "128x128x128", warps = "2x4", stages = 6, split = 1, pipe = "tma", arch = "sm_90a" },
  { tile = "64x256x128",  warps = "1x8", stages = 4, split = "auto", pipe = "tma", arch = "sm_90a" },
  -- 256 tokens a warpgroup (the MMA's N = 256): each weight dequantized
  -- once for all of them. Slower than the table's tiles on most layers, but
  -- 1.06-1.17x on long-K ones at 129..256 tokens (8192x22016, 8192x28672 at
  -- split 2; bench/results/2026-11-28-session36, c1-c2).
  { tile = "256x128x128", warps = "1x8", stages = 4, split = "auto", pipe = "tma", arch = "sm_90a", producer = "wg" },
  -- The few-token pipe (any arch): other slabs of weight rows per CTA and
  -- other counts of warps splitting K.
  { tile = "8x32x64",  warps = "1x16", stages = 4, split = 1, pipe = "decode" },
  { tile = "8x16x64",  warps = "1x8",  stages = 4, split = 1, pipe = "decode" },
  { tile = "8x32x64",  warps = "1x8",  stages = 4, split = 1, pipe = "decode" },
  { tile = "16x16x64", warps = "1x16", stages = 4, split = 1, pipe = "decode" },
  { tile = "16x64x64", warps = "1x16", stages = 4, split = 1, pipe = "decode" },
}
-- (Numbers may come as text: the arguments of qjit__lua_call.)
function D.candidates(scheme, group, N, K, arch, sms, max_m, dtype, bias, rbn, rbk, rblocks)
  local function int(v) return v and math.tointeger(tonumber(v)) end
  group, N, K, sms, max_m, bias = int(group), int(N), int(K), int(sms), int(max_m), int(bias)
  rbn, rbk, rblocks = int(rbn), int(rbk), int(rblocks)
  if not (group and N and K and max_m) then refuse("candidates: group, N, K and max_m must be integers") end
  local S, sections, res, tail
  sms, dtype, bias, S, sections, res, tail = layer_of(scheme, group, N, K, sms, dtype, bias, rbn, rbk, rblocks)
  local L = S.layout(group)
  local archn = V.norm_arch(arch)
  local table_ = buckets(L)
  local own
  for _, b in ipairs(table_) do
    if own == nil and (b.max_m == 0 or (max_m > 0 and max_m <= b.max_m)) then own = b end
  end
  local tokens = max_m > 0 and max_m or 4096
  local out, seen = {}, {}
  -- key: a key of the table's form (without the layer's tail), or with
  -- `canonical` one of `out` varied (the tail in it already).
  local function try(key, canonical)
    if #out >= D.MAX_CANDIDATES then return end
    local ok, canon = pcall(V.canonicalize, canonical and key or key .. tail, arch)
    if not ok or seen[canon] then return end
    seen[canon] = true
    if pcall(bucket_plan, canon, max_m, S, group, N, K, arch, sms, sections, res, dtype, bias) then
      out[#out + 1] = canon
    end
  end
  local function with_split(key, split)
    key = key:gsub("split=%d+", "split=" .. split)
    return split == 2 and key or key:gsub(";reduce=cluster", "")
  end
  try(gemm_key(S.name, group, own, N, K, arch, sms, res))
  local lo, hi = math.max(8, math.min(tokens, 512) // 4), math.max(16, 2 * tokens)
  local families = {}
  for _, b in ipairs(table_) do
    families[#families + 1] = b
    for _, a in ipairs(b.alts or {}) do families[#families + 1] = a end
  end
  for _, e in ipairs(EXPLORE) do families[#families + 1] = e end
  for _, v in ipairs(families) do
    local bm = tonumber(v.tile:match("^(%d+)x"))
    if (not v.arch or v.arch == archn) and (not v.k_multiple or K % v.k_multiple == 0) and (not v.sparse or res)
       and (not v.no_fold or not L.fold)
       and bm >= lo and bm <= hi then
      local fam = { max_m = max_m, tile = v.tile, warps = v.warps, stages = v.stages, split = v.split,
                    per_sm = v.per_sm, one_wave = v.one_wave, pipe = v.pipe, reduce = v.reduce, stash = v.stash,
                    producer = v.producer, persist = v.persist }
      local ok, key = pcall(gemm_key, S.name, group, fam, N, K, arch, sms, res)
      if ok then
        try(key)
        local split = tonumber(key:match("split=(%d+)"))
        if split > 1 then try(with_split(key, split // 2)) end
        if split < D.MAX_SPLIT then try(with_split(key, split * 2)) end
      end
    end
  end
  -- A producer warpgroup's twin of every TMA candidate a CTA a tile fills
  -- itself (thread 0 refilling between its warpgroup's MMAs).
  for i = 1, #out do
    local key = out[i]
    if key:find("pipe=tma", 1, true) and not key:find("producer=", 1, true) then try(key .. ";producer=wg", true) end
  end
  -- The other reduction of every split-K candidate so far: the slices
  -- meeting in the cluster's shared memory or through the workspace
  -- (4096x4096 M = 64 at split 2, 3584x18944 M = 128 at split 4: 1.05 and
  -- 1.11x over the table's, bench/results/2026-11-27-session27).
  -- (Where clusters are refused, the plan drops the twin.)
  for i = 1, #out do
    local key = out[i]
    if not key:find("split=1;", 1, true) then
      try(key:find("reduce=cluster", 1, true) and key:gsub("reduce=cluster", "reduce=global")
          or (key:gsub("reduce=global", "reduce=cluster")), true)
    end
  end
  local so_far = #out
  for i = 1, so_far do
    local key = out[i]
    local ring = key:find("pipe=tma", 1, true) or key:find("pipe=wgmma", 1, true)
    if ring or key:find("pipe=decode", 1, true) then
      local stages = tonumber(key:match("stages=(%d+)"))
      for _, d in ipairs({ -2, 2 }) do
        if stages + d >= (ring and 3 or 2) then try((key:gsub("stages=%d+", "stages=" .. (stages + d))), true) end
      end
    end
  end
  return table.concat(out, "\n")
end

-- The Llama-2-7B and 70B linear layers (N x K) the default set covers.
D.SHAPES = { {12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008},
             {10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672} }

-- The groups the default set covers per scheme.
local DEFAULT_GROUPS = { 0, 64, 128 }

-- The default variant set: what `qjit compile --defaults` and `qjit demo`
-- without a GPU pre-compile, one canonical key per line: every bucket's
-- variant of the Llama shapes, for every scheme with each group it takes of
-- per channel, 64 and 128, on a 132-SM part (H100 SXM), and the activation
-- kernels they use; for layers of dtype "f16" (nil too) or their "bf16"
-- twins.
function D.defaults(arch, dtype)
  local keys, seen = {}, {}
  local tail = (dtype and dtype ~= "" and dtype ~= "f16") and (";dtype=" .. dtype) or ""
  local function add(k)
    k = tail ~= "" and V.canonicalize(k .. tail, arch) or k
    if not seen[k] then seen[k] = true; keys[#keys + 1] = k end
  end
  for _, name in ipairs(SCHEMES.NAMES) do
    local S = SCHEMES.get(name)
    for _, group in ipairs(DEFAULT_GROUPS) do
      if not S.check_group(group) then
        local L = S.layout(group)
        add(quant_key(L, arch))
        if int4_mma(L, "multistage", V.norm_arch(arch)) then add(quant_key(L, arch, 2)) end
        for _, shape in ipairs(D.SHAPES) do
          for _, b in ipairs(buckets(L)) do
            local key = V.canonicalize(gemm_key(name, group, b, shape[1], shape[2], arch, 132), arch)
            add(key)
            add(quant_key(L, arch, key:find("mma=s4", 1, true) and 2 or 1, shape[2], b.max_m, 132))
          end
        end
      end
    end
  end
  return table.concat(keys, "\n")
end

return D
