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
// (tokens x rows), {{ p.mi }} 64-row block(s) per warpgroup. cp.async ring of {{ p.stages }} stages.
// Split-K {{ p.split }}: blockIdx.z takes a slice of K; the last CTA of a tile to
// finish adds the others' INT32 partials (exact) and runs the epilogue.
{{ lib.prelude }}
{{ lib.wgmma_s8(p.nt) }}
{{ lib.dequant[f.scheme] }}
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
#define PREFETCH (STAGES - 2)           /* K tiles in flight: one more slot is read by the wgmma in flight */
#define X_OFF 0                         /* a stage: activations, packed weights, group parameters */
#define W_OFF X_STAGE
#define GP_OFF (X_STAGE + W_STAGE)
#define ACC_REGS (MI * NT / 2)          /* accumulators per thread, ACC(q) in register order */
#define ACC(q) acc[(q) / (NT / 2)][(q) % (NT / 2)]

/* The 128-byte swizzle: 16-byte chunk c of token row r sits at chunk
 * c ^ (r % 8), the layout the wgmma descriptor below names. */
static __device__ __forceinline__ int x_swizzle(int row, int chunk) { return chunk ^ (row & 7); }

/* Shared-memory matrix descriptor of a K-major INT8 tile with 128-byte rows
 * and the 128-byte swizzle: start address, 1024 bytes between 8-row groups. */
static __device__ __forceinline__ u64 x_desc(u32 addr)
{
    return (u64)((addr & 0x3FFFFu) >> 4) | ((u64)1 << 16) | ((u64)(1024 >> 4) << 32) | ((u64)1 << 62);
}

/* Makes this thread's completed cp.async writes visible to the tensor
 * cores' (async proxy) reads. */
static __device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

{{ gemm.load_stage(p) }}
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
        }
    }
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NT / 2; ++j)
            reg_fence(acc[i][j]);
    cp_async_wait<0>();
    __syncthreads();
{{ gemm.split_k(p) }}
    /* Epilogue: stage the tile in shared memory, then store whole rows with
     * 16-byte writes. Accumulator 4j + r of block i is weight row
     * g (+8 for r >= 2) of the warp's 16 and token 8j + 2t (+1 for odd r). */
//% if p.epi == "i32" then
    int *tile = (int *)smem;
//% else
    u16 *tile = (u16 *)smem;
//% end
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int nl = (nbl0 + i * 4) * 16 + (lane >> 2) + half * 8;
//% if p.epi ~= "i32" then
            const int n = n_cta + nl;
            const float scale_n = n < N ? s0[n] : 0.0f;
//% end
#pragma unroll
            for (int j = 0; j < NT / 8; ++j) {
#pragma unroll
                for (int odd = 0; odd < 2; ++odd) {
                    const int ml = wg_m * NT + j * 8 + (lane & 3) * 2 + odd;
                    const int v = acc[i][j * 4 + half * 2 + odd];
//% if p.epi == "i32" then
                    tile[ml * LDC + nl] = v;
//% else
                    const int m = m_cta + ml;
                    const float scale_m = m < M ? sx[m] : 0.0f;
                    tile[ml * LDC + nl] = float_to_half((float)v * (scale_m * scale_n));
//% end
                }
            }
        }
    }
    __syncthreads();
{{ gemm.store_tile(p) }}
}
