//% -- lib/wgmma_start.cu -- the start of one output tile in a warpgroup-MMA
//% -- kernel (at n_cta, m_cta): zeroed accumulators and, per channel, the
//% -- group parameters read once. Rendered in the kernel's head, or per tile
//% -- by a persistent kernel.
    int acc[MI][NT / 2];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NT / 2; ++j)
            acc[i][j] = 0;
//% if p.parts == 2 and p.stash == 0 then
    /* Two activation parts: acc sums the INT8 part, acc4 the INT4 part
     * (lib/kt_loop.cu). */
    int acc4[MI][NT / 2];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NT / 2; ++j)
            acc4[i][j] = 0;
//% end
//% -- Pinned where ptxas otherwise serialized every wgmma (C7515: the
//% -- cp.async pipe without per-tile group parameters, or with a residual);
//% -- elsewhere the kernels do not serialize and a pin would only move
//% -- registers.
//% -- Two activation parts: the second set is pinned on every pipe (its
//% -- zeroing is otherwise sunk into the second loop, while the first
//% -- set's MMAs are in flight: C7515).
//% if p.tma == 0 and (p.gparams_tiled == 0 or p.sparse == 1) then
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NT / 2; ++j)
            reg_pin(acc[i][j]);
//% end
//% if p.parts == 2 and p.stash == 0 then
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NT / 2; ++j)
            reg_pin(acc4[i][j]);
//% end
//% if p.fold2 == 1 then
    /* Two sets of group sums taken in turn (the wgmmas' accumulators), each
     * added to acc times its group's integer scales while the next group's
     * MMAs run. */
    int part[2][MI][NT / 2];
    wparams prs[2][MI];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NT / 2; ++j)
            part[0][i][j] = part[1][i][j] = 0;
//% elseif p.fold == 1 then
    /* The current group's sums (the wgmmas' accumulators), added to acc times
     * the group's integer scales at its end (or the slice's). */
    int part[MI][NT / 2];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NT / 2; ++j)
            part[i][j] = 0;
//% end

//% if p.gparams_channel == 1 and p.excp ~= 1 then
    /* Per-channel: one group per row, its parameters read once (excp: by
     * the dequantization warpgroup, gemm_tma.cu). */
    wparams params[MI];
    channel_params(params, gparams, n_cta, nbl0, N, lane);
//% end
