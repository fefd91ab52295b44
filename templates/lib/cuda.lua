-- lib/cuda.lua -- shared device-code pieces, as text: PTX wrappers for the
-- copies, shared-memory loads and MMA atoms the kernels compose, and the
-- dequantization routine of each scheme. Kernels include what they use.
local L = {}

-- Address and copy primitives (sm_80+). Generated kernels include no CUDA
-- headers: NVRTC then parses a few hundred lines, not tens of thousands.
L.prelude = [[
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned long long u64;

static __device__ __forceinline__ u32 smem_addr(const void *p)
{
    u32 r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}

/* 16-byte global->shared copy that bypasses L1; with ok == false the
 * destination is zero-filled and nothing is read. */
static __device__ __forceinline__ void cp_async16(u32 dst, const void *src, bool ok)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(src), "r"(ok ? 16 : 0));
}
static __device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> static __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N));
}

static __device__ __forceinline__ uint4 lds128(u32 addr)
{
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
    return v;
}
static __device__ __forceinline__ u32 lds32(u32 addr)
{
    u32 v;
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr));
    return v;
}

/* Four 8x8 b16 matrices (here: 8 rows x 16 int8 each); lanes 8j..8j+7 give
 * the row addresses of matrix j. */
static __device__ __forceinline__ void ldmatrix_x4(u32 addr, u32 &r0, u32 &r1, u32 &r2, u32 &r3)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}

static __device__ __forceinline__ float half_to_float(u16 h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
static __device__ __forceinline__ u16 float_to_half(float f)
{
    u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
]]

-- D = A * B + D, INT8 x INT8 -> INT32, A 16x32 (row), B 32x8 (col).
L.mma_s8 = [[
static __device__ __forceinline__ void mma_s8_16832(int (&d)[4], const u32 (&a)[4], u32 b0, u32 b1)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
]]

-- Warpgroup MMA (sm_90a): D(64 x nt, INT32) += A(64 x 32, INT8, registers:
-- the m16n8k32 A fragment per warp, warp w holding rows 16w..16w+15) x
-- B(32 x nt, INT8, shared memory through a descriptor), plus the fences
-- the asynchronous MMA needs. D's per-warp layout is that of nt/8
-- m16n8 accumulator fragments side by side.
function L.wgmma_s8(nt)
  local nd = nt // 2
  local d, outs = {}, {}
  for i = 0, nd - 1 do
    d[#d + 1] = "%" .. i
    outs[#outs + 1] = string.format('"+r"(d[%d])', i)
  end
  local lines = {
    "static __device__ __forceinline__ void wgmma_fence() { asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\"); }",
    "static __device__ __forceinline__ void wgmma_commit() { asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\"); }",
    "template <int N> static __device__ __forceinline__ void wgmma_wait()",
    "{",
    "    asm volatile(\"wgmma.wait_group.sync.aligned %0;\\n\" :: \"n\"(N) : \"memory\");",
    "}",
    "/* Keeps the compiler from moving accesses to an accumulator across the",
    " * asynchronous MMAs that write it. */",
    "static __device__ __forceinline__ void reg_fence(int &r) { asm volatile(\"\" : \"+r\"(r) :: \"memory\"); }",
    "",
    string.format("static __device__ __forceinline__ void wgmma_s8_m64n%dk32(int (&d)[%d], const u32 (&a)[4], u64 desc)", nt, nd),
    "{",
    "    asm volatile(\"{ .reg .pred p;\\n\"",
    string.format("                 \"setp.ne.b32 p, %%%d, 0;\\n\"", nd + 5),
    string.format("                 \"wgmma.mma_async.sync.aligned.m64n%dk32.s32.s8.s8 \"", nt),
  }
  -- The register list is written "{ %0, ..." (a space after the brace).
  local per = 16
  for i = 1, #d, per do
    local chunk = table.concat(d, ", ", i, math.min(#d, i + per - 1))
    local open = (i == 1) and "{ " or ""
    local close = (i + per - 1 >= #d) and " }, " or ", "
    lines[#lines + 1] = string.format('                 "%s%s%s"', open, chunk, close)
  end
  lines[#lines + 1] = string.format('                 "{ %%%d, %%%d, %%%d, %%%d }, %%%d, p;\\n }\\n"',
                                    nd, nd + 1, nd + 2, nd + 3, nd + 4)
  local outl = {}
  for i = 1, #outs, 8 do outl[#outl + 1] = table.concat(outs, ", ", i, math.min(#outs, i + 7)) end
  lines[#lines + 1] = "                 : " .. table.concat(outl, ",\n                   ")
  lines[#lines + 1] = '                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "n"(1));'
  lines[#lines + 1] = "}"
  return table.concat(lines, "\n") .. "\n"
end

-- Per-token symmetric INT8 quantization of one token row (ALGORITHMS.md
-- section 1), shared by the activation kernel and GEMMs that quantize
-- their own tokens (actq=fused), so both give the same bytes:
--   sx[m] = max_k |X[m, k]| / 127 (1 for an all-zero row),
--   Xq[m, k] = clamp(round(X[m, k] / sx[m]), -127, 127), round half away from zero.
-- IEEE division and roundf make it bit-identical to the CPU reference.
L.act_row = [[
static __device__ __forceinline__ void unpack8(uint4 v, float (&x)[8])
{
    const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        x[2 * i] = half_to_float((u16)(w[i] & 0xFFFFu));
        x[2 * i + 1] = half_to_float((u16)(w[i] >> 16));
    }
}

static __device__ __forceinline__ u32 quant4(const float *x, float scale)
{
    u32 r = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        float q = roundf(x[i] / scale);
        q = fminf(fmaxf(q, -127.0f), 127.0f);
        r |= ((u32)(int)q & 0xFFu) << (8 * i);
    }
    return r;
}

/* Chunks c0, c0 + T, ... c0 + (C - 1) T of a row (zero past its end). */
template <int T, int C>
static __device__ __forceinline__ void load_chunks(const uint4 *row, int c0, int chunks, uint4 (&keep)[C])
{
#pragma unroll
    for (int i = 0; i < C; ++i) {
        const int c = c0 + i * T;
        keep[i] = c < chunks ? row[c] : make_uint4(0u, 0u, 0u, 0u);
    }
}

/* The largest of amax and |x| over C chunks. */
template <int C>
static __device__ __forceinline__ float chunks_amax(const uint4 (&keep)[C], float amax)
{
#pragma unroll
    for (int i = 0; i < C; ++i) {
        float x[8];
        unpack8(keep[i], x);
#pragma unroll
        for (int e = 0; e < 8; ++e)
            amax = fmaxf(amax, fabsf(x[e]));
    }
    return amax;
}

/* Quantizes token row m (K FP16 values, 16-byte chunks) with all T threads
 * of the CTA (ALGORITHMS.md section 1); red: T / 32 floats of shared
 * memory. Rows of up to T x C chunks are read once and kept in registers
 * (unrolled, predicated: no local memory); longer rows are read twice, C
 * chunks per thread in flight. A caller that quantizes another row next
 * puts a CTA barrier between the two (red is reused). */
template <int T, int C>
static __device__ __forceinline__ void quantize_row(const uint4 *__restrict__ X, uint2 *__restrict__ Xq,
                                                    float *__restrict__ sx, int m, int K, float *red)
{
    const int chunks = K / 8;
    const uint4 *row = X + (size_t)m * chunks;
    const bool cached = (chunks + T - 1) / T <= C;
    uint4 keep[C];
    float amax = 0.0f;
    if (cached) {
        load_chunks<T, C>(row, threadIdx.x, chunks, keep);
        amax = chunks_amax<C>(keep, 0.0f);
    } else {
        for (int c0 = threadIdx.x; c0 < chunks; c0 += C * T) {
            load_chunks<T, C>(row, c0, chunks, keep);
            amax = chunks_amax<C>(keep, amax);
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, off));
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = amax;
    __syncthreads();
    amax = red[0];
#pragma unroll
    for (int w = 1; w < T / 32; ++w)
        amax = fmaxf(amax, red[w]);

    const float scale = amax == 0.0f ? 1.0f : amax / 127.0f;
    if (threadIdx.x == 0)
        sx[m] = scale;
    uint2 *out = Xq + (size_t)m * chunks;
    if (cached) {
#pragma unroll
        for (int i = 0; i < C; ++i) {
            const int c = threadIdx.x + i * T;
            if (c < chunks) {
                float x[8];
                unpack8(keep[i], x);
                out[c] = make_uint2(quant4(x, scale), quant4(x + 4, scale));
            }
        }
    } else {
        for (int c0 = threadIdx.x; c0 < chunks; c0 += C * T) {
            load_chunks<T, C>(row, c0, chunks, keep);
#pragma unroll
            for (int i = 0; i < C; ++i) {
                const int c = c0 + i * T;
                if (c < chunks) {
                    float x[8];
                    unpack8(keep[i], x);
                    out[c] = make_uint2(quant4(x, scale), quant4(x + 4, scale));
                }
            }
        }
    }
}
]]

-- GPU-scope flag publication: a release store and an acquire load.
L.flags = [[
static __device__ __forceinline__ void st_release_gpu(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.release.gpu.global.u64 [%0], %1;\n" :: "l"(p), "l"(v) : "memory");
}
static __device__ __forceinline__ unsigned long long ld_acquire_gpu(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(v) : "l"(p) : "memory");
    return v;
}
]]

-- Thread-block clusters (sm_90): a barrier over every thread of the
-- cluster, and 16-byte stores and loads of shared memory across it
-- (distributed shared memory: a peer's address comes from mapa).
L.cluster = [[
static __device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
/* The two halves of cluster_sync, to overlap work with the barrier. */
static __device__ __forceinline__ void cluster_arrive()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
static __device__ __forceinline__ void cluster_wait()
{
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
/* The address of this CTA's shared-memory word addr in cluster CTA rank. */
static __device__ __forceinline__ u32 cluster_map(u32 addr, u32 rank)
{
    u32 r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}
static __device__ __forceinline__ void sts128(u32 addr, int a, int b, int c, int d)
{
    asm volatile("st.shared.v4.s32 [%0], {%1, %2, %3, %4};\n" :: "r"(addr), "r"(a), "r"(b), "r"(c), "r"(d)
                 : "memory");
}
static __device__ __forceinline__ int4 ld_cluster128(u32 addr)
{
    int4 v;
    asm volatile("ld.shared::cluster.v4.s32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr) : "memory");
    return v;
}
]]

-- The tensor memory accelerator (sm_90): a tensor map passed by value,
-- mbarriers, and a 2D tile load that completes its bytes on an mbarrier.
L.tma = [[
/* A tensor map (the driver's CUtensorMap: 128 opaque bytes), passed as a
 * __grid_constant__ kernel parameter so the TMA unit can read it in place. */
struct __align__(64) qjit_tmap { unsigned long long opaque[16]; };

static __device__ __forceinline__ void mbar_init(u32 bar, u32 count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count) : "memory");
}
/* Makes initialized mbarriers visible to the other threads and to the TMA unit. */
static __device__ __forceinline__ void mbar_init_fence()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
static __device__ __forceinline__ void mbar_arrive(u32 bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
}
/* Arrives and announces `bytes` more to come from TMA copies on this phase. */
static __device__ __forceinline__ void mbar_expect_tx(u32 bar, u32 bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
}
/* Waits until the phase of the given parity has completed. */
static __device__ __forceinline__ void mbar_wait(u32 bar, u32 parity)
{
    u32 done;
    do {
        asm volatile("{ .reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n }\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}
/* Box (c0, c1) of a 2D tensor map into shared memory; rows and columns
 * outside the tensor arrive as zeros and count toward the bytes. */
static __device__ __forceinline__ void tma_load_2d(u32 dst, const qjit_tmap *map, int c0, int c1, u32 bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
                 "[%0], [%1, { %2, %3 }], [%4];\n"
                 :: "r"(dst), "l"((u64)map), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
]]

-- LiquidQuant dequantization (ALGORITHMS.md section 4): four UINT4 values,
-- one per byte, become four INT8 weights with one IMAD and one LOP3:
-- U8' = Q4 * s + a has no carries between bytes (U8' <= 255), and XOR 0x80
-- turns UINT8 into INT8 (subtracting 128 modulo 256).
L.dequant = {}
L.dequant["w4a8-lqq"] = [[
/* p = { s_lo, a_lo, s_hi, a_hi }: row g's and row g+8's group parameters. */
struct lqq_params { u32 s_lo, a_lo, s_hi, a_hi; };

static __device__ __forceinline__ lqq_params lqq_unpack_params(u32 p)
{
    lqq_params r;
    r.s_lo = p & 0xFFu;
    r.a_lo = ((p >> 8) & 0xFFu) * 0x01010101u;
    r.s_hi = (p >> 16) & 0xFFu;
    r.a_hi = (p >> 24) * 0x01010101u;
    return r;
}

static __device__ __forceinline__ u32 lqq_dequant4(u32 q4x4, u32 s, u32 a4)
{
    return (q4x4 * s + a4) ^ 0x80808080u;
}

/* One packed word holds row g's four weights in its low nibbles and row
 * g+8's in its high nibbles: two MMA A registers. */
static __device__ __forceinline__ void lqq_dequant_word(u32 w, const lqq_params &p, u32 &row_lo, u32 &row_hi)
{
    row_lo = lqq_dequant4(w & 0x0F0F0F0Fu, p.s_lo, p.a_lo);
    row_hi = lqq_dequant4((w >> 4) & 0x0F0F0F0Fu, p.s_hi, p.a_hi);
}
]]

return L
