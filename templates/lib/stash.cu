//% -- lib/stash.cu -- two activation parts on the warpgroup-MMA pipes
//% -- (p.stash): one set of sums, so 128-token tiles keep two CTAs per SM.
//% -- At the part boundary (lib/kt_loop.cu) every MMA is drained and the
//% -- INT8 part's sums go to the workspace in register order (coalesced,
//% -- as split-K's partials): at split 1 into a slot of the stash claimed
//% -- there and freed after the epilogue, at split > 1 into the slice's
//% -- first plane of partials. The epilogue reads them back one register at
//% -- a time (ACC(q), lib/wgmma_defs.cu), summing the slices.
/* Claims a free slot of the stash: a zero bit of the bitmap (nwords words,
 * zeroed by the activation kernel; every slot is released by the CTA that
 * claimed it, after its epilogue). There are slots for every CTA that can
 * be resident at once, so one frees up while this CTA waits. */
static __device__ int stash_claim(unsigned *bits, int nwords)
{
    for (int w = (int)((blockIdx.y * gridDim.x + blockIdx.x) % (unsigned)nwords);; w = (w + 1) % nwords) {
        unsigned cur = *(volatile unsigned *)(bits + w);
        while (cur != 0xFFFFFFFFu) {
            const int b = __ffs(~cur) - 1;
            const unsigned old = atomicOr(bits + w, 1u << b);
            if (!(old >> b & 1u)) {
                __threadfence();   /* the previous owner's reads come before this CTA's writes */
                return w * 32 + b;
            }
            cur = old | 1u << b;
        }
    }
}

/* Frees slot `slot` of the stash (after the epilogue's last read of it). */
static __device__ __forceinline__ void stash_release(unsigned *bits, int slot)
{
    atomicAnd(bits + slot / 32, ~(1u << slot % 32));
}

/* The INT8 part's sum of register q (register order, as stored): over the
 * n slices' planes from p, 2 BM BN ints apart, each ANDed with mask (0
 * where the CTA stored none: p then points at a slot it does not own, read
 * and discarded). n is a constant where it is inlined: every register's
 * loads unroll without a branch, so they issue ahead of their use. */
static __device__ __forceinline__ int part8_sum(const int *p, int n, int mask, int q, int tid)
{
    int s = 0;
#pragma unroll
    for (int z = 0; z < n; ++z)
        s += __ldcg(p + (size_t)z * (2 * BM * BN) + q * THREADS + tid) & mask;
    return s;
}
