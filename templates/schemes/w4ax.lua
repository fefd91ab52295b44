-- schemes/w4ax.lua -- W4Ax (COMET): w4a4's per-channel symmetric INT4
-- weights over the input channels in the layer's order (perm: the caller's
-- channel at each position, the INT8 blocks first), activations in two
-- parts: the layer's first k8 channels INT8, the rest INT4, each with its
-- own per-token scale; two INT32 sums, Y = fmaf(acc8, sx8 sw, acc4 (sx4 sw)).
-- On sm_90 both parts are INT8 operands (the INT4 values one per byte); on
-- sm_80/86/89 the multistage pipe runs the INT4 part on the INT4 MMA
-- (mma=s4, its values two per byte).
-- Arithmetic: docs/schemes.md; host side: runtime/scheme_w4ax.c.
local C = import("schemes/common.lua")
local S = {}

S.name = "w4ax"
S.id = 6                      -- QJIT_SCHEME_W4AX
S.default_group = 0

function S.check_group(g)
  if g ~= 0 then return "scheme w4ax has per-channel weights only (g=0), not g=" .. g end
  return nil
end

function S.layout(g)
  return {
    bits = 4,                 -- 16-row x 64-k blocks of 512 bytes, values Q4 + 8
    act_bits = "8+4",         -- the activation kernel of two-part layers (act-quant bits=8+4)
    parts = 2,                -- two scales per token, two INT32 sums per output
    int4_mma = true,          -- dequant_s4: the INT4 part on the INT4 MMA (mma=s4, sm_80/86/89)
    gparams = false, fold = false, rowsum = false,
    device = "schemes/w4ax.cu",
    params = C.params{ "qweight", "scale" },
  }
end

function S.sections(N, K, g)
  -- The layer's channel order: K u32, the layer's own (not slabs of rows).
  return { C.qweight(N, K, 4), C.per_channel("scale", N), { name = "perm", bytes = K * 4 } }
end

return S
