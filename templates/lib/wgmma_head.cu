//% -- lib/wgmma_head.cu -- the start of a warpgroup-MMA kernel: the ring's
//% -- 1024-byte-aligned base (the swizzle is a function of the address), the
//% -- thread's place, the CTA's slice of K, zeroed accumulators and, per
//% -- channel, the group parameters read once.
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    /* The swizzle is a function of the address: align the ring to 1024. */
    const u32 raw_base = smem_addr(smem_raw);
    const u32 smem_base = (raw_base + 1023u) & ~1023u;
    unsigned char *smem = smem_raw + (smem_base - raw_base);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wg = warp >> 2, wq = warp & 3;        /* warpgroup, warp within it */
    const int wg_n = wg % WG_N, wg_m = wg / WG_N;
    const int n_cta = blockIdx.x * BN, m_cta = blockIdx.y * BM;
    /* This CTA's slice of the K tiles. */
//% if p.kslice == 1 then
    /* Slices balanced by work, the residual's blocks included (the layer's kslice). */
    const int kt_begin = kslice[blockIdx.x * (SPLIT + 1) + blockIdx.z];
    const int kt_end = kslice[blockIdx.x * (SPLIT + 1) + blockIdx.z + 1];
//% else
    const int kt_begin = (int)((long long)(K / BK) * blockIdx.z / SPLIT);
    const int kt_end = (int)((long long)(K / BK) * (blockIdx.z + 1) / SPLIT);
//% end
    const int ktiles = kt_end - kt_begin;
    /* This warp's first 16-row block (of the CTA's), one per 64-row wgmma block. */
    const int nbl0 = wg_n * (BN / WG_N / 16) + wq;

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
//% if p.sparse == 1 then
    /* The lanes of one warp look up the residual of each K tile
     * (lib/residual.cu): warp 0's (cp.async ring; tid is past the tile's
     * blocks elsewhere) or the residual's warp's (pipe=tma, gemm_tma.cu;
     * the other warps' lanes start past the blocks: no cursor, no load). */
//% local rl = p.tma == 1 and "warp == R_WARP ? lane : (BN / 16) * (BK / 64)" or "tid"
    residual_cursor rcur = residual_tile_start(rmask, {{ rl }}, BK / 64, (BN / 16) * (BK / 64), n_cta, kt_begin, N, K);
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

//% if p.gparams_channel == 1 then
    /* Per-channel: one group per row, its parameters read once. */
    wparams params[MI];
#pragma unroll
    for (int i = 0; i < MI; ++i) {
        const int nb = n_cta / 16 + nbl0 + i * 4;
        params[i] = wparams_from(nb * 16 < N ? gparams[(size_t)nb * 8 + (lane >> 2)] : 0u);
    }
//% end
