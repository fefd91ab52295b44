-- act_quant.lua -- launch plan of act_quant.cu (one CTA per token row, or ctas of them).
local P = {}

-- The kernel's parameter slots (lib/gemm.lua's slot kinds).
function P.slots(p)
  local rowsum = p.rowsum == 1
  local s = { { name = "X", ctype = "const uint4 *__restrict__", kind = "x" } }
  -- Two parts: the layer's channel order (K u32, a packed section), or in
  -- place (inplace=1) the INT8 channels' set (K bits, a packed section).
  if p.inplace == 1 then
    s[#s + 1] = { name = "a8set", ctype = "const unsigned char *__restrict__", kind = "w", ref = "a8set" }
  elseif p.parts == 2 then
    s[#s + 1] = { name = "perm", ctype = "const uint4 *__restrict__", kind = "w", ref = "perm" }
  end
  s[#s + 1] = { name = "Xq", ctype = "signed char *__restrict__", kind = "ws", ref = "xq" }
  s[#s + 1] = { name = "sx", ctype = "float *__restrict__", kind = "ws", ref = "sx" }
  if rowsum then s[#s + 1] = { name = "rowsum", ctype = "int *__restrict__", kind = "ws", ref = "rowsum" } end
  s[#s + 1] = { name = "M", ctype = "int", kind = "m" }
  s[#s + 1] = { name = "K", ctype = "int", kind = "k" }
  -- ... and its INT8 channels (the layer's parameter, in channels).
  if p.parts == 2 and p.inplace ~= 1 then s[#s + 1] = { name = "k8", ctype = "int", kind = "param" } end
  s[#s + 1] = { name = "counters", ctype = "unsigned *__restrict__", kind = "ws", ref = "counters" }
  s[#s + 1] = { name = "ncounters", ctype = "int", kind = "count", ref = "counters" }
  return s
end

function P.check(f, arch)
  local threads = tonumber(f.threads)
  if threads % 32 ~= 0 then fail("INVALID_KEY", "threads=" .. threads .. " must be a multiple of 32") end
  local rowsum = f.rowsum == "1"
  local parts = f.bits == "8+4" and 2 or 1
  if parts == 2 and rowsum then fail("INVALID_KEY", "rowsum=1 is for one-part activations, not bits=8+4") end
  local pack = tonumber(f.pack or "1")
  if pack == 2 and f.bits == "8" then
    fail("INVALID_KEY", "pack=2 (two values per byte) is for bits=4 or 8+4 (its INT4 part), not bits=" .. f.bits)
  end
  local scales = tonumber(f.scales or "2")
  if scales == 1 and parts ~= 2 then
    fail("INVALID_KEY", "scales=1 (one scale per token for two parts) is for bits=8+4, not bits=" .. f.bits)
  end
  if scales == 1 and pack == 2 then
    fail("INVALID_KEY", "scales=1 keeps one value per byte (pack=1): its GEMMs run the INT8 MMA on both parts")
  end
  -- cache=C (bits=8+4): rows of at most C channels gathered from a copy in
  -- shared memory (2C bytes), C a multiple of 4 x threads.
  local cache = tonumber(f.cache or "0")
  if cache > 0 and parts ~= 2 then
    fail("INVALID_KEY", "cache=" .. cache .. " (a shared-memory copy of the row to gather from) is for bits=8+4")
  end
  if cache % (4 * threads) ~= 0 then
    fail("INVALID_KEY", "cache=" .. cache .. " must be a multiple of 4 x threads = " .. 4 * threads)
  end
  -- ctas=P: P CTAs per token, each finding the maxima over the whole row
  -- and quantizing every Pth round of positions (no sums to add up).
  local ctas = tonumber(f.ctas or "1")
  if ctas > 1 and rowsum then
    fail("INVALID_KEY", "ctas=" .. ctas .. " (a token over several CTAs) is for rows without sums, not rowsum=1")
  end
  -- inplace=1 (bits=8+4, scales=1): each value quantized at its own
  -- channel (the caller's order, no gather), its part read from the INT8
  -- channels' set; for GEMMs whose one sum does not depend on the order.
  local inplace = tonumber(f.inplace or "0")
  if inplace == 1 and (parts ~= 2 or scales ~= 1 or cache > 0) then
    fail("INVALID_KEY", "inplace=1 (values kept at their channels) is for bits=8+4 with scales=1 and no cache")
  end
  if scales == 1 and inplace ~= 1 then
    fail("INVALID_KEY", "scales=1 (one scale for two parts, one sum) quantizes in place: name inplace=1")
  end
  return { name = "qjit_act_quant_a" .. (parts == 2 and "8a4" or f.bits) .. (scales == 1 and "s" or "")
                  .. (inplace == 1 and "_inplace" or "")
                  .. (pack == 2 and "x2" or "") .. (cache > 0 and "_cached" or "") .. (ctas > 1 and "_ctas" .. ctas or "")
                  .. (rowsum and "_rowsum" or ""), threads = threads, smem = 2 * cache, cache = cache, ctas = ctas,
           inplace = inplace,
           parts = parts, pack = pack, scales = parts == 2 and scales or 1,
           k_step = 8, n_unit = 1, tile_m = 1, tile_n = 0, tile_k = 0, group = 0, epi = "i8",
           rowsum = rowsum and 1 or 0,
           -- It lets the GEMM after it start early (griddepcontrol.launch_dependents);
           -- it is itself launched in stream order (pdl = 0): it reads the
           -- tokens the kernel before it wrote.
           trigger = (arch.cc >= 90) and 1 or 0, pdl = 0 }
end

return P
