-- schemes/common.lua -- the packed sections the schemes share, with their
-- sizes and how the TMA sees them (a 2D tensor: elements of `dtype`,
-- `cols` per row, `rows` rows `stride` bytes apart; `box(bn, bk)` the box
-- one CTA tile of bn weight rows x bk k needs).
--
-- Weights come in blocks of 16 rows x 64 k (runtime/layout.h): 512 bytes
-- for 4-bit weights (the dual-MMA packed layout), 1024 for 8-bit ones.
-- Group parameters: one 32-byte entry per (16-row block, group), lane L of
-- a warp reading word L / 4 (rows L / 4 and L / 4 + 8).
local C = {}

-- The C type each section has as a kernel parameter.
local CTYPES = {
  qweight = "const uint4 *__restrict__", gparams = "const u32 *__restrict__",
  scale = "const float *__restrict__", zero = "const int *__restrict__",
}

-- The kernel parameters of the named sections, in order: name and C type.
function C.params(names)
  local out = {}
  for i, name in ipairs(names) do out[i] = { name = name, ctype = CTYPES[name] } end
  return out
end

-- The packed weights: N/16 rows of K/64 blocks.
function C.qweight(N, K, bits)
  local block = 512 * bits // 4
  return {
    name = "qweight", bytes = N * K * bits // 8,
    tensor = { dtype = "u64", cols = (K // 64) * block // 8, rows = N // 16, stride = (K // 64) * block,
               box = function(bn, bk) return bk // 64 * block // 8, bn // 16 end },
  }
end

-- Group parameters: N/16 rows of K/G entries of 8 words.
function C.gparams(N, K, G)
  return {
    name = "gparams", bytes = (N // 16) * (K // G) * 32,
    tensor = { dtype = "u32", cols = (K // G) * 8, rows = N // 16, stride = (K // G) * 32,
               box = function(bn, bk) return math.max(1, bk // G) * 8, bn // 16 end },
  }
end

-- One value per output channel (4 bytes each).
function C.per_channel(name, N)
  return { name = name, bytes = N * 4 }
end

-- Groups of a two-level or grouped scheme: 0 (per channel) or a multiple of
-- the 64-wide packing block.
function C.check_group_64(scheme, g, per_channel)
  if g == 0 then
    if not per_channel then
      return "scheme " .. scheme .. " needs groups along K (g=64, 128, 256, ...), not per-channel weights"
    end
    return nil
  end
  if g % 64 ~= 0 then
    return "g=" .. g .. ": group must be " .. (per_channel and "per-channel or " or "") ..
           "a multiple of 64 (the packing unit along K)"
  end
  return nil
end

return C
