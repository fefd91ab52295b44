-- schemes/w4a8-qoq.lua -- W4A8 QoQ (QServe). With groups: progressive two
-- levels (per-channel INT8 with the protective range, then UINT4 with a zero
-- point per group), dequantized by subtraction after multiplication on four
-- byte lanes of a 32-bit register. Per channel (g=0): UINT4 with a zero point
-- per channel, which the epilogue subtracts through the tokens' row sums.
-- Arithmetic: docs/schemes.md; host side: runtime/scheme_qoq.c.
local C = import("schemes/common.lua")
local S = {}

S.name = "w4a8-qoq"
S.id = 2                      -- QJIT_SCHEME_W4A8_QOQ
S.default_group = 128

function S.check_group(g) return C.check_group_64(S.name, g, true) end

function S.layout(g)
  local per_channel = g == 0
  return {
    bits = 4,
    gparams = not per_channel,    -- {s1, z s1} per row pair and group
    fold = false,
    rowsum = per_channel,         -- the epilogue subtracts zw * sum_k Xq
    residual = not per_channel,   -- a sparse residual in the INT8 domain of level 1 (groups only)
    device = "schemes/w4a8-qoq.cu",
    params = C.params(per_channel and { "qweight", "scale", "zero" } or { "qweight", "gparams", "scale" }),
  }
end

-- Every layer has the four sections; the one its group does not use is empty.
function S.sections(N, K, g)
  local gp = C.gparams(N, K, g > 0 and g or K)
  local zero = C.per_channel("zero", N)
  if g == 0 then gp.bytes = 0 else zero.bytes = 0 end
  return { C.qweight(N, K, 4), gp, C.per_channel("scale", N), zero }
end

return S
