-- schemes/w8a8.lua -- W8A8: per-channel symmetric INT8 weights, the MMA
-- operand as stored (no dequantization in the main loop); the epilogue is
-- Y = sx * sw * acc. Arithmetic: docs/schemes.md; host side:
-- runtime/scheme_w8a8.c.
local C = import("schemes/common.lua")
local S = {}

S.name = "w8a8"
S.id = 4                      -- QJIT_SCHEME_W8A8
S.default_group = 0

function S.check_group(g)
  if g ~= 0 then return "scheme w8a8 has per-channel weights only (g=0), not g=" .. g end
  return nil
end

function S.layout(g)
  return {
    bits = 8,                 -- 16-row x 64-k blocks of 1024 bytes
    gparams = false, fold = false, rowsum = false,
    -- The MMA's A registers are the loaded words themselves: a warpgroup-MMA
    -- pipe waits for the previous step's MMAs before loading the next step.
    a_is_loaded = true,
    device = "schemes/w8a8.cu",
    params = C.params{ "qweight", "scale" },
  }
end

function S.sections(N, K, g)
  return { C.qweight(N, K, 8), C.per_channel("scale", N) }
end

return S
