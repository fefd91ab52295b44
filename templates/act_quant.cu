// qjit variant: {{ key }}
//
//% if p.inplace == 1 then
// A two-part layer's activation quantization in place (docs/schemes.md):
// token row m quantized in the caller's channel order, the channels in the
// layer's INT8 set (a8set: bit k % 8 of byte k / 8) to INT8 and the rest to
// INT4 values, one value per byte, one scale per token for both parts:
//   sx[m] = max(max_{k in set} |X[m, k]| / 127, max_{k not in set} |..| / 7) (1 for an all-zero token),
//   Xq[m, k] = clamp(round(X[m, k] / sx[m]), -limit, limit), limit 127 or 7 by part,
//   round half away from zero.
// No gather: the GEMM's one INT32 sum per output does not depend on the
// channels' order, so its weights keep the caller's order too.
// lib/act_div.cu's rounding makes it bit-identical to the CPU reference's IEEE division and roundf
// (qjit_reference_quantize_activations_for).
// One CTA of {{ p.threads }} threads per token; 16-byte loads of 8 {{ f.dtype == "bf16" and "BF16" or "FP16" }} values and the set's byte.
//% if p.ctas > 1 then
// {{ p.ctas }} CTAs per token (blockIdx.z): each finds the parts' maxima over the whole
// row and quantizes every {{ p.ctas }}th of the thread's rounds of 8 values.
//% end
//% elseif p.parts == 2 then
// A two-part layer's activation quantization (docs/schemes.md): token
// row m gathered into the layer's channel order (position j holds the
// caller's channel perm[j]), positions j < k8 quantized to INT8 and the rest
// to INT4 values, each part per token and symmetric, {{ p.pack == 2 and "the INT8 part one value\n// per byte and the INT4 part two (rows of k8 + (K - k8) / 2 bytes; in each 32\n// positions of the INT4 part, byte b holds position b in its low nibble and\n// b + 16 in its high one: the INT4 MMA's operand order, mma=s4)" or "one value per byte" }}:
//   sx[2m] = max_{j<k8} |X[m, perm[j]]| / 127, sx[2m+1] = max_{j>=k8} |..| / 7
//   (1 for an all-zero part),
//   Xq[m, j] = clamp(round(X[m, perm[j]] / sx), -limit, limit),
//   round half away from zero.
// lib/act_div.cu's rounding makes it bit-identical to the CPU reference's IEEE division and roundf
// (qjit_reference_quantize_activations_for).
// One CTA of {{ p.threads }} threads per token; each thread four positions at a time.
//% if p.cache > 0 then
// Rows of at most {{ p.cache }} channels are first copied into shared memory (16-byte
// loads, the order's quads requested at the same time) and gathered from there.
//% end
//% if p.ctas > 1 then
// {{ p.ctas }} CTAs per token (blockIdx.z): each finds the parts' maxima over the whole
// row and quantizes every {{ p.ctas }}th of the thread's rounds of positions (the
// divisions, most of the work, spread over {{ p.ctas }} SMs for few tokens).
//% end
//% else
// Per-token symmetric INT{{ f.bits }} activation quantization (docs/schemes.md; the row
// routine, quantize_row, is lib/act_row.cu's, shared with the GEMMs that
// quantize their own tokens), {{ p.pack == 2 and "two values per byte (in each 32 channels, byte b\n// holds channel b in its low nibble, channel b + 16 in its high one: the INT4\n// MMA's operand order, mma=s4)" or "one value per byte" }}:
//   sx[m] = max_k |X[m, k]| / {{ f.bits == "4" and 7 or 127 }} (1 for an all-zero row),
//   Xq[m, k] = clamp(round(X[m, k] / sx[m]), -{{ f.bits == "4" and 7 or 127 }}, {{ f.bits == "4" and 7 or 127 }}), round half away from zero,
//% if p.rowsum == 1 then
//   rowsum[m] = sum_k Xq[m, k] (for the schemes that subtract a zero point in the epilogue).
//% end
// lib/act_div.cu's rounding makes it bit-identical to the CPU reference's IEEE division and roundf.
// One CTA of {{ p.threads }} threads per token; 16-byte loads of 8 {{ f.dtype == "bf16" and "BF16" or "FP16" }} values.
//% if p.ctas > 1 then
// {{ p.ctas }} CTAs per token (blockIdx.z): each finds the row's largest |x| and
// quantizes every {{ p.ctas }}th of the thread's rounds of 8 values (the divisions,
// most of the work, spread over {{ p.ctas }} SMs for few tokens).
//% end
//% end
// It also zeroes the split-K arrival counters of the GEMM launched after it.
{{ render("lib/prelude.cu", { bf16 = f.dtype == "bf16" }) }}
{{ render("lib/act_div.cu", { bf16 = f.dtype == "bf16" }) }}
#define THREADS {{ p.threads }}
#define CACHED 8                     /* 16-byte chunks a thread keeps in registers (and loads at once) */
#define CTAS {{ p.ctas }}                       /* CTAs per token (blockIdx.z: which) */

//% if p.parts == 2 then
//% if p.inplace ~= 1 then
/* The largest |x| of four values. */
static __device__ __forceinline__ float amax4(float a, float b, float c, float d)
{
    return fmaxf(fmaxf(fabsf(a), fabsf(b)), fmaxf(fabsf(c), fabsf(d)));
}

//% end
/* One value quantized with a scale's divisor and limit, in the low byte. */
static __device__ __forceinline__ u32 quant1(float x, const act_div &d, float limit)
{
    return act_round(act_quot(x, d), limit) & 0xFFu;
}

//% if p.inplace ~= 1 then
/* The four values of the row at the positions p, quantized into the bytes
 * of a word. */
static __device__ __forceinline__ u32 quant_quad(const u16 *__restrict__ row, uint4 p, const act_div &d, float limit)
{
    return quant1(x_to_float(row[p.x]), d, limit) | quant1(x_to_float(row[p.y]), d, limit) << 8 |
           quant1(x_to_float(row[p.z]), d, limit) << 16 | quant1(x_to_float(row[p.w]), d, limit) << 24;
}
//% end

/* The two parts' largest |x| (each thread's a8, a4) over the CTA (red: 2 x
 * THREADS / 32 floats of shared memory), made scales, stored to sx, and
 * their divisors d8, d4 (lib/act_div.cu). */
static __device__ __forceinline__ void part_scales(float a8, float a4, float *red, float *__restrict__ sx, int m,
                                                   act_div &d8, act_div &d4)
{
    float s8, s4;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        a8 = fmaxf(a8, __shfl_xor_sync(0xFFFFFFFFu, a8, off));
        a4 = fmaxf(a4, __shfl_xor_sync(0xFFFFFFFFu, a4, off));
    }
    if ((threadIdx.x & 31) == 0) {
        red[threadIdx.x >> 5] = a8;
        red[THREADS / 32 + (threadIdx.x >> 5)] = a4;
    }
    __syncthreads();
    a8 = red[0];
    a4 = red[THREADS / 32];
#pragma unroll
    for (int w = 1; w < THREADS / 32; ++w) {
        a8 = fmaxf(a8, red[w]);
        a4 = fmaxf(a4, red[THREADS / 32 + w]);
    }
//% if p.scales == 1 then
    /* One scale for both parts: the two IEEE divisions of the reference. */
    s8 = a8 == 0.0f && a4 == 0.0f ? 1.0f : fmaxf(a8 / 127.0f, a4 / 7.0f);
    s4 = s8;
    if (threadIdx.x == 0 && blockIdx.z == 0)
        sx[m] = s8;
//% else
    s8 = a8 == 0.0f ? 1.0f : a8 / 127.0f;
    s4 = a4 == 0.0f ? 1.0f : a4 / 7.0f;
    if (threadIdx.x == 0 && blockIdx.z == 0) {
        sx[2 * m] = s8;
        sx[2 * m + 1] = s4;
    }
//% end
    d8 = act_div_of(s8);
    d4 = act_div_of(s4);
}

//% if p.inplace == 1 then
{{ render("lib/act_row.cu", { bits = 8 }) }}

/* The parts' bytes of load_chunks' chunks (U = 1): byte i of sets[i / 4]
 * is chunk i's byte of the INT8 channels' set (zero past the row). */
template <int T, int C>
static __device__ __forceinline__ void load_set(const unsigned char *__restrict__ set, int u0, int chunks,
                                                u32 (&sets)[C / 4])
{
#pragma unroll
    for (int i = 0; i < C / 4; ++i)
        sets[i] = 0u;
#pragma unroll
    for (int i = 0; i < C; ++i) {
        const int c = u0 + i * T;
        sets[i / 4] |= (c < chunks ? (u32)set[c] : 0u) << (8 * (i % 4));
    }
}

/* Two 16-bit float maxima and minima, a half at a time (NaN loses to a number). */
static __device__ __forceinline__ u32 hmax2(u32 a, u32 b)
{
    u32 d;
    asm("max.{{ f.dtype == "bf16" and "bf16x2" or "f16x2" }} %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}

static __device__ __forceinline__ u32 hmin2(u32 a, u32 b)
{
    u32 d;
    asm("min.{{ f.dtype == "bf16" and "bf16x2" or "f16x2" }} %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}

/* The parts' largest |x| over the row's kept chunks (u0 + i T < chunks),
 * in the tokens' 16-bit floats (exact): each value's magnitude signed by its part, + in the set
 * and - outside it, so hi (from +0) takes the set's largest and lo (from
 * +0) minus the others' -- one LOP3, one max and one min per two values. */
template <int T, int C>
static __device__ __forceinline__ void chunks_amax_parts(const uint4 (&keep)[C], const u32 (&sets)[C / 4], int u0,
                                                         int chunks, u32 &hi, u32 &lo)
{
#pragma unroll
    for (int i = 0; i < C; ++i) {
        if (u0 + i * T >= chunks)
            break;
        /* Bit e of out: value e outside the set; its word's two bits to the
         * sign bits of its halves (bits 15 and 31) by one multiply (2 bits
         * times 2^15 + 2^30: no carries). */
        const u32 out = ~(sets[i / 4] >> (8 * (i % 4))), w[4] = {keep[i].x, keep[i].y, keep[i].z, keep[i].w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const u32 y = (w[j] & 0x7FFF7FFFu) | ((out >> (2 * j) & 3u) * 0x40008000u & 0x80008000u);
            hi = hmax2(hi, y);
            lo = hmin2(lo, y);
        }
    }
}

/* The parts' largest |x| as floats from chunks_amax_parts' hi and lo. */
static __device__ __forceinline__ void parts_amax(u32 hi, u32 lo, float &a8, float &a4)
{
    a8 = fmaxf(x_to_float((u16)(hi & 0xFFFFu)), x_to_float((u16)(hi >> 16)));
    a4 = -fminf(x_to_float((u16)(lo & 0xFFFFu)), x_to_float((u16)(lo >> 16)));
}

/* The kept chunks quantized with scale s, each value to its part's limit,
 * 8 bytes a chunk at its place in out; P > 1: only the rounds r % P ==
 * blockIdx.z (round r: chunks r T .. r T + T - 1). */
template <int T, int C, int P>
static __device__ __forceinline__ void store_inplace(const uint4 (&keep)[C], const u32 (&sets)[C / 4], int u0,
                                                     int chunks, uint2 *__restrict__ out, const act_div &d)
{
#pragma unroll
    for (int i = 0; i < C; ++i) {
        const int c = u0 + i * T;
        if (c >= chunks || (P > 1 && c / T % P != (int)blockIdx.z))
            continue;
        float x[8];
        unpack8(keep[i], x);
        const u32 b = sets[i / 4] >> (8 * (i % 4));
        u32 q[2] = {0u, 0u};
#pragma unroll
        for (int e = 0; e < 8; ++e)
            q[e >> 2] |= quant1(x[e], d, b >> e & 1u ? 127.0f : 7.0f) << (8 * (e & 3));
        out[c] = make_uint2(q[0], q[1]);
    }
}

/* Token row m (K 16-bit floats, 16-byte chunks) quantized in place with all T
 * threads of the CTA, chunk c's parts from byte c of the INT8 channels' set:
 * quantize_row's rounds (rows of up to T x C chunks read once and kept in
 * registers, longer ones read twice), two maxima, one scale (part_scales);
 * red: 2 T / 32 floats of shared memory. P > 1: the row's P CTAs
 * (blockIdx.z) each find the maxima and store the rounds r % P ==
 * blockIdx.z. */
template <int T, int C, int P>
static __device__ __forceinline__ void quantize_row_inplace(const uint4 *__restrict__ X,
                                                            const unsigned char *__restrict__ set,
                                                            uint2 *__restrict__ Xq, float *__restrict__ sx, int m,
                                                            int K, float *red)
{
    const int chunks = K / 8;
    const uint4 *row = X + (size_t)m * chunks;
    uint2 *out = Xq + (size_t)m * chunks;
    const bool cached = (chunks + T - 1) / T <= C;
    uint4 keep[C];
    u32 sets[C / 4], hi = 0u, lo = 0u;
    float a8, a4;
    act_div d, d4;
    if (cached) {
        load_chunks<T, C, 1>(row, threadIdx.x, chunks, keep);
        load_set<T, C>(set, threadIdx.x, chunks, sets);
        chunks_amax_parts<T, C>(keep, sets, threadIdx.x, chunks, hi, lo);
        parts_amax(hi, lo, a8, a4);
        part_scales(a8, a4, red, sx, m, d, d4);
        store_inplace<T, C, P>(keep, sets, threadIdx.x, chunks, out, d);
    } else {
        for (int u0 = threadIdx.x; u0 < chunks; u0 += C * T) {
            load_chunks<T, C, 1>(row, u0, chunks, keep);
            load_set<T, C>(set, u0, chunks, sets);
            chunks_amax_parts<T, C>(keep, sets, u0, chunks, hi, lo);
        }
        parts_amax(hi, lo, a8, a4);
        part_scales(a8, a4, red, sx, m, d, d4);
        for (int u0 = threadIdx.x; u0 < chunks; u0 += C * T) {
            load_chunks<T, C, 1>(row, u0, chunks, keep);
            load_set<T, C>(set, u0, chunks, sets);
            store_inplace<T, C, P>(keep, sets, u0, chunks, out, d);
        }
    }
}
//% else
/* The row quantized with the scales into out, perm read from memory: this
 * CTA's rounds (round r: positions of words r THREADS .. r THREADS +
 * THREADS - 1; CTA z takes the rounds r % CTAS == z). */
static __device__ __forceinline__ void store_parts(const u16 *row, const uint4 *__restrict__ perm,
                                                   u32 *__restrict__ out, int K, int k8, const act_div &d8,
                                                   const act_div &d4)
{
//% if p.pack == 2 then
    /* The INT8 part's quads, then the INT4 part's words: word u of that part
     * packs the quads at positions k8 + 32 (u / 4) + 4 (u % 4) and 16 past
     * them, low and high nibbles. */
    const int words = k8 / 4 + (K - k8) / 8;
    for (int c = threadIdx.x + blockIdx.z * THREADS; c < words; c += CTAS * THREADS) {
        if (4 * c < k8) {
            out[c] = quant_quad(row, perm[c], d8, 127.0f);
        } else {
            const int u = c - k8 / 4, q = k8 / 4 + 8 * (u / 4) + u % 4;
            out[c] = (quant_quad(row, perm[q], d4, 7.0f) & 0x0F0F0F0Fu) |
                     (quant_quad(row, perm[q + 4], d4, 7.0f) & 0x0F0F0F0Fu) << 4;
        }
    }
//% else
    for (int c = threadIdx.x + blockIdx.z * THREADS; c < K / 4; c += CTAS * THREADS) {
        const bool int8 = 4 * c < k8;
        out[c] = quant_quad(row, perm[c], int8 ? d8 : d4, int8 ? 127.0f : 7.0f);
    }
//% end
}

/* Token row m with every thread of the CTA: positions 4c .. 4c + 3 at a
 * time (k8 is a multiple of 128, so the four are in one part); red: 2 x
 * THREADS / 32 floats of shared memory. The row is read twice (the second
 * time from L1/L2): a gather has no 16-byte loads to keep. */
static __device__ __forceinline__ void quantize_row_parts(const u16 *__restrict__ row, const uint4 *__restrict__ perm,
                                                          u32 *__restrict__ out, float *__restrict__ sx, int m, int K,
                                                          int k8, float *red)
{
    const int quads = K / 4;
    float a8 = 0.0f, a4 = 0.0f;
    for (int c = threadIdx.x; c < quads; c += THREADS) {
        const uint4 p = perm[c];
        const float a = amax4(x_to_float(row[p.x]), x_to_float(row[p.y]), x_to_float(row[p.z]),
                              x_to_float(row[p.w]));
        if (4 * c < k8)
            a8 = fmaxf(a8, a);
        else
            a4 = fmaxf(a4, a);
    }
    act_div d8, d4;
    part_scales(a8, a4, red, sx, m, d8, d4);
    store_parts(row, perm, out, K, k8, d8, d4);
}
//% end
//% if p.cache > 0 then

#define CACHE {{ p.cache }}                /* channels of a row the shared-memory copy holds */
#define PERM_REGS (CACHE / 4 / THREADS)   /* quads of the order a thread keeps in registers */

/* quantize_row_parts for rows of at most CACHE channels (few tokens: one
 * DRAM round trip instead of two): the order's quads requested into
 * registers and the row copied into shared memory (row_cache, 16-byte
 * loads) at once, then gathered from there (once, with one value a byte). */
static __device__ __forceinline__ void quantize_row_parts_cached(const uint4 *__restrict__ xrow,
                                                                 const uint4 *__restrict__ perm,
                                                                 u32 *__restrict__ out, float *__restrict__ sx, int m,
                                                                 int K, int k8, float *red, uint4 *row_cache)
{
    const int quads = K / 4;
    uint4 pq[PERM_REGS];
#pragma unroll
    for (int i = 0; i < PERM_REGS; ++i) {
        const int c = threadIdx.x + i * THREADS;
        pq[i] = c < quads ? perm[c] : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll 4
    for (int c = threadIdx.x; c < K / 8; c += THREADS)
        row_cache[c] = xrow[c];
    __syncthreads();
    const u16 *row = (const u16 *)row_cache;
    float a8 = 0.0f, a4 = 0.0f;
    /* Each quad gathered once (shared-memory gathers conflict in banks),
     * its four values kept for the store. */
    u16 v[PERM_REGS][4];
#pragma unroll
    for (int i = 0; i < PERM_REGS; ++i) {
        const int c = threadIdx.x + i * THREADS;
        v[i][0] = row[pq[i].x];
        v[i][1] = row[pq[i].y];
        v[i][2] = row[pq[i].z];
        v[i][3] = row[pq[i].w];
        const float a = amax4(x_to_float(v[i][0]), x_to_float(v[i][1]), x_to_float(v[i][2]),
                              x_to_float(v[i][3]));
        if (c < quads && 4 * c < k8)
            a8 = fmaxf(a8, a);
        else if (c < quads)
            a4 = fmaxf(a4, a);
    }
    act_div d8, d4;
    part_scales(a8, a4, red, sx, m, d8, d4);
//% if p.pack == 2 then
    /* Two 4-bit values a byte pair quads 4 apart: gathered again, by word. */
    store_parts(row, perm, out, K, k8, d8, d4);
//% else
#pragma unroll
    for (int i = 0; i < PERM_REGS; ++i) {
        const int c = threadIdx.x + i * THREADS;
        const bool int8 = 4 * c < k8;
        const act_div &d = int8 ? d8 : d4;
        const float limit = int8 ? 127.0f : 7.0f;
        if (c < quads && i % CTAS == (int)blockIdx.z)
            out[c] = quant1(x_to_float(v[i][0]), d, limit) | quant1(x_to_float(v[i][1]), d, limit) << 8 |
                     quant1(x_to_float(v[i][2]), d, limit) << 16 | quant1(x_to_float(v[i][3]), d, limit) << 24;
    }
//% end
}
//% end
//% else
{{ render("lib/act_row.cu", { bits = tonumber(f.bits) }) }}
//% end
extern "C" __global__ void __launch_bounds__(THREADS) {{ p.name }}(
    {{ gemm.params(slots) }})
{
    __shared__ float warp_max[THREADS / 32 * {{ (p.rowsum == 1 or p.parts == 2) and 2 or 1 }}];
    const int m = blockIdx.x;
//% if p.trigger == 1 then
    /* Let the GEMM that follows launch now: it fetches weights meanwhile and
     * waits (griddepcontrol.wait) for this grid to finish before reading. */
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
//% end
    /* Zero the split-K arrival counters of the GEMM that follows on this
     * stream, so a workspace carries no state from call to call. */
    for (int i = (m * CTAS + (int)blockIdx.z) * THREADS + threadIdx.x; i < ncounters; i += M * CTAS * THREADS)
        counters[i] = 0u;
//% if p.inplace == 1 then
    quantize_row_inplace<THREADS, CACHED, CTAS>(X, a8set, (uint2 *)Xq, sx, m, K, warp_max);
//% elseif p.parts == 2 then
    u32 *out = (u32 *)Xq + (size_t)m * ({{ p.pack == 2 and "k8 + (K - k8) / 2" or "K" }}) / 4;
//% if p.cache > 0 then
    extern __shared__ uint4 row_cache[];
    if (K <= CACHE) {
        quantize_row_parts_cached(X + (size_t)m * (K / 8), perm, out, sx, m, K, k8, warp_max, row_cache);
        return;
    }
//% end
    quantize_row_parts((const u16 *)X + (size_t)m * K, perm, out, sx, m, K, k8, warp_max);
//% else
    quantize_row<THREADS, CACHED, {{ p.rowsum == 1 and "true" or "false" }}, {{ p.pack == 2 and 4 or 1 }}, CTAS>(X, (uint2 *)Xq, sx, {{ p.rowsum == 1 and "rowsum" or "nullptr" }}, m, K, warp_max);
//% end
}
