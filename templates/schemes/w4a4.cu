/* Scheme w4a4: per-channel INT4 weights stored offset by 8, widened to INT8
 * for the INT8 MMAs (sm_90 has no INT4 tensor cores; the activations, INT4
 * values, arrive one per byte from the activation kernel), or, with mma=s4,
 * made INT4 operands of the INT4 MMA (the activations two per byte); the
 * epilogue is Y = sx * sw * acc. */
#define W_VECS 1                     /* 16-byte vectors per lane per 16 x 64 block */

struct wparams {};

{{ render("lib/offset8.cu", { s4 = p.mma_s4 == 1 }) }}
static __device__ __forceinline__ void dequant(const uint4 (&w)[W_VECS], const wparams &, u32 (&a)[2][4])
{
    offset8_dequant(w[0], a);
}
//% if p.mma_s4 == 1 then
/* The INT4 MMA's A registers (mma=s4): the same 16 x 64 block as one
 * m16n8k64 .s4 operand (lib/offset8.cu's offset8_s4). */
static __device__ __forceinline__ void dequant_s4(const uint4 (&w)[W_VECS], const wparams &, u32 (&a)[4])
{
    offset8_s4(w[0], a);
}
//% end
{{ render("schemes/epi_scaled.cu") }}
