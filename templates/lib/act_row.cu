/* lib/act_row.cu -- per-token symmetric INT{{ bits or 8 }} quantization of one token row
 * (docs/schemes.md, activations), shared by the activation kernel and the
 * GEMMs that quantize their own tokens (actq=fused), so both give the same
 * bytes (one value per byte):
 *   sx[m] = max_k |X[m, k]| / ACT_LIMIT (1 for an all-zero row),
 *   Xq[m, k] = clamp(round(X[m, k] / sx[m]), -ACT_LIMIT, ACT_LIMIT), round half away from zero,
 * and, for schemes whose epilogue subtracts a zero point (ROWSUM), the row's
 * integer sum rowsum[m] = sum_k Xq[m, k]. lib/act_div.cu's rounding (rendered
 * before this) makes it bit-identical to the CPU reference's IEEE division
 * and roundf. */
#define ACT_LIMIT {{ (bits or 8) == 4 and "7.0f" or "127.0f" }}   /* the largest magnitude */

static __device__ __forceinline__ void unpack8(uint4 v, float (&x)[8])
{
    const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        x[2 * i] = x_to_float((u16)(w[i] & 0xFFFFu));
        x[2 * i + 1] = x_to_float((u16)(w[i] >> 16));
    }
}

/* Four values quantized into the bytes of a word; with ROWSUM their sum is
 * added to sum. */
template <bool ROWSUM>
static __device__ __forceinline__ u32 quant4(const float *x, const act_div &d, int &sum)
{
    u32 b[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        b[i] = act_round(act_quot(x[i], d), ACT_LIMIT);
        if (ROWSUM)
            sum += (int)(b[i] - 0x4B400000u);
    }
    return act_bytes4(b[0], b[1], b[2], b[3]);
}

/* The chunks a thread keeps, as units of U chunks (U = 1: 8 values, one per
 * byte out; U = 4: 32 values, two per byte out): keep[i] is chunk
 * (u0 + (i / U) T) U + i % U of the row (zero past its end). */
template <int T, int C, int U>
static __device__ __forceinline__ void load_chunks(const uint4 *row, int u0, int chunks, uint4 (&keep)[C])
{
#pragma unroll
    for (int i = 0; i < C; ++i) {
        const int c = (u0 + (i / U) * T) * U + i % U;
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

/* The kept units of load_chunks quantized and stored (units: the row's
 * units; out: the row's first): U = 1, each chunk's 8 values one per byte
 * (8 bytes); U = 4, each unit's 32 values two per byte (16 bytes), byte b
 * holding value b in its low nibble and value b + 16 in its high one. */
template <int T, int C, int U, bool ROWSUM, int P = 1>
static __device__ __forceinline__ void store_units(const uint4 (&keep)[C], int u0, int units, void *out,
                                                   const act_div &d, int &sum)
{
#pragma unroll
    for (int u = 0; u < C / U; ++u) {
        const int unit = u0 + u * T;
        if (unit >= units || (P > 1 && unit / T % P != (int)blockIdx.z))
            continue;
        u32 q[8];                    /* U = 1: q[0..1] */
#pragma unroll
        for (int e = 0; e < U; ++e) {
            float x[8];
            unpack8(keep[u * U + e], x);
            q[2 * e] = quant4<ROWSUM>(x, d, sum);
            q[2 * e + 1] = quant4<ROWSUM>(x + 4, d, sum);
        }
        if (U == 1)
            ((uint2 *)out)[unit] = make_uint2(q[0], q[1]);
        else
            ((uint4 *)out)[unit] = make_uint4((q[0] & 0x0F0F0F0Fu) | (q[U] & 0x0F0F0F0Fu) << 4,
                                              (q[1] & 0x0F0F0F0Fu) | (q[U + 1] & 0x0F0F0F0Fu) << 4,
                                              (q[2] & 0x0F0F0F0Fu) | (q[U + 2] & 0x0F0F0F0Fu) << 4,
                                              (q[3] & 0x0F0F0F0Fu) | (q[U + 3] & 0x0F0F0F0Fu) << 4);
    }
}

/* Quantizes token row m (K 16-bit floats, 16-byte chunks) with all T threads
 * of the CTA; red: T / 32 floats of shared memory (with ROWSUM, T / 32 ints
 * after them, and the row's sum goes to rowsum[m]). U = 1: one value per
 * byte (Xq rows of K bytes); U = 4: two per byte (rows of K / 2 bytes, K a
 * multiple of 32), as store_units lays them out. Rows of up to T x C chunks
 * are read once and kept in registers (unrolled, predicated: no local
 * memory); longer rows are read twice, C chunks per thread in flight. A
 * caller that quantizes another row next puts a CTA barrier between the
 * two (red is reused). P > 1 (no ROWSUM): the row's P CTAs (blockIdx.z)
 * each find its largest |x| and store the thread's rounds of units (round
 * r: units r T .. r T + T - 1) with r % P == blockIdx.z, from a grid's
 * z = 0 the scale. */
template <int T, int C, bool ROWSUM, int U = 1, int P = 1>
static __device__ __forceinline__ void quantize_row(const uint4 *__restrict__ X, uint2 *__restrict__ Xq,
                                                    float *__restrict__ sx, int *__restrict__ rowsum, int m, int K,
                                                    float *red)
{
    const int chunks = K / 8, units = chunks / U;
    const uint4 *row = X + (size_t)m * chunks;
    const bool cached = (units + T - 1) / T <= C / U;
    uint4 keep[C];
    float amax = 0.0f;
    if (cached) {
        load_chunks<T, C, U>(row, threadIdx.x, chunks, keep);
        amax = chunks_amax<C>(keep, 0.0f);
    } else {
        for (int u0 = threadIdx.x; u0 < units; u0 += (C / U) * T) {
            load_chunks<T, C, U>(row, u0, chunks, keep);
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

    const float scale = amax == 0.0f ? 1.0f : amax / ACT_LIMIT;
    if (threadIdx.x == 0 && (P == 1 || blockIdx.z == 0))
        sx[m] = scale;
    /* A row is K bytes (U = 1) or K / 2 (U = 4): chunks x 8 / (U == 1 ? 1 : 2). */
    unsigned char *out = (unsigned char *)Xq + (size_t)m * chunks * (U == 1 ? 8 : 4);
    const act_div d = act_div_of(scale);
    int sum = 0;
    if (cached) {
        store_units<T, C, U, ROWSUM, P>(keep, threadIdx.x, units, out, d, sum);
    } else {
        for (int u0 = threadIdx.x; u0 < units; u0 += (C / U) * T) {
            load_chunks<T, C, U>(row, u0, chunks, keep);
            store_units<T, C, U, ROWSUM, P>(keep, u0, units, out, d, sum);
        }
    }
    if (ROWSUM) {
        /* The row's sum: within each warp, then across the warps. */
        int *redi = (int *)(red + T / 32);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1)
            sum += __shfl_xor_sync(0xFFFFFFFFu, sum, off);
        if ((threadIdx.x & 31) == 0)
            redi[threadIdx.x >> 5] = sum;
        __syncthreads();
        if (threadIdx.x == 0) {
            int total = 0;
#pragma unroll
            for (int w = 0; w < T / 32; ++w)
                total += redi[w];
            rowsum[m] = total;
        }
    }
}
