/* lib/residual.cu -- the sparse 4-bit residual (runtime/residual.h) as the
 * kernels read it: blocks of RBN rows x RBK k, kept ones stored in row-block
 * order in rweight (each its RBN / 16 slabs of RBK / 64 blocks of 16 x 64 in
 * the 4-bit layout, nibble R8 + 8), found through rmask, which the runtime
 * builds from the row pointers: per row block r and word w of 32 k-blocks,
 * { presence bits of k-blocks 32w .. 32w + 31, index of the first of them }.
 * A residual MMA adds sum_k Xq R8 into the accumulators the scheme's
 * operand uses, so the epilogue is unchanged. Budget {{ p.rho }}. */
#define RBN {{ p.rbn }}                 /* residual block: weight rows */
#define RBK {{ p.rbk }}                 /* ... and k */
#define R_BLOCK_VECS (RBN * RBK / 32)   /* 16-byte vectors of one kept block */

/* The 16 x 64 residual block of 16-row block nb and 64-k block k64, or NULL
 * where the layer keeps none; e: the rmask entry of its row block and word
 * (the caller keeps it while its word stays the same). */
static __device__ __forceinline__ const uint4 *residual_at(const uint2 &e, const uint4 *__restrict__ rweight, int nb,
                                                           int k64)
{
    const int kb = k64 / (RBK / 64);
    const u32 bit = 1u << (kb & 31);
    if (!(e.x & bit))
        return nullptr;
    const u32 j = e.y + __popc(e.x & (bit - 1u));
    return rweight + (size_t)j * R_BLOCK_VECS + ((nb % (RBN / 16)) * (RBK / 64) + k64 % (RBK / 64)) * 32;
}

/* The rmask entry that residual_at(.., nb, k64) needs: row block nb / (RBN /
 * 16), word (k64 / (RBK / 64)) / 32 of kwords per row block. */
static __device__ __forceinline__ int residual_word(int nb, int k64, int kwords)
{
    return (nb / (RBN / 16)) * kwords + (k64 / (RBK / 64)) / 32;
}

/* k-words per row block of a layer with K columns. */
static __device__ __forceinline__ int residual_kwords(int K) { return (K / RBK + 31) / 32; }

/* A lane's 16 bytes of a residual block: R8 + 8 in each nibble becomes INT8
 * R8, the A registers of two m16n8k32 MMAs (lib/offset8.cu). */
{{ render("lib/offset8.cu") }}
static __device__ __forceinline__ void residual_dequant(const uint4 &w, u32 (&a)[2][4]) { offset8_dequant(w, a); }

/* Layer constants: read-only for the whole call. */
static __device__ __forceinline__ uint2 ldg_rmask(const uint2 *p)
{
    uint2 v;
    asm volatile("ld.global.nc.v2.u32 { %0, %1 }, [%2];\n" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}

static __device__ __forceinline__ void sts32(u32 addr, u32 v)
{
    asm volatile("st.shared.u32 [%0], %1;\n" :: "r"(addr), "r"(v) : "memory");
}

/* A lane's place in the residual: the rmask entry it read last (word -1:
 * none yet), kept across K tiles -- an entry covers 32 k-blocks. */
struct residual_cursor { uint2 e; int word; };

/* The 16 x 64 residual block of 16-row block nb and 64-k block k64 (NULL
 * where the layer keeps none or nb is past N), reading rmask only when the
 * cursor's word changes. */
static __device__ __forceinline__ const uint4 *residual_lookup(residual_cursor &c, const uint2 *__restrict__ rmask,
                                                               const uint4 *__restrict__ rweight, int nb, int k64,
                                                               int N, int kwords)
{
    if (nb * 16 >= N)
        return nullptr;
    const int w = residual_word(nb, k64, kwords);
    if (w != c.word) {
        c.e = ldg_rmask(rmask + w);
        c.word = w;
    }
    return residual_at(c.e, rweight, nb, k64);
}
