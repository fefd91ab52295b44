// qjit variant: {{ key }}
//
// W4A8 GEMM, {{ f.scheme }}, warpgroup-MMA pipeline for {{ f.arch }}:
//   Y[m, n] = sx[m] * s0[n] * sum_k Xq[m, k] * W'[n, k]
// Weights are the wgmma's A operand: each warp dequantizes its 16 rows x 64 k
// from shared memory into registers (the m16n8k32 A fragment, which is also
// the wgmma register layout), so dequantized weights never go back to
// shared memory. Tokens are the B operand (N = {{ p.nt }}), read by the tensor
// cores straight from a 128-byte-swizzled shared-memory tile.
// CTA tile: {{ p.tile_m }} tokens x {{ p.tile_n }} weight rows x {{ p.tile_k }} k; {{ p.warps_m }} x {{ p.wg_n }} warpgroups
// (tokens x rows), {{ p.mi }} 64-row block(s) per warpgroup. Ring of {{ p.stages }} stages,
//% if p.tma == 1 then
// filled by the TMA: one thread issues three tensor copies per K tile (tokens,
// packed weights, group parameters) that complete on the slot's "full"
// mbarrier; warps wait on it (no CTA barrier in the main loop) and release
// the slot on its "empty" mbarrier once their MMAs have read it.
//% else
// filled with cp.async by all threads, one CTA barrier per K tile.
//% end
// Split-K {{ p.split }}: blockIdx.z takes a slice of K; {{ p.cluster > 1 and "the tile's CTAs form a cluster and\n// rank 0 adds the others' INT32 accumulators (exact) and runs the epilogue." or "the last CTA of a tile to\n// finish adds the others' INT32 partials (exact) and runs the epilogue." }}
{{ lib.prelude }}
{{ lib.wgmma_s8(p.nt) }}
//% if p.tma == 1 then
{{ lib.tma }}
//% end
{{ lib.dequant[f.scheme] }}
{{ gemm.lib(p, lib) }}
#define BM {{ p.tile_m }}
#define BN {{ p.tile_n }}
#define BK {{ p.tile_k }}
#define WG_M {{ p.warps_m }}            /* warpgroups along the tokens */
#define WG_N {{ p.wg_n }}               /* warpgroups along the weight rows */
#define THREADS {{ p.threads }}
#define STAGES {{ p.stages }}
#define GROUP {{ p.group }}             /* 0: one group per row (per channel) */
#define MI {{ p.mi }}                   /* 64-row wgmma blocks per warpgroup */
#define NT {{ p.nt }}                   /* tokens per wgmma */
#define NG {{ p.ng }}                   /* group-parameter entries per 16-row block per stage */
#define X_STAGE {{ p.x_bytes }}
#define W_STAGE {{ p.w_bytes }}
#define STAGE_BYTES {{ p.stage_bytes }}
#define LDC {{ p.ldc }}                 /* padded row of the output tile in shared memory */
#define SPLIT {{ p.split }}
//% if p.tma == 1 then
#define TX_BYTES {{ p.x_bytes + p.w_bytes + p.gp_bytes }}   /* bytes the TMA brings per stage */
//% else
#define PREFETCH (STAGES - 2)           /* K tiles in flight: one more slot is read by the wgmma in flight */
//% end
#define X_OFF 0                         /* a stage: activations, packed weights, group parameters */
#define W_OFF X_STAGE
#define GP_OFF (X_STAGE + W_STAGE)
#define ACC_REGS (MI * NT / 2)          /* accumulators per thread, ACC(q) in register order */
#define ACC(q) acc[(q) / (NT / 2)][(q) % (NT / 2)]
#define ACC_NJ (NT / 8)
/* The output tile's token (row) and weight row (column) of ACC(q). */
#define ACC_ML(q) (wg_m * NT + ((q) % (NT / 2)) / 4 * 8 + (lane & 3) * 2 + ((q) & 1))
#define ACC_NL(q) ((nbl0 + (q) / (NT / 2) * 4) * 16 + (lane >> 2) + ((q) >> 1 & 1) * 8)
//% if p.cluster > 1 then
#define EPI_TILE_OFF (BM * BN * 4)      /* the output tile, past the accumulators the peers read */
//% else
#define EPI_TILE_OFF 0
//% end

//% if p.tma == 0 then
/* The 128-byte swizzle: 16-byte chunk c of token row r sits at chunk
 * c ^ (r % 8), the layout the wgmma descriptor below names. */
static __device__ __forceinline__ int x_swizzle(int row, int chunk) { return chunk ^ (row & 7); }
//% end

/* Shared-memory matrix descriptor of a K-major INT8 tile with 128-byte rows
 * and the 128-byte swizzle: start address, 1024 bytes between 8-row groups. */
static __device__ __forceinline__ u64 x_desc(u32 addr)
{
    return (u64)((addr & 0x3FFFFu) >> 4) | ((u64)1 << 16) | ((u64)(1024 >> 4) << 32) | ((u64)1 << 62);
}

//% if p.tma == 0 then
/* Makes this thread's completed cp.async writes visible to the tensor
 * cores' (async proxy) reads. */
static __device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
//% end

//% if p.tma == 1 then
/* Issues the copies of K tile kt into a stage (thread 0 only): the packed
 * weights and group parameters (WEIGHTS) and the token tile (TOKENS), apart,
 * so weights can be requested before the activations exist. */
template <bool WEIGHTS, bool TOKENS>
static __device__ __forceinline__ void tma_stage(u32 stage, u32 full, int kt, const qjit_tmap &xmap,
                                                 const qjit_tmap &wmap, const qjit_tmap &gmap, int n_cta, int m_cta)
{
    if (WEIGHTS) {
        /* Packed weights: BN/16 rows of the 16-row-block view, 512 bytes
         * (64 u64) per 64-k block. */
        tma_load_2d(stage + W_OFF, &wmap, kt * (BK / 64) * 64, n_cta / 16, full);
//% if p.group > 0 then
        /* Group parameters: NG entries of 8 words per 16-row block. */
        tma_load_2d(stage + GP_OFF, &gmap, kt * BK / GROUP * 8, n_cta / 16, full);
//% end
    }
    if (TOKENS)
        tma_load_2d(stage + X_OFF, &xmap, kt * BK, m_cta, full);   /* 128-byte swizzled by the map */
}
//% else
{{ gemm.load_stage(p) }}
//% end
extern "C" __global__ void __launch_bounds__(THREADS) {{ p.name }}(
    {{ gemm.params(p) }})
{
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
    const int kt_begin = (int)((long long)(K / BK) * blockIdx.z / SPLIT);
    const int kt_end = (int)((long long)(K / BK) * (blockIdx.z + 1) / SPLIT);
    const int ktiles = kt_end - kt_begin;
    /* This warp's first 16-row block (of the CTA's), one per 64-row wgmma block. */
    const int nbl0 = wg_n * (BN / WG_N / 16) + wq;

    int acc[MI][NT / 2];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NT / 2; ++j)
            acc[i][j] = 0;

//% if p.group == 0 then
    /* Per-channel: one group per row, its parameters read once. */
    lqq_params params[MI];
#pragma unroll
    for (int i = 0; i < MI; ++i) {
        const int nb = n_cta / 16 + nbl0 + i * 4;
        params[i] = lqq_unpack_params(nb * 16 < N ? gparams[(size_t)nb * 8 + (lane >> 2)] : 0u);
    }
//% end

//% if p.tma == 1 then
    /* full[s]: one arrival (with the stage's byte count) plus the TMA bytes;
     * empty[s]: one arrival per warp once it has read the slot. */
    __shared__ __align__(8) u64 bars[2 * STAGES];
    const u32 full0 = smem_addr(bars), empty0 = full0 + STAGES * 8;
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full0 + s * 8, 1);
            mbar_init(empty0 + s * 8, THREADS / 32);
        }
        mbar_init_fence();
    }
    __syncthreads();
    /* Fill the ring: weights first -- they do not depend on the activation
     * kernel that may still be running (programmatic dependent launch). */
    if (tid == 0)
        for (int s = 0; s < STAGES && s < ktiles; ++s) {
            mbar_expect_tx(full0 + s * 8, TX_BYTES);
            tma_stage<true, false>(smem_base + s * STAGE_BYTES, full0 + s * 8, kt_begin + s, xmap, wmap, gmap,
                                   n_cta, m_cta);
        }
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    if (tid == 0)
        for (int s = 0; s < STAGES && s < ktiles; ++s)
            tma_stage<false, true>(smem_base + s * STAGE_BYTES, full0 + s * 8, kt_begin + s, xmap, wmap, gmap,
                                   n_cta, m_cta);

    for (int kt = 0; kt < ktiles; ++kt) {
        mbar_wait(full0 + (kt % STAGES) * 8, (kt / STAGES) & 1);
//% else
{{ gemm.prologue(p) }}
    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<STAGES - 3>();
        fence_proxy_async();
        __syncthreads();
        /* Refill the slot read two tiles ago: every warpgroup has waited for
         * those wgmmas (wait_group 1 below) before reaching the barrier. */
        const int next = kt + PREFETCH;
        if (next < ktiles)
            load_stage<true, true>(smem_base + (next % STAGES) * STAGE_BYTES, kt_begin + next, tid, qweight,
                                   gparams, Xq, n_cta, m_cta, M, N, K);
        cp_async_commit();
//% end

        const u32 stage = smem_base + (kt % STAGES) * STAGE_BYTES;
        const u32 xtile = stage + X_OFF + wg_m * NT * BK;
        /* Packed weights and group parameters of one 64-k step: one 128-bit
         * load per 16-row block gives this lane its 32 weights for two k32
         * steps (dual-MMA packed layout). The next step's are read while
         * this step's MMAs run. */
        uint4 w[MI];
        u32 gp[MI];
#pragma unroll
        for (int i = 0; i < MI; ++i) {
            w[i] = lds128(stage + W_OFF + (nbl0 + i * 4) * (BK / 64) * 512 + lane * 16);
//% if p.group > 0 then
            gp[i] = lds32(stage + GP_OFF + (nbl0 + i * 4) * NG * 32 + (lane >> 2) * 4);
//% end
        }
#pragma unroll
        for (int kb = 0; kb < BK / 64; ++kb) {
            u32 a[MI][2][4];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
//% if p.group > 0 then
                const lqq_params pr = lqq_unpack_params(gp[i]);
//% else
                const lqq_params pr = params[i];
//% end
                lqq_dequant_word(w[i].x, pr, a[i][0][0], a[i][0][1]);
                lqq_dequant_word(w[i].y, pr, a[i][0][2], a[i][0][3]);
                lqq_dequant_word(w[i].z, pr, a[i][1][0], a[i][1][1]);
                lqq_dequant_word(w[i].w, pr, a[i][1][2], a[i][1][3]);
            }
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < 2; ++kk)
#pragma unroll
                for (int i = 0; i < MI; ++i)
                    wgmma_s8_m64n{{ p.nt }}k32(acc[i], a[i][kk], x_desc(xtile + kb * 64 + kk * 32));
            wgmma_commit();
            if (kb + 1 < BK / 64) {
#pragma unroll
                for (int i = 0; i < MI; ++i) {
                    const int nbl = nbl0 + i * 4;
                    w[i] = lds128(stage + W_OFF + (nbl * (BK / 64) + kb + 1) * 512 + lane * 16);
//% if p.group > 0 then
                    if (GROUP < BK)
                        gp[i] = lds32(stage + GP_OFF + (nbl * NG + (kb + 1) * 64 / GROUP) * 32 + (lane >> 2) * 4);
//% end
                }
            }
            /* The previous step's MMAs are done: its A registers may be
             * reused and, at the next barrier, the previous tile's slot. */
            wgmma_wait<1>();
//% if p.tma == 1 then
            /* After the first step's wait the previous tile's MMAs and
             * loads are all done: this warp releases its slot. */
            if (kb == 0 && kt > 0 && lane == 0)
                mbar_arrive(empty0 + ((kt - 1) % STAGES) * 8);
//% end
        }
//% if p.tma == 1 then
        /* Refill the previous tile's slot with the tile STAGES ahead of it,
         * once every warp has released it. */
        if (tid == 0 && kt > 0 && kt - 1 + STAGES < ktiles) {
            const int slot = (kt - 1) % STAGES;
            mbar_wait(empty0 + slot * 8, ((kt - 1) / STAGES) & 1);
            mbar_expect_tx(full0 + slot * 8, TX_BYTES);
            tma_stage<true, true>(smem_base + slot * STAGE_BYTES, full0 + slot * 8, kt_begin + kt - 1 + STAGES,
                                  xmap, wmap, gmap, n_cta, m_cta);
        }
//% end
    }
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NT / 2; ++j)
            reg_fence(acc[i][j]);
//% if p.tma == 0 then
    cp_async_wait<0>();
//% end
    __syncthreads();
{{ gemm.split_k(p) }}
{{ gemm.epilogue(p, false) }}
}
