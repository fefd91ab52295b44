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
//% if p.gparams_tiled == 1 then
#define STAGE_PTRS qweight, gparams, Xq   /* the pointers load_stage reads */
//% else
#define STAGE_PTRS qweight, Xq
//% end
template <bool LOAD_W, bool LOAD_X>
static __device__ __forceinline__ void load_stage(u32 stage, int kt, int tid, const uint4 *__restrict__ qweight,
//% if p.gparams_tiled == 1 then
    const u32 *__restrict__ gparams,
//% end
    const signed char *__restrict__ Xq, int n_cta, int m_cta, int M, int N, int K)
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
    }
    if (!LOAD_X)
        return;
    /* Activations: BM rows of BK int8; rows past M are zero-filled. */
#pragma unroll
    for (int i = 0; i < (X_STAGE / 16 + THREADS - 1) / THREADS; ++i) {
        const int c = tid + i * THREADS;
        if (X_STAGE % (16 * THREADS) == 0 || c < X_STAGE / 16) {
            const int row = c / (BK / 16), chunk = c % (BK / 16);
            const int m = m_cta + row;
            const bool ok = m < M;
            const signed char *src = Xq + (size_t)(ok ? m : 0) * K + (size_t)kt * BK + chunk * 16;
            cp_async16(stage + X_OFF + row * BK + x_swizzle(row, chunk) * 16, src, ok);
        }
    }
}

/* Requests K tile `next` of the slice into its slot of the ring, if the
 * slice has it, and commits the copies as one group (an empty one past the
 * end, so the ring's wait counts stay in step). */
static __device__ __forceinline__ void refill_slot(u32 smem_base, int next, int ktiles, int kt_begin, int tid,
                                                   const uint4 *__restrict__ qweight,
//% if p.gparams_tiled == 1 then
                                                   const u32 *__restrict__ gparams,
//% end
                                                   const signed char *__restrict__ Xq, int n_cta, int m_cta, int M,
                                                   int N, int K)
{
    if (next < ktiles)
        load_stage<true, true>(smem_base + (next % STAGES) * STAGE_BYTES, kt_begin + next, tid, STAGE_PTRS, n_cta,
                               m_cta, M, N, K);
    cp_async_commit();
}
