/* lib/residual.cu -- the sparse 4-bit residual (runtime/residual.h) as the
 * kernels read it: blocks of RBN rows x RBK k, kept ones stored in row-block
 * order in rweight (each its RBN / 16 slabs of RBK / 64 blocks of 16 x 64 in
 * the 4-bit layout, nibble R8 + 8), found through rmask, which the runtime
 * builds from the row pointers: per row block r and word w of 32 k-blocks,
 * { presence bits of k-blocks 32w .. 32w + 31, index of the first of them }.
 * A kernel adds a present block to the A registers the scheme's dequant gave
 * (Q8' per byte) before the step's MMAs: they then multiply Q8' + R8, which
 * the spec keeps in INT8 (R8 = clamp(Q8 - Q8', -8, 7) and Q8 is INT8, so the
 * sum lies between Q8' and Q8), into the same INT32 sums -- the residual's
 * MMA folded into the dense one, no extra MMA and no extra accumulator. The
 * epilogue is unchanged. Budget {{ p.rho }}. */
#define RBN {{ p.rbn }}                 /* residual block: weight rows */
#define RBK {{ p.rbk }}                 /* ... and k */
#define R_BLOCK_VECS (RBN * RBK / 32)   /* 16-byte vectors of one kept block */

/* k-words per row block of a layer with K columns. */
static __device__ __forceinline__ int residual_kwords(int K) { return (K / RBK + 31) / 32; }

//% if p.wu8 == 1 then
/* Q8' + R8 per byte, unsigned (wu8=1): q holds four U8' = Q8' + 128, n four
 * R8 + 8 (0..15). Every byte of q + n - 8 lies in 0..255 (the sum Q8' + R8
 * is INT8), so one 32-bit add carries nothing between bytes. */
static __device__ __forceinline__ u32 residual_add4(u32 q, u32 n)
{
    return q + n - 0x08080808u;
}
//% else
/* Q8' + R8 per byte: q holds four INT8 Q8', n four R8 + 8 (0..15). Biased
 * by 128 every byte of q + n - 8 lies in 0..255 (the sum is INT8), so one
 * 32-bit add carries nothing between bytes. */
static __device__ __forceinline__ u32 residual_add4(u32 q, u32 n)
{
    return ((q ^ 0x80808080u) + n - 0x08080808u) ^ 0x80808080u;
}
//% end

/* A lane's 16 bytes of a residual block added to the A registers of its two
 * m16n8k32 MMAs (a[kk][0..3], the nibbles placed as the 4-bit layout places
 * the weights'). */
static __device__ __forceinline__ void residual_fold(const uint4 &w, u32 (&a)[2][4])
{
    a[0][0] = residual_add4(a[0][0], w.x & 0x0F0F0F0Fu);
    a[0][1] = residual_add4(a[0][1], (w.x >> 4) & 0x0F0F0F0Fu);
    a[0][2] = residual_add4(a[0][2], w.y & 0x0F0F0F0Fu);
    a[0][3] = residual_add4(a[0][3], (w.y >> 4) & 0x0F0F0F0Fu);
    a[1][0] = residual_add4(a[1][0], w.z & 0x0F0F0F0Fu);
    a[1][1] = residual_add4(a[1][1], (w.z >> 4) & 0x0F0F0F0Fu);
    a[1][2] = residual_add4(a[1][2], w.w & 0x0F0F0F0Fu);
    a[1][3] = residual_add4(a[1][3], (w.w >> 4) & 0x0F0F0F0Fu);
}

/* Layer constants: read-only for the whole call. */
static __device__ __forceinline__ uint2 ldg_rmask(const uint2 *p)
{
    uint2 v;
    asm volatile("ld.global.nc.v2.u32 { %0, %1 }, [%2];\n" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}

/* A lane's walk along one 16-row block of the residual, its 64-k blocks
 * in order (each lookup's k64 at least the one before and within a word
 * of it: every pipe steps a lane by at most 4 of a word's 32 k blocks, a
 * tile's BK / 64 or, on the TMA room's two residual warps, two tiles'
 * BK / 64 <= 2): the rmask entry of its current word (e), the entry of the word
 * after it (next, requested ahead; zero past the row block), where that
 * one lies (at) and how many words of the row block follow it (left), the
 * k64 that leaves the current word (end; past every k64 where the lane
 * has no walk: past N or K, or past the tile's blocks) and the lane's
 * 16 x 64 block within a kept block (sub, in 16-byte vectors). A lookup
 * then costs a compare, a bit test and a popcount; a change of word, which
 * waits on no load, one more request. */
struct residual_cursor { uint2 e, next; const uint2 *at; int left, end; u32 sub; };

/* Requests the entry after the cursor's, where its row block has one. */
static __device__ __forceinline__ void residual_ahead(residual_cursor &c)
{
    c.next = c.left > 0 ? ldg_rmask(c.at) : make_uint2(0u, 0u);
}

/* A cursor at 16-row block nb, 64-k block k64 (a lane's first lookup; none
 * past N or K), its two words requested at once: made at the kernel's
 * start, the loads run beside the first tiles' copies. */
static __device__ __forceinline__ residual_cursor residual_start(const uint2 *__restrict__ rmask, int nb, int k64, int N,
                                                                 int K)
{
    residual_cursor c = { make_uint2(0u, 0u), make_uint2(0u, 0u), rmask, 0, 0x7FFFFFFF,
                          (u32)(nb % (RBN / 16)) * (RBK / 64) * 32 };
    if (nb * 16 < N && k64 < K / 64) {
        const int kwords = residual_kwords(K), w = k64 / (RBK / 64) / 32;
        c.at = rmask + (size_t)(nb / (RBN / 16)) * kwords + w;
        c.e = ldg_rmask(c.at);
        c.end = (w + 1) * 32 * (RBK / 64);
        c.left = kwords - 1 - w;
        ++c.at;
        residual_ahead(c);
    }
    return c;
}

/* The cursor of lane l of a tile's lookup warp, which finds 16 x 64 block l
 * of each K tile (16-row block l / steps, 64-k step l % steps; steps = BK /
 * 64, blocks = BN / 16 * steps): started at the slice's first tile. */
static __device__ __forceinline__ residual_cursor residual_tile_start(const uint2 *__restrict__ rmask, int l, int steps,
                                                                      int blocks, int n_cta, int kt_begin, int N, int K)
{
    /* Lanes past the tile's blocks start at row N: no walk. */
    return residual_start(rmask, l < blocks ? n_cta / 16 + l / steps : N / 16, kt_begin * steps + l % steps, N, K);
}

/* The lane's 16 x 64 residual block at 64-k block k64, or NULL where the
 * layer keeps none (or the lane has no walk). Entering the next word takes
 * the entry requested ahead and requests the one after. */
static __device__ __forceinline__ const uint4 *residual_lookup(residual_cursor &c, const uint4 *__restrict__ rweight,
                                                               int k64)
{
    if (k64 >= c.end) {
        c.e = c.next;
        c.end += 32 * (RBK / 64);
        --c.left;
        ++c.at;
        residual_ahead(c);
    }
    const u32 bit = 1u << (k64 / (RBK / 64) & 31);
    if (!(c.e.x & bit))
        return nullptr;
    const u32 j = c.e.y + __popc(c.e.x & (bit - 1u));
    return rweight + (size_t)j * R_BLOCK_VECS + c.sub + (k64 % (RBK / 64)) * 32;
}

/* Lane l's 16 x 64 residual block of K tile kt on a tile's lookup warp
 * (residual_tile_start: 64-k step l % steps of its row block), or NULL
 * where there is none. */
static __device__ __forceinline__ const uint4 *residual_tile_lookup(residual_cursor &c, const uint4 *__restrict__ rweight,
                                                                    int kt, int l, int steps)
{
    return residual_lookup(c, rweight, kt * steps + l % steps);
}
