-- schemes/w4a8-lqq.lua -- W4A8 LiquidQuant (LiquidGEMM): per-channel INT8
-- with the protective range (level 1), then per group UINT4 with an
-- unsigned offset (level 2); dequantization is one IMAD and one LOP3 per
-- four weights. Arithmetic: docs/schemes.md; host side: runtime/scheme_lqq.c.
local C = import("schemes/common.lua")
local S = {}

S.name = "w4a8-lqq"
S.id = 1                      -- QJIT_SCHEME_W4A8_LQQ
S.default_group = 128

function S.check_group(g) return C.check_group_64(S.name, g, true) end

-- What the kernels need of a layer with groups of g (0: per channel).
function S.layout(g)
  return {
    bits = 4,                 -- weight bits: 16-row x 64-k blocks of 512 bytes
    gparams = true,           -- one parameter word per row pair and group (per channel when g = 0)
    fold = false,             -- no per-group rescale of the INT32 sums
    rowsum = false,           -- the epilogue needs no token row sums (wu8=1's sums start from them)
    unsigned_mma = true,      -- wu8=1: the MMAs may take U8' = Q8' + 128, the sums start at -128 * sum_k Xq
    residual = true,          -- takes a sparse residual (runtime/residual.h) into the INT32 sums
    device = "schemes/w4a8-lqq.cu",
    params = C.params{ "qweight", "gparams", "scale" },
  }
end

-- The packed sections of an N x K layer, in buffer order.
function S.sections(N, K, g)
  return { C.qweight(N, K, 4), C.gparams(N, K, g > 0 and g or K),
           C.per_channel("scale", N) }
end

return S
