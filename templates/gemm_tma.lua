-- gemm_tma.lua -- the launch plan of gemm_tma.cu: lib/wgmma_plan.lua, shared
-- with the cp.async form of the pipe.
return import("lib/wgmma_plan.lua")
