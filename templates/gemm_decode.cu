// qjit variant: {{ key }}
//
// GEMM for few tokens, scheme {{ f.scheme }}, for {{ f.arch }}: weights stream from global
// memory straight into registers (no shared-memory ring, no barrier in the
// main loop) and meet the tokens in mma.sync m16n8k32 INT8 (INT32 accumulators).
//   Y[m, n] = epi_value(sum_k Xq[m, k] * W'[n, k])   (the scheme's epilogue)
// The packed layout (runtime/layout.h) puts the bytes a lane needs for two
// MMAs of a 16 x 64 block side by side, so each warp's weight load is one
// fully coalesced request per 512 bytes.
// CTA: {{ p.tile_m }} tokens x {{ p.tile_n }} weight rows x all of K; its {{ p.warps }} warps take
// 1/{{ p.warps }} of K each, keep {{ p.stages }} K steps of weights in flight, and add their
// INT32 results in shared memory (exact) before the epilogue.
//% if p.parts == 2 then
// Two activation parts: the K steps below k8 (INT8 tokens) sum into acc,
// the rest (INT4 values) into acc4; k8 is a multiple of 128, so a step lies
// in one part.
//% end
{{ render("lib/prelude.cu", { bf16 = f.dtype == "bf16" }) }}
{{ render("lib/mma.cu") }}
{{ render(scheme.device, { p = p }) }}
{{ gemm.lib(p, f) }}
#define BM {{ p.tile_m }}
#define BN {{ p.tile_n }}
#define R {{ p.r }}                  /* 16-row weight blocks per CTA */
#define NT {{ p.nt }}                /* 8-token MMA tiles per CTA */
#define WARPS {{ p.warps }}
#define THREADS {{ p.threads }}
#define U {{ p.stages }}             /* K steps in flight per warp */
//% if p.sparse == 1 then
#define RU {{ p.r_steps }}            /* ... of the residual */
//% end
#define GROUP {{ p.group }}          /* 0: one group per row (per channel) */
#define PARTS {{ p.parts }}              /* activation parts: planes of sums */

/* Weights are read once: keep them out of L1, where the activations live. */
static __device__ __forceinline__ uint4 ldg_stream(const uint4 *p)
{
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 { %0, %1, %2, %3 }, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
/* Layer constants (group parameters): read-only for the whole call. */
static __device__ __forceinline__ u32 ldg_const(const u32 *p)
{
    u32 v;
    asm volatile("ld.global.nc.u32 %0, [%1];\n" : "=r"(v) : "l"(p));
    return v;
}
/* Activations written by the kernel before this one: a coherent load. */
static __device__ __forceinline__ u32 ldg_act(const signed char *p)
{
    u32 v;
    asm volatile("ld.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}

//% if p.sparse == 1 then
/* Step k64's residual blocks of the CTA's row blocks nb0 .. nb0 + R - 1:
 * a lane's 16 bytes of each into rq; bit r of the result says row block r
 * has one (lib/residual.cu). */
static __device__ __forceinline__ u32 residual_fetch(residual_cursor (&rcur)[R], const uint4 *__restrict__ rweight,
                                                     int k64, int lane, uint4 (&rq)[R])
{
    u32 bits = 0u;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const uint4 *src = residual_lookup(rcur[r], rweight, k64);
        if (src) {
            rq[r] = ldg_stream(src + lane);
            bits |= 1u << r;
        }
    }
    return bits;
}
//% end

extern "C" __global__ void __launch_bounds__(THREADS{{ p.min_blocks > 0 and ", " .. p.min_blocks or "" }}) {{ p.name }}(
    {{ gemm.params(slots) }})
{
    __shared__ int red[BM * BN * PARTS];  /* the CTA's tile, summed over warps (per part) */
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int kblocks = K / 64, nblocks = N / 16;
    const int nb0 = blockIdx.x * R, m_cta = blockIdx.y * BM;
    /* This warp's K blocks. */
    const int kb0 = (int)((long long)kblocks * warp / WARPS);
    const int steps = (int)((long long)kblocks * (warp + 1) / WARPS) - kb0;

    /* Row blocks past N (in the last CTA) read a valid block; their sums
     * are dropped in the epilogue. */
    const uint4 *wp[R];
//% if p.gparams_tiled == 1 then
    const int groups_per_row = K / GROUP;
    const u32 *gp[R];
//% elseif p.gparams_channel == 1 then
    wparams params[R];
//% end
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int nb = min(nb0 + r, nblocks - 1);
        wp[r] = qweight + ((size_t)nb * kblocks + kb0) * (32 * W_VECS) + lane;
//% if p.gparams_tiled == 1 then
        gp[r] = gparams + (size_t)nb * groups_per_row * 8 + (lane >> 2);
//% elseif p.gparams_channel == 1 then
        params[r] = wparams_from(ldg_const(gparams + (size_t)nb * 8 + (lane >> 2)));
//% end
    }

//% if p.sparse == 1 then
    /* The residual (lib/residual.cu): per row block its rmask entry (a
     * cursor, the same in every lane), U steps of its 16 x 64 blocks in
     * flight beside the weights (RU steps ahead; RU divides U), rp[u] bit r
     * where step u's block r has one. */
    residual_cursor rcur[R];
    uint4 rq[RU][R];
    u32 rp[RU];
#pragma unroll
    for (int r = 0; r < R; ++r)
        rcur[r] = residual_start(rmask, nb0 + r, kb0, N, K);
//% end
    /* The first U steps of weights: they do not depend on the activation
     * kernel, which may still be running (programmatic dependent launch). */
    uint4 wq[U][R][W_VECS];
//% if p.gparams_tiled == 1 then
    u32 pq[U][R];
//% end
#pragma unroll
    for (int u = 0; u < U; ++u)
        if (u < steps)
#pragma unroll
            for (int r = 0; r < R; ++r) {
#pragma unroll
                for (int v = 0; v < W_VECS; ++v)
                    wq[u][r][v] = ldg_stream(wp[r] + u * (32 * W_VECS) + v * 32);
//% if p.gparams_tiled == 1 then
                pq[u][r] = ldg_const(gp[r] + (size_t)((kb0 + u) * 64 / GROUP) * 8);
//% end
            }
//% if p.sparse == 1 then
#pragma unroll
    for (int u = 0; u < RU; ++u)
        rp[u] = u < steps ? residual_fetch(rcur, rweight, kb0 + u, lane, rq[u]) : 0u;
//% end

    for (int i = tid; i < BM * BN * PARTS; i += THREADS)
        red[i] = 0;
//% if p.pre_scales == 1 then
    /* The epilogue's loads (each thread writes at most one pair of outputs),
     * made now so the tail does not wait on them: the layer's (constant)
     * now, the token's once the tokens are ready. */
    const int epi_m = m_cta + (tid * 2) / BN, epi_n = nb0 * 16 + (tid * 2) % BN;
    const bool epi_ok = tid * 2 < BM * BN && epi_m < M && epi_n < N;
    const epi_col pre_n0 = epi_col_load(EPI_COL_ARGS, epi_n, epi_ok);
    const epi_col pre_n1 = epi_col_load(EPI_COL_ARGS, epi_n + 1, epi_ok);
//% end
{{ render("lib/token_wait.cu", { p = p, quantizers = gemm.FUSED_QUANTIZERS }) }}
//% if p.pre_scales == 1 then
    const epi_row pre_m = epi_row_load(EPI_ROW_ARGS, epi_m, epi_ok);
//% end
    /* Lane (t, q) = (lane / 4, lane % 4) gives the MMA's B fragment of token
     * 8j + t: bytes 16i + 4q .. 16i + 4q + 3 of the 64-byte K block, i = 0..3
     * (two MMAs of 32). Tokens past M read nothing and count as zero. */
    const signed char *xp[NT];
    bool xok[NT];
#pragma unroll
    for (int j = 0; j < NT; ++j) {
        const int m = m_cta + j * 8 + (lane >> 2);
        xok[j] = m < M;
        xp[j] = Xq + (size_t)(xok[j] ? m : 0) * K + (size_t)kb0 * 64 + (lane & 3) * 4;
    }

    int acc[R][NT][4];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int j = 0; j < NT; ++j)
            acc[r][j][0] = acc[r][j][1] = acc[r][j][2] = acc[r][j][3] = 0;
//% if p.parts == 2 then
    int acc4[R][NT][4];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int j = 0; j < NT; ++j)
            acc4[r][j][0] = acc4[r][j][1] = acc4[r][j][2] = acc4[r][j][3] = 0;
//% end
//% if p.fold == 1 then
    /* The current group's sums, added to acc times the group's integer
     * scales at its end (or the warp's slice's). */
    int part[R][NT][4];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int j = 0; j < NT; ++j)
            part[r][j][0] = part[r][j][1] = part[r][j][2] = part[r][j][3] = 0;
//% end

    for (int s0 = 0; s0 < steps; s0 += U) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int s = s0 + u;
            if (s < steps) {
                u32 b[NT][4];
#pragma unroll
                for (int j = 0; j < NT; ++j)
#pragma unroll
                    for (int i = 0; i < 4; ++i)
                        b[j][i] = xok[j] ? ldg_act(xp[j] + (size_t)s * 64 + i * 16) : 0u;
                u32 a[R][2][4];
//% if p.fold == 1 then
                wparams prs[R];
//% end
#pragma unroll
                for (int r = 0; r < R; ++r) {
//% if p.gparams_tiled == 1 then
                    const wparams pr = wparams_from(pq[u][r]);
//% elseif p.gparams_channel == 1 then
                    const wparams pr = params[r];
//% else
                    const wparams pr = {};
//% end
                    dequant(wq[u][r], pr, a[r]);
//% if p.fold == 1 then
                    prs[r] = pr;
//% end
                }
//% if p.sparse == 1 then
                /* This step's residual blocks, added to the weights before
                 * their slot is refilled (lib/residual.cu). */
#pragma unroll
                for (int r = 0; r < R; ++r)
                    if (rp[u % RU] >> r & 1u)
                        residual_fold(rq[u % RU][r], a[r]);
//% end
                /* Refill this slot with the step U ahead. */
                if (s + U < steps)
#pragma unroll
                    for (int r = 0; r < R; ++r) {
#pragma unroll
                        for (int v = 0; v < W_VECS; ++v)
                            wq[u][r][v] = ldg_stream(wp[r] + (size_t)(s + U) * (32 * W_VECS) + v * 32);
//% if p.gparams_tiled == 1 then
                        pq[u][r] = ldg_const(gp[r] + (size_t)((kb0 + s + U) * 64 / GROUP) * 8);
//% end
                    }
//% if p.sparse == 1 then
                rp[u % RU] = s + RU < steps
                    ? residual_fetch(rcur, rweight, kb0 + s + RU, lane, rq[u % RU]) : 0u;
//% end
//% local function mmas(sums, indent)
{{ indent }}#pragma unroll
{{ indent }}for (int kk = 0; kk < 2; ++kk)
{{ indent }}#pragma unroll
{{ indent }}    for (int r = 0; r < R; ++r)
{{ indent }}#pragma unroll
{{ indent }}        for (int j = 0; j < NT; ++j)
{{ indent }}            mma_s8_16832({{ sums }}[r][j], a[r][kk], b[j][2 * kk], b[j][2 * kk + 1]);
//% end
//% if p.parts == 2 then
                if ((kb0 + s) * 64 < k8) {
//%   mmas("acc", "                    ")
                } else {
//%   mmas("acc4", "                    ")
                }
//% else
//%   mmas(p.fold == 1 and "part" or "acc", "                ")
//% end
//% if p.fold == 1 then
                /* A group ends here, or the warp's slice does: acc += part * S. */
                if ((kb0 + s + 1) * 64 % GROUP == 0 || s == steps - 1) {
#pragma unroll
                    for (int r = 0; r < R; ++r)
#pragma unroll
                        for (int j = 0; j < NT; ++j)
#pragma unroll
                            for (int e = 0; e < 4; ++e) {
                                acc[r][j][e] += part[r][j][e] * fold_scale(prs[r], e >> 1);
                                part[r][j][e] = 0;
                            }
                }
//% end
            }
        }
    }

    /* Sum the warps' K slices: integer adds, so the order does not matter.
     * Accumulator e of tile (r, j) is row 16r + g (+8 for e >= 2) and token
     * 8j + 2q (+1 for odd e). */
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int nl = r * 16 + (lane >> 2) + (e >> 1) * 8;
                const int ml = j * 8 + (lane & 3) * 2 + (e & 1);
                if (WARPS == 1)
                    red[ml * BN + nl] = acc[r][j][e];
                else
                    atomicAdd(&red[ml * BN + nl], acc[r][j][e]);
//% if p.parts == 2 then
                if (WARPS == 1)
                    red[BM * BN + ml * BN + nl] = acc4[r][j][e];
                else
                    atomicAdd(&red[BM * BN + ml * BN + nl], acc4[r][j][e]);
//% end
            }
    __syncthreads();

    /* Epilogue: two neighbouring rows per thread. */
    for (int i = tid * 2; i < BM * BN; i += THREADS * 2) {
        const int ml = i / BN, nl = i % BN;
        const int m = m_cta + ml, n = nb0 * 16 + nl;
        if (m >= M || n >= N)
            continue;
//% local v = p.parts == 2 and "epi_value2(red[i], red[BM * BN + i], " or "epi_value(red[i], "
//% local v1 = p.parts == 2 and "epi_value2(red[i + 1], red[BM * BN + i + 1], " or "epi_value(red[i + 1], "
//% -- bias=1: the layer's bias, added before rounding (__fadd_rn: never
//% -- contracted into the scale's multiply).
//% local a, b0, b1 = "", "", ""
//% if p.bias == 1 then a, b0, b1 = "__fadd_rn(", ", bias[n])", ", bias[n + 1])" end
//% if p.epi == "i32" then
        *(int2 *)(Y + (size_t)m * N + n) = make_int2(red[i], red[i + 1]);
//% if p.parts == 2 then
        /* The INT4 part's plane, M x N after the first. */
        *(int2 *)(Y + (size_t)M * N + (size_t)m * N + n) = make_int2(red[BM * BN + i], red[BM * BN + i + 1]);
//% end
//% elseif p.pre_scales == 1 then
        const u32 lo = float_to_y({{ a }}{{ v }}pre_m, pre_n0){{ b0 }});
        const u32 hi = float_to_y({{ a }}{{ v1 }}pre_m, pre_n1){{ b1 }});
        *(u32 *)(Y + (size_t)m * N + n) = lo | (hi << 16);
//% else
        const epi_row row = epi_row_load(EPI_ROW_ARGS, m, true);
        const u32 lo = float_to_y({{ a }}{{ v }}row, epi_col_load(EPI_COL_ARGS, n, true)){{ b0 }});
        const u32 hi = float_to_y({{ a }}{{ v1 }}row, epi_col_load(EPI_COL_ARGS, n + 1, true)){{ b1 }});
        *(u32 *)(Y + (size_t)m * N + n) = lo | (hi << 16);
//% end
    }
}
