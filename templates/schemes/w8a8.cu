/* Scheme w8a8: the INT8 weights are the MMA operand as stored; a lane's two
 * 16-byte loads of a 16 x 64 block are the A registers of its two MMAs. */
#define W_VECS 2                     /* 16-byte vectors per lane per 16 x 64 block */

struct wparams {};

static __device__ __forceinline__ void dequant(const uint4 (&w)[W_VECS], const wparams &, u32 (&a)[2][4])
{
#pragma unroll
    for (int kk = 0; kk < 2; ++kk) {
        a[kk][0] = w[kk].x;
        a[kk][1] = w[kk].y;
        a[kk][2] = w[kk].z;
        a[kk][3] = w[kk].w;
    }
}
{{ render("schemes/epi_scaled.cu") }}
