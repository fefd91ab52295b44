-- act_quant.lua -- launch plan of act_quant.cu (one CTA per token row).
local P = {}

-- The kernel's parameter slots (lib/gemm.lua's slot kinds).
function P.slots(p)
  local rowsum = p.rowsum == 1
  local s = {
    { name = "X", ctype = "const uint4 *__restrict__", kind = "x" },
    { name = "Xq", ctype = "signed char *__restrict__", kind = "ws", ref = "xq" },
    { name = "sx", ctype = "float *__restrict__", kind = "ws", ref = "sx" },
  }
  if rowsum then s[#s + 1] = { name = "rowsum", ctype = "int *__restrict__", kind = "ws", ref = "rowsum" } end
  s[#s + 1] = { name = "M", ctype = "int", kind = "m" }
  s[#s + 1] = { name = "K", ctype = "int", kind = "k" }
  s[#s + 1] = { name = "counters", ctype = "unsigned *__restrict__", kind = "ws", ref = "counters" }
  s[#s + 1] = { name = "ncounters", ctype = "int", kind = "count", ref = "counters" }
  return s
end

function P.check(f, arch)
  local threads = tonumber(f.threads)
  if threads % 32 ~= 0 then fail("INVALID_KEY", "threads=" .. threads .. " must be a multiple of 32") end
  local rowsum = f.rowsum == "1"
  return { name = "qjit_act_quant_a" .. f.bits .. (rowsum and "_rowsum" or ""), threads = threads, smem = 0,
           k_step = 8, n_unit = 1, tile_m = 1, tile_n = 0, tile_k = 0, group = 0, epi = "i8",
           rowsum = rowsum and 1 or 0,
           -- It lets the GEMM after it start early (griddepcontrol.launch_dependents);
           -- it is itself launched in stream order (pdl = 0): it reads the
           -- tokens the kernel before it wrote.
           trigger = (arch.cc >= 90) and 1 or 0, pdl = 0 }
end

return P
