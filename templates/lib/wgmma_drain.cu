//% -- lib/wgmma_drain.cu -- the end of a warpgroup-MMA main loop: every MMA
//% -- done, and the accumulators fenced so no access moves across them.
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NT / 2; ++j) {
            reg_fence(acc[i][j]);
//% if p.parts == 2 and p.stash == 0 then
            reg_fence(acc4[i][j]);
//% end
        }
