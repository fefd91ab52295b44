/* Scheme w4a8-lqq (LiquidQuant): four UINT4 values, one per byte, become
 * four INT8 weights with one IMAD and one LOP3. U8' = Q4 * s + a has no
 * carries between bytes (U8' <= 255), and XOR 0x80 turns UINT8 into INT8
 * (subtracting 128 modulo 256). */
#define W_VECS 1                     /* 16-byte vectors per lane per 16 x 64 block */

/* A lane's group parameters: row g's and row g+8's scale and offset (the
 * offset repeated in the four bytes). */
struct wparams { u32 s_lo, a_lo, s_hi, a_hi; };

/* From the lane's parameter word { s_lo, a_lo, s_hi, a_hi }. */
static __device__ __forceinline__ wparams wparams_from(u32 p)
{
    wparams r;
    r.s_lo = p & 0xFFu;
    r.a_lo = ((p >> 8) & 0xFFu) * 0x01010101u;
    r.s_hi = (p >> 16) & 0xFFu;
    r.a_hi = (p >> 24) * 0x01010101u;
    return r;
}

static __device__ __forceinline__ u32 lqq_dequant4(u32 q4x4, u32 s, u32 a4)
{
    return (q4x4 * s + a4) ^ 0x80808080u;
}

/* One packed word holds row g's four weights in its low nibbles and row
 * g+8's in its high nibbles: two MMA A registers. */
static __device__ __forceinline__ void lqq_dequant_word(u32 w, const wparams &p, u32 &row_lo, u32 &row_hi)
{
    row_lo = lqq_dequant4(w & 0x0F0F0F0Fu, p.s_lo, p.a_lo);
    row_hi = lqq_dequant4((w >> 4) & 0x0F0F0F0Fu, p.s_hi, p.a_hi);
}

/* A lane's 16-byte share of a 16 x 64 block: the A registers of two
 * m16n8k32 MMAs (a[kk][0..3] for k = 32 kk .. 32 kk + 31). */
static __device__ __forceinline__ void dequant(const uint4 (&w)[W_VECS], const wparams &p, u32 (&a)[2][4])
{
    lqq_dequant_word(w[0].x, p, a[0][0], a[0][1]);
    lqq_dequant_word(w[0].y, p, a[0][2], a[0][3]);
    lqq_dequant_word(w[0].z, p, a[1][0], a[1][1]);
    lqq_dequant_word(w[0].w, p, a[1][2], a[1][3]);
}
{{ render("schemes/epi_scaled.cu") }}
