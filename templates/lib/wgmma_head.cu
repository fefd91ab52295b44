//% -- lib/wgmma_head.cu -- the start of a warpgroup-MMA kernel: the ring's
//% -- 1024-byte-aligned base (the swizzle is a function of the address), the
//% -- thread's place, the CTA's slice of K and, but in a persistent kernel
//% -- (which walks its tiles itself), the CTA's output tile and its start
//% -- (lib/wgmma_start.cu).
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    /* The swizzle is a function of the address: align the ring to 1024. */
    const u32 raw_base = smem_addr(smem_raw);
    const u32 smem_base = (raw_base + 1023u) & ~1023u;
    unsigned char *smem = smem_raw + (smem_base - raw_base);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wg = warp >> 2, wq = warp & 3;        /* warpgroup, warp within it */
//% if p.pingpong == 1 then
    /* pingpong: each MMA warpgroup (pp) computes whole tiles of its own. */
    const int pp = wg, wg_n = 0, wg_m = 0;
//% else
    const int wg_n = wg % WG_N, wg_m = wg / WG_N;
//% end
//% if p.persist ~= 1 then
    const int n_cta = blockIdx.x * BN, m_cta = blockIdx.y * BM;
//% end
    /* This CTA's slice of the K tiles. */
    const int kt_begin = (int)((long long)(K / BK) * blockIdx.z / SPLIT);
    const int kt_end = (int)((long long)(K / BK) * (blockIdx.z + 1) / SPLIT);
    const int ktiles = kt_end - kt_begin;
    /* This warp's first 16-row block (of the CTA's), one per 64-row wgmma block. */
    const int nbl0 = wg_n * (BN / WG_N / 16) + wq;
//% if p.sparse == 1 and p.rslots == 0 then
    /* Its warpgroup's bits in a tile's residual word (lib/wgmma_tile.cu). */
    const u32 rwg = R_WG_BITS(wg_n);
//% end

//% if p.sparse == 1 and p.producer == 0 then
    /* The lanes of one warp look up the residual of each K tile
     * (lib/residual.cu): warp 0's (cp.async ring; tid is past the tile's
     * blocks elsewhere) or the residual's warp's (pipe=tma, gemm_tma.cu;
     * the other warps' lanes start past the blocks: no cursor, no load).
     * A producer warpgroup's residual warp keeps its own (gemm_tma.cu). */
//% local rl = p.tma == 1 and "warp == R_WARP ? lane : (BN / 16) * (BK / 64)" or "tid"
    residual_cursor rcur = residual_tile_start(rmask, {{ rl }}, BK / 64, (BN / 16) * (BK / 64), n_cta, kt_begin, N, K);
//% end
//% if p.persist ~= 1 then
{{ (render("lib/wgmma_start.cu", { p = p }):gsub("\n$", "")) }}
//% end
