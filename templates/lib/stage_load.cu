/* lib/stage_load.cu -- cp.async of one K tile into a stage of the ring, for
 * every shared-memory-ring pipeline. The including template defines BM, BN,
 * BK, THREADS, GROUP, NG, W_STAGE, X_STAGE, W_VECS (the scheme's 16-byte
 * vectors per lane per 16 x 64 block), x_swizzle(), and where a stage keeps
 * its packed weights, activation tile and group parameters (W_OFF, X_OFF,
 * GP_OFF, in bytes).
 *
 * load_stage<LOAD_W, LOAD_X>(stage, kt, tid, STAGE_PTRS, ...) loads the packed weights and
 * group parameters (LOAD_W) and the activation tile (LOAD_X) -- apart, so
 * weights can be fetched before the activations exist; refill_slot() is the
 * main loop's request of a whole tile (STAGES, STAGE_BYTES: the ring). */
//% local k8 = ((p.xpack or 1) == 2 and p.parts == 2)   -- where a K tile's token bytes depend on the part
//% local ptrs = "qweight, " .. (p.gparams_tiled == 1 and "gparams, " or "") .. (p.sparse == 1 and "rweight, rcur, " or "") .. "Xq" .. (k8 and ", k8" or "")
#define STAGE_PTRS {{ ptrs }}   /* what load_stage reads */
//% local params = "const uint4 *__restrict__ qweight, " .. (p.gparams_tiled == 1 and "const u32 *__restrict__ gparams, " or "")
//%   .. (p.sparse == 1 and "const uint4 *__restrict__ rweight, residual_cursor &rcur, " or "")
//%   .. "const signed char *__restrict__ Xq" .. (k8 and ", int k8" or "")
template <bool LOAD_W, bool LOAD_X>
static __device__ __forceinline__ void load_stage(u32 stage, int kt, int tid, {{ params }},
    int n_cta, int m_cta, int M, int N, int K)
{
    const int kblocks = K / 64;
    if (LOAD_W) {
    /* Packed weights: per 16-row block, the stage's BK/64 blocks (32 x W_VECS
     * chunks of 16 bytes each) are contiguous in global memory and land
     * contiguous in shared memory. */
#pragma unroll
    for (int i = 0; i < (W_STAGE / 16 + THREADS - 1) / THREADS; ++i) {
        const int c = tid + i * THREADS;
        if (W_STAGE % (16 * THREADS) == 0 || c < W_STAGE / 16) {
            const int nbl = c / (BK / 2 * W_VECS), off = c % (BK / 2 * W_VECS);
            const int nb = n_cta / 16 + nbl;
            const bool ok = nb * 16 < N;
            const uint4 *src = qweight + ((size_t)(ok ? nb : 0) * kblocks + (size_t)kt * (BK / 64)) * (32 * W_VECS) + off;
            cp_async16(stage + W_OFF + c * 16, src, ok);
        }
    }
//% if p.gparams_tiled == 1 then
    /* Group parameters: NG entries of 32 bytes per 16-row block. */
    const int groups_per_row = K / GROUP, g0 = kt * BK / GROUP;
#pragma unroll
    for (int i = 0; i < ((BN / 16) * NG * 2 + THREADS - 1) / THREADS; ++i) {
        const int c = tid + i * THREADS;
        if (c < (BN / 16) * NG * 2) {
            const int nbl = c / (NG * 2), off = c % (NG * 2);
            const int nb = n_cta / 16 + nbl;
            const bool ok = nb * 16 < N;
            const u32 *src = gparams + ((size_t)(ok ? nb : 0) * groups_per_row + g0) * 8 + off * 4;
            cp_async16(stage + GP_OFF + c * 16, src, ok);
        }
    }
//% end
//% if p.sparse == 1 then
    /* The tile's residual: lane l of warp 0 looks up 16 x 64 block l (16-row
     * block l / (BK / 64), 64-k step l % (BK / 64)); the warp copies each
     * present one (512 bytes, 16 a lane) to R_OFF + 512 l and notes it in
     * the stage's presence word. */
    if (tid < 32) {
        const uint4 *src = residual_tile_lookup(rcur, rweight, kt, tid, BK / 64);
        const u32 present = __ballot_sync(0xFFFFFFFFu, src != nullptr);
        for (u32 left = present; left; left &= left - 1u) {
            const int l = __ffs(left) - 1;
            const uint4 *blk = (const uint4 *)__shfl_sync(0xFFFFFFFFu, (unsigned long long)src, l);
            cp_async16(stage + R_OFF + l * 512 + tid * 16, blk + tid, true);
        }
        if (tid == 0)
            sts32(stage + RB_OFF, present);
    }
//% end
    }
    if (!LOAD_X)
        return;
//% if (p.xpack or 1) == 2 and p.parts == 2 then
    /* Activations, the INT4 part packed two per byte: token rows of
     * k8 + (K - k8) / 2 bytes; a K tile of the INT8 part is BM rows of BK
     * bytes in the stage, one of the INT4 part BM rows of BK / 2
     * (x_swizzle4); rows past M are zero-filled. */
    const bool packed = kt * BK >= k8;
    const int xr = packed ? BK / 2 : BK;
    const size_t row_bytes = (size_t)k8 + (K - k8) / 2;
    const size_t col = packed ? (size_t)k8 + ((size_t)kt * BK - k8) / 2 : (size_t)kt * BK;
#pragma unroll
    for (int i = 0; i < (X_STAGE / 16 + THREADS - 1) / THREADS; ++i) {
        const int c = tid + i * THREADS;
        if (c < (packed ? X_STAGE / 32 : X_STAGE / 16)) {
            const int row = c / (xr / 16), chunk = c % (xr / 16);
            const int m = m_cta + row;
            const bool ok = m < M;
            const signed char *src = Xq + (size_t)(ok ? m : 0) * row_bytes + col + chunk * 16;
            cp_async16(stage + X_OFF + row * xr + (packed ? x_swizzle4(row, chunk) : x_swizzle(row, chunk)) * 16, src,
                       ok);
        }
    }
//% else
//% -- Bytes of a token row in the tile and in Xq, and the tile's swizzle:
//% -- BK and K, or half of them where the tokens are packed two per byte
//% -- (mma=s4).
//% local xr, xk, swz = "BK", "K", "x_swizzle"
//% if (p.xpack or 1) == 2 then xr, xk, swz = "(BK / 2)", "(K / 2)", "x_swizzle4" end
    /* Activations: BM rows of {{ xr }} bytes; rows past M are zero-filled. */
#pragma unroll
    for (int i = 0; i < (X_STAGE / 16 + THREADS - 1) / THREADS; ++i) {
        const int c = tid + i * THREADS;
        if (X_STAGE % (16 * THREADS) == 0 || c < X_STAGE / 16) {
            const int row = c / ({{ xr }} / 16), chunk = c % ({{ xr }} / 16);
            const int m = m_cta + row;
            const bool ok = m < M;
            const signed char *src = Xq + (size_t)(ok ? m : 0) * {{ xk }} + (size_t)kt * {{ xr }} + chunk * 16;
            cp_async16(stage + X_OFF + row * {{ xr }} + {{ swz }}(row, chunk) * 16, src, ok);
        }
    }
//% end
}

/* Requests K tile `next` of the slice into its slot of the ring, if the
 * slice has it, and commits the copies as one group (an empty one past the
 * end, so the ring's wait counts stay in step). */
static __device__ __forceinline__ void refill_slot(u32 smem_base, int next, int ktiles, int kt_begin, int tid,
                                                   {{ params }}, int n_cta, int m_cta, int M, int N, int K)
{
    if (next < ktiles)
        load_stage<true, true>(smem_base + (next % STAGES) * STAGE_BYTES, kt_begin + next, tid, STAGE_PTRS, n_cta,
                               m_cta, M, N, K);
    cp_async_commit();
}
