-- schemes/w4ax-s.lua -- W4Ax with one shared scale per token: w4ax's
-- weights and INT8 blocks (its INT8 channels chosen the same way), but the
-- token's two parts share one scale, max(max8 / 127, max4 / 7) -- the INT8
-- part at the INT4 part's step unless its outliers pass 127 steps -- so the
-- kernels keep one INT32 sum, Y = sx sw acc, which does not depend on the
-- channels' order: the weights keep the caller's order, and the activation
-- kernel quantizes each value in place, its part from the INT8 channels'
-- set (act-quant bits=8+4;scales=1;inplace=1: no gather). Then w4a4's GEMMs
-- (its device code, every pipe). On sm_90 every part is an INT8 operand
-- anyway; on sm_80/86/89 both run the INT8 MMA (no mma=s4: the INT8 part's
-- values need a byte each). Arithmetic: docs/schemes.md; host side:
-- runtime/scheme_w4ax.c.
local C = import("schemes/common.lua")
local S = {}

S.name = "w4ax-s"
S.id = 7                      -- QJIT_SCHEME_W4AX_S
S.default_group = 0

function S.check_group(g)
  if g ~= 0 then return "scheme w4ax-s has per-channel weights only (g=0), not g=" .. g end
  return nil
end

function S.layout(g)
  return {
    bits = 4,                 -- 16-row x 64-k blocks of 512 bytes, values Q4 + 8
    act_bits = "8+4",         -- the two-part activation kernel (act-quant bits=8+4) ...
    act_scales = 1,           -- ... with one scale per token (scales=1) ...
    act_inplace = true,       -- ... in the caller's order (inplace=1)
    gparams = false, fold = false, rowsum = false,
    device = "schemes/w4a4.cu",
    params = C.params{ "qweight", "scale" },
  }
end

function S.sections(N, K, g)
  -- The INT8 channels' set: bit k % 8 of byte k / 8, the layer's own.
  return { C.qweight(N, K, 4), C.per_channel("scale", N), { name = "a8set", bytes = K // 8 } }
end

return S
