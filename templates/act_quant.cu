// qjit variant: {{ key }}
//
//% if p.parts == 2 then
// A two-part layer's activation quantization (docs/schemes.md): token
// row m gathered into the layer's channel order (position j holds the
// caller's channel perm[j]), positions j < k8 quantized to INT8 and the rest
// to INT4 values, each part per token and symmetric, {{ p.pack == 2 and "the INT8 part one value\n// per byte and the INT4 part two (rows of k8 + (K - k8) / 2 bytes; in each 32\n// positions of the INT4 part, byte b holds position b in its low nibble and\n// b + 16 in its high one: the INT4 MMA's operand order, mma=s4)" or "one value per byte" }}:
//% if p.scales == 1 then
//   one scale per token for both parts (scales=1):
//   sx[m] = max(max_{j<k8} |X[m, perm[j]]| / 127, max_{j>=k8} |..| / 7) (1 for an all-zero token),
//   Xq[m, j] = clamp(round(X[m, perm[j]] / sx[m]), -limit, limit), limit 127 or 7 by part,
//% else
//   sx[2m] = max_{j<k8} |X[m, perm[j]]| / 127, sx[2m+1] = max_{j>=k8} |..| / 7
//   (1 for an all-zero part),
//   Xq[m, j] = clamp(round(X[m, perm[j]] / sx), -limit, limit),
//% end
//   round half away from zero.
// IEEE division and roundf make it bit-identical to the CPU reference
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
//% if p.marks == 1 then
// Each CTA finds the maxima over the row in the caller's order from the INT8
// channels' set (marked from perm[0 .. k8)) and reads and gathers only its
// own rounds of the order.
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
// IEEE division and roundf make it bit-identical to the CPU reference.
// One CTA of {{ p.threads }} threads per token; 16-byte loads of 8 FP16 values.
//% if p.ctas > 1 then
// {{ p.ctas }} CTAs per token (blockIdx.z): each finds the row's largest |x| and
// quantizes every {{ p.ctas }}th of the thread's rounds of 8 values (the divisions,
// most of the work, spread over {{ p.ctas }} SMs for few tokens).
//% end
//% end
// It also zeroes the split-K arrival counters of the GEMM launched after it.
{{ render("lib/prelude.cu") }}
#define THREADS {{ p.threads }}
#define CACHED 8                     /* 16-byte chunks a thread keeps in registers (and loads at once) */
#define CTAS {{ p.ctas }}                       /* CTAs per token (blockIdx.z: which) */

//% if p.parts == 2 then
/* The largest |x| of four values. */
static __device__ __forceinline__ float amax4(float a, float b, float c, float d)
{
    return fmaxf(fmaxf(fabsf(a), fabsf(b)), fmaxf(fabsf(c), fabsf(d)));
}

/* One value quantized with scale and limit, in the low byte. */
static __device__ __forceinline__ u32 quant1(float x, float scale, float limit)
{
    const float q = fminf(fmaxf(roundf(x / scale), -limit), limit);
    return (u32)(int)q & 0xFFu;
}

/* The four values of the row at the positions p, quantized into the bytes
 * of a word. */
static __device__ __forceinline__ u32 quant_quad(const u16 *__restrict__ row, uint4 p, float scale, float limit)
{
    return quant1(half_to_float(row[p.x]), scale, limit) | quant1(half_to_float(row[p.y]), scale, limit) << 8 |
           quant1(half_to_float(row[p.z]), scale, limit) << 16 | quant1(half_to_float(row[p.w]), scale, limit) << 24;
}

/* The two parts' largest |x| (each thread's a8, a4) over the CTA (red: 2 x
 * THREADS / 32 floats of shared memory), made scales in s8, s4 and stored
 * to sx. */
static __device__ __forceinline__ void part_scales(float a8, float a4, float *red, float *__restrict__ sx, int m,
                                                   float &s8, float &s4)
{
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
}

/* The row quantized with the scales into out, perm read from memory: this
 * CTA's rounds (round r: positions of words r THREADS .. r THREADS +
 * THREADS - 1; CTA z takes the rounds r % CTAS == z). */
static __device__ __forceinline__ void store_parts(const u16 *row, const uint4 *__restrict__ perm,
                                                   u32 *__restrict__ out, int K, int k8, float s8, float s4)
{
//% if p.pack == 2 then
    /* The INT8 part's quads, then the INT4 part's words: word u of that part
     * packs the quads at positions k8 + 32 (u / 4) + 4 (u % 4) and 16 past
     * them, low and high nibbles. */
    const int words = k8 / 4 + (K - k8) / 8;
    for (int c = threadIdx.x + blockIdx.z * THREADS; c < words; c += CTAS * THREADS) {
        if (4 * c < k8) {
            out[c] = quant_quad(row, perm[c], s8, 127.0f);
        } else {
            const int u = c - k8 / 4, q = k8 / 4 + 8 * (u / 4) + u % 4;
            out[c] = (quant_quad(row, perm[q], s4, 7.0f) & 0x0F0F0F0Fu) |
                     (quant_quad(row, perm[q + 4], s4, 7.0f) & 0x0F0F0F0Fu) << 4;
        }
    }
//% else
    for (int c = threadIdx.x + blockIdx.z * THREADS; c < K / 4; c += CTAS * THREADS) {
        const bool int8 = 4 * c < k8;
        out[c] = quant_quad(row, perm[c], int8 ? s8 : s4, int8 ? 127.0f : 7.0f);
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
        const float a = amax4(half_to_float(row[p.x]), half_to_float(row[p.y]), half_to_float(row[p.z]),
                              half_to_float(row[p.w]));
        if (4 * c < k8)
            a8 = fmaxf(a8, a);
        else
            a4 = fmaxf(a4, a);
    }
    float s8, s4;
    part_scales(a8, a4, red, sx, m, s8, s4);
    store_parts(row, perm, out, K, k8, s8, s4);
}
//% if p.cache > 0 then

#define CACHE {{ p.cache }}                /* channels of a row the shared-memory copy holds */
#define PERM_REGS (CACHE / 4 / THREADS)   /* quads of the order a thread keeps in registers */
//% if p.marks ~= 1 then

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
        const float a = amax4(half_to_float(v[i][0]), half_to_float(v[i][1]), half_to_float(v[i][2]),
                              half_to_float(v[i][3]));
        if (c < quads && 4 * c < k8)
            a8 = fmaxf(a8, a);
        else if (c < quads)
            a4 = fmaxf(a4, a);
    }
    float s8, s4;
    part_scales(a8, a4, red, sx, m, s8, s4);
//% if p.pack == 2 then
    /* Two 4-bit values a byte pair quads 4 apart: gathered again, by word. */
    store_parts(row, perm, out, K, k8, s8, s4);
//% else
#pragma unroll
    for (int i = 0; i < PERM_REGS; ++i) {
        const int c = threadIdx.x + i * THREADS;
        const bool int8 = 4 * c < k8;
        const float s = int8 ? s8 : s4, limit = int8 ? 127.0f : 7.0f;
        if (c < quads && i % CTAS == (int)blockIdx.z)
            out[c] = quant1(half_to_float(v[i][0]), s, limit) | quant1(half_to_float(v[i][1]), s, limit) << 8 |
                     quant1(half_to_float(v[i][2]), s, limit) << 16 | quant1(half_to_float(v[i][3]), s, limit) << 24;
    }
//% end
}
//% else

#define HEAD_REGS 8                   /* INT8 channels a thread fetches before the first barrier */

/* quantize_row_parts_cached for one of the token's CTAS CTAs, reading of
 * the order only perm[0 .. k8) and its own rounds: the INT8 channels are
 * marked in a set (mask: K / 32 words of shared memory), the parts' maxima
 * found over the row in the caller's order (16-byte reads of the copy,
 * each value's part from the set), and only the CTA's rounds gathered. */
static __device__ __forceinline__ void quantize_row_parts_marked(const uint4 *__restrict__ xrow,
                                                                 const uint4 *__restrict__ perm,
                                                                 u32 *__restrict__ out, float *__restrict__ sx, int m,
                                                                 int K, int k8, float *red, uint4 *row_cache,
                                                                 u32 *mask)
{
    const int quads = K / 4, z = (int)blockIdx.z;
    const u32 *head = (const u32 *)perm;
    uint4 pq[PERM_REGS];
    u32 h[HEAD_REGS];
#pragma unroll
    for (int i = 0; i < PERM_REGS; ++i) {
        const int c = threadIdx.x + i * THREADS;
        pq[i] = c < quads && i % CTAS == z ? perm[c] : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int r = 0; r < HEAD_REGS; ++r) {
        const int j = threadIdx.x + r * THREADS;
        h[r] = j < k8 ? head[j] : 0xFFFFFFFFu;
    }
#pragma unroll 4
    for (int c = threadIdx.x; c < K / 8; c += THREADS)
        row_cache[c] = xrow[c];
    for (int w = threadIdx.x; w < K / 32; w += THREADS)
        mask[w] = 0u;
    __syncthreads();
#pragma unroll
    for (int r = 0; r < HEAD_REGS; ++r)
        if (h[r] != 0xFFFFFFFFu)
            atomicOr(&mask[h[r] >> 5], 1u << (h[r] & 31));
    for (int j = threadIdx.x + HEAD_REGS * THREADS; j < k8; j += THREADS) {
        const u32 k = head[j];
        atomicOr(&mask[k >> 5], 1u << (k & 31));
    }
    __syncthreads();
    float a8 = 0.0f, a4 = 0.0f;
    for (int c = threadIdx.x; c < K / 8; c += THREADS) {
        const uint4 v = row_cache[c];
        const u32 bits = mask[c >> 2] >> ((c & 3) * 8), w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int e = 0; e < 8; ++e) {
            const float a = fabsf(half_to_float((u16)(w[e >> 1] >> (16 * (e & 1)))));
            if (bits >> e & 1u)
                a8 = fmaxf(a8, a);
            else
                a4 = fmaxf(a4, a);
        }
    }
    float s8, s4;
    part_scales(a8, a4, red, sx, m, s8, s4);
    const u16 *row = (const u16 *)row_cache;
#pragma unroll
    for (int i = 0; i < PERM_REGS; ++i) {
        const int c = threadIdx.x + i * THREADS;
        const bool int8 = 4 * c < k8;
        if (c < quads && i % CTAS == z)
            out[c] = quant_quad(row, pq[i], int8 ? s8 : s4, int8 ? 127.0f : 7.0f);
    }
}
//% end
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
//% if p.parts == 2 then
    u32 *out = (u32 *)Xq + (size_t)m * ({{ p.pack == 2 and "k8 + (K - k8) / 2" or "K" }}) / 4;
//% if p.cache > 0 then
    extern __shared__ uint4 row_cache[];
    if (K <= CACHE) {
//% if p.marks == 1 then
        __shared__ u32 mask[CACHE / 32];
        quantize_row_parts_marked(X + (size_t)m * (K / 8), perm, out, sx, m, K, k8, warp_max, row_cache, mask);
//% else
        quantize_row_parts_cached(X + (size_t)m * (K / 8), perm, out, sx, m, K, k8, warp_max, row_cache);
//% end
        return;
    }
//% end
    quantize_row_parts((const u16 *)X + (size_t)m * K, perm, out, sx, m, K, k8, warp_max);
//% else
    quantize_row<THREADS, CACHED, {{ p.rowsum == 1 and "true" or "false" }}, {{ p.pack == 2 and 4 or 1 }}, CTAS>(X, (uint2 *)Xq, sx, {{ p.rowsum == 1 and "rowsum" or "nullptr" }}, m, K, warp_max);
//% end
}
