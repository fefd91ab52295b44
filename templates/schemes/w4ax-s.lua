-- schemes/w4ax-s.lua -- W4Ax with one shared scale per token: w4ax's
-- weights, channel order (perm) and INT8 blocks, but the token's two parts
-- share one scale, max(max8 / 127, max4 / 7) -- the INT8 part at the INT4
-- part's step unless its outliers pass 127 steps -- so the kernels keep one
-- INT32 sum, Y = sx sw acc: w4a4's GEMMs (its device code, every pipe)
-- over the layer's order, after the two-part activation kernel
-- (act-quant bits=8+4;scales=1). On sm_90 every part is an INT8 operand
-- anyway; on sm_80/86/89 both run the INT8 MMA (no mma=s4: the INT8 part's
-- values need a byte each). Arithmetic: docs/schemes.md; host side:
-- runtime/scheme_w4ax.c.
local C = import("schemes/common.lua")
local W4AX = import("schemes/w4ax.lua")
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
    act_scales = 1,           -- ... with one scale per token (scales=1)
    gparams = false, fold = false, rowsum = false,
    device = "schemes/w4a4.cu",
    params = C.params{ "qweight", "scale" },
  }
end

S.sections = W4AX.sections

return S
