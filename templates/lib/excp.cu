/* lib/excp.cu -- explicit dequantization (excp=1): the dequantization
 * warpgroup's work on one K tile. Warp q takes the tile's 16-row blocks q,
 * q + 4, ... (MD of them); per 64-k step it loads a block's packed words and
 * group parameters as the register path does (lib/wgmma_steps.cu) and
 * dequantizes them into the m16n8k32 A fragments, which it stores as INT8
 * rows of BK bytes, 128-byte swizzled (16-byte chunk c of row r at chunk
 * c ^ (r % 8)): the layout the MMA warpgroups' A descriptors read, the
 * token tile's. The fragment's lane holds rows g and g + 8 (g = lane / 4),
 * 4 bytes at k = 4 (lane % 4) and 4 at k + 16 of each k32 step; the 32
 * lanes of one store cover 8 rows in 8 different chunk places, every bank
 * once. */
static __device__ __forceinline__ void dequant_tile(u32 stage, u32 w8, int q, int lane{{ p.gparams_channel == 1 and ", const wparams (&params)[MD]" or "" }})
{
#pragma unroll
    for (int kb = 0; kb < BK / 64; ++kb)
#pragma unroll
        for (int i = 0; i < MD; ++i) {
            const int nbl = q + i * 4;
            uint4 w[W_VECS];
#pragma unroll
            for (int v = 0; v < W_VECS; ++v)
                w[v] = lds128(stage + W_OFF + (nbl * (BK / 64) + kb) * (512 * W_VECS) + v * 512 + lane * 16);
//% if p.gparams_tiled == 1 then
            const wparams pr = wparams_from(lds32(stage + GP_OFF + (nbl * NG + kb * 64 / GROUP) * 32 + (lane >> 2) * 4));
//% elseif p.gparams_channel == 1 then
            const wparams pr = params[i];
//% else
            const wparams pr = {};
//% end
            u32 a[2][4];
            dequant(w, pr, a);
            const int row = nbl * 16 + (lane >> 2);
            const u32 dst = w8 + row * BK + (lane & 3) * 4;
#pragma unroll
            for (int kk = 0; kk < 2; ++kk)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const u32 chunk = (u32)((kb * 4 + kk * 2 + h) ^ (row & 7)) << 4;
                    sts32(dst + chunk, a[kk][2 * h]);                /* row g */
                    sts32(dst + 8 * BK + chunk, a[kk][2 * h + 1]);   /* row g + 8 */
                }
        }
}
