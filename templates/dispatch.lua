-- dispatch.lua -- which variant runs at which M (policy; the runtime only
-- follows the table it returns). A layer gets one GEMM variant per M bucket
-- (the first bucket whose max_m >= M) and one activation-quantization kernel.
local V = import("variants.lua")
local D = {}

-- Buckets: small M streams weights with thin token tiles (tokens are the
-- MMA's n side, so M = 1..16 wastes no weight traffic); large M uses
-- square-ish tiles to reuse each dequantized weight across many tokens.
-- A bucket may list `alts`: variants used instead, the first whose
-- conditions hold (max_n: N at most this; arch: only for this target;
-- k_multiple: K a multiple of this).
-- Measured on the H100:
--   decode pipe (bench/results/2026-11-22-decode-h100): weights streamed into
--   registers win on narrow layers -- M <= 8 at N <= 4096 (4096x4096: 11.9
--   vs 14.1 us), M = 9..16 at N <= 8192 (8192x8192: 25.2 vs 28.8 us) --
--   while wider layers stream better through the split-K multistage tiles.
--   wgmma pipe (bench/results/2026-11-22-wgmma-h100): warpgroup MMA with
--   register-A weights wins from M = 65 on (57344x8192 at M = 128: 160 vs
--   289 us; 8192x28672 at M = 256: 150 vs 261 us), and at M = 33..64 on
--   layers up to N = 8192 (8192x28672: 72 vs 92 us; 4096x4096: 18.5 vs 21).
local WGMMA_64 = { arch = "sm_90a", max_n = 8192, k_multiple = 128, pipe = "wgmma", tile = "64x128x128", warps = "1x8",
                   stages = 4, split = "auto", per_sm = 2 }
local function wgmma_128(split)
  return { arch = "sm_90a", k_multiple = 128, pipe = "wgmma", tile = "128x128x128", warps = "1x8", stages = 4, split = split,
           per_sm = 2 }
end
D.BUCKETS = {
  { max_m = 8,   tile = "16x64x128",  warps = "1x4", stages = 4, split = "auto",
    alts = { { max_n = 4096, tile = "8x16x64", warps = "1x16", stages = 4, split = 1, pipe = "decode" } } },
  { max_m = 16,  tile = "32x128x128", warps = "1x4", stages = 4, split = "auto",
    alts = { { max_n = 8192, tile = "16x32x64", warps = "1x8", stages = 4, split = 1, pipe = "decode" } } },
  { max_m = 32,  tile = "32x128x128", warps = "1x4", stages = 4, split = "auto" },
  { max_m = 64,  tile = "64x128x128", warps = "1x4", stages = 3, split = "auto", alts = { WGMMA_64 } },
  { max_m = 128, tile = "128x128x64", warps = "2x4", stages = 4, split = "auto", alts = { wgmma_128("auto") } },
  { max_m = 256, tile = "128x128x64", warps = "2x4", stages = 4, split = "auto", alts = { wgmma_128("auto") } },
  { max_m = 0,   tile = "128x128x64", warps = "2x4", stages = 3, split = 1,      -- 0: any larger M
    alts = { wgmma_128(1) } },
}

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

-- per_sm: CTAs of the variant that run at once on one SM (nil: by tile).
local function choose_split(want, max_m, bm, bn, bk, N, K, sms, per_sm)
  if want ~= "auto" then return want end
  local m = (max_m > 0) and max_m or bm
  local ctas = math.ceil(N / bn) * math.ceil(m / bm)
  local split, ktiles = 1, K // bk
  -- INT32 partials (split x BM x BN x 4 bytes per tile) must not outweigh
  -- the tile's 4-bit weights (BN x K / 2 bytes): split <= K / (8 BM).
  local cap = math.max(1, K // (8 * bm))
  -- Thin tiles (many CTAs per SM) split until they reach WAVES waves. Tall
  -- ones (>= 128 tokens: one CTA per SM by registers, 64 KB of partials)
  -- split only while all CTAs still fit one wave: a partial second wave
  -- runs nearly alone (measured: 12288x4096 at M = 128, 44 us at split 1,
  -- 56 us at split 2).
  local function room(s)
    if per_sm then return ctas * s <= per_sm * sms end
    if bm >= 128 then return ctas * s * 2 <= sms end
    return ctas * s < D.WAVES * sms
  end
  while split < D.MAX_SPLIT and split * 2 <= cap and room(split)
        and ktiles // (split * 2) >= D.MIN_KTILES do
    split = split * 2
  end
  return split
end

-- The bucket's variant for this layer and target: its first alternative
-- whose conditions hold, else its own fields.
local function pick(b, N, K, arch)
  for _, alt in ipairs(b.alts or {}) do
    if (not alt.max_n or N <= alt.max_n) and (not alt.arch or alt.arch == arch)
       and (not alt.k_multiple or K % alt.k_multiple == 0) then
      return alt
    end
  end
  return b
end

local function gemm_key(scheme, group, b, N, K, arch, sms)
  local v = pick(b, N, K, V.norm_arch(arch))
  local bm, bn, bk = fit_tile(v.tile, group, K)
  return string.format("kernel=gemm;scheme=%s;g=%d;tile=%dx%dx%d;warps=%s;stages=%d;split=%d;pipe=%s;arch=%s",
                       scheme, group, bm, bn, bk, v.warps, v.stages,
                       choose_split(v.split, b.max_m, bm, bn, bk, N, K, sms, v.per_sm), v.pipe or "multistage", arch)
end

-- 512 threads x 4 cached chunks x 8 values: rows up to K = 16384 are read once.
D.QUANT = "kernel=act-quant;bits=8;threads=512"

-- Returns the layer's table: quant (key), nbuckets, and per bucket i
-- b<i>_max (0 = unbounded) and b<i>_key (canonical). sms: the device's
-- multiprocessor count (132 on an H100 SXM if not given).
function D.plan(scheme, group, N, K, arch, sms)
  group, N, K, sms = tonumber(group), tonumber(N), tonumber(K), tonumber(sms) or 132
  if sms <= 0 then sms = 132 end
  local out = { quant = V.canonicalize(D.QUANT, arch), nbuckets = #D.BUCKETS }
  for i, b in ipairs(D.BUCKETS) do
    out["b" .. i .. "_max"] = b.max_m
    out["b" .. i .. "_key"] = V.canonicalize(gemm_key(scheme, group, b, N, K, arch, sms), arch)
  end
  return out
end

-- The Llama-2-7B and 70B linear layers (N x K) the default set covers.
D.SHAPES = { {12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008},
             {10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672} }

-- The default variant set: what `qjit compile --defaults` and `qjit demo`
-- without a GPU pre-compile, one canonical key per line: every bucket's
-- variant of the Llama shapes, per channel and with groups of 64 and 128, on
-- a 132-SM part (H100 SXM).
function D.defaults(arch)
  local keys, seen = {}, {}
  local function add(k) if not seen[k] then seen[k] = true; keys[#keys + 1] = k end end
  add(V.canonicalize(D.QUANT, arch))
  for _, group in ipairs({ 0, 64, 128 }) do
    for _, shape in ipairs(D.SHAPES) do
      local plan = D.plan("w4a8-lqq", group, shape[1], shape[2], arch, 132)
      for i = 1, plan.nbuckets do add(plan["b" .. i .. "_key"]) end
    end
  end
  return table.concat(keys, "\n")
end

return D
