/* Scheme w4ax: w4a4's per-channel INT4 weights stored offset by 8, widened
 * to INT8 for the INT8 MMAs; two activation parts, so two sums and two
 * per-token scales. */
#define W_VECS 1                     /* 16-byte vectors per lane per 16 x 64 block */

struct wparams {};

{{ render("lib/offset8.cu", { s4 = p.mma_s4 == 1 }) }}
static __device__ __forceinline__ void dequant(const uint4 (&w)[W_VECS], const wparams &, u32 (&a)[2][4])
{
    offset8_dequant(w[0], a);
}
//% if p.mma_s4 == 1 then
/* The INT4 part's A registers on the INT4 MMA (mma=s4): lib/offset8.cu's offset8_s4. */
static __device__ __forceinline__ void dequant_s4(const uint4 (&w)[W_VECS], const wparams &, u32 (&a)[4])
{
    offset8_s4(w[0], a);
}
//% end
{{ render("schemes/epi_scaled.cu", { parts = 2 }) }}
