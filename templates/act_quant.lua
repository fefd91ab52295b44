-- act_quant.lua -- launch plan of act_quant.cu (one CTA per token row).
local P = {}
function P.check(f, arch)
  local threads = tonumber(f.threads)
  if threads % 32 ~= 0 then fail("INVALID_KEY", "threads=" .. threads .. " must be a multiple of 32") end
  return { name = "qjit_act_quant_a" .. f.bits, threads = threads, smem = 0, k_step = 8, n_unit = 1,
           tile_m = 1, tile_n = 0, tile_k = 0, group = 0, epi = "i8",
           pdl = (arch.cc >= 90) and 1 or 0 }
end
return P
