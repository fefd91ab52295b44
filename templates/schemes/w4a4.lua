-- schemes/w4a4.lua -- W4A4 (COMET, MosaicQuant): per-channel symmetric INT4
-- weights and per-token symmetric INT4 activations; Y = sx * sw * acc. On
-- sm_90 both are widened to INT8 for the INT8 MMAs (the weights in
-- registers, the activations stored one value per byte by the activation
-- kernel); on sm_80/86/89 the multistage pipe runs the INT4 MMA (mma=s4,
-- the activations two per byte). Arithmetic: docs/schemes.md; host side:
-- runtime/scheme_w4a4.c.
local C = import("schemes/common.lua")
local S = {}

S.name = "w4a4"
S.id = 5                      -- QJIT_SCHEME_W4A4
S.default_group = 0

function S.check_group(g)
  if g ~= 0 then return "scheme w4a4 has per-channel weights only (g=0), not g=" .. g end
  return nil
end

function S.layout(g)
  return {
    bits = 4,                 -- 16-row x 64-k blocks of 512 bytes, values Q4 + 8
    act_bits = 4,             -- the activation kernel quantizes to INT4 (values -7..7)
    int4_mma = true,          -- dequant_s4: the INT4 MMA's operand (mma=s4, sm_80/86/89)
    gparams = false, fold = false, rowsum = false,
    device = "schemes/w4a4.cu",
    params = C.params{ "qweight", "scale" },
  }
end

function S.sections(N, K, g)
  return { C.qweight(N, K, 4), C.per_channel("scale", N) }
end

return S
