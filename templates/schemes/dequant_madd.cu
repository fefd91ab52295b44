/* schemes/dequant_madd.cu -- the dequantization of the two-level 4-bit
 * schemes whose INT8 weight is one multiply-add on four bytes:
 * (Q4 * s + a) ^ 0x80808080, where Q4 * s + a stays in 0..255 for every
 * byte (no carries between bytes) and XOR 0x80 turns UINT8 into INT8. The
 * scheme says what s and a are (its wparams_from).
//% if unsigned then
 * wu8=1: the MMAs take the unsigned bytes Q4 * s + a themselves (U8' =
 * Q8' + 128, .u8 operands); the sums start at -128 * sum_k Xq[m, k]
 * (lib/wu8_start.cu).
//% end
 */

/* A lane's group parameters: row g's and row g+8's multiplier and addend
 * (the addend repeated in the four bytes). */
struct wparams { u32 s_lo, a_lo, s_hi, a_hi; };

static __device__ __forceinline__ u32 madd_dequant4(u32 q4x4, u32 s, u32 a4)
{
//% if unsigned then
    return q4x4 * s + a4;
//% else
    return (q4x4 * s + a4) ^ 0x80808080u;
//% end
}

/* One packed word holds row g's four weights in its low nibbles and row
 * g+8's in its high nibbles: two MMA A registers. */
static __device__ __forceinline__ void madd_dequant_word(u32 w, const wparams &p, u32 &row_lo, u32 &row_hi)
{
    row_lo = madd_dequant4(w & 0x0F0F0F0Fu, p.s_lo, p.a_lo);
    row_hi = madd_dequant4((w >> 4) & 0x0F0F0F0Fu, p.s_hi, p.a_hi);
}

/* A lane's 16-byte share of a 16 x 64 block: the A registers of two
 * m16n8k32 MMAs (a[kk][0..3] for k = 32 kk .. 32 kk + 31). */
static __device__ __forceinline__ void dequant(const uint4 (&w)[W_VECS], const wparams &p, u32 (&a)[2][4])
{
    madd_dequant_word(w[0].x, p, a[0][0], a[0][1]);
    madd_dequant_word(w[0].y, p, a[0][2], a[0][3]);
    madd_dequant_word(w[0].z, p, a[1][0], a[1][1]);
    madd_dequant_word(w[0].w, p, a[1][2], a[1][3]);
}
