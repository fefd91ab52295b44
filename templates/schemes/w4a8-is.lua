-- schemes/w4a8-is.lua -- W4A8 Integer Scale: symmetric INT4 groups whose
-- scales are integers (amplified by the layer's alpha); the pipelines keep
-- each group's INT32 sum apart and add it times the integer scale (fold),
-- so no group sum is converted to float. The epilogue divides by alpha
-- (the per-channel scale, 2^-e). Arithmetic: docs/schemes.md; host side:
-- runtime/scheme_is.c.
local C = import("schemes/common.lua")
local S = {}

S.name = "w4a8-is"
S.id = 3                      -- QJIT_SCHEME_W4A8_IS
S.default_group = 128

function S.check_group(g) return C.check_group_64(S.name, g, false) end

function S.layout(g)
  return {
    bits = 4,
    gparams = true,           -- the integer scale S of row g and row g+8 (16 bits each) per group
    fold = true,              -- acc += (the group's INT32 sum) * S, per group
    rowsum = false,
    device = "schemes/w4a8-is.cu",
    params = C.params{ "qweight", "gparams", "scale" },
  }
end

function S.sections(N, K, g)
  return { C.qweight(N, K, 4), C.gparams(N, K, g), C.per_channel("scale", N) }
end

return S
