// qjit variant: {{ key }}
//
// GEMM, scheme {{ f.scheme }}, multistage pipeline (cp.async ring of {{ p.stages }} stages,
// mma.sync {{ p.mma_s4 == 1 and "m16n8k64 INT4" or "m16n8k32 INT8" }} with INT32 accumulators), for {{ f.arch }}.
//   Y[m, n] = epi_value(sum_k Xq[m, k] * W'[n, k])   (the scheme's epilogue)
// Weights are the MMA's A operand (16 weight rows x 32 k), tokens its B
// operand (8 tokens), so one packed layout (runtime/layout.h) serves every M.
// CTA tile: {{ p.tile_m }} tokens x {{ p.tile_n }} weight rows x {{ p.tile_k }} k; warps {{ p.warps_m }} (tokens) x {{ p.warps_n }} (rows).
//% if p.split > 1 then
// Split-K {{ p.split }}: blockIdx.z takes a slice of K; {{ p.cluster > 1 and "the tile's CTAs form a cluster and\n// each adds its share of the rows from the others' INT32 accumulators (exact)." or "the last CTA of a tile to\n// finish adds the others' INT32 partials (exact) and runs the epilogue." }}
//% end
{{ render("lib/prelude.cu", { bf16 = f.dtype == "bf16" }) }}
{{ render("lib/mma.cu") }}
//% if p.mma_s4 == 1 then
{{ render("lib/mma_s4.cu") }}
//% end
{{ render(scheme.device, { p = p }) }}
{{ gemm.lib(p, f) }}
#define BM {{ p.tile_m }}
#define BN {{ p.tile_n }}
#define BK {{ p.tile_k }}
#define WARPS_M {{ p.warps_m }}
#define WARPS_N {{ p.warps_n }}
#define THREADS {{ p.threads }}
#define STAGES {{ p.stages }}
#define GROUP {{ p.group }}          /* 0: one group per row (per channel) */
#define MI {{ p.mi }}                /* 16-row A tiles per warp */
#define NJ {{ p.nj }}                /* 8-token B tiles per warp */
#define NG {{ p.ng }}                /* group-parameter entries per n-block per stage */
#define W_STAGE {{ p.w_bytes }}      /* bytes of packed weights per stage */
#define X_STAGE {{ p.x_bytes }}
#define XR BK                        /* bytes of a token's row in an INT8 activation tile */
#define STAGE_BYTES {{ p.stage_bytes }}
#define LDC {{ p.ldc }}              /* padded row of the output tile in shared memory */
#define SPLIT {{ p.split }}
#define PREFETCH (STAGES - 1)         /* K tiles in flight */
#define W_OFF 0                      /* a stage: packed weights, activations, group parameters */
#define X_OFF W_STAGE
#define GP_OFF (W_STAGE + X_STAGE)
//% if p.sparse == 1 then
#define R_OFF (GP_OFF + {{ p.gp_bytes }})   /* the tile's residual blocks, 512 bytes each */
#define RB_OFF (R_OFF + {{ p.r_bytes }})    /* their presence word */
//% end
#define ACC_REGS (MI * NJ * 4)       /* accumulators per thread, ACC(q) in register order */
#define ACC(q) acc[(q) / (NJ * 4)][((q) / 4) % NJ][(q) % 4]
//% if p.parts == 2 then
#define ACC2(q) acc4[(q) / (NJ * 4)][((q) / 4) % NJ][(q) % 4]   /* the INT4 part's sums (acc: the INT8 part's) */
//% end
#define ACC_NJ NJ
/* The output tile's token (row) and weight row (column) of ACC(q). */
#define ACC_ML(q) (warp_m * (BM / WARPS_M) + (q) / 4 % NJ * 8 + (lane & 3) * 2 + ((q) & 1))
#define ACC_NL(q) (warp_n * (BN / WARPS_N) + (q) / (NJ * 4) * 16 + (lane >> 2) + ((q) >> 1 & 1) * 8)
//% if p.cluster > 1 then
#define EPI_TILE_OFF (BM * BN * 4)      /* the output tile, past the first peer's region of sums */
//% else
#define EPI_TILE_OFF 0
//% end

//% -- The XOR swizzle of tile rows of xr bytes: 16-byte chunks so the eight
//% -- row addresses of one ldmatrix hit eight different bank groups.
//% local function swizzle(xr)
//%   if xr == 32 then return "chunk ^ ((row >> 2) & 1)" elseif xr == 64 then return "chunk ^ ((row >> 1) & 3)" end
//%   return "chunk ^ (row & 7)"
//% end
/* Activation tile rows of INT8 values are BK bytes; 16-byte chunks are
 * XOR-swizzled so the eight row addresses of one ldmatrix hit eight
 * different bank groups. */
static __device__ __forceinline__ int x_swizzle(int row, int chunk)
{
    return {{ swizzle(p.tile_k) }};
}
//% if p.mma_s4 == 1 then
/* ... and rows of INT4 values packed two per byte (mma=s4) BK / 2 bytes. */
static __device__ __forceinline__ int x_swizzle4(int row, int chunk)
{
    return {{ swizzle(p.tile_k // 2) }};
}
//% end

{{ render("lib/stage_load.cu", { p = p }) }}
/* The MMAs of one 64-k step into the sums c: both k32 halves, every 16-row
 * A tile by every 8-token B tile. */
static __device__ __forceinline__ void mma_step(int (&c)[MI][NJ][4], const u32 (&a)[MI][2][4], const u32 (&b)[NJ][4])
{
#pragma unroll
    for (int kk = 0; kk < 2; ++kk)
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NJ; ++j)
                mma_s8_16832(c[i][j], a[i][kk], b[j][2 * kk], b[j][2 * kk + 1]);
}
//% if p.mma_s4 == 1 then

/* The same with one INT4 MMA (m16n8k64) per A tile and B tile. */
static __device__ __forceinline__ void mma_step_s4(int (&c)[MI][NJ][4], const u32 (&a)[MI][4], const u32 (&b)[NJ][2])
{
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j)
            mma_s4_16864(c[i][j], a[i], b[j][0], b[j][1]);
}

/* One 64-k step of a K tile of INT4 tokens packed two per byte (rows of
 * BK / 2 bytes) into the sums c: one 128-bit load per 16-row block gives
 * this lane its weights as one INT4 MMA's A registers (the scheme's
 * dequant_s4); one ldmatrix.x2 per 8 tokens their 64 k (lanes 16..31
 * repeat the addresses of 0..15). */
static __device__ __forceinline__ void step_s4(u32 stage, int kb, int warp_n, int warp_m, int lane,
                                               int (&c)[MI][NJ][4])
{
    u32 a[MI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i) {
        const int nbl = warp_n * MI + i;
        uint4 w[W_VECS];
#pragma unroll
        for (int v = 0; v < W_VECS; ++v)
            w[v] = lds128(stage + W_OFF + (nbl * (BK / 64) + kb) * (512 * W_VECS) + v * 512 + lane * 16);
        dequant_s4(w, wparams{}, a[i]);
    }
    u32 b[NJ][2];
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
        const int row = warp_m * (BM / WARPS_M) + j * 8 + (lane & 7);
        const int chunk = kb * 2 + ((lane >> 3) & 1);
        ldmatrix_x2(stage + X_OFF + row * (BK / 2) + x_swizzle4(row, chunk) * 16, b[j][0], b[j][1]);
    }
    mma_step_s4(c, a, b);
}
//% end

extern "C" __global__ void __launch_bounds__(THREADS) {{ p.name }}(
    {{ gemm.params(slots) }})
{
    extern __shared__ __align__(128) unsigned char smem[];
    const u32 smem_base = smem_addr(smem);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int warp_n = warp % WARPS_N, warp_m = warp / WARPS_N;
    const int n_cta = blockIdx.x * BN, m_cta = blockIdx.y * BM;
    /* This CTA's slice of the K tiles. */
    const int kt_begin = (int)((long long)(K / BK) * blockIdx.z / SPLIT);
    const int kt_end = (int)((long long)(K / BK) * (blockIdx.z + 1) / SPLIT);
    const int ktiles = kt_end - kt_begin;

    int acc[MI][NJ][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j)
            acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0;
//% if p.parts == 2 then
    /* Two activation parts: acc sums the K tiles of the layer's first k8
     * channels (INT8 tokens), acc4 the rest (INT4 values); k8 is a multiple
     * of 128, so a K tile lies in one part. */
    int acc4[MI][NJ][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j)
            acc4[i][j][0] = acc4[i][j][1] = acc4[i][j][2] = acc4[i][j][3] = 0;
//% end
//% if p.sparse == 1 then
    /* Warp 0's lanes look up the tile's residual (lib/stage_load.cu). */
    residual_cursor rcur = residual_tile_start(rmask, tid, BK / 64, (BN / 16) * (BK / 64), n_cta, kt_begin, N, K);
//% end
//% if p.fold == 1 then
    /* The current group's sums, added to acc times the group's integer
     * scales at its end (or the slice's). */
    int part[MI][NJ][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j)
            part[i][j][0] = part[i][j][1] = part[i][j][2] = part[i][j][3] = 0;
//% end

//% if p.gparams_channel == 1 then
    /* Per-channel: one group per row, its parameters read once. */
    wparams params[MI];
#pragma unroll
    for (int i = 0; i < MI; ++i) {
        const int nb = (n_cta + warp_n * (BN / WARPS_N) + i * 16) / 16;
        params[i] = wparams_from(nb * 16 < N ? gparams[(size_t)nb * 8 + (lane >> 2)] : 0u);
    }
//% end

//% if p.pre_scales == 1 then
    /* The epilogue's loads, made now so the tail does not wait on them: the
     * layer's (constant) and, once the tokens are ready, the tokens'. */
    epi_col pre_n[MI][2];
    epi_row pre_m[NJ][2];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int half = 0; half < 2; ++half)
            {
                const int n = n_cta + warp_n * (BN / WARPS_N) + i * 16 + (lane >> 2) + half * 8;
                pre_n[i][half] = epi_col_load(EPI_COL_ARGS, n, n < N);
            }
//% end
{{ render("lib/prologue.cu", { p = p, quantizers = gemm.FUSED_QUANTIZERS }) }}
//% if p.pre_scales == 1 then
#pragma unroll
    for (int j = 0; j < NJ; ++j)
#pragma unroll
        for (int odd = 0; odd < 2; ++odd)
            {
                const int m = m_cta + warp_m * (BM / WARPS_M) + j * 8 + (lane & 3) * 2 + odd;
                pre_m[j][odd] = epi_row_load(EPI_ROW_ARGS, m, m < M);
            }
//% end
    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        /* Refill the slot every warp finished with in the previous iteration. */
        refill_slot(smem_base, kt + PREFETCH, ktiles, kt_begin, tid, STAGE_PTRS, n_cta, m_cta, M, N, K);

        const u32 stage = smem_base + (kt % STAGES) * STAGE_BYTES;
//% if p.sparse == 1 then
        const u32 rbits = lds32(stage + RB_OFF);   /* the tile's residual blocks */
//% end
#pragma unroll
        for (int kb = 0; kb < BK / 64; ++kb) {
//% if p.mma_s4 == 1 and p.parts == 2 then
            /* A K tile of the INT4 part: packed tokens, the INT4 MMA. */
            if ((kt_begin + kt) * BK >= k8) {
                step_s4(stage, kb, warp_n, warp_m, lane, acc4);
                continue;
            }
//% elseif p.mma_s4 == 1 then
            step_s4(stage, kb, warp_n, warp_m, lane, acc);
//% end
//% if p.mma_s4 ~= 1 or p.parts == 2 then
            /* A: W_VECS 128-bit loads per 16-row block give this lane its
             * weights for two MMAs (the packed layout). */
            u32 a[MI][2][4];
//% if p.fold == 1 then
            wparams prs[MI];
//% end
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const int nbl = warp_n * MI + i;
//% if p.gparams_tiled == 1 then
                const int gi = (GROUP < BK) ? (kb * 64) / GROUP : 0;
                const wparams pr = wparams_from(lds32(stage + GP_OFF + (nbl * NG + gi) * 32 + (lane >> 2) * 4));
//% elseif p.gparams_channel == 1 then
                const wparams pr = params[i];
//% else
                const wparams pr = {};
//% end
                uint4 w[W_VECS];
#pragma unroll
                for (int v = 0; v < W_VECS; ++v)
                    w[v] = lds128(stage + W_OFF + (nbl * (BK / 64) + kb) * (512 * W_VECS) + v * 512 + lane * 16);
                dequant(w, pr, a[i]);
//% if p.fold == 1 then
                prs[i] = pr;
//% end
            }
//% if p.sparse == 1 then
            /* This step's residual blocks, added to the weights (lib/residual.cu). */
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const int nbl = warp_n * MI + i;
                if (rbits >> (nbl * (BK / 64) + kb) & 1u)
                    residual_fold(lds128(stage + R_OFF + (nbl * (BK / 64) + kb) * 512 + lane * 16), a[i]);
            }
//% end
            /* B: one ldmatrix.x4 per 8 tokens covers 64 k (two MMAs). */
            u32 b[NJ][4];
#pragma unroll
            for (int j = 0; j < NJ; ++j) {
                const int row = warp_m * (BM / WARPS_M) + j * 8 + (lane & 7);
                const int chunk = kb * 4 + (lane >> 3);
                ldmatrix_x4(stage + X_OFF + row * XR + x_swizzle(row, chunk) * 16,
                            b[j][0], b[j][1], b[j][2], b[j][3]);
            }
//% if p.parts == 2 then
            if ((kt_begin + kt) * BK < k8)
                mma_step(acc, a, b);
            else
                mma_step(acc4, a, b);
//% else
            mma_step({{ p.fold == 1 and "part" or "acc" }}, a, b);
//% end
//% end
//% if p.fold == 1 then
            /* A group ends here, or the slice does: acc += part * S. */
            if (((kt_begin + kt) * BK + (kb + 1) * 64) % GROUP == 0 || (kt == ktiles - 1 && kb == BK / 64 - 1)) {
#pragma unroll
                for (int i = 0; i < MI; ++i)
#pragma unroll
                    for (int j = 0; j < NJ; ++j)
#pragma unroll
                        for (int e = 0; e < 4; ++e) {
                            acc[i][j][e] += part[i][j][e] * fold_scale(prs[i], e >> 1);
                            part[i][j][e] = 0;
                        }
            }
//% end
        }
    }
    cp_async_wait<0>();
    __syncthreads();
{{ render("lib/split_k.cu", { p = p }) }}
{{ render("lib/epilogue.cu", { p = p, pre = p.pre_scales == 1 }) }}
}
