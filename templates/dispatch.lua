-- dispatch.lua -- which variant runs at which M (policy; the runtime only
-- follows the table it returns). A layer gets one GEMM variant per M bucket
-- (the first bucket whose max_m >= M) and one activation-quantization kernel.
local V = import("variants.lua")
local D = {}

-- Buckets: small M streams weights with thin token tiles; large M uses
-- square-ish tiles to reuse each dequantized weight across many tokens.
D.BUCKETS = {
  { max_m = 16,  tile = "16x64x128",  warps = "1x4", stages = 4 },
  { max_m = 64,  tile = "64x128x64",  warps = "2x2", stages = 4 },
  { max_m = 256, tile = "128x128x64", warps = "2x4", stages = 4 },
  { max_m = 0,   tile = "128x128x64", warps = "2x4", stages = 3 },   -- 0: any larger M
}

-- The K step of a tile must divide K and agree with the group size.
local function fit_tile(tile, group, K)
  local bm, bn, bk = tile:match("^(%d+)x(%d+)x(%d+)$")
  bk = tonumber(bk)
  if K % bk ~= 0 or (group > 0 and group % bk ~= 0 and bk % group ~= 0) then bk = 64 end
  return bm .. "x" .. bn .. "x" .. bk
end

local function gemm_key(scheme, group, b, K, arch)
  return string.format("kernel=gemm;scheme=%s;g=%d;tile=%s;warps=%s;stages=%d;pipe=multistage;arch=%s",
                       scheme, group, fit_tile(b.tile, group, K), b.warps, b.stages, arch)
end

-- Returns the layer's table: quant (key), nbuckets, and per bucket i
-- b<i>_max (0 = unbounded) and b<i>_key (canonical).
function D.plan(scheme, group, N, K, arch)
  group, N, K = tonumber(group), tonumber(N), tonumber(K)
  local out = { quant = V.canonicalize("kernel=act-quant;bits=8;threads=256", arch), nbuckets = #D.BUCKETS }
  for i, b in ipairs(D.BUCKETS) do
    out["b" .. i .. "_max"] = b.max_m
    out["b" .. i .. "_key"] = V.canonicalize(gemm_key(scheme, group, b, K, arch), arch)
  end
  return out
end

-- The default variant set: what `qjit compile --defaults` and `qjit demo`
-- without a GPU pre-compile, one canonical key per line.
function D.defaults(arch)
  local keys, seen = {}, {}
  local function add(k) if not seen[k] then seen[k] = true; keys[#keys + 1] = k end end
  add(V.canonicalize("kernel=act-quant;bits=8;threads=256", arch))
  for _, group in ipairs({ 0, 64, 128 }) do
    for _, b in ipairs(D.BUCKETS) do
      add(V.canonicalize(gemm_key("w4a8-lqq", group, b, 4096, arch), arch))
    end
  end
  return table.concat(keys, "\n")
end

return D
