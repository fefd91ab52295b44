-- gemm_wgmma.lua -- the launch plan of gemm_wgmma.cu: lib/wgmma_plan.lua, shared
-- with the TMA form of the pipe.
return import("lib/wgmma_plan.lua")
