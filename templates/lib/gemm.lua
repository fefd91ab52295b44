-- lib/gemm.lua -- what the GEMM pipelines share: their fields as numbers,
-- and the kernel parameter list the runtime launches every GEMM with
-- (runtime/linear.c passes exactly these arguments, in this order).
local G = {}

-- tile=BMxBNxBK, warps=WMxWN, stages, g, split of a canonical key, as numbers.
function G.dims(f)
  local bm, bn, bk = f.tile:match("^(%d+)x(%d+)x(%d+)$")
  local wm, wn = f.warps:match("^(%d+)x(%d+)$")
  return { bm = tonumber(bm), bn = tonumber(bn), bk = tonumber(bk), wm = tonumber(wm), wn = tonumber(wn),
           stages = tonumber(f.stages), g = tonumber(f.g), split = tonumber(f.split) }
end

-- The parameters of every GEMM kernel; Y is INT32 for epi=i32, else FP16.
function G.params(p)
  return table.concat({
    "const uint4 *__restrict__ qweight, const u32 *__restrict__ gparams, const float *__restrict__ s0,",
    "    const signed char *__restrict__ Xq, const float *__restrict__ sx,",
    "    " .. ((p.epi == "i32") and "int" or "u16") .. " *__restrict__ Y,",
    "    int M, int N, int K, int *__restrict__ partials, unsigned *__restrict__ counters",
  }, "\n")
end

return G
